"""In the window's process cycles are collected on the GUI thread only, never on a thread that
happens to allocate (a compression, the kernels' warm-up, Dask's IO loop): there a collected
Qt object deadlocked the window."""

from __future__ import annotations

import gc
import threading

import pytest

from app.controller import Controller
from app.qt import gui_thread_gc
from tests.app.panel_helpers import make_document


class Cycle:
    """A reference cycle that notes the thread which collected it."""

    def __init__(self, seen: list[int]) -> None:
        self.me = self
        self.seen = seen

    def __del__(self) -> None:
        self.seen.append(threading.get_ident())


def churn() -> None:
    """Allocate as a compression does: far past generation 0's threshold."""
    keep = [[i] for i in range(50 * gc.get_threshold()[0])]
    del keep


@pytest.fixture
def uninstalled(monkeypatch: pytest.MonkeyPatch):
    """Collection as a fresh process has it (automatic, no GUI-thread timer) for this test;
    what the test installs is stopped after it."""
    monkeypatch.setattr(gui_thread_gc, "_timer", None)
    gc.enable()
    yield
    if gui_thread_gc._timer is not None:
        gui_thread_gc._timer.stop()
        gui_thread_gc._timer.deleteLater()
    gc.disable()  # as tests/conftest.py keeps the suite


def test_cycles_are_collected_on_the_gui_thread_whichever_thread_allocates(
    qtbot, uninstalled
) -> None:
    assert gui_thread_gc.install() and gui_thread_gc.installed() and not gc.isenabled()
    seen: list[int] = []
    Cycle(seen)
    worker = threading.Thread(target=churn)  # any thread: not started through start()
    worker.start()
    worker.join()
    assert seen == []  # the worker's allocations collected nothing
    qtbot.waitUntil(lambda: seen != [], timeout=5 * gui_thread_gc.INTERVAL_MS + 2000)
    assert seen == [threading.get_ident()]  # the GUI thread's timer did
    assert not gc.isenabled()  # and it stays off: it never comes back on by itself


def test_without_it_a_worker_collects(qtbot, uninstalled) -> None:
    """The check above can fail: with automatic collection on, the worker collects."""
    seen: list[int] = []
    Cycle(seen)
    worker = threading.Thread(target=churn)
    worker.start()
    worker.join()
    assert seen and seen[0] != threading.get_ident()


def test_off_the_gui_thread_it_does_nothing(qtbot, uninstalled) -> None:
    done: list[bool] = []
    worker = threading.Thread(target=lambda: done.append(gui_thread_gc.install()))
    worker.start()
    worker.join()
    assert done == [False] and gc.isenabled() and not gui_thread_gc.installed()


def test_the_controllers_threads_install_it(qtbot, uninstalled) -> None:
    gate = threading.Event()

    def compress(*_args: object, **_kwargs: object) -> None:
        gate.wait(10)

    controller = Controller(make_document(), compress=compress, debounce_ms=1)
    try:
        controller.compress_now()
        assert gui_thread_gc.installed()
    finally:
        gate.set()
        controller.shutdown()


def test_the_windows_process_installs_it(qtbot, capsys, monkeypatch, uninstalled, tmp_path):
    from tests.app.test_cli import run_in_process

    bad = tmp_path / "bad.acl.sjson"
    bad.write_text("version = 5\nbones = [ {")
    code, _ = run_in_process(qtbot, capsys, monkeypatch, str(bad), "--screenshot", "x.png")
    assert code == 2  # it did start: the reader's refusal comes from the window's process
    assert gui_thread_gc.installed()
