"""Reference cycles are collected on the GUI thread while the window's worker threads run.

CPython runs its cycle collector on whichever thread allocates past the threshold: often a
compression or kernel warm-up thread (numba's compiler allocates a lot). When a collected
cycle holds a Python object whose bound method is connected to a Qt signal, PySide
disconnects it there: Qt takes its signal-slot lock, then waits for the GIL, while the GUI
thread holds the GIL and waits for that lock in a `connect` (a panel refreshing). Both wait
forever: a frozen window (seen in the app tests under load; both threads' stacks are in the
commit that added this). pyqtgraph's `GarbageCollector` is the known remedy; this one turns
automatic collection off only while such threads live.

`start(thread)`, on the GUI thread in place of `thread.start()`: automatic collection goes
off before the thread runs, and a GUI-thread timer collects instead; once every thread
started so has ended, the timer collects what waited and automatic collection comes back.
"""

from __future__ import annotations

import gc
import threading

from PySide6.QtCore import QCoreApplication, QThread, QTimer

INTERVAL_MS = 500  # how often the GUI thread collects while workers run

_workers: list[threading.Thread] = []
_timer: QTimer | None = None


def _on_gui_thread() -> bool:
    app = QCoreApplication.instance()
    return app is not None and QThread.currentThread() is app.thread()


def collect_due() -> int:
    """Collect the young generation (cheap; a worker's burst that allocated and freed left
    its count low, so its threshold would never be passed), then the older ones whose
    counts passed their thresholds, as the automatic collector would; returns the objects
    found unreachable."""
    found = gc.collect(0)
    for generation in (1, 2):
        if gc.get_count()[generation] <= gc.get_threshold()[generation]:
            break
        found += gc.collect(generation)
    return found


def _tick() -> None:
    collect_due()
    _workers[:] = [t for t in _workers if t.is_alive()]
    if not _workers and _timer is not None:
        _timer.stop()
        gc.collect()
        gc.enable()


def start(thread: threading.Thread) -> None:
    """Start `thread` with cycles collected on the GUI thread until it (and every other
    thread started here) has ended. Off the GUI thread, or without a QApplication, it only
    starts it."""
    global _timer
    if _on_gui_thread():
        if _timer is None:
            _timer = QTimer()
            _timer.setInterval(INTERVAL_MS)
            _timer.timeout.connect(_tick)
        _workers.append(thread)
        gc.disable()
        if not _timer.isActive():
            _timer.start()
    thread.start()


def watching(thread: threading.Thread | None = None) -> bool:
    """Whether collection is on the GUI thread now (a thread started here may still run),
    or for `thread`: whether it is one of those."""
    return bool(_workers) if thread is None else thread in _workers
