"""Reference cycles are collected on the GUI thread while the window's worker threads run.

CPython runs its cycle collector on whichever thread allocates past the threshold: often a
compression or kernel warm-up thread (numba's compiler allocates a lot). When a collected
cycle holds a Python object whose bound method is connected to a Qt signal, PySide
disconnects it there: Qt takes its signal-slot lock, then waits for the GIL, while the GUI
thread holds the GIL and waits for that lock in a `connect` (a panel refreshing). Both wait
forever: a frozen window (seen in the app tests under load; both threads' stacks in the
commit that added this). pyqtgraph's `GarbageCollector` is the known remedy; this one also
gives automatic collection back when the last holder lets go.

`hold()` on the GUI thread (a Controller, which starts the threads) turns automatic
collection off and collects from a GUI-thread timer instead; `release()` undoes one hold.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QThread, QTimer

INTERVAL_MS = 500  # how often the GUI thread looks at the collector's counts

_holds = 0
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


def hold() -> None:
    """Collect on the GUI thread only, until the matching `release` (nested holds count).
    Outside the GUI thread (or without a QApplication) this does nothing."""
    global _holds, _timer
    if not _on_gui_thread():
        return
    _holds += 1
    if _timer is None:
        _timer = QTimer()
        _timer.setInterval(INTERVAL_MS)
        _timer.timeout.connect(collect_due)
    if _holds == 1:
        gc.disable()
        _timer.start()


def release() -> None:
    """Undo one `hold`; the last one collects what waited and turns automatic collection
    back on."""
    global _holds
    if _holds == 0 or not _on_gui_thread():
        return
    _holds -= 1
    if _holds == 0:
        assert _timer is not None
        _timer.stop()
        gc.collect()
        gc.enable()


def holding() -> bool:
    """Whether collection is on the GUI thread now."""
    return _holds > 0
