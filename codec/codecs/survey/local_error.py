"""The local error of a sub-track on its joint's dominant shell: what every track fitter
keeps within its budget, and the fewest bits that keep a whole track within one."""

from __future__ import annotations

import numpy as np

from codec.codecs.survey.frame import ROT, TR
from codec.codecs.survey.streams import MAX_BITS, Quantised, dequantise, quantise, stored_range
from codec.model import quat

Array = np.ndarray


def track_error(sub: int, raw: Array, approx: Array, dist: float, smag: Array) -> Array:
    """Local error (..., S) of a sub-track: how far the approximation `approx (..., S, C)`
    moves the joint's dominant shell points (distance `dist`) from where the raw values
    `raw (S, C)` put them, in the parent's space. `smag (S, 3)` is |raw scale|: a rotation
    error moves a shell point scaled by it.

    Rotation: with r = conj(raw) * normalise(approx) (vector part v), the point d e_i moves
    by 2 d |s_i| |v x e_i| = 2 d |s_i| sqrt(|v|^2 - v_i^2) (exact, whatever the sign of r).
    Translation: |delta|. Scale: d * max_i |delta_i|.
    """
    if sub == ROT:
        p = approx / np.linalg.norm(approx, axis=-1, keepdims=True)
        v = quat.mul(quat.conjugate(raw), p)[..., :3]
        v2 = v * v
        perp = np.maximum(np.sum(v2, axis=-1, keepdims=True) - v2, 0.0)
        return 2.0 * dist * np.max(np.sqrt(perp) * smag, axis=-1)
    d = approx - raw
    if sub == TR:
        return np.sqrt(np.sum(d * d, axis=-1))
    return dist * np.max(np.abs(d), axis=-1)


def choose_bits(
    sub: int, raw: Array, dist: float, smag: Array, budget: float
) -> tuple[Quantised, float]:
    """The fewest bits whose quantisation of every sample of a track stays within
    `budget`, and the error it leaves (MAX_BITS when none does). Returns the quantised
    samples (S, C)."""
    lo, hi, wide = stored_range(raw.min(axis=0), raw.max(axis=0))
    best = None
    for bits in range(1, MAX_BITS + 1):
        ints = quantise(raw, lo, hi, bits)
        err = float(track_error(sub, raw, dequantise(lo, hi, bits, ints), dist, smag).max())
        best = (Quantised(lo, hi, wide, bits, ints), err)
        if err <= budget:
            break
    assert best is not None
    return best
