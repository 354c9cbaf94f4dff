"""Compression settings and ACL's rule for resolving the `automatic` level."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codec.errors import SettingsError
from codec.model.clip import Clip
from codec.model.limits import MAX_VALUE

LEVELS = ("lowest", "low", "medium", "high", "highest", "automatic")
# codec.codecs.acl_style.bind_modes
BIND_MODES = ("auto", "best", "strip", "none", "additive")


@dataclass(frozen=True)
class CompressionSettings:
    """What the user tunes. Per-joint precision and shell distance live on the skeleton;
    `precision` / `shell_distance`, when given, replace them for every joint.

    `supersample` is how many error evaluations per sample interval measure the error
    between samples (0 turns that measure off). `skin_error` measures the true error of the
    clip's skinned meshes after compressing (codec.measure.vertex_error; nothing without meshes):
    an analysis, left out of `compression_time`, that benchmarks against ACL turn off.
    `codec` names the codec (codec.codecs.registry; `python -m codec codecs` lists them).

    Keyframe stripping (acl-style's, ACL 2.1's): `strip_trivial` removes the
    keyframes interpolation rebuilds within every joint's precision (lossless under the
    error measure, on by default); `strip_proportion` (0..1, share of the keyframes) and
    `strip_threshold` (clip units) strip beyond the precision: destructive, off by default.

    `skin_strict`: the promise is the skin, not the shells: every vertex of the clip's skinned
    meshes within the precision of its strongest joint at every sample, measured as the true
    error is (codec.compression runs the rounds, codec.measure.skin_budget supplies them). It
    needs a skinned mesh and cannot go with destructive stripping.

    `bind` (acl-style): what default sub-tracks stand for, BIND_MODES: `best` tries each of
    strip, none and additive and keeps the smallest strict one; `auto` (default) the same at
    strip's cost, trying the others only where they may win big; `compensate` tries in-place
    error compensation on the chosen mode and keeps it where it is smaller and strict
    (codec.codecs.acl_style.bind_modes). `clean_defaults` (clip units, 0 off): DESTRUCTIVE,
    sub-tracks within that of their bind value are snapped to it before any codec runs, and
    the raw clip measured is the cleaned one (codec.default_cleaning says what changed).
    """

    level: str = "automatic"
    precision: float | None = None
    shell_distance: float | None = None
    loop_optimization: bool = True
    include_metadata: bool = True
    supersample: int = 4
    skin_error: bool = True
    codec: str = "acl-style"
    strip_trivial: bool = True
    strip_proportion: float = 0.0
    strip_threshold: float = 0.0
    skin_strict: bool = False
    bind: str = "auto"
    compensate: bool = False
    clean_defaults: float = 0.0

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise SettingsError(
                f"unknown compression level {self.level!r}; expected one of {LEVELS}"
            )
        for name in ("precision", "shell_distance"):
            v = getattr(self, name)
            if v is not None and not (np.isfinite(v) and 0 < v <= MAX_VALUE):
                raise SettingsError(
                    f"{name.replace('_', ' ')} must be > 0 and at most {MAX_VALUE:.3g}, got {v}"
                )
        if not self.codec or not isinstance(self.codec, str):
            raise SettingsError(f"codec must be a codec's name, got {self.codec!r}")
        if self.bind not in BIND_MODES:
            raise SettingsError(f"unknown bind mode {self.bind!r}; expected one of {BIND_MODES}")
        if not (np.isfinite(self.clean_defaults) and 0.0 <= self.clean_defaults <= MAX_VALUE):
            raise SettingsError(
                f"clean defaults must be >= 0 and at most {MAX_VALUE:.3g}, "
                f"got {self.clean_defaults}"
            )
        if self.supersample < 0:
            raise SettingsError(f"supersample must be >= 0, got {self.supersample}")
        if not (np.isfinite(self.strip_proportion) and 0.0 <= self.strip_proportion <= 1.0):
            raise SettingsError(
                f"strip proportion must be between 0 and 1, got {self.strip_proportion}"
            )
        if not (np.isfinite(self.strip_threshold) and 0.0 <= self.strip_threshold <= MAX_VALUE):
            raise SettingsError(
                f"strip threshold must be >= 0 and at most {MAX_VALUE:.3g}, "
                f"got {self.strip_threshold}"
            )
        if self.skin_strict and self.destructive_stripping:
            raise SettingsError(
                "skin-strict keeps every vertex within its precision; destructive keyframe "
                "stripping (strip proportion or threshold) goes past it: choose one"
            )

    @property
    def destructive_stripping(self) -> bool:
        """Whether keyframes may be stripped beyond the precision (proportion or threshold)."""
        return self.strip_proportion > 0 or self.strip_threshold > 0

    def skeleton_values(self) -> CompressionSettings:
        """These settings without a global precision or shell distance, so the skeleton's
        own values (after `apply`) hold. Not validated again: turning those two to None
        cannot make valid settings invalid (every encode asks, and validation costs more
        than a one-sample clip's optimisation)."""
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        object.__setattr__(out, "precision", None)
        object.__setattr__(out, "shell_distance", None)
        return out

    def apply(self, clip: Clip) -> Clip:
        """The clip with the global precision / shell distance written into its skeleton."""
        sk = clip.skeleton
        same_precision = self.precision is None or _all_equal(sk.precision, self.precision)
        same_shell = self.shell_distance is None or _all_equal(
            sk.shell_distance, self.shell_distance
        )
        if same_precision and same_shell:
            return clip
        return clip.with_skeleton_settings(self.precision, self.shell_distance)


def _all_equal(values: np.ndarray, value: float) -> bool:
    """Whether every one of `values` (J,) equals `value`: np.all(values == value), without
    numpy's reduction machinery (the first step of every encode, where it cost 20 us)."""
    return set(values.tolist()) <= {value}


def resolve_level(level: str, clip: Clip) -> str:
    """ACL 2.1: automatic -> medium above 500 samples, else by longest chain (<18 highest,
    <25 high, else medium); lowest and low behave like medium."""
    if level == "automatic":
        if clip.num_samples > 500:
            return "medium"
        chain = clip.skeleton.longest_chain()
        if chain < 18:
            return "highest"
        if chain < 25:
            return "high"
        return "medium"
    if level in ("lowest", "low"):
        return "medium"
    return level
