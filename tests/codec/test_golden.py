"""The .ssc bytes pinned, and read by the documented layout rather than by our reader.

Round trips cannot see a writer and a reader that agree on a wrong layout (num_samples
stored big-endian by both, say); another implementation reading the documented format
would. So the golden file is parsed here with struct, field by field, from the layouts
written in codec/codecs/container.py and codec/codecs/acl_style/layout.py, and the current
writer must give exactly its bytes. After a deliberate format change:
`python tools/regen_golden.py` (tests/codec/golden.py says which clip and settings).
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

from codec.codecs import container
from codec.formats import load_clip
from codec.formats.ssc import read_ssc
from tests.codec.golden import BIND_MODES, CLIP, GOLDEN, golden_bytes, golden_path

REGEN = "python tools/regen_golden.py"


def _bits(rate: int) -> int:
    """Bits per component at a rate index, as the layout docstring states it: rate 0 none,
    1..23 that many, 24 (raw) a float32."""
    return 32 if rate == 24 else rate


def _unpack_lsb(data: bytes, count: int, width: int, start_bit: int = 0) -> list[int]:
    """`count` fields of `width` bits, LSB first from bit `start_bit`."""
    value = int.from_bytes(data, "little")
    mask = (1 << width) - 1
    return [(value >> (start_bit + i * width)) & mask for i in range(count)]


def parse_documented(data: bytes) -> dict:
    """Every field of a version-3 acl-style .ssc file, read with struct by the documented
    layout; asserts what the docs promise (sizes, CRC, offsets, ends)."""
    magic, version, codec_id, flags, crc, total, payload_size = struct.unpack_from(
        "<4sBBHIII", data, 0
    )
    assert magic == b"SSCF" and codec_id == 0  # acl-style
    assert total == len(data)
    assert crc == zlib.crc32(data[12:])
    assert flags in (0, 2)
    payload = data[20 : 20 + payload_size]
    assert len(payload) == payload_size

    num_joints, num_samples, sample_rate, word = struct.unpack_from("<IIdI", payload, 0)
    num_segments = word & ((1 << 25) - 1)
    bind_code = word >> 25 & 0xF  # 0 strip, 1 none, 2 additive on the bind pose, 3-5 own base
    assert bind_code <= 5
    assert not word >> 29 & 1  # the golden clips strip no keyframe
    wrap, has_layouts = bool(word >> 30 & 1), bool(word >> 31 & 1)
    pos = 20
    kind_bytes = (num_joints * 3 * 2 + 7) // 8
    kinds = np.array(_unpack_lsb(payload[pos : pos + kind_bytes], num_joints * 3, 2))
    kinds = kinds.reshape(num_joints, 3)
    assert set(np.unique(kinds)) <= {0, 1, 2}
    pos += kind_bytes
    codes = np.full(num_joints, -1)  # -1: drops w
    rot_present = np.flatnonzero(kinds[:, 0] != 0)
    if has_layouts:
        n = len(rot_present)
        other = _unpack_lsb(payload[pos:], n, 1)
        m = sum(other)
        stored = _unpack_lsb(payload[pos:], m, 2, start_bit=n)
        codes[rot_present[np.flatnonzero(other)]] = stored
        pos += (n + 2 * m + 7) // 8
    num_constant = int((kinds == 1).sum())
    constants = np.frombuffer(payload, "<f4", num_constant * 3, pos).reshape(-1, 3)
    pos += num_constant * 12
    animated = np.argwhere(kinds == 2)  # joint-major: rotation, translation, scale
    ranges = []
    for joint, sub in animated:
        n = 4 if sub == 0 and codes[joint] == 3 else 3
        lo = np.frombuffer(payload, "<f4", n, pos)
        ext = np.frombuffer(payload, "<f4", n, pos + 4 * n)
        ranges.append((lo, ext))
        pos += 8 * n
    anim_start = 20
    table = [struct.unpack_from("<HI", payload, pos + 6 * g) for g in range(num_segments)]
    pos += 6 * num_segments
    assert sum(size for size, _ in table) == num_samples
    num_animated = len(animated)
    for g, (size, offset) in enumerate(table):
        at = anim_start + offset
        assert at == pos, f"segment {g} starts at {at}, the bytes before it end at {pos}"
        rate_bytes = payload[at : at + num_animated]
        rates = [b & 31 for b in rate_bytes]
        slots = sum(6 for r in rates if r == 0 or (num_segments > 1 and 0 < r < 24))
        bits = sum(3 * _bits(r) for r in rates) * size
        pos = at + num_animated + slots + (bits + 7) // 8
    assert pos == payload_size, f"segments end at {pos}, the payload at {payload_size}"

    joints = []
    meta = 20 + payload_size
    while meta < len(data):
        (length,) = struct.unpack_from("<H", data, meta)
        name = data[meta + 2 : meta + 2 + length].decode("utf-8")
        meta += 2 + length
        parent = struct.unpack_from("<i", data, meta)[0]
        bind = struct.unpack_from("<10d", data, meta + 4)
        prec, shell = struct.unpack_from("<2d", data, meta + 84)
        joints.append((name, parent, bind, prec, shell))
        meta += 100
    assert meta == len(data)
    assert bool(flags & 2) == bool(joints)
    return {
        "version": version,
        "bind": bind_code,
        "num_joints": num_joints,
        "num_samples": num_samples,
        "sample_rate": sample_rate,
        "wrap": wrap,
        "kinds": kinds,
        "constants": constants,
        "ranges": ranges,
        "segments": table,
        "joints": joints,
    }


@pytest.mark.parametrize("bind", BIND_MODES)
def test_the_writer_gives_the_golden_bytes(bind: str) -> None:
    path = golden_path(bind=bind)
    assert path.exists(), f"no golden file for format version {container.VERSION}: run {REGEN}"
    want = path.read_bytes()
    got = golden_bytes(bind)
    if got != want:
        first = next(
            (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
            min(len(got), len(want)),
        )
        pytest.fail(
            f"the written .ssc differs from {path.name} from byte {first} "
            f"({len(got)} vs {len(want)} bytes); if the format changed on purpose, run {REGEN}"
        )


@pytest.mark.parametrize("bind", BIND_MODES)
def test_the_golden_file_follows_the_documented_layout(bind: str) -> None:
    data = golden_path(bind=bind).read_bytes()
    doc = parse_documented(data)
    clip = load_clip(CLIP)
    assert doc["bind"] == {"": 0, "additive": 2}[bind]
    if bind:  # the additive's values are not the clip's: the file's shape is checked above
        return
    assert doc["version"] == container.VERSION
    assert doc["num_joints"] == clip.num_joints == len(doc["joints"])
    assert doc["num_samples"] + doc["wrap"] == clip.num_samples
    assert doc["sample_rate"] == clip.sample_rate
    assert [j[0] for j in doc["joints"]] == list(clip.skeleton.names)
    assert [j[1] for j in doc["joints"]] == clip.skeleton.parents.tolist()
    assert [j[3] for j in doc["joints"]] == clip.skeleton.precision.tolist()
    assert [j[4] for j in doc["joints"]] == clip.skeleton.shell_distance.tolist()
    bind = np.array([j[2] for j in doc["joints"]])
    np.testing.assert_array_equal(bind[:, 7:], clip.skeleton.bind_scales)
    # the clip has every kind of sub-track, so every block of the layout was walked
    assert {0, 1, 2} <= set(np.unique(doc["kinds"]))
    # a constant translation is the clip's own value, in float32
    const_tr = np.argwhere(doc["kinds"] == 1)
    tr_rows = [i for i, (j, sub) in enumerate(const_tr) if sub == 1]
    assert tr_rows
    i = tr_rows[0]
    joint = const_tr[i][0]
    np.testing.assert_allclose(
        doc["constants"][i], clip.translations[0, joint], rtol=0, atol=1e-6 * 100
    )
    # ranges hold each animated track: min <= every raw value <= min + extent (float32)
    animated = np.argwhere(doc["kinds"] == 2)
    for (joint, sub), (lo, ext) in zip(animated, doc["ranges"], strict=True):
        assert np.all(ext >= 0)
        if sub == 1:
            values = clip.translations[:, joint]
            assert np.all(values >= lo - 1e-4) and np.all(values <= lo + ext + 1e-4)


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("ssc-v*/*.ssc")), ids=lambda p: p.parent.name)
def test_every_pinned_version_still_opens(path) -> None:
    """Files of every version the reader claims to read decode to the golden clip."""
    clip = load_clip(CLIP)
    lossy = read_ssc(path)
    assert lossy.num_samples == clip.num_samples
    assert lossy.skeleton.names == clip.skeleton.names
    np.testing.assert_allclose(lossy.translations, clip.translations, rtol=0, atol=0.05)
