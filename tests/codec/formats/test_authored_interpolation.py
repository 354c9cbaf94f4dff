"""The file's own interpolation between samples: glTF LINEAR (slerp), STEP and CUBICSPLINE
and USD (slerp) keys give the raw pose between samples, hand-computed; the error between
samples measures the codec's nlerp against that curve; real clips keep their samples."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from codec import load_clip
from codec.compression import compress
from codec.formats.gltf import read_gltf
from codec.model import quat
from codec.model.sampling import clip_between, clip_pose
from codec.model.transforms import object_space
from codec.settings import CompressionSettings
from tests.codec.formats.test_gltf import hand_gltf, save_gltf

S = math.sqrt(0.5)


def z_angle(q: np.ndarray) -> np.ndarray:
    return np.degrees(2 * np.arctan2(q[..., 2], q[..., 3]))


def between(clip, times: list[float]):
    """The raw clip's local transforms at `times` through the measure's own function."""
    pos = np.asarray(times) * clip.sample_rate
    k = np.minimum(np.floor(pos).astype(np.int64), clip.num_samples - 1)
    return clip_between(clip, k, pos - k)


def test_two_key_linear_rotation_between_samples_is_the_slerp_of_its_keys(tmp_path: Path) -> None:
    """hand_gltf: B turns 0 -> 90 degrees about z over keys 0 s and 1 s (LINEAR); the keys
    are the samples (1 Hz). Midway the pose is the slerp of the keys, and at a third and a
    quarter too, where nlerp (what the samples alone give) is 0.7 / 0.9 degrees off."""
    doc, blob = hand_gltf()
    clip = read_gltf(save_gltf(tmp_path, doc, blob), scale_to_cm=False)
    assert clip.sample_rate == 1.0 and clip.num_samples == 3
    rot, _, _ = between(clip, [0.5, 1 / 3, 0.25])
    half = math.radians(45.0) / 2  # slerp of identity and 90 degrees at 0.5: 45 degrees
    assert np.allclose(rot[0, 1] * np.sign(rot[0, 1, 3]), [0, 0, math.sin(half), math.cos(half)])
    np.testing.assert_allclose(z_angle(rot[1:, 1]), [30.0, 22.5], atol=1e-9)
    plain, _, _ = between(clip.replace(curves=None), [1 / 3, 0.25])
    assert np.all(np.abs(z_angle(plain[:, 1]) - [30.0, 22.5]) > 0.5)  # nlerp's curve
    # the window scrubs the same curve (rounding none) and the samples otherwise
    assert z_angle(clip_pose(clip, 1 / 3).rotations[1]) == pytest.approx(30.0, abs=1e-9)
    assert z_angle(clip_pose(clip, 1 / 3, "nearest").rotations[1]) == pytest.approx(0.0)


def test_step_and_cubicspline_between_samples(tmp_path: Path) -> None:
    """STEP: B's x is 0 until 1 s, then 2. CUBICSPLINE over [0, 2] s (A's x, 0 -> 1, out
    tangent 3 /s, in tangent 1 /s) plus the folded Armature's x = 1: by hand at 0.5 s
    (s = 0.25) p = 6 h10 + h01 + 2 h11 = 0.84375 + 0.15625 - 0.09375 = 0.90625, at 1.5 s
    (s = 0.75) p = 0.28125 + 0.84375 - 0.28125 = 0.84375. Read in cm (x 100)."""
    doc, blob = hand_gltf()
    clip = read_gltf(save_gltf(tmp_path, doc, blob, "glb"))
    _, tr, _ = between(clip, [0.5, 0.999, 1.5])
    np.testing.assert_allclose(tr[:, 1, 0], [0.0, 0.0, 200.0], atol=1e-9)
    np.testing.assert_allclose(tr[[0, 2], 0, 0], [190.625, 184.375], atol=1e-6)
    _, plain, _ = between(clip.replace(curves=None), [0.5])
    assert plain[0, 1, 0] == pytest.approx(100.0)  # the lerp of the samples: not the file's


def test_folded_node_rotation_applies_to_the_curve_between_samples(tmp_path: Path) -> None:
    """The Armature (a non-joint node above A) also turns 90 degrees about z: A's cubic x
    curve is then along y, moved by the Armature's (1, 0, 0)."""
    doc, blob = hand_gltf()
    doc["nodes"][0]["rotation"] = [0, 0, S, S]
    clip = read_gltf(save_gltf(tmp_path, doc, blob), scale_to_cm=False)
    _, tr, _ = between(clip, [0.5])
    np.testing.assert_allclose(tr[0, 0], [1.0, 0.90625, 0.0], atol=1e-6)


def _two_key_glb(tmp_path: Path, degrees: float, seconds: float) -> Path:
    """One joint turning `degrees` about z between keys 0 and `seconds` (LINEAR)."""
    f = np.float32
    times = np.array([0, seconds], f)
    half = math.radians(degrees) / 2
    rots = np.array([[0, 0, 0, 1], [0, 0, math.sin(half), math.cos(half)]], f)
    blob = times.tobytes() + rots.tobytes()
    doc = {
        "asset": {"version": "2.0"},
        "nodes": [{"name": "root"}],
        "skins": [{"joints": [0]}],
        "animations": [
            {
                "samplers": [{"input": 0, "output": 1, "interpolation": "LINEAR"}],
                "channels": [{"sampler": 0, "target": {"node": 0, "path": "rotation"}}],
            }
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 2, "type": "SCALAR"},
            {"bufferView": 1, "componentType": 5126, "count": 2, "type": "VEC4"},
        ],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 8},
            {"buffer": 0, "byteOffset": 8, "byteLength": 32},
        ],
        "buffers": [{"byteLength": len(blob)}],
    }
    return save_gltf(tmp_path, doc, blob)


def test_error_between_samples_is_the_distance_to_the_authored_curve(tmp_path: Path) -> None:
    """Compressed at a precision far below the effect, the codec's clip is its two samples
    blended by nlerp; the error between samples is then the distance, on the joint's 3 cm
    shell, between that nlerp curve and the file's slerp curve, computed here by hand."""
    clip = read_gltf(_two_key_glb(tmp_path, 150.0, 1.25))
    assert clip.num_samples == 2 and clip.sample_rate == pytest.approx(0.8)
    result = compress(clip, CompressionSettings(precision=1e-5, supersample=12))
    times = result.error_between_times
    alpha = times / 1.25
    a, b = clip.rotations[0, 0], clip.rotations[1, 0]
    codec_curve = quat.nlerp(a, b, alpha[:, None])
    file_curve = quat.slerp(a, b, alpha[:, None])
    shell = 3.0 * np.eye(3)  # (d, 0, 0), (0, d, 0), (0, 0, d)
    diff = quat.to_matrix(codec_curve) - quat.to_matrix(file_curve)  # (N, 3, 3)
    expected = np.linalg.norm(diff @ shell.T, axis=1).max(axis=1)
    np.testing.assert_allclose(result.error_between[:, 0], expected, atol=3e-5)
    assert expected.max() > 0.05  # a real difference, where nlerp of the samples gives 0
    assert result.stats["max_error_between_samples"] == pytest.approx(expected.max(), abs=3e-5)
    assert result.stats["max_error"] <= 1e-5  # at the samples the codec is exact


POSES = "((1,0,0,0),(0,1,0,0),(0,0,1,0),(0,0,0,1)), ((1,0,0,0),(0,1,0,0),(0,0,1,0),(10,0,0,1))"


def _usd_two_keys(path: Path) -> None:
    """A UsdSkel stage: joint `root` turns 150 degrees about z between time codes 0 and 30
    at 24 time codes per second (1.25 s); `root/arm` is 10 units out along x."""
    h = math.radians(150.0) / 2
    path.write_text(
        f"""#usda 1.0
(
    timeCodesPerSecond = 24
    metersPerUnit = 0.01
    upAxis = "Y"
)
def SkelRoot "Rig" (prepend apiSchemas = ["SkelBindingAPI"])
{{
    def Skeleton "Skel" (prepend apiSchemas = ["SkelBindingAPI"])
    {{
        uniform token[] joints = ["root", "root/arm"]
        uniform matrix4d[] restTransforms = [{POSES}]
        uniform matrix4d[] bindTransforms = [{POSES}]
        rel skel:animationSource = </Rig/Skel/Anim>
        def SkelAnimation "Anim"
        {{
            uniform token[] joints = ["root"]
            quatf[] rotations.timeSamples = {{
                0: [(1, 0, 0, 0)],
                30: [({math.cos(h)!r}, 0, 0, {math.sin(h)!r})],
            }}
            float3[] translations = [(0, 0, 0)]
            half3[] scales = [(1, 1, 1)]
        }}
    }}
}}
"""
    )


def test_usd_two_keys_between_samples_are_usds_own_slerp(tmp_path: Path) -> None:
    """The issue's case: two keys 1.25 s apart. A third of the way, the raw pose is what
    usd-core itself gives at time code 10 (slerp), and nlerp of the two samples is 0.085 cm
    or more off on the arm's 3 cm shell (10 cm out)."""
    pytest.importorskip("pxr")
    from pxr import Usd, UsdSkel

    file = tmp_path / "two_keys.usda"
    _usd_two_keys(file)
    clip = load_clip(file)
    assert clip.num_samples == 2 and clip.sample_rate == pytest.approx(0.8)
    stage = Usd.Stage.Open(str(file))
    anim = UsdSkel.Animation(stage.GetPrimAtPath("/Rig/Skel/Anim"))
    q = anim.GetRotationsAttr().Get(Usd.TimeCode(10))[0]
    usd = np.array([*q.GetImaginary(), q.GetReal()])
    rot, tr, sc = between(clip, [1.25 / 3])
    assert abs(float(np.dot(rot[0, 0], usd))) == pytest.approx(1.0, abs=1e-7)
    assert z_angle(rot[0, 0]) == pytest.approx(50.0, abs=1e-4)
    raw = object_space(rot, tr, sc, clip.skeleton.parents)[0, 1, :, 3]
    plain = object_space(*between(clip.replace(curves=None), [1.25 / 3]), clip.skeleton.parents)
    assert np.linalg.norm(raw - plain[0, 1, :, 3]) > 0.085


@pytest.mark.parametrize(
    ("name", "animation"),
    [("gltf/CesiumMan.glb", None), ("gltf/Fox.glb", "Walk"), ("gltf/Fox.glb", "Run")],
)
def test_real_clips_curves_reproduce_their_samples(name: str, animation: str | None) -> None:
    """The curves a reader keeps, folds and units included, give back its samples at the
    sample times (CesiumMan's root is under a folded node; Fox Run is resampled)."""
    from tests.codec.helpers import DATA

    clip = load_clip(DATA / name, animation=animation)
    assert clip.curves is not None
    t = np.arange(clip.num_samples) / clip.sample_rate
    parts = (clip.rotations, clip.translations, clip.scales)
    got = object_space(*clip.curves.evaluate(t, *parts), clip.skeleton.parents)
    want = clip.object_space()
    assert np.abs(got - want).max() <= 1e-9 * max(1.0, float(np.abs(want).max()))


def test_sampled_data_formats_have_no_curves() -> None:
    from tests.codec.helpers import DATA, data_clip

    assert load_clip(data_clip("cmu_09_02.acl.sjson")).curves is None
    bvh = sorted((DATA / "bvh").glob("*.bvh*"))
    assert bvh and load_clip(bvh[0]).curves is None
