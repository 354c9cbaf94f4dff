"""Size sanity (codec.model.character_size): a clip read in the wrong unit is no
character's size, and the warning says the size, the unit it was read in and the --units
that fixes it; real characters, however they move, raise none."""

from __future__ import annotations

import numpy as np
import pytest

import codec
from codec.measure.skinning import skin_vertices
from codec.model import quat
from codec.model.character_size import (
    MAX_CM,
    MIN_CM,
    character_size,
    length_text,
    size_warning,
)
from codec.model.clip import Clip, Skeleton
from codec.model.mesh import skin_of
from codec.model.transforms import object_space
from tests.codec.helpers import DATA

FOX = DATA / "gltf" / "Fox.glb"


def standing_clip(height_cm: float, num_samples: int = 10, joints: int = 5) -> Clip:
    """A straight chain `height_cm` tall along +Y, its root sliding 1 cm along X."""
    step = height_cm / (joints - 1)
    tr = np.zeros((num_samples, joints, 3))
    tr[:, 1:, 1] = step
    tr[:, 0, 0] = np.linspace(0.0, 1.0, num_samples)
    rot = np.broadcast_to(quat.identity((joints,)), (num_samples, joints, 4))
    sk = Skeleton.create(
        [f"j{i}" for i in range(joints)], [-1, *range(joints - 1)], bind_translations=tr[0]
    )
    return Clip(sk, 30.0, rot, tr, np.ones((num_samples, joints, 3)), name="standing")


def test_fox_is_the_size_of_a_stadium_and_the_warning_says_so() -> None:
    fox = codec.load_clip(FOX)
    size = character_size(fox)
    assert size.measured == "skinned mesh" and size.mesh_cm > size.skeleton_cm > MAX_CM
    text = size_warning(fox, size)
    assert text is not None
    assert f"measures {length_text(size.mesh_cm)} (skinned mesh" in text
    assert "155 m" in text and "skeleton 103 m" in text
    # nose to tail runs across the box: the "about 175 m long" is its diagonal
    assert size.diagonal_cm == pytest.approx(17_560, rel=0.01) and "176 m corner to corner" in text
    assert "metres, as the format specifies" in text
    assert "give --units cm" in text and "it then measures 1.55 m" in text


def test_the_suggested_units_silence_the_fox() -> None:
    fox = codec.load_clip(FOX, units="cm")
    size = character_size(fox)
    assert size.size_cm == pytest.approx(155, abs=0.5)  # the same numbers, 100x smaller
    assert size_warning(fox, size) is None


def test_the_mesh_is_measured_as_it_is_skinned() -> None:
    """The extent of the skin at the bind pose, against codec.measure's own skinning."""
    fox = codec.load_clip(FOX)
    sk = fox.skeleton
    bind = object_space(
        sk.bind_rotations[None], sk.bind_translations[None], sk.bind_scales[None], sk.parents
    )
    moved = skin_vertices(bind, skin_of(fox.meshes))[0]
    assert character_size(fox).mesh_cm == pytest.approx(np.ptp(moved, axis=0).max(), rel=1e-9)


@pytest.mark.parametrize(
    "path",
    [
        DATA / "gltf" / "CesiumMan.glb",
        DATA / "usd" / "CesiumMan.usdz",
        DATA / "bvh" / "cmu_01_01_jumps.bvh.xz",
        DATA / "bvh" / "cmu_02_03_run_ccrig.bvh",
    ],
    ids=lambda p: p.name,
)
def test_real_characters_raise_no_warning(path) -> None:
    clip = codec.load_clip(path)
    size = character_size(clip)
    assert 100 < size.size_cm < 200  # every one is a person
    assert size_warning(clip, size) is None


def test_a_five_millimetre_clip_is_too_small_and_metres_would_fix_it() -> None:
    tiny = standing_clip(0.5)
    size = character_size(tiny)
    assert size.size_cm == pytest.approx(0.5) and size.too_small
    text = size_warning(tiny, size)
    assert text is not None and "measures 5 mm (skeleton), smaller than any character" in text
    assert "centimetres (the reader states no unit)" in text
    assert "give --units m" in text and "it then measures 50 cm" in text


@pytest.mark.parametrize(
    "height, warns",
    [
        (MIN_CM * 0.97, True),
        (MIN_CM * 1.03, False),
        (170.0, False),
        (MAX_CM * 0.97, False),
        (MAX_CM * 1.03, True),
    ],
)
def test_the_bounds(height: float, warns: bool) -> None:
    clip = standing_clip(height, num_samples=1)
    assert character_size(clip).size_cm == pytest.approx(height)
    assert (size_warning(clip) is not None) is warns


def test_nothing_to_measure_is_not_a_warning() -> None:
    """One joint, or every joint at one point: no size, no claim about it."""
    one = standing_clip(0.0, num_samples=3, joints=2)
    assert character_size(one).size_cm == 0.0 and size_warning(one) is None


def test_a_root_left_at_the_origin_does_not_stretch_the_character() -> None:
    """Hips walking 40 m away from a root that stays put: the most compact pose counts."""
    person = standing_clip(170.0, num_samples=200)
    names = ("root", *person.skeleton.names)
    parents = [-1, 0, *(np.asarray(person.skeleton.parents[1:]) + 1)]
    tr = np.concatenate((np.zeros((200, 1, 3)), person.translations), axis=1)
    tr[:, 1, 2] = np.linspace(0.0, 4000.0, 200)  # the hips walk 40 m along Z
    rot = np.broadcast_to(quat.identity((len(names),)), (200, len(names), 4))
    sk = Skeleton.create(names, parents, bind_translations=tr[0])
    walk = Clip(sk, 30.0, rot, tr, np.ones(tr.shape))
    assert character_size(walk).size_cm == pytest.approx(170.0)
    assert size_warning(walk) is None


def test_a_degenerate_bind_pose_is_measured_by_the_motion() -> None:
    """Identity bind pose (every joint at the origin), motion human-sized or 5 mm."""
    for height, warns in ((170.0, False), (0.5, True)):
        clip = standing_clip(height, num_samples=4)
        flat = clip.replace(skeleton=Skeleton.create(clip.skeleton.names, clip.skeleton.parents))
        assert character_size(flat).skeleton_cm == pytest.approx(height)
        assert (size_warning(flat) is not None) is warns
