"""keyreduce: linear keys found where a clip was keyed, strict from the bytes on every
real clip, every rounding mode, corrupt payloads refused."""

from __future__ import annotations

import numpy as np
import pytest

from codec.codecs.keyreduce import KeyReduceCodec
from tests.codec.codecs import survey_checks as checks

CODEC = KeyReduceCodec()


def test_identity() -> None:
    checks.check_identity(CODEC)


def test_round_trip_real_and_hand_made() -> None:
    checks.check_round_trip(CODEC, checks.load("acl/cmu_09_02.acl.sjson"))
    checks.check_round_trip(CODEC, checks.chain_clip(np.sin(np.linspace(0.0, 4.0, 40))))


def test_a_piecewise_linear_track_keeps_exactly_its_corners() -> None:
    corners = np.array([0, 10, 25, 26, 49])
    values = np.interp(np.arange(50), corners, [0.0, 1.0, -0.5, 0.3, 0.2])
    clip = checks.chain_clip(values)
    enc = CODEC.encode(clip, checks.SETTINGS)
    assert enc.details["strict"]
    # the root's x translation is 10 * values: its keys are the corners, no more
    dec = CODEC.decode(enc.payload, clip.skeleton)
    keys = {(j, k): t.keys.tolist() for j, k, t, _ in dec.tracks}
    assert keys[(0, 1)] == corners.tolist()


def test_keys_every_six_are_found_on_a_keyed_clip() -> None:
    clip = checks.window("keyed/cmu_13_07_keys6_linear.acl.sjson.xz")  # whole: 291 samples
    assert clip.num_samples == 291
    enc = checks.encoded(CODEC, clip)  # the strict check's encoding of it
    assert enc.details["strict"]
    per_track = enc.details["num_keys"] / enc.details["num_animated_tracks"]
    assert per_track <= 50  # 50 keys were placed (every sixth of 291 and the last)


@pytest.mark.parametrize("item", checks.STRICT_IDS)
def test_strict_on_every_real_clip_from_the_bytes(item: str) -> None:
    checks.check_strict(CODEC, item, checks.strict_samples(item))


def test_every_rounding_mode() -> None:
    checks.check_rounding(CODEC, checks.load("acl/cmu_09_02.acl.sjson"))


def test_corrupt_and_truncated_payloads_are_refused() -> None:
    checks.check_corrupt(CODEC, checks.load("acl/cmu_09_02.acl.sjson"))
