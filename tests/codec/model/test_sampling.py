import numpy as np
import pytest

from codec.compression import compress
from codec.model import quat
from codec.model.sampling import round_alpha, sample_dense, sample_keys
from tests.codec.helpers import chain_clip

RATE = 30.0


@pytest.mark.parametrize(
    ("mode", "first", "alpha"),
    [("floor", 4, 0.0), ("ceil", 4, 1.0), ("nearest", 4, 0.0), ("none", 4, 0.25)],
)
def test_rounding_at_a_quarter_past_a_sample(mode, first, alpha):
    keys = sample_keys((4 + 0.25) / RATE, RATE, 10, mode)
    assert (keys.first, keys.second) == (first, 5)
    assert float(keys.alpha) == pytest.approx(alpha)


def test_rounding_rules():
    a = np.array([0.0, 0.25, 0.5, 0.75])
    assert round_alpha(a, "floor").tolist() == [0, 0, 0, 0]
    assert round_alpha(a, "ceil").tolist() == [0, 1, 1, 1]
    assert round_alpha(a, "nearest").tolist() == [0, 0, 1, 1]  # half rounds up
    assert round_alpha(a, "none").tolist() == a.tolist()


def test_per_track_modes():
    keys = sample_keys(
        (2 + 0.75) / RATE, RATE, 10, "per_track", per_track=["floor", "ceil", "nearest", "none"]
    )
    np.testing.assert_allclose(keys.alpha, [0.0, 1.0, 1.0, 0.75])
    with pytest.raises(ValueError, match="per joint"):
        sample_keys(0.1, RATE, 10, "per_track")


def test_wrap_versus_clamp_at_the_end():
    # 10 samples: clamped duration 9/30; wrapping clip duration 10/30, last blends into first
    clamp = sample_keys(9.5 / RATE, RATE, 10, "none", wrap=False)
    assert (clamp.first, clamp.second) == (9, 9)
    wrap = sample_keys(9.5 / RATE, RATE, 10, "none", wrap=True)
    assert (wrap.first, wrap.second, float(wrap.alpha)) == (9, 0, 0.5)
    end = sample_keys(10 / RATE, RATE, 10, "none", wrap=True)
    assert end.first == 0


def test_dense_sampling_lerps_translation_and_nlerps_rotation():
    clip = chain_clip(num_samples=10)
    pose = sample_dense(
        clip.rotations, clip.translations, clip.scales, RATE, (3 + 0.25) / RATE, "none"
    )
    np.testing.assert_allclose(
        pose.translations, 0.75 * clip.translations[3] + 0.25 * clip.translations[4]
    )
    np.testing.assert_allclose(
        pose.rotations, quat.nlerp(clip.rotations[3], clip.rotations[4], 0.25), atol=1e-15
    )


def test_codec_sample_matches_decoded_samples_under_each_rounding():
    clip = chain_clip(num_samples=40)
    result = compress(clip)
    decoded = result.decoder.decode_all()
    t = (7 + 0.25) / RATE
    floor = result.decoder.sample(t, "floor")
    ceil = result.decoder.sample(t, "ceil")
    nearest = result.decoder.sample(t, "nearest")
    np.testing.assert_allclose(floor.translations, decoded.translations[7], atol=1e-12)
    np.testing.assert_allclose(ceil.translations, decoded.translations[8], atol=1e-12)
    np.testing.assert_allclose(nearest.rotations, floor.rotations, atol=1e-15)
    none = result.decoder.sample(t, "none")
    np.testing.assert_allclose(
        none.translations, 0.75 * decoded.translations[7] + 0.25 * decoded.translations[8]
    )
    slerp = result.decoder.sample(t, "none", interpolation="slerp")
    expected = quat.slerp(decoded.rotations[7], decoded.rotations[8], 0.25)
    np.testing.assert_allclose(slerp.rotations, expected, atol=1e-12)
    # slerp and nlerp differ between samples, agree on them
    assert np.abs(slerp.rotations - none.rotations).max() > 0
    per = result.decoder.sample(t, "per_track", per_track=["floor", "ceil", "none", "floor"])
    np.testing.assert_allclose(per.translations[1], decoded.translations[8, 1], atol=1e-12)


def test_codec_sample_wrap_and_clamp_override():
    clip = chain_clip(num_samples=20)
    result = compress(clip)
    c = result.decoder
    last = (c.num_samples - 1 + 0.5) / RATE
    decoded = c.decode_all()
    assert not c.wrap  # chain_clip does not loop: wrapping is the override's doing
    clamp = c.sample(last, "none", looping="clamp")
    np.testing.assert_allclose(clamp.translations, decoded.translations[-1], rtol=0, atol=1e-12)
    # wrapped, half way past the last sample blends the last sample into the first
    wrapped = c.sample(last, "none", looping="wrap")
    half = 0.5 * (decoded.translations[-1] + decoded.translations[0])
    np.testing.assert_allclose(wrapped.translations, half, rtol=0, atol=1e-9)
    assert np.abs(decoded.translations[-1] - decoded.translations[0]).max() > 0.01
    np.testing.assert_allclose(
        wrapped.rotations,
        quat.nlerp(decoded.rotations[-1], decoded.rotations[0], 0.5),
        rtol=0,
        atol=1e-9,
    )
    with pytest.raises(ValueError, match="looping"):
        c.sample(0.0, looping="bounce")
