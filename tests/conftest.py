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


def pytest_unconfigure(config: object) -> None:
    # the Xvfb is left running: Qt still holds a connection to it until the process exits,
    # and Linux ends it then (PrivateXServer asks for that)
    shutil.rmtree(_RUN_DIR, ignore_errors=True)
