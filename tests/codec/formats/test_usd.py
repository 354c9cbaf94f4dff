"""USD reader: CesiumMan.usdz (figures from SOURCES.md; world positions against usd-core's own
UsdSkel world transforms), hand-made stages for what the real file does not have, errors."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np
import pytest

from codec import ClipFormatError, load_clip
from codec.formats import list_animations
from codec.model.transforms import object_space
from tests.codec.formats import usd_reference

DATA = Path(__file__).resolve().parents[2] / "data" / "usd"
CESIUM = DATA / "CesiumMan.usdz"
TOLERANCE_CM = 0.05


def positions(clip) -> np.ndarray:
    return object_space(clip.rotations, clip.translations, clip.scales, clip.skeleton.parents)[
        ..., 3
    ]


def usdskel_world_cm(path: Path, skeleton: str, codes: list[float], clip) -> np.ndarray:
    return usd_reference.clip_joint_positions_cm(path, skeleton, codes, clip)


def test_cesium_man_matches_sources_and_usdskel() -> None:
    (skeleton,) = list_animations(CESIUM)
    clip = load_clip(CESIUM)
    # SOURCES.md: 19 joints, 48 time samples at 24 time codes per second
    assert (clip.num_joints, clip.num_samples, clip.sample_rate) == (19, 48, 24.0)
    assert clip.warnings == [] and clip.name == "skelAnim_0"
    assert clip.skeleton.names[:2] == ("Skeleton_torso_joint_1", "Skeleton_torso_joint_2")
    assert (clip.units.unit, clip.units.chosen_by, clip.units.up_axis) == ("m", "file", "+Y")
    codes = usd_reference.sample_codes(CESIUM, clip)
    assert codes == [float(c) for c in range(1, 49)]
    theirs = usdskel_world_cm(CESIUM, skeleton, codes, clip)
    gap = np.linalg.norm(positions(clip) - theirs, axis=-1)
    assert gap.max() <= TOLERANCE_CM
    assert gap.max() < 1e-4  # in fact float32-close
    height = np.ptp(positions(clip)[0], axis=0).max()
    assert 100 < height < 200  # Cesium Man, in cm


def test_cesium_man_compresses_within_precision() -> None:
    from codec.compression import compress
    from codec.settings import CompressionSettings

    stats = compress(load_clip(CESIUM), CompressionSettings()).stats
    assert stats["precision_met"] and stats["max_error"] <= 0.01


def test_usdz_read_through_gzip(tmp_path: Path) -> None:
    packed = tmp_path / "CesiumMan.usdz.gz"
    packed.write_bytes(gzip.compress(CESIUM.read_bytes()))
    a, b = load_clip(packed), load_clip(CESIUM)
    assert np.array_equal(a.rotations, b.rotations)
    assert np.array_equal(a.translations, b.translations)


# ---------------------------------------------------------------- hand-made stages

STAGE = """#usda 1.0
(
    metersPerUnit = 0.0254
    upAxis = "Z"
    timeCodesPerSecond = 30
    startTimeCode = 0
    endTimeCode = 4
)

def Xform "Rig" (
    prepend apiSchemas = ["SkelBindingAPI"]
)
{
    double3 xformOp:translate.timeSamples = {0: (1, 2, 3), 4: (5, 2, 3)}
    float xformOp:rotateX = -90
    float3 xformOp:scale = (2, 2, 2)
    uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:rotateX", "xformOp:scale"]
    rel skel:animationSource = </Rig/Walk>

    def SkelRoot "Body"
    {
        def Skeleton "Skel"
        {
            uniform token[] joints = ["Hips", "Hips/Spine", "Hips/Spine/Head", "Hips/Leg"]
            uniform matrix4d[] restTransforms = [
                ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 10, 1)),
                ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 5, 1)),
                ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 4, 1)),
                ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (2, 0, -1, 1))
            ]
            uniform matrix4d[] bindTransforms = [
                ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 10, 1)),
                ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 15, 1)),
                ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 19, 1)),
                ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (2, 0, 9, 1))
            ]
        }
    }

    def SkelAnimation "Walk"
    {
        uniform token[] joints = ["Hips/Spine", "Hips"]
        float3[] translations.timeSamples = {
            0: [(0, 0, 5), (0, 0, 10)],
            1: [(0, 0, 5), (0, 1, 10)],
            2.3: [(0, 0, 5), (0, 2, 10)],
            4: [(0, 0, 5), (0, 4, 10)],
        }
        quatf[] rotations.timeSamples = {
            0: [(1, 0, 0, 0), (1, 0, 0, 0)],
            2: [(0.7071068, 0.7071068, 0, 0), (0.9238795, 0, 0, 0.3826834)],
            4: [(0, 1, 0, 0), (0.7071068, 0, 0, 0.7071068)],
        }
        half3[] scales = [(1, 1, 1), (1, 1, 1)]
    }
}
"""


def test_hand_made_stage_folds_prims_above_and_says_how_it_sampled(tmp_path: Path) -> None:
    """Inches, Z up, an animated and scaled prim above the skeleton, an animation listing
    two of four joints in another order, time samples at 0, 1, 2, 2.3, 4 (not uniform)."""
    path = tmp_path / "walk.usda"
    path.write_text(STAGE)
    clip = load_clip(path)
    assert clip.skeleton.names == ("Hips", "Spine", "Head", "Leg")
    assert (clip.num_samples, clip.sample_rate, clip.name) == (5, 30.0, "Walk")
    assert any("not uniformly spaced" in w for w in clip.warnings)
    assert (clip.units.unit, clip.units.to_cm, clip.units.up_axis) == ("inch", 2.54, "+Z")
    theirs = usdskel_world_cm(path, "/Rig/Body/Skel", [0.0, 1.0, 2.0, 3.0, 4.0], clip)
    assert np.abs(positions(clip) - theirs).max() < 1e-5
    # the joints the animation leaves out keep their rest transform
    leg = clip.skeleton.index("Leg")
    assert np.allclose(clip.translations[:, leg], [2 * 2.54, 0, -2.54])


def test_time_samples_on_one_grid_are_the_samples_and_sample_rate_resamples(
    tmp_path: Path,
) -> None:
    """Samples at 0, 1, 2 and 4 lie on one grid (step 1): the grid is the clip, no warning."""
    path = tmp_path / "even.usda"
    path.write_text(STAGE.replace("2.3: [(0, 0, 5)", "2: [(0, 0, 5)"))
    clip = load_clip(path)
    assert (clip.num_samples, clip.sample_rate, clip.warnings) == (5, 30.0, [])
    fast = load_clip(path, sample_rate=60)
    assert fast.num_samples == 9 and any("resampled at 60 Hz as asked" in w for w in fast.warnings)
    assert np.allclose(positions(fast)[::2], positions(clip), atol=1e-9)


def test_compressed_usda_and_unit_override(tmp_path: Path) -> None:
    path = tmp_path / "walk.usda.gz"
    path.write_bytes(gzip.compress(STAGE.encode()))
    clip = load_clip(path, units="cm")
    assert clip.units.chosen_by == "user" and "metersPerUnit 0.0254" in clip.units.statement()
    plain = tmp_path / "walk.usda"
    plain.write_text(STAGE)
    assert np.allclose(positions(clip) * 2.54, positions(load_clip(plain)))


def test_unauthored_units_are_usds_fallback_and_said_so(tmp_path: Path) -> None:
    path = tmp_path / "bare.usda"
    path.write_text(
        STAGE.replace("    metersPerUnit = 0.0254\n", "").replace('    upAxis = "Z"\n', "")
    )
    units = load_clip(path).units
    assert (units.unit, units.chosen_by, units.up_axis) == ("cm", "format", "+Y")
    assert "fallback" in units.statement()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('#usda 1.0\ndef Xform "A" {}\n', "has no UsdSkel Skeleton"),
        ('#usda 1.0\ndef Xform "A" {\n', "not a readable USD"),
        ("not usd at all", "not a readable USD"),
    ],
)
def test_bad_stages_are_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.usda"
    path.write_text(text)
    with pytest.raises(ClipFormatError, match=message) as info:
        load_clip(path)
    assert str(path) in str(info.value)


def test_no_bound_animation_is_the_rest_pose(tmp_path: Path) -> None:
    path = tmp_path / "rest.usda"
    path.write_text(STAGE.replace("    rel skel:animationSource = </Rig/Walk>\n", ""))
    clip = load_clip(path)
    assert clip.num_samples == 1 and any("no bound SkelAnimation" in w for w in clip.warnings)
    assert math.isclose(clip.skeleton.bind_translations[1, 2], 5 * 2.54)
