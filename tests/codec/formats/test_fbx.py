"""FBX reader: the shared FBX files (figures from SOURCES.md; world positions against assimp,
an independent reader), units and axes, stacks, compression, hand-made and broken files."""

from __future__ import annotations

import functools
import lzma
import math
from pathlib import Path

import numpy as np
import pytest

from codec import ClipFormatError, load_clip
from codec.formats import list_animations
from codec.model.clip import Clip
from codec.model.transforms import object_space
from tests.codec.formats import assimp_reference

DATA = Path(__file__).resolve().parents[2] / "data" / "fbx"
TOLERANCE_CM = 0.05  # world positions against an independent reader, at most

# From tests/data/SOURCES.md (= ../shared/data/SOURCES.md): bones, frames, fps, stacks,
# metres per unit. The frame count is the first stack's (Robot_Dance for the robot).
FACTS = {
    "quaternius_robot.fbx.xz": (58, 81, 24, 14, 0.01),
    "blender_293_barbarian_7400_binary.fbx.xz": (30, 63, 24, 1, 1.0),
    "maya_kenney_character_7700_binary.fbx.xz": (58, 21, 24, 1, 0.01),
    "cmu_07_01_blender.fbx.xz": (38, 317, 120, 1, 0.01),
}
ROBOT = DATA / "quaternius_robot.fbx.xz"


def positions(clip) -> np.ndarray:
    """World positions (S, J, 3) in cm."""
    return object_space(clip.rotations, clip.translations, clip.scales, clip.skeleton.parents)[
        ..., 3
    ]


@functools.cache
def default_clip(name: str) -> Clip:
    """`load_clip(DATA / name)` read once for the whole module (each read starts a ufbx child
    process); its arrays are made read-only so no test can change what the next one sees."""
    clip = load_clip(DATA / name)
    for array in (clip.rotations, clip.translations, clip.scales):
        array.flags.writeable = False
    return clip


@pytest.fixture(scope="module")
def raw() -> dict[str, bytes]:
    return {name: lzma.decompress((DATA / name).read_bytes()) for name in FACTS}


@pytest.mark.parametrize("name", sorted(FACTS))
def test_counts_match_sources(name: str) -> None:
    bones, frames, fps, stacks, meters = FACTS[name]
    clip = default_clip(name)
    assert (clip.num_joints, clip.num_samples, clip.sample_rate) == (bones, frames, fps)
    animations = list_animations(DATA / name)
    assert len(animations) == stacks
    assert clip.name == animations[0]
    assert clip.units.chosen_by == "file" and clip.units.to_cm == pytest.approx(meters * 100)
    assert clip.units.up_axis == "+Y"
    assert f"1 unit = {meters:g} m" in clip.units.declared
    # the animation reads cleanly; notes on the meshes (blend shapes, props) are not about it
    assert [w for w in clip.warnings if not w.startswith(("mesh ", "meshes:"))] == []


@pytest.mark.parametrize("name", sorted(FACTS))
def test_world_positions_match_assimp_at_every_frame(name: str, raw: dict[str, bytes]) -> None:
    clip = default_clip(name)
    theirs = assimp_reference.clip_joint_positions_cm(clip, raw[name], clip.name)
    gap = np.linalg.norm(positions(clip) - theirs, axis=-1)
    assert gap.max() <= TOLERANCE_CM, (
        f"{gap.max():.4g} cm at {np.unravel_index(gap.argmax(), gap.shape)}"
    )


def test_every_robot_stack_is_an_animation_matching_assimp(raw: dict[str, bytes]) -> None:
    data = raw[ROBOT.name]
    stacks = list_animations(ROBOT)
    assert stacks == assimp_reference.animation_names(data)
    assert len(stacks) == 14 and "RobotArmature|Robot_Dance" in stacks
    lengths = set()
    for stack in stacks:
        clip = load_clip(ROBOT, animation=stack)
        assert clip.name == stack and clip.num_joints == 58
        lengths.add(clip.num_samples)
        gap = np.linalg.norm(
            positions(clip) - assimp_reference.clip_joint_positions_cm(clip, data, stack), axis=-1
        )
        assert gap.max() <= TOLERANCE_CM, stack
    assert len(lengths) > 3  # the stacks are read as themselves, not as one stack again


def test_a_stack_by_the_actions_name_alone() -> None:
    clip = load_clip(ROBOT, animation="Robot_Wave")
    assert clip.name == "RobotArmature|Robot_Wave"
    with pytest.raises(ClipFormatError, match="no animation stack named 'Robot_Moonwalk'"):
        load_clip(ROBOT, animation="Robot_Moonwalk")


def test_a_bone_and_a_mesh_sharing_a_name_give_one_joint() -> None:
    """Robot.fbx has a bone and a mesh both named Foot.R: the joint is the bone."""
    clip = default_clip(ROBOT.name)
    names = clip.skeleton.names
    assert names.count("Foot.R") == 1 and len(set(names)) == len(names)
    foot = clip.skeleton.index("Foot.R")
    assert names[clip.skeleton.parents[foot]] == "Bone"
    assert (
        "Foot.R_end" in names
        and names[clip.skeleton.parents[names.index("Foot.R_end")]] == "Foot.R"
    )


def test_several_roots_and_ik_control_roots_are_kept() -> None:
    barbarian = default_clip("blender_293_barbarian_7400_binary.fbx.xz")
    roots = [barbarian.skeleton.names[j] for j in np.flatnonzero(barbarian.skeleton.parents < 0)]
    assert len(roots) == 5 and "bassin" in roots
    kenney = default_clip("maya_kenney_character_7700_binary.fbx.xz")
    roots = [kenney.skeleton.names[j] for j in np.flatnonzero(kenney.skeleton.parents < 0)]
    assert sorted(roots) == ["HipsCtrl", "LeftFootCtrl", "RightFootCtrl"]


def test_sparse_keys_are_evaluated_at_every_frame(raw: dict[str, bytes]) -> None:
    """Blender stores sparse keys: Robot_Dance's 'Body' bone has 22 keys over 81 frames
    (frames 0-9 and 69-80; it holds still in between). The clip has a sample per frame and
    Body moves exactly where its keys are, so keys were not taken as frames."""
    stack = "RobotArmature|Robot_Dance"
    keys = assimp_reference.key_times(raw[ROBOT.name], stack)["Body"]
    key_frames = set(np.rint(keys * 24).astype(int).tolist())
    assert len(keys) == 22 and max(key_frames) == 80
    clip = load_clip(ROBOT, animation=stack)
    assert clip.num_samples == 81
    body = clip.skeleton.index("Body")
    turn = np.abs(np.diff(clip.rotations[:, body], axis=0)).max(axis=1)
    moving = set((np.flatnonzero(turn > 1e-7) + 1).tolist())  # frames that differ from the last
    assert moving and moving <= key_frames and max(moving) > 60


def test_metre_file_is_converted_to_cm() -> None:
    clip = default_clip("blender_293_barbarian_7400_binary.fbx.xz")
    height = np.ptp(positions(clip)[0], axis=0).max()
    assert 300 < height < 600  # the barbarian is about 4.8 units (m) tall in the file
    same = load_clip(DATA / "blender_293_barbarian_7400_binary.fbx.xz", units="cm")
    assert same.units.chosen_by == "user" and "1 unit = 1 m" in same.units.statement()
    assert np.allclose(positions(same) * 100, positions(clip))


def test_sample_rate_resamples_the_curves_and_says_so() -> None:
    clip = load_clip(DATA / "cmu_07_01_blender.fbx.xz", sample_rate=30)
    assert clip.sample_rate == 30 and clip.num_samples == math.ceil(316 / 4) + 1
    assert any("30 Hz as asked" in w and "120" in w for w in clip.warnings)
    full = default_clip("cmu_07_01_blender.fbx.xz")
    assert np.allclose(positions(clip)[:-1], positions(full)[::4][: clip.num_samples - 1])


def test_plain_and_compressed_files_read_the_same(tmp_path: Path, raw: dict[str, bytes]) -> None:
    plain = tmp_path / "kenney.fbx"
    plain.write_bytes(raw["maya_kenney_character_7700_binary.fbx.xz"])
    a = load_clip(plain)
    b = default_clip("maya_kenney_character_7700_binary.fbx.xz")
    assert np.array_equal(a.rotations, b.rotations) and np.array_equal(
        a.translations, b.translations
    )


@pytest.mark.parametrize(
    "name",
    [
        "blender_293_barbarian_7400_binary.fbx.xz",
        "quaternius_robot.fbx.xz",
        # Hips turns 179.8 degrees (|w| 0.0014) under a x100 scale: drop-w could not
        # reach 0.01 cm there, the rotation layouts do
        "maya_kenney_character_7700_binary.fbx.xz",
    ],
)
def test_compresses_within_precision(name: str) -> None:
    from codec.compression import compress
    from codec.settings import CompressionSettings

    stats = compress(default_clip(name), CompressionSettings()).stats
    assert stats["precision_met"] and stats["max_error"] <= 0.01, stats["joints_over_precision"]


# ---------------------------------------------------------------- a hand-made ASCII FBX 7.4

TICKS = 46186158000  # FBX time units per second


def ascii_fbx(keys_deg=(0, 90), stop_s=1.0):
    kt = ",".join(
        str(int(round(i * stop_s / (len(keys_deg) - 1) * TICKS))) for i in range(len(keys_deg))
    )
    kv = ",".join(f"{v:g}" for v in keys_deg)
    n = len(keys_deg)
    return f"""; FBX 7.4.0 project file
; a hand-made test file
FBXHeaderExtension:  {{
	FBXHeaderVersion: 1003
	FBXVersion: 7400
	Creator: "shellscope test"
}}
GlobalSettings:  {{
	Version: 1000
	Properties70:  {{
		P: "UpAxis", "int", "Integer", "",2
		P: "UpAxisSign", "int", "Integer", "",1
		P: "FrontAxis", "int", "Integer", "",1
		P: "FrontAxisSign", "int", "Integer", "",-1
		P: "CoordAxis", "int", "Integer", "",0
		P: "CoordAxisSign", "int", "Integer", "",1
		P: "UnitScaleFactor", "double", "Number", "",2.54
		P: "TimeMode", "enum", "", "",6
	}}
}}
Objects:  {{
	NodeAttribute: 101, "NodeAttribute::", "LimbNode" {{
		TypeFlags: "Skeleton"
	}}
	NodeAttribute: 102, "NodeAttribute::", "LimbNode" {{
		TypeFlags: "Skeleton"
	}}
	NodeAttribute: 103, "NodeAttribute::", "LimbNode" {{
		TypeFlags: "Skeleton"
	}}
	Model: 201, "Model::Rig", "Null" {{
		Version: 232
		Properties70:  {{
			P: "Lcl Translation", "Lcl Translation", "", "A",1,2,3
			P: "Lcl Rotation", "Lcl Rotation", "", "A",-90,0,0
		}}
	}}
	Model: 202, "Model::Hip", "LimbNode" {{
		Version: 232
		Properties70:  {{
			P: "RotationActive", "bool", "", "",1
			P: "Lcl Translation", "Lcl Translation", "", "A",0,10,0
			P: "PreRotation", "Vector3D", "Vector", "",0,0,30
		}}
	}}
	Model: 203, "Model::Knee", "LimbNode" {{
		Version: 232
		Properties70:  {{
			P: "RotationActive", "bool", "", "",1
			P: "Lcl Translation", "Lcl Translation", "", "A",5,0,0
			P: "RotationOffset", "Vector3D", "Vector", "",0,1,0
			P: "RotationPivot", "Vector3D", "Vector", "",2,0,0
			P: "PreRotation", "Vector3D", "Vector", "",10,0,0
			P: "PostRotation", "Vector3D", "Vector", "",0,20,0
		}}
	}}
	Model: 204, "Model::Ankle", "LimbNode" {{
		Version: 232
		Properties70:  {{
			P: "Lcl Translation", "Lcl Translation", "", "A",4,0,0
		}}
	}}
	AnimationStack: 301, "AnimStack::Bend", "" {{
		Properties70:  {{
			P: "LocalStart", "KTime", "Time", "",0
			P: "LocalStop", "KTime", "Time", "",{int(round(stop_s * TICKS))}
			P: "ReferenceStart", "KTime", "Time", "",0
			P: "ReferenceStop", "KTime", "Time", "",{int(round(stop_s * TICKS))}
		}}
	}}
	AnimationLayer: 302, "AnimLayer::BaseLayer", "" {{
	}}
	AnimationCurveNode: 303, "AnimCurveNode::R", "" {{
		Properties70:  {{
			P: "d|X", "Number", "", "A",0
			P: "d|Y", "Number", "", "A",0
			P: "d|Z", "Number", "", "A",0
		}}
	}}
	AnimationCurve: 304, "AnimCurve::", "" {{
		Default: 0
		KeyVer: 4008
		KeyTime: *{n} {{
			a: {kt}
		}}
		KeyValueFloat: *{n} {{
			a: {kv}
		}}
		KeyAttrFlags: *1 {{
			a: 4
		}}
		KeyAttrDataFloat: *4 {{
			a: 0,0,0,0
		}}
		KeyAttrRefCount: *1 {{
			a: {n}
		}}
	}}
}}
Connections:  {{
	C: "OO",201,0
	C: "OO",202,201
	C: "OO",203,202
	C: "OO",204,203
	C: "OO",101,202
	C: "OO",102,203
	C: "OO",103,204
	C: "OO",302,301
	C: "OO",303,302
	C: "OP",303,203, "Lcl Rotation"
	C: "OP",304,303, "d|Z"
}}
"""


def euler_xyz(deg: tuple[float, float, float]) -> np.ndarray:
    """FBX's default eEulerXYZ: X applied first, so R = Rz @ Ry @ Rx (4x4)."""
    x, y, z = np.radians(deg)
    rx = np.array([[1, 0, 0], [0, np.cos(x), -np.sin(x)], [0, np.sin(x), np.cos(x)]])
    ry = np.array([[np.cos(y), 0, np.sin(y)], [0, 1, 0], [-np.sin(y), 0, np.cos(y)]])
    rz = np.array([[np.cos(z), -np.sin(z), 0], [np.sin(z), np.cos(z), 0], [0, 0, 1]])
    m = np.eye(4)
    m[:3, :3] = rz @ ry @ rx
    return m


def move(v: tuple[float, float, float]) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = v
    return m


def hand_made_world(angle: float) -> np.ndarray:
    """World positions (3, 3) in inches of Hip, Knee, Ankle, from the FBX SDK's documented
    transform T * Roff * Rp * Rpre * R * Rpost^-1 * Rp^-1 (no scaling terms here)."""
    rig = move((1, 2, 3)) @ euler_xyz((-90, 0, 0))
    hip = rig @ move((0, 10, 0)) @ euler_xyz((0, 0, 30))
    knee = (
        hip
        @ move((5, 0, 0))
        @ move((0, 1, 0))
        @ move((2, 0, 0))
        @ euler_xyz((10, 0, 0))
        @ euler_xyz((0, 0, angle))
        @ np.linalg.inv(euler_xyz((0, 20, 0)))
        @ move((-2, 0, 0))
    )
    ankle = knee @ move((4, 0, 0))
    return np.array([hip[:3, 3], knee[:3, 3], ankle[:3, 3]])


def test_hand_made_ascii_fbx_pivots_prerotation_units_axes(tmp_path: Path) -> None:
    """Rotation offset, pivot, pre- and post-rotation on an animated knee under a rotated,
    moved null: every frame's world positions follow the SDK's formula, in inches -> cm,
    with Z up, and match assimp's."""
    path = tmp_path / "hand.fbx"
    path.write_text(ascii_fbx())
    clip = load_clip(path)
    assert clip.skeleton.names == ("Hip", "Knee", "Ankle")  # the null above is folded in
    assert (clip.num_samples, clip.sample_rate, clip.name) == (31, 30.0, "Bend")
    assert (clip.units.unit, clip.units.to_cm, clip.units.up_axis) == ("inch", 2.54, "+Z")
    assert "ASCII" in clip.units.declared
    # the curve has two linear keys (0 and 90 degrees at 0 s and 1 s): frame k is 3k degrees
    want = np.array([hand_made_world(3.0 * k) for k in range(31)]) * 2.54
    assert np.abs(positions(clip) - want).max() < 1e-9
    theirs = assimp_reference.clip_joint_positions_cm(clip, path.read_bytes(), "Bend")
    assert np.abs(positions(clip) - theirs).max() < 1e-4


def test_a_skeleton_of_null_nodes_is_read_and_said(tmp_path: Path) -> None:
    """Some exporters write the skeleton as null nodes: with no bone in the file, the nulls
    are the joints (with a warning), and the world positions are the same."""
    text = ascii_fbx().replace('"LimbNode"', '"Null"').replace('"Skeleton"', '"Null"')
    path = tmp_path / "nulls.fbx"
    path.write_text(text)
    clip = load_clip(path)
    assert clip.skeleton.names == ("Rig", "Hip", "Knee", "Ankle")
    assert clip.warnings == [
        "the file has no bone nodes: its null (empty) nodes are read as the skeleton"
    ]
    want = np.array([hand_made_world(3.0 * k) for k in range(31)]) * 2.54
    assert np.abs(positions(clip)[:, 1:] - want).max() < 1e-9


def test_a_file_without_animation_is_its_rest_pose(tmp_path: Path) -> None:
    text = ascii_fbx()
    text = text[: text.index("\tAnimationStack:")] + "}\n" + text[text.index("Connections:") :]
    path = tmp_path / "still.fbx"
    path.write_text(text)
    clip = load_clip(path)
    assert clip.num_samples == 1 and clip.name == "still"
    assert clip.warnings == ["the file has no animation stack: showing the rest pose"]
    assert np.abs(positions(clip)[0] - hand_made_world(0.0) * 2.54).max() < 1e-9


FBX61 = """; FBX 6.1.0 project file
FBXHeaderExtension:  {
	FBXHeaderVersion: 1003
	FBXVersion: 6100
	Creator: "shellscope test"
}
Definitions:  {
	Version: 100
	Count: 3
	ObjectType: "Model" {
		Count: 2
	}
}
Objects:  {
	Model: "Model::Hip", "Limb" {
		Version: 232
		Properties60:  {
			Property: "Lcl Translation", "Lcl Translation", "A",0,10,0
			Property: "Lcl Rotation", "Lcl Rotation", "A",0,0,0
			Property: "Lcl Scaling", "Lcl Scaling", "A",1,1,1
		}
		TypeFlags: "Skeleton"
	}
	Model: "Model::Knee", "Limb" {
		Version: 232
		Properties60:  {
			Property: "Lcl Translation", "Lcl Translation", "A",5,0,0
			Property: "Lcl Rotation", "Lcl Rotation", "A",0,0,0
			Property: "Lcl Scaling", "Lcl Scaling", "A",1,1,1
		}
		TypeFlags: "Skeleton"
	}
	Model: "Model::Foot", "Limb" {
		Version: 232
		Properties60:  {
			Property: "Lcl Translation", "Lcl Translation", "A",4,0,0
		}
		TypeFlags: "Skeleton"
	}
	GlobalSettings:  {
		Version: 1000
		Properties60:  {
			Property: "UpAxis", "int", "",1
			Property: "UpAxisSign", "int", "",1
			Property: "FrontAxis", "int", "",2
			Property: "FrontAxisSign", "int", "",1
			Property: "CoordAxis", "int", "",0
			Property: "CoordAxisSign", "int", "",1
			Property: "UnitScaleFactor", "double", "",1
		}
	}
}
Connections:  {
	Connect: "OO", "Model::Hip", "Model::Scene"
	Connect: "OO", "Model::Knee", "Model::Hip"
	Connect: "OO", "Model::Foot", "Model::Knee"
}
Takes:  {
	Current: "Bend"
	Take: "Bend" {
		FileName: "Bend.tak"
		LocalTime: 0,46186158000
		ReferenceTime: 0,46186158000
		Model: "Model::Knee" {
			Version: 1.1
			Channel: "Transform" {
				Channel: "R" {
					Channel: "X" {
						Default: 0
						KeyVer: 4005
						KeyCount: 1
						Key: 0,0,L
						Color: 1,0,0
					}
					Channel: "Y" {
						Default: 0
						KeyVer: 4005
						KeyCount: 1
						Key: 0,0,L
						Color: 0,1,0
					}
					Channel: "Z" {
						Default: 0
						KeyVer: 4005
						KeyCount: 2
						Key: 0,0,L,46186158000,90,L
						Color: 0,0,1
					}
					LayerType: 2
				}
			}
		}
	}
}
"""


def test_hand_made_fbx_6_1_ascii_take(tmp_path: Path) -> None:
    """FBX 6.1 keeps animation in Takes: the take is the animation, its curves evaluated at
    the file's rate (24 Hz: the file sets no TimeMode)."""
    path = tmp_path / "old.fbx"
    path.write_text(FBX61)
    assert list_animations(path) == ["Bend"]
    clip = load_clip(path)
    assert clip.skeleton.names == ("Hip", "Knee", "Foot")
    assert (clip.num_samples, clip.sample_rate, clip.name) == (25, 24.0, "Bend")
    angle = np.radians(90 * np.arange(25) / 24)
    foot = np.stack([5 + 4 * np.cos(angle), 10 + 4 * np.sin(angle), 0 * angle], axis=-1)
    assert np.abs(positions(clip)[:, 2] - foot).max() < 1e-9


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "not a readable FBX file"),
        (b"Kaydara FBX Binary  \x00\x1a\x00" + b"\xff" * 40, "not a readable FBX file"),
        (b"; FBX 7.4.0 project file\nFBXHeaderExtension: {\n", "has no bone nodes"),
    ],
)
def test_broken_files_are_clear_errors(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "broken.fbx"
    path.write_bytes(content)
    with pytest.raises(ClipFormatError, match=message) as info:
        load_clip(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.9, 0.999])
def test_truncated_binary_fbx_is_an_error_or_a_clip(
    tmp_path: Path, raw: dict[str, bytes], keep: float
) -> None:
    data = raw["maya_kenney_character_7700_binary.fbx.xz"]
    path = tmp_path / "cut.fbx"
    path.write_bytes(data[: int(len(data) * keep)])
    try:
        clip = load_clip(path)
    except ClipFormatError as e:
        assert str(path) in str(e)
    else:
        assert clip.num_joints > 0


def test_a_crash_of_the_reader_process_is_a_clear_error(tmp_path: Path) -> None:
    """ufbx runs in a child process (codec.formats.reader_process) so that its crash cannot
    take the window down; a real child that dies of SIGSEGV is one line naming the file."""
    from codec.formats.reader_process import run_reader

    path = tmp_path / "crash.fbx"
    path.write_bytes(b"x")
    request = {"how": "segv"}
    module = "tests.codec.formats.misbehaving_reader"
    with pytest.raises(ClipFormatError) as info:
        run_reader(path, None, request, module=module, library="ufbx")
    assert str(info.value) == f"{path}: ufbx crashed while reading crash.fbx: SIGSEGV"


def test_an_ascii_array_count_over_the_budget_is_refused_with_its_line(tmp_path: Path) -> None:
    """ASCII FBX declares array sizes as `*N`: checked against the file's budget before
    ufbx reads (codec.formats.fbx_scan)."""
    from tests.codec.formats import hostile_files as hf

    text = (hf.HOSTILE_DATA / "fbx_unit_scale_zero.fbx").read_text()
    text = text.replace(
        "Objects:  {",
        'Objects:  {\n\tGeometry: 5, "Geometry::g", "Mesh" {\n'
        "\t\tVertices: *40000000 {\n\t\t\ta: 0\n\t\t}\n\t}",
    )
    path = tmp_path / "count.fbx"
    path.write_text(text)
    with pytest.raises(ClipFormatError) as info:
        load_clip(path)
    assert str(info.value).startswith(f"{path}:14: an array of 40,000,000 values is over")
