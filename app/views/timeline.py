"""The timeline: a continuous scrub bar with samples and segments, transport and rounding.

Stripped keyframes (rebuilt by the decoder from their stored neighbours) get a full-height
violet tick; rounding still steps every source frame, stripped ones included.

Playback owns no clip state: it moves `document.time` from a QElapsedTimer (wall clock x
speed), so a slow frame skips ahead instead of slowing the clip down.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from app.model.document import Document
from app.model.error_scale import format_rate
from app.qt.handler_guard import survives
from codec.model.sampling import BASE_ROUNDING, ROUNDING_MODES, sample_keys
from codec.tuning import JointOverride, set_joint_override

SPEEDS = (0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 4.0)
EPS = 1e-9
STRIPPED_COLOR = QtGui.QColor(150, 90, 220)  # ticks of stripped keyframes
SEGMENT_COLOR = QtGui.QColor(240, 160, 40)  # the line where each segment starts
TIMELINE_TIP = (
    "Drag to scrub (red line: the time shown).\n"
    "Orange lines: where each compression segment starts (the codec stores every segment "
    "with bit rates and ranges of its own); shaded bands alternate segment by segment.\n"
    "Grey ticks: the samples. Full-height violet ticks: stripped keyframes (rebuilt from "
    "their neighbours)."
)


class ScrubBar(QtWidgets.QWidget):
    """A slider over continuous time: sample ticks, segment bands and a cursor.

    Pressing or dragging anywhere moves the time to the exact mouse position (no snapping
    to samples); `scrubbed(t)` is emitted for every move.
    """

    scrubbed = QtCore.Signal(float)

    MARGIN = 8

    def __init__(self, document: Document, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.setMinimumHeight(38)
        self.setSizePolicy(
            QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Fixed
        )
        self.setMouseTracking(False)
        self.setToolTip(TIMELINE_TIP)
        self._dragging = False
        self._ticks: tuple[tuple, tuple[list[QtCore.QLineF], list[QtCore.QLineF]]] | None = None

    def _tick_lines(
        self, n: int, rate: float, stored: np.ndarray
    ) -> tuple[list[QtCore.QLineF], list[QtCore.QLineF]]:
        """The sample ticks (kept, stripped), at least 4 px apart; made again only when the
        size, the clip or the stored keyframes change. A tick at a time from Python was
        1-2 ms of every frame of the window's widgets (each edit, each frame of playback).
        `stored` (S,) bool."""
        h, width, dur = self.height(), self.width(), self.document.duration
        key = (width, h, n, rate, dur, stored.tobytes())
        if self._ticks is not None and self._ticks[0] == key:
            return self._ticks[1]
        left, right = self.MARGIN, width - self.MARGIN
        px_per = (right - left) / max(n - 1, 1)
        every = max(1, math.ceil(4 / max(px_per, 1e-9)))
        s = np.arange(0, n, every)
        w = width - 2 * self.MARGIN
        xs = self.MARGIN + (s / rate / dur * w if dur > 0 else np.zeros(len(s)))
        keep = stored[s]
        kept = [QtCore.QLineF(x, h - 12, x, h - 4) for x in xs[keep].tolist()]
        stripped = [QtCore.QLineF(x, 4, x, h - 4) for x in xs[~keep].tolist()]
        self._ticks = (key, (kept, stripped))
        return kept, stripped

    def time_to_x(self, t: float) -> float:
        dur = self.document.duration
        w = self.width() - 2 * self.MARGIN
        return self.MARGIN + (t / dur * w if dur > 0 else 0.0)

    def x_to_time(self, x: float) -> float:
        dur = self.document.duration
        w = max(self.width() - 2 * self.MARGIN, 1)
        return min(max((x - self.MARGIN) / w, 0.0), 1.0) * dur

    @survives
    def mousePressEvent(self, ev: QtGui.QMouseEvent) -> None:
        if ev.button() == QtCore.Qt.MouseButton.LeftButton:
            self._dragging = True
            self.scrubbed.emit(self.x_to_time(ev.position().x()))

    @survives
    def mouseMoveEvent(self, ev: QtGui.QMouseEvent) -> None:
        if self._dragging:
            self.scrubbed.emit(self.x_to_time(ev.position().x()))

    @survives
    def mouseReleaseEvent(self, ev: QtGui.QMouseEvent) -> None:
        if self._dragging:
            self.scrubbed.emit(self.x_to_time(ev.position().x()))
        self._dragging = False

    @survives
    def paintEvent(self, _ev: QtGui.QPaintEvent) -> None:
        doc = self.document
        p = QtGui.QPainter(self)
        pal = self.palette()
        h = self.height()
        left, right = self.MARGIN, self.width() - self.MARGIN
        p.fillRect(
            QtCore.QRectF(left, 4, right - left, h - 8), pal.color(QtGui.QPalette.ColorRole.Base)
        )
        clip = doc.clip
        if clip is None:
            p.end()
            return
        rate = clip.sample_rate
        # segments: alternating bands and a strong line at each boundary
        costs = doc.result.costs if doc.result is not None else None
        if costs is not None and len(costs.segments):
            for g, (start, count) in enumerate(np.asarray(costs.segments)):
                x0 = self.time_to_x(min(start / rate, doc.duration))
                x1 = self.time_to_x(min((start + count - 1) / rate, doc.duration))
                if g % 2:
                    p.fillRect(QtCore.QRectF(x0, 4, x1 - x0, h - 8), QtGui.QColor(70, 110, 160, 70))
                p.setPen(QtGui.QPen(SEGMENT_COLOR, 2))
                p.drawLine(QtCore.QPointF(x0, 4), QtCore.QPointF(x0, h - 4))
        # sample ticks, thinned so they never crowd
        kept, stripped = self._tick_lines(clip.num_samples, rate, doc.stored_keyframes())
        p.setPen(QtGui.QPen(pal.color(QtGui.QPalette.ColorRole.Mid), 1))
        p.drawLines(kept)
        # a stripped keyframe (rebuilt from its neighbours): a violet tick, full height
        p.setPen(QtGui.QPen(STRIPPED_COLOR, 1))
        p.drawLines(stripped)
        # cursor
        x = self.time_to_x(doc.time)
        p.setPen(QtGui.QPen(QtGui.QColor(255, 80, 80), 2))
        p.drawLine(QtCore.QPointF(x, 0), QtCore.QPointF(x, h))
        p.end()


class TimelineWidget(QtWidgets.QWidget):
    """Transport, readout and rounding on one row, the scrub bar below; per-joint rounding
    rules go out as `overrides_edited(rules)`."""

    overrides_edited = QtCore.Signal(object)  # tuple[JointOverride, ...]

    def __init__(self, document: Document, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.bar = ScrubBar(document, self)
        self.bar.scrubbed.connect(self.scrub)

        self.clock = QtCore.QElapsedTimer()
        self.timer = QtCore.QTimer(self)
        self.timer.setTimerType(QtCore.Qt.TimerType.PreciseTimer)
        self.timer.setInterval(15)
        self.timer.timeout.connect(self._tick)
        self._play_origin = 0.0

        style = self.style()
        sp = QtWidgets.QStyle.StandardPixmap
        self._play_icon = style.standardIcon(sp.SP_MediaPlay)
        self._pause_icon = style.standardIcon(sp.SP_MediaPause)

        def button(icon: QtGui.QIcon, tip: str, slot: object) -> QtWidgets.QToolButton:
            b = QtWidgets.QToolButton()
            b.setIcon(icon)
            b.setToolTip(tip)
            b.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
            b.clicked.connect(slot)
            return b

        self.home_button = button(
            style.standardIcon(sp.SP_MediaSkipBackward), "First sample (Home)", self.go_home
        )
        self.back_button = button(
            style.standardIcon(sp.SP_MediaSeekBackward),
            "Previous sample (Left)",
            lambda: self.step(-1),
        )
        self.play_button = button(self._play_icon, "Play / pause (Space)", self.toggle_play)
        self.fwd_button = button(
            style.standardIcon(sp.SP_MediaSeekForward), "Next sample (Right)", lambda: self.step(1)
        )
        self.end_button = button(
            style.standardIcon(sp.SP_MediaSkipForward), "Last sample (End)", self.go_end
        )
        self.loop_box = QtWidgets.QCheckBox("Loop")
        self.loop_box.setChecked(True)
        self.speed_box = QtWidgets.QComboBox()
        for s in SPEEDS:
            self.speed_box.addItem(f"{s:g}x", s)
        self.speed_box.setCurrentIndex(SPEEDS.index(1.0))
        self.speed_box.setToolTip("Playback speed")
        self.speed_box.currentIndexChanged.connect(self._restart_clock)
        self.rounding_box = QtWidgets.QComboBox()
        self.rounding_box.addItems(list(ROUNDING_MODES))
        self.rounding_box.setToolTip(
            "Sample-time rounding for both skeletons; per_track uses each joint's own mode"
        )
        self.rounding_box.currentTextChanged.connect(self.document.set_rounding)
        self.per_joint_button = QtWidgets.QToolButton()
        self.per_joint_button.setText("Per joint\u2026")
        self.per_joint_button.setToolTip("Rounding mode of the selected joint (per_track)")
        self.per_joint_button.setPopupMode(QtWidgets.QToolButton.ToolButtonPopupMode.InstantPopup)
        self.per_joint_button.setMenu(self._per_joint_menu())
        self.readout = QtWidgets.QLabel()
        self.readout.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        font = QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont)
        self.readout.setFont(font)
        # a changing readout must never resize the window's central area
        self.readout.setSizePolicy(
            QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred
        )
        self.readout.setMinimumWidth(0)
        for w in (self.loop_box, self.speed_box, self.rounding_box, self.per_joint_button):
            w.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)

        row = QtWidgets.QHBoxLayout()
        row.setContentsMargins(4, 0, 4, 0)
        for w in (
            self.home_button,
            self.back_button,
            self.play_button,
            self.fwd_button,
            self.end_button,
            self.loop_box,
            self.speed_box,
        ):
            row.addWidget(w)
        row.addSpacing(12)
        row.addWidget(QtWidgets.QLabel("Rounding:"))
        row.addWidget(self.rounding_box)
        row.addWidget(self.per_joint_button)
        row.addStretch(1)
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(0, 2, 0, 2)
        lay.setSpacing(2)
        lay.addLayout(row)
        lay.addWidget(self.bar)
        self.readout.setContentsMargins(6, 0, 6, 0)
        lay.addWidget(self.readout)  # its own line: the full readout is never cut off

        d = document
        d.time_changed.connect(self._on_time)
        d.clip_changed.connect(self._on_clip)
        d.result_changed.connect(self.bar.update)
        d.rounding_changed.connect(self._on_rounding)
        d.selection_changed.connect(self._on_time)
        self._on_clip()

    # --- transport ----------------------------------------------------------------------
    @property
    def playing(self) -> bool:
        return self.timer.isActive()

    @property
    def speed(self) -> float:
        return float(self.speed_box.currentData())

    def set_speed(self, speed: float) -> None:
        i = int(np.argmin([abs(s - speed) for s in SPEEDS]))
        self.speed_box.setCurrentIndex(i)

    def play(self) -> None:
        doc = self.document
        if doc.clip is None or doc.duration <= 0:
            return
        if doc.time >= doc.duration - EPS and not self.loop_box.isChecked():
            doc.set_time(0.0)
        self._restart_clock()
        self.timer.start()
        self.play_button.setIcon(self._pause_icon)

    def pause(self) -> None:
        self.timer.stop()
        self.play_button.setIcon(self._play_icon)

    def toggle_play(self) -> None:
        self.pause() if self.playing else self.play()

    def _restart_clock(self) -> None:
        self._play_origin = self.document.time
        self.clock.start()

    def _tick(self) -> None:
        doc = self.document
        dur = doc.duration
        t = self._play_origin + self.clock.elapsed() / 1000.0 * self.speed
        if t > dur:
            if self.loop_box.isChecked() and dur > 0:
                t = math.fmod(t, dur)
                self._play_origin = t
                self.clock.start()
            else:
                t = dur
                self.pause()
        doc.set_time(t)

    def step(self, direction: int) -> None:
        """Move to the next / previous stored sample from the current (possibly between) time."""
        doc = self.document
        if doc.clip is None:
            return
        rate = doc.clip.sample_rate
        pos = doc.time * rate
        k = math.floor(pos + EPS) + 1 if direction > 0 else math.ceil(pos - EPS) - 1
        k = min(max(k, 0), doc.clip.num_samples - 1)
        self.pause()
        doc.set_time(k / rate)

    def go_home(self) -> None:
        self.pause()
        self.document.set_time(0.0)

    def go_end(self) -> None:
        self.pause()
        self.document.set_time(self.document.duration)

    def scrub(self, t: float) -> None:
        if self.playing:
            self.pause()
        self.document.set_time(t)

    # --- per-joint rounding -------------------------------------------------------------
    def _per_joint_menu(self) -> QtWidgets.QMenu:
        menu = QtWidgets.QMenu(self)
        for mode in BASE_ROUNDING:
            menu.addAction(f"Selected joint: {mode}", lambda m=mode: self.set_joint_rounding(m))
        menu.addSeparator()
        menu.addAction("Clear per-joint rounding", self.clear_joint_rounding)
        return menu

    def set_joint_rounding(self, mode: str) -> None:
        """Give the selected joint its own rounding (a rule on its exact name, an intent:
        `overrides_edited`) and play every joint in its own mode."""
        doc = self.document
        if doc.clip is None or doc.selection is None:
            return
        name = doc.clip.skeleton.names[doc.selection]
        self.overrides_edited.emit(set_joint_override(doc.overrides, name, rounding=mode))
        doc.set_rounding("per_track")

    def clear_joint_rounding(self) -> None:
        doc = self.document
        rules = []
        for r in doc.overrides:
            if r.rounding is None:
                rules.append(r)
            elif r.precision is not None or r.shell_distance is not None:
                rules.append(JointOverride(r.pattern, r.precision, r.shell_distance))
        self.overrides_edited.emit(tuple(rules))

    # --- model -> widgets ---------------------------------------------------------------
    def _on_clip(self) -> None:
        self.pause()
        has = self.document.clip is not None
        for w in (
            self.home_button,
            self.back_button,
            self.play_button,
            self.fwd_button,
            self.end_button,
        ):
            w.setEnabled(has)
        if has and self.document.clip is not None:
            self.loop_box.setChecked(
                True if self.document.clip.looping else self.loop_box.isChecked()
            )
        self._on_time()

    def _on_rounding(self) -> None:
        mode = self.document.rounding
        if self.rounding_box.currentText() != mode:
            self.rounding_box.setCurrentText(mode)
        self._on_time()

    def _on_time(self) -> None:
        self.bar.update()
        doc = self.document
        clip = doc.clip
        if clip is None:
            self.readout.setText("no clip")
            return
        rate = clip.sample_rate
        keys = sample_keys(
            doc.time,
            rate,
            clip.num_samples,
            doc.rounding if doc.rounding != "per_track" else "none",
        )
        alpha = float(np.asarray(keys.alpha).reshape(-1)[0]) if np.size(keys.alpha) else 0.0
        text = (
            f"{doc.time:7.3f} s / {doc.duration:.3f}   frame {doc.time * rate:7.2f} / "
            f"{clip.num_samples - 1}   samples {keys.first}\u2192{keys.second}  "
            f"\u03b1 {keys.raw_alpha:.2f}"
        )
        if doc.rounding == "per_track":
            modes = doc.per_track_rounding()
            if doc.selection is not None and modes is not None:
                m = str(modes[doc.selection])
                text += f" (selected: {m})"
        elif doc.rounding != "none":
            text += f" \u2192 {alpha:.0f}"
        text += f"   {format_rate(rate)}"
        self.readout.setText(text)
