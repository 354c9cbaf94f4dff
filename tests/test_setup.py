"""The wheel's kernels' cache is built by a child that sees what pip's isolated build sees
(setup.py): numpy and numba there are on the build process's path, not in any venv."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _setup_module():
    spec = importlib.util.spec_from_file_location("shellscope_setup", REPO / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not as __main__: setup() does not run
    return module


def test_the_warm_up_child_imports_what_the_build_process_can(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    overlay = tmp_path / "overlay"  # as pip's build environment: on sys.path at run time only
    overlay.mkdir()
    (overlay / "only_in_the_build_env.py").write_text("WHERE = 'overlay'\n")
    build_lib = tmp_path / "build" / "lib"
    build_lib.mkdir(parents=True)
    (build_lib / "built_package.py").write_text("import only_in_the_build_env\n")
    monkeypatch.syspath_prepend(str(overlay))
    monkeypatch.delenv("PYTHONPATH", raising=False)

    env = _setup_module().warm_up_env(str(build_lib))
    probe = "import built_package, only_in_the_build_env as m; print(m.WHERE)"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "overlay"
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(build_lib)  # the build's code wins
