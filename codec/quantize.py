"""Range reduction and fixed-point quantisation, in float32 exactly as the decoder does it.

The encoder and the decoder both call `dequantize`, so what the optimiser measures is, bit
for bit, what a runtime reconstructs. Values are per component; rotations are x, y, z of a
positive-W quaternion (W is rebuilt by `rebuild_rotation`).
"""

from __future__ import annotations

import numpy as np

from codec.result import BIT_RATE_BITS, RAW_BIT_RATE

Array = np.ndarray
F32 = np.float32

SEGMENT_RANGE_BITS = 8
SEGMENT_RANGE_MAX = (1 << SEGMENT_RANGE_BITS) - 1  # 255
CONSTANT_BITS = 16
CONSTANT_MAX = (1 << CONSTANT_BITS) - 1  # 65535


def positive_w(q: Array) -> Array:
    """Flip quaternions (..., 4) so that w >= 0 (the same rotation)."""
    return np.where(q[..., 3:4] < 0, -q, q)


def rebuild_rotation(xyz: Array) -> Array:
    """Unit quaternions (..., 4) float32 from stored x, y, z with a positive W."""
    xyz = np.asarray(xyz, dtype=F32)
    with np.errstate(over="ignore", invalid="ignore"):
        return _rebuild(xyz)


def _rebuild(xyz: Array) -> Array:
    w2 = F32(1.0) - np.sum(xyz * xyz, axis=-1, dtype=F32)
    q = np.concatenate((xyz, np.sqrt(np.maximum(w2, F32(0.0)))[..., None]), axis=-1)
    n = np.sqrt(np.sum(q * q, axis=-1, dtype=F32))[..., None]
    return (q / n).astype(F32)


def clip_range(values: Array) -> tuple[Array, Array]:
    """Clip-wide float32 min and extent per component of `values (S, K, 3)` -> (K, 3) each."""
    v = values.astype(F32)
    lo = v.min(axis=0)
    hi = v.max(axis=0)
    return lo, (hi - lo).astype(F32)


def normalize(values: Array, lo: Array, extent: Array) -> Array:
    """Map (..., K, 3) into [0, 1] with a clip range; a zero extent maps to 0."""
    v = values.astype(F32)
    safe = np.where(extent > 0, extent, F32(1.0))
    n = np.where(extent > 0, (v - lo) / safe, F32(0.0))
    return np.clip(n, F32(0.0), F32(1.0)).astype(F32)


def segment_range_decode(q_min: Array, q_ext: Array) -> tuple[Array, Array]:
    """Float32 min and extent of 8-bit quantised segment ranges."""
    return (
        (q_min.astype(F32) / F32(SEGMENT_RANGE_MAX)).astype(F32),
        (q_ext.astype(F32) / F32(SEGMENT_RANGE_MAX)).astype(F32),
    )


def segment_range(normalized: Array) -> tuple[Array, Array]:
    """8-bit min and extent (K, 3) covering a segment's clip-normalised values (n, K, 3).

    Rounded outward, then widened until the decoded range really contains every sample.
    """
    lo = normalized.min(axis=0).astype(np.float64)
    hi = normalized.max(axis=0).astype(np.float64)
    q_min = np.clip(np.floor(lo * SEGMENT_RANGE_MAX), 0, SEGMENT_RANGE_MAX).astype(np.int64)
    q_max = np.clip(np.ceil(hi * SEGMENT_RANGE_MAX), 0, SEGMENT_RANGE_MAX).astype(np.int64)
    for _ in range(4):
        d_min, d_ext = segment_range_decode(q_min, q_max - q_min)
        low_bad = d_min > normalized.min(axis=0)
        high_bad = (d_min + d_ext).astype(F32) < normalized.max(axis=0)
        if not (np.any(low_bad) or np.any(high_bad)):
            break
        q_min = np.where(low_bad, np.maximum(q_min - 1, 0), q_min)
        q_max = np.where(high_bad, np.minimum(q_max + 1, SEGMENT_RANGE_MAX), q_max)
    return q_min.astype(np.uint8), (q_max - q_min).astype(np.uint8)


def to_segment_space(normalized: Array, q_min: Array, q_ext: Array) -> Array:
    """Renormalise clip-normalised values (n, K, 3) into their segment range."""
    d_min, d_ext = segment_range_decode(q_min, q_ext)
    safe = np.where(d_ext > 0, d_ext, F32(1.0))
    s = np.where(d_ext > 0, (normalized - d_min) / safe, F32(0.0))
    return np.clip(s, F32(0.0), F32(1.0)).astype(F32)


def quantize(unit: Array, bits: int) -> Array:
    """Round values in [0, 1] to `bits`-bit integers (round half up)."""
    scale = float((1 << bits) - 1)
    return np.floor(unit.astype(np.float64) * scale + 0.5).astype(np.uint32)


def constant_value(normalized: Array) -> Array:
    """16-bit value (K, 3) in the middle of a segment's clip-normalised range (n, K, 3)."""
    mid = 0.5 * (normalized.min(axis=0).astype(np.float64) + normalized.max(axis=0))
    return quantize(mid, CONSTANT_BITS).astype(np.uint16)


def dequantize(
    q: Array,
    rate: Array,
    clip_min: Array,
    clip_extent: Array,
    seg_min: Array | None,
    seg_extent: Array | None,
    constant: Array,
) -> Array:
    """Decode quantised samples (..., K, 3) whose sub-tracks have bit rate indices (..., K).

    q holds integers for rates 1..23, float32 bit patterns (as uint32) for the raw rate and
    is ignored for rate 0, which decodes `constant (..., K, 3)` (16-bit clip-normalised).
    seg_min / seg_extent (..., K, 3) are decoded 8-bit segment ranges, None for a
    one-segment clip. All arithmetic is float32, in one fixed order.
    """
    rate = np.asarray(rate, dtype=np.int64)
    bits = BIT_RATE_BITS[rate]
    q = np.asarray(q)
    denom = (np.left_shift(1, np.minimum(bits, 31)) - 1).astype(F32)
    denom = np.where(denom > 0, denom, F32(1.0))[..., None]
    s = (q.astype(F32) / denom).astype(F32)
    if seg_min is not None:
        s = (s * seg_extent + seg_min).astype(F32)
    v = (s * clip_extent + clip_min).astype(F32)
    const = (np.asarray(constant).astype(F32) / F32(CONSTANT_MAX)).astype(F32)
    const = (const * clip_extent + clip_min).astype(F32)
    v = np.where((rate == 0)[..., None], const, v)
    raw = (rate == RAW_BIT_RATE)[..., None]
    if np.any(raw):
        v = np.where(raw, q.astype(np.uint32).view(F32), v)
    return v.astype(F32)


def encode(
    normalized: Array, raw_values: Array, rate: Array, seg_min: Array, seg_ext: Array
) -> Array:
    """Quantised integers (n, K, 3) uint32 for sub-tracks at rates (K,).

    `normalized` is clip-normalised (n, K, 3); `raw_values` the float32 originals (for the
    raw rate). seg_min / seg_ext are the 8-bit segment ranges, or None for one segment.
    """
    unit = normalized if seg_min is None else to_segment_space(normalized, seg_min, seg_ext)
    out = np.zeros(normalized.shape, dtype=np.uint32)
    for r in np.unique(rate):
        sel = rate == r
        if r == 0:
            continue
        if r == RAW_BIT_RATE:
            out[:, sel] = raw_values[:, sel].astype(F32).view(np.uint32)
        else:
            out[:, sel] = quantize(unit[:, sel], int(BIT_RATE_BITS[r]))
    return out
