import numpy as np

from codec.quantize import (
    F32,
    clip_range,
    dequantize,
    encode,
    normalize,
    rebuild_rotation,
    segment_range,
    segment_range_decode,
    to_segment_space,
)
from codec.result import BIT_RATE_BITS, RAW_BIT_RATE


def test_segment_range_always_contains_its_samples():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = rng.uniform(0, 1, (17, 5, 3)).astype(F32) ** rng.uniform(0.2, 5)
        q_min, q_ext = segment_range(n)
        lo, ext = segment_range_decode(q_min, q_ext)
        assert np.all(lo <= n.min(axis=0))
        assert np.all((lo + ext).astype(F32) >= n.max(axis=0))
        assert np.all(q_min.astype(int) + q_ext <= 255)


def test_quantisation_error_is_within_half_a_step_at_every_rate():
    rng = np.random.default_rng(1)
    values = rng.uniform(-50, 50, (20, 4, 3)).astype(F32)
    lo, ext = clip_range(values)
    norm = normalize(values, lo, ext)
    assert norm.min() == 0.0 and norm.max() == 1.0
    for rate in range(1, RAW_BIT_RATE):
        rates = np.full(4, rate)
        q = encode(norm, values, rates, None, None)
        v = dequantize(q, rates, lo, ext, None, None, np.zeros((4, 3)))
        step = ext / ((1 << int(BIT_RATE_BITS[rate])) - 1)
        assert np.all(np.abs(v - values) <= 0.5 * step + 1e-5 * np.abs(values) + 1e-6)
    raw = np.full(4, RAW_BIT_RATE)
    q = encode(norm, values, raw, None, None)
    np.testing.assert_array_equal(dequantize(q, raw, lo, ext, None, None, np.zeros((4, 3))), values)


def test_segment_space_maps_into_unit_interval():
    n = np.array([[[0.2, 0.5, 0.9]], [[0.3, 0.5, 1.0]]], dtype=F32)
    q_min, q_ext = segment_range(n)
    s = to_segment_space(n, q_min, q_ext)
    assert s.min() >= 0 and s.max() <= 1
    lo, ext = segment_range_decode(q_min, q_ext)
    np.testing.assert_allclose(s * ext + lo, n, atol=1e-6)  # renormalising is reversible


def test_rotation_rebuild_is_unit_with_positive_w():
    q = rebuild_rotation(np.array([[0.1, -0.2, 0.3], [0.8, 0.6, 0.1]], dtype=F32))
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-6)
    assert np.all(q[:, 3] >= 0)
