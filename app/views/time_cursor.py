"""The draggable time cursor of the error views, bound to the document's time both ways."""

from __future__ import annotations

import pyqtgraph as pg

from app.model.document import Document
from app.views.panel import follow_document

CURSOR_PEN = pg.mkPen((255, 120, 0), width=2)


class TimeCursor(pg.InfiniteLine):
    """A vertical line that follows `document.time` and sets it when dragged.

    Moving it from the document does not echo back (no feedback loop while scrubbing).
    """

    def __init__(self, document: Document, plot: pg.PlotWidget) -> None:
        super().__init__(angle=90, pen=CURSOR_PEN, movable=True)
        self.document = document
        self._following = False
        self.setZValue(10)
        plot.addItem(self, ignoreBounds=True)
        self.sigPositionChanged.connect(self._dragged)
        follow_document(self, ((document.time_changed, self.follow),))
        self.follow()

    def follow(self) -> None:
        self._following = True
        try:
            self.setValue(self.document.time)
        finally:
            self._following = False

    def _dragged(self) -> None:
        if not self._following:
            self.document.set_time(float(self.value()))
