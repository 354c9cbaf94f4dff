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

codec.codecs.acl_style.quantize.quantised applies these rules to every segment at once.
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


MIN_DROPPED_CONSTANT = 0.1  # a float32 constant rebuilds w to ~1e-6 of a unit from here up


def choose_constant(values: Array) -> Array:
    """Dropped component (K,) of constant rotations (K, 4): w unless it is small. A constant
    is stored as three float32 values, so w rebuilt from them stays within about 2^-24 / |w|:
    below 0.1 the largest component takes its place."""
    mag = np.abs(values)
    return np.where(mag[..., W] >= MIN_DROPPED_CONSTANT, W, np.argmax(mag, axis=-1))


# kept components by dropped component + 1: -1 (a vector) and anything past w keep x, y, z
# (the kernels read this table too)
KEPT = np.array([[0, 1, 2], [1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]], dtype=np.int64)


def kept_components(dropped: Array) -> Array:
    """(..., 3) indices of the components stored beside a dropped one (in index order);
    -1 (a vector sub-track) keeps x, y, z. One table look-up (short clips call it often)."""
    return KEPT.take(np.asarray(dropped, dtype=np.int64) + 1, axis=0, mode="clip")
