"""The acl-style payload's animation data (layout's module docstring) in one compiled pass.

Written as numpy pieces it took about 160 Python calls: a sixth of a two-sample clip's
whole encode, and more of it again when the caches are cold (the ACL race times every
encode right after ACL's process ran). Here the sizes are added up, the buffer made once
and every byte put in place, in the order the format lays them out. Bit-packed blocks
(kinds, layouts, samples) are LSB first, each padded to a byte (bitstream.unpack reads them).
"""

from __future__ import annotations

import numpy as np

from codec.codecs.acl_style.bit_rates import SLOT_BYTES as _SLOT
from codec.codecs.acl_style.rotation_layout import KEPT
from codec.codecs.acl_style.rotation_layout import PER_SEGMENT as _PER_SEGMENT
from codec.codecs.acl_style.rotation_layout import W as _W
from codec.codecs.base import TrackKind
from codec.jit import kernel

Array = np.ndarray

# what `body` reports (the first element of its result) besides 0 (written)
BAD_LAYOUT = 1  # a rotation layout code past 0..4
BAD_SAMPLE = 2  # a packed value wider than its rate's bits
BAD_KIND = 3  # a sub-track kind past 0..3
BAD_RATE = 4  # a bit rate index past the table

_ANIMATED, _CONSTANT = int(TrackKind.ANIMATED), int(TrackKind.CONSTANT)  # plain ints
# layout's: PER_SEGMENT as stored, bits per layout code, the rate byte's dropped-component
# shift and a segment table entry's bytes (layout imports this module: not from there)
_PER_SEGMENT_CODE, _LAYOUT_BITS, _DROPPED_SHIFT, _ENTRY = 3, 2, 5, 6


@kernel
def _put_bits(out, pos, value, width):
    """OR `value` on `width` bits into `out` from bit `pos`, LSB first; the next bit."""
    v = np.uint64(value) << np.uint64(pos & 7)
    b = pos >> 3
    while v:
        out[b] |= np.uint8(v & np.uint64(0xFF))
        v >>= np.uint64(8)
        b += 1
    return pos + width


@kernel
def _put_le(out, at, value, size):
    """`value` as a little-endian unsigned integer of `size` bytes (wrapping) at `at`."""
    for i in range(size):
        out[at + i] = np.uint8((value >> (8 * i)) & 0xFF)


@kernel
def _next_rotation(codes, i):
    """The next rotation's layout code in `codes` from index i (-1 entries are not
    rotations; -1 when none is left), and the index after it."""
    while i < codes.shape[0] and codes[i] < 0:
        i += 1
    return (codes[i] if i < codes.shape[0] else -1), i + 1


@kernel
def body(
    kinds,
    const_dropped,
    clip_layout,
    const_bytes,
    min_bytes,
    ext_bytes,
    sizes,
    retained,
    rates,
    seg_dropped,
    seg_min,
    seg_ext,
    slot_consts,
    samples,
    counts,
    widths_of,
):
    """The animation data after the header.

    kinds (J, 3) u8; const_dropped (Kc,) and clip_layout (Ka,) i64 (-1: not a rotation);
    const_bytes (Kc * 12,) u8, the constants as little-endian f32; min_bytes / ext_bytes
    (Ka, 16) u8, the clip ranges as little-endian f32; sizes (G,) i64; retained (S,) bool,
    empty when the file stores every keyframe (no masks); rates (G, Ka) u8; seg_dropped
    (G, Ka) i64; seg_min / seg_ext (G, Ka, 3) u8; slot_consts (G, Ka, 6) u8, the rate-0
    constants as little-endian u16; samples (R, Ka, 3) u32, every segment's stored keyframes
    one after the other, counts (G,) i64 of them per segment; widths_of (NUM_BIT_RATES,)
    i64 bits per rate index.

    Returns (status, detail, data, segment offsets (G,) from the animation data's start,
    packed-samples offsets (G,) from there, whether layouts are written). status 0: written,
    `detail` bytes of `data` (the rest is slack); else BAD_*, with `detail` the offending
    value (-1: the rotation layouts do not follow the kinds) and `data` empty.
    """
    nj = kinds.shape[0]
    ka, kc, g_count = clip_layout.shape[0], const_dropped.shape[0], sizes.shape[0]
    empty = np.zeros(0, np.uint8)
    offsets = np.zeros(g_count, np.int64)
    packed_at = np.zeros(g_count, np.int64)
    for j in range(nj):
        for k in range(3):
            if kinds[j, k] > 3:
                return BAD_KIND, np.int64(kinds[j, k]), empty, offsets, packed_at, False
    # rotation layouts: every constant or animated rotation in joint order
    layouts = False
    for i in range(kc):
        if const_dropped[i] >= 0 and const_dropped[i] != _W:
            layouts = True
    for i in range(ka):
        if clip_layout[i] >= 0 and clip_layout[i] != _W:
            layouts = True
    codes = np.zeros(nj, np.int64)
    n_codes = 0
    if layouts:
        ci = 0
        ai = 0
        for j in range(nj):
            kind = kinds[j, 0]
            if kind == _CONSTANT:
                codes[n_codes], ci = _next_rotation(const_dropped, ci)
                n_codes += 1
            elif kind == _ANIMATED:
                codes[n_codes], ai = _next_rotation(clip_layout, ai)
                n_codes += 1
        for i in range(n_codes):
            if codes[i] < 0 or codes[i] > _PER_SEGMENT:
                return BAD_LAYOUT, codes[i], empty, offsets, packed_at, False
    n_other = 0
    for i in range(n_codes):
        if codes[i] != _W:
            n_other += 1
    kinds_size = (nj * 3 * 2 + 7) // 8
    layout_size = (n_codes + n_other * _LAYOUT_BITS + 7) // 8 if layouts else 0
    four = np.zeros(ka, np.bool_)
    range_size = 0
    for i in range(ka):
        four[i] = clip_layout[i] == _PER_SEGMENT
        range_size += 32 if four[i] else 24
    # each segment: its mask, rate bytes, slots and packed samples
    masks = retained.shape[0] > 0
    multi = g_count > 1
    raw_rate = widths_of.shape[0] - 1
    head = np.zeros(g_count, np.int64)
    packed = np.zeros(g_count, np.int64)
    for g in range(g_count):
        used = 0
        bits = 0
        for k in range(ka):
            r = rates[g, k]
            if r > raw_rate:
                return BAD_RATE, np.int64(r), empty, offsets, packed_at, False
            if r == 0 or (multi and r < raw_rate):
                used += 1
            bits += widths_of[r]
        head[g] = ((sizes[g] + 7) // 8 if masks else 0) + ka + _SLOT * used
        packed[g] = (bits * 3 * counts[g] + 7) // 8
    start = kinds_size + layout_size + len(const_bytes) + range_size  # the segment table's
    total = start + _ENTRY * g_count
    for g in range(g_count):
        offsets[g] = total
        packed_at[g] = total + head[g]
        total += head[g] + packed[g]
    out = np.zeros(total + 8, np.uint8)  # 8 bytes of slack for _put_bits' last value
    pos = 0
    for j in range(nj):
        for k in range(3):
            pos = _put_bits(out, pos, kinds[j, k] & 3, 2)
    at = kinds_size
    if layouts:
        pos = 8 * at
        for i in range(n_codes):
            pos = _put_bits(out, pos, 1 if codes[i] != _W else 0, 1)
        for i in range(n_codes):
            if codes[i] != _W:
                code = _PER_SEGMENT_CODE if codes[i] == _PER_SEGMENT else codes[i]
                pos = _put_bits(out, pos, code, _LAYOUT_BITS)
        at += layout_size
    out[at : at + len(const_bytes)] = const_bytes
    at += len(const_bytes)
    for i in range(ka):
        kept = KEPT[max(0, min(seg_dropped[0, i] + 1, 4))]  # the first segment's: the clip's
        for part in range(2):
            src = min_bytes if part == 0 else ext_bytes
            for c in range(4 if four[i] else 3):
                comp = c if four[i] else kept[c]
                out[at : at + 4] = src[i, 4 * comp : 4 * comp + 4]
                at += 4
    for g in range(g_count):
        _put_le(out, start + _ENTRY * g, sizes[g], 2)
        _put_le(out, start + _ENTRY * g + 2, offsets[g], 4)
    first_row = 0
    first_sample = 0
    for g in range(g_count):
        at = offsets[g]
        if masks:
            pos = 8 * at
            for s in range(sizes[g]):
                pos = _put_bits(out, pos, 1 if retained[first_sample + s] else 0, 1)
            at += (sizes[g] + 7) // 8
        first_sample += sizes[g]
        for k in range(ka):
            r = rates[g, k]
            dropped = seg_dropped[g, k] if clip_layout[k] == _PER_SEGMENT else 0
            out[at] = np.uint8((np.int64(r) | (dropped << _DROPPED_SHIFT)) & 0xFF)
            at += 1
        for k in range(ka):
            r = rates[g, k]
            if r == 0:
                out[at : at + _SLOT] = slot_consts[g, k]
                at += _SLOT
            elif multi and r < raw_rate:
                out[at : at + 3] = seg_min[g, k]
                out[at + 3 : at + 6] = seg_ext[g, k]
                at += _SLOT
        pos = 8 * at
        for row in range(first_row, first_row + counts[g]):
            for k in range(ka):
                w = widths_of[rates[g, k]]
                for c in range(3):
                    v = samples[row, k, c]
                    if (np.uint64(v) >> np.uint64(w)) != 0:
                        return BAD_SAMPLE, np.int64(v), empty, offsets, packed_at, False
                    if w:
                        pos = _put_bits(out, pos, v, w)
        first_row += counts[g]
    return 0, np.int64(total), out, offsets, packed_at, layouts
