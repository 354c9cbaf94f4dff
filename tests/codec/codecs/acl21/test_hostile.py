"""Hostile ACL bytes: truncated, bit-flipped (the hash made right again, so the structure's
own checks are what stand), or lying about their sizes; each is an error naming ACL's
format, never a crash, never an allocation the file cannot justify."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codec.codecs.acl21 import layout
from codec.codecs.acl21.decoder import AclDecoder
from codec.errors import ClipFormatError, CompressedFormatError
from codec.formats import load_clip
from tests.codec.codecs.acl21.helpers import fixture, raw_clip

SMALL = "cmu_49_15_keys6_linear.acl"  # segments, stripped keyframes, metadata
DATA = fixture(SMALL)


def rehashed(data: bytes | bytearray) -> bytes:
    """`data` with its size and hash fields made to agree with it."""
    out = bytearray(data)
    if len(out) >= 8:
        struct.pack_into("<I", out, 0, len(out))
        struct.pack_into("<I", out, 4, layout.fnv1a(bytes(out[8:])))
    return bytes(out)


def decode_or_refuse(data: bytes) -> None:
    """Parse and decode every keyframe; only CompressedFormatError may come out."""
    try:
        tracks = layout.read(data)
    except CompressedFormatError as e:
        assert str(e).startswith("ACL compressed tracks") and "\n" not in str(e)
        return
    skeleton = raw_clip(SMALL).skeleton
    if tracks.num_tracks != skeleton.num_joints:
        return
    with np.errstate(all="ignore"):
        decoder = AclDecoder(tracks, skeleton)
        decoder.grid()
        decoder.poses_at(np.linspace(0, decoder.duration, 5), "none")


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(DATA) - 1), st.integers(0, 7))
def test_a_flipped_bit_anywhere_is_refused_or_decodes(at: int, bit: int) -> None:
    data = bytearray(DATA)
    data[at] ^= 1 << bit
    decode_or_refuse(rehashed(data))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, len(DATA) - 1))
def test_a_truncated_file_is_refused(length: int) -> None:
    with pytest.raises(CompressedFormatError):
        layout.read(DATA[:length])  # the size field then disagrees
    decode_or_refuse(rehashed(DATA[:length]))


@pytest.mark.parametrize(
    ("offset", "value", "message"),
    [
        (16, 0xFFFFFFFF, "transforms is over the limit"),  # tracks
        (20, 0x7FFFFFFF, "transforms is over the limit"),  # samples
        (32, 0xFFFFFFFF, "segments for"),  # segments
        (36, 0x7FFFFFFF, "variable sub-tracks"),
        (76, 0x7FFFFFF0, "out of place|follow"),  # constant values offset
    ],
)
def test_sizes_it_cannot_hold_are_refused_before_anything_is_allocated(
    offset: int, value: int, message: str
) -> None:
    data = bytearray(DATA)
    struct.pack_into("<I", data, offset, value)
    with pytest.raises(CompressedFormatError, match=message):
        layout.read(rehashed(data))


def test_a_hostile_file_opened_as_a_clip_names_the_file(tmp_path) -> None:
    path = tmp_path / "broken.acl"
    data = bytearray(DATA)
    data[300] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ClipFormatError, match=r"broken\.acl.*hash does not match"):
        load_clip(path)
    path.write_bytes(b"\x00" * 3)
    with pytest.raises(ClipFormatError, match=r"broken\.acl.*shorter than its 32-byte header"):
        load_clip(path)
