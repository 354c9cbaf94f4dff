"""ACL SJSON: real clips checked against facts from SOURCES.md, hand-made snippets, round trips."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from codec.errors import ClipFormatError
from codec.formats import sjson
from codec.formats.acl_sjson import read_acl_sjson, write_acl_sjson
from codec.model.clip import Clip, Skeleton
from codec.model.scalar_tracks import ScalarTrackList
from tests.codec.helpers import data_clip

DATA = Path(__file__).resolve().parents[2] / "data" / "acl"

# (file, bones, samples, rate) from tests/data/SOURCES.md (ACL regression set)
LOCAL_CLIPS = [
    ("cmu_09_02", 44, 26, 24.0),
    ("cmu_09_02_with_zero_scale", 44, 26, 24.0),
    ("cmu_09_02_multi_root", 44, 26, 24.0),
    ("cmu_121_10_single_sample", 44, 1, 24.0),
    ("cmu_81_16_two_samples", 44, 2, 24.0),
]
ALL_CLIPS = [  # the long ones are kept xz-compressed (tests.codec.helpers.data_clip)
    *LOCAL_CLIPS,
    ("cmu_81_18_looping", 44, 230, 24.0),
    ("cmu_49_15", 44, 190, 24.0),
    ("cmu_13_07", 44, 291, 24.0),
]
TRACK_LISTS = [
    ("track_list_float3f", "float3f", 4),
    ("track_list_float4f", "float4f", 4),
    ("track_list_remap_output", "float4f", 4),
]


def write(tmp_path: Path, text: str, name: str = "t.acl.sjson") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def assert_same_clip(a: Clip, b: Clip) -> None:
    for attr in ("rotations", "translations", "scales"):
        assert np.array_equal(getattr(a, attr), getattr(b, attr)), attr
    for attr in (
        "parents",
        "bind_rotations",
        "bind_translations",
        "bind_scales",
        "precision",
        "shell_distance",
    ):
        assert np.array_equal(getattr(a.skeleton, attr), getattr(b.skeleton, attr)), attr
    assert a.skeleton.names == b.skeleton.names
    assert a.sample_rate == b.sample_rate
    assert a.name == b.name


# ------------------------------------------------------------------ real clips


@pytest.mark.parametrize(("stem", "bones", "samples", "rate"), LOCAL_CLIPS)
def test_local_clips_match_sources(stem: str, bones: int, samples: int, rate: float) -> None:
    clip = read_acl_sjson(DATA / f"{stem}.acl.sjson")
    assert isinstance(clip, Clip)
    assert (clip.num_joints, clip.num_samples, clip.sample_rate) == (bones, samples, rate)
    norms = np.linalg.norm(clip.rotations, axis=-1)
    assert np.all(np.abs(norms - 1.0) < 1e-6)  # SOURCES.md: all quaternions are unit
    assert clip.warnings == []
    assert np.all(clip.skeleton.shell_distance == 3.0)  # vertex_distance = 3.0 throughout
    assert np.all(clip.skeleton.precision == 0.01)  # v1 header error_threshold = 0.01


def test_cmu_09_02_values_are_read_as_written() -> None:
    clip = read_acl_sjson(DATA / "cmu_09_02.acl.sjson")
    assert clip.name == "09_02"
    assert clip.skeleton.names[:3] == ("09_02", "hip", "abdomen")
    # literal values from the file's first bones
    assert clip.skeleton.bind_rotations[0].tolist() == [
        -0.7071067811865475,
        -0.0,
        0.0,
        0.7071067811865476,
    ]
    assert clip.skeleton.bind_translations[2].tolist() == [
        0.0,
        20.688100814819336,
        -0.731516122817993,
    ]
    # 44 rotation tracks and 43 translation tracks: the root has no translations and no
    # bind_translation, so it holds zero
    assert np.all(clip.translations[:, 0] == 0.0)


def test_multi_root_has_three_roots() -> None:
    clip = read_acl_sjson(DATA / "cmu_09_02_multi_root.acl.sjson")
    assert int(np.sum(clip.skeleton.parents == -1)) == 3


def test_with_zero_scale_has_zero_and_negative_scale() -> None:
    clip = read_acl_sjson(DATA / "cmu_09_02_with_zero_scale.acl.sjson")
    assert clip.scales.min() == -1.3
    assert np.any(clip.scales == 0.0)
    assert clip.has_scale


def test_single_sample_is_a_static_pose() -> None:
    clip = read_acl_sjson(DATA / "cmu_121_10_single_sample.acl.sjson")
    assert clip.duration == 0.0


@pytest.mark.parametrize(("stem", "kind", "tracks"), TRACK_LISTS)
def test_scalar_track_lists(stem: str, kind: str, tracks: int) -> None:
    tl = read_acl_sjson(DATA / f"{stem}.acl.sjson")
    assert isinstance(tl, ScalarTrackList)
    assert tl.track_type == kind
    assert tl.values.shape == (26, tracks, int(kind[5]))
    assert tl.sample_rate == 24.0 and tl.name == "test_list"
    assert np.all(tl.precision == 0.0001)


def test_float3f_list_constant_tracks_are_the_ones_named_so() -> None:
    # SOURCES.md says "one of them constant"; the file names two tracks "*_constant" and
    # both are: the names are the file author's own statement, so they are what we check.
    tl = read_acl_sjson(DATA / "track_list_float3f.acl.sjson")
    constant = np.all(tl.values == tl.values[:1], axis=(0, 2))
    assert constant.tolist() == ["constant" in n for n in tl.names]
    assert tl.names[0] == "0-float3f_constant"


def test_remap_output_indices() -> None:
    plain = read_acl_sjson(DATA / "track_list_float4f.acl.sjson")
    remap = read_acl_sjson(DATA / "track_list_remap_output.acl.sjson")
    assert plain.output_index.tolist() == [0, 1, 2, 3]
    assert sorted(remap.output_index.tolist()) == [0, 1, 2, 3]
    assert remap.output_index.tolist() != [0, 1, 2, 3]
    assert remap.output_index[0] == 3  # the file's first track: output_index = 3


@pytest.mark.parametrize(("stem", "bones", "samples", "rate"), ALL_CLIPS)
def test_every_real_clip_loads(stem: str, bones: int, samples: int, rate: float) -> None:
    clip = read_acl_sjson(data_clip(f"{stem}.acl.sjson"))
    assert (clip.num_joints, clip.num_samples, clip.sample_rate) == (bones, samples, rate)


def test_format_reference_holds_two_forms_and_is_refused() -> None:
    # ACL's reference documents a clip *and* a track list in one file; ACL itself reads one
    # form and refuses what follows, so we refuse the file with a message that says why.
    with pytest.raises(ClipFormatError, match="holds both a clip .* and a track list") as info:
        read_acl_sjson(DATA / "format_reference_v5.acl.sjson")
    assert info.value.line is not None


def test_format_reference_clip_half_reads(tmp_path: Path) -> None:
    text = (DATA / "format_reference_v5.acl.sjson").read_text()
    clip_half = text[: text.index("// END CLIP RELATED DATA")]
    # the reference declares 73 samples but writes 2 (SOURCES.md): a clear count error
    with pytest.raises(ClipFormatError, match=r"2 samples, expected 73") as info:
        read_acl_sjson(write(tmp_path, clip_half))
    assert info.value.line == clip_half[: clip_half.index("rotations =")].count("\n") + 1
    clip = read_acl_sjson(write(tmp_path, clip_half.replace("num_samples = 73", "num_samples = 2")))
    assert clip.skeleton.names == ("root", "bone1")
    assert clip.skeleton.parents.tolist() == [-1, 0]
    assert clip.skeleton.shell_distance.tolist() == [1.0, 1.0]
    assert clip.rotations[1, 0].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert clip.sample_rate == 30.0 and clip.name == "A clip"
    # bone1 has no track: it holds its (identity) bind pose, with a warning
    assert np.all(clip.rotations[:, 1] == [0, 0, 0, 1])
    assert any("no track" in w for w in clip.warnings)


def test_format_reference_track_list_half_reads(tmp_path: Path) -> None:
    text = (DATA / "format_reference_v5.acl.sjson").read_text()
    start = text.index("// BEGIN TRACK LIST RELATED DATA")
    head = "version = 5\n"
    half = head + text[start:].replace("num_samples = 73", "num_samples = 2")
    half = half.replace("is_binary_exact = true", "is_binary_exact = false")
    tl = read_acl_sjson(write(tmp_path, half))
    assert isinstance(tl, ScalarTrackList)
    assert tl.track_type == "float4f" and tl.names == ("Right Hand IK",)
    assert tl.output_index.tolist() == [12]
    np.testing.assert_array_equal(tl.values[:, 0], [[0, 0, 0, 1], [1, 0, 0, 0]])


# ------------------------------------------------------------------ hand-made clips

V1 = """\
version = 1

clip =
{
	name = "tiny"
	num_samples = 2
	sample_rate = 30
	error_threshold = 0.05
}

bones =
[
	{
		name = "root"
		parent = ""
		vertex_distance = 2.0
		bind_translation = [ 1.0, 2.0, 3.0 ]
	}
	{
		name = "child"
		parent = "root"
		vertex_distance = 4.0
		bind_rotation = [ 0.0, 0.0, 0.6, 0.8 ]
		bind_scale = [ 2.0, 2.0, 2.0 ]
	}
]

tracks =
[
	{
		name = "root"
		rotations =
		[
			[ 0.0, 0.0, 0.0, 1.0 ]
			[ 0.0, 0.0, 0.0, 1.0 ]
		]
	}
	{
		name = "child"
		translations =
		[
			[ 5.0, 0.0, 0.0 ]
			[ 6.0, 0.0, 0.0 ]
		]
	}
]
"""


def test_v1_clip_and_missing_subtracks_hold_bind_values(tmp_path: Path) -> None:
    clip = read_acl_sjson(write(tmp_path, V1))
    assert clip.skeleton.precision.tolist() == [0.05, 0.05]  # v1 header error_threshold
    assert clip.skeleton.shell_distance.tolist() == [2.0, 4.0]
    # root: translations missing -> bind_translation; scales missing -> bind (identity) scale
    assert clip.translations[:, 0].tolist() == [[1.0, 2.0, 3.0]] * 2
    # child: rotations and scales missing -> its bind rotation and bind scale
    assert clip.rotations[:, 1].tolist() == [[0.0, 0.0, 0.6, 0.8]] * 2
    assert clip.scales[:, 1].tolist() == [[2.0, 2.0, 2.0]] * 2
    assert clip.translations[:, 1, 0].tolist() == [5.0, 6.0]


def test_v5_binary_exact_hex_and_settings(tmp_path: Path) -> None:
    third = 1 / 3
    text = f"""\
    version = 5
    clip =
    {{
        name = "hex"
        num_samples = 1
        sample_rate = 60
        is_binary_exact = true
        additive_format = "none"
    }}
    settings =
    {{
        algorithm_name = "uniformly_sampled"
        level = "medium"
        segmenting = {{ ideal_num_samples = 16 max_num_samples = 31 }}
        error_threshold = 0.02
    }}
    bones = [ {{ name = "a" parent = "" vertex_distance = 1.5 }} ]
    tracks =
    [
        {{
            name = "a"
            rotations = [ [ "0", "0", "0", "3FF0000000000000" ] ]
            translations = [ [ "{sjson.hex_double(third)}", "0x8000000000000000", "1" ] ]
        }}
    ]
    """
    clip = read_acl_sjson(write(tmp_path, text))
    assert clip.translations[0, 0, 0] == third
    assert np.signbit(clip.translations[0, 0, 1])
    assert clip.translations[0, 0, 2] == 5e-324  # bit pattern 1: the smallest subnormal
    assert clip.skeleton.precision.tolist() == [0.02]


def test_children_before_parents_are_reordered(tmp_path: Path) -> None:
    text = V1.replace(
        """	{
		name = "root"
		parent = ""
		vertex_distance = 2.0
		bind_translation = [ 1.0, 2.0, 3.0 ]
	}
	{
		name = "child"
		parent = "root"
		vertex_distance = 4.0
		bind_rotation = [ 0.0, 0.0, 0.6, 0.8 ]
		bind_scale = [ 2.0, 2.0, 2.0 ]
	}""",
        """	{ name = "child" parent = "root" vertex_distance = 4.0 }
	{ name = "root" parent = "" vertex_distance = 2.0 }""",
    )
    clip = read_acl_sjson(write(tmp_path, text))
    assert clip.skeleton.names == ("root", "child")
    assert clip.skeleton.parents.tolist() == [-1, 0]
    assert clip.skeleton.shell_distance.tolist() == [2.0, 4.0]
    assert clip.translations[:, 1, 0].tolist() == [5.0, 6.0]
    assert any("reordered" in w for w in clip.warnings)


def _line_of(text: str, needle: str) -> int:
    return text[: text.rindex(needle)].count("\n") + 1


@pytest.mark.parametrize(
    ("old", "new", "needle", "fragment"),
    [
        ("num_samples = 2", "num_samples = 3", "rotations =", "2 samples, expected 3"),
        ('parent = "root"', 'parent = "nobody"', 'parent = "nobody"', "'nobody' is not a bone"),
        (
            'name = "child"\n\t\ttranslations',
            'name = "ghost"\n\t\ttranslations',
            '"ghost"',
            "track 'ghost' names no bone",
        ),
        ("version = 1", "version = 6", "version", "unsupported version 6"),
        ("sample_rate = 30", "sample_rate = -30", "sample_rate", "must be a positive number"),
        ("sample_rate = 30", 'sample_rate = "fast"', "sample_rate", "must be a number"),
        ("num_samples = 2", "num_samples = 2.5", "num_samples", "whole number"),
        (
            "[ 5.0, 0.0, 0.0 ]",
            "[ 5.0, 0.0 ]",
            "[ 5.0, 0.0 ]",
            "entry 0 has [ 2 numbers ], expected [ 3 numbers ]",
        ),
        ("[ 6.0, 0.0, 0.0 ]", '[ "6", 0.0, 0.0 ]', '"6"', "is_binary_exact is not true"),
        ("[ 0.0, 0.0, 0.6, 0.8 ]", "[ 0.0, 0.0, 0.6, 0.9 ]", "0.9", "not a unit quaternion"),
        (
            'name = "child"\n\t\tparent',
            'name = "root"\n\t\tparent',
            'name = "root"\n\t\tparent',
            "duplicate bone name",
        ),
        ("vertex_distance = 4.0", "vertex_distance = 0", "vertex_distance = 0", "positive"),
    ],
)
def test_errors_carry_the_right_line(
    tmp_path: Path, old: str, new: str, needle: str, fragment: str
) -> None:
    assert old in V1
    text = V1.replace(old, new, 1)
    line = _line_of(text, needle)
    with pytest.raises(ClipFormatError) as info:
        read_acl_sjson(write(tmp_path, text))
    assert fragment in str(info.value)
    assert info.value.line == line, str(info.value)


def test_structural_errors(tmp_path: Path) -> None:
    cases = {
        "no bones": V1[: V1.index("bones =")],
        "cycle": V1.replace('parent = ""', 'parent = "child"'),
        "bad hex": V1.replace("clip =\n{", "clip =\n{\n\tis_binary_exact = true").replace(
            "[ 5.0, 0.0, 0.0 ]", '[ "XYZ", "0", "0" ]'
        ),
        "second track": V1.replace(
            'name = "child"\n\t\ttranslations', 'name = "root"\n\t\ttranslations'
        ),
        "track list and clip": V1 + "\ntrack_list = { num_samples = 1 sample_rate = 1 }\n",
        "neither": "version = 5\nfoo = 1\n",
        "non-unit sample": V1.replace(
            "[ 0.0, 0.0, 0.0, 1.0 ]\n\t\t\t[ 0.0, 0.0, 0.0, 1.0 ]",
            "[ 0.0, 0.0, 0.0, 1.0 ]\n\t\t\t[ 0.0, 0.0, 0.0, 2.0 ]",
        ),
        "unknown top key": V1 + "\nfoo = 1\n",
        "nan word": V1.replace("[ 5.0, 0.0, 0.0 ]", "[ nan, 0.0, 0.0 ]"),
        "huge count, no data": "version = 5\nclip = { num_samples = 999999999 sample_rate = 30 }"
        '\nbones = [ { name = "a" parent = "" vertex_distance = 1 } ]\ntracks = []\n',
    }
    messages = {}
    for label, text in cases.items():
        with pytest.raises(ClipFormatError) as info:
            read_acl_sjson(write(tmp_path, text))
        messages[label] = str(info.value)
    assert "expected a 'bones'" in messages["no bones"]
    assert "cycle" in messages["cycle"]
    assert "binary-exact hex float" in messages["bad hex"] and "'XYZ'" in messages["bad hex"]
    assert "second track for bone 'root'" in messages["second track"]
    assert "holds both a clip" in messages["track list and clip"]
    assert "expected a 'clip' or a 'track_list'" in messages["neither"]
    assert "not a unit quaternion" in messages["non-unit sample"]
    assert "unexpected top-level key 'foo'" in messages["unknown top key"]
    assert "expected numbers" in messages["nan word"]
    assert "0 of them with a track" in messages["huge count, no data"]
    assert "over the limit" in messages["huge count, no data"]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ClipFormatError, match="no such file"):
        read_acl_sjson(tmp_path / "nope.acl.sjson")


QVVF = """\
version = 5
track_list =
{
	name = "qvv"
	num_samples = 2
	sample_rate = 30
	is_binary_exact = %s
}
tracks =
[
	{
		name = "child"
		type = "qvvf"
		precision = %s
		parent_index = 1
		shell_distance = %s
		data =
		[
			[ [ 0.0, 0.0, 0.0, 1.0 ], [ 1.0, 2.0, 3.0 ], [ 1.0, 1.0, 1.0 ] ]
			[ [ 0.0, 0.0, 0.0, 1.0 ], [ 1.5, 2.0, 3.0 ], [ 1.0, 1.0, 1.0 ] ]
		]
	}
	{
		name = "root"
		type = "qvvf"
		data =
		[
			[ [ 0.0, 0.0, 0.0, 1.0 ], [ 0.0, 0.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
			[ [ 0.0, 0.0, 0.0, 1.0 ], [ 0.0, 0.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
		]
	}
]
"""


def test_qvvf_track_list_reads_into_a_clip(tmp_path: Path) -> None:
    clip = read_acl_sjson(write(tmp_path, QVVF % ("false", "0.001", "5.0")))
    assert isinstance(clip, Clip)
    assert clip.skeleton.names == ("root", "child")  # reordered: parents first
    assert clip.skeleton.parents.tolist() == [-1, 0]
    assert clip.skeleton.precision.tolist() == [0.01, 0.001]  # default, then per track
    assert clip.skeleton.shell_distance.tolist() == [3.0, 5.0]
    assert clip.translations[:, 1, 0].tolist() == [1.0, 1.5]


def test_qvvf_binary_exact_uses_float32_bit_patterns(tmp_path: Path) -> None:
    # 3A83126F is float32(0.001); 40A00000 is 5.0
    text = QVVF % ("true", '"3A83126F"', '"40A00000"')
    text = text.replace("[ 1.5, 2.0, 3.0 ]", '[ "3FC00000", 2.0, 3.0 ]')
    clip = read_acl_sjson(write(tmp_path, text))
    assert clip.skeleton.precision[1] == float(np.float32(0.001))
    assert clip.skeleton.shell_distance[1] == 5.0
    assert clip.translations[1, 1, 0] == 1.5


# ------------------------------------------------------------------ writing


@pytest.mark.parametrize("binary_exact", [True, False])
@pytest.mark.parametrize("stem", [c[0] for c in LOCAL_CLIPS])
def test_round_trip_is_exact(tmp_path: Path, stem: str, binary_exact: bool) -> None:
    clip = read_acl_sjson(DATA / f"{stem}.acl.sjson")
    out = tmp_path / "out.acl.sjson"
    write_acl_sjson(clip, out, binary_exact=binary_exact)
    assert_same_clip(clip, read_acl_sjson(out))


@pytest.mark.parametrize("stem", [c[0] for c in ALL_CLIPS[len(LOCAL_CLIPS) :]])
def test_round_trip_of_long_clips(tmp_path: Path, stem: str) -> None:
    clip = read_acl_sjson(data_clip(f"{stem}.acl.sjson"))
    out = tmp_path / "out.acl.sjson"
    write_acl_sjson(clip, out)
    assert_same_clip(clip, read_acl_sjson(out))


def random_clip(seed: int, samples: int = 5, joints: int = 4) -> Clip:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(samples, joints, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    bind = rng.normal(size=(joints, 4))
    bind /= np.linalg.norm(bind, axis=-1, keepdims=True)
    skeleton = Skeleton.create(
        [f'j{i} "quoted"' for i in range(joints)],
        [-1] + [i // 2 for i in range(joints - 1)],
        bind_rotations=bind,
        bind_translations=rng.normal(size=(joints, 3)) * 1e3,
        bind_scales=rng.uniform(-2, 2, size=(joints, 3)),
        precision=rng.uniform(0.001, 0.1, size=joints),
        shell_distance=rng.uniform(1, 9, joints),
    )
    return Clip(
        skeleton,
        29.97,
        q,
        rng.normal(size=(samples, joints, 3)) * 1e-7,
        rng.normal(size=(samples, joints, 3)),
        name="random",
    )


@pytest.mark.parametrize("binary_exact", [True, False])
def test_round_trip_keeps_float64_that_float32_cannot_hold(
    tmp_path: Path, binary_exact: bool
) -> None:
    clip = random_clip(7)
    clip.skeleton = clip.skeleton.with_settings(precision=0.003)
    out = tmp_path / "r.acl.sjson"
    write_acl_sjson(clip, out, binary_exact=binary_exact)
    assert_same_clip(clip, read_acl_sjson(out))


def test_joint_precisions_go_where_acl_reads_them(tmp_path: Path) -> None:
    """ACL 2.1 takes a joint's own precision only from a qvvf track list: a clip tuned joint
    by joint is written as one, every value exact, in the order ACL's reader asks for."""
    clip = random_clip(3)
    out = tmp_path / "p.acl.sjson"
    write_acl_sjson(clip, out)
    text = out.read_text()
    assert "track_list =" in text and "clip =" not in text and "settings" not in text
    back = read_acl_sjson(out)
    assert np.array_equal(back.skeleton.precision, clip.skeleton.precision)
    assert np.array_equal(back.skeleton.shell_distance, clip.skeleton.shell_distance)
    assert np.array_equal(back.skeleton.parents, clip.skeleton.parents)
    assert_same_clip(clip, back)
    track = text[text.index("\t{") : text.index("\t}")]
    keys = [ln.split("=")[0].strip() for ln in track.splitlines() if "=" in ln]
    assert keys == [
        "name",
        "type",
        "precision",
        "output_index",
        "shell_distance",  # the root: no parent_index, ACL's "none"
        "bind_rotation",
        "bind_translation",
        "bind_scale",
        "data",
    ]
    second = text.split("\t{")[2]
    assert "parent_index = 0" in second
    # one precision for every joint: ACL's clip form, as before
    uniform = clip.replace(skeleton=clip.skeleton.with_settings(precision=0.02))
    write_acl_sjson(uniform, out)
    assert "clip =" in out.read_text() and "error_threshold" in out.read_text()
    assert np.all(read_acl_sjson(out).skeleton.precision == 0.02)


def test_written_file_follows_acl_key_order(tmp_path: Path) -> None:
    clip = random_clip(1)
    clip = clip.replace(skeleton=clip.skeleton.with_settings(precision=0.01))
    out = tmp_path / "k.acl.sjson"
    write_acl_sjson(clip, out)
    text = out.read_text()
    order = [
        "version = 5",
        "clip =",
        "name =",
        "num_samples =",
        "sample_rate =",
        "is_binary_exact = true",
        "additive_format =",
        "settings =",
        "error_threshold =",
        "bones =",
        "name =",
        "parent =",
        "vertex_distance =",
        "bind_rotation =",
        "bind_translation =",
        "bind_scale =",
        "tracks =",
        "name =",
        "rotations =",
        "translations =",
        "scales =",
    ]
    pos = 0
    for key in order:
        found = text.find(key, pos)
        assert found >= 0, f"{key!r} missing or out of order"
        pos = found
    assert text.splitlines()[0] == "version = 5"
    # every value of a binary-exact file is a quoted hex bit pattern
    doc = sjson.parse(text)
    assert doc["tracks"][0]["rotations"].dtype.kind == "U"


def test_identity_bind_values_are_omitted(tmp_path: Path) -> None:
    clip = read_acl_sjson(DATA / "cmu_81_16_two_samples.acl.sjson")
    out = tmp_path / "i.acl.sjson"
    write_acl_sjson(clip, out)
    assert "bind_scale" not in out.read_text()


def test_write_is_atomic_and_refuses_duplicate_names(tmp_path: Path) -> None:
    clip = random_clip(2)
    out = tmp_path / "a.acl.sjson"
    out.write_text("previous")
    sk = clip.skeleton
    dup = Skeleton(
        ("a", "a", "b", "c"),
        sk.parents,
        sk.bind_rotations,
        sk.bind_translations,
        sk.bind_scales,
        sk.precision,
        sk.shell_distance,
    )
    with pytest.raises(ValueError, match="unique"):
        write_acl_sjson(clip.replace(skeleton=dup), out)
    assert out.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["a.acl.sjson"]
