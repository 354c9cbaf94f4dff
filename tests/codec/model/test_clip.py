import dataclasses

import numpy as np
import pytest

import codec
from codec.errors import ClipValidationError
from codec.model import quat
from codec.model.clip import Clip, Skeleton
from tests.codec.helpers import DATA

FOX = DATA / "gltf" / "Fox.glb"


def make(samples=3, rot=None, parents=(-1, 0)):
    sk = Skeleton.create(["root", "arm"], list(parents))
    rot = quat.identity((samples, 2)) if rot is None else rot
    return Clip(sk, 30.0, rot, np.zeros((samples, 2, 3)), np.ones((samples, 2, 3)))


def test_valid_clip_and_duration():
    c = make(samples=31)
    assert c.num_samples == 31 and c.num_joints == 2
    assert c.duration == pytest.approx(1.0)


def test_nan_is_refused_naming_joint_and_sample():
    rot = quat.identity((3, 2))
    rot[2, 1, 0] = np.nan
    with pytest.raises(ClipValidationError, match=r"joint 1 \('arm'\) at sample 2"):
        make(rot=rot)


def test_inf_translation_is_refused():
    sk = Skeleton.create(["a"], [-1])
    tr = np.zeros((2, 1, 3))
    tr[1, 0, 2] = np.inf
    with pytest.raises(ClipValidationError, match="translation of joint 0"):
        Clip(sk, 30.0, quat.identity((2, 1)), tr, np.ones((2, 1, 3)))


def test_parents_must_come_first():
    with pytest.raises(ClipValidationError, match="parents must come first"):
        Skeleton.create(["a", "b"], [1, -1])


def test_non_unit_quaternion_is_refused():
    rot = quat.identity((3, 2))
    rot[1, 0] *= 1.5
    with pytest.raises(ClipValidationError, match="not a unit quaternion"):
        make(rot=rot)


def test_at_least_one_sample_and_positive_settings():
    with pytest.raises(ClipValidationError, match="at least one sample"):
        make(samples=0)
    with pytest.raises(ClipValidationError, match="precision"):
        Skeleton.create(["a"], [-1], precision=0.0)


def test_new_settings_are_validated_and_the_rest_is_shared_not_validated_again():
    """with_settings / with_skeleton_settings check only what changed (a codec re-tunes a
    clip's precisions many times): bad settings still raise, read-only; the samples, the
    bind pose and the cached topology are the very ones of the source."""
    c = make()
    sk = c.skeleton
    depths = sk.depths
    for bad in (0.0, -1.0, np.nan, np.inf, np.array([0.01, 0.0])):
        with pytest.raises(ClipValidationError, match="precision of joint"):
            sk.with_settings(precision=bad)
        with pytest.raises(ClipValidationError, match="shell_distance of joint"):
            c.with_skeleton_settings(shell_distance=bad)
    out = c.with_skeleton_settings(precision=np.array([0.5, 0.25]))
    assert out.skeleton.precision.tolist() == [0.5, 0.25]
    assert not out.skeleton.precision.flags.writeable
    assert out.skeleton.shell_distance is sk.shell_distance
    assert out.skeleton.bind_rotations is sk.bind_rotations
    assert out.skeleton.depths is depths
    assert out.rotations is c.rotations and out.scales is c.scales
    assert c.skeleton is sk and c.skeleton.precision.tolist() == [0.01, 0.01]


def test_one_number_for_every_joint_is_checked_as_the_arrays_are():
    """A single precision (what every encode's settings give) takes a shorter path than an
    array: it must refuse and accept exactly what the array path does."""
    sk = make().skeleton
    for bad in (0, -0.5, np.nan, np.inf, 1e300, np.float64(0.0)):
        with pytest.raises(ClipValidationError, match="precision of joint 0"):
            sk.with_settings(precision=bad)
    for good in (0.25, 2, np.float64(0.125), True):
        out = sk.with_settings(precision=good).precision
        assert out.dtype == np.float64 and out.shape == (2,) and not out.flags.writeable
        assert out.tolist() == [float(good)] * 2


def test_settings_of_another_skeleton_are_taken_as_they_are():
    c = make()
    sk = c.skeleton
    other = sk.with_settings(np.array([0.5, 0.25]), 3.0)
    out = sk.with_settings_of(other)
    assert out.precision is other.precision and out.shell_distance is other.shell_distance
    assert out.bind_rotations is sk.bind_rotations and out.depths is sk.depths
    one = Skeleton.create(["a"], [-1])
    with pytest.raises(ValueError, match="1 joints' settings for 2 joints"):
        sk.with_settings_of(one)


@pytest.mark.parametrize("make_clip", ["tiny", "fox"])
def test_with_skeleton_takes_new_settings_and_refuses_another_hierarchy(make_clip):
    c = make() if make_clip == "tiny" else codec.load_clip(FOX)
    sk = c.skeleton
    tighter = sk.with_settings(sk.precision / 2, sk.shell_distance * 3)
    out = c.with_skeleton(tighter)
    assert np.array_equal(out.skeleton.precision, sk.precision / 2)
    assert np.array_equal(out.skeleton.shell_distance, sk.shell_distance * 3)
    assert np.array_equal(out.rotations, c.rotations)
    moved = sk.bind_translations.copy()
    moved[-1, 0] += 1.0
    for other in (
        dataclasses.replace(sk, bind_translations=moved),
        dataclasses.replace(sk, names=[*sk.names[:-1], "renamed"]),
    ):
        with pytest.raises(ValueError, match="joints, parents and bind pose"):
            c.with_skeleton(other)
