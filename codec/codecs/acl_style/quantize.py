"""Range reduction and fixed-point quantisation, in float32 exactly as a runtime decodes.

Each animated sub-track stores three components per sample: translation and scale x, y, z;
a rotation the three its layout keeps (rotation_layout), the fourth rebuilt as the
positive root. Values are normalised to [0, 1] with a clip-wide float32 min and extent per
component, then, with several segments, renormalised with an 8-bit segment range.

`decode_value` is the one place where stored bits become a value: the optimiser's candidates
and the decoder both call it, so what the optimiser measures is, bit for bit, what a runtime
reconstructs. All its arithmetic is float32 in one fixed order.
"""

from __future__ import annotations

import numpy as np

from codec.codecs.acl_style.bit_rates import (
    CONSTANT_MAX,
    RAW_BIT_RATE,
    SEGMENT_RANGE_MAX,
)
from codec.jit import helper

Array = np.ndarray
F32 = np.float32


def clip_ranges(seg_lo: Array, seg_hi: Array, comps: Array) -> tuple[Array, Array]:
    """Clip-wide float32 min and extent (T, 4) of every clip component, from each segment's
    min and max (G, T, 3) of the values it stores and the clip component each stored value
    belongs to (G, T, 3); a component no segment stores gets 0 and 0."""
    g, t = seg_lo.shape[:2]
    lo = np.full((g, t, 4), np.inf, dtype=F32)
    hi = np.full((g, t, 4), -np.inf, dtype=F32)
    at = (np.arange(g)[:, None, None], np.arange(t)[None, :, None], comps)  # put_along_axis's
    lo[at], hi[at] = seg_lo, seg_hi
    if g > 1:
        lo, hi = lo.min(axis=0), hi.max(axis=0)
    else:
        lo, hi = lo[0], hi[0]
    kept = np.isfinite(lo)
    lo = np.where(kept, lo, F32(0.0)).astype(F32)
    return lo, np.where(kept, hi - lo, F32(0.0)).astype(F32)


def normalize(values: Array, lo: Array, extent: Array) -> Array:
    """Map (..., T, C) into [0, 1] with a clip range; a zero extent maps to 0."""
    v = np.asarray(values, dtype=F32)
    ranged = extent > 0
    n = np.zeros(np.broadcast_shapes(v.shape, extent.shape), dtype=F32)
    np.divide(v - lo, extent, out=n, where=ranged)
    return np.clip(n, F32(0.0), F32(1.0), out=n)


def segment_range_decode(q_min: Array, q_ext: Array) -> tuple[Array, Array]:
    """Float32 min and extent of 8-bit quantised segment ranges."""
    return (
        (q_min.astype(F32) / F32(SEGMENT_RANGE_MAX)).astype(F32),
        (q_ext.astype(F32) / F32(SEGMENT_RANGE_MAX)).astype(F32),
    )


def segment_ranges(normalized: Array, starts: Array) -> tuple[Array, Array, Array, Array]:
    """8-bit min and extent (G, T, 3) of every segment of clip-normalised values (S, T, 3)
    (segments begin at `starts (G,)`), and the same decoded to float32.

    Rounded outward, then widened until the decoded range really contains every sample.
    """
    lo32 = np.minimum.reduceat(normalized, starts, axis=0)
    hi32 = np.maximum.reduceat(normalized, starts, axis=0)
    q_min = np.clip(np.floor(lo32.astype(np.float64) * SEGMENT_RANGE_MAX), 0, SEGMENT_RANGE_MAX)
    q_max = np.clip(np.ceil(hi32.astype(np.float64) * SEGMENT_RANGE_MAX), 0, SEGMENT_RANGE_MAX)
    q_min = q_min.astype(np.int64)
    q_max = q_max.astype(np.int64)
    for _ in range(4):
        d_min, d_ext = segment_range_decode(q_min, q_max - q_min)
        low_bad = d_min > lo32
        high_bad = (d_min + d_ext).astype(F32) < hi32
        if not (np.any(low_bad) or np.any(high_bad)):
            break
        q_min = np.where(low_bad, np.maximum(q_min - 1, 0), q_min)
        q_max = np.where(high_bad, np.minimum(q_max + 1, SEGMENT_RANGE_MAX), q_max)
    q_min, q_ext = q_min.astype(np.uint8), (q_max - q_min).astype(np.uint8)
    return (q_min, q_ext, *segment_range_decode(q_min, q_ext))


def to_segment_space(normalized: Array, d_min: Array, d_ext: Array) -> Array:
    """Renormalise clip-normalised values (n, T, 3) into decoded segment ranges (T, 3)."""
    safe = np.where(d_ext > 0, d_ext, F32(1.0))
    s = np.where(d_ext > 0, (normalized - d_min) / safe, F32(0.0))
    return np.clip(s, F32(0.0), F32(1.0)).astype(F32)


def quantize(unit: Array, bits: int) -> Array:
    """Round values in [0, 1] to `bits`-bit integers (round half up)."""
    scale = float((1 << bits) - 1)
    return np.floor(unit.astype(np.float64) * scale + 0.5).astype(np.uint32)


def constant_value(normalized: Array, starts: Array) -> Array:
    """16-bit value (G, T, 3) in the middle of each segment's clip-normalised range (rate 0)."""
    lo = np.minimum.reduceat(normalized, starts, axis=0).astype(np.float64)
    hi = np.maximum.reduceat(normalized, starts, axis=0)
    return quantize(0.5 * (lo + hi), 16).astype(np.uint16)


# Decoding parameters of one sub-track (in one segment), as the kernels take them:
#   lay (4,) int64: the clip component of each of the three stored values, then the
#       dropped rotation component (-1: a vector sub-track)
#   dec (17,) float32: clip min (4), clip extent (4), segment min (3) and extent (3) as
#       decoded (0 and 1 without a segment range), the rate-0 constant (3, 16-bit values)
DEC_MIN, DEC_EXT, DEC_SEG_MIN, DEC_SEG_EXT, DEC_CONST, DEC_SIZE = 0, 4, 8, 11, 14, 17


def decode_params(
    comp: Array,
    dropped: Array,
    clip_min: Array,
    clip_ext: Array,
    seg_min: Array,
    seg_ext: Array,
    seg_const: Array,
) -> tuple[Array, Array]:
    """Pack per-track decoding parameters (..., T, ...) into `lay (..., T, 4)` and
    `dec (..., T, 17)` (see above)."""
    shape = seg_min.shape[:-1]
    lay = np.empty((*comp.shape[:-1], 4), dtype=np.int64)
    lay[..., :3], lay[..., 3] = comp, dropped
    dec = np.empty((*shape, DEC_SIZE), dtype=F32)  # each part cast to float32 as it is put
    dec[..., DEC_MIN:DEC_EXT], dec[..., DEC_EXT:DEC_SEG_MIN] = clip_min, clip_ext
    dec[..., DEC_SEG_MIN:DEC_SEG_EXT], dec[..., DEC_SEG_EXT:DEC_CONST] = seg_min, seg_ext
    dec[..., DEC_CONST:] = seg_const
    return lay, dec


@helper
def decode_value(qint, qraw, rate, lay, dec, out):
    """One stored sample of one sub-track -> float32 `out (4,)` (x, y, z[, w]).

    qint (3,) integers (rates 1..23), qraw (3,) float32 (raw rate); lay / dec above.
    """
    if 0 < rate < RAW_BIT_RATE:
        denom = np.float32((1 << rate) - 1)
    else:
        denom = np.float32(CONSTANT_MAX)
    for i in range(3):
        c = lay[i]
        if rate == RAW_BIT_RATE:
            out[c] = qraw[i]
        elif rate == 0:
            s = dec[DEC_CONST + i] / denom
            out[c] = s * dec[DEC_EXT + c] + dec[DEC_MIN + c]
        else:
            s = np.float32(qint[i]) / denom
            s = s * dec[DEC_SEG_EXT + i] + dec[DEC_SEG_MIN + i]
            out[c] = s * dec[DEC_EXT + c] + dec[DEC_MIN + c]
    d = lay[3]
    if d >= 0:  # rebuild_rotations, one quaternion
        zero = np.float32(0.0)
        acc = zero
        for c in range(4):
            if c != d:
                acc = acc + out[c] * out[c]
        rest = np.float32(1.0) - acc
        out[d] = np.sqrt(rest if rest > zero else zero)
        n = np.sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2] + out[3] * out[3])
        for c in range(4):
            out[c] = out[c] / n


def decode_values(q: Array, rate: Array, lay: Array, dec: Array) -> Array:
    """Many stored samples at once -> float32 (..., T, 4), operation for operation what
    `decode_value` does for one: q (..., T, 3) uint32, rate (..., T), lay (..., T, 4),
    dec (..., T, 17)."""
    rate = np.asarray(rate, dtype=np.int64)
    comp = lay[..., :3]
    quantised = (rate > 0) & (rate < RAW_BIT_RATE)
    bits = np.where(quantised, rate, 16)
    denom = (np.left_shift(1, bits) - 1).astype(F32)[..., None]
    cmin = np.take_along_axis(dec[..., DEC_MIN : DEC_MIN + 4], comp, axis=-1)
    cext = np.take_along_axis(dec[..., DEC_EXT : DEC_EXT + 4], comp, axis=-1)
    s = q.astype(F32) / denom
    s = s * dec[..., DEC_SEG_EXT : DEC_SEG_EXT + 3] + dec[..., DEC_SEG_MIN : DEC_SEG_MIN + 3]
    const = dec[..., DEC_CONST : DEC_CONST + 3] / denom
    v = np.where((rate == 0)[..., None], const, s) * cext + cmin
    v = np.where((rate == RAW_BIT_RATE)[..., None], q.view(F32), v)
    out = np.zeros((*q.shape[:-1], 4), dtype=F32)
    np.put_along_axis(out, comp, v.astype(F32), axis=-1)
    rot = lay[..., 3] >= 0
    if np.any(rot):
        out[rot] = rebuild_rotations(out[rot], lay[..., 3][rot])
    return out


def rebuild_rotations(q: Array, dropped: Array) -> Array:
    """Float32 quaternions (K, 4) whose `dropped (K,)` component is filled with the positive
    root of 1 - |kept|^2, then normalised: float32 throughout, components in index order,
    operation for operation what `decode_value` does."""
    with np.errstate(over="ignore", invalid="ignore"):  # corrupt files: caught downstream
        return _rebuild(np.array(q, dtype=F32, copy=True), dropped)


def _rebuild(q: Array, dropped: Array) -> Array:
    rows = np.arange(len(q))
    q[rows, dropped] = 0.0  # adds +0 to the kept components' sum of squares, in their order
    sq = q * q
    acc = ((sq[:, 0] + sq[:, 1]) + sq[:, 2]) + sq[:, 3]
    rest = F32(1.0) - acc
    q[rows, dropped] = np.sqrt(np.maximum(rest, F32(0.0)))
    n = np.sqrt(((q[:, 0] * q[:, 0] + q[:, 1] * q[:, 1]) + q[:, 2] * q[:, 2]) + q[:, 3] * q[:, 3])
    return (q / n[:, None]).astype(F32)
