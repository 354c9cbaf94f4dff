"""Error over time: the worst joint at every sample, the selected joint, and the budget line.

Where the max curve crosses the budget line is where the clip fails; the between-samples
curve (supersampled, rounding none) shows error that sample-time checks miss. The time cursor
is the document's time (dragging it scrubs, scrubbing elsewhere moves it), clicking the plot
jumps there, and "Go to worst" selects the worst joint at its worst time. The legend sits in
its own row above the plot, never over the curves; the error axis is in centimetres with
engineering notation, and starts at zero with the budget always in view.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
)

from app.model.comparison import error_of
from app.model.error_scale import eng_ticks, format_budget, format_cm, format_percent, round_up
from app.qt.elided_label import ElidedLabel
from app.qt.label_fence import LabelFence
from app.qt.plot_cache import cache_drawings
from app.views.panel import LATER, Panel
from app.views.time_cursor import TimeCursor
from codec.result import Result

MAX_COLOUR = (214, 64, 40)
SELECTED_COLOUR = (40, 110, 220)
BETWEEN_COLOUR = (230, 150, 30)
BUDGET_COLOUR = (40, 150, 70)
MAX_PEN = pg.mkPen(MAX_COLOUR, width=2)
SELECTED_PEN = pg.mkPen(SELECTED_COLOUR, width=2)
BETWEEN_PEN = pg.mkPen(BETWEEN_COLOUR, width=1, style=Qt.PenStyle.DotLine)
PRECISION_PEN = pg.mkPen(BUDGET_COLOUR, width=1, style=Qt.PenStyle.DashLine)
JOINT_PRECISION_PEN = pg.mkPen(SELECTED_COLOUR, width=1, style=Qt.PenStyle.DashLine)
A_COLOUR, B_COLOUR = (230, 159, 0), (0, 158, 115)  # Compare's A and B (app.scene.compare_layer)
A_PEN, B_PEN = pg.mkPen(A_COLOUR, width=2), pg.mkPen(B_COLOUR, width=2)
A_JOINT_PEN = pg.mkPen(A_COLOUR, width=2, style=Qt.PenStyle.DashLine)
B_JOINT_PEN = pg.mkPen(B_COLOUR, width=2, style=Qt.PenStyle.DashLine)
HEADROOM = 1.12  # the error axis shows a little above the larger of max error and budget,
# its end rounded up (1, 1.2, 1.5, 2, 2.5, ... x 10^k): it moves only when the data crosses
# one of these, not on every edit


class EngineeringAxis(pg.AxisItem):
    """Tick labels in engineering notation (2e-3, 10e-3), the unit in the axis label."""

    def tickStrings(self, values: list, scale: float, spacing: float) -> list[str]:
        return eng_ticks([v * scale for v in values], spacing * scale)


def _swatch(rgb: tuple[int, int, int], dotted: bool = False, dashed: bool = False) -> str:
    colour = "#{:02x}{:02x}{:02x}".format(*rgb)
    glyph = "\u2508\u2508" if dotted else "\u2505\u2505" if dashed else "\u2501\u2501"
    return f"<span style='color:{colour}; font-weight:bold'>{glyph}</span>"


class ErrorPlotPanel(Panel):
    """Dockable error-over-time plot of `document.result`."""

    follows = (
        ("result_changed", LATER),
        ("clip_changed", LATER),
        ("settings_changed", "_on_precision"),
        ("selection_changed", "_on_selection"),
        ("time_changed", "_update_readout"),
        ("rounding_changed", "_update_readout"),
        ("display_changed", "_on_display"),
        ("comparison_changed", LATER),
    )

    def build(self) -> None:
        document = self.document

        self.plot = pg.PlotWidget(background="w", axisItems={"left": EngineeringAxis("left")})
        self.plot.setLabel("bottom", "time (s)")
        self.plot.setLabel("left", "error (cm)")
        left = self.plot.getAxis("left")
        left.enableAutoSIPrefix(False)
        left.setWidth(64)
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.setMenuEnabled(False)
        self.plot.getViewBox().setMouseEnabled(x=True, y=False)
        self.plot.setMinimumHeight(90)
        # no dynamic range limit: errors are never a million times the axis they are drawn
        # on, and with it every curve computes its data again on each change of the axis
        # (an edit moves the budget, a result the errors: two or three times an edit)
        curve = {"dynamicRangeLimit": None}
        self.max_curve = self.plot.plot(pen=MAX_PEN, **curve)
        self.joint_curve = self.plot.plot(pen=SELECTED_PEN, **curve)
        self.between_curve = self.plot.plot(pen=BETWEEN_PEN, **curve)
        # while comparing: A's curves beside B's (the current result's, recoloured)
        self.a_max_curve = self.plot.plot(pen=A_PEN, **curve)
        self.a_joint_curve = self.plot.plot(pen=A_JOINT_PEN, **curve)
        self.precision_line = pg.InfiniteLine(angle=0, pen=PRECISION_PEN, movable=False)
        self.joint_precision_line = pg.InfiniteLine(angle=0, pen=JOINT_PRECISION_PEN)
        for item in (self.precision_line, self.joint_precision_line):
            self.plot.addItem(item, ignoreBounds=True)
        self._sample_max: tuple[object, np.ndarray] | None = None  # (result, (S,) maxima)
        self.cursor = TimeCursor(document, self.plot)
        cache_drawings(
            [self.plot.getAxis("left"), self.plot.getAxis("bottom"), self.cursor]
            + [c.curve for c in self.curves()]
            + [self.precision_line, self.joint_precision_line]
        )
        self.plot.scene().sigMouseClicked.connect(self._on_scene_clicked)

        self.legend = QLabel()
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        self.between_box = QCheckBox("Between samples")
        self.between_box.setToolTip(
            "Supersampled error with rounding 'none': catches error between the keys"
        )
        self.between_box.toggled.connect(
            lambda on: document.update_display(show_error_between=bool(on))
        )
        self.worst_button = QPushButton("Go to worst")
        self.worst_button.setToolTip("Select the worst joint and jump to its worst time")
        self.worst_button.clicked.connect(self.go_to_worst)
        # one line at any width: two or three wrapped lines moved the plot under the pointer
        self.readout = ElidedLabel("The error of the pose on screen: the 3D view shows the same")

        bar = QHBoxLayout()
        bar.addWidget(self.between_box)
        bar.addWidget(self.worst_button)
        # its text follows time and each result: fenced, a new text re-lays out nothing
        bar.addWidget(LabelFence(self.readout), 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(2)
        layout.addLayout(bar)
        layout.addWidget(self.legend)
        layout.addWidget(self.plot, 1)

    def curves(self) -> list[pg.PlotDataItem]:
        """Every curve of the plot (the current result's, A's while comparing)."""
        return [
            self.max_curve,
            self.joint_curve,
            self.between_curve,
            self.a_max_curve,
            self.a_joint_curve,
        ]

    # --- model -> view ------------------------------------------------------------------
    def _result(self):  # the result of the clip on screen, or None while it compresses
        return self.document.result if self.document.has_lossy() else None

    def _a_error(self) -> np.ndarray | None:
        """(S, J) A's error while comparing (None otherwise)."""
        a = self.document.side_result("A")
        return None if a is None else error_of(a)

    def _times_of(self, error: np.ndarray) -> np.ndarray:
        rate = self.document.clip.sample_rate if self.document.clip is not None else 1.0
        return np.arange(error.shape[0]) / rate

    def _times(self) -> np.ndarray:
        r = self._result()
        return np.arange(r.error.shape[0]) / r.clip.sample_rate if r is not None else np.zeros(0)

    def refresh(self) -> None:
        """Everything from the document, each part once (a result, a clip, a comparison,
        or the panel shown after changes it did not draw)."""
        r = self._result()
        self.worst_button.setEnabled(r is not None)
        if r is None:
            self.max_curve.setData([], [])
            self.between_curve.setData([], [])
        else:
            self.max_curve.setData(self._times(), self._per_sample_max(r))
        comparing = self.document.comparison.active
        self.max_curve.setPen(B_PEN if comparing else MAX_PEN)
        self.joint_curve.setPen(B_JOINT_PEN if comparing else SELECTED_PEN)
        a = self._a_error()
        if a is None:
            self.a_max_curve.setData([], [])
        else:
            self.a_max_curve.setData(self._times_of(a), a.max(axis=1))
        self._draw_between()
        self._draw_joint_curve()
        self._draw_budget_lines()
        self._update_legend()
        self._update_readout()
        # a new clip gets its own time axis at once, before its result exists
        self.plot.setXRange(0.0, max(self.document.duration, 1e-6), padding=0.02)
        self._fit_y()

    def _per_sample_max(self, r: Result) -> np.ndarray:
        """(S,) the worst joint's error at every sample, computed once per result."""
        cached = self._sample_max
        if cached is None or cached[0] is not r:
            cached = self._sample_max = (r, np.asarray(r.error).max(axis=1))
        return cached[1]

    def _fit_y(self) -> None:
        """0 .. a little over the larger of the worst error and the budget."""
        r = self._result()
        top = self.document.global_precision() or 0.0
        if r is not None and np.asarray(r.error).size:
            top = max(top, float(self._per_sample_max(r).max()))
        a = self._a_error()
        if a is not None and a.size:
            top = max(top, float(a.max()))
            if self.document.display.show_error_between and np.asarray(r.error_between).size:
                top = max(top, float(np.asarray(r.error_between).max()))
        top = round_up(top * HEADROOM)
        low, high = self.plot.getViewBox().viewRange()[1]
        if low != 0.0 or not math.isclose(high, top, rel_tol=1e-9):
            # (set again, the same range still re-plots every curve)
            self.plot.setYRange(0.0, top, padding=0)

    def _on_display(self) -> None:
        self._draw_between()
        self._update_legend()

    def _draw_between(self) -> None:
        on = self.document.display.show_error_between
        with QSignalBlocker(self.between_box):  # the model's value, not the user's click
            self.between_box.setChecked(on)
        r = self._result()
        has = r is not None and np.asarray(r.error_between).size > 0
        self.between_box.setEnabled(r is None or has)
        if on and has:
            self.between_curve.setData(
                np.asarray(r.error_between_times), np.asarray(r.error_between).max(axis=1)
            )
        else:
            self.between_curve.setData([], [])

    def _on_precision(self) -> None:
        """A tuning edit: the budget lines and the axis move; the curves wait for the
        result (they are the previous result's until it comes)."""
        self._draw_budget_lines()
        self._update_legend()
        self._fit_y()

    def _draw_budget_lines(self) -> None:
        """The global budget, and the selected joint's own when it differs."""
        budget = self.document.global_precision()  # None: every joint its own (the clip's)
        self.precision_line.setVisible(budget is not None)
        if budget is not None:
            self.precision_line.setValue(budget)
        r, j = self._result(), self.document.selection
        if r is None or j is None or j >= r.error.shape[1]:
            self.joint_precision_line.hide()
        else:
            p = self._joint_precision(j)
            self.joint_precision_line.setValue(p)
            self.joint_precision_line.setVisible(p != self.document.global_precision())

    def _joint_precision(self, j: int) -> float:
        joints = self.document.resolved_joints()
        if joints is None:
            return self.document.global_precision() or 0.0
        return float(joints.precision[j])

    def _on_selection(self) -> None:
        self._draw_joint_curve()
        self._draw_budget_lines()
        self._update_legend()
        self._update_readout()

    def _draw_joint_curve(self) -> None:
        r, j = self._result(), self.document.selection
        if r is None or j is None or j >= r.error.shape[1]:
            self.joint_curve.setData([], [])
        else:
            self.joint_curve.setData(self._times(), np.asarray(r.error)[:, j])
        a = self._a_error()
        if a is None or j is None or j >= a.shape[1]:
            self.a_joint_curve.setData([], [])
        else:
            self.a_joint_curve.setData(self._times_of(a), a[:, j])

    def _update_legend(self) -> None:
        doc = self.document
        clip_wide = doc.global_precision()  # None: each joint's own (an ACL SJSON clip's)
        comparing = doc.comparison.active
        if comparing:
            parts = [
                f"{_swatch(A_COLOUR)} A worst joint",
                f"{_swatch(B_COLOUR)} B worst joint",
            ]
        else:
            parts = [f"{_swatch(MAX_COLOUR)} worst joint"]
        if clip_wide is None:
            parts.append("budgets: each joint's own, from the clip")
        else:
            parts.append(f"{_swatch(BUDGET_COLOUR, dashed=True)} budget {format_budget(clip_wide)}")
        j = doc.selection
        if j is not None and doc.clip is not None and j < doc.clip.num_joints:
            name = doc.clip.skeleton.names[j]
            if comparing:
                parts.append(f"{_swatch(A_COLOUR, dashed=True)} A {name}")
                parts.append(f"{_swatch(B_COLOUR, dashed=True)} B {name}")
            else:
                parts.append(f"{_swatch(SELECTED_COLOUR)} {name}")
            p = self._joint_precision(j)
            if p != doc.global_precision():
                parts.append(
                    f"{_swatch(SELECTED_COLOUR, dashed=True)} {name}'s budget {format_cm(p)}"
                )
        if doc.display.show_error_between:
            parts.append(f"{_swatch(BETWEEN_COLOUR, dotted=True)} worst between samples")
        self.legend.setText(" &nbsp; ".join(parts))

    def _update_readout(self) -> None:
        doc = self.document
        shown = doc.shown_pose()
        if shown is None:
            self.readout.setText("no clip")
            return
        keys = shown.keys
        if doc.rounding in ("none", "per_track"):
            where = f"between samples {keys.first} and {keys.second}"
        else:  # floor, ceil and nearest snap alpha to 0 or 1: one sample is shown
            shown_sample = keys.second if float(np.max(keys.alpha)) > 0 else keys.first
            where = f"{doc.rounding} \u2192 sample {shown_sample}"
        text = f"t {doc.time:.3f} s ({where})"
        if shown.error is None or shown.fraction is None:
            self.readout.setText(text + " \u00b7 compressing\u2026")
            return
        worst = int(np.argmax(shown.fraction))
        names = doc.clip.skeleton.names  # type: ignore[union-attr]
        j = doc.selection
        if j is not None and j < len(shown.error):
            text += (
                f" \u00b7 {names[j]} {format_cm(shown.error[j])} "
                f"({format_percent(shown.fraction[j])})"
            )
        text += f" \u00b7 closest to budget: {names[worst]} {format_percent(shown.fraction[worst])}"
        self.readout.setText(text)

    # --- view -> model ------------------------------------------------------------------
    def _on_scene_clicked(self, event) -> None:  # pyqtgraph MouseClickEvent
        if event.button() != Qt.MouseButton.LeftButton or self._result() is None:
            return
        vb = self.plot.getViewBox()
        if not vb.sceneBoundingRect().contains(event.scenePos()):
            return
        self.document.set_time(float(vb.mapSceneToView(event.scenePos()).x()))

    def go_to_worst(self) -> None:
        """Select the worst joint and jump to the time of its worst error."""
        r = self._result()
        if r is None:
            return
        err = np.asarray(r.error)
        joint = int(r.stats.get("worst_track", int(err.max(axis=0).argmax())))
        t = r.stats.get("worst_time")
        if t is None:
            t = int(err[:, joint].argmax()) / r.clip.sample_rate
        self.document.set_selection(joint)
        self.document.set_time(float(t))
