"""Authored curves: each interpolation against values worked out by hand, batching, folds,
and a clip carrying its curves through replace, pickling and named arrays."""

from __future__ import annotations

import io
import math
import pickle

import numpy as np
import pytest

from codec.errors import ClipValidationError
from codec.formats.clip_arrays import clip_from_arrays, clip_to_npz
from codec.model import quat
from codec.model.authored_curves import AuthoredCurves, CurveGroup, Track, groups_of
from codec.model.clip import Clip, Skeleton
from codec.model.sampling import clip_between, clip_pose, sample_dense
from codec.model.transforms import qvv_to_matrix

Z = np.array([0.0, 0.0, 1.0])


def zrot(deg: float) -> np.ndarray:
    return quat.from_axis_angle(Z, math.radians(deg))


def angle_about_z(q: np.ndarray) -> np.ndarray:
    return np.degrees(2 * np.arctan2(q[..., 2], q[..., 3]))


def test_slerp_rotation_keeps_constant_angular_speed() -> None:
    g = CurveGroup("rotation", "slerp", [0], [0.0, 1.25], np.stack([zrot(0), zrot(120)])[:, None])
    t = np.array([0.0, 1.25 / 3, 0.625, 1.25, 2.0, -1.0])
    got = angle_about_z(g.evaluate(t)[:, 0])
    np.testing.assert_allclose(got, [0, 40, 60, 120, 120, 0], atol=1e-9)  # ends hold


def test_linear_rotation_is_nlerp_and_differs_from_slerp_off_the_midpoint() -> None:
    keys = np.stack([zrot(0), zrot(120)])[:, None]
    lin = CurveGroup("rotation", "linear", [0], [0.0, 1.0], keys)
    # nlerp at 1/3 of 120 degrees: atan2 of the lerped components, worked out by hand
    a, b = zrot(0), zrot(120)
    q = a + (b - a) / 3
    expected = math.degrees(2 * math.atan2(q[2], q[3]))
    got = angle_about_z(lin.evaluate(np.array([1 / 3]))[0, 0])
    assert got == pytest.approx(expected, abs=1e-9)
    assert abs(expected - 40.0) > 1.0  # the two readings really differ there


def test_step_holds_each_key_until_the_next() -> None:
    g = CurveGroup(
        "translation", "step", [3], [0.0, 1.0, 2.0], [[[0, 0, 0]], [[5, 0, 0]], [[7, 1, 0]]]
    )
    got = g.evaluate(np.array([0.0, 0.5, 0.999, 1.0, 1.5, 2.0, 9.0]))[:, 0]
    np.testing.assert_array_equal(got[:, 0], [0, 0, 0, 5, 5, 7, 7])


def test_cubic_is_the_hermite_spline_with_tangents_per_second() -> None:
    # keys at 0 and 2 s: value 0 -> 1, out-tangent 3 /s at key 0, in-tangent 1 /s at key 1
    values = np.array([[[0.0, 0, 0]], [[1.0, 0, 0]]])
    out_t = np.array([[[3.0, 0, 0]], [[9.0, 9, 9]]])
    in_t = np.array([[[9.0, 9, 9]], [[1.0, 0, 0]]])
    g = CurveGroup("translation", "cubic", [0], [0.0, 2.0], values, in_t, out_t)
    # at t = 0.5, s = 0.25: h10 = 0.140625, h01 = 0.15625, h11 = -0.046875, by hand
    # p = 0.140625 * 2 * 3 + 0.15625 * 1 + (-0.046875) * 2 * 1 = 0.90625
    assert g.evaluate(np.array([0.5]))[0, 0, 0] == pytest.approx(0.90625, abs=1e-12)
    assert g.evaluate(np.array([2.0]))[0, 0, 0] == pytest.approx(1.0)


def test_groups_of_merges_tracks_sharing_times_and_evaluates_them_at_once() -> None:
    times = np.array([0.0, 1.0])
    tracks = [
        Track(j, "translation", "linear", times, np.array([[j, 0, 0], [j + 10, 0, 0]], float))
        for j in (4, 1, 2)
    ]
    tracks.append(Track(0, "translation", "step", times, np.zeros((2, 3))))
    groups = groups_of(tracks)
    assert len(groups) == 2
    lin = next(g for g in groups if g.interpolation == "linear")
    assert lin.joints.tolist() == [4, 1, 2] and lin.values.shape == (2, 3, 3)
    np.testing.assert_allclose(lin.evaluate(np.array([0.25]))[0, :, 0], [6.5, 3.5, 4.5])


def test_fold_multiplies_the_evaluated_local_by_the_folded_matrix() -> None:
    """A joint under a folded node rotated 90 degrees about z and moved by (1, 0, 0): its
    translation curve is evaluated, then folded; its rotation (no curve) is its base."""
    fold = qvv_to_matrix(zrot(90), np.array([1.0, 0, 0]), np.ones(3))
    g = CurveGroup("translation", "linear", [1], [0.0, 1.0], [[[0, 0, 0]], [[2, 0, 0]]])
    base = np.concatenate([zrot(0), [0, 0, 0], [1, 1, 1]])[None]
    curves = AuthoredCurves((g,), np.array([1]), fold[None], base)
    n = 2
    rot, tr, sc = curves.evaluate(
        np.array([0.5, 1.0]), quat.identity((n, 2)), np.zeros((n, 2, 3)), np.ones((n, 2, 3))
    )
    # local (1, 0, 0) at t = 0.5, rotated to (0, 1, 0), moved by (1, 0, 0)
    np.testing.assert_allclose(tr[:, 1], [[1, 1, 0], [1, 2, 0]], atol=1e-12)
    np.testing.assert_allclose(angle_about_z(rot[:, 1]), [90, 90], atol=1e-9)
    np.testing.assert_allclose(tr[:, 0], 0.0)  # joint 0 has no curve: the input stands


def _two_key_clip() -> Clip:
    """Two joints, 2 samples 1.25 s apart (0.8 Hz); joint 1 turns 120 degrees (slerp)."""
    sk = Skeleton.create(["root", "arm"], [-1, 0], bind_translations=[[0, 0, 0], [0, 10, 0]])
    rot = np.stack([quat.identity((2,)), np.stack([zrot(0), zrot(120)])])
    tr = np.broadcast_to(sk.bind_translations, (2, 2, 3))
    g = CurveGroup("rotation", "slerp", [1], [0.0, 1.25], np.stack([zrot(0), zrot(120)])[:, None])
    return Clip(sk, 0.8, rot, tr, np.ones((2, 2, 3)), curves=AuthoredCurves((g,)))


def test_clip_between_and_clip_pose_follow_the_curve_and_keep_samples_exact() -> None:
    clip = _two_key_clip()
    rot, _, _ = clip_between(clip, np.array([0, 0, 1]), np.array([0.0, 1 / 3, 0.0]))
    np.testing.assert_array_equal(rot[0], clip.rotations[0])
    np.testing.assert_array_equal(rot[2], clip.rotations[1])
    assert angle_about_z(rot[1, 1]) == pytest.approx(40.0, abs=1e-9)
    # without curves it is ACL's nlerp of the samples
    plain = clip.replace(curves=None)
    rot0, _, _ = clip_between(plain, np.array([0]), np.array([1 / 3]))
    assert abs(angle_about_z(rot0[0, 1]) - 40.0) > 1.0
    # the window: rounding none follows the curve, nearest shows the sample
    t = 1.25 / 3
    assert angle_about_z(clip_pose(clip, t).rotations[1]) == pytest.approx(40.0, abs=1e-9)
    near = clip_pose(clip, t, "nearest")
    np.testing.assert_array_equal(
        near.rotations, sample_dense(*_arrays(clip), 0.8, t, "nearest").rotations
    )
    per = clip_pose(clip, t, "per_track", per_track=["none", "floor"])
    assert angle_about_z(per.rotations[1]) == pytest.approx(0.0, abs=1e-9)


def _arrays(clip: Clip) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return clip.rotations, clip.translations, clip.scales


def test_clip_carries_curves_through_replace_pickle_and_named_arrays() -> None:
    clip = _two_key_clip()
    assert clip.with_skeleton_settings(precision=0.5).curves is clip.curves
    assert clip.replace(name="x").curves is clip.curves
    assert clip.replace(translations=clip.translations * 2).curves is None  # new samples
    back = pickle.loads(pickle.dumps(clip))
    assert back.curves is not None
    np.testing.assert_array_equal(back.curves.groups[0].values, clip.curves.groups[0].values)
    with np.load(io.BytesIO(clip_to_npz(clip)), allow_pickle=False) as npz:
        again = clip_from_arrays({k: npz[k] for k in npz.files})
    assert again.curves is not None and again.curves.groups[0].interpolation == "slerp"
    t = np.array([0.1, 0.7, 1.2])
    args = (t, *(a[:1].repeat(3, 0) for a in _arrays(clip)))
    for a, b in zip(again.curves.evaluate(*args), clip.curves.evaluate(*args), strict=True):
        np.testing.assert_array_equal(a, b)


def test_scaled_changes_translations_and_fold_offsets_only() -> None:
    fold = qvv_to_matrix(zrot(0), np.array([1.0, 0, 0]), np.ones(3))
    g = CurveGroup("translation", "linear", [1], [0.0, 1.0], [[[0, 0, 0]], [[2, 0, 0]]])
    base = np.concatenate([zrot(0), [0, 3, 0], [1, 1, 1]])[None]
    c = AuthoredCurves((g,), np.array([1]), fold[None], base).scaled(100.0)
    assert c.groups[0].values[1, 0, 0] == 200.0
    assert c.fold_matrices[0, 0, 3] == 100.0 and c.fold_base[0, 5] == 300.0


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: CurveGroup("scale", "slerp", [0], [0.0], [[[1, 1, 1]]]), "slerp is for"),
        (lambda: CurveGroup("rotation", "bezier", [0], [0.0], [[[0, 0, 0, 1]]]), "interpolation"),
        (lambda: CurveGroup("scale", "linear", [0], [1.0, 0.0], np.ones((2, 1, 3))), "increasing"),
        (lambda: CurveGroup("scale", "linear", [0], [0.0], np.ones((2, 1, 3))), "shape"),
        (lambda: CurveGroup("scale", "cubic", [0], [0.0], np.ones((1, 1, 3))), "tangents"),
        (
            lambda: AuthoredCurves(
                (
                    CurveGroup("scale", "linear", [0], [0.0], np.ones((1, 1, 3))),
                    CurveGroup("scale", "step", [0], [0.0], np.ones((1, 1, 3))),
                )
            ),
            "two curves",
        ),
    ],
)
def test_bad_curves_are_refused(make, message: str) -> None:
    with pytest.raises(ClipValidationError, match=message):
        make()


def test_a_clip_refuses_curves_for_joints_it_does_not_have() -> None:
    clip = _two_key_clip()
    g = CurveGroup("scale", "linear", [5], [0.0], np.ones((1, 1, 3)))
    with pytest.raises(ClipValidationError, match="joint 5"):
        clip.replace(curves=AuthoredCurves((g,)))
