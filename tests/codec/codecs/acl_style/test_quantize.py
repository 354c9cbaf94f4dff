import numba
import numpy as np
import pytest

from codec.codecs.acl_style.bit_rates import BIT_RATE_BITS, RAW_BIT_RATE
from codec.codecs.acl_style.quantize import (
    F32,
    clip_ranges,
    decode_params,
    decode_value,
    decode_values,
    normalize,
    quantize,
    rebuild_rotations,
    segment_range_decode,
    segment_ranges,
    to_segment_space,
)


def test_segment_range_always_contains_its_samples():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = rng.uniform(0, 1, (34, 5, 3)).astype(F32) ** rng.uniform(0.2, 5)
        q_min, q_ext, lo, ext = segment_ranges(n, np.array([0, 17]))
        np.testing.assert_array_equal((lo, ext), segment_range_decode(q_min, q_ext))
        for g, seg in enumerate((n[:17], n[17:])):
            assert np.all(lo[g] <= seg.min(axis=0))
            assert np.all((lo[g] + ext[g]).astype(F32) >= seg.max(axis=0))
        assert np.all(q_min.astype(int) + q_ext <= 255)


@numba.njit
def _decode_kernel(q, raw, rate, lay, dec, out):
    decode_value(q, raw, rate, lay, dec, out)  # a helper: callable from kernels only


def _decode(q, raw, rate, lay, dec):
    out = np.zeros(4, dtype=F32)
    _decode_kernel(q.astype(np.uint32), raw.astype(F32), rate, lay.astype(np.int64), dec, out)
    return out


def test_quantisation_error_is_within_half_a_step_at_every_rate():
    rng = np.random.default_rng(1)
    values = rng.uniform(-50, 50, (20, 1, 4)).astype(F32)
    values[..., 3] = 0
    comps = np.array([[[0, 1, 2]]])
    lo, ext = clip_ranges(values[..., :3].min(0)[None], values[..., :3].max(0)[None], comps)
    assert np.all(ext[0, 3] == 0) and np.all(lo[0, 3] == 0)  # never stored
    norm = normalize(values, lo, ext)[..., :3]
    assert norm.min() == 0.0 and norm.max() == 1.0
    lay, dec = decode_params(
        np.array([[0, 1, 2]]),
        np.array([-1]),
        lo,
        ext,
        np.zeros((1, 3), F32),
        np.ones((1, 3), F32),
        np.zeros((1, 3)),
    )
    for rate in range(1, RAW_BIT_RATE):
        q = quantize(norm, rate)
        v = np.array([_decode(q[s, 0], values[s, 0, :3], rate, lay[0], dec[0]) for s in range(20)])
        step = ext[0, :3] / ((1 << int(BIT_RATE_BITS[rate])) - 1)
        assert np.all(np.abs(v[:, :3] - values[:, 0, :3]) <= 0.5 * step + 1e-5 * 50 + 1e-6)
    raw = np.array(
        [_decode(np.zeros(3), values[s, 0, :3], RAW_BIT_RATE, lay[0], dec[0]) for s in range(20)]
    )
    np.testing.assert_array_equal(raw[:, :3], values[:, 0, :3])


def test_segment_space_maps_into_unit_interval():
    n = np.array([[[0.2, 0.5, 0.9]], [[0.3, 0.5, 1.0]]], dtype=F32)
    _, _, lo, ext = segment_ranges(n, np.array([0]))
    lo, ext = lo[0], ext[0]
    s = to_segment_space(n, lo, ext)
    assert s.min() >= 0 and s.max() <= 1
    np.testing.assert_allclose(s * ext + lo, n, atol=1e-6)  # renormalising is reversible


@pytest.mark.parametrize("dropped", range(4))
def test_rebuilt_rotation_is_unit_with_the_dropped_component_positive(dropped):
    rng = np.random.default_rng(dropped)
    q = rng.normal(size=(50, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    q[:, dropped] = np.abs(q[:, dropped])
    kept = q.astype(F32)
    kept[:, dropped] = 0
    out = rebuild_rotations(kept, np.full(50, dropped))
    np.testing.assert_allclose(np.linalg.norm(out.astype(np.float64), axis=-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(out, q, atol=2e-3)
    assert np.all(out[:, dropped] >= 0)


def test_numpy_and_kernel_decode_agree_bit_for_bit():
    """The optimiser decodes with the kernel, the decoder with numpy: the same float32
    arithmetic, for every rate and every dropped component."""
    rng = np.random.default_rng(3)
    n = 400
    rate = rng.integers(0, 25, n)
    comps = [np.delete(np.arange(4), d) for d in rng.integers(0, 4, n)]
    lay = np.array(
        [
            [*c, d]
            for c, d in zip(
                comps, [int(np.setdiff1d(np.arange(4), c)[0]) for c in comps], strict=True
            )
        ]
    )
    lay[::3, 3] = -1  # some vector sub-tracks
    lay[::3, :3] = [0, 1, 2]
    dec = rng.uniform(-1, 1, (n, 17)).astype(F32)
    dec[:, 4:8] = np.abs(dec[:, 4:8])
    dec[:, 11:14] = rng.uniform(0, 1, (n, 3))
    dec[:, 14:17] = rng.integers(0, 65536, (n, 3))
    q = np.where(
        rate[:, None] == 24,
        rng.uniform(-1, 1, (n, 3)).astype(F32).view(np.uint32),
        rng.integers(0, 1 << 23, (n, 3)) % (np.left_shift(1, np.clip(rate, 1, 23))[:, None]),
    )
    q = q.astype(np.uint32)
    expect = decode_values(q[:, None], rate[:, None], lay[:, None], dec[:, None])[:, 0]
    for i in range(n):
        raw = q[i].view(F32)
        np.testing.assert_array_equal(
            _decode(q[i], raw, int(rate[i]), lay[i], dec[i])[: 3 if lay[i, 3] < 0 else 4],
            expect[i][: 3 if lay[i, 3] < 0 else 4],
        )


def test_numpy_and_kernel_rebuild_agree_bit_for_bit():
    """Constants are rebuilt in numpy, samples by the kernel: the same float32 arithmetic."""
    rng = np.random.default_rng(7)
    q = rng.normal(size=(200, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    dropped = rng.integers(0, 4, 200)
    kept = [np.delete(np.arange(4), d) for d in dropped]
    values = np.stack([q[i, kept[i]] for i in range(200)]).astype(F32)
    full = np.zeros((200, 4), F32)
    for i in range(200):
        full[i, kept[i]] = values[i]
    expect = rebuild_rotations(full, dropped)
    for i in range(200):
        lay = np.array([*kept[i], dropped[i]], dtype=np.int64)
        got = _decode(np.zeros(3), values[i], RAW_BIT_RATE, lay, np.zeros(17, F32))
        np.testing.assert_array_equal(got, expect[i])
