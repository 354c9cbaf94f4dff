import struct
import zlib

import numpy as np
import pytest

import codec
from codec.compressor import compress
from codec.decoder import decode
from codec.errors import CompressedFormatError
from codec.ssc_format import HEADER_SIZE
from tests.codec.helpers import DATA, chain_clip


@pytest.fixture(scope="module")
def data() -> bytes:
    return compress(codec.load_clip(DATA / "acl" / "cmu_09_02.acl.sjson")).data


def refresh_crc(buf: bytearray) -> bytes:
    struct.pack_into("<I", buf, 8, zlib.crc32(bytes(buf[12:])))
    return bytes(buf)


def test_header_fields(data):
    magic, version, flags = struct.unpack_from("<4sHH", data)
    assert magic == b"SSCF" and version == 3 and flags & 2
    assert struct.unpack_from("<I", data, 12)[0] == len(data)
    c = decode(data)
    assert c.skeleton.num_joints == 44 and c.num_samples == 26 and c.sample_rate == 24


def test_without_metadata_needs_the_skeleton():
    clip = chain_clip()
    r = compress(clip, codec.CompressionSettings(include_metadata=False))
    assert r.stats["metadata_size"] == 0
    with pytest.raises(CompressedFormatError, match="skeleton"):
        decode(r.data)
    np.testing.assert_array_equal(
        decode(r.data, clip.skeleton).decode_all().rotations,
        r.lossy.rotations[: r.compressed.num_samples],
    )


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda b: b[:20], "shorter than"),
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
    struct.pack_into("<I", buf, 20, 10_000_000)  # num_samples
    with pytest.raises(CompressedFormatError):
        decode(refresh_crc(buf))
    buf = bytearray(data)
    struct.pack_into("<I", buf, 36, 1 << 30)  # animation size
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
    assert r.compressed.wrap
    path = tmp_path / "loop.ssc"
    path.write_bytes(r.data)
    back = codec.load_clip(path)
    assert back.num_samples == 41 and back.looping and back.name == "loop"
    np.testing.assert_array_equal(back.rotations, r.lossy.rotations)
