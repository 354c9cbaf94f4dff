"""One frame per event-loop turn: the window's widgets and the 3D view (a GL window of its own)
each draw a frame in their own turn, so timers and input are served between the two.

Drawn in the same turn (a result changes both), the two frames blocked the UI thread for
their sum: 30-50 ms on two cores under software GL (bench/ui_blocks.py: the widgets' frame
17-34 ms, the 3D view's 9-15 ms, back to back). The frame that comes second waits one turn.
"""

from __future__ import annotations

from PySide6 import QtCore


class FrameTurns(QtCore.QObject):
    """`take()` when a frame is drawn; `taken()` says one was drawn in this event-loop turn.
    The turn ends when the event loop comes round to its timers (a 0 ms timer clears it)."""

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self._taken = False
        self._end = QtCore.QTimer(self)
        self._end.setSingleShot(True)
        self._end.setInterval(0)
        self._end.timeout.connect(self._clear)

    def taken(self) -> bool:
        return self._taken

    def take(self) -> None:
        self._taken = True
        self._end.start()

    def _clear(self) -> None:
        self._taken = False
