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
from codec.codecs.acl_style.rotation_layout import KEPT, PER_SEGMENT, W
from codec.jit import helper, kernel

Array = np.ndarray
F32 = np.float32


def segment_range_decode(q_min: Array, q_ext: Array) -> tuple[Array, Array]:
    """Float32 min and extent of 8-bit quantised segment ranges."""
    return (
        (q_min.astype(F32) / F32(SEGMENT_RANGE_MAX)).astype(F32),
        (q_ext.astype(F32) / F32(SEGMENT_RANGE_MAX)).astype(F32),
    )


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


@helper
def _smaller(a, b):
    """numpy.minimum's pick for non-NaN values: `b` unless `a` is smaller (so of -0.0 and
    0.0 the later one, as a reduction over the samples keeps it: the bytes depend on it)."""
    return a if a < b else b


@helper
def _larger(a, b):
    """numpy.maximum's pick for non-NaN values (see _smaller)."""
    return a if a > b else b


@helper
def _unit(x):
    """numpy.clip(x, 0, 1) of a float32."""
    x = x if x > np.float32(0.0) else np.float32(0.0)
    return x if x < np.float32(1.0) else np.float32(1.0)


@helper
def _pick(m, min_dropped):
    """rotation_layout's dropped component from the smallest magnitudes m (4,): w when it
    stays at or above `min_dropped`, else the largest (the first of ties)."""
    if m[W] >= min_dropped:
        return W
    best = 0
    for c in range(1, 4):
        if m[c] > m[best]:
            best = c
    return best


@kernel
def quantised(rotations, translations, scales, joints, counts, starts, sizes, min_dropped):
    """The optimiser's inputs for every segment at once, in float32 exactly as a runtime
    decodes: rotation layouts (rotation_layout's rules), stored components, clip ranges,
    8-bit segment ranges (several segments only), rate-0 constants and decoding parameters.

    rotations (S, J, 4), translations and scales (S, J, 3) float64, the clip's (its first
    `sizes.sum()` samples are stored); joints (Ka,) of the animated sub-tracks in the
    optimiser's order, the first counts[0] rotations, then counts[1] translations, then
    scales; starts, sizes (G,) the segments; min_dropped rotation_layout.MIN_DROPPED.

    Returns layout (Ka,) (-1: not a rotation), dropped (G, Ka), values and unit (stored,
    Ka, 3) float32 (the stored components; in segment space), clip_min and clip_ext (Ka, 4)
    float32, seg_min and seg_ext (G, Ka, 3) uint8, seg_const (G, Ka, 3) uint16, lay
    (G, Ka, 4) and dec (G, Ka, 17) (decode_params).
    """
    g_count, ka = sizes.shape[0], joints.shape[0]
    stored = 0
    for g in range(g_count):
        stored += sizes[g]
    kr = counts[0]
    layout = np.full(ka, -1, np.int64)
    dropped = np.full((g_count, ka), -1, np.int64)
    # rotation layouts from each segment's smallest |component|
    mins = np.empty((g_count, 4))
    whole = np.empty(4)
    for t in range(kr):
        j = joints[t]
        for g in range(g_count):
            for c in range(4):
                m = abs(rotations[starts[g], j, c])
                for s in range(starts[g] + 1, starts[g] + sizes[g]):
                    m = _smaller(m, abs(rotations[s, j, c]))
                mins[g, c] = m
        if g_count == 1:  # one segment: its pick is the clip's, whatever it drops
            layout[t] = dropped[0, t] = _pick(mins[0], min_dropped)
            continue
        for c in range(4):
            m = mins[0, c]
            for g in range(1, g_count):
                m = _smaller(m, mins[g, c])
            whole[c] = m
        clip_pick = _pick(whole, min_dropped)
        first = _pick(mins[0], min_dropped)
        uniform = True
        for g in range(g_count):
            dropped[g, t] = _pick(mins[g], min_dropped)
            uniform = uniform and dropped[g, t] == first
        if whole[clip_pick] >= min_dropped:
            layout[t] = clip_pick
        elif uniform:
            layout[t] = first
        else:
            layout[t] = PER_SEGMENT
        if layout[t] != PER_SEGMENT:
            for g in range(g_count):
                dropped[g, t] = layout[t]
    comps = np.empty((g_count, ka, 3), np.int64)  # rotation_layout.kept_components
    for g in range(g_count):
        for t in range(ka):
            comps[g, t] = KEPT[dropped[g, t] + 1]
    # the stored components (float32): a rotation's three kept, negated where the dropped
    # one is negative
    values = np.empty((stored, ka, 3), np.float32)
    for g in range(g_count):
        for s in range(starts[g], starts[g] + sizes[g]):
            for t in range(ka):
                j = joints[t]
                if t < kr:
                    flip = rotations[s, j, dropped[g, t]] < 0
                    for i in range(3):
                        v = rotations[s, j, comps[g, t, i]]
                        values[s, t, i] = np.float32(-v if flip else v)
                else:
                    src = translations if t < kr + counts[1] else scales
                    for i in range(3):
                        values[s, t, i] = np.float32(src[s, j, i])
    # clip ranges: every segment's min and max of what it stores, per clip component
    big = np.float32(np.inf)
    clip_min = np.zeros((ka, 4), np.float32)
    clip_ext = np.zeros((ka, 4), np.float32)
    lo = np.empty((g_count, 4), np.float32)
    hi = np.empty((g_count, 4), np.float32)
    for t in range(ka):
        lo[:] = big
        hi[:] = -big
        for g in range(g_count):
            for i in range(3):
                a = values[starts[g], t, i]
                b = a
                for s in range(starts[g] + 1, starts[g] + sizes[g]):
                    a = _smaller(a, values[s, t, i])
                    b = _larger(b, values[s, t, i])
                lo[g, comps[g, t, i]] = a
                hi[g, comps[g, t, i]] = b
        for c in range(4):
            a = lo[0, c]
            b = hi[0, c]
            for g in range(1, g_count):
                a = _smaller(a, lo[g, c])
                b = _larger(b, hi[g, c])
            if np.isfinite(a):
                clip_min[t, c] = a
                clip_ext[t, c] = b - a
    # clip-normalised values, their segments' rate-0 constants and 8-bit ranges, then
    # segment space
    unit = np.empty((stored, ka, 3), np.float32)
    seg_min = np.zeros((g_count, ka, 3), np.uint8)
    seg_ext = np.zeros((g_count, ka, 3), np.uint8)
    seg_const = np.empty((g_count, ka, 3), np.uint16)
    smin = np.zeros((g_count, ka, 3), np.float32)
    sext = np.ones((g_count, ka, 3), np.float32)
    ranged = g_count > 1
    top = np.float32(SEGMENT_RANGE_MAX)
    for g in range(g_count):
        a0, n = starts[g], sizes[g]
        for t in range(ka):
            for i in range(3):
                c = comps[g, t, i]
                cmin, cext = clip_min[t, c], clip_ext[t, c]
                for s in range(a0, a0 + n):
                    x = np.float32(0.0)
                    if cext > 0:
                        x = np.float32(values[s, t, i] - cmin) / cext
                    unit[s, t, i] = _unit(x)
                a = unit[a0, t, i]
                b = a
                for s in range(a0 + 1, a0 + n):
                    a = _smaller(a, unit[s, t, i])
                    b = _larger(b, unit[s, t, i])
                mid = 0.5 * (np.float64(a) + np.float64(b))
                seg_const[g, t, i] = np.uint16(np.floor(mid * float(CONSTANT_MAX) + 0.5))
                if not ranged:
                    continue
                # rounded outward, widened until the decoded range holds every sample
                q_min = int(min(max(np.floor(np.float64(a) * SEGMENT_RANGE_MAX), 0.0), top))
                q_max = int(min(max(np.ceil(np.float64(b) * SEGMENT_RANGE_MAX), 0.0), top))
                for _ in range(4):
                    d_min = np.float32(q_min) / top
                    d_ext = np.float32(q_max - q_min) / top
                    low_bad = d_min > a
                    high_bad = np.float32(d_min + d_ext) < b
                    if not (low_bad or high_bad):
                        break
                    if low_bad:
                        q_min = max(q_min - 1, 0)
                    if high_bad:
                        q_max = min(q_max + 1, SEGMENT_RANGE_MAX)
                seg_min[g, t, i] = q_min
                seg_ext[g, t, i] = q_max - q_min
                d_min = np.float32(seg_min[g, t, i]) / top
                d_ext = np.float32(seg_ext[g, t, i]) / top
                smin[g, t, i], sext[g, t, i] = d_min, d_ext
                for s in range(a0, a0 + n):
                    x = np.float32(0.0)
                    if d_ext > 0:
                        x = np.float32(unit[s, t, i] - d_min) / d_ext
                    unit[s, t, i] = _unit(x)
    lay = np.empty((g_count, ka, 4), np.int64)
    dec = np.empty((g_count, ka, DEC_SIZE), np.float32)
    for g in range(g_count):
        for t in range(ka):
            for i in range(3):
                lay[g, t, i] = comps[g, t, i]
                dec[g, t, DEC_SEG_MIN + i] = smin[g, t, i]
                dec[g, t, DEC_SEG_EXT + i] = sext[g, t, i]
                dec[g, t, DEC_CONST + i] = np.float32(seg_const[g, t, i])
            lay[g, t, 3] = dropped[g, t]
            for c in range(4):
                dec[g, t, DEC_MIN + c] = clip_min[t, c]
                dec[g, t, DEC_EXT + c] = clip_ext[t, c]
    return (
        layout,
        dropped,
        values,
        unit,
        clip_min,
        clip_ext,
        seg_min,
        seg_ext,
        seg_const,
        lay,
        dec,
    )


@kernel
def in_stored_order(
    inv, layout, clip_min, clip_ext, dropped, seg_min, seg_ext, seg_const, lay, dec, rates, q
):
    """The per-track arrays of `quantised` (the track axis first, or second after segments'
    or samples'), the optimiser's rates (G, T) and quantised samples q (stored, T, 3), each
    track moved to its stored position s from the optimiser's inv[s]: the payload's order
    (the decoder's tables lay and dec too). The rates come out as uint8, as written."""
    out = (
        np.empty_like(layout),
        np.empty_like(clip_min),
        np.empty_like(clip_ext),
        np.empty_like(dropped),
        np.empty_like(seg_min),
        np.empty_like(seg_ext),
        np.empty_like(seg_const),
        np.empty_like(lay),
        np.empty_like(dec),
        np.empty(rates.shape, np.uint8),
        np.empty_like(q),
    )
    for s in range(inv.shape[0]):
        t = inv[s]
        out[0][s] = layout[t]
        out[1][s] = clip_min[t]
        out[2][s] = clip_ext[t]
        for g in range(dropped.shape[0]):
            out[3][g, s] = dropped[g, t]
            out[4][g, s] = seg_min[g, t]
            out[5][g, s] = seg_ext[g, t]
            out[6][g, s] = seg_const[g, t]
            out[7][g, s] = lay[g, t]
            out[8][g, s] = dec[g, t]
            out[9][g, s] = rates[g, t]
        for n in range(q.shape[0]):
            out[10][n, s] = q[n, t]
    return out
