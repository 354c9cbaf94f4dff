"""The format dispatcher: extensions, options, refusals, and only ClipFormatError out."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import codec
from codec.errors import ClipFormatError
from codec.formats import format_of, list_animations, load_clip, save_clip
from codec.model.clip import Clip

DATA = Path(__file__).resolve().parents[2] / "data"  # holds a copy of every ../shared/data clip

SCALAR_LISTS = {
    "track_list_float3f": "float3f",
    "track_list_float4f": "float4f",
    "track_list_remap_output": "float4f",
}


def test_codec_exposes_the_dispatcher() -> None:
    assert codec.load_clip is load_clip
    assert codec.save_clip is save_clip
    assert codec.list_animations is list_animations


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("a.acl.sjson", "sjson"),
        ("A.ACL.SJSON", "sjson"),
        ("a.sjson", "sjson"),
        ("a.bvh", "bvh"),
        ("a.gltf", "gltf"),
        ("a.GLB", "gltf"),
        ("a.ssc", "ssc"),
        ("a.fbx", "fbx"),
        ("a.FBX.gz", "fbx"),
        ("a.usdz", "usd"),
        ("a.usda.zst", "usd"),
        ("a.acl.sjson.xz", "sjson"),
        ("a.bvh.gz", "bvh"),
        ("a.xz", None),
        ("a.obj", None),
        ("sjson", None),
    ],
)
def test_format_of(name: str, fmt: str | None) -> None:
    assert format_of(name) == fmt


def test_sjson_loads_through_the_dispatcher() -> None:
    clip = load_clip(DATA / "acl" / "cmu_09_02.acl.sjson")
    assert isinstance(clip, Clip) and clip.num_joints == 44 and clip.num_samples == 26


@pytest.mark.parametrize(("stem", "kind"), sorted(SCALAR_LISTS.items()))
def test_scalar_track_lists_are_refused_clearly(stem: str, kind: str) -> None:
    path = DATA / "acl" / f"{stem}.acl.sjson"
    with pytest.raises(ClipFormatError) as info:
        load_clip(path)
    assert str(info.value) == (
        f"{path}: is a scalar track list ({kind}), not a transform clip; "
        "Shellscope inspects transform clips"
    )


def test_unknown_extension_and_missing_file(tmp_path: Path) -> None:
    (tmp_path / "clip.obj").write_bytes(b"whatever")
    with pytest.raises(ClipFormatError, match="cannot read this file type"):
        load_clip(tmp_path / "clip.obj")
    with pytest.raises(ClipFormatError, match="no such file"):
        load_clip(tmp_path / "missing.bvh")
    with pytest.raises(ClipFormatError, match="no such file"):
        list_animations(tmp_path / "missing.glb")
    (tmp_path / "dir.bvh").mkdir()
    with pytest.raises(ClipFormatError, match="directory"):
        load_clip(tmp_path / "dir.bvh")


def test_unknown_option_is_a_caller_bug() -> None:
    with pytest.raises(TypeError, match="unknown option"):
        load_clip(DATA / "acl" / "cmu_09_02.acl.sjson", unit="cm")


def test_options_for_other_formats_are_ignored() -> None:
    clip = load_clip(DATA / "acl" / "cmu_09_02.acl.sjson", units="m", animation="Walk")
    assert clip.num_samples == 26


def test_list_animations_of_single_clip_formats() -> None:
    assert list_animations(DATA / "acl" / "cmu_09_02.acl.sjson") == ["cmu_09_02"]


def test_non_finite_values_become_clip_format_errors(tmp_path: Path) -> None:
    # 1e999 parses as inf: the reader rejects it with the file's line
    text = (DATA / "acl" / "cmu_81_16_two_samples.acl.sjson").read_text()
    i = text.index("translations =")
    j = text.index("[", text.index("[", i) + 1)
    bad = text[: j + 1] + " 1e999, " + text[text.index(",", j) + 1 :]
    p = tmp_path / "inf.acl.sjson"
    p.write_text(bad)
    with pytest.raises(ClipFormatError, match="finite") as info:
        load_clip(p)
    assert info.value.line == bad[:i].count("\n") + 1


def test_save_clip_dispatches_and_round_trips(tmp_path: Path) -> None:
    clip = load_clip(DATA / "acl" / "cmu_81_16_two_samples.acl.sjson")
    assert save_clip(clip, tmp_path / "x.acl.sjson") == []
    back = load_clip(tmp_path / "x.acl.sjson")
    assert np.array_equal(back.rotations, clip.rotations)
    save_clip(clip, tmp_path / "d.acl.sjson", binary_exact=False)
    assert np.array_equal(load_clip(tmp_path / "d.acl.sjson").translations, clip.translations)
    with pytest.raises(ClipFormatError, match="cannot write"):
        save_clip(clip, tmp_path / "x.glb")


def test_save_bvh_goes_to_the_bvh_writer(tmp_path: Path) -> None:
    clip = load_clip(DATA / "acl" / "cmu_81_16_two_samples.acl.sjson")
    warnings = save_clip(clip, tmp_path / "x.bvh", precision_digits=6)
    assert all(isinstance(w, str) and w for w in warnings)
    back = load_clip(tmp_path / "x.bvh", units="cm")
    assert back.num_samples == 2 and back.num_joints >= 44
    # the BVH writer's joints (End Sites added) hold the clip's motion: same object space
    from codec.model.transforms import object_space

    def positions(c: Clip) -> np.ndarray:
        return object_space(c.rotations, c.translations, c.scales, c.skeleton.parents)[..., 3]

    mine, theirs = positions(clip), positions(back)
    index = [back.skeleton.index(n) for n in clip.skeleton.names]
    np.testing.assert_allclose(theirs[:, index], mine, rtol=0, atol=1e-3)


def test_ssc_errors_name_the_file(tmp_path: Path) -> None:
    p = tmp_path / "junk.ssc"
    p.write_bytes(b"not a compressed clip at all")
    with pytest.raises(ClipFormatError) as info:
        load_clip(p)
    assert str(p) in str(info.value)


def test_bvh_and_gltf_go_to_their_readers() -> None:
    bvh = DATA / "bvh" / "makehuman_tpose.bvh"
    glb = DATA / "gltf" / "Fox.glb"
    assert load_clip(bvh).num_samples == 1  # SOURCES.md: a single frame
    assert list_animations(glb) == ["Survey", "Walk", "Run"]
    walk = load_clip(glb, animation="Walk", sample_rate=30.0)
    assert walk.num_joints == 24


def test_copied_file_keeps_its_name_in_errors(tmp_path: Path) -> None:
    src = DATA / "acl" / "cmu_09_02.acl.sjson"
    dst = tmp_path / "copy.acl.sjson"
    shutil.copy(src, dst)
    dst.write_text(dst.read_text().replace("num_samples = 26", "num_samples = 27"))
    with pytest.raises(ClipFormatError, match=r"copy\.acl\.sjson:\d+: .*26 samples, expected 27"):
        load_clip(dst)


def test_every_real_clip_loads_or_is_refused_clearly() -> None:
    files = sorted(
        p
        for p in DATA.rglob("*")
        if p.is_file() and format_of(p) is not None and "hostile" not in p.relative_to(DATA).parts
    )
    assert len(files) >= 28  # every clip file of ../shared/data (tests/data/SOURCES.md)
    for path in files:
        stem = path.name.split(".")[0]
        if stem in SCALAR_LISTS:
            with pytest.raises(ClipFormatError, match="is a scalar track list"):
                load_clip(path)
        elif stem == "format_reference_v5":
            with pytest.raises(ClipFormatError, match="holds both a clip"):
                load_clip(path)
        else:
            clip = load_clip(path)
            assert clip.num_samples >= 1 and clip.num_joints >= 2, path


def test_formats_are_declared_by_their_modules() -> None:
    """The extension table, the options and multi-animation come from each module's FORMAT."""
    from codec import formats
    from codec.formats import bvh, gltf, ssc

    assert formats.SPECS["bvh"] is bvh.FORMAT and formats.SPECS["ssc"] is ssc.FORMAT
    for spec in formats.SPECS.values():
        for ext in spec.extensions:
            assert formats.format_of(f"clip{ext.upper()}") == spec.name
        assert spec.multi_animation == (spec.list is not None)
        assert formats.multi_animation(spec.name) == spec.multi_animation
    assert [s.name for s in formats.SPECS.values() if s.multi_animation] == ["gltf", "fbx", "usd"]
    assert formats._READ_OPTIONS["gltf"] == gltf.FORMAT.read_options
    assert set(formats._WRITE_OPTIONS) == {"sjson", "bvh"}
    assert ".ssc.xz" not in formats.clip_extensions() and ".bvh.xz" in formats.clip_extensions()
