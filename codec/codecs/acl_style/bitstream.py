"""Bit packing: unsigned integers of any width from 0 to 32 bits, LSB first, no padding.

Any subset of values (the two samples of one pose, or everything) decodes from its bit
offsets alone: a value never needs more than the five bytes from its first.
"""

from __future__ import annotations

import numpy as np

from codec.jit import kernel

Array = np.ndarray


@kernel
def _pack(values, widths, out):
    pos = 0
    for i in range(values.shape[0]):
        w = widths[i]
        if w == 0:
            continue
        v = np.uint64(values[i]) << np.uint64(pos & 7)
        b = pos >> 3
        while v:
            out[b] |= np.uint8(v & np.uint64(0xFF))
            v >>= np.uint64(8)
            b += 1
        pos += w


@kernel
def _pack_runs(values, widths, counts, offsets, out):
    """`_pack` of each run of `counts (G,)` values on its own, run g from byte offsets[g]."""
    first = 0
    for g in range(counts.shape[0]):
        _pack(
            values[first : first + counts[g]], widths[first : first + counts[g]], out[offsets[g] :]
        )
        first += counts[g]


@kernel
def _packed_runs(values, widths, counts):
    """`pack_runs` in one call: -1 (or the index of the first width past 0..32 or value
    wider than its width, then nothing is packed), the bytes of every run with 8 bytes of
    slack, and where each run starts (G + 1,)."""
    offsets = np.zeros(counts.shape[0] + 1, np.int64)
    first = 0
    for g in range(counts.shape[0]):
        bits = 0
        for i in range(first, first + counts[g]):
            w = widths[i]
            if w < 0 or w > 32 or (np.uint64(values[i]) >> np.uint64(w)) != 0:
                return i, np.zeros(0, np.uint8), offsets
            bits += w
        offsets[g + 1] = offsets[g] + (bits + 7) // 8
        first += counts[g]
    out = np.zeros(offsets[-1] + 8, np.uint8)
    _pack_runs(values, widths, counts, offsets, out)
    return -1, out, offsets


def _checked(values: Array, widths: Array) -> tuple[Array, Array]:
    """values (N,) uint64 and widths (N,) int64, contiguous and writable (numba compiles a
    read-only array as another type, and a specialisation the warm-up did not make would
    stall a compression on the compiler); ValueError on a width past 0..32 or a value
    wider than its width."""
    values = np.ascontiguousarray(values, dtype=np.uint64).reshape(-1)
    widths = np.ascontiguousarray(widths, dtype=np.int64).reshape(-1)
    values = values if values.flags.writeable else values.copy()
    widths = widths if widths.flags.writeable else widths.copy()
    if values.shape != widths.shape:
        raise ValueError("values and widths differ in length")
    if widths.size == 0:
        return values, widths
    if widths.min() < 0 or widths.max() > 32:
        raise ValueError("widths must be within 0..32")
    too_big = values >> widths.astype(np.uint64)
    if too_big.any():
        i = int(np.flatnonzero(too_big)[0])
        raise ValueError(f"value {values[i]} does not fit in {widths[i]} bits")
    return values, widths


def pack(values: Array, widths: Array) -> bytes:
    """Concatenate `values[i]` on `widths[i]` bits each (both (N,)), LSB first.

    Returns ceil(sum(widths) / 8) bytes; a value wider than its width is an error.
    """
    values = np.asarray(values).reshape(-1)
    return pack_runs(values, widths, np.array([len(values)], dtype=np.int64))[0]


def pack_runs(values: Array, widths: Array, counts: Array) -> tuple[bytes, Array]:
    """`pack` of each run of `counts (G,)` consecutive values (both (N,), N = counts.sum()),
    each run padded to a byte on its own, in one pass: the bytes of every run one after
    the other, and where each run starts in them (G + 1,) (the last: their length)."""
    values = np.require(values, None, ("C", "W")).reshape(-1)  # numba: writable, as warmed
    widths = np.require(widths, np.int64, ("C", "W")).reshape(-1)
    counts = np.require(counts, np.int64, ("C", "W"))
    if values.shape != widths.shape or int(counts.sum()) != len(values):
        raise ValueError("values, widths and counts differ in length")
    if values.dtype.kind not in "iu":
        values = _checked(values, widths)[0]  # a float source: whole numbers or an error
    bad, out, offsets = _packed_runs(values, widths, counts)
    if bad >= 0:
        _checked(values, widths)  # says which value, or which width
        raise ValueError(f"value {values[bad]} does not fit in {widths[bad]} bits")
    return out[: offsets[-1]].tobytes(), offsets


def unpack(data: bytes | Array, offsets: Array, widths: Array) -> Array:
    """Read unsigned values at bit `offsets` with `widths` (same shapes, any shape).

    `data` must cover every requested bit; reading past its end raises ValueError.
    """
    buf = np.frombuffer(data, dtype=np.uint8) if isinstance(data, bytes | bytearray) else data
    offsets = np.asarray(offsets, dtype=np.int64)
    widths = np.broadcast_to(np.asarray(widths, dtype=np.int64), offsets.shape)
    if offsets.size == 0:
        return np.zeros(offsets.shape, dtype=np.uint32)
    end = int((offsets + widths).max())
    if end > buf.size * 8:
        raise ValueError(f"bit stream of {buf.size} bytes is too short for bit {end}")
    padded = np.concatenate((buf, np.zeros(8, dtype=np.uint8)))
    byte = offsets >> 3
    window = np.zeros(offsets.shape, dtype=np.uint64)
    for k in range(5):  # 32 bits + 7 bits of shift fit in 5 bytes
        window |= padded[byte + k].astype(np.uint64) << np.uint64(8 * k)
    window >>= (offsets & 7).astype(np.uint64)
    mask = (np.uint64(1) << widths.astype(np.uint64)) - np.uint64(1)
    return (window & mask).astype(np.uint32)
