"""Bit unpacking: unsigned integers of any width from 0 to 32 bits, LSB first, no padding
(what codec.codecs.acl_style.writing packs).

Any subset of values (the two samples of one pose, or everything) decodes from its bit
offsets alone: a value never needs more than the five bytes from its first.
"""

from __future__ import annotations

import numpy as np

Array = np.ndarray


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
