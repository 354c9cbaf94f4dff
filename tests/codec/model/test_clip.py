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
