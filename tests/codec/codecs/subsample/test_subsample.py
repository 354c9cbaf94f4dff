"""subsample: the lowest uniform rate, also one that does not divide the source rate;
strict from the bytes on every real clip, every rounding mode, corrupt payloads refused."""

from __future__ import annotations

import numpy as np
import pytest

from codec.codecs.subsample import SubsampleCodec
from codec.codecs.subsample.codec import APPROX_SHARE, approx_errors
from codec.codecs.survey.fitting import continuous_rotations
from tests.codec.codecs import survey_checks as checks

CODEC = SubsampleCodec()


def test_identity() -> None:
    checks.check_identity(CODEC)


def test_round_trip_real_and_hand_made() -> None:
    checks.check_round_trip(CODEC, checks.load("acl/cmu_09_02.acl.sjson"))
    checks.check_round_trip(CODEC, checks.chain_clip(np.sin(np.linspace(0.0, 4.0, 40))))


def test_slow_motion_is_stored_at_a_lower_rate_that_need_not_divide_the_source_rate() -> None:
    clip = checks.chain_clip(0.3 * np.sin(np.linspace(0.0, 2.0, 61)))
    enc = CODEC.encode(clip, checks.SETTINGS)
    stored = enc.details["num_samples_stored"]
    assert enc.details["strict"] and 2 < stored < 61
    assert 60 % (stored - 1) != 0  # not a divisor: the samples leave the source grid
    # one sample fewer does not meet the sub-sampling's share of the precision
    rot = continuous_rotations(clip)
    assert np.any(approx_errors(clip, rot, stored - 1) > APPROX_SHARE * 0.01)
    all_ = CODEC.decode(enc.payload, clip.skeleton).decode_all()
    assert all_.num_samples == stored
    assert all_.sample_rate == pytest.approx(30.0 * (stored - 1) / 60)


@pytest.mark.parametrize("item", checks.STRICT_IDS)
def test_strict_on_every_real_clip_from_the_bytes(item: str) -> None:
    checks.check_strict(CODEC, item)


def test_every_rounding_mode() -> None:
    checks.check_rounding(CODEC, checks.chain_clip(0.3 * np.sin(np.linspace(0.0, 2.0, 61))))
    checks.check_rounding(CODEC, checks.load("acl/cmu_09_02.acl.sjson"))


def test_corrupt_and_truncated_payloads_are_refused() -> None:
    checks.check_corrupt(CODEC, checks.load("acl/cmu_09_02.acl.sjson"))
