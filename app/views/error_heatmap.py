"""Error heat map: joints (rows, hierarchy order) x time, coloured by error / the joint's precision.

The error plot says *when* the clip is wrong; this says *where* at the same time. Colours are the
3D view's (green 0, yellow half the precision, red at or over it), so a red cell here is a red
bone there. Clicking selects the joint and jumps to that time; the time cursor can be dragged.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.document import Document
from app.views.bitrates import hierarchy_order
from app.views.colors import error_colors
from app.views.time_cursor import TimeCursor

SELECTION_PEN = pg.mkPen((255, 40, 240), width=1)


class ErrorHeatmapPanel(QWidget):
    """Dockable joints x time view of `document.result.error`."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.ratio = np.zeros((0, 0))  # (S, J) error / precision, columns in hierarchy order
        self.order = np.zeros(0, dtype=np.int64)

        self.plot = pg.PlotWidget(background="w")
        self.plot.setMenuEnabled(False)
        self.plot.setLabel("bottom", "time", units="s")
        vb = self.plot.getViewBox()
        vb.invertY(True)
        vb.setMouseEnabled(x=True, y=False)
        self.image = pg.ImageItem(axisOrder="col-major")
        self.plot.addItem(self.image)
        self.selection_box = pg.LinearRegionItem(
            orientation="horizontal", movable=False, brush=(255, 40, 240, 40), pen=SELECTION_PEN
        )
        self.plot.addItem(self.selection_box, ignoreBounds=True)
        self.cursor = TimeCursor(document, self.plot)
        self.plot.scene().sigMouseClicked.connect(self._on_scene_clicked)

        self.caption = QLabel(
            "error ÷ the joint's precision: green 0 · yellow ½ · red ≥ 1 (over budget)"
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.caption)
        layout.addWidget(self.plot, 1)

        document.result_changed.connect(self._on_result)
        document.clip_changed.connect(self._on_result)
        document.selection_changed.connect(self._on_selection)
        self._on_result()

    # --- model -> view ------------------------------------------------------------------
    def _on_result(self) -> None:
        r = self.document.result
        if r is None:
            self.ratio = np.zeros((0, 0))
            self.image.clear()
            self.plot.getAxis("left").setTicks([[]])
        else:
            names = r.clip.skeleton.names
            self.order, _ = hierarchy_order(r.clip.skeleton.parents)
            err = np.asarray(r.error)[:, self.order]
            self.ratio = err / np.asarray(r.clip.skeleton.precision)[self.order][None, :]
            rgba = (error_colors(self.ratio) * 255).astype(np.ubyte)  # (S, J, 4)
            rate = r.clip.sample_rate
            s, j = self.ratio.shape
            self.image.setImage(rgba, autoLevels=False)
            self.image.setRect(QRectF(-0.5 / rate, 0.0, s / rate, j))
            self.plot.getAxis("left").setTicks(
                [[(i + 0.5, names[joint]) for i, joint in enumerate(self.order)]]
            )
            self.plot.setXRange(-0.5 / rate, (s - 0.5) / rate, padding=0)
            self.plot.setYRange(0, j, padding=0)
        self._on_selection()

    def _on_selection(self) -> None:
        j = self.document.selection
        if self.document.result is None or j is None or j >= len(self.order):
            self.selection_box.hide()
            return
        row = int(np.flatnonzero(self.order == j)[0])
        self.selection_box.setRegion((row, row + 1))
        self.selection_box.show()

    # --- view -> model ------------------------------------------------------------------
    def cell_at(self, x: float, y: float) -> tuple[int, float] | None:
        """(joint, time) under a point in plot coordinates, or None outside the map."""
        r = self.document.result
        if r is None:
            return None
        row = int(np.floor(y))
        if not 0 <= row < len(self.order):
            return None
        sample = int(np.clip(np.round(x * r.clip.sample_rate), 0, r.error.shape[0] - 1))
        return int(self.order[row]), sample / r.clip.sample_rate

    def _on_scene_clicked(self, event) -> None:  # pyqtgraph MouseClickEvent
        if event.button() != Qt.MouseButton.LeftButton:
            return
        vb = self.plot.getViewBox()
        if not vb.sceneBoundingRect().contains(event.scenePos()):
            return
        p = vb.mapSceneToView(event.scenePos())
        hit = self.cell_at(p.x(), p.y())
        if hit is not None:
            self.document.set_selection(hit[0])
            self.document.set_time(hit[1])
