"""The compiled blend gives numpy's nlerp (sampling.blend, and blend_samples' former numpy
form) to the bit."""

from __future__ import annotations

import numpy as np
import pytest

import codec
from codec.model import quat
from codec.model.pose_blend import blend_rows
from codec.model.sampling import Pose, blend, blend_samples
from tests.codec.helpers import DATA, data_clip

Array = np.ndarray


def _numpy_blend(rows: tuple[Array, Array, Array], first: Array, second: Array, alpha: Array):
    rot, tr, sc = rows
    a = Pose(rot[first], tr[first], sc[first])
    b = Pose(rot[second], tr[second], sc[second])
    with np.errstate(invalid="ignore", divide="ignore"):
        return blend(a, b, alpha[:, None])


def _numpy_blend_samples(clip: codec.Clip, ks: Array, alphas: Array):
    """sampling.blend_samples as numpy computed it before it was compiled."""
    nxt = np.minimum(ks + 1, clip.num_samples - 1)
    a = alphas[:, None, None]
    rot = quat.nlerp(clip.rotations[ks], clip.rotations[nxt], a)
    rot = np.where(a == 0.0, clip.rotations[ks], rot)
    tr = clip.translations[ks] + (clip.translations[nxt] - clip.translations[ks]) * a
    sc = clip.scales[ks] + (clip.scales[nxt] - clip.scales[ks]) * a
    return rot, tr, sc


def _assert_same_bits(got: tuple[Array, ...], want: tuple[Array, ...]) -> None:
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_hand_made_rows_blend_as_numpy_does_to_the_bit() -> None:
    """Random unit rows, a zero quaternion (the identity comes out), a pair on opposite
    hemispheres (the shorter arc), alpha 0 and near 1, a row blended with itself."""
    rng = np.random.default_rng(7)
    r, j, n = 12, 5, 600
    rot = rng.standard_normal((r, j, 4))
    rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
    rot[2, 1] = 0.0
    rot[4] = -rot[3]  # antipodal: the same rotations, opposite signs
    tr = rng.standard_normal((r, j, 3)) * 40.0
    sc = rng.uniform(-2.0, 2.0, (r, j, 3))
    first = rng.integers(0, r, n)
    second = rng.integers(0, r, n)
    first[:10], second[:10] = 3, 4
    second[10:20] = first[10:20]
    first[20:30], second[20:30] = 2, 2  # the zero quaternion of joint 1
    alpha = rng.uniform(0.0, 1.0, n)
    alpha[::5] = 0.0
    alpha[1::7] = np.nextafter(1.0, 0.0)
    got = blend_rows((rot, tr, sc), first, second, alpha)
    want = _numpy_blend((rot, tr, sc), first, second, alpha)
    _assert_same_bits(got, want)
    np.testing.assert_array_equal(got[0][20:30, 1], np.tile([0.0, 0.0, 0.0, 1.0], (10, 1)))


@pytest.mark.parametrize(
    "path", [data_clip("cmu_09_02.acl.sjson"), DATA / "bvh" / "cmu_02_03_run_ccrig.bvh"]
)
def test_a_real_clips_samples_blend_as_numpy_does_to_the_bit(path) -> None:
    """Supersampled times between a real clip's samples: nlerp as sampling.blend gives it,
    and with exact_at_zero the raw clip's own blend (blend_samples) at every alpha."""
    clip = codec.load_clip(path)
    s = clip.num_samples
    ks = np.repeat(np.arange(s - 1), 4)
    alphas = np.tile([0.0, 0.25, 0.5, 0.75], s - 1)
    rows = (clip.rotations, clip.translations, clip.scales)
    got = blend_rows(rows, ks, ks + 1, alphas)
    _assert_same_bits(got, _numpy_blend(rows, ks, ks + 1, alphas))
    exact = blend_rows(rows, ks, ks + 1, alphas, exact_at_zero=True)
    _assert_same_bits(exact, _numpy_blend_samples(clip, ks, alphas))
    _assert_same_bits(blend_samples(clip, ks, alphas), exact)
    # with exact_at_zero, alpha 0 is the sample itself
    assert exact[0][::4].tobytes() == clip.rotations[:-1].tobytes()


def test_results_go_into_the_callers_arrays_or_a_clear_error() -> None:
    rng = np.random.default_rng(1)
    rot = rng.standard_normal((3, 2, 4))
    tr, sc = rng.standard_normal((3, 2, 3)), np.ones((3, 2, 3))
    first, second, alpha = np.array([0, 1]), np.array([1, 2]), np.array([0.5, 0.25])
    big = (np.zeros((4, 2, 4)), np.zeros((4, 2, 3)), np.zeros((4, 2, 3)))
    part = (big[0][1:3], big[1][1:3], big[2][1:3])
    blend_rows((rot, tr, sc), first, second, alpha, part)
    _assert_same_bits(part, _numpy_blend((rot, tr, sc), first, second, alpha))
    assert not big[0][0].any() and not big[0][3].any()
    wrong = (np.zeros((2, 2, 4), np.float32), part[1], part[2])
    with pytest.raises(ValueError, match="C-contiguous float64"):
        blend_rows((rot, tr, sc), first, second, alpha, wrong)
