"""Curves: the selected joint's channels over time, raw against lossy, as a graph editor.

Error numbers say how far a joint is off; curves say how: a flattened peak, a lag, a step at
a segment boundary, a foot that slides because a translation key was dropped. Three plots
side by side (so they keep their height in a short bottom dock): rotation (Euler angles in
the file's order, or quaternion components), translation and scale. Raw curves are solid,
the lossy (B) ones dashed with the gap between them filled (the error band), A's dotted while
comparing. Segment starts are grey lines, the keys the codec stores are dots on the lossy
curve (a default sub-track stores none, a constant one a single key), and the time cursor is
the document's: drag it or click a plot to scrub.

A graph editor's controls: the wheel zooms time, Ctrl+wheel (or Shift+wheel) zooms the
values of the plot under the mouse, a drag pans; A frames all, F frames the selected joint's
worst error (its shell error's worst sample and the samples around it), as A and F do in
Maya's graph editor. "Lossy - raw" draws each channel's error instead of the curves, so a
band too thin to see beside the curve's range fills the plot. Several joints at once: the
joints selected together in Joints (Ctrl/Shift-click), as a graph editor follows the
outliner's selection, and Pin keeps a joint's row while others are selected; MAX_ROWS rows.
Every value drawn is the raw clip or the lossy clip the document's result holds
(app.model.comparison.lossy_clip_of): nothing here runs the codec.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QSignalBlocker, Qt
from PySide6.QtGui import QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
)

from app.model.comparison import kind_name, lossy_clip_of, segments_of, stored_keys_of
from app.qt.handler_guard import survives
from app.views.panel import LATER, Panel
from app.views.time_cursor import TimeCursor
from codec.codecs.base import SUB_TRACKS
from codec.model import quat
from codec.result import Result

CHANNEL_COLOURS = ((213, 94, 0), (0, 158, 115), (0, 114, 178), (120, 120, 120))  # x y z w
SEGMENT_PEN = pg.mkPen((160, 160, 160), width=1, style=Qt.PenStyle.DashLine)
MAX_KEY_DOTS = 400  # more stored keys than this would hide the curve: dots are left out
MAX_ROWS = 4  # the selected joint and up to three more (selected or pinned): readable rows
FRAME_SAMPLES = 8  # F: the worst sample and this many each side
ZERO_PEN = pg.mkPen((90, 90, 90), width=1)
VALUE_ZOOM = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


class CurvesViewBox(pg.ViewBox):
    """The wheel zooms time; with Ctrl or Shift it zooms this plot's values."""

    def wheelEvent(self, ev, axis=None) -> None:
        super().wheelEvent(ev, axis=1 if ev.modifiers() & VALUE_ZOOM else 0)


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


class CurvesPanel(Panel):
    """Dockable channel curves of the selected joint (raw, B, and A while comparing)."""

    follows = (
        ("clip_changed", LATER),
        ("result_changed", LATER),
        ("selection_changed", LATER),
        ("comparison_changed", LATER),
    )

    def build(self) -> None:
        self.mode = "euler"
        self.mode_box = QComboBox()
        self.mode_box.addItems(["Euler", "Quaternion xyzw"])
        self.mode_box.setToolTip("Rotation as Euler angles in the file's order, or as x, y, z, w")
        self.mode_box.setAccessibleName("Rotation as")
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
        self.swatches = QLabel()  # the channels' colours, named
        self.swatches.setTextFormat(Qt.TextFormat.RichText)
        self.error_box = QCheckBox("Lossy \u2212 raw")
        self.error_box.setToolTip(
            "Draw each channel's error (lossy minus raw) instead of the curves: the band "
            "between them, at a scale where it shows"
        )
        self.error_box.toggled.connect(self.set_error_mode)
        self.pin_button = QToolButton()
        self.pin_button.setText("Pin")
        self.pin_button.setToolTip(
            "Keep this joint's curves while you select others (several joints at once; "
            "or Ctrl/Shift-click several joints in Joints)"
        )
        self.pin_button.clicked.connect(self.toggle_pin)
        self.unpin_button = QToolButton()
        self.unpin_button.setText("Unpin all")
        self.unpin_button.clicked.connect(self.clear_pins)
        self.frame_button = QToolButton()
        self.frame_button.setText("Frame")
        self.frame_button.setToolTip(
            "A: frame all; F: frame the selected joint's worst error. Wheel: zoom time; "
            "Ctrl+wheel or Shift+wheel: zoom values; drag: pan"
        )
        self.frame_button.clicked.connect(self.frame_all)
        self.pinned: list[int] = []
        self.error_mode = False
        bar = QHBoxLayout()
        bar.addWidget(self.mode_box)
        bar.addWidget(self.error_box)
        bar.addWidget(self.pin_button)
        bar.addWidget(self.unpin_button)
        bar.addWidget(self.frame_button)
        bar.addWidget(self.title)
        bar.addWidget(self.swatches)
        bar.addWidget(self.legend, 1)

        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setBackground("w")
        self.canvas.setMinimumHeight(80)  # the dock decides; the 3D view keeps its room
        self.rows: list[list[pg.PlotItem]] = []  # a row of three plots per joint shown
        self.cursors: list[TimeCursor] = []
        self._add_row()
        self.plots = self.rows[0]  # the selected joint's
        self.canvas.scene().sigMouseClicked.connect(self._on_click)
        self.canvas.installEventFilter(self)  # A and F while the plots have the keyboard
        # what is drawn per plot, kept for tests and tools: name -> (times, values); the
        # selected joint's unprefixed, a pinned joint's prefixed by its name and ": "
        self.series: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.joints_shown: list[int] = []
        self._items: dict[pg.PlotItem, list[object]] = {}

        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(2)
        layout.addLayout(bar)
        layout.addWidget(self.canvas, 1)

    # --- model -> view ------------------------------------------------------------------
    def euler_order(self, joint: int) -> str:
        """The file's Euler order of `joint` (XYZ when the file stores none)."""
        orders = getattr(self.document.clip, "euler_orders", ())
        return orders[joint] if joint < len(orders) else "XYZ"

    def _on_mode(self, index: int) -> None:
        self.mode = ("euler", "quaternion")[index]
        self.refresh()

    def _add_row(self) -> list[pg.PlotItem]:
        row: list[pg.PlotItem] = []
        r = len(self.rows)
        for k, name in enumerate(SUB_TRACKS):
            plot = self.canvas.addPlot(row=r, col=k, viewBox=CurvesViewBox())
            plot.setMenuEnabled(False)
            plot.showGrid(x=True, y=True, alpha=0.2)
            plot.getViewBox().setMouseEnabled(x=True, y=True)
            plot.getViewBox().setAutoVisible(y=True)  # values fit the time range shown
            plot.setTitle(name, size="9pt")
            plot.getAxis("left").setWidth(44)
            if self.rows or k:
                plot.setXLink(self.rows[0][0] if self.rows else row[0])
            row.append(plot)
            self.cursors.append(TimeCursor(self.document, plot))
        self.rows.append(row)
        return row

    def _show_rows(self, n: int) -> None:
        """n rows of plots in the canvas (made once, hidden when not needed)."""
        while len(self.rows) < n:
            self._add_row()
        for r, row in enumerate(self.rows):
            for plot in row:
                plot.setVisible(r < n)
            self.canvas.ci.layout.setRowStretchFactor(r, 1 if r < n else 0)
            self.canvas.ci.layout.setRowMaximumHeight(r, 1e6 if r < n else 0)

    # --- graph editor -------------------------------------------------------------------
    def set_error_mode(self, on: bool) -> None:
        """Lossy - raw per channel instead of the curves (and the values framed to it)."""
        self.error_mode = bool(on)
        with QSignalBlocker(self.error_box):
            self.error_box.setChecked(self.error_mode)
        self.refresh()
        self.frame_all()

    def toggle_pin(self) -> None:
        """Pin the selected joint (its row stays while others are selected), or unpin it."""
        j = self.document.selection
        if j is None:
            return
        if j in self.pinned:
            self.pinned.remove(j)
        else:
            self.pinned = [*self.pinned, j][-(MAX_ROWS - 1) :]
        self.refresh()

    def clear_pins(self) -> None:
        self.pinned = []
        self.refresh()

    def _all_plots(self) -> list[pg.PlotItem]:
        return [p for row in self.rows[: max(len(self.joints_shown), 1)] for p in row]

    def frame_all(self) -> None:
        """A: the whole clip in time, every plot's values fitted to what it draws."""
        clip = self.document.clip
        if clip is not None:
            self.plots[0].setXRange(0.0, max(clip.duration, 1e-6), padding=0.01)
        for plot in self._all_plots():
            plot.getViewBox().enableAutoRange(axis=pg.ViewBox.YAxis)

    def frame_selection(self) -> float | None:
        """F: the selected joint's worst sample (of its shell error in the result held) and
        FRAME_SAMPLES around it, the values fitted to that window; returns its time."""
        doc, clip = self.document, self.document.clip
        result = doc.side_result("B")
        j = doc.selection
        if clip is None or j is None or result is None or result.error.ndim != 2:
            self.frame_all()
            return None
        if j >= result.error.shape[1] or result.error.shape[0] == 0:
            self.frame_all()
            return None
        worst = int(np.argmax(result.error[:, j]))
        rate = clip.sample_rate
        lo = max(worst - FRAME_SAMPLES, 0) / rate
        hi = min(worst + FRAME_SAMPLES, clip.num_samples - 1) / rate
        self.plots[0].setXRange(lo, max(hi, lo + 1e-6), padding=0.02)
        for plot in self._all_plots():
            plot.getViewBox().enableAutoRange(axis=pg.ViewBox.YAxis)
        return worst / rate

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """A and F in the plots frame them (the window's F frames the 3D view elsewhere)."""
        kind = event.type()
        if kind in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) and isinstance(
            event, QKeyEvent
        ):
            if event.key() in (Qt.Key.Key_A, Qt.Key.Key_F) and not event.modifiers():
                if kind == QEvent.Type.KeyPress:
                    self.frame_all() if event.key() == Qt.Key.Key_A else self.frame_selection()
                event.accept()
                return True
        return super().eventFilter(watched, event)

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
        for plot, items in self._items.items():
            for item in items:
                plot.removeItem(item)
        self._items = {}
        self.series.clear()
        clip, j = doc.clip, doc.selection
        with QSignalBlocker(self.mode_box):
            self.mode_box.setCurrentIndex(0 if self.mode == "euler" else 1)
        if clip is not None:
            self.pinned = [p for p in self.pinned if p < clip.num_joints]
        if clip is None or j is None or j >= clip.num_joints:
            self.joints_shown = []
            self._show_rows(1)
            self.title.setText("Select a joint to see its curves")
            self.pin_button.setEnabled(False)
            self.unpin_button.setEnabled(bool(self.pinned))
            self._set_legend("")
            return
        wanted = list(dict.fromkeys((j, *doc.also_selected, *self.pinned)))
        self.joints_shown = wanted[:MAX_ROWS]
        self._show_rows(len(self.joints_shown))
        self.pin_button.setText("Unpin" if j in self.pinned else "Pin")
        self.pin_button.setEnabled(True)
        self.unpin_button.setEnabled(bool(self.pinned))
        order = self.euler_order(j)
        self.mode_box.setItemText(0, f"Euler {order}")  # the file's order (tooltip)
        b, a = doc.side_result("B"), doc.side_result("A")
        names = clip.skeleton.names
        for r, joint in enumerate(self.joints_shown):
            prefix = "" if r == 0 else f"{names[joint]}: "
            self._draw_joint(self.rows[r], joint, prefix, b, a)
        self.plots[0].setXRange(0.0, max(clip.duration, 1e-6), padding=0.01)
        shown = ", ".join(names[k] for k in self.joints_shown[1:])
        self.title.setText(
            f"<b>{names[j]}</b>"
            + (f" + {shown}" if shown else "")
            + (
                f" (+{len(wanted) - MAX_ROWS} more selected: {MAX_ROWS} rows at most)"
                if len(wanted) > MAX_ROWS
                else ""
            )
            + ("" if b is not None else " (compressing\u2026)")
        )
        self._set_swatches(self._channels(clip, j, 0)[1])
        if self.error_mode:
            parts = ["lossy \u2212 raw per channel, B solid", "A dotted"]
            parts = parts if a is not None else parts[:1]
        else:
            parts = ["solid raw", "dashed B (lossy), band = raw to lossy", "dots = stored keys"]
            if a is not None:
                parts.insert(2, "dotted A")
        parts.append("grey lines = segment starts")
        self._set_legend(" \u00b7 ".join(parts))

    def _draw_joint(
        self, row: list[pg.PlotItem], j: int, prefix: str, b: Result | None, a: Result | None
    ) -> None:
        """One joint's three plots: raw, B and A (or their errors), bands, keys, segments."""
        clip = self.document.clip
        assert clip is not None
        times = np.arange(clip.num_samples) / clip.sample_rate
        sides = [("B", b, Qt.PenStyle.DashLine)]
        if a is not None:
            sides.append(("A", a, Qt.PenStyle.DotLine))
        name = clip.skeleton.names[j]
        for sub, plot in enumerate(row):
            raw, channel_names = self._channels(clip, j, sub)
            items = self._items.setdefault(plot, [])
            if self.error_mode:
                zero = pg.InfiniteLine(pos=0.0, angle=0, pen=ZERO_PEN)
                plot.addItem(zero, ignoreBounds=True)
                items.append(zero)
            for c, channel in enumerate(channel_names):
                colour = CHANNEL_COLOURS[c]
                key = f"{prefix}{SUB_TRACKS[sub]} {channel}"
                raw_item = None
                if not self.error_mode:
                    raw_item = plot.plot(times, raw[:, c], pen=pg.mkPen(colour, width=2))
                    items.append(raw_item)
                self.series[f"{key} raw"] = (times, raw[:, c])
                for side, result, style in sides:
                    if result is None:
                        continue
                    lossy, _ = self._channels(lossy_clip_of(result), j, sub)
                    lossy = follow_branch(lossy, raw, self.mode if sub == 0 else "linear")
                    self.series[f"{key} {side}"] = (times, lossy[:, c])
                    if self.error_mode:
                        diff = lossy[:, c] - raw[:, c]
                        self.series[f"{key} {side}-raw"] = (times, diff)
                        style = Qt.PenStyle.SolidLine if side == "B" else style
                        items.append(plot.plot(times, diff, pen=pg.mkPen(colour, style=style)))
                        continue
                    pen = pg.mkPen(colour, width=1.5 if side == "B" else 1.2, style=style)
                    item = plot.plot(times, lossy[:, c], pen=pen)
                    items.append(item)
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
            label = f"{name}: {SUB_TRACKS[sub]}" if prefix else SUB_TRACKS[sub]
            if b is not None:
                kind = kind_name(b, j, sub)
                keys = stored_keys_of(b, j, sub)
                what = ""  # short: three titles must fit side by side in a 600 px dock
                if kind and keys is not None:
                    what = f": {len(keys)} keys" if kind == "animated" else f": {kind}"
                plot.setTitle(f"{label}{what}", size="9pt")
                for start in segments_of(b)[1:, 0]:
                    line = pg.InfiniteLine(
                        pos=float(start) / clip.sample_rate, angle=90, pen=SEGMENT_PEN
                    )
                    plot.addItem(line, ignoreBounds=True)
                    items.append(line)
            else:
                plot.setTitle(label, size="9pt")
            unit = "deg" if sub == 0 and self.mode == "euler" else ""
            plot.setLabel("left", ("\u0394 " if self.error_mode else "") + unit)
            if self.error_mode:
                plot.getViewBox().enableAutoRange(axis=pg.ViewBox.YAxis)

    def _set_swatches(self, channels: list[str]) -> None:
        """Each channel's colour beside its name (the curves' only key to their colours)."""
        self.swatches.setText(
            " ".join(
                f'<span style="color: rgb{CHANNEL_COLOURS[c]}">\u25a0</span>&nbsp;{name}'
                for c, name in enumerate(channels)
            )
        )
        self.swatches.setToolTip("Channel colours: " + ", ".join(channels))

    def _set_legend(self, text: str) -> None:
        """The legend, elided to its room; its tooltip whole, one item a line (a one-line
        tooltip wider than the screen was cut off)."""
        self._legend_text = text
        items = [t for t in text.split(" \u00b7 ") if t]
        self.legend.setToolTip("<p>" + "<br>".join(items) + "</p>" if items else "")
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
        for plot in self._all_plots():
            vb = plot.getViewBox()
            if vb.sceneBoundingRect().contains(event.scenePos()):
                self.document.set_time(float(vb.mapSceneToView(event.scenePos()).x()))
                return
