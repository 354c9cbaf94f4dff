import struct
import zlib

import numpy as np
import pytest

import codec
from codec import decode
from codec.codecs import container
from codec.codecs.acl_style import layout
from codec.codecs.container import HEADER_SIZE
from codec.compression import compress
from codec.errors import CompressedFormatError
from tests.codec.helpers import DATA, chain_clip


@pytest.fixture(scope="module")
def data() -> bytes:
    return compress(codec.load_clip(DATA / "acl" / "cmu_09_02.acl.sjson")).data


def refresh_crc(buf: bytearray) -> bytes:
    struct.pack_into("<I", buf, 8, zlib.crc32(bytes(buf[12:])))
    return bytes(buf)


def test_header_fields(data):
    magic, version, codec_id, flags = struct.unpack_from("<4sBBH", data)
    assert magic == b"SSCF" and version == 3 and codec_id == 0 and flags & 2
    assert struct.unpack_from("<I", data, 12)[0] == len(data)
    nj, ns, rate, word = layout.HEADER.unpack_from(data, HEADER_SIZE)
    assert (nj, ns, rate, word & layout.SEGMENTS_MASK) == (44, 26, 24.0, 1)
    c = decode(data)
    assert c.skeleton.num_joints == 44 and c.num_samples == 26 and c.sample_rate == 24
    assert c.codec_name == "acl-style"


def as_version_2(data: bytes) -> bytes:
    """The same file as a version 2 file (before codecs were named): its 40-byte header
    held the acl-style fields, the animation data and metadata followed unchanged."""
    frame = container.read(data)
    nj, ns, rate, word = layout.HEADER.unpack_from(frame.payload)
    anim = frame.payload[layout.HEADER_SIZE :]
    meta = data[frame.compressed_size :]
    flags = (1 if word & layout.WRAP_BIT else 0) | (2 if meta else 0)
    flags |= 4 if word & layout.LAYOUTS_BIT else 0
    fields = (40 + len(anim) + len(meta), nj, ns, rate, word & layout.SEGMENTS_MASK, len(anim))
    head = struct.Struct("<4sHHIIIIdII")
    rest = head.pack(b"SSCF", 2, flags, 0, *fields)[12:] + anim + meta
    return head.pack(b"SSCF", 2, flags, zlib.crc32(rest), *fields)[:12] + rest


@pytest.mark.parametrize("looping", [False, True])
def test_a_version_2_file_decodes_as_acl_style(looping):
    clip = chain_clip(num_samples=41)
    if looping:
        last = clip.translations[:1]
        clip = clip.replace(translations=np.concatenate([clip.translations[:-1], last]))
    r = compress(clip)
    assert r.decoder.wrap == looping
    old = as_version_2(r.data)
    assert len(old) == len(r.data)  # the same bytes, framed differently
    decoded = decode(old)
    assert decoded.codec_name == "acl-style" and decoded.wrap == looping
    for got, want in zip(
        (decoded.decode_source().rotations, decoded.decode_source().translations),
        (r.lossy.rotations, r.lossy.translations),
        strict=True,
    ):
        np.testing.assert_array_equal(got, want)
    frame = container.read(old)
    assert frame.version == 2 and frame.compressed_size == r.stats["compressed_size"]


def test_version_1_and_unknown_versions_get_one_line():
    v1 = b"SSCF" + struct.pack("<H", 1) + bytes(40)
    with pytest.raises(CompressedFormatError, match="version 1 .*compress the clip again"):
        decode(v1)
    with pytest.raises(CompressedFormatError, match="format version 9 at byte 4"):
        decode(b"SSCF" + bytes([9, 0]) + bytes(40))


def test_an_unknown_codec_id_is_named(data):
    buf = bytearray(data)
    buf[5] = 200
    with pytest.raises(CompressedFormatError, match="codec id 200 at byte 5"):
        decode(refresh_crc(buf))


def test_without_metadata_needs_the_skeleton():
    clip = chain_clip()
    r = compress(clip, codec.CompressionSettings(include_metadata=False))
    assert r.stats["metadata_size"] == 0
    with pytest.raises(CompressedFormatError, match="skeleton"):
        decode(r.data)
    np.testing.assert_array_equal(
        decode(r.data, clip.skeleton).decode_all().rotations,
        r.lossy.rotations[: r.decoder.num_samples],
    )


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda b: b[:5], "shorter than"),
        (lambda b: b[:-5], "says"),
        (lambda b: b"XXXX" + b[4:], "magic"),
        (lambda b: b[:4] + struct.pack("<H", 9) + b[6:], "version"),
        (lambda b: b[:100] + bytes([b[100] ^ 0x10]) + b[101:], "CRC"),
    ],
)
def test_broken_files_are_refused(data, mutate, message):
    with pytest.raises(CompressedFormatError, match=message):
        decode(mutate(data))


def test_lying_counts_with_a_valid_crc_are_refused(data):
    buf = bytearray(data)
    struct.pack_into("<I", buf, HEADER_SIZE + 4, 10_000_000)  # num_samples
    with pytest.raises(CompressedFormatError):
        decode(refresh_crc(buf))
    buf = bytearray(data)
    struct.pack_into("<I", buf, 16, 1 << 30)  # payload size
    with pytest.raises(CompressedFormatError, match="past the end"):
        decode(refresh_crc(buf))


def test_fuzz_only_compressed_format_errors(data):
    rng = np.random.default_rng(11)
    outcomes = {"error": 0, "ok": 0}
    for i in range(1500):
        buf = bytearray(data)
        op = i % 4
        if op == 0:
            buf = buf[: int(rng.integers(0, len(buf)))]
        elif op == 1:
            for _ in range(int(rng.integers(1, 4))):
                pos = int(rng.integers(0, len(buf)))
                buf[pos] ^= 1 << int(rng.integers(0, 8))
        elif op == 2:
            pos = int(rng.integers(HEADER_SIZE, len(buf)))
            buf[pos:pos] = rng.integers(0, 256, int(rng.integers(1, 30)), dtype=np.uint8).tobytes()
        # ops 1-3 re-sign the CRC half of the time so the parser itself is exercised
        if op == 3 or (op in (1, 2) and i % 8 < 4):
            pos = int(rng.integers(HEADER_SIZE, len(buf)))
            buf[pos] = int(rng.integers(0, 256))
            if len(buf) >= HEADER_SIZE:
                struct.pack_into("<I", buf, 12, len(buf))
                buf = bytearray(refresh_crc(buf))
        try:
            clip = decode(bytes(buf)).decode_all()
            assert np.all(np.isfinite(clip.translations)) and np.all(np.isfinite(clip.scales))
            outcomes["ok"] += 1
        except CompressedFormatError:
            outcomes["error"] += 1
    # every unsigned mutation must be caught; re-signed ones may decode to a valid clip
    assert outcomes["error"] >= 750 and outcomes["ok"] > 0


def test_load_clip_of_a_looping_ssc_has_the_source_sample_count(tmp_path):
    clip = chain_clip(num_samples=41)
    clip = clip.replace(
        translations=np.concatenate([clip.translations[:-1], clip.translations[:1]])
    )
    r = compress(clip)
    assert r.decoder.wrap
    path = tmp_path / "loop.ssc"
    path.write_bytes(r.data)
    back = codec.load_clip(path)
    assert back.num_samples == 41 and back.looping and back.name == "loop"
    np.testing.assert_array_equal(back.rotations, r.lossy.rotations)


def test_sub_tracks_of_a_kind_are_argwheres_pairs() -> None:
    from codec.codecs.acl_style.layout import sub_tracks_of

    rng = np.random.default_rng(2)
    for kinds in [np.zeros((1, 3), np.uint8)] + [
        rng.integers(0, 3, (int(rng.integers(1, 40)), 3)).astype(np.uint8) for _ in range(100)
    ]:
        for kind in range(3):
            got = sub_tracks_of(kinds, kind)
            assert got.dtype == np.int64 and got.flags.c_contiguous
            np.testing.assert_array_equal(got, np.argwhere(kinds == kind).reshape(-1, 2))
