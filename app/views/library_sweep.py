"""The library's size-against-precision chart: what the whole library costs at each precision
of a sweep (`library --sweep`'s data: a point per precision with its totals).

A tech animator picks the precision where the curve flattens: below it, bytes buy little
accuracy. The x axis is the precision on a log scale (sweeps span decades), the y axis the
library's compressed size; each point says its ratio, and a point where clips missed their
precision or failed is drawn red and says how many.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

LINE_PEN = pg.mkPen((0, 114, 178), width=2)
OK_BRUSH = pg.mkBrush(0, 114, 178)
MISSED_BRUSH = pg.mkBrush(192, 57, 43)


class SweepChart(QtWidgets.QWidget):
    """Compressed size (KiB) against precision (cm, log) of a sweep's points."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setMenuEnabled(False)
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.setLogMode(x=True, y=False)
        self.plot.setLabel("bottom", "precision (cm)")
        self.plot.setLabel("left", "library compressed size (KiB)")
        self.plot.setTitle("Size against precision", size="10pt")
        for side in ("bottom", "left"):  # 0.001 cm reads 0.001, not "1 (x0.001)"
            self.plot.getAxis(side).enableAutoSIPrefix(False)
        self.summary = QtWidgets.QLabel("")
        self.summary.setWordWrap(True)
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.plot, 1)
        lay.addWidget(self.summary)
        self.points: list[dict[str, Any]] = []
        self._labels: list[pg.TextItem] = []

    def set_sweep(self, sweep: list[dict[str, Any]]) -> None:
        """Draw a sweep: [{"precision": p, "totals": {...}}, ...] in any order."""
        self.points = sorted(sweep, key=lambda s: float(s["precision"]))
        self.plot.clear()
        self._labels = []
        if not self.points:
            self.summary.setText("")
            return
        x = np.array([float(s["precision"]) for s in self.points])
        kib = np.array([float(s["totals"]["compressed_size"]) / 1024 for s in self.points])
        bad = [
            int(s["totals"]["precision_missed"]) + int(s["totals"]["errors"]) for s in self.points
        ]
        self.plot.plot(x, kib, pen=LINE_PEN)
        brushes = [MISSED_BRUSH if b else OK_BRUSH for b in bad]
        self.plot.plot(x, kib, pen=None, symbol="o", symbolSize=9, symbolBrush=brushes)
        last = len(self.points) - 1
        for k, (s, px, py, b) in enumerate(zip(self.points, x, kib, bad, strict=True)):
            t = s["totals"]
            text = f"{py:,.1f} KiB, {t['compression_ratio']:.1f}:1"
            if b:
                text += f"\n{t['precision_missed']} missed, {t['errors']} failed"
            # the end points' labels lean inwards, so the plot's edges never cut them
            across = 0.0 if k == 0 and last else 1.0 if k == last and last else 0.5
            label = pg.TextItem(text, color=(40, 40, 40), anchor=(across, 1.2))
            label.setPos(math.log10(px), py)
            self.plot.addItem(label)
            self._labels.append(label)
        top = float(kib.max())
        self.plot.setYRange(0.0, top * 1.25 if top > 0 else 1.0, padding=0)
        self.plot.setXRange(math.log10(x.min()), math.log10(x.max()), padding=0.08)
        self.summary.setText(
            " \u00b7 ".join(
                f"{float(s['precision']):g} cm: {float(s['totals']['compressed_size']):,.0f} B"
                for s in self.points
            )
        )

    def label_texts(self) -> list[str]:
        """The text beside each point, in precision order (for tests and tools)."""
        return [label.textItem.toPlainText() for label in self._labels]
