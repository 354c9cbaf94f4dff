"""The acl-style payload: what a runtime needs to rebuild the lossy clip, and nothing else.

The .ssc container (codec.codecs.container) wraps it with the codec's id and the optional
skeleton. Everything is little-endian; offsets are from the start of the payload.

    header (20 bytes)
      0  num_joints    u32
      4  num_samples   u32 stored samples
      8  sample_rate   f64
     16  segments      u32: bits 0-24 the number of segments, bits 25-28 the bind code
                       (what default sub-tracks hold and what the decoded pose is applied
                       to, BIND_CODES: 0 the bind pose, as every file before the code
                       existed), bit 29 keyframes stripped, bit 30 wrapping (looping, last
                       sample dropped), bit 31 rotation layouts present
    animation data (the rest of the payload)
      kinds           2 bits per sub-track (0 default, 1 constant, 2 animated), joint-major
                      rotation/translation/scale, LSB first, padded to a byte
      layouts         (bit 31 only) over the constant and animated rotation sub-tracks
                      in joint order, LSB first, padded to a byte: one bit each, set where it
                      does not drop w; then 2 bits for each set one: 0..2 the component
                      (x, y, z) the whole clip drops and rebuilds, 3 (animated only) a
                      component per segment. Without the flag every rotation drops w.
      constants       3 x f32 per constant sub-track (rotation: the three kept components
                      in index order, of the quaternion signed so the dropped one is >= 0)
      clip ranges     per animated sub-track: min then extent, f32 per stored component:
                      3 (kept x, y, z; or a rotation's three kept components) or 4 (a
                      rotation whose dropped component varies by segment: x, y, z, w)
      segment table   per segment: num_samples u16, data offset u32 (from anim start)
      segments        per segment:
                        (bit 29 only) keyframe mask: ceil(num_samples / 8) bytes, bit i
                          (LSB first) set where keyframe i of the segment is stored; the
                          first and last are always set, bits past num_samples are 0
                        per animated sub-track a u8: bits 0-4 the bit rate index, bits 5-6
                          the dropped component of a per-segment rotation (else 0)
                        per animated sub-track, rate 0: 3 x u16 constant (clip-normalised);
                          rates 1..23 with more than one segment: 3 x u8 min, 3 x u8 extent
                        samples of the stored keyframes only (all of them without flag
                          bit 3), sample-major, sub-tracks in order, 3 components each on
                          BIT_RATE_BITS[rate] bits (raw rate: f32 bits), LSB first,
                          padded to a byte

A rotation is rebuilt from its three kept components as in quantize.decode_value:
the dropped one is sqrt(max(0, 1 - sum of squares)), then the four are normalised, in
float32. A stripped keyframe (mask bit 0) stores nothing: the reader rebuilds it from the
stored keyframes before and after it in its segment (keyframe_stripping.rebuild).

Reading trusts nothing the header says: every count is checked against the bytes present
before anything is allocated from it, and the samples x joints the file would decode to
against codec.model.limits.transform_budget of 16 transforms per byte (a segment of constant
sub-tracks costs 6 bytes for up to 65,535 samples, so bytes alone do not bound it); the
sample rate, the bind pose, precision and shell distance must be numbers the codec can
hold (codec.model.limits).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from codec.codecs.acl_style import bitstream, writing
from codec.codecs.acl_style.bit_rates import (
    BIT_RATE_BITS,
    NUM_BIT_RATES,
    RAW_BIT_RATE,
    SLOT_BYTES,
    has_segment_range,
    sample_bits,
    segments_bytes,
)
from codec.codecs.acl_style.rotation_layout import PER_SEGMENT, W, kept_components
from codec.codecs.base import TrackKind
from codec.errors import CompressedFormatError
from codec.jit import kernel
from codec.model.limits import (
    over_budget,
    rate_problem,
    transform_budget,
)

Array = np.ndarray

HEADER = struct.Struct("<IIdI")
HEADER_SIZE = HEADER.size  # 20
STRIPPED_BIT = 1 << 29
BIND_SHIFT = 25
BIND_MASK = 0xF << BIND_SHIFT
# what default sub-tracks hold (codec.codecs.acl_style.bind_modes): "strip" the bind pose;
# "none" the identity; "additive" the additive0 identity, the pose then applied to the bind
# pose; "base-*" the identity of that additive format, applied to the clip's own base, which
# the file does not hold (the game supplies it, as with ACL's additive clips)
BIND_CODES = ("strip", "none", "additive", "base-relative", "base-additive0", "base-additive1")
WRAP_BIT = 1 << 30
LAYOUTS_BIT = 1 << 31
SEGMENTS_MASK = (1 << BIND_SHIFT) - 1
FLAG_WRAP = 1  # as read from the segments word
FLAG_LAYOUTS = 4
FLAG_STRIPPED = 8
# the kinds as plain ints: an IntEnum member looked up on its class costs more than the
# comparison it feeds (Python 3.11), and every encode asks a few times
_ANIMATED = int(TrackKind.ANIMATED)
_CONSTANT = int(TrackKind.CONSTANT)
_DEFAULT = int(TrackKind.DEFAULT)
SEGMENT_ENTRY = struct.Struct("<HI")
LAYOUT_BITS = 2  # per rotation that does not drop w (after one bit for every rotation)
_PER_SEGMENT_CODE = 3  # PER_SEGMENT as stored (w needs no code: the bit says it)
RATE_MASK = 0x1F
DROPPED_SHIFT = 5
MAX_JOINTS = 1 << 16
MAX_SAMPLES = 1 << 24
TRANSFORMS_PER_BYTE = 16  # what a .ssc may decode to, per byte of it (codec.model.limits)


def sub_tracks_of(kinds: Array, kind: int) -> Array:
    """(N, 2) joint and sub-track of every sub-track of `kind` in kinds (J, 3), joint-major
    (the stored order), C-contiguous int64: np.argwhere(kinds == kind) in one call."""
    kinds = np.ascontiguousarray(kinds, dtype=np.uint8)
    out = np.empty((kinds.size, 2), dtype=np.int64)
    return out[: _sub_tracks_of(kinds, kind, out)]


@kernel
def _sub_tracks_of(kinds, kind, out):
    """`sub_tracks_of` into out (J * 3, 2); returns how many."""
    n = 0
    for j in range(kinds.shape[0]):
        for k in range(kinds.shape[1]):
            if kinds[j, k] == kind:
                out[n, 0], out[n, 1] = j, k
                n += 1
    return n


@dataclass(eq=False)
class EncodedClip:
    """Everything the animation data holds, as arrays (see the module docstring).

    kinds (J, 3) uint8; constants (Kc, 3) f32; const_dropped (Kc,) the dropped component of
    each constant (-1: not a rotation); clip_layout (Ka,) 0..3, PER_SEGMENT, or -1 (not a
    rotation); clip_min / clip_extent (Ka, 4) f32 (unstored components 0); segment_sizes
    (G,); bit_rates (G, Ka) u8; seg_dropped (G, Ka) (-1: not a rotation); seg_min /
    seg_extent (G, Ka, 3) u8; seg_constant (G, Ka, 3) u16; samples: per segment (r, Ka, 3)
    of its r stored keyframes; retained (S,) bool, which keyframes are stored (None: all,
    and the file has no keyframe masks).
    """

    num_joints: int
    num_samples: int
    sample_rate: float
    wrap: bool
    kinds: Array
    constants: Array
    const_dropped: Array
    clip_layout: Array
    clip_min: Array
    clip_extent: Array
    segment_sizes: Array
    bit_rates: Array
    seg_dropped: Array
    seg_min: Array
    seg_extent: Array
    seg_constant: Array
    samples: list[Array] = field(default_factory=list)
    retained: Array | None = None
    bind: int = 0  # BIND_CODES index

    @property
    def num_segments(self) -> int:
        return len(self.segment_sizes)

    @property
    def segment_starts(self) -> Array:
        return np.cumsum(self.segment_sizes) - self.segment_sizes

    @cached_property
    def animated(self) -> Array:
        """(Ka, 2) joint and sub-track of every animated sub-track, in stored order."""
        return sub_tracks_of(self.kinds, _ANIMATED)

    @cached_property
    def constant_tracks(self) -> Array:
        """(Kc, 2) joint and sub-track of every constant sub-track, in stored order."""
        return sub_tracks_of(self.kinds, _CONSTANT)

    def stored_components(self) -> Array:
        """(G, Ka, 3) the clip component of each stored value, per segment."""
        return kept_components(self.seg_dropped)

    def retained_mask(self) -> Array:
        """(S,) bool: which keyframes the file stores (all when nothing is stripped)."""
        if self.retained is None:
            return np.ones(self.num_samples, dtype=bool)
        return np.asarray(self.retained, dtype=bool)

    def retained_counts(self) -> Array:
        """(G,) how many keyframes each segment stores."""
        if self.retained is None:
            return np.asarray(self.segment_sizes, dtype=np.int64)
        return np.add.reduceat(self.retained_mask(), self.segment_starts).astype(np.int64)

    def segment_bytes(self) -> Array:
        """(G,) bytes each segment takes in the file: its keyframe mask (when stripped), rate
        bytes, ranges and packed samples of its stored keyframes."""
        multi = self.num_segments > 1
        out = segments_bytes(self.bit_rates, self.retained_counts(), multi)
        if self.retained is not None:
            out = out + mask_bytes(self.segment_sizes)
        return out.astype(np.int64)


def mask_bytes(num_samples: int) -> int:
    """Bytes of one segment's keyframe mask (only in files with stripped keyframes)."""
    return (num_samples + 7) // 8


def _c(a: Array, dtype: type) -> Array:
    """`a` as a contiguous, writable array of `dtype` for writing.body (numba compiles a
    read-only array as another type: a specialisation the warm-up did not make)."""
    if a.dtype == dtype and a.flags.c_contiguous and a.flags.writeable:
        return a
    return np.array(a, dtype=dtype, order="C")


def _le_bytes(a: Array, dtype: str) -> Array:
    """(..., n) values as little-endian `dtype` -> (..., n * its size) u8."""
    return np.ascontiguousarray(a, dtype=dtype).view(np.uint8)  # the last axis widens


def write(enc: EncodedClip) -> ParsedPayload:
    """Serialise; returns the written payload as `read` would parse it (without parsing)."""
    g_count = enc.num_segments
    samples = enc.samples[0] if len(enc.samples) == 1 else np.concatenate(enc.samples)
    status, detail, out, offsets, packed_at, layouts = writing.body(
        _c(enc.kinds, np.uint8),
        _c(enc.const_dropped, np.int64),
        _c(enc.clip_layout, np.int64),
        _le_bytes(enc.constants, "<f4").reshape(-1),
        _le_bytes(enc.clip_min, "<f4"),
        _le_bytes(enc.clip_extent, "<f4"),
        _c(enc.segment_sizes, np.int64),
        _c(enc.retained, np.bool_) if enc.retained is not None else _NO_MASKS,
        _c(enc.bit_rates, np.uint8),
        _c(enc.seg_dropped, np.int64),
        _c(enc.seg_min, np.uint8),
        _c(enc.seg_extent, np.uint8),
        _le_bytes(enc.seg_constant, "<u2"),
        _c(samples, np.uint32),
        np.array([len(q) for q in enc.samples], dtype=np.int64),
        BIT_RATE_BITS,
    )
    if status:
        raise ValueError(
            {
                writing.BAD_KIND: f"a sub-track kind ({detail}) does not fit in 2 bits",
                writing.BAD_RATE: f"bit rate index {detail} is past the table",
                writing.BAD_SAMPLE: f"value {detail} does not fit in its bit rate's bits",
                writing.BAD_LAYOUT: f"rotation layout code {detail} does not follow the kinds",
            }[status]
        )
    word = (
        g_count
        | (WRAP_BIT if enc.wrap else 0)
        | (LAYOUTS_BIT if layouts else 0)
        | (STRIPPED_BIT if enc.retained is not None else 0)
        | (enc.bind << BIND_SHIFT)
    )
    head = HEADER.pack(enc.num_joints, enc.num_samples, enc.sample_rate, word)
    return ParsedPayload(
        encoded=enc,
        packed_offsets=HEADER_SIZE + packed_at,
        segment_offsets=offsets,
        data=head + out[:detail].tobytes(),
    )


_NO_MASKS = np.zeros(0, dtype=np.bool_)


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
class ParsedPayload:
    """A read acl-style payload: the encoding and where its segments and their bits start."""

    encoded: EncodedClip
    packed_offsets: Array  # (G,) byte offset of each segment's packed samples in `data`
    segment_offsets: Array  # (G,) byte offset of each segment from the animation data's start
    data: bytes


def _check_header(data: bytes) -> tuple[int, int, int, int, float, int]:
    if len(data) < HEADER_SIZE:
        raise CompressedFormatError(
            f"{len(data)} bytes is shorter than the {HEADER_SIZE}-byte acl-style header"
        )
    nj, ns, rate, word = HEADER.unpack_from(data)
    ng = word & SEGMENTS_MASK
    if (word & BIND_MASK) >> BIND_SHIFT >= len(BIND_CODES):
        raise CompressedFormatError(
            f"unknown bind code {(word & BIND_MASK) >> BIND_SHIFT} in the header (byte 16); "
            f"known: {', '.join(f'{i} {n}' for i, n in enumerate(BIND_CODES))}"
        )
    flags = (
        (FLAG_WRAP if word & WRAP_BIT else 0)
        | (FLAG_LAYOUTS if word & LAYOUTS_BIT else 0)
        | (FLAG_STRIPPED if word & STRIPPED_BIT else 0)
    )
    anim = len(data) - HEADER_SIZE
    if not (1 <= nj <= MAX_JOINTS and 1 <= ns <= MAX_SAMPLES and 1 <= ng <= ns):
        raise CompressedFormatError(f"implausible counts: {nj} joints, {ns} samples, {ng} segments")
    problem = rate_problem(rate)
    if problem:
        raise CompressedFormatError(f"sample rate at byte 8: {problem}")
    problem = over_budget(ns, nj, transform_budget(TRANSFORMS_PER_BYTE * len(data)))
    if problem:
        raise CompressedFormatError(f"header (bytes 0-7): {problem}")
    # every joint costs at least 6 bits of kinds, every segment 6 bytes of table
    if nj * 6 > 8 * anim or ng * SEGMENT_ENTRY.size > anim:
        raise CompressedFormatError(
            f"{nj} joints and {ng} segments cannot fit in {anim} bytes of animation data"
        )
    return flags, nj, ns, ng, rate, anim


def read(data: bytes) -> ParsedPayload:
    """Parse and check a whole payload; raises CompressedFormatError on anything wrong.

    Every count is checked against the bytes actually present before anything is
    allocated from it, so a small payload cannot ask for a large allocation.
    """
    data = bytes(data)
    flags, nj, ns, ng, rate, anim = _check_header(data)
    bind = (HEADER.unpack_from(data)[3] & BIND_MASK) >> BIND_SHIFT
    r = _Reader(data, HEADER_SIZE, len(data))
    kinds, codes = _read_kinds(r, flags, nj, ng, anim)
    consts = np.argwhere(kinds == TrackKind.CONSTANT)
    anim_tracks = np.argwhere(kinds == TrackKind.ANIMATED)
    const_dropped = np.where(consts[:, 1] == 0, codes[consts[:, 0]], -1)
    clip_layout = np.where(anim_tracks[:, 1] == 0, codes[anim_tracks[:, 0]], -1)
    constants, clip_min, clip_ext = _read_clip_values(r, len(consts), clip_layout)
    table = r.array("<u2,<u4", ng, "segment table")
    sizes = table["f0"].astype(np.int64)
    offsets = table["f1"].astype(np.int64)
    if np.any(sizes < 1) or int(sizes.sum()) != ns:
        raise CompressedFormatError(f"segment sizes {sizes.tolist()} do not add up to {ns} samples")
    segs = _read_segments(r, sizes, offsets, clip_layout, bool(flags & FLAG_STRIPPED))
    enc = EncodedClip(
        num_joints=nj,
        num_samples=ns,
        sample_rate=rate,
        wrap=bool(flags & FLAG_WRAP),
        kinds=kinds,
        constants=constants,
        const_dropped=const_dropped,
        clip_layout=clip_layout,
        clip_min=clip_min,
        clip_extent=clip_ext,
        segment_sizes=sizes,
        bit_rates=segs.bit_rates,
        seg_dropped=np.where(anim_tracks[:, 1] == 0, segs.dropped, -1),
        seg_min=segs.minimum,
        seg_extent=segs.extent,
        seg_constant=segs.constant,
        samples=segs.samples,
        bind=bind,
        retained=segs.retained,
    )
    return ParsedPayload(enc, segs.packed_at, offsets, data)


def _read_kinds(r: _Reader, flags: int, nj: int, ng: int, anim: int) -> tuple[Array, Array]:
    """The sub-track kinds (J, 3) and every joint's rotation layout code (J,): W unless the
    layouts block says otherwise."""
    kind_bytes = r.take((nj * 3 * 2 + 7) // 8, "sub-track kinds")
    kinds = bitstream.unpack(kind_bytes, np.arange(nj * 3) * 2, np.full(nj * 3, 2))
    if np.any(kinds > TrackKind.ANIMATED):
        raise CompressedFormatError(f"unknown sub-track kind at byte {HEADER_SIZE}")
    kinds = kinds.reshape(nj, 3).astype(np.uint8)
    ka = int(np.sum(kinds == TrackKind.ANIMATED))
    if ng * ka > anim:  # every segment stores a rate byte per animated sub-track
        raise CompressedFormatError(
            f"{ng} segments of {ka} animated sub-tracks cannot fit in {anim} bytes"
        )
    codes = np.full(nj, W, dtype=np.int64)
    rot_stored = np.flatnonzero(kinds[:, 0] != TrackKind.DEFAULT)
    if flags & FLAG_LAYOUTS:
        at = r.pos
        n = len(rot_stored)
        rest = r.end - r.pos
        mask_bytes = r.data[r.pos : r.pos + min(rest, (n + 7) // 8)]
        if len(mask_bytes) < (n + 7) // 8:
            raise CompressedFormatError(f"truncated at byte {at}: rotation layouts")
        other = bitstream.unpack(mask_bytes, np.arange(n), np.ones(n, np.int64)).astype(bool)
        k = int(other.sum())
        raw = r.take((n + LAYOUT_BITS * k + 7) // 8, "rotation layouts")
        got = bitstream.unpack(raw, n + np.arange(k) * LAYOUT_BITS, np.full(k, LAYOUT_BITS))
        got = np.where(got == _PER_SEGMENT_CODE, PER_SEGMENT, got)
        codes[rot_stored[other]] = got
        bad = (codes == PER_SEGMENT) & (kinds[:, 0] != TrackKind.ANIMATED)
        if np.any(bad):
            raise CompressedFormatError(f"bad rotation layout at byte {at}")
    return kinds, codes


def _read_clip_values(r: _Reader, kc: int, clip_layout: Array) -> tuple[Array, Array, Array]:
    """The constant sub-tracks' values (Kc, 3) and the animated ones' clip ranges, min and
    extent (Ka, 4) each (unstored components 0)."""
    ka = len(clip_layout)
    constants = r.array("<f4", kc * 3, "constant values").reshape(kc, 3)
    counts = np.where(clip_layout == PER_SEGMENT, 4, 3)
    flat = r.array("<f4", int(counts.sum()) * 2, "clip ranges")
    if not (np.all(np.isfinite(constants)) and np.all(np.isfinite(flat))):
        raise CompressedFormatError("constant values or clip ranges are not finite numbers")
    clip_min = np.zeros((ka, 4), dtype=np.float32)
    clip_ext = np.zeros((ka, 4), dtype=np.float32)
    fixed_comps = kept_components(np.where(clip_layout == PER_SEGMENT, W, clip_layout))
    pos = 0
    for k in range(ka):
        c = int(counts[k])
        idx = np.arange(4) if c == 4 else fixed_comps[k]
        clip_min[k, idx] = flat[pos : pos + c]
        clip_ext[k, idx] = flat[pos + c : pos + 2 * c]
        pos += 2 * c
    if np.any(clip_ext < 0):
        raise CompressedFormatError("a clip range has a negative extent")
    return constants, clip_min, clip_ext


@dataclass(eq=False)
class _Segments:
    """What the segments hold: bit_rates (G, Ka), the dropped component of each rotation
    (G, Ka), 8-bit ranges `minimum` / `extent` and 16-bit constants (G, Ka, 3), where each
    segment's packed samples start in the file (G,), the samples (r, Ka, 3) of each, and
    which keyframes are stored (S,) (None: the file strips none)."""

    bit_rates: Array
    dropped: Array
    minimum: Array
    extent: Array
    constant: Array
    packed_at: Array
    samples: list[Array]
    retained: Array | None = None


def _read_segments(
    r: _Reader, sizes: Array, offsets: Array, clip_layout: Array, stripped: bool
) -> _Segments:
    """Every segment: its keyframe mask (when `stripped`), rate bytes, constants and
    ranges, and its packed samples."""
    ng, ka = len(sizes), len(clip_layout)
    per_segment = clip_layout == PER_SEGMENT
    segs = _Segments(
        bit_rates=np.zeros((ng, ka), dtype=np.uint8),
        dropped=np.repeat(np.where(per_segment, W, clip_layout)[None], ng, 0),
        minimum=np.zeros((ng, ka, 3), dtype=np.uint8),
        extent=np.zeros((ng, ka, 3), dtype=np.uint8),
        constant=np.zeros((ng, ka, 3), dtype=np.uint16),
        packed_at=np.zeros(ng, dtype=np.int64),
        samples=[],
    )
    multi = ng > 1
    masks = []
    for g in range(ng):
        start = HEADER_SIZE + int(offsets[g])
        if not HEADER_SIZE <= start <= r.end:
            raise CompressedFormatError(f"segment {g} offset {offsets[g]} is out of range")
        r.pos = start
        n = int(sizes[g])
        if stripped:
            masks.append(_read_mask(r, g, n))
        stored = int(masks[-1].sum()) if stripped else n
        at = r.pos
        raw_rates = r.array("u1", ka, f"bit rates of segment {g}").astype(np.int64)
        rates = raw_rates & RATE_MASK
        dropped = raw_rates >> DROPPED_SHIFT
        if (
            np.any(rates >= NUM_BIT_RATES)
            or np.any(dropped[~per_segment] != 0)
            or np.any(dropped > W)
        ):
            raise CompressedFormatError(f"segment {g}: bad bit rate byte at byte {at}")
        segs.bit_rates[g] = rates
        segs.dropped[g, per_segment] = dropped[per_segment]
        need_const = rates == 0
        need_range = has_segment_range(rates, multi)
        blob = r.take(SLOT_BYTES * int(np.sum(need_const | need_range)), f"segment {g} ranges")
        cursor = 0
        for k in np.flatnonzero(need_const | need_range):
            if need_const[k]:
                segs.constant[g, k] = np.frombuffer(blob, "<u2", 3, cursor)
            else:
                segs.minimum[g, k] = np.frombuffer(blob, "u1", 3, cursor)
                segs.extent[g, k] = np.frombuffer(blob, "u1", 3, cursor + 3)
            cursor += SLOT_BYTES
        segs.packed_at[g] = r.pos
        segs.samples.append(_read_samples(r, g, rates, stored))
    if stripped:
        segs.retained = np.concatenate(masks)
    return segs


def _read_mask(r: _Reader, g: int, n: int) -> Array:
    """Segment g's keyframe mask (n,) bool: the first and last keyframes are always stored
    and no bit past the segment's end is set."""
    at = r.pos
    raw = np.frombuffer(r.take(mask_bytes(n), f"keyframe mask of segment {g}"), np.uint8)
    bits = np.unpackbits(raw, bitorder="little").astype(bool)
    if np.any(bits[n:]) or not (bits[0] and bits[n - 1]):
        raise CompressedFormatError(
            f"segment {g}: bad keyframe mask at byte {at} (the first and last keyframes "
            "must be stored, no bit past the segment's end)"
        )
    return bits[:n]


def _read_samples(r: _Reader, g: int, rates: Array, n: int) -> Array:
    """Segment g's packed samples (n, Ka, 3) as stored integers (raw floats' bits)."""
    ka = len(rates)
    bits = BIT_RATE_BITS[rates]
    packed = r.take((sample_bits(rates, n) + 7) // 8, f"samples of segment {g}")
    widths = np.broadcast_to(bits[None, :, None], (n, ka, 3))
    offs = (np.cumsum(widths.reshape(-1)) - widths.reshape(-1)).reshape(n, ka, 3)
    q = bitstream.unpack(packed, offs, widths)
    raw = rates == RAW_BIT_RATE
    if np.any(raw) and not np.all(np.isfinite(q[:, raw].view(np.float32))):
        raise CompressedFormatError(f"segment {g}: a raw sample is not a finite number")
    return q
