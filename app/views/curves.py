"""Curves: the selected joint's channels over time, raw against lossy, as a graph editor.

Error numbers say how far a joint is off; curves say how: a flattened peak, a lag, a step at
a segment boundary, a foot that slides because a translation key was dropped. Three plots
side by side (so they keep their height in a short bottom dock): rotation (Euler angles in
the file's order, or quaternion components), translation and scale. Raw curves are solid,
the lossy (B) ones dashed with the gap between them filled (the error band), A's dotted while
comparing. Segment starts are grey lines, the keys the codec stores are dots on the lossy
curve (a default sub-track stores none, a constant one a single key), and the time cursor is
the document's: drag it or click a plot to scrub.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.comparison import kind_name, lossy_clip_of, segments_of, stored_keys_of
from app.document import Document
from app.views.handler_guard import survives
from app.views.time_cursor import TimeCursor
from app.views.when_shown import WhenShown
from codec.model import quat

CHANNEL_COLOURS = ((213, 94, 0), (0, 158, 115), (0, 114, 178), (120, 120, 120))  # x y z w
SUB_TRACKS = ("rotation", "translation", "scale")
SEGMENT_PEN = pg.mkPen((160, 160, 160), width=1, style=Qt.PenStyle.DashLine)
MAX_KEY_DOTS = 400  # more stored keys than this would hide the curve: dots are left out


def rotation_channels(q: np.ndarray, mode: str, order: str) -> tuple[np.ndarray, list[str]]:
    """(S, C) rotation channels of quaternions (S, 4) and their names: Euler angles in degrees
    (unwrapped over time) in `order`, or the x, y, z, w components (one hemisphere)."""
    if mode == "quaternion":
        return quat.ensure_continuity(q, axis=0), ["x", "y", "z", "w"]
    angles = np.degrees(np.unwrap(quat.to_euler(q, order), axis=0))
    return angles, [f"{axis} rot" for axis in order]


def follow_branch(values: np.ndarray, reference: np.ndarray, mode: str) -> np.ndarray:
    """Put lossy channels (S, C) on the raw ones' branch: the nearest multiple of 360 degrees
    for angles, the raw hemisphere for quaternions, so only real error separates them."""
    if mode == "quaternion":
        flip = np.sum(values * reference, axis=-1, keepdims=True) < 0
        return np.where(flip, -values, values)
    return values + 360.0 * np.round((reference - values) / 360.0)


class CurvesPanel(QWidget):
    """Dockable channel curves of the selected joint (raw, B, and A while comparing)."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.mode = "euler"
        self.mode_box = QComboBox()
        self.mode_box.addItems(["Euler (file order)", "Quaternion xyzw"])
        self.mode_box.setToolTip("Rotation as the file's Euler angles or as x, y, z, w")
        self.mode_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.mode_box.currentIndexChanged.connect(self._on_mode)
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.RichText)
        # the legend shares the bar's row (a line of its own cost the plots a fifth of a
        # short dock's height): shortened to the room left, whole in its tooltip
        self.legend = QLabel()
        self.legend.setTextFormat(Qt.TextFormat.PlainText)
        self.legend.setStyleSheet("color: #606060;")
        self.legend.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.legend.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self._legend_text = ""
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Rotation as"))
        bar.addWidget(self.mode_box)
        bar.addWidget(self.title)
        bar.addWidget(self.legend, 1)

        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setBackground("w")
        self.canvas.setMinimumHeight(80)  # the dock decides; the 3D view keeps its room
        self.plots: list[pg.PlotItem] = []
        self.cursors: list[TimeCursor] = []
        for k, name in enumerate(SUB_TRACKS):
            plot = self.canvas.addPlot(row=0, col=k)
            plot.setMenuEnabled(False)
            plot.showGrid(x=True, y=True, alpha=0.2)
            plot.getViewBox().setMouseEnabled(x=True, y=False)
            plot.setTitle(name, size="9pt")
            plot.getAxis("left").setWidth(44)
            if k:
                plot.setXLink(self.plots[0])
            self.plots.append(plot)
            self.cursors.append(TimeCursor(document, plot))
        self.canvas.scene().sigMouseClicked.connect(self._on_click)
        # what is drawn per plot, kept for tests and tools: name -> (times, values)
        self.series: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._items: list[list[object]] = [[] for _ in SUB_TRACKS]

        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(2)
        layout.addLayout(bar)
        layout.addWidget(self.canvas, 1)

        # tabbed behind another dock, changes wait until the panel is shown
        self.when_shown = WhenShown(self, self.refresh)
        for signal in (
            document.clip_changed,
            document.result_changed,
            document.selection_changed,
            document.comparison_changed,
        ):
            signal.connect(self.when_shown.request)
        self.when_shown.request()

    @survives
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.when_shown.shown()

    # --- model -> view ------------------------------------------------------------------
    def euler_order(self, joint: int) -> str:
        """The file's Euler order of `joint` (XYZ when the file stores none)."""
        orders = getattr(self.document.clip, "euler_orders", ())
        return orders[joint] if joint < len(orders) else "XYZ"

    def _on_mode(self, index: int) -> None:
        self.mode = ("euler", "quaternion")[index]
        self.refresh()

    def _channels(self, clip: object, joint: int, sub: int) -> tuple[np.ndarray, list[str]]:
        if sub == 0:
            return rotation_channels(
                clip.rotations[:, joint],  # type: ignore[attr-defined]
                self.mode,
                self.euler_order(joint),
            )
        values = (clip.translations if sub == 1 else clip.scales)[:, joint]  # type: ignore
        return np.asarray(values), ["x", "y", "z"]

    def refresh(self) -> None:
        doc = self.document
        for plot, items in zip(self.plots, self._items, strict=True):
            for item in items:
                plot.removeItem(item)
            items.clear()
        self.series.clear()
        clip, j = doc.clip, doc.selection
        with QSignalBlocker(self.mode_box):
            self.mode_box.setCurrentIndex(0 if self.mode == "euler" else 1)
        if clip is None or j is None or j >= clip.num_joints:
            self.title.setText("Select a joint to see its curves")
            self._set_legend("")
            return
        order = self.euler_order(j)
        self.mode_box.setItemText(0, f"Euler {order} (file order)")
        times = np.arange(clip.num_samples) / clip.sample_rate
        b, a = doc.side_result("B"), doc.side_result("A")
        sides = [("B", b, Qt.PenStyle.DashLine)]
        if a is not None:
            sides.append(("A", a, Qt.PenStyle.DotLine))
        kinds = []
        for sub, plot in enumerate(self.plots):
            raw, names = self._channels(clip, j, sub)
            items = self._items[sub]
            for c, name in enumerate(names):
                colour = CHANNEL_COLOURS[c]
                raw_item = plot.plot(times, raw[:, c], pen=pg.mkPen(colour, width=2))
                items.append(raw_item)
                self.series[f"{SUB_TRACKS[sub]} {name} raw"] = (times, raw[:, c])
                for side, result, style in sides:
                    if result is None:
                        continue
                    lossy, _ = self._channels(lossy_clip_of(result), j, sub)
                    lossy = follow_branch(lossy, raw, self.mode if sub == 0 else "linear")
                    pen = pg.mkPen(colour, width=1.5 if side == "B" else 1.2, style=style)
                    item = plot.plot(times, lossy[:, c], pen=pen)
                    items.append(item)
                    self.series[f"{SUB_TRACKS[sub]} {name} {side}"] = (times, lossy[:, c])
                    if side == "B":  # the error band: raw to lossy, filled
                        band = pg.FillBetweenItem(raw_item, item, brush=(*colour, 70))
                        plot.addItem(band)
                        items.append(band)
                        keys = stored_keys_of(result, j, sub)
                        if keys is not None and 0 < len(keys) <= MAX_KEY_DOTS:
                            dots = pg.ScatterPlotItem(
                                times[keys], lossy[keys, c], size=4, pen=None, brush=colour
                            )
                            plot.addItem(dots)
                            items.append(dots)
            if b is not None:
                kind = kind_name(b, j, sub)
                keys = stored_keys_of(b, j, sub)
                what = ""  # short: three titles must fit side by side in a 600 px dock
                if kind and keys is not None:
                    what = f": {len(keys)} keys" if kind == "animated" else f": {kind}"
                plot.setTitle(f"{SUB_TRACKS[sub]}{what}", size="9pt")
                kinds.append(what)
                for start in segments_of(b)[1:, 0]:
                    line = pg.InfiniteLine(
                        pos=float(start) / clip.sample_rate, angle=90, pen=SEGMENT_PEN
                    )
                    plot.addItem(line, ignoreBounds=True)
                    items.append(line)
            else:
                plot.setTitle(SUB_TRACKS[sub], size="9pt")
            plot.setLabel("left", "deg" if sub == 0 and self.mode == "euler" else "")
        self.plots[0].setXRange(0.0, max(clip.duration, 1e-6), padding=0.01)
        name = clip.skeleton.names[j]
        self.title.setText(f"<b>{name}</b>" + ("" if b is not None else " (compressing\u2026)"))
        parts = ["solid raw", "dashed B (lossy), band = raw to lossy", "dots = stored keys"]
        if a is not None:
            parts.insert(2, "dotted A")
        parts.append("grey lines = segment starts")
        self._set_legend(" \u00b7 ".join(parts))

    def _set_legend(self, text: str) -> None:
        self._legend_text = text
        self.legend.setToolTip(text)
        self._fit_legend()

    def _fit_legend(self) -> None:
        """The legend cut at its end to the width the bar leaves it (whole in its tooltip)."""
        metrics = self.legend.fontMetrics()
        width = self.legend.contentsRect().width()
        self.legend.setText(
            metrics.elidedText(self._legend_text, Qt.TextElideMode.ElideRight, max(width, 0))
        )

    @survives
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_legend()

    # --- view -> model ------------------------------------------------------------------
    def _on_click(self, event) -> None:  # pyqtgraph MouseClickEvent
        if event.button() != Qt.MouseButton.LeftButton or self.document.clip is None:
            return
        for plot in self.plots:
            vb = plot.getViewBox()
            if vb.sceneBoundingRect().contains(event.scenePos()):
                self.document.set_time(float(vb.mapSceneToView(event.scenePos()).x()))
                return
