"""codec/codecs/base.py: the words every codec and view share (per-track costs, the sample
prologue every decoder starts with)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from codec.codecs.base import (
    CONSTANT_BITS,
    STORED_COMPONENTS,
    TrackCosts,
    TrackKind,
    check_sample_options,
    sample_keys_of,
)
from codec.model.sampling import duration_of


def test_sample_bits_count_stored_samples_at_their_width() -> None:
    """Two segments of 4 and 3 samples, two joints: widths -1 (not animated), 0 (constant
    in the segment: one CONSTANT_BITS value a component), 5 and 32 (raw)."""
    bits = np.array([[[5, -1, 0], [32, -1, -1]], [[0, -1, 0], [7, -1, -1]]])
    kinds = np.full((2, 3), int(TrackKind.DEFAULT))
    costs = TrackCosts(kinds, np.array([[0, 4], [4, 3]]), bits, bits, np.zeros(2, np.int64))
    got = costs.sample_bits()
    assert got.shape == (2, 2, 3)
    assert got[0, 0, 0] == 5 * STORED_COMPONENTS * 4
    assert got[0, 1, 0] == 32 * STORED_COMPONENTS * 4
    assert got[1, 1, 0] == 7 * STORED_COMPONENTS * 3
    assert got[0, 0, 2] == got[1, 0, 0] == CONSTANT_BITS * STORED_COMPONENTS == 48
    assert not got[:, :, 1].any() and got[0, 1, 2] == 0
    # keyframe stripping: the second segment keeps 1 of its 3 samples
    retained = np.array([True, True, True, True, False, True, False])
    stripped = TrackCosts(kinds, costs.segments, bits, bits, costs.segment_bytes, None, retained)
    assert stripped.sample_bits()[1, 1, 0] == 7 * STORED_COMPONENTS * 1
    assert stripped.sample_bits()[1, 0, 0] == 48  # a constant stores one value either way


def _decoder(wrap: bool) -> SimpleNamespace:
    rate, n = 30.0, 10
    return SimpleNamespace(
        wrap=wrap, sample_rate=rate, num_samples=n, duration=duration_of(n, rate, wrap)
    )


def test_sample_keys_follow_the_decoders_looping_unless_overridden() -> None:
    clamped, wrapping = _decoder(False), _decoder(True)
    end = wrapping.duration - 0.5 / 30.0  # half way between the last sample and the first
    k = sample_keys_of(wrapping, end, "none", None, None)
    assert (k.first, k.second) == (9, 0) and float(k.alpha) == pytest.approx(0.5)
    k = sample_keys_of(clamped, end, "none", None, None)  # held at the last sample
    assert (k.first, k.second, float(k.alpha)) == (9, 9, 0.0)
    k = sample_keys_of(clamped, end, "none", "wrap", None)  # the override wraps
    assert (k.first, k.second) == (9, 0) and float(k.alpha) == pytest.approx(0.5)
    k = sample_keys_of(wrapping, end, "none", "clamp", None)
    assert (k.first, k.second) == (9, 9)
    k = sample_keys_of(wrapping, 1.5 / 30.0, "floor", None, None)
    assert (k.first, float(k.alpha)) == (1, 0.0)


@pytest.mark.parametrize(("looping", "interpolation"), [("loop", "nlerp"), (None, "cubic")])
def test_unknown_sample_options_are_refused(looping: str | None, interpolation: str) -> None:
    with pytest.raises(ValueError, match="unknown"):
        check_sample_options(looping, interpolation)
    with pytest.raises(ValueError, match="unknown"):
        sample_keys_of(_decoder(False), 0.1, "nearest", looping, None, interpolation)
