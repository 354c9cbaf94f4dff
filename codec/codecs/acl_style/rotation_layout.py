"""Which component each rotation leaves out, so that no rotation loses precision.

ACL keeps x, y, z and rebuilds w = sqrt(1 - x^2 - y^2 - z^2). Where |w| is small (rotations
near 180 degrees) that root amplifies every error in x, y, z by about 1/|w|: float32 values
cannot pin w down and even raw floats miss a tight budget. Here each rotation sub-track
drops a component that stays large, so the rebuilt root is well conditioned:

- for the whole clip, when one component stays at or above MIN_DROPPED in every sample
  (w when it can, which is every rotation of an ordinary clip); the clip range then has
  three components, as in ACL;
- else per segment, the component whose smallest magnitude over the segment is largest
  (w again when it stays above MIN_DROPPED there); the clip range covers all four
  components and each segment's rate byte names the one it drops.

Each sample is negated where needed so the dropped component is >= 0 (q and -q are the same
rotation), which is what makes the rebuilt root positive. Decoding costs one square root
and one normalisation, as drop-w does; no trigonometry.
"""

from __future__ import annotations

import numpy as np

Array = np.ndarray

W = 3
MIN_DROPPED = 0.5  # |component| kept this large bounds the error amplification to 2
PER_SEGMENT = 4  # clip layout code: the dropped component varies by segment


def _pick(min_abs: Array) -> Array:
    """Dropped component per row of smallest magnitudes (..., 4): w when it stays above
    MIN_DROPPED, else the component whose smallest magnitude is largest."""
    best = np.argmax(min_abs, axis=-1)
    return np.where(min_abs[..., W] >= MIN_DROPPED, W, best)


def choose(segment_min_abs: Array) -> tuple[Array, Array]:
    """Layouts of animated rotation sub-tracks from the smallest magnitude of each component
    over each segment (G, K, 4).

    Returns `clip_layout (K,)`: the component dropped for the whole clip, or PER_SEGMENT;
    and `segment_dropped (G, K)`: the component each segment drops (equal to the clip's
    where that is fixed).
    """
    k = segment_min_abs.shape[1]
    if k == 0:
        return np.zeros(0, np.int64), np.zeros((len(segment_min_abs), 0), np.int64)
    if len(segment_min_abs) == 1:  # one segment: its pick is the clip's, whatever it drops
        pick = _pick(segment_min_abs[0]).astype(np.int64)
        return pick, pick[None].copy()
    whole = segment_min_abs.min(axis=0)  # (K, 4)
    clip_pick = _pick(whole)
    fixed = whole[np.arange(k), clip_pick] >= MIN_DROPPED
    seg_pick = _pick(segment_min_abs)
    uniform = np.all(seg_pick == seg_pick[:1], axis=0)
    clip_layout = np.where(fixed, clip_pick, np.where(uniform, seg_pick[0], PER_SEGMENT))
    segment_dropped = np.where(clip_layout == PER_SEGMENT, seg_pick, clip_layout[None, :])
    return clip_layout.astype(np.int64), segment_dropped.astype(np.int64)


MIN_DROPPED_CONSTANT = 0.1  # a float32 constant rebuilds w to ~1e-6 of a unit from here up


def choose_constant(values: Array) -> Array:
    """Dropped component (K,) of constant rotations (K, 4): w unless it is small. A constant
    is stored as three float32 values, so w rebuilt from them stays within about 2^-24 / |w|:
    below 0.1 the largest component takes its place."""
    mag = np.abs(values)
    return np.where(mag[..., W] >= MIN_DROPPED_CONSTANT, W, np.argmax(mag, axis=-1))


def signed(rotations: Array, dropped: Array) -> Array:
    """Rotations (..., 4) negated where their dropped component (...) is negative."""
    dropped = np.asarray(dropped)
    d = rotations[(*np.indices(dropped.shape, sparse=True), dropped)]  # take_along_axis
    return np.where((d < 0)[..., None], -rotations, rotations)


# kept components by dropped component + 1: -1 (a vector) and anything past w keep x, y, z
_KEPT = np.array([[0, 1, 2], [1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]], dtype=np.int64)


def kept_components(dropped: Array) -> Array:
    """(..., 3) indices of the components stored beside a dropped one (in index order);
    -1 (a vector sub-track) keeps x, y, z. One table look-up (short clips call it often)."""
    return _KEPT.take(np.asarray(dropped, dtype=np.int64) + 1, axis=0, mode="clip")
