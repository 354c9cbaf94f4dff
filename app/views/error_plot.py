"""Error over time: the worst joint at every sample, the selected joint, and the precision line.

Where the max curve crosses the precision line is where the clip fails; the between-samples
curve (supersampled, rounding none) shows error that sample-time checks miss. The time cursor
is the document's time (dragging it scrubs, scrubbing elsewhere moves it), clicking the plot
jumps there, and "Go to worst" selects the worst joint at its worst time.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.document import Document
from app.views.time_cursor import TimeCursor

MAX_PEN = pg.mkPen((220, 60, 40), width=2)
SELECTED_PEN = pg.mkPen((40, 110, 220), width=2)
BETWEEN_PEN = pg.mkPen((230, 150, 30), width=1, style=Qt.PenStyle.DotLine)
PRECISION_PEN = pg.mkPen((40, 160, 70), width=1, style=Qt.PenStyle.DashLine)
JOINT_PRECISION_PEN = pg.mkPen((40, 110, 220), width=1, style=Qt.PenStyle.DashLine)


class ErrorPlotPanel(QWidget):
    """Dockable error-over-time plot of `document.result`."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document

        self.plot = pg.PlotWidget(background="w")
        self.plot.setLabel("bottom", "time", units="s")
        self.plot.setLabel("left", "error")
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.setMenuEnabled(False)
        self.legend = self.plot.addLegend(
            offset=(-10, 10), brush=(255, 255, 255, 210), labelTextColor=(40, 40, 40)
        )
        self.max_curve = self.plot.plot(pen=MAX_PEN, name="max over joints")
        self.joint_curve = self.plot.plot(pen=SELECTED_PEN, name="selected joint")
        self.between_curve = self.plot.plot(pen=BETWEEN_PEN, name="max between samples")
        self.precision_line = pg.InfiniteLine(
            angle=0,
            pen=PRECISION_PEN,
            movable=False,
            label="precision {value:.4g}",
            labelOpts={"position": 0.05, "color": (40, 160, 70)},
        )
        self.joint_precision_line = pg.InfiniteLine(angle=0, pen=JOINT_PRECISION_PEN)
        for item in (self.precision_line, self.joint_precision_line):
            self.plot.addItem(item, ignoreBounds=True)
        self.cursor = TimeCursor(document, self.plot)
        self.plot.scene().sigMouseClicked.connect(self._on_scene_clicked)

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
        self.readout = QLabel()
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        bar = QHBoxLayout()
        bar.addWidget(self.between_box)
        bar.addWidget(self.worst_button)
        bar.addWidget(self.readout, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(bar)
        layout.addWidget(self.plot, 1)

        document.result_changed.connect(self._on_result)
        document.clip_changed.connect(self._on_result)
        document.settings_changed.connect(self._on_precision)
        document.selection_changed.connect(self._on_selection)
        document.time_changed.connect(self._update_readout)
        document.display_changed.connect(self._on_display)
        self._on_result()
        self._on_display()

    # --- model -> view ------------------------------------------------------------------
    def _times(self) -> np.ndarray:
        r = self.document.result
        return np.arange(r.error.shape[0]) / r.clip.sample_rate if r is not None else np.zeros(0)

    def _on_result(self) -> None:
        r = self.document.result
        self.worst_button.setEnabled(r is not None)
        if r is None:
            self.max_curve.setData([], [])
            self.between_curve.setData([], [])
        else:
            self.max_curve.setData(self._times(), np.asarray(r.error).max(axis=1))
            self._on_display()
        self._on_selection()
        self._on_precision()
        self._update_readout()
        if r is not None:
            self.plot.setXRange(0.0, max(self.document.duration, 1e-6), padding=0.02)
            self.plot.enableAutoRange(axis="y")

    def _on_display(self) -> None:
        on = self.document.display.show_error_between
        self.between_box.blockSignals(True)
        self.between_box.setChecked(on)
        self.between_box.blockSignals(False)
        r = self.document.result
        has = r is not None and np.asarray(r.error_between).size > 0
        self.between_box.setEnabled(r is None or has)
        if on and has:
            self.between_curve.setData(
                np.asarray(r.error_between_times), np.asarray(r.error_between).max(axis=1)
            )
        else:
            self.between_curve.setData([], [])

    def _on_precision(self) -> None:
        self.precision_line.setValue(self.document.settings.precision)
        self._on_selection()

    def _on_selection(self) -> None:
        r, j = self.document.result, self.document.selection
        if r is None or j is None or j >= r.error.shape[1]:
            self.joint_curve.setData([], [])
            self.joint_precision_line.hide()
            self.legend.getLabel(self.joint_curve).setText("selected joint")
        else:
            self.joint_curve.setData(self._times(), np.asarray(r.error)[:, j])
            self.legend.getLabel(self.joint_curve).setText(r.clip.skeleton.names[j])
            joints = self.document.resolved_joints()
            p = (
                float(joints.precision[j])
                if joints is not None
                else self.document.settings.precision
            )
            self.joint_precision_line.setValue(p)
            self.joint_precision_line.setVisible(p != self.document.settings.precision)
        self._update_readout()

    def _update_readout(self) -> None:
        r = self.document.result
        if r is None:
            self.readout.setText("no result yet")
            return
        s = min(int(round(self.document.time * r.clip.sample_rate)), r.error.shape[0] - 1)
        err = np.asarray(r.error)[s]
        text = f"t {self.document.time:.3f} s · sample {s} · max {err.max():.4g}"
        j = self.document.selection
        if j is not None and j < err.shape[0]:
            text += f" · {r.clip.skeleton.names[j]} {err[j]:.4g}"
        self.readout.setText(text)

    # --- view -> model ------------------------------------------------------------------
    def _on_scene_clicked(self, event) -> None:  # pyqtgraph MouseClickEvent
        if event.button() != Qt.MouseButton.LeftButton or self.document.result is None:
            return
        vb = self.plot.getViewBox()
        if not vb.sceneBoundingRect().contains(event.scenePos()):
            return
        self.document.set_time(float(vb.mapSceneToView(event.scenePos()).x()))

    def go_to_worst(self) -> None:
        """Select the worst joint and jump to the time of its worst error."""
        r = self.document.result
        if r is None:
            return
        err = np.asarray(r.error)
        joint = int(r.stats.get("worst_track", int(err.max(axis=0).argmax())))
        t = r.stats.get("worst_time")
        if t is None:
            t = int(err[:, joint].argmax()) / r.clip.sample_rate
        self.document.set_selection(joint)
        self.document.set_time(float(t))
