"""The frame every survey payload starts with: the sub-tracks' kinds (default, constant,
animated; codec.codecs.base.TrackKind) and their fixed values, and the clip's header (joint
and sample counts, rate, looping), written and read back with every value checked."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from codec.codecs.base import SUB_TRACKS, TrackKind
from codec.codecs.survey.byte_io import (
    ByteReader,
    ByteWriter,
    pack_uint,
    packed_size,
    unpack_uint,
    unseal,
)
from codec.model.clip import Clip, Skeleton

Array = np.ndarray

ROT, TR, SC = 0, 1, 2
WIDTHS = (4, 3, 3)  # components per sub-track kind
SUB_NAMES = SUB_TRACKS
DEFAULT, CONSTANT, ANIMATED = (
    int(TrackKind.DEFAULT),
    int(TrackKind.CONSTANT),
    int(TrackKind.ANIMATED),
)


def write_kinds(w: ByteWriter, kinds: Array, fixed: tuple[Array, Array, Array]) -> None:
    """Kinds (J, 3) at 2 bits each, then the constant values as float32, joint-major
    (rotation x y z w, translation, scale)."""
    w.raw(pack_uint(kinds.reshape(-1), 2))
    vals = []
    for j in range(kinds.shape[0]):
        for k in range(3):
            if kinds[j, k] == CONSTANT:
                vals.append(np.asarray(fixed[k][j], np.float32))
    if vals:
        w.raw(np.concatenate(vals).astype("<f4").tobytes())


def read_kinds(r: ByteReader, skeleton: Skeleton) -> tuple[Array, list[Array]]:
    J = skeleton.num_joints
    kinds = unpack_uint(r.take(packed_size(3 * J, 2), "sub-track kinds"), 3 * J, 2)
    kinds = kinds.astype(np.int64).reshape(J, 3)
    if np.any(kinds > ANIMATED):
        raise r.fail("a sub-track kind is not default, constant or animated")
    fixed = [
        skeleton.bind_rotations.copy(),
        skeleton.bind_translations.copy(),
        skeleton.bind_scales.copy(),
    ]
    for j, k in np.argwhere(kinds == CONSTANT):
        v = r.array("<f4", WIDTHS[k], f"constant {SUB_NAMES[k]} of joint {j}")
        if not np.all(np.isfinite(v)):
            raise r.fail(f"constant {SUB_NAMES[k]} of joint {j} is not finite")
        if k == ROT:
            n = np.linalg.norm(v)
            if not n > 0:
                raise r.fail(f"constant rotation of joint {j} is zero")
            v = v / n
        fixed[k][j] = v
    return kinds, fixed


def write_header(w: ByteWriter, clip: Clip) -> None:
    """Joint count (u32), source sample count (u32), source rate (f64), looping (u8)."""
    w.u32(clip.num_joints)
    w.u32(clip.num_samples)
    w.f64(clip.sample_rate)
    w.u8(1 if clip.looping else 0)


def read_header(r: ByteReader, skeleton: Skeleton) -> tuple[int, float, bool]:
    J = r.u32("joint count")
    if J != skeleton.num_joints:
        raise r.fail(f"the data has {J} joints, the skeleton {skeleton.num_joints}")
    S = r.u32("sample count")
    rate = r.f64("sample rate")
    looping = r.u8("looping flag")
    if S < 1 or S > 10_000_000:
        raise r.fail(f"sample count {S} is out of range")
    if not (np.isfinite(rate) and rate > 0):
        raise r.fail(f"sample rate {rate} is not a positive number")
    if looping > 1:
        raise r.fail(f"looping flag {looping} is not 0 or 1")
    return S, rate, bool(looping)


def animated_order(kinds: Array) -> list[tuple[int, int]]:
    """(joint, sub) of every animated sub-track, joint-major: the order tracks are written."""
    return [(int(j), int(k)) for j, k in np.argwhere(kinds == ANIMATED)]


class Frame(NamedTuple):
    """What a payload's frame says: source sample count, rate, looping, kinds (J, 3), the
    fixed values (bind or constant) and the animated sub-tracks (joint, sub) in stored
    order."""

    num_samples: int
    sample_rate: float
    looping: bool
    kinds: Array
    fixed: list[Array]
    order: list[tuple[int, int]]


def write_frame(clip: Clip, kinds: Array, fixed: tuple[Array, Array, Array]) -> ByteWriter:
    """A writer holding the header and the kinds: a codec's body starts so, its tracks
    follow (in `animated_order`)."""
    w = ByteWriter()
    write_header(w, clip)
    write_kinds(w, kinds, fixed)
    return w


def read_frame(
    payload: bytes, skeleton: Skeleton, version: int, codec: str
) -> tuple[ByteReader, Frame]:
    """A sealed payload's body unsealed (its layout `version` checked), its header and kinds
    read: the reader at the codec's tracks, and what the frame says."""
    r = ByteReader(unseal(payload, version, codec), codec)
    S, rate, looping = read_header(r, skeleton)
    kinds, fixed = read_kinds(r, skeleton)
    return r, Frame(S, rate, looping, kinds, fixed, animated_order(kinds))
