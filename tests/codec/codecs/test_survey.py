"""codec/codecs/survey/: the sealed body, the value streams and the local error that the
survey codecs share."""

from __future__ import annotations

import lzma
import struct
import zlib

import numpy as np
import pytest

from codec.codecs.survey import byte_io, frame, local_error, streams
from codec.errors import CompressedFormatError
from codec.formats import load_clip
from codec.model import quat
from tests.codec.helpers import data_clip


@pytest.mark.parametrize(
    ("body", "flag"),
    [(np.random.default_rng(1).bytes(300), byte_io.RAW), (b"abc" * 500, None)],
    ids=["incompressible", "repetitive"],
)
def test_a_sealed_body_comes_back_and_is_stored_the_smallest_way(body, flag) -> None:
    payload = byte_io.seal(3, body)
    assert byte_io.unseal(payload, 3, "t") == body
    if flag is not None:
        assert payload[5] == flag and len(payload) == 6 + len(body)
    else:
        assert payload[5] in (byte_io.DEFLATE, byte_io.LZMA) and len(payload) < len(body) // 10


@pytest.mark.parametrize("flag", [byte_io.DEFLATE, byte_io.LZMA])
def test_a_body_that_unpacks_beyond_the_limit_is_refused(flag) -> None:
    body = b"\0" * (byte_io.MAX_BODY + 1024)
    packed = (
        zlib.compress(body, 9)
        if flag == byte_io.DEFLATE
        else lzma.compress(body, format=lzma.FORMAT_RAW, filters=byte_io.LZMA_FILTERS)
    )
    payload = struct.pack("<BIB", 1, zlib.crc32(body), flag) + packed
    with pytest.raises(CompressedFormatError, match="unpacks to over"):
        byte_io.unseal(payload, 1, "t")


def test_value_streams_round_trip_and_check_their_bits() -> None:
    rng = np.random.default_rng(4)
    tracks = [rng.integers(0, 1 << 12, (30, 4)).astype(np.uint64), np.zeros((1, 3), np.uint64)]
    w = byte_io.ByteWriter()
    streams.write_deltas(w, tracks)
    back = streams.read_deltas(byte_io.ByteReader(bytes(w.buf), "t"), [(30, 4), (1, 3)], [12, 0])
    for a, b in zip(tracks, back, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(CompressedFormatError, match="outside 11 bits"):
        streams.read_deltas(byte_io.ByteReader(bytes(w.buf), "t"), [(30, 4), (1, 3)], [11, 0])


def test_the_local_rotation_error_is_the_farthest_shell_point_moved() -> None:
    rng = np.random.default_rng(9)
    a = quat.normalize(rng.normal(size=(50, 4)))
    b = quat.normalize(a + 0.05 * rng.normal(size=(50, 4)))
    d = 7.0
    pts = np.eye(3) * d
    ra, rb = quat.to_matrix(a), quat.to_matrix(b)
    expect = np.linalg.norm(np.einsum("sij,pj->spi", ra - rb, pts), axis=-1).max(axis=1)
    got = local_error.track_error(
        frame.ROT, a, -b, d, np.ones((50, 3))
    )  # the sign of b does not matter
    np.testing.assert_allclose(got, expect, rtol=1e-9, atol=1e-12)


def test_a_frame_reads_back_what_was_written_and_checks_its_version() -> None:
    """The header and kinds every survey payload starts with: the constant values come back
    as float32, the animated sub-tracks in stored order, and the reader stands at the body."""
    clip = load_clip(data_clip("cmu_81_16_two_samples.acl.sjson"))
    j = clip.num_joints
    kinds = np.full((j, 3), frame.DEFAULT)
    kinds[0] = frame.ANIMATED
    kinds[1, 1] = frame.CONSTANT
    fixed = tuple(b.copy() for b in (clip.skeleton.bind_rotations, clip.skeleton.bind_translations))
    fixed += (clip.skeleton.bind_scales.copy(),)
    fixed[1][1] = (1.25, -2.5, 1e-3)
    w = frame.write_frame(clip, kinds, fixed)
    w.u8(0xAB)  # the codec's own body follows the frame
    payload = byte_io.seal(7, bytes(w.buf))
    r, got = frame.read_frame(payload, clip.skeleton, 7, "t")
    assert (got.num_samples, got.sample_rate, got.looping) == (2, clip.sample_rate, False)
    np.testing.assert_array_equal(got.kinds, kinds)
    assert got.order == [(0, 0), (0, 1), (0, 2)]
    np.testing.assert_array_equal(got.fixed[1][1], np.float32([1.25, -2.5, 1e-3]))
    assert r.u8("body") == 0xAB
    r.done()
    with pytest.raises(CompressedFormatError, match="layout version 7, this decoder reads 8"):
        frame.read_frame(payload, clip.skeleton, 8, "t")
    w = byte_io.ByteWriter()
    streams.write_stream(w, [np.array([-3, 0, 70000]), np.array([5])])
    r = byte_io.ByteReader(bytes(w.buf), "t")
    np.testing.assert_array_equal(streams.read_stream(r, 4, "value"), [-3, 0, 70000, 5])
    with pytest.raises(CompressedFormatError, match="value stream"):
        streams.read_stream(byte_io.ByteReader(bytes(w.buf)[:-1], "t"), 4, "value")
