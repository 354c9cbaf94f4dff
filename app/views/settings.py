"""Global compression settings: precision (log slider + spin box), shell distance, level and
keyframe stripping.

Precision spans decades (0.001 cm for a face, 1 cm for a crowd), so the slider is logarithmic
and the spin box takes the exact value. A clip with a skinned mesh can take every joint's
shell distance from the mesh ("from mesh"); the number then serves the joints no vertex
hangs on. Every change is an intent (`settings_edited`) the controller applies: it
recompresses in the background and saves the tuning beside the clip; the line under the knobs
says what the last change cost or saved against the previous result.

Keyframe stripping (ACL 2.1's): the check box strips the keyframes interpolation rebuilds
within every joint's precision (on by default, lossless under the error measure); the
proportion and threshold (the "Strip more" row) strip beyond it, and a red line says so.

Skin-strict (the "Skin" row, only for a clip with a skinned mesh): the promise becomes the
skin itself, every vertex within its strongest joint's precision at every sample (the codec
takes shells from the mesh and tightens joints where the skin is over). It cannot go with
destructive stripping, so each of the two is disabled while the other is on.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QSlider,
    QVBoxLayout,
)

from app.model.comparison import auto_tried, auto_tried_text, registered_codecs
from app.model.document import Document
from app.qt.label_fence import LabelFence
from app.views.codec_choice import mark_unavailable
from app.views.panel import Panel
from app.views.stats import change_text
from codec.settings import BIND_MODES, LEVELS

LOG_MIN, LOG_MAX = -4.0, 1.0  # precision slider: 0.0001 .. 10 clip units
STEPS_PER_DECADE = 100


def precision_to_slider(p: float) -> int:
    return round((min(max(math.log10(p), LOG_MIN), LOG_MAX) - LOG_MIN) * STEPS_PER_DECADE)


def slider_to_precision(v: int) -> float:
    """Slider position -> precision rounded to 3 significant digits (values a person types)."""
    return float(f"{10 ** (LOG_MIN + v / STEPS_PER_DECADE):.3g}")


PER_JOINT = "per joint"  # a spin box at its minimum: the clip's own per-joint values stand


def own_values_text(doc: Document, name: str) -> str:
    """ "0.002-0.05 cm" while the clip's own per-joint values of `name` (precision or
    shell_distance) stand and differ ("" otherwise: the number shown is every joint's)."""
    clip = doc.clip
    if clip is None or getattr(doc.settings, name) is not None:
        return ""
    values = getattr(clip.skeleton, name)
    if not values.size or values.min() == values.max():
        return ""
    return f"{values.min():g}\u2013{values.max():g} cm"


class SettingsPanel(Panel):
    """Dockable view of `document.settings`; edits go out as `settings_edited(changes)`."""

    settings_edited = Signal(object)  # {setting: new value}
    gesture_started = Signal(str)  # the precision slider pressed: its drag is one undo step
    gesture_ended = Signal()  # and released
    codec_requested = Signal(str)  # the codec to compress with (auto: the smallest strict)

    follows = (
        ("settings_changed", "_on_settings"),
        ("result_changed", "_on_result"),
        ("clip_changed", "_on_result"),
        ("clip_changed", "_on_settings"),
        ("status_changed", "_on_status"),
    )

    def build(self) -> None:

        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, round((LOG_MAX - LOG_MIN) * STEPS_PER_DECADE))
        self.slider.setPageStep(STEPS_PER_DECADE // 4)
        self.slider.setToolTip("Precision on a logarithmic scale, 0.0001 to 10 (left is stricter)")
        self.precision = QDoubleSpinBox()
        self.precision.setDecimals(5)
        self.precision.setRange(10**LOG_MIN / 10, 100.0)
        self.precision.setStepType(QAbstractSpinBox.StepType.AdaptiveDecimalStepType)
        self.precision.setKeyboardTracking(False)
        self.precision.setToolTip("Largest error allowed on each joint's shell, in clip units")
        self.precision.setSpecialValueText(PER_JOINT)
        self.shell = QDoubleSpinBox()
        self.shell.setDecimals(3)
        self.shell.setRange(0.001, 10000.0)
        self.shell.setStepType(QAbstractSpinBox.StepType.AdaptiveDecimalStepType)
        self.shell.setKeyboardTracking(False)
        self.shell.setToolTip("Radius of the virtual vertices (skin) each joint must keep in place")
        self.shell.setSpecialValueText(PER_JOINT)
        self.shell_from_mesh = QCheckBox("from mesh")
        self.codec = QComboBox()
        self.codec.addItems(list(registered_codecs()))
        self.codec.setToolTip(
            "The codec to compress with; auto tries every codec and keeps the smallest "
            "strict result (python -m codec codecs describes them)"
        )
        self.codec_pick = QLabel()  # auto's choice
        self.level = QComboBox()
        self.level.addItems(LEVELS)
        self.level.setToolTip("Compression effort; automatic follows ACL's rule")
        self.resolved = QLabel()
        self.strip_trivial = QCheckBox("strip trivial")
        self.strip_trivial.setToolTip(
            "Strip the keyframes that interpolating their neighbours rebuilds within every "
            "joint's precision (ACL 2.1's default)"
        )
        self.strip_proportion = QDoubleSpinBox()
        self.strip_proportion.setRange(0.0, 100.0)  # shown in %, the setting is 0..1
        self.strip_proportion.setDecimals(0)
        self.strip_proportion.setSingleStep(5.0)
        self.strip_proportion.setKeyboardTracking(False)
        self.strip_proportion.setSuffix(" %")
        self.strip_proportion.setToolTip(
            "DESTRUCTIVE: strip at least this share of the keyframes, even past the "
            "precision (lost momentum, missed contacts and apexes)"
        )
        self.strip_threshold = QDoubleSpinBox()
        self.strip_threshold.setRange(0.0, 99.0)
        self.strip_threshold.setDecimals(3)
        self.strip_threshold.setStepType(QAbstractSpinBox.StepType.AdaptiveDecimalStepType)
        self.strip_threshold.setKeyboardTracking(False)
        self.strip_threshold.setSuffix(" cm")
        self.strip_threshold.setToolTip(
            "DESTRUCTIVE: also strip keyframes whose removal adds at most this error (clip "
            "units), even past the precision"
        )
        self.strip_warning = QLabel()
        self.skin_strict = QCheckBox("skin strict")
        self.skin_strict.setToolTip(
            "Keep every vertex of the skin within the precision of its strongest joint at "
            "every sample, measured on the mesh itself (shells from the mesh, joints "
            "tightened where the skin is over)"
        )
        self.bind = QComboBox()
        self.bind.addItems(BIND_MODES)
        self.bind.setToolTip(
            "acl-style: what default sub-tracks hold. strip: the bind pose (ACL's stripping); "
            "none: the identity; additive: the clip stored as an additive on the bind pose; "
            "best: each of them, keeping the smallest strict one; auto (default): strip, and "
            "the others only where they may win big (best's choice on 44 of 45 clips, at "
            "strip's cost)"
        )
        self.bind_pick = QLabel()  # auto's or best's choice
        self.clean_defaults = QDoubleSpinBox()
        self.clean_defaults.setRange(0.0, 1.0)
        self.clean_defaults.setDecimals(4)
        self.clean_defaults.setStepType(QAbstractSpinBox.StepType.AdaptiveDecimalStepType)
        self.clean_defaults.setKeyboardTracking(False)
        self.clean_defaults.setSpecialValueText("no cleaning")
        self.clean_defaults.setSuffix(" cm")
        self.clean_defaults.setToolTip(
            "DESTRUCTIVE: snap sub-tracks within this of their bind value (on the joint's "
            "shell, local space) exactly to it before compressing; Stats says what moved"
        )
        self.compensate = QCheckBox("compensate")
        self.compensate.setToolTip(
            "acl-style: try in-place error compensation (each animated child corrects its "
            "decoded parent's error in object space); kept where smaller and strict"
        )
        self.change = QLabel()
        self.change.setWordWrap(True)
        self.change.setTextFormat(Qt.TextFormat.RichText)
        self.status = QLabel()
        self.status.setWordWrap(True)

        row = QHBoxLayout()
        row.addWidget(self.slider, 1)
        row.addWidget(self.precision)
        level_row = QHBoxLayout()
        level_row.addWidget(self.level)
        level_row.addWidget(self.resolved, 1)
        codec_row = QHBoxLayout()
        codec_row.addWidget(self.codec)
        codec_row.addWidget(self.codec_pick, 1)
        form = QFormLayout()
        form.addRow("Codec", codec_row)
        form.addRow("Precision", row)
        form.addRow("Shell distance", self.shell)
        form.addRow("", self.shell_from_mesh)  # its own row: the dock can be narrower
        form.addRow("Level", level_row)
        form.addRow("Keyframes", self.strip_trivial)
        more_row = QHBoxLayout()
        more_row.addWidget(self.strip_proportion)
        more_row.addWidget(self.strip_threshold, 1)
        form.addRow("Strip more", more_row)
        form.addRow("", self.strip_warning)
        form.addRow("Skin", self.skin_strict)
        bind_row = QHBoxLayout()
        bind_row.addWidget(self.bind)
        bind_row.addWidget(self.bind_pick, 1)
        form.addRow("Bind pose", bind_row)
        form.addRow("", self.compensate)  # its own row: the dock can be narrower
        form.addRow("Clean defaults", self.clean_defaults)
        self.form = form
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(form)
        # both change on every edit: fenced, a new text re-lays out the panel (and its dock
        # and the window) only when it needs another number of lines
        layout.addWidget(LabelFence(self.change))
        layout.addWidget(LabelFence(self.status))
        layout.addStretch(1)

        self.slider.valueChanged.connect(self._on_slider)
        self.slider.sliderPressed.connect(lambda: self.gesture_started.emit("precision"))
        self.slider.sliderReleased.connect(self.gesture_ended.emit)
        self.precision.valueChanged.connect(self._on_precision)
        self.shell.valueChanged.connect(self._on_shell)
        self.shell_from_mesh.toggled.connect(self._on_shell_from_mesh)
        self.level.currentTextChanged.connect(self._on_level)
        self.codec.currentTextChanged.connect(self._on_codec)
        self.strip_trivial.toggled.connect(lambda on: self._edit(strip_trivial=bool(on)))
        self.strip_proportion.valueChanged.connect(
            lambda v: self._edit(strip_proportion=float(v) / 100.0)
        )
        self.strip_threshold.valueChanged.connect(lambda v: self._edit(strip_threshold=float(v)))
        self.skin_strict.toggled.connect(lambda on: self._edit(skin_strict=bool(on)))
        self.bind.currentTextChanged.connect(lambda mode: self._edit(bind=mode))
        self.compensate.toggled.connect(lambda on: self._edit(compensate=bool(on)))
        self.clean_defaults.valueChanged.connect(lambda v: self._edit(clean_defaults=float(v)))

    def refresh(self) -> None:
        self._on_settings()
        self._on_result()
        self._on_status()

    def refresh_codecs(self) -> None:
        """Grey out again the codecs that cannot run (the acl_compressor changed)."""
        mark_unavailable(self.codec, self.document)

    # --- model -> view ------------------------------------------------------------------
    def _on_settings(self) -> None:
        s = self.document.settings
        doc = self.document
        with self.syncing:
            precision, shell = doc.global_precision(), doc.global_shell_distance()
            own = doc.clip.skeleton if doc.clip is not None else None
            middle = float(np.median(own.precision)) if own is not None else 0.01
            self.slider.setValue(precision_to_slider(middle if precision is None else precision))
            # at its minimum a box reads "per joint": the clip's own values stand
            self.precision.setValue(self.precision.minimum() if precision is None else precision)
            self.shell.setValue(self.shell.minimum() if shell is None else shell)
            self.level.setCurrentText(s.level)
            self.codec.setCurrentText(self.document.codec)
            mark_unavailable(self.codec, self.document)
            self.strip_trivial.setChecked(s.strip_trivial)
            self.strip_proportion.setValue(100.0 * s.strip_proportion)
            self.strip_threshold.setValue(s.strip_threshold)
            self.skin_strict.setChecked(s.skin_strict)
            self.bind.setCurrentText(s.bind)
            self.compensate.setChecked(s.compensate)
            self.clean_defaults.setValue(s.clean_defaults)
            self._sync_shell_source()
        destructive = s.strip_proportion > 0 or s.strip_threshold > 0
        clip = self.document.clip
        self.form.setRowVisible(self.skin_strict, clip is not None and bool(clip.meshes))
        self.skin_strict.setEnabled(not destructive or s.skin_strict)
        self.strip_proportion.setEnabled(not s.skin_strict)
        self.strip_threshold.setEnabled(not s.skin_strict)
        self.form.setRowVisible(self.strip_warning, destructive)  # no empty gap when off
        self.strip_warning.setText(
            "<span style='color:#c0392b'>destructive stripping: joints may exceed their "
            "precision</span>"
            if destructive
            else ""
        )
        self._own_values_tips()

    def _own_values_tips(self) -> None:
        """While the clip's own per-joint values stand, the boxes say so and their tooltips
        give the range; a value typed there is every joint's (Edit > Reset tuning brings the
        clip's back)."""
        for box, name, tip in (
            (self.precision, "precision", "Largest error allowed on each joint's shell"),
            (self.shell, "shell_distance", None),
        ):
            own = own_values_text(self.document, name)
            if own:
                box.setToolTip(
                    f"Each joint's own, from the clip: {own}. A value here is every joint's "
                    "(Edit > Reset tuning brings the clip's back)"
                )
            elif tip is not None:
                box.setToolTip(f"{tip}, in clip units")

    def _sync_shell_source(self) -> None:
        clip = self.document.clip
        has_mesh = clip is not None and bool(clip.meshes)
        on = self.document.settings.shell_from_mesh
        self.shell_from_mesh.setChecked(on)
        self.shell_from_mesh.setEnabled(has_mesh)
        if not has_mesh:
            tip = "This clip has no skinned mesh: shells can only come from the number"
        else:
            tip = (
                "Each joint's shell distance: the farthest vertex it moves with weight over "
                "0.1, in its bind space (joints that move none: their children's reach)"
            )
        self.shell_from_mesh.setToolTip(tip)
        from_mesh = on or self.document.settings.skin_strict  # skin-strict takes the mesh's
        self.shell.setToolTip(
            "Shell distance of the joints no vertex hangs on (the others come from the mesh)"
            if from_mesh and has_mesh
            else "Radius of the virtual vertices (skin) each joint must keep in place"
        )

    def _on_result(self) -> None:
        r = self.document.result
        level = r.stats.get("level") if r is not None else None
        self.resolved.setText(
            f"→ {level}" if level and self.document.settings.level == "automatic" else ""
        )
        self.change.setText(change_text(self.document.previous_result, r))
        tried = auto_tried(r.stats) if r is not None else []
        chosen = next((t for t in tried if t[3]), None)
        # one short line (it must not wrap and move the panel); every candidate in the tip
        self.codec_pick.setText(
            f"→ {chosen[0]}, {chosen[1]:,} B of {len(tried)} tried" if chosen else ""
        )
        self.codec_pick.setToolTip(
            f"auto tried, smallest strict first:\n{auto_tried_text(r.stats)}" if tried else ""
        )
        mode = r.stats.get("bind_mode") if r is not None else None
        kept = r is not None and r.stats.get("error_compensation", {}).get("kept")
        self.bind_pick.setText(f"→ {mode}" + (", compensated" if kept else "") if mode else "")

    def _on_status(self) -> None:
        st = self.document.status
        if st.error:
            self.status.setText(f"<span style='color:#c0392b'>{st.error}</span>")
        elif st.running:
            self.status.setText(st.message or "Compressing…")
        else:
            self.status.setText(st.message)

    # --- view -> model ------------------------------------------------------------------
    def _on_codec(self, name: str) -> None:
        if not self.syncing and name and name != self.document.codec:
            self.codec_requested.emit(name)

    def _edit(self, **changes: float | str | bool) -> None:
        if not self.syncing:
            self.settings_edited.emit(changes)

    def _on_slider(self, value: int) -> None:
        self._edit(precision=slider_to_precision(value))

    def _on_precision(self, value: float) -> None:
        if value > self.precision.minimum():  # the minimum reads "per joint"
            self._edit(precision=float(value))

    def _on_shell(self, value: float) -> None:
        if value > self.shell.minimum():
            self._edit(shell_distance=float(value))

    def _on_shell_from_mesh(self, on: bool) -> None:
        self._edit(shell_from_mesh=bool(on))
        with self.syncing:
            self._sync_shell_source()

    def _on_level(self, level: str) -> None:
        if level in LEVELS:
            self._edit(level=level)
