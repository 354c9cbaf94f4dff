"""wavelet: an orthonormal D4, finer steps for low sub-bands, strict from the bytes on every
real clip, every rounding mode, corrupt payloads refused."""

from __future__ import annotations

import numpy as np
import pytest

from codec.codecs.survey import streams
from codec.codecs.survey.byte_io import ByteReader
from codec.codecs.wavelet import WaveletCodec, layout
from codec.codecs.wavelet.transform import BANDS, BLOCK, W, forward, inverse
from tests.codec.codecs import survey_checks as checks

CODEC = WaveletCodec()


def test_identity() -> None:
    checks.check_identity(CODEC)


def test_the_transform_is_orthonormal_and_a_constant_is_all_scaling() -> None:
    np.testing.assert_allclose(W @ W.T, np.eye(BLOCK), atol=1e-12)
    c = forward(np.full(BLOCK, 2.5))
    np.testing.assert_allclose(c[BANDS > 0], 0.0, atol=1e-12)
    x = np.random.default_rng(1).normal(size=(3, BLOCK))
    np.testing.assert_allclose(inverse(forward(x)), x, atol=1e-12)
    # a linear ramp has no finest-band detail away from the periodic wrap
    assert np.abs(forward(np.arange(BLOCK, dtype=float))[BANDS == 3][:-1]).max() < 1e-9


def test_lower_sub_bands_get_finer_steps() -> None:
    steps = [layout.STEP_SCALE[BANDS == b][0] for b in range(4)]
    assert steps == sorted(steps) and steps[0] < steps[-1]


def test_zigzag_varints_round_trip() -> None:
    v = np.array([0, -1, 1, 63, -64, 64, 10**12, -(10**12)])
    data = streams.varints(streams.zigzag(v))
    back = streams.unzigzag(streams.read_varints(ByteReader(data, "t"), data, len(v)))
    np.testing.assert_array_equal(back, v)


def test_round_trip_real_and_hand_made() -> None:
    checks.check_round_trip(CODEC, checks.load("acl/cmu_09_02.acl.sjson"))
    enc = checks.check_round_trip(CODEC, checks.chain_clip(np.sin(np.linspace(0.0, 4.0, 40))))
    # smooth motion: most coefficients quantise to zero
    assert enc.details["num_nonzero_coefficients"] < 0.5 * 3 * BLOCK * 4 * 7


@pytest.mark.parametrize("item", checks.STRICT_IDS)
def test_strict_on_every_real_clip_from_the_bytes(item: str) -> None:
    checks.check_strict(CODEC, item)


def test_every_rounding_mode() -> None:
    checks.check_rounding(CODEC, checks.load("acl/cmu_09_02.acl.sjson"))


def test_corrupt_and_truncated_payloads_are_refused() -> None:
    checks.check_corrupt(CODEC, checks.load("acl/cmu_09_02.acl.sjson"))
