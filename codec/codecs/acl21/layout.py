"""ACL 2.1's compressed transform tracks, byte by byte: what `acl_compressor -out=FILE.acl`
writes (ACL's `compressed_tracks`), read into arrays with every length and offset checked.

Little-endian; offsets marked (T) count from the transform header at byte 32, (F) from the
start of the file; "align N" pads with zeros to a multiple of N bytes of the file.

```
0    u32 size (the whole file), u32 hash (FNV-1a 32 of bytes 8..size)
8    u32 tag 0xAC11AC11, u16 version (10: ACL 2.1.0), u8 algorithm (0: uniformly sampled),
     u8 track type (12: qvvf), u32 tracks J, u32 samples S, f32 sample rate,
     u32 flags: bit 0 has scale, 1 default scale (1 or 0), 2 scale format, 3 translation
     format (0 vector3f_full, 1 vector3f_variable), 4-7 rotation format (0 quatf_full,
     2 quatf_drop_w_full, 3 quatf_drop_w_variable), 8 database, 9 trivial default values,
     10 stripped keyframes, 30 wrap (looping: the last sample blends into the first),
     31 metadata
32   transform header, 13 x u32: segments G, animated variable sub-tracks (rotations padded
     to 4, then variable translations and scales), animated rotation / translation / scale
     sub-tracks, constant rotation / translation / scale sub-tracks, then offsets (T) of
     the database header (0xFFFFFFFF: none), the segment headers, the sub-track kinds,
     the constant values and the clip ranges
84   when G > 1: G + 1 x u32 first sample of each segment, then 0xFFFFFFFF
     segment headers, G x (u32 pose bits, u32 rotation bits, u32 translation bits,
     u32 offset (T) of the segment's data [, u32 stored keyframes when stripped: bit 31 - i
     for sample i of the segment])
     sub-track kinds: ceil(J / 16) x u32 for rotations, then translations, then scales
     (when the clip has scale); 2 bits per track from the top bit: 0 default, 1 constant,
     2 animated
     constant values: rotations (drop-w formats: groups of 4 as x x x x, y y y y, z z z z
     floats, the last group short; quatf_full: x y z w each), translations (x y z),
     scales (x y z), float32
     clip ranges of the variable sub-tracks: rotations in groups of 4 as min x x x x,
     min y.., min z.., extent x.., y.., z.. (the last group short), then translations and
     scales as min x y z, extent x y z; float32
     each segment's data (T): one byte per variable sub-track, its bits per component
     (0: constant in the segment, 31: raw float32; rotations padded to 4), align 2; when
     G > 1 its range: rotations in groups of 4 as min x x x x, y.., z.., extent x.., y..,
     z.. u8 (a constant sub-track: its 16-bit value, high byte in min, low in the next row),
     translations and scales as min x y z, extent x y z u8 (constant: x y z u16); align 4;
     then every stored keyframe's pose, sub-tracks in order (rotations, translations,
     scales), components bit-packed from the top bit of each byte: quantised values
     (0 bits for a constant sub-track), raw and full-precision components as the float32's
     32 bits
end  when metadata: offsets (F) of the track list name, the track names (J x u32 offsets
     from that array, then the strings), the parents (J x u32, 0xFFFFFFFF for a root),
     the descriptions (J x 12 f32: precision, shell distance, default rotation x y z w,
     translation x y z, scale x y z) and the keyframe contributions, each 0xFFFFFFFF when
     absent, in the last 20 bytes
```
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field, replace

import numpy as np

from codec.codecs.base import SUB_TRACKS
from codec.errors import CompressedFormatError
from codec.jit import kernel
from codec.model.limits import FREE_TRANSFORMS, MAX_TRANSFORMS, rate_problem

Array = np.ndarray

TAG = 0xAC11AC11
DATABASE_TAG = 0xAC11DB01
VERSION = 10  # ACL 2.1.0
VERSION_NAMES = {7: "2.0.0", 8: "2.1.0-wip", 9: "2.1.0-wip", 10: "2.1.0"}
QVVF = 12
TRACK_TYPES = {0: "float1f", 1: "float2f", 2: "float3f", 3: "float4f", 4: "vector4f"}
ROTATION_FORMATS = {0: "quatf_full", 2: "quatf_drop_w_full", 3: "quatf_drop_w_variable"}
VECTOR_FORMATS = {0: "vector3f_full", 1: "vector3f_variable"}
DEFAULT, CONSTANT, ANIMATED = 0, 1, 2
INVALID = 0xFFFFFFFF
RAW_BITS_STORED = 31  # the per-track byte of a raw float32 sub-track (32 bits each)
MAX_QUANTISED_BITS = 23
HEADER_SIZE = 32  # raw buffer header and tracks header
TRANSFORM_HEADER_SIZE = 52
METADATA_HEADER_SIZE = 20
DESCRIPTION_FLOATS = 12
NO_METADATA_PADDING = 15  # ACL pads a buffer without metadata for its 16-byte loads
MAX_NAME_BYTES = 1 << 16
# An ACL file is far smaller than its poses (a still clip stores a value per sub-track for
# any number of samples), so it may ask for more transforms than a raw file of its size:
# TRANSFORMS_PER_BYTE of them per byte of file, within codec.model.limits' bounds.
TRANSFORMS_PER_BYTE = 64

_HEAD = struct.Struct("<IIIHBBIIfI")
_TRANSFORM = struct.Struct("<13I")


@dataclass(frozen=True, eq=False)
class Metadata:
    """What ACL keeps beside the tracks when asked (acl_compressor -out always does): the
    track list's name, each track's name (J,), parent (J,) (-1 for a root), precision and
    shell distance (J,) and default value (J, 10: rotation xyzw, translation, scale);
    None for each part the file leaves out."""

    name: str | None = None
    track_names: tuple[str, ...] | None = None
    parents: Array | None = None
    precision: Array | None = None
    shell_distance: Array | None = None
    defaults: Array | None = None


@dataclass(frozen=True, eq=False)
class AclTracks:
    """One ACL 2.1 compressed transform track list, parsed and checked.

    kinds (J, 3) DEFAULT / CONSTANT / ANIMATED per track and sub-track (rotation,
    translation, scale; scales are default when the clip has no scale); constants (Kc, 4)
    float32 in sub-track order (rotations by track, then translations, then scales; x y z
    and w for quatf_full, x y z otherwise) and constant_tracks (Kc, 2) the track and
    sub-track of each; animated (Ka, 2) track and sub-track of each animated sub-track in
    stream order, variable (Ka,) whether it is quantised (a variable format) and clip_min /
    clip_extent (Ka, 3) float32 its clip range (zeros when not variable); segments (G, 2)
    first sample and count; retained (S,) bool the keyframes stored (all True without
    stripping); bits (G, Ka) bits per component (0: constant in the segment, 32: raw or
    full-precision float32); segment_range (G, Ka, 6) uint8 each sub-track's range bytes
    as stored (min x y z, extent x y z; a constant-in-segment rotation's 16-bit values high
    byte first, a vector's as three little-endian u16; zeros with one segment); pose_bits
    (G,) bits of one stored keyframe; data the file (padded); data_bits (G,) the bit offset
    of each segment's first keyframe; segment_bytes (G,) each segment's bytes as ACL counts
    them (per-track bytes, range, padding from the segment's start, keyframes). Sizes of
    the file's sections are in `sections`.
    """

    version: int
    num_tracks: int
    num_samples: int
    sample_rate: float  # as stored, a float32
    rotation_format: str
    translation_format: str
    scale_format: str
    has_scale: bool
    default_scale: int
    trivial_defaults: bool
    has_stripped: bool
    wrap: bool
    kinds: Array
    constants: Array
    constant_tracks: Array
    animated: Array
    variable: Array
    clip_min: Array
    clip_extent: Array
    segments: Array
    retained: Array
    bits: Array
    segment_range: Array
    pose_bits: Array
    data: Array
    data_bits: Array
    segment_bytes: Array
    metadata: Metadata
    sections: dict[str, int] = field(default_factory=dict)

    @property
    def num_segments(self) -> int:
        return len(self.segments)

    @property
    def size(self) -> int:
        return int(self.data.size) - _PAD

    def widths(self) -> Array:
        """(Ka,) components stored per animated sub-track: 4 for quatf_full rotations."""
        four = (self.animated[:, 1] == 0) & (self.rotation_format == "quatf_full")
        return np.where(four, 4, 3)


_PAD = 8  # zero bytes after the file so a read of up to 64 bits never runs off its end


def fail(message: str, offset: int | None = None) -> CompressedFormatError:
    """An error naming ACL's format and, when known, the byte where it went wrong."""
    where = "" if offset is None else f" at byte {offset}"
    return CompressedFormatError(f"ACL compressed tracks{where}: {message}")


def transform_budget(size: int) -> int:
    """How many transforms (samples x tracks) a file of `size` bytes may describe."""
    return min(MAX_TRANSFORMS, max(FREE_TRANSFORMS, TRANSFORMS_PER_BYTE * size))


def read(data: bytes) -> AclTracks:
    """Parse an ACL 2.1 compressed transform track list (CompressedFormatError on anything
    wrong: truncation, a hash that does not match, an offset out of place, a version,
    track type or feature Shellscope does not read)."""
    return _Reader(data).tracks()


@kernel
def _fnv1a(data):
    h = np.uint64(2166136261)
    prime = np.uint64(16777619)
    low = np.uint64(0xFFFFFFFF)
    for i in range(data.shape[0]):
        h = ((h ^ np.uint64(data[i])) * prime) & low
    return h


def fnv1a(data: bytes | Array) -> int:
    """ACL's hash of a buffer: 32-bit FNV-1a."""
    buf = np.frombuffer(data, dtype=np.uint8) if isinstance(data, bytes | bytearray) else data
    return int(_fnv1a(np.ascontiguousarray(buf, dtype=np.uint8)))


def without_metadata(data: bytes, t: AclTracks) -> bytes:
    """`data` as ACL writes it when asked for no metadata: the tracks, 15 zero bytes, the
    metadata flag cleared, the size and hash made again (unchanged when it has none)."""
    end = t.sections["tracks_end"]
    if not data[31] & 0x80 and len(data) == end + NO_METADATA_PADDING:
        return bytes(data)
    out = bytearray(data[:end] + bytes(NO_METADATA_PADDING))
    flags = struct.unpack_from("<I", out, 28)[0] & ~(1 << 31)
    struct.pack_into("<I", out, 28, flags)
    struct.pack_into("<I", out, 0, len(out))
    struct.pack_into("<I", out, 4, fnv1a(bytes(out[8:])))
    return bytes(out)


def _in_stream_order(kinds: Array, kind: int) -> Array:
    """(K, 2) track and sub-track of every sub-track of `kind`: rotations by track, then
    translations, then scales (the order ACL stores their values in)."""
    sub, track = np.nonzero(kinds.T == kind)
    return np.stack((track, sub), axis=1).astype(np.int64)


def reorder(t: AclTracks, joint_of_track: Array) -> AclTracks:
    """The same tracks named by other joint numbers: `joint_of_track` (J,) the joint each
    ACL track becomes (a permutation). Stored values keep their order; kinds, the joint of
    each sub-track and the metadata follow the joints."""
    order = np.asarray(joint_of_track, dtype=np.int64)
    if np.array_equal(order, np.arange(t.num_tracks)):
        return t
    kinds = np.empty_like(t.kinds)
    kinds[order] = t.kinds
    m = t.metadata

    def by_joint(a: Array | None) -> Array | None:
        if a is None:
            return None
        out = np.empty_like(a)
        out[order] = a
        return out

    names = None
    if m.track_names is not None:
        names = tuple(m.track_names[i] for i in np.argsort(order))
    parents = None
    if m.parents is not None:
        p = np.where(m.parents >= 0, order[np.maximum(m.parents, 0)], -1)
        parents = by_joint(p)
    meta = Metadata(
        m.name,
        names,
        parents,
        by_joint(m.precision),
        by_joint(m.shell_distance),
        by_joint(m.defaults),
    )
    anim = t.animated.copy()
    anim[:, 0] = order[anim[:, 0]]
    const = t.constant_tracks.copy()
    const[:, 0] = order[const[:, 0]]
    return replace(t, kinds=kinds, animated=anim, constant_tracks=const, metadata=meta)


def _align(offset: int, n: int) -> int:
    return (offset + n - 1) // n * n


class _Reader:
    """The parse, section by section; `self.end` is where the tracks' data must stop (the
    metadata's header, or the end of the file)."""

    def __init__(self, data: bytes) -> None:
        self.raw = bytes(data)
        self.size = len(self.raw)
        self.buf = np.frombuffer(self.raw + bytes(_PAD), dtype=np.uint8)
        self.end = self.size

    # --- little helpers -------------------------------------------------------------------
    def need(self, offset: int, length: int, what: str) -> None:
        if offset < 0 or length < 0 or offset + length > self.end:
            raise fail(
                f"{what} needs bytes {offset}..{offset + length} but the data ends at {self.end}",
                offset,
            )

    def u32(self, offset: int, count: int, what: str) -> Array:
        self.need(offset, 4 * count, what)
        return np.frombuffer(self.raw, dtype="<u4", count=count, offset=offset).astype(np.int64)

    def f32(self, offset: int, count: int, what: str) -> Array:
        self.need(offset, 4 * count, what)
        v = np.frombuffer(self.raw, dtype="<f4", count=count, offset=offset).copy()
        if not np.all(np.isfinite(v)):
            i = int(np.flatnonzero(~np.isfinite(v))[0])
            raise fail(f"{what} holds a value that is not a finite number", offset + 4 * i)
        return v

    # --- sections -------------------------------------------------------------------------
    def tracks(self) -> AclTracks:
        self.header()
        self.transform_header()
        self.read_metadata()
        self.segment_table()
        self.sub_track_kinds()
        self.constant_values()
        self.clip_ranges()
        self.segment_data()
        return AclTracks(
            version=self.version,
            num_tracks=self.J,
            num_samples=self.S,
            sample_rate=self.rate,
            rotation_format=self.rot_format,
            translation_format=self.formats[1],
            scale_format=self.formats[2],
            has_scale=self.has_scale,
            default_scale=self.default_scale,
            trivial_defaults=self.trivial,
            has_stripped=self.stripped,
            wrap=self.wrap,
            kinds=self.kinds,
            constants=self.constants,
            constant_tracks=self.constant_tracks,
            animated=self.animated,
            variable=self.variable,
            clip_min=self.clip_min,
            clip_extent=self.clip_extent,
            segments=self.table,
            retained=self.retained,
            bits=self.bits,
            segment_range=self.seg_range,
            pose_bits=self.pose_bits,
            data=self.buf,
            data_bits=self.data_bits,
            segment_bytes=self.seg_bytes,
            metadata=self.metadata,
            sections=self.sections,
        )

    def header(self) -> None:
        if self.size < HEADER_SIZE:
            raise fail(f"{self.size} bytes is shorter than its {HEADER_SIZE}-byte header")
        size, digest, tag, version, algorithm, ttype, J, S, rate, flags = _HEAD.unpack_from(
            self.raw
        )
        if tag == DATABASE_TAG:
            raise fail("this is an ACL compressed database (.acldb), not compressed tracks")
        if tag != TAG:
            raise fail(f"tag 0x{tag:08X} is not ACL's compressed tracks tag 0x{TAG:08X}", 8)
        if version != VERSION:
            name = VERSION_NAMES.get(version, "unknown")
            raise fail(
                f"version {version} (ACL {name}) is not supported: Shellscope reads ACL 2.1.0 "
                f"(version {VERSION})",
                12,
            )
        if size != self.size:
            raise fail(f"the header says {size} bytes but the data has {self.size}", 0)
        if fnv1a(self.buf[8 : self.size]) != digest:
            raise fail("the hash does not match the data (the file is corrupt)", 4)
        if algorithm != 0:
            raise fail(f"algorithm {algorithm} is not ACL's uniformly sampled one (0)", 14)
        if ttype != QVVF:
            kind = TRACK_TYPES.get(ttype)
            if kind is not None:
                raise fail(
                    f"scalar track lists ({kind} tracks) are not supported: Shellscope reads "
                    "transform (qvvf) tracks",
                    15,
                )
            raise fail(f"track type {ttype} is not one ACL writes", 15)
        if flags & (1 << 8):
            raise fail("clips split into a database (streamed keyframes) are not supported", 28)
        rot = (flags >> 4) & 15
        if rot not in ROTATION_FORMATS:
            raise fail(f"rotation format {rot} is not one ACL 2.1 writes", 28)
        if J == 0:
            raise fail("the track list holds no tracks", 16)
        if S == 0:
            raise fail("the tracks hold no samples", 20)
        problem = rate_problem(float(rate))
        if problem:
            raise fail(f"sample rate: {problem}", 24)
        budget = transform_budget(self.size)
        if J * S > budget:
            raise fail(
                f"{S} samples x {J} tracks = {J * S} transforms is over the limit of {budget} "
                f"for a file of {self.size} bytes",
                16,
            )
        self.version, self.J, self.S, self.rate = version, J, S, float(rate)
        self.has_scale = bool(flags & 1)
        self.default_scale = (flags >> 1) & 1
        self.formats = (
            ROTATION_FORMATS[rot],
            VECTOR_FORMATS[(flags >> 3) & 1],
            VECTOR_FORMATS[(flags >> 2) & 1],
        )
        self.rot_format = self.formats[0]
        self.trivial = bool(flags & (1 << 9))
        self.stripped = bool(flags & (1 << 10))
        self.wrap = bool(flags & (1 << 30))
        self.has_metadata = bool(flags & (1 << 31))
        unknown = flags & ~((1 << 11) - 1) & ~((1 << 30) | (1 << 31))
        if unknown:
            raise fail(f"flags 0x{flags:08X} set bits ACL 2.1 does not define", 28)

    def transform_header(self) -> None:
        self.end = self.size - (METADATA_HEADER_SIZE if self.has_metadata else 0)
        t = self.u32(HEADER_SIZE, 13, "the transform header")
        (G, self.n_var, *counts) = (int(v) for v in t[:8])
        self.anim_counts = counts[:3]
        self.const_counts = counts[3:6]
        db, seg_h, kinds, consts, ranges = (int(v) for v in t[8:])
        if db != INVALID:
            raise fail("clips split into a database are not supported", HEADER_SIZE + 32)
        if not 1 <= G <= self.S:
            raise fail(f"{G} segments for {self.S} samples", HEADER_SIZE)
        self.G = G
        self.offsets = {"segments": seg_h, "kinds": kinds, "constants": consts, "ranges": ranges}
        first = _align(TRANSFORM_HEADER_SIZE, 4) + (4 * (G + 1) if G > 1 else 0)
        expected = [first]
        seg_size = 20 if self.stripped else 16
        expected.append(_align(first + seg_size * G, 4))
        prev = 0
        for name, off in self.offsets.items():
            if off % 4 or off < prev or off < expected[0]:
                raise fail(f"the {name} offset {off} is out of place", HEADER_SIZE + 36)
            prev = off
        if seg_h != first or kinds != expected[1]:
            raise fail("the segment headers are not where ACL puts them", HEADER_SIZE + 36)

    def segment_table(self) -> None:
        G, S = self.G, self.S
        base = HEADER_SIZE
        if G > 1:
            starts = self.u32(base + _align(TRANSFORM_HEADER_SIZE, 4), G + 1, "segment starts")
            if starts[-1] != INVALID or starts[0] != 0:
                raise fail("the segment start table is not 0 .. then 0xFFFFFFFF", base + 52)
            starts = starts[:-1]
            if np.any(np.diff(starts) <= 0) or starts[-1] >= S:
                raise fail("segment starts are not increasing within the samples", base + 52)
        else:
            starts = np.zeros(1, dtype=np.int64)
        counts = np.diff(np.append(starts, S))
        size = 20 if self.stripped else 16
        heads = self.u32(base + self.offsets["segments"], G * size // 4, "segment headers")
        heads = heads.reshape(G, size // 4)
        self.table = np.stack((starts, counts), axis=1)
        self.pose_bits = heads[:, 0]
        self.rot_bits, self.tr_bits = heads[:, 1], heads[:, 2]
        self.data_offsets = heads[:, 3]
        retained = np.ones(S, dtype=bool)
        if self.stripped:
            if np.any(counts > 32):
                raise fail("a segment of more than 32 samples cannot strip keyframes")
            for g, (a, n) in enumerate(self.table):
                mask = int(heads[g, 4])
                kept = np.array([(mask >> (31 - i)) & 1 for i in range(n)], dtype=bool)
                if mask & ((1 << (32 - n)) - 1) or not (kept[0] and kept[-1]):
                    raise fail(
                        f"segment {g} stores keyframes 0x{mask:08X}: it must keep its first and "
                        "last and name no sample beyond its own",
                        base + self.offsets["segments"] + g * size + 16,
                    )
                retained[a : a + n] = kept
        self.retained = retained

    def sub_track_kinds(self) -> None:
        J = self.J
        entries = (J + 15) // 16
        per = 3 if self.has_scale else 2
        words = self.u32(HEADER_SIZE + self.offsets["kinds"], entries * per, "sub-track kinds")
        shifts = 30 - 2 * (np.arange(16 * entries) % 16)
        kinds = np.zeros((J, 3), dtype=np.int8)
        for k in range(per):
            w = words[k * entries : (k + 1) * entries]
            v = (np.repeat(w, 16) >> shifts) & 3
            if np.any(v[:J] == 3):
                raise fail(f"a {SUB_TRACKS[k]} sub-track kind is 3 (not one ACL defines)")
            kinds[:, k] = v[:J]
        self.kinds = kinds
        for k in range(3):
            na = int(np.sum(kinds[:, k] == ANIMATED))
            nc = int(np.sum(kinds[:, k] == CONSTANT))
            if na != self.anim_counts[k] or nc != self.const_counts[k]:
                raise fail(
                    f"the header counts {self.anim_counts[k]} animated and "
                    f"{self.const_counts[k]} constant {SUB_TRACKS[k]}s; the kinds say {na} "
                    f"and {nc}",
                    HEADER_SIZE + 8,
                )
        end = HEADER_SIZE + self.offsets["kinds"] + 4 * entries * per
        if _align(end, 4) != HEADER_SIZE + self.offsets["constants"]:
            raise fail("the constant values do not follow the sub-track kinds", end)
        # stream order: rotations by track, then translations, then scales
        self.animated = _in_stream_order(kinds, ANIMATED)
        self.constant_tracks = _in_stream_order(kinds, CONSTANT)
        variable = np.array([f.endswith("variable") for f in self.formats])
        self.variable = variable[self.animated[:, 1]]
        nr = self.anim_counts[0]
        padded = _align(nr, 4) if variable[0] else 0
        padded += sum(self.anim_counts[k] for k in (1, 2) if variable[k])
        if padded != self.n_var:
            raise fail(
                f"the header counts {self.n_var} variable sub-tracks; the kinds say {padded}",
                HEADER_SIZE + 4,
            )

    def constant_values(self) -> None:
        off = HEADER_SIZE + self.offsets["constants"]
        nr, nt, ns = self.const_counts
        parts: list[Array] = []
        if self.rot_format == "quatf_full":
            parts.append(self.f32(off, 4 * nr, "constant rotations").reshape(nr, 4))
            off += 16 * nr
        else:
            flat = self.f32(off, 3 * nr, "constant rotations")
            rot = np.zeros((nr, 4), dtype=np.float32)
            for g in range(0, nr, 4):
                n = min(4, nr - g)
                rot[g : g + n, :3] = flat[3 * g : 3 * g + 3 * n].reshape(3, n).T
            parts.append(rot)
            off += 12 * nr
        for count, what in ((nt, "constant translations"), (ns, "constant scales")):
            v = np.zeros((count, 4), dtype=np.float32)
            v[:, :3] = self.f32(off, 3 * count, what).reshape(count, 3)
            parts.append(v)
            off += 12 * count
        self.constants = np.concatenate(parts, axis=0)
        self.sections = {"constant_values": off - (HEADER_SIZE + self.offsets["constants"])}
        if _align(off, 4) != HEADER_SIZE + self.offsets["ranges"]:
            raise fail("the clip ranges do not follow the constant values", off)

    def clip_ranges(self) -> None:
        off = start = HEADER_SIZE + self.offsets["ranges"]
        Ka = len(self.animated)
        self.clip_min = np.zeros((Ka, 3), dtype=np.float32)
        self.clip_extent = np.zeros((Ka, 3), dtype=np.float32)
        at = 0
        for k in range(3):
            n = self.anim_counts[k]
            if self.formats[k].endswith("variable") and n:
                flat = self.f32(off, 6 * n, f"clip ranges of the {SUB_TRACKS[k]}s")
                if k == 0:  # groups of 4, component by component
                    rows = np.empty((n, 6), dtype=np.float32)
                    for g in range(0, n, 4):
                        m = min(4, n - g)
                        rows[g : g + m] = flat[6 * g : 6 * g + 6 * m].reshape(6, m).T
                else:
                    rows = flat.reshape(n, 6)
                self.clip_min[at : at + n] = rows[:, :3]
                self.clip_extent[at : at + n] = rows[:, 3:]
                off += 24 * n
            at += n
        self.sections["clip_ranges"] = off - start
        self.segments_start = off

    def segment_data(self) -> None:
        """Per segment: the per-track bytes, the range and where its keyframes start."""
        G, Ka = self.G, len(self.animated)
        sub = self.animated[:, 1]
        var_idx = np.flatnonzero(self.variable)
        var_sub = sub[var_idx]
        n_var_rot = int(np.sum(var_sub == 0))
        pad_rot = _align(n_var_rot, 4)
        # each variable sub-track's byte among the per-track bytes (rotations padded to 4)
        order = np.arange(len(var_idx))
        slot = np.where(var_sub == 0, order, pad_rot + order - n_var_rot)
        self.bits = np.full((G, Ka), 32, dtype=np.int64)  # full precision: float32
        self.seg_range = np.zeros((G, Ka, 6), dtype=np.uint8)
        self.data_bits = np.zeros(G, dtype=np.int64)
        self.seg_bytes = np.zeros(G, dtype=np.int64)
        prev_end = self.segments_start
        widths = np.where((sub == 0) & (self.rot_format == "quatf_full"), 4, 3)
        stored = np.add.reduceat(self.retained.astype(np.int64), self.table[:, 0])
        for g in range(G):
            off = HEADER_SIZE + int(self.data_offsets[g])
            if off < prev_end:
                raise fail(f"segment {g}'s data overlaps what comes before it", off)
            self.need(off, self.n_var, f"segment {g}'s per-track bytes")
            per_track = self.buf[off : off + self.n_var].astype(np.int64)
            b = per_track[slot]
            bad = ~((b <= MAX_QUANTISED_BITS) | (b == RAW_BITS_STORED))
            if G == 1:
                bad |= b == 0  # a constant-in-segment value lives in the segment range
            if np.any(bad):
                i = int(np.flatnonzero(bad)[0])
                raise fail(
                    f"segment {g}: {b[i]} bits per component is not a bit rate ACL 2.1 writes",
                    off + int(slot[i]),
                )
            self.bits[g, var_idx] = np.where(b == RAW_BITS_STORED, 32, b)
            at = _align(off + self.n_var, 2)
            if G > 1 and self.n_var:
                self.need(at, 6 * self.n_var, f"segment {g}'s ranges")
                self.seg_range[g, var_idx] = self._ranges(at, slot, var_sub, pad_rot)
                at += 6 * self.n_var
            at = _align(at, 4)
            comp = self.bits[g] * widths
            rot_bits = int(comp[sub == 0].sum())
            tr_bits = int(comp[sub == 1].sum())
            pose = int(comp.sum())
            if (pose, rot_bits, tr_bits) != (
                int(self.pose_bits[g]),
                int(self.rot_bits[g]),
                int(self.tr_bits[g]),
            ):
                raise fail(
                    f"segment {g}'s header says {int(self.pose_bits[g])} bits a keyframe; its "
                    f"bit rates make {pose}",
                    off,
                )
            need = (pose * int(stored[g]) + 7) // 8
            self.need(at, need, f"segment {g}'s keyframes")
            self.data_bits[g] = 8 * at
            prev_end = at + need
            # ACL's own count (its stats' segment_size): the padding counted from the
            # segment's start, not the file's
            rng = 6 * self.n_var if G > 1 else 0
            self.seg_bytes[g] = _align(_align(self.n_var, 2) + rng, 4) + need
        self.sections["segments"] = prev_end - self.segments_start
        self.sections["tracks_end"] = prev_end

    def _ranges(self, at: int, slot: Array, sub: Array, pad_rot: int) -> Array:
        """(n_var, 6) range bytes of the variable sub-tracks in x y z min, x y z extent
        order, from rotations' groups of four (component rows) and the others' rows."""
        raw = self.buf[at : at + 6 * self.n_var]
        out = np.zeros((len(slot), 6), dtype=np.uint8)
        rot = sub == 0
        if np.any(rot):
            groups = raw[: 6 * pad_rot].reshape(-1, 6, 4)  # (groups, row, lane)
            s = slot[rot]
            out[rot] = groups[s // 4, :, s % 4]
        if np.any(~rot):
            rows = raw[6 * pad_rot :].reshape(-1, 6)
            out[~rot] = rows[slot[~rot] - pad_rot]
        return out

    def read_metadata(self) -> None:
        """The optional metadata (names, parents, descriptions), when the flags say so."""
        self.metadata = Metadata()
        if not self.has_metadata:
            return
        J = self.J
        at = self.size - METADATA_HEADER_SIZE
        if at < HEADER_SIZE + TRANSFORM_HEADER_SIZE:
            raise fail("too short for its metadata header", at)
        name_off, names_off, parents_off, desc_off, _ = struct.unpack_from("<5I", self.raw, at)
        limit = self.end
        self.end = self.size  # the metadata's own parts are read against the whole file

        def place(off: int, length: int, what: str) -> int:
            if off == INVALID:
                return -1
            if off < HEADER_SIZE or off + length > at:
                raise fail(f"the {what} at {off} lie outside the metadata", at)
            return off

        name = None
        if place(name_off, 1, "track list name") >= 0:
            name = self._string(name_off, at, "the track list name")
        names = None
        if place(names_off, 4 * J, "track names") >= 0:
            rel = self.u32(names_off, J, "track name offsets")
            names = tuple(
                self._string(names_off + int(r), at, f"track {j}'s name") for j, r in enumerate(rel)
            )
        parents = None
        if place(parents_off, 4 * J, "parents") >= 0:
            p = self.u32(parents_off, J, "parent indices")
            bad = (p != INVALID) & (p >= J)
            if np.any(bad):
                j = int(np.flatnonzero(bad)[0])
                raise fail(f"track {j}'s parent {p[j]} is not a track", parents_off + 4 * j)
            parents = np.where(p == INVALID, -1, p)
        precision = shell = defaults = None
        if place(desc_off, 4 * DESCRIPTION_FLOATS * J, "track descriptions") >= 0:
            d = self.f32(desc_off, DESCRIPTION_FLOATS * J, "track descriptions")
            d = d.reshape(J, DESCRIPTION_FLOATS).astype(np.float64)
            precision, shell, defaults = d[:, 0], d[:, 1], d[:, 2:]
        self.metadata = Metadata(name, names, parents, precision, shell, defaults)
        self.end = limit

    def _string(self, off: int, stop: int, what: str) -> str:
        if not HEADER_SIZE <= off < stop:
            raise fail(f"{what} at {off} lies outside the metadata", off)
        end = self.raw.find(b"\0", off, min(stop, off + MAX_NAME_BYTES))
        if end < 0:
            raise fail(f"{what} has no end within the metadata", off)
        try:
            return self.raw[off:end].decode("utf-8")
        except UnicodeDecodeError:
            raise fail(f"{what} is not UTF-8 text", off) from None
