"""BVH reader and writer: real clips (counts from SOURCES.md), hand-made files, bad input."""

from __future__ import annotations

import lzma
import math
from pathlib import Path

import numpy as np
import pytest

from codec.errors import ClipFormatError
from codec.formats.bvh import read_bvh, write_bvh
from codec.model import quat
from codec.model.clip import Clip
from codec.model.transforms import object_space

DATA = Path(__file__).resolve().parents[2] / "data" / "bvh"

# From tests/data/SOURCES.md (= ../shared/data/SOURCES.md): (ROOT+JOINT count, End Sites,
# frames in header, rows, fps); the long clips are kept xz-compressed
FACTS = {
    "cmu_01_01_jumps.bvh": (31, 7, 2752, 2752, 120),
    "cmu_131_02_walk_3dsmax.bvh": (31, 7, 1247, 1247, 120),
    "cmu_02_03_run_ccrig.bvh": (101, 41, 86, 86, 60),
    "cmu_60_10_salsa_lead_scaled.bvh": (43, 14, 1197, 1197, 120.005),
    "assimp_boxing_toes.bvh": (21, 5, 3069, 3070, 100),
    "makehuman_face_poseunits.bvh": (163, 49, 60, 60, 24),
    "makehuman_tpose.bvh": (173, 49, 1, 1, 24),
    "cmu_02_02_walk_daz.bvh": (43, 14, 299, 299, 120),
}
LOCAL = ["cmu_02_03_run_ccrig.bvh", "cmu_02_02_walk_daz.bvh", "makehuman_tpose.bvh"]


def real_text(name: str) -> str:
    """A real clip's text from tests/data, plain or xz-compressed."""
    plain = DATA / name
    if plain.is_file():
        return plain.read_text()
    return lzma.decompress(plain.with_name(name + ".xz").read_bytes()).decode()


def read_real(name: str, **options: str) -> Clip:
    """read_bvh on a real clip of tests/data, under its own name (messages quote it)."""
    return read_bvh(DATA / name, data=real_text(name).encode(), **options)


def positions(clip) -> np.ndarray:
    return object_space(clip.rotations, clip.translations, clip.scales, clip.skeleton.parents)[
        ..., 3
    ]


def rotation_angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angle in radians between unit quaternions, accurate for tiny angles."""
    d = quat.mul(quat.conjugate(a), b)
    return 2.0 * np.arctan2(np.linalg.norm(d[..., :3], axis=-1), np.abs(d[..., 3]))


def count_hierarchy(name: str) -> tuple[int, int]:
    """ROOT+JOINT count and End Site count, straight from the file's text."""
    words = real_text(name).split()
    return words.count("ROOT") + words.count("JOINT"), words.count("End")


def write(tmp_path: Path, text: str, name: str = "clip.bvh") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def check_counts(name: str) -> None:
    joints, ends, header, rows, fps = FACTS[name]
    assert count_hierarchy(name) == (joints, ends)
    clip = read_real(name, units="cm")
    end_sites = sum(n.endswith("_End") for n in clip.skeleton.names)
    assert (clip.num_joints - end_sites, end_sites) == (joints, ends)
    assert clip.num_samples == rows
    assert clip.sample_rate == pytest.approx(fps, rel=1e-3)
    assert np.allclose(np.linalg.norm(clip.rotations, axis=-1), 1.0, atol=1e-12)
    assert np.all(quat.dot(clip.rotations[1:], clip.rotations[:-1]) >= 0.0)  # continuous
    if header != rows:
        assert any(str(header) in w and str(rows) in w and name in w for w in clip.warnings)


@pytest.mark.parametrize("name", sorted(FACTS))
def test_real_clips_match_sources(name: str) -> None:
    check_counts(name)


def test_end_sites_reach_the_tips_and_bind_pose_is_offsets() -> None:
    clip = read_bvh(DATA / "cmu_02_02_walk_daz.bvh", units="cm")
    sk = clip.skeleton
    assert "hip" == sk.names[0]
    assert np.allclose(sk.bind_translations[sk.index("abdomen")], [0, 20.6881, -0.73152])
    assert np.allclose(sk.bind_rotations, [0, 0, 0, 1])
    # every End Site is a leaf whose parent is the joint it is named after
    for j, n in enumerate(sk.names):
        if n.endswith("_End"):
            assert sk.names[sk.parents[j]] == n[: -len("_End")]
            assert len(sk.children(j)) == 0


def test_mixed_orders_first_row_by_hand() -> None:
    """cmu_02_02 root is ZYX, abdomen ZXY: check abdomen's local rotation against matrices."""
    clip = read_bvh(DATA / "cmu_02_02_walk_daz.bvh", units="cm")
    text = (DATA / "cmu_02_02_walk_daz.bvh").read_text().split("MOTION")[1].split("\n")
    row = [float(v) for v in text[3].split()]
    z, x, y = np.radians(row[6:9])  # abdomen: Zrotation Xrotation Yrotation
    rz = np.array([[math.cos(z), -math.sin(z), 0], [math.sin(z), math.cos(z), 0], [0, 0, 1]])
    rx = np.array([[1, 0, 0], [0, math.cos(x), -math.sin(x)], [0, math.sin(x), math.cos(x)]])
    ry = np.array([[math.cos(y), 0, math.sin(y)], [0, 1, 0], [-math.sin(y), 0, math.cos(y)]])
    got = quat.to_matrix(clip.rotations[0, clip.skeleton.index("abdomen")])
    assert np.allclose(got, rz @ rx @ ry, atol=1e-12)
    assert np.allclose(clip.translations[0, 0], row[:3])  # root position replaces OFFSET
    # the file's Euler orders are kept, and read the file's angles back
    abdomen = clip.skeleton.index("abdomen")
    assert clip.euler_orders[0] == "ZYX" and clip.euler_orders[abdomen] == "ZXY"
    back = np.degrees(quat.to_euler(clip.rotations[0, abdomen], "ZXY"))
    assert np.allclose(back, row[6:9], atol=1e-9)


def test_makehuman_six_channel_joints_add_to_offset() -> None:
    clip = read_bvh(DATA / "makehuman_tpose.bvh", units="cm")
    sk = clip.skeleton
    j = sk.index("upperleg01.R")  # CHANNELS 6, values 0 0 0, OFFSET -1.026150 0.083862 -0.0832
    assert np.allclose(clip.translations[0, j], [-1.026150, 0.083862, -0.083200], atol=1e-5)
    # no bone collapses onto its parent: T-pose bone lengths equal the OFFSET lengths
    bone = np.linalg.norm(clip.translations[0], axis=-1)
    assert np.allclose(bone[1:], np.linalg.norm(sk.bind_translations, axis=-1)[1:], atol=1e-4)


HAND = """HIERARCHY
ROOT Hips
{
  OFFSET 5 6 7
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 1 0
    CHANNELS 3 Xrotation Zrotation Yrotation
    End Site
    {
      OFFSET 0 2 0
    }
  }
  JOINT Slide
  {
    OFFSET 1 0 0
    CHANNELS 6 Zrotation Xposition Yrotation Yposition Xrotation Zposition
    End Site
    {
      OFFSET 0 0 3
    }
  }
}
MOTION
Frames: {frames}
Frame Time: .0083333
{rows}"""


def hand(rows: list[str], frames: int | None = None) -> str:
    n = len(rows) if frames is None else frames
    return HAND.replace("{frames}", str(n)).replace("{rows}", "\n".join(rows) + "\n")


ZERO = "0 0 0  0 0 0  0 0 0  0 0 0 0 0 0"


def test_hand_made_channel_orders(tmp_path: Path) -> None:
    rows = [
        ZERO,
        # root Zrotation 90: Spine's offset (0,1,0) -> (-1,0,0) relative to the root
        "0 0 0  90 0 0  0 0 0  0 0 0 0 0 0",
        # root Z 90 then X 90 (R = Rz Rx): (0,1,0) -> Rx -> (0,0,1) -> Rz -> (0,0,1)
        "0 0 0  90 90 0  0 0 0  0 0 0 0 0 0",
        # Spine "Xrotation Zrotation Yrotation" X 90, Z 90: tip (0,2,0) -> Rz -> (-2,0,0)
        # -> Rx -> (-2,0,0)
        "0 0 0  0 0 0  90 90 0  0 0 0 0 0 0",
        # Slide scrambled channels: Z 90, Xpos 1, Y 0, Ypos 2, X 0, Zpos 3 -> t = offset + (1,2,3)
        "0 0 0  0 0 0  0 0 0  90 1 0 2 0 3",
    ]
    clip = read_bvh(write(tmp_path, hand(rows)), units="cm")
    sk = clip.skeleton
    assert sk.names == ("Hips", "Spine", "Spine_End", "Slide", "Slide_End")
    assert list(sk.parents) == [-1, 0, 1, 0, 3]
    assert clip.sample_rate == pytest.approx(1 / 0.0083333)
    p = positions(clip)
    root = np.array([0.0, 0.0, 0.0])  # position channels replace the root OFFSET (5 6 7)
    assert np.allclose(p[0, 0], root)
    assert np.allclose(p[0, 1], [0, 1, 0])
    assert np.allclose(p[0, 2], [0, 3, 0])  # End Site reaches the tip
    assert np.allclose(p[1, 1], [-1, 0, 0], atol=1e-12)
    assert np.allclose(p[2, 1], [0, 0, 1], atol=1e-12)
    assert np.allclose(p[3, 2] - p[3, 1], [-2, 0, 0], atol=1e-12)
    assert np.allclose(clip.translations[4, 3], [2, 2, 3])
    # Slide's Zrotation 90 leaves its End Site's (0,0,3) where it is
    assert np.allclose(p[4, 4] - p[4, 3], [0, 0, 3], atol=1e-12)


def test_hand_made_frame_count_mismatch_uses_rows(tmp_path: Path) -> None:
    path = write(tmp_path, hand([ZERO, ZERO], frames=999999999), "liar.bvh")
    clip = read_bvh(path, units="cm")
    assert clip.num_samples == 2
    (w,) = [w for w in clip.warnings if "999999999" in w]
    assert "liar.bvh" in w and " 2 " in w


def test_units(tmp_path: Path) -> None:
    path = write(tmp_path, hand([ZERO]))
    cm = read_bvh(path, units="cm")
    assert [w for w in cm.warnings if not w.startswith("position channels")] == []
    m = read_bvh(path, units="m")
    inch = read_bvh(path, units="inch")
    assert np.allclose(m.skeleton.bind_translations, cm.skeleton.bind_translations * 100)
    assert np.allclose(inch.translations, cm.translations * 2.54)
    assert (m.units.unit, m.units.chosen_by, m.units.to_cm) == ("m", "user", 100.0)
    auto = read_bvh(path, units="auto", bvh_positions="add")  # 3 units tall: cm, said
    assert auto.warnings == [
        "units: the skeleton is 3 units tall, which fits no human scale; taken as cm "
        "(choose with --units)"
    ]
    assert (auto.units.unit, auto.units.chosen_by) == ("cm", "assumed")
    assert np.allclose(auto.translations, cm.translations)
    daz = read_bvh(DATA / "cmu_02_02_walk_daz.bvh")
    assert daz.warnings == [] and (daz.units.unit, daz.units.chosen_by) == ("cm", "auto")
    assert "153 units tall" in daz.units.statement()
    assert daz.units.up_axis is None and "up axis not declared" in daz.units.statement()
    with pytest.raises(ValueError):
        read_bvh(path, units="furlong")


def tall(height: float) -> str:
    """A two-joint BVH whose bind pose is `height` units tall."""
    return (
        "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 3 Zrotation Xrotation Yrotation\n"
        f" End Site\n {{\n  OFFSET 0 {height} 0\n }}\n}}\nMOTION\nFrames: 1\n"
        "Frame Time: 0.0333333\n0 0 0\n"
    )


@pytest.mark.parametrize(
    ("height", "unit", "to_cm"),
    [
        (1.19, "m", 100.0),  # the salsa clip scaled to metres
        (1.8, "m", 100.0),
        (16.6, "dm", 10.0),  # MakeHuman's decimetre rigs
        (24.3, "cmu", 2.54 / 0.45),  # CMU cgspeed rigs
        (26.1, "cmu", 2.54 / 0.45),
        (68.0, "inch", 2.54),
        (132.5, "cm", 1.0),
        (173.3, "cm", 1.0),
        (1750.0, "mm", 0.1),
    ],
)
def test_auto_units_from_skeleton_height(tmp_path: Path, height: float, unit: str, to_cm: float):
    clip = read_bvh(write(tmp_path, tall(height)))
    assert (clip.units.unit, clip.units.chosen_by) == (unit, "auto")
    assert clip.units.to_cm == pytest.approx(to_cm)
    assert clip.skeleton.bind_translations[1, 1] == pytest.approx(height * to_cm)
    assert f"{height:.3g} units tall" in clip.units.statement()
    assert clip.warnings == []


def test_auto_units_on_the_real_rigs_of_other_scales() -> None:
    """A MakeHuman decimetre rig is not taken as centimetres, a centimetre rig still is."""
    assert read_bvh(DATA / "makehuman_tpose.bvh").units.unit == "dm"
    assert read_bvh(DATA / "cmu_02_03_run_ccrig.bvh").units.unit == "cm"


def test_auto_units_on_metre_and_cmu_clips() -> None:
    clip = read_real("cmu_60_10_salsa_lead_scaled.bvh")
    assert clip.units.unit == "m"
    assert np.allclose(clip.skeleton.bind_translations[1], [0, 16.1626, -0.5715])
    for name in ("cmu_01_01_jumps.bvh", "cmu_131_02_walk_3dsmax.bvh"):
        assert read_real(name).units.unit == "cmu"


BAD = [
    ("", "HIERARCHY", 1),
    ("HIERARCHY\nROOT Hips\nOFFSET 0 0 0\n}\nMOTION\n", "'{' after ROOT name", 3),
    ("HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 7 Xrotation\n}\nMOTION\n", "7", 5),
    ("HIERARCHY\nROOT Hips\n{\n OFFSET 0 x 0\n}\nMOTION\n", "number", 4),
    ("HIERARCHY\nROOT Hips\n{\n CHANNELS 1 Wrotation\n}\nMOTION\n", "channel name", 4),
    ("HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 1 Xrotation\n", "'}' to close", 6),
    ("HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 1 Xrotation\n}\n", "'MOTION'", 7),
    ("HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 1 Xrotation\nMOTION\n", "'}'", 6),
    (
        "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 1 Xrotation\n}\nMOTION\nFrame: 2\n",
        "Frames",
        8,
    ),
    (
        "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 1 Xrotation\n}\nMOTION\nFrames: 2\n"
        "Frame Time: 0\n1\n",
        "Frame Time",
        9,
    ),
    (
        "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 1 Xrotation\n}\nMOTION\nFrames: 2\n"
        "Frame Time: 0.1\n",
        "no data rows",
        10,
    ),
    (
        "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 2 Xrotation Yrotation\n}\nMOTION\n"
        "Frames: 3\nFrame Time: 0.1\n1 2\n\n3\n4 5\n",
        "row 2 has 1 values, expected 2",
        12,
    ),
    (
        "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 2 Xrotation Yrotation\n}\nMOTION\n"
        "Frames: 2\nFrame Time: 0.1\n1 2\n3 nan\n",
        "finite",
        11,
    ),
    (
        "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 2 Xrotation Yrotation\n JOINT\n",
        "joint name",
        6,
    ),
    ("HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n End Site\n {\n }\n}\nMOTION\n", "OFFSET", 7),
    ("HIERARCHY\nJOINT Hips\n", "ROOT", 2),
]


@pytest.mark.parametrize(("text", "expected", "line"), BAD)
def test_bad_input_names_file_line_and_expectation(
    tmp_path: Path, text: str, expected: str, line: int
) -> None:
    path = write(tmp_path, text, "bad.bvh")
    with pytest.raises(ClipFormatError) as info:
        read_bvh(path)
    err = info.value
    assert expected in err.message
    assert err.line == line
    assert str(path) in str(err)


def test_binary_garbage_and_missing_file(tmp_path: Path) -> None:
    p = tmp_path / "garbage.bvh"
    p.write_bytes(bytes(range(256)) * 10)
    with pytest.raises(ClipFormatError):
        read_bvh(p)
    with pytest.raises(ClipFormatError):
        read_bvh(tmp_path / "missing.bvh")


def test_truncated_real_file_is_refused(tmp_path: Path) -> None:
    data = (DATA / "cmu_02_02_walk_daz.bvh").read_bytes()
    p = tmp_path / "cut.bvh"
    p.write_bytes(data[: len(data) - 100])  # cuts the last row short
    with pytest.raises(ClipFormatError, match="values, expected 132"):
        read_bvh(p)


def round_trip_bounds(clip, digits: int) -> tuple[float, float]:
    """Worst position and angle error that printing with `digits` decimals can cause."""
    unit = 0.5 * 10.0**-digits
    angle = 3 * math.radians(unit) * 1.01 + 1e-12  # three rounded Euler angles per joint
    depth = np.zeros(clip.num_joints, dtype=int)
    for j, p in enumerate(clip.skeleton.parents):
        depth[j] = depth[p] + 1 if p >= 0 else 1
    reach = float(np.max(np.ptp(positions(clip), axis=1)))  # no chain is longer than this
    return float(depth.max()) * (math.sqrt(3) * unit + angle * reach) + 1e-9, angle


@pytest.mark.parametrize("name", LOCAL)
@pytest.mark.parametrize("digits", [6, 3])
def test_write_read_round_trip_within_print_precision(
    tmp_path: Path, name: str, digits: int
) -> None:
    clip = read_bvh(DATA / name, units="cm")
    out = tmp_path / "out.bvh"
    assert write_bvh(clip, out, precision_digits=digits) == []
    back = read_bvh(out, units="cm")
    assert back.skeleton.names == clip.skeleton.names  # End Sites came back as End Sites
    assert np.array_equal(back.skeleton.parents, clip.skeleton.parents)
    assert back.num_samples == clip.num_samples
    assert back.sample_rate == pytest.approx(clip.sample_rate, rel=1e-9)
    pos_tol, ang_tol = round_trip_bounds(clip, digits)
    assert np.max(np.abs(positions(back) - positions(clip))) <= pos_tol
    assert np.max(rotation_angle(back.rotations, clip.rotations)) <= ang_tol
    # OFFSET is the bind translation, or where a joint holds another one throughout (the
    # MakeHuman T-pose's tiny channel values) that one, so it needs no position channel
    sk = clip.skeleton
    held = np.all(np.abs(clip.translations - clip.translations[0]) <= 1e-12, axis=(0, 2))
    moved = np.any(np.abs(clip.translations - sk.bind_translations) > 1e-12, axis=(0, 2))
    use = (held & moved & (sk.parents >= 0))[:, None]
    want = np.where(use, clip.translations[0], sk.bind_translations)
    assert np.allclose(back.skeleton.bind_translations, want, atol=10.0**-digits)


def test_writer_channels_scale_warning_and_atomicity(tmp_path: Path) -> None:
    clip = read_bvh(write(tmp_path, hand([ZERO, "1 2 3  10 20 30  0 0 0  0 0 0 0 0 0"])))
    scales = clip.scales.copy()
    scales[:, 1] = 2.0
    scaled = clip.replace(scales=scales)
    out = tmp_path / "out.bvh"
    warnings = write_bvh(scaled, out)  # a uniform scale: folded into what hangs below it
    assert warnings == [
        "BVH has no scale: folded the uniform scale of 1 joint(s) into the translations "
        "below: Spine"
    ]
    text = out.read_text()
    assert "OFFSET 0.000000 4.000000 0.000000" in text  # Spine's tip, twice as far
    assert text.count("CHANNELS 6") == 1  # only the root; Slide never leaves its OFFSET
    assert np.allclose(positions(read_bvh(out, units="cm")), positions(scaled), atol=1e-5)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    scales[:, 1] = [1.0, 2.0, 1.0]  # a non-uniform one cannot be: dropped, and said
    assert write_bvh(clip.replace(scales=scales), out) == [
        "BVH has no scale: dropped the non-uniform scale of 1 joint(s): Spine"
    ]
    assert out.read_text().count("End Site") == 2
    # a joint whose translation moves gets 6 channels and the motion survives
    trans = clip.translations.copy()
    trans[1, 1] += [0.5, 0, 0]
    moved = clip.replace(translations=trans)
    write_bvh(moved, out)
    assert out.read_text().count("CHANNELS 6") == 2
    back = read_bvh(out, units="cm")
    assert np.allclose(back.translations, moved.translations, atol=1e-6)
    assert np.max(rotation_angle(back.rotations, moved.rotations)) < 1e-7


SLIDE = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Slide
  {
    OFFSET 10 0 0
    CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 5 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.04
"""


def test_non_root_position_channels_are_read_as_the_file_means_them(tmp_path: Path) -> None:
    """Blender writes (and reads) a position channel as the joint's local translation,
    MakeHuman as an offset added to OFFSET: the first frame says which a file follows."""
    replaced = write(tmp_path, SLIDE + "0 0 0 0 0 0 10 0 0 0 0 0\n0 0 0 0 0 0 12 1 0 0 0 0\n")
    added = write(tmp_path, SLIDE + "0 0 0 0 0 0 0 0 0 0 0 0\n0 0 0 0 0 0 2 1 0 0 0 0\n", "a.bvh")
    for path in (replaced, added):
        clip = read_bvh(path, units="cm")
        assert np.allclose(clip.translations[:, 1], [[10, 0, 0], [12, 1, 0]])
        (note,) = clip.warnings
        assert "1 non-root joint" in note and "--bvh-positions" in note
        assert ("replacing OFFSET" in note) == (path == replaced)
    forced = read_bvh(replaced, units="cm", bvh_positions="add")  # the other reading, asked for
    assert np.allclose(forced.translations[:, 1], [[20, 0, 0], [22, 1, 0]]) and not forced.warnings
    forced = read_bvh(added, units="cm", bvh_positions="replace")
    assert np.allclose(forced.translations[:, 1], [[0, 0, 0], [2, 1, 0]])
    with pytest.raises(ValueError, match="bvh_positions"):
        read_bvh(added, bvh_positions="sideways")


def test_makehuman_near_zero_channels_still_add() -> None:
    clip = read_real("makehuman_tpose.bvh", units="cm")
    (note,) = [w for w in clip.warnings if w.startswith("position channels")]
    assert "143 non-root joint(s) read as offsets added to OFFSET" in note
    assert "near OFFSET on 0 and near zero on 143" in note
    same = read_real("makehuman_tpose.bvh", units="cm", bvh_positions="add")
    assert np.array_equal(clip.translations, same.translations)


def test_writer_writes_what_blender_reads(tmp_path: Path) -> None:
    """A moving non-root joint's channels hold its local translation (Blender's reading,
    `replace`), its OFFSET the bind translation; a joint held at another translation has no
    position channel; one that starts near zero gets its first frame as OFFSET, so `auto`
    reads every file we write the way Blender does."""
    clip = read_bvh(write(tmp_path, SLIDE + "0 0 0 0 0 0 0 0 0 0 0 0\n" * 2))
    trans = clip.translations.copy()
    trans[:, 1] = [[10, 0, 0], [12, 1, 0]]  # moves, starts at its bind translation
    out = tmp_path / "out.bvh"
    write_bvh(clip.replace(translations=trans), out)
    text = out.read_text()
    assert "OFFSET 10.000000 0.000000 0.000000" in text
    assert text.splitlines()[-1].split()[6:9] == ["12.000000", "1.000000", "0.000000"]
    for reading in ("auto", "replace"):
        back = read_bvh(out, units="cm", bvh_positions=reading)
        assert np.allclose(back.translations, trans, atol=1e-6)
    trans[:, 1] = [[0.1, 0, 0], [3, 0, 0]]  # nearer zero than its bind translation
    write_bvh(clip.replace(translations=trans), out)
    assert "OFFSET 0.100000 0.000000 0.000000" in out.read_text()
    assert np.allclose(read_bvh(out, units="cm").translations, trans, atol=1e-6)
    trans[:, 1] = [4, 0, 0]  # held away from the bind translation: OFFSET holds it
    write_bvh(clip.replace(translations=trans), out)
    assert out.read_text().count("CHANNELS 6") == 1
    back = read_bvh(out, units="cm")
    assert np.allclose(back.translations, trans) and not back.warnings


def test_assimp_reads_our_bvh_as_we_do(tmp_path: Path) -> None:
    """assimp (like Blender) takes a non-root position channel for the joint's translation:
    the Fox's hip, which moves, comes out where our clip has it (the old writer's file put
    it 5,059 cm away)."""
    from codec.formats.gltf import read_gltf
    from tests.codec.formats import assimp_reference

    clip = read_gltf(DATA.parent / "gltf" / "Fox.glb", animation="Walk")
    out = tmp_path / "fox.bvh"
    write_bvh(clip, out)
    assert out.read_text().count("CHANNELS 6") >= 2  # the root and the moving hip
    seconds = np.arange(clip.num_samples) / clip.sample_rate
    world = assimp_reference.world_positions(out.read_bytes(), "Motion", seconds, b"bvh")
    by_name = {path.rsplit("/", 1)[-1]: p for path, p in world.items()}
    ours = positions(clip)
    for j, name in enumerate(clip.skeleton.names):
        if name in by_name:
            assert np.abs(by_name[name] - ours[:, j]).max() < 1e-2, name
    assert "b_Hip_01" in by_name
