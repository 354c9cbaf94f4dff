"""The .ssc byte format: what a runtime needs to rebuild the lossy clip, and nothing else.

Everything is little-endian. Offsets are from the start of the file.

    header (40 bytes)
      0  magic         b"SSCF"
      4  version       u16 (FORMAT_VERSION)
      6  flags         u16: bit 0 wrapping (looping, last sample dropped), bit 1 metadata
      8  crc32         u32 of every byte after this field (zlib.crc32)
     12  total_size    u32 length of the whole file
     16  num_joints    u32
     20  num_samples   u32 stored samples
     24  sample_rate   f64
     32  num_segments  u32
     36  anim_size     u32 bytes of animation data that follow the header
    animation data (anim_size bytes; header + this is `compressed_size`)
      kinds           2 bits per sub-track (0 default, 1 constant, 2 animated), joint-major
                      rotation/translation/scale, LSB first, padded to a byte
      constants       3 x f32 per constant sub-track (rotation: x, y, z of positive-W)
      clip ranges     per animated sub-track: min 3 x f32, extent 3 x f32
      segment table   per segment: num_samples u16, data offset u32 (from anim start)
      segments        per segment:
                        bit rate index u8 per animated sub-track
                        per animated sub-track, rate 0: 3 x u16 constant (clip-normalised);
                          rates 1..23 with more than one segment: 3 x u8 min, 3 x u8 extent
                        samples, sample-major, sub-tracks in order, 3 components each on
                          BIT_RATE_BITS[rate] bits (raw rate: f32 bits), LSB first,
                          padded to a byte
    metadata (optional; `metadata_size`): per joint u16 name length, UTF-8 name,
      i32 parent, f64 x 10 bind pose (rotation xyzw, translation, scale), f64 precision,
      f64 shell distance
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

import numpy as np

from codec import bitstream
from codec.clip import Skeleton
from codec.errors import CompressedFormatError
from codec.result import BIT_RATE_BITS, NUM_BIT_RATES, RAW_BIT_RATE, TrackKind

Array = np.ndarray

MAGIC = b"SSCF"
FORMAT_VERSION = 1
HEADER = struct.Struct("<4sHHIIIIdII")
HEADER_SIZE = HEADER.size  # 40
FLAG_WRAP = 1
FLAG_METADATA = 2
SEGMENT_ENTRY = struct.Struct("<HI")
MAX_JOINTS = 1 << 16
MAX_SAMPLES = 1 << 24


@dataclass(eq=False)
class EncodedClip:
    """Everything the animation data holds, as arrays (see the module docstring).

    kinds (J, 3) uint8; constants (Kc, 3) f32; clip_min / clip_extent (Ka, 3) f32;
    segment_sizes (G,); bit_rates (G, Ka) u8; seg_min / seg_extent (G, Ka, 3) u8;
    seg_constant (G, Ka, 3) u16; samples: per segment (n, Ka, 3) u32.
    """

    num_joints: int
    num_samples: int
    sample_rate: float
    wrap: bool
    kinds: Array
    constants: Array
    clip_min: Array
    clip_extent: Array
    segment_sizes: Array
    bit_rates: Array
    seg_min: Array
    seg_extent: Array
    seg_constant: Array
    samples: list[Array] = field(default_factory=list)

    @property
    def num_segments(self) -> int:
        return len(self.segment_sizes)

    @property
    def segment_starts(self) -> Array:
        return np.cumsum(self.segment_sizes) - self.segment_sizes

    @property
    def animated(self) -> Array:
        """(Ka, 2) joint and sub-track of every animated sub-track, in stored order."""
        return np.argwhere(self.kinds == TrackKind.ANIMATED)

    @property
    def constant_tracks(self) -> Array:
        """(Kc, 2) joint and sub-track of every constant sub-track, in stored order."""
        return np.argwhere(self.kinds == TrackKind.CONSTANT)

    def has_range(self, g: int) -> Array:
        """(Ka,) which sub-tracks of segment g store an 8-bit segment range."""
        r = self.bit_rates[g]
        return (r > 0) & (r < RAW_BIT_RATE) & (self.num_segments > 1)


def _range_bytes(enc: EncodedClip, g: int) -> bytes:
    rate = enc.bit_rates[g]
    out = bytearray()
    has_range = enc.has_range(g)
    for k in range(len(rate)):
        if rate[k] == 0:
            out += enc.seg_constant[g, k].astype("<u2").tobytes()
        elif has_range[k]:
            out += enc.seg_min[g, k].astype(np.uint8).tobytes()
            out += enc.seg_extent[g, k].astype(np.uint8).tobytes()
    return bytes(out)


def _segment_bytes(enc: EncodedClip, g: int) -> bytes:
    rate = enc.bit_rates[g].astype(np.int64)
    q = enc.samples[g]
    widths = np.broadcast_to(BIT_RATE_BITS[rate][None, :, None], q.shape)
    return (
        rate.astype(np.uint8).tobytes()
        + _range_bytes(enc, g)
        + bitstream.pack(q.reshape(-1), widths.reshape(-1))
    )


def _metadata_bytes(skeleton: Skeleton) -> bytes:
    out = bytearray()
    bind = np.concatenate(
        (skeleton.bind_rotations, skeleton.bind_translations, skeleton.bind_scales), axis=1
    )
    for j, name in enumerate(skeleton.names):
        raw = name.encode("utf-8")
        out += struct.pack("<H", len(raw)) + raw
        out += struct.pack("<i", int(skeleton.parents[j]))
        out += bind[j].astype("<f8").tobytes()
        out += struct.pack("<dd", skeleton.precision[j], skeleton.shell_distance[j])
    return bytes(out)


def write(enc: EncodedClip, skeleton: Skeleton | None = None) -> tuple[bytes, int]:
    """Serialise; returns the file bytes and the compressed size (header + animation)."""
    kinds = bitstream.pack(enc.kinds.reshape(-1).astype(np.uint64), np.full(enc.kinds.size, 2))
    body = bytearray(kinds)
    body += enc.constants.astype("<f4").tobytes()
    body += np.concatenate((enc.clip_min, enc.clip_extent), axis=1).astype("<f4").tobytes()
    segs = [_segment_bytes(enc, g) for g in range(enc.num_segments)]
    table_at = len(body)
    offset = table_at + SEGMENT_ENTRY.size * enc.num_segments
    table = bytearray()
    for g, seg in enumerate(segs):
        table += SEGMENT_ENTRY.pack(int(enc.segment_sizes[g]), offset)
        offset += len(seg)
    body += table
    for seg in segs:
        body += seg
    meta = _metadata_bytes(skeleton) if skeleton is not None else b""
    flags = (FLAG_WRAP if enc.wrap else 0) | (FLAG_METADATA if meta else 0)
    total = HEADER_SIZE + len(body) + len(meta)
    rest = HEADER.pack(
        MAGIC, FORMAT_VERSION, flags, 0, total, enc.num_joints, enc.num_samples,
        enc.sample_rate, enc.num_segments, len(body),
    )[12:] + bytes(body) + meta  # fmt: skip
    head = HEADER.pack(
        MAGIC, FORMAT_VERSION, flags, zlib.crc32(rest), total, enc.num_joints,
        enc.num_samples, enc.sample_rate, enc.num_segments, len(body),
    )[:12]  # fmt: skip
    return head + rest, HEADER_SIZE + len(body)


class _Reader:
    """Bounds-checked cursor: every read names the byte offset it failed at."""

    def __init__(self, data: bytes, start: int, end: int) -> None:
        self.data, self.pos, self.end = data, start, end

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise CompressedFormatError(
                f"truncated at byte {self.pos}: {what} needs {n} bytes, "
                f"{self.end - self.pos} remain"
            )
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def array(self, dtype: str, count: int, what: str) -> Array:
        size = np.dtype(dtype).itemsize
        return np.frombuffer(self.take(size * count, what), dtype=dtype).copy()


@dataclass(eq=False)
class ParsedFile:
    """A read .ssc file: the encoding, the optional skeleton and where segment bits start."""

    encoded: EncodedClip
    skeleton: Skeleton | None
    packed_offsets: Array  # (G,) byte offset of each segment's packed samples in `data`
    data: bytes
    compressed_size: int
    metadata_size: int


def read(data: bytes) -> ParsedFile:
    """Parse and check a whole file; raises CompressedFormatError on anything wrong."""
    data = bytes(data)
    if len(data) < HEADER_SIZE:
        raise CompressedFormatError(
            f"{len(data)} bytes is shorter than the {HEADER_SIZE}-byte header"
        )
    magic, version, flags, crc, total, nj, ns, rate, ng, anim = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise CompressedFormatError(f"bad magic {magic!r} at byte 0, expected {MAGIC!r}")
    if version != FORMAT_VERSION:
        raise CompressedFormatError(
            f"format version {version} at byte 4, this reader knows {FORMAT_VERSION}"
        )
    if total != len(data):
        raise CompressedFormatError(
            f"header says {total} bytes at byte 12, the data has {len(data)}"
        )
    if zlib.crc32(data[12:]) != crc:
        raise CompressedFormatError("CRC mismatch (byte 8): the data is corrupt")
    if flags & ~(FLAG_WRAP | FLAG_METADATA):
        raise CompressedFormatError(f"unknown flags {flags:#x} at byte 6")
    if not (1 <= nj <= MAX_JOINTS and 1 <= ns <= MAX_SAMPLES and 1 <= ng <= ns):
        raise CompressedFormatError(f"implausible counts: {nj} joints, {ns} samples, {ng} segments")
    if not (np.isfinite(rate) and rate > 0):
        raise CompressedFormatError(f"sample rate {rate} at byte 24 is not positive")
    anim_end = HEADER_SIZE + anim
    if anim_end > len(data):
        raise CompressedFormatError(f"animation data of {anim} bytes runs past the end")
    r = _Reader(data, HEADER_SIZE, anim_end)
    kind_bytes = r.take((nj * 3 * 2 + 7) // 8, "sub-track kinds")
    kinds = bitstream.unpack(kind_bytes, np.arange(nj * 3) * 2, np.full(nj * 3, 2))
    if np.any(kinds > TrackKind.ANIMATED):
        raise CompressedFormatError(f"unknown sub-track kind at byte {HEADER_SIZE}")
    kinds = kinds.reshape(nj, 3).astype(np.uint8)
    kc = int(np.sum(kinds == TrackKind.CONSTANT))
    ka = int(np.sum(kinds == TrackKind.ANIMATED))
    constants = r.array("<f4", kc * 3, "constant values").reshape(kc, 3)
    ranges = r.array("<f4", ka * 6, "clip ranges").reshape(ka, 6)
    if not (np.all(np.isfinite(constants)) and np.all(np.isfinite(ranges))):
        raise CompressedFormatError("constant values or clip ranges are not finite numbers")
    if np.any(ranges[:, 3:] < 0):
        raise CompressedFormatError("a clip range has a negative extent")
    table = r.array("<u2,<u4", ng, "segment table")
    sizes = table["f0"].astype(np.int64)
    offsets = table["f1"].astype(np.int64)
    if np.any(sizes < 1) or int(sizes.sum()) != ns:
        raise CompressedFormatError(f"segment sizes {sizes.tolist()} do not add up to {ns} samples")
    bit_rates = np.zeros((ng, ka), dtype=np.uint8)
    seg_min = np.zeros((ng, ka, 3), dtype=np.uint8)
    seg_ext = np.zeros((ng, ka, 3), dtype=np.uint8)
    seg_const = np.zeros((ng, ka, 3), dtype=np.uint16)
    packed_at = np.zeros(ng, dtype=np.int64)
    samples: list[Array] = []
    for g in range(ng):
        start = HEADER_SIZE + int(offsets[g])
        if not HEADER_SIZE <= start <= anim_end:
            raise CompressedFormatError(f"segment {g} offset {offsets[g]} is out of range")
        r.pos = start
        rates = r.array("u1", ka, f"bit rates of segment {g}")
        if np.any(rates >= NUM_BIT_RATES):
            raise CompressedFormatError(f"segment {g}: bit rate index {rates.max()} out of range")
        bit_rates[g] = rates
        multi = ng > 1
        for k in range(ka):
            if rates[k] == 0:
                seg_const[g, k] = r.array("<u2", 3, f"segment {g} constant")
            elif multi and rates[k] != RAW_BIT_RATE:
                seg_min[g, k] = r.array("u1", 3, f"segment {g} range")
                seg_ext[g, k] = r.array("u1", 3, f"segment {g} range")
        bits = BIT_RATE_BITS[rates.astype(np.int64)]
        n = int(sizes[g])
        nbytes = (n * 3 * int(bits.sum()) + 7) // 8
        packed_at[g] = r.pos
        packed = r.take(nbytes, f"samples of segment {g}")
        widths = np.broadcast_to(bits[None, :, None], (n, ka, 3))
        offs = (np.cumsum(widths.reshape(-1)) - widths.reshape(-1)).reshape(n, ka, 3)
        q = bitstream.unpack(packed, offs, widths)
        raw = rates == RAW_BIT_RATE
        if np.any(raw) and not np.all(np.isfinite(q[:, raw].view(np.float32))):
            raise CompressedFormatError(f"segment {g}: a raw sample is not a finite number")
        samples.append(q)
    meta_size = len(data) - anim_end
    skeleton = None
    if flags & FLAG_METADATA:
        skeleton = _read_metadata(data, anim_end, nj)
    elif meta_size:
        raise CompressedFormatError(f"{meta_size} unexpected bytes after the animation data")
    enc = EncodedClip(
        num_joints=nj, num_samples=ns, sample_rate=rate, wrap=bool(flags & FLAG_WRAP),
        kinds=kinds, constants=constants, clip_min=ranges[:, :3].copy(),
        clip_extent=ranges[:, 3:].copy(), segment_sizes=sizes, bit_rates=bit_rates,
        seg_min=seg_min, seg_extent=seg_ext, seg_constant=seg_const, samples=samples,
    )  # fmt: skip
    return ParsedFile(enc, skeleton, packed_at, data, anim_end, meta_size)


def _read_metadata(data: bytes, start: int, nj: int) -> Skeleton:
    r = _Reader(data, start, len(data))
    names, parents, bind, prec, shell = [], [], [], [], []
    for j in range(nj):
        (length,) = struct.unpack("<H", r.take(2, f"name length of joint {j}"))
        try:
            names.append(r.take(length, f"name of joint {j}").decode("utf-8"))
        except UnicodeDecodeError as e:
            raise CompressedFormatError(f"name of joint {j} is not UTF-8 ({e})") from None
        (parent,) = struct.unpack("<i", r.take(4, f"parent of joint {j}"))
        parents.append(parent)
        bind.append(r.array("<f8", 10, f"bind pose of joint {j}"))
        p, s = struct.unpack("<dd", r.take(16, f"precision of joint {j}"))
        prec.append(p)
        shell.append(s)
    if r.pos != len(data):
        raise CompressedFormatError(f"{len(data) - r.pos} unexpected bytes after the metadata")
    b = np.array(bind)
    try:
        return Skeleton(
            names=tuple(names), parents=np.array(parents), bind_rotations=b[:, :4],
            bind_translations=b[:, 4:7], bind_scales=b[:, 7:], precision=np.array(prec),
            shell_distance=np.array(shell),
        )  # fmt: skip
    except ValueError as e:
        raise CompressedFormatError(f"metadata: {e}") from None
