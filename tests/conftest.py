"""Isolation of the whole suite from the machine it runs on.

Everything a run writes goes under one private temporary folder that is removed when the run
ends: pytest's tmp paths, every `tempfile` user, and the XDG config, cache, data and runtime
folders (so QSettings, Mesa's shader cache and fontconfig never touch the user's HOME). Windows
go to a private Xvfb, never to the user's display; `tools/with_display.sh` already provides one
(SHELLSCOPE_XVFB=1), otherwise one is started here when Xvfb is installed.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
import threading
import time

import pytest

_RUN_DIR = tempfile.mkdtemp(prefix="shellscope-tests-")
os.environ["TMPDIR"] = _RUN_DIR
tempfile.tempdir = _RUN_DIR
for _var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"):
    _path = os.path.join(_RUN_DIR, _var.lower())
    os.makedirs(_path, mode=0o700)
    os.environ[_var] = _path

_XSERVER = None
if os.environ.get("SHELLSCOPE_XVFB") != "1":
    from app.model.display import NoDisplayError, PrivateXServer, use_display

    try:
        _XSERVER = PrivateXServer(1920, 1200)
        use_display(_XSERVER.start())
        os.environ["SHELLSCOPE_XVFB"] = "1"
    except NoDisplayError:
        _XSERVER = None  # GL tests will say so; the codec tests do not need a display


# The files that take longest, longest first (summed test time per file of
# `make test PYTEST_ARGS=--durations=0` on the shared 2-core machine, 2026-11-28). `make test`
# hands whole files to its two processes in the order collected (pytest-xdist's --dist
# loadfile with --no-loadscope-reorder; xdist's own order is by number of tests, which puts a
# long file of one or two tests, such as test_open_usd_repeatedly, among the last): the long
# files start first and the short ones fill in at the end, so both processes end together.
# A stale entry costs balance, never a result. test_cli lost a quarter of its time on
# 2026-11-28 (in-process screenshots) and went below the library group, now one unit.
SLOW_FILES = (
    "tests/codec/library/test_engine.py",  # with test_cli_library and test_report_browser
    "tests/codec/codecs/curve/test_curve.py",
    "tests/codec/formats/test_hostile_files.py",
    "tests/app/test_cli.py",
    "tests/codec/library/test_cli_library.py",
    "tests/codec/formats/test_usd.py",
    "tests/app/test_open_after_open.py",
    "tests/app/test_one_truth.py",
    "tests/app/model/test_camera.py",
    "tests/codec/codecs/wavelet/test_wavelet.py",
    "tests/codec/formats/test_fuzz_hostile.py",
    "tests/app/test_main_window_formats.py",
    "tests/codec/formats/test_fbx.py",
    "tests/codec/codecs/keyreduce/test_keyreduce.py",
    "tests/app/test_compare_cli.py",
    "tests/codec/formats/test_fuzz_readers.py",
    "tests/codec/codecs/acl_style/test_strict.py",
    "tests/app/test_result_turns.py",
    "tests/codec/test_cli_readers.py",
    "tests/app/views/test_timeline.py",
    "tests/app/test_main_window.py",
    "tests/codec/codecs/test_registry.py",
    "tests/app/test_acl_output.py",
    "tests/test_layers.py",
)


# Files that share a session fixture costing seconds go to one process together, which makes
# it once: the library's embedded Dask cluster and its run of the test library
# (tests/codec/library/conftest.py), the hostile cases' cluster (tests/hostile/conftest.py).
# Apart, each process that runs one of them starts a cluster of its own.
SAME_PROCESS = (
    (
        "tests/codec/library/test_engine.py",
        "tests/codec/library/test_cli_library.py",
        "tests/codec/library/test_report_browser.py",
    ),
    ("tests/hostile/test_findings.py", "tests/hostile/test_library_run.py"),
)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """`--dist loadfile`, with each SAME_PROCESS group one unit of work (named for its first
    file); any other distribution is xdist's own."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    unit = {path: group[0] for group in SAME_PROCESS for path in group}

    class GroupedFiles(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return unit.get(path, path)

    return GroupedFiles(config, log)


def pytest_collection_modifyitems(items: list) -> None:
    rank = {path: i for i, path in enumerate(SLOW_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable


# Threads the app and the codec start by name (app.controller, app.compress_process,
# app.model.library_model): none may outlive the test that started it, daemon or not. They
# ran on under the next tests and once crashed a worker (tests/traced.py says how).
OUR_THREADS = ("compress", "jit-warm-up", "compress-send", "compress-read", "compress-inbox")
OUR_THREADS += ("library-run",)
THREAD_END_S = 5.0  # how long a thread told to stop may take to end (a loaded machine)


def _left_running(thread: threading.Thread) -> bool:
    """Whether `thread` must have ended with the test that started it: one of ours, or any
    thread that would hold the interpreter open (non-daemon) but a thread pool's worker (the
    codec's segment pool lives for the process; pools end at exit)."""
    if thread.name in OUR_THREADS:
        return True
    from concurrent.futures import thread as pool

    return not thread.daemon and thread not in pool._threads_queues


def _described(thread: threading.Thread) -> str:
    target = getattr(thread, "_target", None)
    where = getattr(target, "__qualname__", None) or type(thread).__name__
    kind = "daemon" if thread.daemon else "non-daemon"
    return f"{thread.name!r} ({kind}, running {where})"


@pytest.fixture(autouse=True)
def no_thread_left_running():
    """Fails a test that leaves a thread running after its teardown (window fixtures close
    their window and join its controller's threads): the thread would run under the tests
    after it. Threads of module and session fixtures (a Dask cluster) predate the test."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + THREAD_END_S
    left = []
    for thread in threading.enumerate():
        if thread in before or not _left_running(thread):
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            left.append(thread)
    assert not left, "the test left threads running: " + ", ".join(map(_described, left))


def pytest_configure(config: object) -> None:
    # No thread but the main one collects cycles (app.qt.gui_thread_gc, as in the window):
    # a session's Dask IO loop once collected a Qt object while a test built a window, and
    # both threads waited for each other for good. The main thread collects between tests.
    gc.disable()


@pytest.fixture(autouse=True)
def cycles_collected_between_tests():
    """What automatic collection would have done during the test, done after it on the
    main thread (teardown last: this fixture is set up first)."""
    yield
    from app.qt.gui_thread_gc import collect_due

    gc.disable()  # a test that turned it on (and forgot) leaves it off for the next
    collect_due()


def pytest_unconfigure(config: object) -> None:
    # the Xvfb is left running: Qt still holds a connection to it until the process exits,
    # and Linux ends it then (PrivateXServer asks for that)
    shutil.rmtree(_RUN_DIR, ignore_errors=True)
