"""In a Qt process, reference cycles are collected on the GUI thread only.

CPython runs its cycle collector on whichever thread allocates past the threshold: a
compression or kernel warm-up thread (numba's compiler allocates a lot), or Dask's IO-loop
thread while the Library runs beside the window. When a collected cycle holds a Python object
tied to a Qt object (a bound method connected to a signal, a wrapper Qt owns), PySide
destroys or disconnects it there: Qt takes its signal-slot lock, then waits for the GIL,
while the GUI thread holds the GIL and waits for that lock in a `connect` (a panel or a
window being built). Both wait forever: a frozen window (seen in the app tests under load,
once with a compression thread and once with Dask's IO loop; the stacks are in the commits
that fixed each). Turning collection off only while our own workers ran left every other
thread out, so it is off for the life of the process, as pyqtgraph's `GarbageCollector` does.

`install()`, on the GUI thread once the QApplication exists: automatic collection goes off
and a GUI-thread timer collects what is due instead. `start(thread)` installs it, then starts
the thread: every thread the window starts goes through it.
"""

from __future__ import annotations

import gc
import threading

from PySide6.QtCore import QCoreApplication, QThread, QTimer

INTERVAL_MS = 500  # how often the GUI thread collects

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


def install() -> bool:
    """Collection on the GUI thread from now on, for good; returns whether it is (not off
    the GUI thread or without a QApplication: there it does nothing)."""
    global _timer
    if _timer is not None:
        gc.disable()  # someone turned it back on (a test): off again
        return True
    if not _on_gui_thread():
        return False
    app = QCoreApplication.instance()
    _timer = QTimer(app)
    _timer.setInterval(INTERVAL_MS)
    _timer.timeout.connect(collect_due)
    gc.disable()
    _timer.start()
    return True


def installed() -> bool:
    """Whether cycles are collected on the GUI thread (and automatic collection is off)."""
    return _timer is not None and _timer.isActive() and not gc.isenabled()


def start(thread: threading.Thread) -> None:
    """Start `thread` with cycles collected on the GUI thread (`install`)."""
    install()
    thread.start()
