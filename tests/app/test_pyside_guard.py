"""PySide6 must stay at 6.11.3: 6.12.0 leaks references to None on every void call (Py 3.11),
which ends in a crash after a few hours of scrubbing."""

from __future__ import annotations

import sys

import PySide6
from PySide6 import QtCore, QtWidgets


def test_pyside6_is_pinned() -> None:
    assert PySide6.__version__ == "6.11.3"


def test_void_calls_do_not_drift_the_refcount_of_none(qtbot) -> None:
    w = QtWidgets.QWidget()
    qtbot.addWidget(w)
    timer = QtCore.QTimer()
    for _ in range(200):  # warm up caches
        w.setWindowTitle("x")
        timer.stop()
    before = sys.getrefcount(None)
    for i in range(10_000):
        w.setWindowTitle("a" if i % 2 else "b")
        timer.stop()
    drift = sys.getrefcount(None) - before
    assert abs(drift) < 100, f"None's refcount drifted by {drift} over 20000 void calls"
