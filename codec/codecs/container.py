"""The .ssc container: which codec wrote the file, its payload, and the optional skeleton.

Every codec's bytes travel in the same frame, so `decompress`, `info` and the window read any
codec's file: the container names the codec (its id, codec.codecs.registry) and the codec
reads its own payload. Little-endian, offsets from the start of the file:

    header (20 bytes)
      0  magic         b"SSCF"
      4  version       u8 (VERSION)
      5  codec id      u8 (acl-style 0, subsample 1, keyreduce 2, curve 3, wavelet 4,
                      acl-2.1 21)
      6  flags         u16: bit 1 metadata, bit 2 settings (other bits must be 0)
      8  crc32         u32 of every byte after this field (zlib.crc32)
     12  total_size    u32 length of the whole file
     16  payload_size  u32
    payload (payload_size bytes; header + payload is `compressed_size`, the same for every
      codec)
    metadata (flag bit 1; `metadata_size`): per joint u16 name length, UTF-8 name, i32
      parent, f64 x 10 bind pose (rotation xyzw, translation, scale), f64 precision, f64
      shell distance; as many joints as the bytes hold
    settings (flag bit 2): the run's settings block (codec.run_settings: JSON, UTF-8), then
      u32 its length, at the very end of the file; `python -m codec info` shows it and
      `compress --settings FILE.ssc` runs it again. Files without it are as before.

Version 2 files (before codecs were named) are acl-style files: their 40-byte header is read
and handed on as an acl-style payload (LEGACY_ACL_STYLE). Version 1 files are refused with a
message. Reading trusts nothing: the CRC, sizes and every metadata number are checked, and
what the metadata decodes to must be a skeleton the codec can hold (codec.model.limits).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import numpy as np

from codec.errors import CompressedFormatError
from codec.model.clip import Skeleton
from codec.model.limits import distance_problem, first_out_of_range, value_problem

MAGIC = b"SSCF"
VERSION = 3
HEADER = struct.Struct("<4sBBHIII")
HEADER_SIZE = HEADER.size  # 20
FLAG_METADATA = 2
FLAG_SETTINGS = 4
_LENGTH = struct.Struct("<I")
_JOINT_RECORD = np.dtype(
    [("parent", "<i4"), ("bind", "<f8", 10), ("prec", "<f8"), ("shell", "<f8")]
)
_MIN_JOINT_BYTES = 2 + _JOINT_RECORD.itemsize

# Version 2: magic, version u16, flags u16 (wrap 1, metadata 2, layouts 4), crc32, total,
# joints, stored samples, sample rate f64, segments, animation bytes. The acl-style payload
# keeps those fields (its own 20-byte header) and the animation data as they were.
_V2_HEADER = struct.Struct("<4sHHIIIIdII")
_V2_FLAGS = 1 | 2 | 4
LEGACY_ACL_STYLE = 0  # the codec id every version 2 file is read as


@dataclass(frozen=True, eq=False)
class Container:
    """A read .ssc file: the codec id, the payload and the skeleton of the metadata block."""

    codec_id: int
    payload: bytes
    skeleton: Skeleton | None
    version: int
    flags: int
    crc: int
    data: bytes  # the whole file
    compressed_size: int  # header and payload
    metadata_size: int
    settings: bytes = b""  # the settings block's JSON (flag bit 2), b"" without one


def write(
    codec_id: int, payload: bytes, skeleton: Skeleton | None = None, settings: bytes = b""
) -> Container:
    """The file of one codec's payload, with the skeleton's metadata block and the run's
    settings block (JSON bytes) when given."""
    meta = metadata_bytes(skeleton) if skeleton is not None else b""
    tail = settings + _LENGTH.pack(len(settings)) if settings else b""
    flags = (FLAG_METADATA if meta else 0) | (FLAG_SETTINGS if settings else 0)
    total = HEADER_SIZE + len(payload) + len(meta) + len(tail)
    rest = HEADER.pack(MAGIC, VERSION, codec_id, flags, 0, total, len(payload))[12:]
    rest += payload + meta + tail
    head = HEADER.pack(MAGIC, VERSION, codec_id, flags, zlib.crc32(rest), 0, 0)[:12]
    return Container(
        codec_id,
        bytes(payload),
        skeleton,
        VERSION,
        flags,
        zlib.crc32(rest),
        head + rest,
        HEADER_SIZE + len(payload),
        len(meta),
        bytes(settings),
    )


def with_settings(data: bytes, settings: bytes) -> bytes:
    """A .ssc file with its settings block replaced by `settings` (the payload and the
    metadata byte for byte as they were): how a run's settings are stamped on its file."""
    frame = read(data)
    if frame.version != VERSION:
        raise CompressedFormatError(f"format version {frame.version}: settings need {VERSION}")
    return write(frame.codec_id, frame.payload, frame.skeleton, settings).data


def read(data: bytes) -> Container:
    """Parse and check the frame (CompressedFormatError on anything wrong); the payload is
    the codec's to read."""
    data = bytes(data)
    if len(data) < 6:
        raise CompressedFormatError(f"{len(data)} bytes is shorter than a .ssc header")
    if data[:4] != MAGIC:
        raise CompressedFormatError(f"bad magic at byte 0: expected {MAGIC!r} (a .ssc file)")
    version = data[4] if data[4] >= 3 else struct.unpack_from("<H", data, 4)[0]
    if version == 2:
        return _read_v2(data)
    if version != VERSION:
        hint = " (written by an older Shellscope: compress the clip again)" if version == 1 else ""
        raise CompressedFormatError(
            f"format version {version} at byte 4, this reader knows 2 and {VERSION}{hint}"
        )
    if len(data) < HEADER_SIZE:
        raise CompressedFormatError(
            f"{len(data)} bytes is shorter than the {HEADER_SIZE}-byte header"
        )
    _, _, codec_id, flags, crc, total, size = HEADER.unpack_from(data)
    _check_frame(data, total, crc, flags, FLAG_METADATA | FLAG_SETTINGS)
    end = HEADER_SIZE + size
    if end > len(data):
        raise CompressedFormatError(f"payload of {size} bytes (byte 16) runs past the end")
    meta_end, settings = _settings(data, end, flags & FLAG_SETTINGS)
    skeleton = _metadata(data[:meta_end], end, flags & FLAG_METADATA)
    return Container(
        codec_id,
        data[HEADER_SIZE:end],
        skeleton,
        version,
        flags,
        crc,
        data,
        end,
        meta_end - end,
        settings,
    )


def _settings(data: bytes, start: int, present: int) -> tuple[int, bytes]:
    """Where the metadata ends and the settings block's bytes (b"" without the flag)."""
    if not present:
        return len(data), b""
    if len(data) - start < _LENGTH.size:
        raise CompressedFormatError("the settings flag is set but the file ends before its length")
    (length,) = _LENGTH.unpack_from(data, len(data) - _LENGTH.size)
    begin = len(data) - _LENGTH.size - length
    if begin < start:
        raise CompressedFormatError(
            f"settings block of {length} bytes (byte {len(data) - _LENGTH.size}) runs past "
            "the payload"
        )
    return begin, data[begin : len(data) - _LENGTH.size]


def _check_frame(data: bytes, total: int, crc: int, flags: int, known: int) -> None:
    if total != len(data):
        raise CompressedFormatError(
            f"header says {total} bytes at byte 12, the data has {len(data)}"
        )
    if zlib.crc32(data[12:]) != crc:
        raise CompressedFormatError("CRC mismatch (byte 8): the data is corrupt")
    if flags & ~known:
        raise CompressedFormatError(f"unknown flags {flags:#x} at byte 6")


def _read_v2(data: bytes) -> Container:
    """A version 2 file as an acl-style payload: its header's fields, then its animation."""
    if len(data) < _V2_HEADER.size:
        raise CompressedFormatError(
            f"{len(data)} bytes is shorter than the {_V2_HEADER.size}-byte version 2 header"
        )
    _, _, flags, crc, total, nj, ns, rate, ng, anim = _V2_HEADER.unpack_from(data)
    _check_frame(data, total, crc, flags, _V2_FLAGS)
    end = _V2_HEADER.size + anim
    if end > len(data):
        raise CompressedFormatError(f"animation data of {anim} bytes runs past the end")
    if ng >= 1 << 30:
        raise CompressedFormatError(f"implausible counts: {nj} joints, {ns} samples, {ng} segments")
    word = ng | (1 << 30 if flags & 1 else 0) | (1 << 31 if flags & 4 else 0)
    payload = struct.pack("<IIdI", nj, ns, rate, word) + data[_V2_HEADER.size : end]
    skeleton = _metadata(data, end, flags & FLAG_METADATA)
    return Container(LEGACY_ACL_STYLE, payload, skeleton, 2, flags, crc, data, end, len(data) - end)


def _metadata(data: bytes, start: int, present: int) -> Skeleton | None:
    if present:
        return read_metadata(data, start)
    if len(data) > start:
        raise CompressedFormatError(f"{len(data) - start} unexpected bytes after the payload")
    return None


def metadata_bytes(skeleton: Skeleton) -> bytes:
    """The metadata block of a skeleton (see the module docstring)."""
    records = np.zeros(skeleton.num_joints, dtype=_JOINT_RECORD)
    records["parent"] = skeleton.parents
    records["bind"] = np.concatenate(
        (skeleton.bind_rotations, skeleton.bind_translations, skeleton.bind_scales), axis=1
    )
    records["prec"] = skeleton.precision
    records["shell"] = skeleton.shell_distance
    flat = records.tobytes()
    size = _JOINT_RECORD.itemsize
    out = []
    for j, name in enumerate(skeleton.names):
        raw = name.encode("utf-8")
        out += [len(raw).to_bytes(2, "little"), raw, flat[j * size : (j + 1) * size]]
    return b"".join(out)


def read_metadata(data: bytes, start: int) -> Skeleton:
    """The skeleton of the metadata block from `start` to the end of `data`."""
    names, records = [], []
    pos, end = start, len(data)
    size = _JOINT_RECORD.itemsize
    while pos < end:
        j = len(names)
        if end - pos < _MIN_JOINT_BYTES:
            raise CompressedFormatError(
                f"truncated at byte {pos}: joint {j} of the metadata needs at least "
                f"{_MIN_JOINT_BYTES} bytes, {end - pos} remain"
            )
        (length,) = struct.unpack_from("<H", data, pos)
        if pos + 2 + length + size > end:
            raise CompressedFormatError(
                f"truncated at byte {pos}: joint {j} of the metadata needs "
                f"{2 + length + size} bytes, {end - pos} remain"
            )
        try:
            names.append(data[pos + 2 : pos + 2 + length].decode("utf-8"))
        except UnicodeDecodeError as e:
            raise CompressedFormatError(f"name of joint {j} is not UTF-8 ({e})") from None
        records.append(data[pos + 2 + length : pos + 2 + length + size])
        pos += 2 + length + size
    rec = np.frombuffer(b"".join(records), dtype=_JOINT_RECORD)
    b = rec["bind"].astype(np.float64)
    bad = first_out_of_range(b) if len(b) else None
    if bad is not None:
        j, c = bad
        field = ("bind rotation", "bind translation", "bind scale")[(c >= 4) + (c >= 7)]
        raise CompressedFormatError(
            f"metadata of joint {j} ({names[j]!r}): {field} {value_problem(float(b[j, c]))}"
        )
    for label, values in (("precision", rec["prec"]), ("shell distance", rec["shell"])):
        for j, v in enumerate(values):
            problem = distance_problem(float(v))
            if problem:
                raise CompressedFormatError(
                    f"metadata of joint {j} ({names[j]!r}): {label} {problem}"
                )
    try:
        return Skeleton(
            names=tuple(names),
            parents=rec["parent"].astype(np.int64),
            bind_rotations=b[:, :4],
            bind_translations=b[:, 4:7],
            bind_scales=b[:, 7:],
            precision=rec["prec"].astype(np.float64),
            shell_distance=rec["shell"].astype(np.float64),
        )
    except ValueError as e:
        raise CompressedFormatError(f"metadata: {e}") from None
