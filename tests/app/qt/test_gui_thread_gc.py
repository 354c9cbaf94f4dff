"""While the window's worker threads run, reference cycles are collected on the GUI thread,
never on a worker that happens to allocate (there a collected Qt receiver deadlocked the
window); once they have ended, automatic collection is back."""

from __future__ import annotations

import gc
import threading

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


def test_cycles_are_collected_on_the_gui_thread_while_a_worker_runs(qtbot) -> None:
    seen: list[int] = []
    go = threading.Event()

    def work() -> None:
        go.wait(10)
        churn()

    worker = threading.Thread(target=work)
    gui_thread_gc.start(worker)
    assert gui_thread_gc.watching() and not gc.isenabled()
    Cycle(seen)
    go.set()
    worker.join()
    assert seen == []  # the worker's allocations collected nothing
    timeout = 5 * gui_thread_gc.INTERVAL_MS + 2000
    qtbot.waitUntil(lambda: seen != [], timeout=timeout)
    assert seen == [threading.get_ident()]  # the GUI thread's timer did
    qtbot.waitUntil(lambda: not gui_thread_gc.watching(worker), timeout=timeout)
    # automatic collection is back once no such thread runs (an earlier test's may still)
    assert gc.isenabled() or gui_thread_gc.watching()


def test_without_it_a_worker_collects(qtbot) -> None:
    """The check above can fail: with automatic collection on, the worker collects."""
    was = gc.isenabled()  # an earlier test's worker may still run
    gc.enable()
    try:
        seen: list[int] = []
        Cycle(seen)
        worker = threading.Thread(target=churn)
        worker.start()
        worker.join()
        assert seen and seen[0] != threading.get_ident()
    finally:
        if not was:
            gc.disable()


def test_the_controllers_compression_thread_is_started_so(qtbot) -> None:
    gate = threading.Event()

    def compress(*_args: object, **_kwargs: object) -> None:
        gate.wait(10)

    controller = Controller(make_document(), compress=compress, debounce_ms=1)
    try:
        controller.compress_now()
        assert gui_thread_gc.watching(controller._worker._thread) and not gc.isenabled()
    finally:
        gate.set()
        controller.shutdown()
