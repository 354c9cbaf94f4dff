"""Integer streams: values quantised in their own range (`Quantised`), and how integers go
on the wire (zigzag, LEB128 varints, per-track delta streams), with the bit estimate the
fitters rank their options by (`stream_cost`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codec.codecs.survey.byte_io import ByteReader, ByteWriter

Array = np.ndarray

MAX_BITS = 24  # widest quantisation of one component


def zigzag(v: Array) -> Array:
    v = np.asarray(v, np.int64)
    return ((v << 1) ^ (v >> 63)).astype(np.uint64)


def unzigzag(z: Array) -> Array:
    z = np.asarray(z, np.uint64)
    return ((z >> np.uint64(1)).astype(np.int64)) ^ (-(z & np.uint64(1)).astype(np.int64))


def varints(z: Array) -> bytes:
    """LEB128 bytes of unsigned integers (n,)."""
    z = np.asarray(z, np.uint64)
    if z.size == 0:
        return b""
    length = np.ones(z.shape, np.int64)
    for b in range(1, 10):
        length += (z >> np.uint64(7 * b)) > 0
    width = int(length.max())
    out = np.zeros((z.size, width), np.uint8)
    for b in range(width):
        chunk = ((z >> np.uint64(7 * b)) & np.uint64(127)).astype(np.uint8)
        out[:, b] = chunk | np.where(b < length - 1, 128, 0).astype(np.uint8)
    return out[np.arange(width)[None, :] < length[:, None]].tobytes()


def read_varints(r: ByteReader, data: bytes, count: int) -> Array:
    """(count,) unsigned integers of exactly `data` (CompressedFormatError otherwise)."""
    if count == 0:
        if data:
            raise r.fail("coefficient bytes without coefficients")
        return np.zeros(0, np.uint64)
    b = np.frombuffer(data, np.uint8)
    ends = np.flatnonzero(b < 128)
    if len(ends) != count or (len(b) and ends[-1] != len(b) - 1):
        raise r.fail(f"the coefficient stream holds {len(ends)} values, the tracks need {count}")
    starts = np.concatenate(([0], ends[:-1] + 1))
    lengths = ends - starts + 1
    if lengths.max() > 9:
        raise r.fail("a coefficient is longer than 63 bits")
    group = np.repeat(np.arange(count), lengths)
    shift = (np.arange(len(b)) - starts[group]) * 7
    parts = (b & 127).astype(np.uint64) << shift.astype(np.uint64)
    return np.add.reduceat(parts, starts)


def stream_cost(ints: Array) -> float:
    """Estimated bits of quantised values (K, C) in a `write_deltas` stream after entropy
    coding: about log2 of each zigzag difference, plus a little per value. Fitters compare
    their options with it (the bits per value alone miss that fine steps of smooth motion
    make small differences)."""
    z = zigzag(np.diff(np.asarray(ints, np.int64), axis=0, prepend=0)).astype(np.float64)
    return float(np.sum(np.log2(z + 1.0)) + 1.5 * z.size)


def write_stream(w: ByteWriter, parts: list[Array]) -> None:
    """Signed integers (the parts (n,) one after another) as one stream: zigzag, LEB128, its
    byte length (u32) first."""
    data = varints(zigzag(np.concatenate(parts))) if parts else b""
    w.u32(len(data))
    w.raw(data)


def read_stream(r: ByteReader, count: int, what: str) -> Array:
    """(count,) int64 of a `write_stream` stream, named `what` in an error."""
    length = r.u32(f"{what} stream length")
    return unzigzag(read_varints(r, r.take(length, f"{what} stream"), count))


def write_deltas(w: ByteWriter, tracks: list[Array]) -> None:
    """Quantised tracks (K, C) each, as one stream: per track and component the differences
    between successive values (the first against 0), zigzag, LEB128; its byte length (u32)
    first. Neighbouring keys of smooth motion differ by little, so most take one byte."""
    write_stream(w, [np.diff(t.astype(np.int64), axis=0, prepend=0).T.reshape(-1) for t in tracks])


def read_deltas(r: ByteReader, shapes: list[tuple[int, int]], bits: list[int]) -> list[Array]:
    """The tracks `write_deltas` wrote, of shapes (K, C), each value within `bits` bits."""
    flat = read_stream(r, sum(k * c for k, c in shapes), "value")
    out = []
    at = 0
    for (k, c), b in zip(shapes, bits, strict=True):
        v = np.cumsum(flat[at : at + k * c].reshape(c, k), axis=1).T
        at += k * c
        if np.any(v < 0) or np.any(v > (1 << b) - 1):
            raise r.fail(f"a quantised value is outside {b} bits")
        out.append(v.astype(np.uint64))
    return out


@dataclass(frozen=True)
class Quantised:
    """A track's values quantised in its own range: lo, hi (C,) as stored (float16 when it
    holds them, else float32), `bits` per component, ints (K, C)."""

    lo: Array
    hi: Array
    wide: bool
    bits: int
    ints: Array

    def values(self) -> Array:
        return dequantise(self.lo, self.hi, self.bits, self.ints)


def stored_range(lo: Array, hi: Array) -> tuple[Array, Array, bool]:
    """Range (C,) each widened outward to float16 values (float32 when float16 cannot hold
    them): the stored range always covers the values."""
    lo = np.asarray(lo, np.float64)
    hi = np.asarray(hi, np.float64)
    for dtype, wide in ((np.float16, False), (np.float32, True)):
        with np.errstate(over="ignore"):
            a = lo.astype(dtype)
            b = hi.astype(dtype)
        a = np.where(a.astype(np.float64) > lo, np.nextafter(a, dtype(-np.inf)), a)
        b = np.where(b.astype(np.float64) < hi, np.nextafter(b, dtype(np.inf)), b)
        if np.all(np.isfinite(a)) and np.all(np.isfinite(b)):
            return a.astype(np.float64), b.astype(np.float64), wide
    raise ValueError("value range beyond float32")  # Clip's limits keep values far below


def dequantise(lo: Array, hi: Array, bits: int, ints: Array) -> Array:
    """float64 values (K, C) of quantised ints (K, C): lo + (hi - lo) * q / (2^bits - 1)."""
    if bits == 0:
        return np.broadcast_to(lo, np.shape(ints)).astype(np.float64)
    return lo + (hi - lo) * (np.asarray(ints, np.float64) / float((1 << bits) - 1))


def quantise(values: Array, lo: Array, hi: Array, bits: int) -> Array:
    """ints (K, C) nearest to values (K, C) in the range, at `bits` bits."""
    if bits == 0:
        return np.zeros(np.shape(values), dtype=np.uint64)
    ext = hi - lo
    scale = float((1 << bits) - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(ext > 0, (values - lo) / np.where(ext > 0, ext, 1.0), 0.0)
    return np.clip(np.rint(u * scale), 0, scale).astype(np.uint64)


def write_range(w: ByteWriter, q: Quantised) -> None:
    dtype = "<f4" if q.wide else "<f2"
    w.raw(np.stack((q.lo, q.hi)).astype(dtype).tobytes())


def read_range(r: ByteReader, width: int, wide: bool, what: str) -> tuple[Array, Array]:
    v = r.array("<f4" if wide else "<f2", 2 * width, what).reshape(2, width)
    if not np.all(np.isfinite(v)) or np.any(v[1] < v[0]):
        raise r.fail(f"{what} is not a range")
    return v[0], v[1]
