"""The inspector's one model: what is open, how it is compressed, and what is looked at.

Qt-free on purpose: views subscribe to its signals and draw, the controller feeds it codec
results, and tests drive it without a window. Every setter emits only when the value changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from codec.clip import Clip
from codec.overrides import JointOverride, ResolvedJoints, resolve
from codec.result import CompressionResult
from codec.sampling import ROUNDING_MODES, Pose, sample_dense
from codec.settings import LEVELS


class Signal:
    """A minimal synchronous observer list (the model must not depend on Qt signals)."""

    def __init__(self) -> None:
        self._slots: list[Callable[..., Any]] = []

    def connect(self, slot: Callable[..., Any]) -> None:
        if slot not in self._slots:
            self._slots.append(slot)

    def disconnect(self, slot: Callable[..., Any]) -> None:
        if slot in self._slots:
            self._slots.remove(slot)

    def emit(self, *args: Any) -> None:
        for slot in list(self._slots):
            slot(*args)


@dataclass(frozen=True)
class GlobalSettings:
    """The clip-wide knobs of the settings panel (per-joint rules live in `overrides`).

    `shell_from_mesh`: every joint's shell distance measured on the clip's skin
    (codec.mesh_shells), `shell_distance` then being the value of joints no vertex hangs on;
    ignored for a clip without mesh."""

    precision: float = 0.01
    shell_distance: float = 3.0
    level: str = "automatic"
    shell_from_mesh: bool = False

    def __post_init__(self) -> None:
        if not self.precision > 0 or not self.shell_distance > 0:
            raise ValueError("precision and shell distance must be > 0")
        if self.level not in LEVELS:
            raise ValueError(f"unknown level {self.level!r}")


@dataclass(frozen=True)
class DisplayOptions:
    """What the 3D view draws. `shells` is 'selected', 'all' or 'none'."""

    show_raw: bool = True
    show_lossy: bool = True
    shells: str = "selected"
    follow_selected: bool = False
    interpolation: str = "nlerp"
    show_error_between: bool = False
    show_raw_skin: bool = True
    show_lossy_skin: bool = True
    skin_style: str = "translucent"  # translucent, solid or wireframe (app.views.skin_item)


@dataclass(frozen=True)
class Status:
    """Background compression state for the status bar."""

    running: bool = False
    progress: float = 0.0
    message: str = ""
    error: str | None = None


class Document:
    """State of one inspector window. Signals carry no payload except where noted."""

    def __init__(self) -> None:
        self.clip_changed = Signal()
        self.settings_changed = Signal()  # global settings or overrides: recompress
        self.result_changed = Signal()
        self.time_changed = Signal()
        self.rounding_changed = Signal()
        self.selection_changed = Signal()
        self.display_changed = Signal()
        self.status_changed = Signal()

        self.path: Path | None = None
        self.clip: Clip | None = None
        self.settings = GlobalSettings()
        self.overrides: tuple[JointOverride, ...] = ()
        self.result: CompressionResult | None = None
        self.previous_result: CompressionResult | None = None
        self.time = 0.0
        self.rounding = "none"
        self.selection: int | None = None
        self.display = DisplayOptions()
        self.status = Status()
        self._mesh_shells: tuple[tuple[int, float], np.ndarray] | None = None

    # --- what is open -------------------------------------------------------------------
    def set_clip(
        self,
        clip: Clip,
        path: str | Path | None = None,
        overrides: tuple[JointOverride, ...] | list[JointOverride] = (),
        settings: GlobalSettings | None = None,
    ) -> None:
        """Open a clip: resets time, selection and results; keeps display options."""
        self.clip = clip
        self.path = Path(path) if path is not None else None
        self.overrides = tuple(overrides)
        if settings is not None:
            self.settings = settings
        self.result = None
        self.previous_result = None
        self.time = 0.0
        self.selection = None
        self.clip_changed.emit()
        self.time_changed.emit()
        self.selection_changed.emit()
        self.settings_changed.emit()

    @property
    def duration(self) -> float:
        return self.clip.duration if self.clip is not None else 0.0

    # --- compression inputs -------------------------------------------------------------
    def set_settings(self, settings: GlobalSettings) -> None:
        if settings != self.settings:
            self.settings = settings
            self.settings_changed.emit()

    def update_settings(self, **changes: Any) -> None:
        self.set_settings(replace(self.settings, **changes))

    def set_overrides(self, overrides: tuple[JointOverride, ...] | list[JointOverride]) -> None:
        overrides = tuple(overrides)
        if overrides != self.overrides:
            before = self.resolved_joints()
            self.overrides = overrides
            after = self.resolved_joints()
            # a rule that only changes rounding needs no new compression
            if (
                before is None
                or after is None
                or not (
                    np.array_equal(before.precision, after.precision)
                    and np.array_equal(before.shell_distance, after.shell_distance)
                )
            ):
                self.settings_changed.emit()
            self.rounding_changed.emit()

    def resolved_joints(self) -> ResolvedJoints | None:
        """Per-joint precision, shell distance and rounding after global values and rules
        (the global shell distance per joint from the mesh when the settings ask for it)."""
        if self.clip is None:
            return None
        mesh = self.mesh_shells()
        if mesh is None:
            return resolve(
                self.clip.skeleton,
                self.overrides,
                self.settings.precision,
                self.settings.shell_distance,
            )
        skeleton = self.clip.skeleton.with_settings(shell_distance=mesh)
        return resolve(skeleton, self.overrides, self.settings.precision, None)

    def mesh_shells(self) -> np.ndarray | None:
        """(J,) shell distances from the clip's mesh when the settings take them from it
        (None otherwise, and for a clip without mesh); computed once per clip and fallback."""
        clip = self.clip
        if clip is None or not clip.meshes or not self.settings.shell_from_mesh:
            return None
        key = (id(clip), self.settings.shell_distance)
        if self._mesh_shells is None or self._mesh_shells[0] != key:
            from codec.mesh_shells import mesh_shell_distances

            dist, _ = mesh_shell_distances(clip, self.settings.shell_distance)
            self._mesh_shells = (key, dist)
        return self._mesh_shells[1]

    def compression_input(self) -> Clip | None:
        """The clip exactly as the codec should see it (per-joint values resolved)."""
        r = self.resolved_joints()
        if r is None or self.clip is None:
            return None
        return self.clip.with_skeleton_settings(r.precision, r.shell_distance)

    # --- results ------------------------------------------------------------------------
    def set_result(self, result: CompressionResult | None) -> None:
        if self.result is not None:
            self.previous_result = self.result
        self.result = result
        self.result_changed.emit()

    def set_status(self, status: Status) -> None:
        if status != self.status:
            self.status = status
            self.status_changed.emit()

    # --- what is looked at --------------------------------------------------------------
    def set_time(self, t: float) -> None:
        t = float(min(max(t, 0.0), self.duration))
        if t != self.time:
            self.time = t
            self.time_changed.emit()

    def set_rounding(self, mode: str) -> None:
        if mode not in ROUNDING_MODES:
            raise ValueError(f"unknown rounding mode {mode!r}")
        if mode != self.rounding:
            self.rounding = mode
            self.rounding_changed.emit()

    def per_track_rounding(self) -> np.ndarray | None:
        """(J,) base mode of every joint, used when rounding is 'per_track'."""
        r = self.resolved_joints()
        return None if r is None else r.rounding

    def set_selection(self, joint: int | None) -> None:
        if joint is not None and (self.clip is None or not 0 <= joint < self.clip.num_joints):
            raise IndexError(f"no joint {joint}")
        if joint != self.selection:
            self.selection = joint
            self.selection_changed.emit()

    def set_display(self, display: DisplayOptions) -> None:
        if display != self.display:
            self.display = display
            self.display_changed.emit()

    def update_display(self, **changes: Any) -> None:
        self.set_display(replace(self.display, **changes))

    # --- poses under the current rounding ----------------------------------------------
    def raw_pose(self, t: float | None = None) -> Pose | None:
        """Raw pose at `t` (default: now) under the current rounding, like the lossy one."""
        if self.clip is None:
            return None
        c = self.clip
        return sample_dense(
            c.rotations, c.translations, c.scales, c.sample_rate,
            self.time if t is None else t, self.rounding, False,
            self.per_track_rounding(), self.display.interpolation,
        )  # fmt: skip

    def lossy_pose(self, t: float | None = None) -> Pose | None:
        """Lossy pose from the codec's own `sample(t, rounding)`."""
        if self.result is None:
            return None
        return self.result.compressed.sample(
            self.time if t is None else t,
            self.rounding,
            per_track=self.per_track_rounding(),
            interpolation=self.display.interpolation,
        )
