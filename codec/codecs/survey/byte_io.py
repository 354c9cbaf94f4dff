"""Bytes of a survey payload: a little-endian writer, a reader that checks every length
before it reads (CompressedFormatError naming the byte and the field), packed unsigned
integers, and the seal every payload ends in (the body raw, deflated or LZMA2, whichever is
smallest, behind its layout version and CRC32)."""

from __future__ import annotations

import lzma
import struct
import zlib

import numpy as np

from codec.errors import CompressedFormatError

Array = np.ndarray

MAX_BODY = 1 << 26  # bytes a packed body may unpack to (a hostile payload stops there)


class ByteWriter:
    """Little-endian writer of a payload's fields."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def u8(self, v: int) -> None:
        self.buf += struct.pack("<B", v)

    def u16(self, v: int) -> None:
        self.buf += struct.pack("<H", v)

    def u32(self, v: int) -> None:
        self.buf += struct.pack("<I", v)

    def f64(self, v: float) -> None:
        self.buf += struct.pack("<d", v)

    def raw(self, b: bytes) -> None:
        self.buf += b


class ByteReader:
    """Reads fields after checking that they are there; CompressedFormatError names the
    byte offset and the field otherwise."""

    def __init__(self, data: bytes, codec: str) -> None:
        self.data = data
        self.pos = 0
        self.codec = codec

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > len(self.data):
            raise CompressedFormatError(
                f"{self.codec} payload truncated at byte {self.pos}: {what} needs {n} bytes, "
                f"{len(self.data) - self.pos} left"
            )

    def take(self, n: int, what: str) -> bytes:
        self.need(n, what)
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def u8(self, what: str) -> int:
        return self.take(1, what)[0]

    def u16(self, what: str) -> int:
        return struct.unpack("<H", self.take(2, what))[0]

    def u32(self, what: str) -> int:
        return struct.unpack("<I", self.take(4, what))[0]

    def f64(self, what: str) -> float:
        return struct.unpack("<d", self.take(8, what))[0]

    def array(self, dtype: str, n: int, what: str) -> Array:
        size = np.dtype(dtype).itemsize * n
        return np.frombuffer(self.take(size, what), dtype=dtype).astype(np.float64)

    def done(self) -> None:
        if self.pos != len(self.data):
            raise CompressedFormatError(
                f"{self.codec} payload has {len(self.data) - self.pos} bytes after its end "
                f"(byte {self.pos})"
            )

    def fail(self, message: str) -> CompressedFormatError:
        return CompressedFormatError(f"{self.codec} payload, byte {self.pos}: {message}")


def pack_uint(values: Array, width: int) -> bytes:
    """Unsigned integers (n,) at `width` bits each, most significant bit first, padded to
    a whole byte."""
    v = np.asarray(values, dtype=np.uint64).reshape(-1)
    if width == 0 or v.size == 0:
        return b""
    shifts = np.arange(width - 1, -1, -1, dtype=np.uint64)
    bits = ((v[:, None] >> shifts) & np.uint64(1)).astype(np.uint8)
    return np.packbits(bits.reshape(-1)).tobytes()


def packed_size(n: int, width: int) -> int:
    return (n * width + 7) // 8


def unpack_uint(data: bytes, n: int, width: int) -> Array:
    """(n,) uint64 of `pack_uint` bytes."""
    if width == 0 or n == 0:
        return np.zeros(n, dtype=np.uint64)
    bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8))[: n * width]
    bits = bits.reshape(n, width).astype(np.uint64)
    shifts = np.arange(width - 1, -1, -1, dtype=np.uint64)
    return np.sum(bits << shifts, axis=1, dtype=np.uint64)


LZMA_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME, "dict_size": 1 << 20}]
RAW, DEFLATE, LZMA = 0, 1, 2  # how a body is stored


def seal(layout_version: int, body: bytes) -> bytes:
    """Payload = version (u8), CRC32 of the body (u32), how the body is stored (u8: 0 as it
    is, 1 zlib-deflated, 2 raw LZMA2 with a 1 MiB dictionary), the stored body: whichever
    of the three is smallest (the entropy coding of every survey codec)."""
    options = [
        (RAW, body),
        (DEFLATE, zlib.compress(body, 9)),
        (LZMA, lzma.compress(body, format=lzma.FORMAT_RAW, filters=LZMA_FILTERS)),
    ]
    flag, stored = min(options, key=lambda o: (len(o[1]), o[0]))
    return struct.pack("<BIB", layout_version, zlib.crc32(body), flag) + stored


def unseal(payload: bytes, layout_version: int, codec: str) -> bytes:
    """The body of a sealed payload, checked (CompressedFormatError otherwise)."""
    if len(payload) < 6:
        raise CompressedFormatError(f"{codec} payload of {len(payload)} bytes: too short")
    version, crc, flag = struct.unpack_from("<BIB", payload)
    if version != layout_version:
        raise CompressedFormatError(
            f"{codec} payload has layout version {version}, this decoder reads "
            f"{layout_version}: compress the clip again"
        )
    body = payload[6:]
    if flag == DEFLATE:
        d = zlib.decompressobj()
        try:
            body = d.decompress(body, MAX_BODY)
        except zlib.error as e:
            raise CompressedFormatError(
                f"{codec} payload: deflated body is corrupt ({e})"
            ) from None
        if d.unconsumed_tail:
            raise CompressedFormatError(f"{codec} payload: body unpacks to over {MAX_BODY} bytes")
        if not d.eof or d.unused_data:
            raise CompressedFormatError(
                f"{codec} payload: deflated body is cut or has bytes after it"
            )
    elif flag == LZMA:
        x = lzma.LZMADecompressor(format=lzma.FORMAT_RAW, filters=LZMA_FILTERS)
        try:
            body = x.decompress(body, MAX_BODY)
        except lzma.LZMAError as e:
            raise CompressedFormatError(f"{codec} payload: LZMA body is corrupt ({e})") from None
        if not x.eof and not x.needs_input:
            raise CompressedFormatError(f"{codec} payload: body unpacks to over {MAX_BODY} bytes")
        if not x.eof or x.unused_data:
            raise CompressedFormatError(f"{codec} payload: LZMA body is cut or has bytes after it")
    elif flag != RAW:
        raise CompressedFormatError(f"{codec} payload: unknown body flag {flag}")
    if zlib.crc32(body) != crc:
        raise CompressedFormatError(f"{codec} payload: CRC mismatch (the data is cut or corrupt)")
    return body
