"""Sample-time arithmetic shared by the decoder and the raw clip, so both round alike.

The raw clip between its samples: blended as the codec does (nlerp, lerp) where it is sampled
data, and by the file's own curves where a reader kept them (codec.model.authored_curves):
`clip_between` (batched, for measuring) and `clip_pose` (one time, for the window).

With `k = floor(t * rate)` and `alpha = t * rate - k`, the pose at `t` blends samples `k` and
`k + 1` (clamped to the last sample, or wrapped to 0 for a wrapping clip). Rounding snaps
alpha: none keeps it, floor -> 0, ceil -> ceil(alpha), nearest -> floor(alpha + 0.5).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from codec.model import quat

if TYPE_CHECKING:
    from codec.model.clip import Clip

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
    return _blend_keys(rotations, translations, scales, keys, interpolation)


def _blend_keys(
    rotations: Array, translations: Array, scales: Array, keys: SampleKeys, interpolation: str
) -> Pose:
    """The pose blending dense arrays (S, J, 4|3) at `keys`' two samples by its alpha."""
    a = Pose(rotations[keys.first], translations[keys.first], scales[keys.first])
    b = Pose(rotations[keys.second], translations[keys.second], scales[keys.second])
    return blend(a, b, keys.alpha, interpolation)


def blend_samples(clip: Clip, ks: Array, alphas: Array) -> tuple[Array, Array, Array]:
    """The clip's samples ks and ks + 1 (N,) blended by alphas (N,) as ACL does, local poses
    (N, J, 4|3): component lerp on the shorter arc, normalised (alpha 0 is sample ks exactly);
    translations and scales lerp. The file's own curves play no part (see `clip_between`).
    Compiled (codec.model.pose_blend, numpy's quat.nlerp to the bit), imported here so that
    reading a clip never loads the compiler."""
    from codec.model.pose_blend import blend_rows

    ks = np.asarray(ks, dtype=np.int64)
    nxt = np.minimum(ks + 1, clip.num_samples - 1)
    rows = (clip.rotations, clip.translations, clip.scales)
    return blend_rows(rows, ks, nxt, np.asarray(alphas, np.float64), exact_at_zero=True)


def clip_between(clip: Clip, ks: Array, alphas: Array) -> tuple[Array, Array, Array]:
    """The raw clip's local poses (N, J, 4|3) at times (ks + alphas) / rate, ks (N,) samples
    and alphas (N,) in [0, 1): sample ks exactly where alpha is 0; between samples the
    file's own curve where the clip has one, else samples ks and ks + 1 blended as ACL
    does (component lerp on the shorter arc, normalised; translations and scales lerp)."""
    ks = np.asarray(ks, dtype=np.int64)
    alphas = np.asarray(alphas, dtype=np.float64)
    rot, tr, sc = blend_samples(clip, ks, alphas)
    between = np.flatnonzero(alphas != 0.0)
    if clip.additive is not None and between.size:
        nxt = np.minimum(ks[between] + 1, clip.num_samples - 1)
        al = alphas[between][:, None]
        rot[between], tr[between], sc[between] = additive_between(clip, ks[between], nxt, al)
    if clip.curves is not None and between.size:
        times = (ks[between] + alphas[between]) / clip.sample_rate
        rot[between], tr[between], sc[between] = clip.curves.evaluate(
            times, rot[between], tr[between], sc[between]
        )
    return rot, tr, sc


def additive_between(
    clip: Clip, first: Array, second: Array, alpha: Array, interpolation: str = "nlerp"
) -> tuple[Array, Array, Array]:
    """An additive clip's poses (N, J, 4|3) between samples first and second (N,) at alpha
    (N, J) or (N, 1), as a game plays it: the additive blended, applied to the base blended
    between the same two samples (codec.model.additive; the decoder does the same)."""
    from codec.model import additive

    base = clip.additive
    assert base is not None
    fmt, rate, dur = base.format, clip.sample_rate, clip.duration
    b0, b1 = base.at_times(first / rate, dur), base.at_times(second / rate, dur)
    a0 = additive.extract(fmt, b0, (clip.rotations[first], clip.translations[first],
                                    clip.scales[first]))  # fmt: skip
    a1 = additive.extract(fmt, b1, (clip.rotations[second], clip.translations[second],
                                    clip.scales[second]))  # fmt: skip
    add = blend(Pose(*a0), Pose(*a1), alpha, interpolation)
    on = blend(Pose(*b0), Pose(*b1), alpha, interpolation)
    return additive.apply(fmt, tuple(on), tuple(add))


def clip_pose(
    clip: Clip,
    t: float,
    rounding: str = "none",
    wrap: bool = False,
    per_track: Array | list[str] | None = None,
    interpolation: str = "nlerp",
) -> Pose:
    """The raw clip's pose at `t` as the window shows it: `sample_dense` of its samples, and
    where the clip has authored curves, every joint whose rounded alpha lies between two
    samples (rounding none) takes the file's curve at `t` (`interpolation` then only
    blends tracks without a curve)."""
    keys = sample_keys(t, clip.sample_rate, clip.num_samples, rounding, wrap, per_track)
    pose = _blend_keys(clip.rotations, clip.translations, clip.scales, keys, interpolation)
    if clip.additive is not None and keys.second != keys.first:
        alpha = np.broadcast_to(keys.alpha, (clip.num_joints,))[None, :]
        pair = (np.array([keys.first]), np.array([keys.second]))
        return Pose(*(a[0] for a in additive_between(clip, *pair, alpha, interpolation)))
    if clip.curves is None or keys.second != keys.first + 1:
        return pose
    alpha = np.broadcast_to(keys.alpha, (clip.num_joints,))
    live = (alpha > 0.0) & (alpha < 1.0)
    if not np.any(live):
        return pose
    time = np.array([(keys.first + keys.raw_alpha) / clip.sample_rate])
    rot, tr, sc = clip.curves.evaluate(
        time, pose.rotations[None], pose.translations[None], pose.scales[None]
    )
    m = live[:, None]
    return Pose(
        np.where(m, rot[0], pose.rotations),
        np.where(m, tr[0], pose.translations),
        np.where(m, sc[0], pose.scales),
    )
