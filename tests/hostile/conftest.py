"""Issue 37's hostile cases run in this process (tests/hostile/cases.py): `python -m codec`
through codec.cli.main, `shellscope` through app.__main__.main (every case here is refused
before a window or a display is needed, or writes its exports headless), and the library
on one embedded Dask cluster shared by the tests of this folder (`--scheduler` its address:
starting one costs seconds). bench/hostile_inputs.py runs the same cases in fresh processes
and measures their time and peak memory."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hostile.cases import CASES, judge, snapshot


def run_codec(*argv: str) -> tuple[int, str, str]:
    from codec.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def run_app(*argv: str) -> tuple[int, str, str]:
    from app.__main__ import main

    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
    try:
        code = main(list(argv))
        out, err = sys.stdout.getvalue(), sys.stderr.getvalue()  # type: ignore[union-attr]
    finally:
        sys.stdout, sys.stderr = saved
    return code, out, err


@pytest.fixture(scope="session")
def cluster():
    from codec.library.engine import DaskCluster

    c = DaskCluster(None, 1)
    yield c
    c.close()


RunCase = Callable[..., tuple[int, str, str, list[str]]]


@pytest.fixture
def run_case(tmp_path: Path, request: pytest.FixtureRequest) -> RunCase:
    """Build a case in tmp_path, run it here, judge it: (code, stdout, stderr, problems).
    A library run that needs workers runs on the session's cluster."""

    def run(name: str) -> tuple[int, str, str, list[str]]:
        case = CASES[name]
        argv = case.build(tmp_path)
        if argv[0] == "library" and case.code == 0 and "--scheduler" not in argv:
            address = request.getfixturevalue("cluster").client.scheduler.address
            argv = [*argv, "--scheduler", address]
        before = snapshot(tmp_path)
        code, out, err = (run_codec if case.module == "codec" else run_app)(*argv)
        return code, out, err, judge(case, tmp_path, before, code, out, err)

    return run
