"""The inspector's one model: what is open, how it is compressed, and what is looked at.

Qt-free on purpose: views subscribe to its signals and draw, the controller feeds it codec
results and the user's tuning edits, and tests drive it without a window. Every setter emits
only when the value changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from app.model.comparison import Comparison, Pinned, check_codec, pose_of
from codec.measure.pose_error import pose_error
from codec.model.clip import Clip
from codec.model.sampling import ROUNDING_MODES, Pose, SampleKeys, clip_pose, sample_keys
from codec.result import Result
from codec.run_settings import RunSettings
from codec.tuning import GlobalSettings, JointOverride, ResolvedJoints


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
class DisplayOptions:
    """What the 3D view draws and how its camera behaves.

    shells: 'selected', 'all' or 'none'. camera: 'follow' (the root), 'clip' (the whole
    motion), 'selection' or 'free'. up_axis: 'auto' (declared or detected), 'X', 'Y' or 'Z'.
    magnify: the lossy pose is drawn as raw + magnify * (lossy - raw), 1 to 1000.
    """

    show_raw: bool = True
    show_lossy: bool = True
    shells: str = "selected"
    camera: str = "follow"
    up_axis: str = "auto"
    magnify: float = 1.0
    interpolation: str = "nlerp"
    show_error_between: bool = False
    show_raw_skin: bool = True
    show_lossy_skin: bool = True
    skin_style: str = "translucent"  # translucent, solid or wireframe (app.scene.skin_item)

    def __post_init__(self) -> None:
        if self.shells not in ("selected", "all", "none"):
            raise ValueError(f"unknown shells mode {self.shells!r}")
        if self.camera not in ("follow", "clip", "selection", "free"):
            raise ValueError(f"unknown camera mode {self.camera!r}")
        if self.up_axis not in ("auto", "X", "Y", "Z"):
            raise ValueError(f"unknown up axis {self.up_axis!r}")
        if self.skin_style not in ("translucent", "solid", "wireframe"):
            raise ValueError(f"unknown skin style {self.skin_style!r}")
        if not 1.0 <= self.magnify <= 1000.0:
            raise ValueError(f"magnify {self.magnify} is outside 1..1000")


@dataclass(frozen=True)
class Status:
    """Background compression state for the status bar."""

    running: bool = False
    progress: float = 0.0
    message: str = ""
    error: str | None = None


@dataclass(frozen=True, eq=False)
class ShownPose:
    """What is on screen at `time` under `rounding`: object-space matrices raw (J, 3, 4) and
    lossy (J, 3, 4) in the clip's own axes, the error (J,) between them on every joint's shell,
    that error as a fraction (J,) of the joint's precision, and the blended sample keys.

    lossy, error, fraction and precision are None until a result for this clip exists.
    """

    time: float
    rounding: str
    keys: SampleKeys
    raw: np.ndarray
    lossy: np.ndarray | None
    error: np.ndarray | None
    fraction: np.ndarray | None
    precision: np.ndarray | None


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
        self.comparison_changed = Signal()  # A pinned, swapped, cleared, or what is drawn

        self.path: Path | None = None
        self.clip: Clip | None = None
        self.settings = GlobalSettings()
        self.overrides: tuple[JointOverride, ...] = ()
        # how the clip was read and written (animation, units, sample rate, .ssc options):
        # with `settings` and `overrides`, the run's complete settings (run_settings())
        self.run_base = RunSettings()
        self.result: Result | None = None
        self.result_run: RunSettings | None = None  # what made `result`
        self.previous_result: Result | None = None
        self.time = 0.0
        self.rounding = "none"
        self.selection: int | None = None
        # the other joints selected with it (Ctrl/Shift-click in Joints): Curves draws them
        self.also_selected: tuple[int, ...] = ()
        self.display = DisplayOptions()
        self.status = Status()
        self.acl_output: str | None = None  # ACL's output file measured as acl-2.1, if any
        self.comparison = Comparison()
        self._shown: tuple[tuple[Any, ...], ShownPose] | None = None
        self._shown_a: tuple[tuple[Any, ...], tuple[np.ndarray, np.ndarray]] | None = None
        self._levels: tuple[Clip, list[np.ndarray]] | None = None
        self._mesh_shells: tuple[tuple[int, float], np.ndarray] | None = None

    # --- what is open -------------------------------------------------------------------
    def set_clip(
        self,
        clip: Clip,
        path: str | Path | None = None,
        overrides: tuple[JointOverride, ...] | list[JointOverride] = (),
        settings: GlobalSettings | None = None,
        run: RunSettings | None = None,
    ) -> None:
        """Open a clip: resets time, selection and results; keeps display options. `run`:
        the clip's complete settings as codec.run_settings resolved them (its tuning then
        replaces `settings` and `overrides`); without it the clip starts from `settings`
        (default: the clip's own values) and `overrides`.

        All or nothing: when a listener (a view) raises on the new clip, everything opening
        changed comes back (clip, path, tuning, results, time, selection), the listeners are
        told again, and the exception goes to the caller. A broken clip never replaces the
        open one.
        """
        before = self._opened()
        self.clip = clip
        self.path = Path(path) if path is not None else None
        if run is None:
            run = RunSettings(settings or GlobalSettings(), tuple(overrides))
        self.run_base = run
        self.settings, self.overrides = run.tuning, tuple(run.rules)
        self.result = None
        self.result_run = None
        self.previous_result = None
        self.comparison = Comparison()  # A belongs to the clip it was pinned on
        self.time = 0.0
        self.selection = None
        self.also_selected = ()
        try:
            self._announce_open()
        except BaseException:
            self._reopen(before)
            raise

    _OPENED = (
        "clip",
        "path",
        "overrides",
        "settings",
        "run_base",
        "result",
        "result_run",
        "previous_result",
        "comparison",
        "time",
        "selection",
        "also_selected",
    )

    def _opened(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._OPENED}

    def _announce_open(self) -> None:
        self.comparison_changed.emit()
        self.clip_changed.emit()
        self.time_changed.emit()
        self.selection_changed.emit()
        self.settings_changed.emit()

    def _reopen(self, state: dict[str, Any]) -> None:
        """Put back what `set_clip` replaced and tell the listeners (their own failure on
        the old clip, which they showed before, does not hide the first error)."""
        for name, value in state.items():
            setattr(self, name, value)
        for signal in (
            self.clip_changed,
            self.time_changed,
            self.selection_changed,
            self.settings_changed,
            self.result_changed,
            self.comparison_changed,
        ):
            try:
                signal.emit()
            except Exception:  # the caller raises the first error
                continue

    @property
    def duration(self) -> float:
        return self.clip.duration if self.clip is not None else 0.0

    def stored_keyframes(self) -> np.ndarray:
        """(S,) bool over the clip's samples: which keyframes the compressed file stores
        (all without a result; the others are rebuilt from their neighbours)."""
        n = self.clip.num_samples if self.clip is not None else 0
        out = np.ones(n, dtype=bool)
        costs = self.result.costs if self.result is not None else None
        kept = costs.retained if costs is not None else None
        if kept is not None and len(kept) <= n:
            out[: len(kept)] = kept
        return out

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

    def set_tuning(
        self,
        settings: GlobalSettings,
        overrides: tuple[JointOverride, ...] | list[JointOverride],
    ) -> None:
        """Global settings and rules at once (an undo step may change both): one
        `settings_changed` when anything the codec sees changed, `rounding_changed` when the
        rules did."""
        overrides = tuple(overrides)
        new_settings, new_rules = settings != self.settings, overrides != self.overrides
        if not (new_settings or new_rules):
            return
        before = self.resolved_joints()
        self.settings, self.overrides = settings, overrides
        after = self.resolved_joints()
        if (
            new_settings
            or before is None
            or after is None
            or not (
                np.array_equal(before.precision, after.precision)
                and np.array_equal(before.shell_distance, after.shell_distance)
            )
        ):
            self.settings_changed.emit()
        if new_rules:
            self.rounding_changed.emit()

    @property
    def codec(self) -> str:
        """The codec B (the current result) is compressed with: part of the tuning."""
        return self.settings.codec

    @codec.setter
    def codec(self, name: str) -> None:  # a tuning put in place, not an edit: no signal
        self.settings = replace(self.settings, codec=check_codec(name))

    def run_settings(self) -> RunSettings:
        """The complete settings the current tuning compresses with (codec.run_settings):
        what the window's runs, its exports and its .ssc say and use."""
        return replace(self.run_base, tuning=self.settings, rules=self.overrides)

    def global_precision(self) -> float | None:
        """The clip-wide precision: the settings', else the clip's own when every joint has
        the same; None while the clip's own per-joint values stand and differ (ACL SJSON)."""
        return self._clip_wide(self.settings.precision, "precision", 0.01)

    def global_shell_distance(self) -> float | None:
        """The clip-wide shell distance, as `global_precision`."""
        return self._clip_wide(self.settings.shell_distance, "shell_distance", 3.0)

    def _clip_wide(self, setting: float | None, name: str, default: float) -> float | None:
        if setting is not None:
            return setting
        if self.clip is None:
            return default
        own = np.asarray(getattr(self.clip.skeleton, name))
        return float(own[0]) if own.size and np.all(own == own[0]) else None

    def resolved_joints(self) -> ResolvedJoints | None:
        """Per-joint precision, shell distance and rounding after global values and rules
        (the global shell distance per joint from the mesh when the settings ask for it)."""
        if self.clip is None:
            return None
        return self.run_settings().joints(self.clip, self.mesh_shells())

    def mesh_shells(self) -> np.ndarray | None:
        """(J,) shell distances from the clip's mesh when the settings take them from it
        (None otherwise, and for a clip without mesh); computed once per clip and fallback."""
        clip = self.clip
        if clip is None or not clip.meshes or not self.settings.shell_from_mesh:
            return None
        key = (id(clip), self.settings.shell_distance)
        if self._mesh_shells is None or self._mesh_shells[0] != key:
            self._mesh_shells = (key, self.run_settings().mesh_shells(clip))
        return self._mesh_shells[1]

    def compression_input(self) -> Clip | None:
        """The clip exactly as the codec should see it (per-joint values resolved)."""
        r = self.resolved_joints()
        if r is None or self.clip is None:
            return None
        return self.clip.with_skeleton_settings(r.precision, r.shell_distance)

    # --- results ------------------------------------------------------------------------
    def set_result(self, result: Result | None, run: RunSettings | None = None) -> None:
        """The newest result, and the settings that made it (`run`; default: the current
        tuning's)."""
        if self.result is not None:
            self.previous_result = self.result
        self.result = result
        self.result_run = run if run is not None or result is None else self.run_settings()
        self.result_changed.emit()

    def set_codec(self, name: str) -> None:
        """Compress with the registered codec `name` from now on (ValueError if unknown)."""
        if check_codec(name) != self.codec:
            self.set_settings(replace(self.settings, codec=name))

    # --- A/B comparison ---------------------------------------------------------------
    def pin_a(self) -> None:
        """Compare: the result on screen becomes A (kept through every later edit); the next
        results are B. ValueError while there is no result of this clip."""
        if not self.has_lossy():
            raise ValueError("nothing to compare yet: wait for the first compression")
        assert self.result is not None
        a = Pinned(self.result, self.settings, self.overrides, self.codec)
        self.comparison = replace(self.comparison, a=a)
        self.comparison_changed.emit()

    def swap_comparison(self) -> None:
        """A becomes the current result (with its tuning, which the editors then show) and
        the current result becomes A. The result on screen already matches the tuning: the
        controller swaps without recompressing. A side's own rounding goes with it."""
        a = self.comparison.a
        if a is None or self.result is None:
            return
        own = self.rounding if a.rounding is not None else None
        new_a = Pinned(self.result, self.settings, self.overrides, self.codec, own)
        self.settings, self.overrides = replace(a.settings, codec=a.codec), a.overrides
        self.comparison = replace(self.comparison, a=new_a)
        self.previous_result = self.result
        self.result = a.result
        self.result_run = self.run_settings()
        if a.rounding is not None:
            self.rounding = a.rounding
        self.settings_changed.emit()
        self.rounding_changed.emit()
        self.result_changed.emit()
        self.comparison_changed.emit()

    def clear_comparison(self) -> None:
        """Drop A: back to one result."""
        if self.comparison.a is not None:
            self.comparison = Comparison()
            self.comparison_changed.emit()

    def set_comparison_view(self, **changes: Any) -> None:
        """show_a, show_b, panel_source (what is drawn, not what is compressed)."""
        if any(getattr(self.comparison, k) != v for k, v in changes.items()):
            self.comparison = self.comparison.with_view(**changes)
            self.comparison_changed.emit()

    def set_a_rounding(self, mode: str | None) -> None:
        """A's own sample-time rounding (None: follow the window's, as B does)."""
        a = self.comparison.a
        if mode is not None and mode not in ROUNDING_MODES:
            raise ValueError(f"unknown rounding mode {mode!r}")
        if a is not None and a.rounding != mode:
            self.comparison = replace(self.comparison, a=replace(a, rounding=mode))
            self.comparison_changed.emit()

    def side_result(self, side: str) -> Result | None:
        """A's result ('A') or B's ('B': the current one, when it belongs to this clip)."""
        if side == "A":
            return self.comparison.a.result if self.comparison.a is not None else None
        return self.result if self.has_lossy() else None

    def side_rounding(self, side: str) -> str:
        """The rounding a side is sampled with: its own when the comparison sets one."""
        c = self.comparison
        own = c.a.rounding if side == "A" and c.a is not None else None
        return own or self.rounding

    def side_pose(self, side: str) -> Pose | None:
        """A's or B's lossy pose now, under that side's rounding, as the 3D view draws it."""
        r = self.side_result(side)
        if r is None:
            return None
        if r.decoder is None:  # a result without its decoder: the decoded clip
            return self._sample_clip(r.lossy, None)
        return pose_of(
            r,
            self.time,
            self.side_rounding(side),
            per_track=self.per_track_rounding(),
            interpolation=self.display.interpolation,
        )

    def side_shown(self, side: str) -> tuple[np.ndarray, np.ndarray] | None:
        """A's or B's object-space matrices (J, 3, 4) now, in the clip's axes, and their
        error (J,) against the raw pose under the same rounding; None without that side.
        B is exactly `shown_pose()`; A is cached until time, rounding or A change."""
        if side == "B":
            shown = self.shown_pose()
            if shown is None or shown.lossy is None or shown.error is None:
                return None
            return shown.lossy, shown.error
        r = self.side_result("A")
        clip = self.clip
        if r is None or clip is None or r.clip.num_joints != clip.num_joints:
            return None
        rounding = self.side_rounding("A")
        key = (self.time, rounding, r, self.overrides, self.display.interpolation)
        cached = self._shown_a
        if cached is not None and all(
            a is b or a == b for a, b in zip(cached[0], key, strict=True)
        ):
            return cached[1]
        if self._levels is None or self._levels[0] is not clip:
            self._levels = (clip, clip.skeleton.depth_levels())
        raw = clip_pose(
            clip,
            self.time,
            rounding,
            False,
            self.per_track_rounding(),
            self.display.interpolation,
        )
        lossy = self.side_pose("A")
        sk = r.clip.skeleton
        pe = pose_error(raw, lossy, sk.parents, sk.shell_distance, self._levels[1])
        assert pe.lossy is not None and pe.error is not None
        self._shown_a = (key, (pe.lossy, pe.error))
        return self._shown_a[1]

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

    def set_selection(self, joint: int | None, also: tuple[int, ...] = ()) -> None:
        """Select `joint` (the one every view follows) and `also` the other joints of a
        multi-selection (without `joint`, in order); selecting one joint drops the others,
        as a click does in any DCC."""
        count = self.clip.num_joints if self.clip is not None else 0
        for j in (joint, *also):
            if j is not None and not 0 <= j < count:
                raise IndexError(f"no joint {j}")
        also = () if joint is None else tuple(dict.fromkeys(j for j in also if j != joint))
        if joint != self.selection or also != self.also_selected:
            self.selection, self.also_selected = joint, also
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
        return self._sample_clip(self.clip, t)

    def _sample_clip(self, c: Clip, t: float | None) -> Pose:
        """A dense clip at `t` (default: now) under the current rounding and interpolation;
        between samples the file's own curves where the clip has them (a raw clip read from
        glTF or USD), so scrubbing shows the curve the file holds."""
        return clip_pose(
            c,
            self.time if t is None else t,
            self.rounding,
            False,
            self.per_track_rounding(),
            self.display.interpolation,
        )

    def lossy_pose(self, t: float | None = None) -> Pose | None:
        """Lossy pose from the codec's own `sample(t, rounding)`."""
        if self.result is None:
            return None
        if self.result.decoder is None:  # a result without its decoder: the decoded clip
            return self._sample_clip(self.result.lossy, t)
        return self.result.decoder.sample(
            self.time if t is None else t,
            self.rounding,
            per_track=self.per_track_rounding(),
            interpolation=self.display.interpolation,
        )

    def has_lossy(self) -> bool:
        """A result exists and belongs to the clip on screen."""
        r, c = self.result, self.clip
        return r is not None and c is not None and r.clip.num_joints == c.num_joints

    def shown_pose(self) -> ShownPose | None:
        """Raw and lossy pose now, and the error between them: the one number every readout
        quotes (the 3D view, its toolbar, the error panel). Cached until the time, rounding,
        result, interpolation or (under per-track rounding, whose modes they set) rules change:
        a tuning edit alone samples nothing again, its result does."""
        clip = self.clip
        if clip is None:
            return None
        result = self.result if self.has_lossy() else None
        rules = self.overrides if self.rounding == "per_track" else None
        key = (self.time, self.rounding, clip, result, rules, self.display.interpolation)
        if self._shown is not None and all(
            a is b or a == b for a, b in zip(self._shown[0], key, strict=True)
        ):
            return self._shown[1]
        if self._levels is None or self._levels[0] is not clip:
            self._levels = (clip, clip.skeleton.depth_levels())
        raw = self.raw_pose()
        assert raw is not None
        lossy = self.lossy_pose() if result is not None else None
        sk = result.clip.skeleton if result is not None else clip.skeleton
        pe = pose_error(raw, lossy, sk.parents, sk.shell_distance, self._levels[1])
        modes = self.per_track_rounding() if self.rounding == "per_track" else None
        keys = sample_keys(
            self.time, clip.sample_rate, clip.num_samples, self.rounding, per_track=modes
        )
        fraction = precision = None
        if pe.error is not None and result is not None:
            precision = np.asarray(result.clip.skeleton.precision)
            fraction = pe.error / precision
        shown = ShownPose(
            self.time, self.rounding, keys, pe.raw, pe.lossy, pe.error, fraction, precision
        )
        self._shown = (key, shown)
        return shown
