"""ACL 2.1's compressed tracks read byte by byte: what the headers say equals what ACL's own
stats of the run that wrote them say."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from codec.codecs.acl21 import layout
from codec.codecs.acl21.details import bit_rates, compressed_size, stats_details, track_costs
from codec.errors import CompressedFormatError
from tests.codec.codecs.acl21.helpers import NAMES, acl_stats, fixture
from tests.codec.helpers import DATA


@pytest.mark.parametrize("name", NAMES)
def test_the_headers_say_what_acls_stats_say(name: str) -> None:
    t = layout.read(fixture(name))
    s = acl_stats(name)
    d = stats_details(t)
    assert (t.num_tracks, t.size) == (s["num_bones"], s["compressed_size"])
    assert t.num_samples + t.wrap == s["num_samples"] + s["looping"]
    assert (t.rotation_format, t.translation_format, t.scale_format) == (
        s["rotation_format"],
        s["translation_format"],
        s["scale_format"],
    )
    assert (t.has_scale, t.wrap) == (s["has_scale"], s["looping"])
    assert t.num_segments == s["segmenting"]["num_segments"] == len(s["segments"])
    for kind in ("default", "constant", "animated"):
        for sub in ("rotation", "translation", "scale"):
            key = f"num_{kind}_{sub}_tracks"
            assert d[key] == s[key], key
    assert d["num_stripped_keyframes"] == s["num_stripped_keyframes"]
    for ours, theirs in zip(d["segments"], s["segments"], strict=True):
        assert ours["num_samples"] == theirs["num_samples"]
        assert ours["segment_size"] == theirs["segment_size"]
        assert ours["num_stripped_keyframes"] == theirs.get("num_stripped_keyframes", 0)
    # the bit rate of every variable sub-track in every segment, counted as ACL counts them
    costs = track_costs(t)
    anim = t.animated[t.variable]
    for g, theirs in enumerate(s["segments"]):
        rates = costs.bit_rates[g][anim[:, 0], anim[:, 1]]
        assert np.bincount(rates, minlength=25).tolist() == list(theirs["bit_rate_counts"])


def test_the_tracks_alone_are_acls_compressed_size_without_metadata() -> None:
    t = layout.read(fixture("cmu_09_02.acl"))
    reference = json.loads((DATA / "acl_reference.json").read_text())
    assert (
        compressed_size(t)
        == 3523
        == (reference["clips"]["cmu_09_02.acl.sjson"]["automatic"]["compressed_size"])
    )
    bare = layout.without_metadata(fixture("cmu_09_02.acl"), t)
    assert len(bare) == 3523
    again = layout.read(bare)  # a valid ACL buffer: size and hash made again
    assert again.metadata.track_names is None and again.size == 3523
    assert np.array_equal(again.bits, t.bits) and np.array_equal(again.kinds, t.kinds)


def test_metadata_names_parents_and_descriptions() -> None:
    t = layout.read(fixture("cmu_09_02.acl"))
    m = t.metadata
    assert m.name == "09_02" and m.track_names is not None and m.track_names[:2] == ("09_02", "hip")
    assert m.parents is not None and m.parents[0] == -1 and list(m.parents[1:4]) == [0, 1, 2]
    assert np.all(m.precision == np.float32(0.01)) and np.all(m.shell_distance == 3.0)
    assert m.defaults is not None and np.allclose(np.linalg.norm(m.defaults[:, :4], axis=1), 1)


def test_bit_rate_indices_are_acl_2_1s() -> None:
    assert bit_rates(np.array([0, 1, 23, 32])).tolist() == [0, 1, 23, 24]


def _patched(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    """`data` with one field changed and its hash made right again."""
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    struct.pack_into("<I", out, 4, layout.fnv1a(bytes(out[8:])))
    return bytes(out)


@pytest.mark.parametrize(
    ("offset", "fmt", "value", "message"),
    [
        (12, "<H", 7, r"version 7 \(ACL 2\.0\.0\) is not supported.*2\.1\.0"),
        (15, "<B", 2, r"scalar track lists \(float3f tracks\) are not supported"),
        (28, "<I", 0x8000013E, "database"),
        (8, "<I", layout.DATABASE_TAG, r"compressed database \(\.acldb\)"),
        (8, "<I", 0x12345678, "tag 0x12345678"),
    ],
)
def test_versions_and_features_not_read_say_so_in_one_line(
    offset: int, fmt: str, value: int, message: str
) -> None:
    data = _patched(fixture("cmu_09_02.acl"), offset, fmt, value)
    with pytest.raises(CompressedFormatError, match=message) as e:
        layout.read(data)
    assert "\n" not in str(e.value)


def test_a_corrupt_byte_fails_the_hash() -> None:
    data = bytearray(fixture("cmu_09_02.acl"))
    data[2000] ^= 0x10
    with pytest.raises(CompressedFormatError, match="hash does not match"):
        layout.read(bytes(data))
