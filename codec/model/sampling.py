"""Sample-time arithmetic shared by the decoder and the raw clip, so both round alike.

With `k = floor(t * rate)` and `alpha = t * rate - k`, the pose at `t` blends samples `k` and
`k + 1` (clamped to the last sample, or wrapped to 0 for a wrapping clip). Rounding snaps
alpha: none keeps it, floor -> 0, ceil -> ceil(alpha), nearest -> floor(alpha + 0.5).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from codec.model import quat

Array = np.ndarray

BASE_ROUNDING = ("none", "floor", "ceil", "nearest")
ROUNDING_MODES = (*BASE_ROUNDING, "per_track")
INTERPOLATIONS = ("nlerp", "slerp")


class Pose(NamedTuple):
    """One pose of every joint: rotations (J, 4), translations (J, 3), scales (J, 3)."""

    rotations: Array
    translations: Array
    scales: Array


@dataclass(frozen=True)
class SampleKeys:
    """The two samples to blend and the rounded alpha of every joint, alpha (J,) or ()."""

    first: int
    second: int
    alpha: Array
    raw_alpha: float


def round_alpha(alpha: Array | float, mode: str) -> Array:
    """Snap interpolation alphas under one rounding mode (vectorised)."""
    a = np.asarray(alpha, dtype=np.float64)
    if mode == "none":
        return a
    if mode == "floor":
        return np.zeros_like(a)
    if mode == "ceil":
        return np.ceil(a)
    if mode == "nearest":
        return np.floor(a + 0.5)
    raise ValueError(f"unknown rounding mode {mode!r}; expected one of {BASE_ROUNDING}")


def duration_of(num_samples: int, sample_rate: float, wrap: bool) -> float:
    """A wrapping clip's last stored sample blends back into the first one."""
    return (num_samples if wrap and num_samples > 1 else num_samples - 1) / sample_rate


def sample_keys(
    t: float,
    sample_rate: float,
    num_samples: int,
    rounding: str = "none",
    wrap: bool = False,
    per_track: Array | list[str] | None = None,
    duration: float | None = None,
) -> SampleKeys:
    """Keys and alpha for time `t` (clamped to the clip's duration).

    `per_track` (J,) names one base mode per joint and is used when `rounding == "per_track"`.
    """
    if rounding not in ROUNDING_MODES:
        raise ValueError(f"unknown rounding mode {rounding!r}; expected one of {ROUNDING_MODES}")
    if duration is None:
        duration = duration_of(num_samples, sample_rate, wrap)
    t = min(max(float(t), 0.0), duration)
    pos = t * sample_rate
    k = int(np.floor(pos))
    raw_alpha = pos - k
    if wrap and num_samples > 1:
        first, second = k % num_samples, (k + 1) % num_samples
    else:
        first, second = min(k, num_samples - 1), min(k + 1, num_samples - 1)
    if rounding == "per_track":
        if per_track is None:
            raise ValueError("rounding 'per_track' needs a mode per joint")
        modes = np.asarray(per_track)
        alpha = np.full(modes.shape, raw_alpha)
        for mode in BASE_ROUNDING:
            sel = modes == mode
            alpha[sel] = round_alpha(raw_alpha, mode)
        unknown = ~np.isin(modes, BASE_ROUNDING)
        if np.any(unknown):
            raise ValueError(f"unknown per-track rounding mode {modes[unknown][0]!r}")
    else:
        alpha = round_alpha(raw_alpha, rounding)
    return SampleKeys(first, second, alpha, raw_alpha)


def sample_keys_batch(
    times: Array,
    sample_rate: float,
    num_samples: int,
    rounding: str = "none",
    wrap: bool = False,
    duration: float | None = None,
) -> tuple[Array, Array, Array]:
    """`sample_keys` of many times (N,) under one base rounding mode: first and second
    sample (N,) int64 and the rounded alpha (N,)."""
    if rounding not in BASE_ROUNDING:
        raise ValueError(f"unknown rounding mode {rounding!r}; expected one of {BASE_ROUNDING}")
    if duration is None:
        duration = duration_of(num_samples, sample_rate, wrap)
    pos = np.clip(np.asarray(times, dtype=np.float64), 0.0, duration) * sample_rate
    k = np.floor(pos).astype(np.int64)
    alpha = round_alpha(pos - k, rounding)
    if wrap and num_samples > 1:
        return k % num_samples, (k + 1) % num_samples, alpha
    return np.minimum(k, num_samples - 1), np.minimum(k + 1, num_samples - 1), alpha


def blend(a: Pose, b: Pose, alpha: Array | float, interpolation: str = "nlerp") -> Pose:
    """Blend two poses with alpha () or (J,): rotations by nlerp (ACL) or slerp."""
    alpha = np.asarray(alpha, dtype=np.float64)
    al = alpha[..., None] if alpha.ndim else alpha
    if interpolation == "nlerp":
        rot = quat.nlerp(a.rotations, b.rotations, al)
    elif interpolation == "slerp":
        rot = quat.slerp(a.rotations, b.rotations, al)
    else:
        raise ValueError(
            f"unknown interpolation {interpolation!r}; expected one of {INTERPOLATIONS}"
        )
    tr = a.translations + (b.translations - a.translations) * al
    sc = a.scales + (b.scales - a.scales) * al
    return Pose(rot, tr, sc)


def sample_dense(
    rotations: Array,
    translations: Array,
    scales: Array,
    sample_rate: float,
    t: float,
    rounding: str = "none",
    wrap: bool = False,
    per_track: Array | list[str] | None = None,
    interpolation: str = "nlerp",
) -> Pose:
    """Pose at `t` from dense arrays (S, J, 4|3): how the raw clip is played back."""
    keys = sample_keys(t, sample_rate, rotations.shape[0], rounding, wrap, per_track)
    a = Pose(rotations[keys.first], translations[keys.first], scales[keys.first])
    b = Pose(rotations[keys.second], translations[keys.second], scales[keys.second])
    return blend(a, b, keys.alpha, interpolation)
