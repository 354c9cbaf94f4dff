"""Isolation of the whole suite from the machine it runs on.

Everything a run writes goes under one private temporary folder that is removed when the run
ends: pytest's tmp paths, every `tempfile` user, and the XDG config, cache, data and runtime
folders (so QSettings, Mesa's shader cache and fontconfig never touch the user's HOME). Windows
go to a private Xvfb, never to the user's display; `tools/with_display.sh` already provides one
(SHELLSCOPE_XVFB=1), otherwise one is started here when Xvfb is installed.
"""

from __future__ import annotations

import os
import shutil
import tempfile

_RUN_DIR = tempfile.mkdtemp(prefix="shellscope-tests-")
os.environ["TMPDIR"] = _RUN_DIR
tempfile.tempdir = _RUN_DIR
for _var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"):
    _path = os.path.join(_RUN_DIR, _var.lower())
    os.makedirs(_path, mode=0o700)
    os.environ[_var] = _path

_XSERVER = None
if os.environ.get("SHELLSCOPE_XVFB") != "1":
    from app.display import NoDisplayError, PrivateXServer, use_display

    try:
        _XSERVER = PrivateXServer(1920, 1200)
        use_display(_XSERVER.start())
        os.environ["SHELLSCOPE_XVFB"] = "1"
    except NoDisplayError:
        _XSERVER = None  # GL tests will say so; the codec tests do not need a display


# The files that take longest, longest first (summed test time of `make test` on 2 cores,
# 2026-11-28). `make test` hands whole files to its two processes in the order collected
# (pytest-xdist's --dist loadfile with --no-loadscope-reorder: its own order, by number of
# tests, ran the one-test files of 40 s last, so one process ended a minute after the other):
# the long files start first and the short ones fill in at the end. A stale entry costs
# balance, never a result.
SLOW_FILES = (
    "tests/codec/codecs/curve/test_curve.py",
    "tests/codec/formats/test_fuzz_readers.py",
    "tests/codec/formats/test_hostile_files.py",
    "tests/app/test_camera.py",
    "tests/app/test_cli.py",
    "tests/app/test_open_after_open.py",
    "tests/codec/formats/test_fbx.py",
    "tests/app/test_open_usd_repeatedly.py",
)


def pytest_collection_modifyitems(items: list) -> None:
    rank = {path: i for i, path in enumerate(SLOW_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable


def pytest_unconfigure(config: object) -> None:
    # the Xvfb is left running: Qt still holds a connection to it until the process exits,
    # and Linux ends it then (PrivateXServer asks for that)
    shutil.rmtree(_RUN_DIR, ignore_errors=True)
