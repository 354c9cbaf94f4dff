"""Bit packing: unsigned integers of any width from 0 to 32 bits, LSB first, no padding.

Vectorised both ways: packing expands every value into its bits once; unpacking reads a
64-bit little-endian window at each value's byte offset, so any subset of values (two
samples for one pose, or everything) decodes in a handful of numpy calls.
"""

from __future__ import annotations

import numpy as np

Array = np.ndarray


def pack(values: Array, widths: Array) -> bytes:
    """Concatenate `values[i]` on `widths[i]` bits each (both (N,)), LSB first.

    Returns ceil(sum(widths) / 8) bytes; a value wider than its width is an error.
    """
    values = np.asarray(values, dtype=np.uint64).reshape(-1)
    widths = np.asarray(widths, dtype=np.int64).reshape(-1)
    if values.shape != widths.shape:
        raise ValueError("values and widths differ in length")
    if np.any((widths < 0) | (widths > 32)):
        raise ValueError("widths must be within 0..32")
    too_big = (widths < 64) & (values >> widths.astype(np.uint64) != 0)
    if np.any(too_big):
        i = int(np.flatnonzero(too_big)[0])
        raise ValueError(f"value {values[i]} does not fit in {widths[i]} bits")
    total = int(widths.sum())
    if total == 0:
        return b""
    owner = np.repeat(np.arange(len(values)), widths)
    starts = np.cumsum(widths) - widths
    bit_index = np.arange(total) - np.repeat(starts, widths)
    bits = ((values[owner] >> bit_index.astype(np.uint64)) & np.uint64(1)).astype(np.uint8)
    return np.packbits(bits, bitorder="little").tobytes()


def unpack(data: bytes | Array, offsets: Array, widths: Array) -> Array:
    """Read unsigned values at bit `offsets` with `widths` (same shapes, any shape).

    `data` must cover every requested bit; reading past its end raises ValueError.
    """
    buf = np.frombuffer(data, dtype=np.uint8) if isinstance(data, bytes | bytearray) else data
    offsets = np.asarray(offsets, dtype=np.int64)
    widths = np.asarray(widths, dtype=np.int64)
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
