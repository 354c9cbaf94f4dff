import numba
import numpy as np
import pytest

from codec.codecs.acl_style.bit_rates import BIT_RATE_BITS, RAW_BIT_RATE
from codec.codecs.acl_style.quantize import (
    DEC_CONST,
    DEC_EXT,
    DEC_MIN,
    DEC_SEG_EXT,
    DEC_SEG_MIN,
    F32,
    decode_value,
    decode_values,
    quantised,
    rebuild_rotations,
    segment_range_decode,
)
from codec.codecs.acl_style.rotation_layout import MIN_DROPPED


def _vectors(values: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> tuple:
    """`quantised` of vector sub-tracks only: values (S, T, 3) as T translations."""
    s, t = values.shape[:2]
    rot = np.zeros((s, t, 4))
    rot[..., 3] = 1.0
    return quantised(
        rot,
        values.astype(np.float64),
        np.ones((s, t, 3)),
        np.arange(t),
        np.array([0, t, 0]),
        starts,
        sizes,
        MIN_DROPPED,
    )


def _quantize(unit: np.ndarray, bits: int) -> np.ndarray:
    """The optimiser's rounding (round half up) of values in [0, 1] to `bits` bits."""
    return np.floor(unit.astype(np.float64) * ((1 << bits) - 1) + 0.5).astype(np.uint32)


def test_segment_ranges_always_contain_their_samples():
    """Several segments: each one's 8-bit range, decoded, holds every clip-normalised value
    of its segment (nothing is clipped), and the segment-space values run over [0, 1]."""
    rng = np.random.default_rng(0)
    for _ in range(100):
        values = rng.uniform(-3, 7, (34, 5, 3)) * rng.uniform(0, 1, (34, 5, 3)) ** rng.uniform(
            0.2, 5
        )
        starts, sizes = np.array([0, 17]), np.array([17, 17])
        _, _, stored, unit, cmin, cext, q_min, q_ext, const, _, dec = _vectors(
            values, starts, sizes
        )
        np.testing.assert_array_equal(stored, values.astype(F32))
        lo, ext = segment_range_decode(q_min, q_ext)
        np.testing.assert_array_equal(dec[..., DEC_SEG_MIN:DEC_SEG_EXT], lo)
        np.testing.assert_array_equal(dec[..., DEC_SEG_EXT:DEC_CONST], ext)
        assert np.all(q_min.astype(int) + q_ext <= 255)
        assert unit.min() >= 0 and unit.max() <= 1
        for g, a in enumerate(starts):
            normalised = (stored[a : a + 17] - cmin[:, :3]) / cext[:, :3]
            assert np.all(lo[g] <= normalised.min(axis=0) + 1e-7)
            assert np.all(lo[g] + ext[g] >= normalised.max(axis=0) - 1e-7)
            back = (unit[a : a + 17] * ext[g] + lo[g]) * cext[:, :3] + cmin[:, :3]
            np.testing.assert_allclose(back, stored[a : a + 17], atol=2e-5 * 10)


def test_one_segment_has_no_range_and_its_constant_is_the_middle():
    values = np.array([[[0.2, 0.5, 0.9]], [[0.3, 0.5, 1.0]], [[0.25, 0.5, 0.95]]])
    _, _, _, unit, cmin, cext, q_min, q_ext, const, _, dec = _vectors(
        values, np.array([0]), np.array([3])
    )
    assert not q_min.any() and not q_ext.any()
    np.testing.assert_array_equal(dec[0, 0, DEC_SEG_MIN:DEC_SEG_EXT], 0.0)
    np.testing.assert_array_equal(dec[0, 0, DEC_SEG_EXT:DEC_CONST], 1.0)
    np.testing.assert_array_equal(cmin[0, :3], np.array([0.2, 0.5, 0.9], F32))
    assert cext[0, 1] == 0 and np.all(unit[:, 0, 1] == 0)  # a still component maps to 0
    assert unit[0, 0, 0] == 0 and unit[1, 0, 0] == 1
    np.testing.assert_array_equal(const[0, 0], [32768, 0, 32768])  # (lo + hi) / 2 of 65,535


@numba.njit
def _decode_kernel(q, raw, rate, lay, dec, out):
    decode_value(q, raw, rate, lay, dec, out)  # a helper: callable from kernels only


def _decode(q, raw, rate, lay, dec):
    out = np.zeros(4, dtype=F32)
    _decode_kernel(q.astype(np.uint32), raw.astype(F32), rate, lay.astype(np.int64), dec, out)
    return out


def test_quantisation_error_is_within_half_a_step_at_every_rate():
    rng = np.random.default_rng(1)
    values = rng.uniform(-50, 50, (20, 1, 3))
    _, _, stored, unit, lo, ext, _, _, _, lay, dec = _vectors(values, np.array([0]), np.array([20]))
    assert np.all(ext[0, 3] == 0) and np.all(lo[0, 3] == 0)  # never stored
    np.testing.assert_array_equal(dec[0, 0, DEC_MIN : DEC_MIN + 4], lo[0])
    np.testing.assert_array_equal(dec[0, 0, DEC_EXT : DEC_EXT + 4], ext[0])
    assert unit.min() == 0.0 and unit.max() == 1.0
    for rate in range(1, RAW_BIT_RATE):
        q = _quantize(unit, int(BIT_RATE_BITS[rate]))
        v = np.array(
            [_decode(q[s, 0], stored[s, 0], rate, lay[0, 0], dec[0, 0]) for s in range(20)]
        )
        step = ext[0, :3] / ((1 << int(BIT_RATE_BITS[rate])) - 1)
        assert np.all(np.abs(v[:, :3] - stored[:, 0]) <= 0.5 * step + 1e-5 * 50 + 1e-6)
    raw = np.array(
        [_decode(np.zeros(3), stored[s, 0], RAW_BIT_RATE, lay[0, 0], dec[0, 0]) for s in range(20)]
    )
    np.testing.assert_array_equal(raw[:, :3], stored[:, 0])


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


def test_in_stored_order_moves_every_track_as_fancy_indexing_does() -> None:
    from codec.codecs.acl_style.quantize import in_stored_order

    rng = np.random.default_rng(8)
    for g, ka in ((1, 1), (1, 7), (3, 12)):
        inv = rng.permutation(ka)
        arrays = (
            rng.integers(-1, 4, ka),
            rng.normal(size=(ka, 4)).astype(np.float32),
            rng.normal(size=(ka, 4)).astype(np.float32),
            rng.integers(-1, 4, (g, ka)),
            rng.integers(0, 256, (g, ka, 3)).astype(np.uint8),
            rng.integers(0, 256, (g, ka, 3)).astype(np.uint8),
            rng.integers(0, 65536, (g, ka, 3)).astype(np.uint16),
            rng.integers(0, 9, (g, ka, 4)),
            rng.normal(size=(g, ka, 17)).astype(np.float32),
        )
        rates = rng.integers(0, 20, (g, ka))
        q = rng.integers(0, 1 << 20, (5, ka, 3)).astype(np.uint32)
        got = in_stored_order(inv, *arrays, rates, q)
        for i, (a, b) in enumerate(zip((*arrays, rates, q), got, strict=True)):
            want = a[inv] if i < 3 else a[:, inv]
            assert b.dtype == (np.uint8 if i == 9 else a.dtype) and b.flags.c_contiguous, i
            np.testing.assert_array_equal(b, want, err_msg=str(i))
