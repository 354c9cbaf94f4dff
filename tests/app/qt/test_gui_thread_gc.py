"""While a Controller lives, reference cycles are collected on the GUI thread, never on a
worker that happens to allocate (there a collected Qt receiver deadlocked the window)."""

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


def churn_on_a_worker() -> None:
    """Allocate as a compression does: far past generation 0's threshold."""

    def work() -> None:
        keep = [[i] for i in range(50 * gc.get_threshold()[0])]
        del keep

    t = threading.Thread(target=work)
    t.start()
    t.join()


def test_cycles_are_collected_on_the_gui_thread_while_a_controller_lives(qtbot) -> None:
    before = gui_thread_gc.holding()  # an earlier test's controller may still be alive
    controller = Controller(make_document(), compress=lambda *a, **k: None)
    try:
        assert gui_thread_gc.holding() and not gc.isenabled()
        seen: list[int] = []
        Cycle(seen)
        churn_on_a_worker()
        assert seen == []  # the worker's allocations collected nothing
        qtbot.waitUntil(lambda: seen != [], timeout=5 * gui_thread_gc.INTERVAL_MS + 2000)
        assert seen == [threading.get_ident()]  # the GUI thread's timer did
    finally:
        controller.shutdown()
    # given back with the last hold
    assert gui_thread_gc.holding() == before and gc.isenabled() != before
    controller.shutdown()  # a second shutdown releases nothing more
    assert gui_thread_gc.holding() == before


def test_without_a_hold_a_worker_collects(qtbot) -> None:
    """The check above can fail: with automatic collection on, the worker collects."""
    was = gc.isenabled()
    gc.enable()
    try:
        seen: list[int] = []
        Cycle(seen)
        churn_on_a_worker()
        assert seen and seen[0] != threading.get_ident()
    finally:
        if not was:
            gc.disable()
