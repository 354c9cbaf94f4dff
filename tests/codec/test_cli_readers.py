"""The reader-facing side of `python -m codec`: compressed inputs, FBX/USD, --units and
--sample-rate, the units statement in every summary, and `decompress -o lossy.glb`."""

from __future__ import annotations

import gzip
import io
import json
import shutil
from pathlib import Path

import numpy as np

from codec.cli import main
from codec.formats import load_clip

DATA = Path(__file__).resolve().parents[1] / "data"


def run(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_compress_an_xz_acl_clip() -> None:
    """Acceptance: `python -m codec compress tests/data/acl/cmu_13_07.acl.sjson.xz` works."""
    code, out, err = run("compress", DATA / "acl" / "cmu_13_07.acl.sjson.xz")
    assert code == 0, err
    assert "44 joints, 291 samples at 24 Hz" in out and "met: yes" in out
    assert "units: centimetres assumed (ACL SJSON declares no units" in out


def test_compress_an_fbx_stack_states_units_and_precision() -> None:
    clip = DATA / "fbx" / "quaternius_robot.fbx.xz"
    code, out, err = run("compress", clip, "--animation", "Robot_Wave")
    assert code == 0, err
    assert "58 joints, 45 samples at 24 Hz" in out and "met: yes" in out
    assert "units: centimetres as the file declares; shown in cm; up axis +Y" in out


def test_compress_usdz() -> None:
    code, out, err = run("compress", DATA / "usd" / "CesiumMan.usdz")
    assert code == 0, err
    assert "19 joints, 48 samples at 24 Hz" in out and "met: yes" in out
    assert "units: metres as the file declares" in out


def test_json_on_stdout_keeps_the_units_statement_on_stderr() -> None:
    code, out, err = run("compress", DATA / "gltf" / "RiggedSimple.glb", "--json", "-")
    assert code == 0
    json.loads(out)
    assert "units: metres as the format specifies" in err and "up axis +Y" in err


def test_units_and_sample_rate_flags() -> None:
    code, out, err = run("compress", DATA / "bvh" / "makehuman_tpose.bvh", "--units", "cm")
    assert code == 0 and "units: centimetres as given by --units" in out
    code, out, err = run("compress", DATA / "bvh" / "makehuman_tpose.bvh")
    assert code == 0 and "units: decimetres guessed (skeleton 16.6 units tall" in out
    code, out, err = run("compress", DATA / "gltf" / "CesiumMan.glb", "--sample-rate", "60")
    assert code == 0 and "samples at 60 Hz" in out
    assert "warning:" in err and "resampled at 60 Hz (as asked; the keys are at 24 Hz)" in err
    code, _, err = run("compress", DATA / "gltf" / "CesiumMan.glb", "--sample-rate", "-3")
    assert code == 2 and "--sample-rate: -3.0 Hz is not a positive number" in err


def test_stats_finds_compressed_fbx_and_usd_files(tmp_path: Path) -> None:
    shutil.copy(DATA / "acl" / "cmu_09_02.acl.sjson", tmp_path)
    (tmp_path / "cesium.glb.gz").write_bytes(
        gzip.compress((DATA / "gltf" / "CesiumMan.glb").read_bytes())
    )
    shutil.copy(DATA / "usd" / "CesiumMan.usdz", tmp_path)
    shutil.copy(DATA / "fbx" / "blender_293_barbarian_7400_binary.fbx.xz", tmp_path)
    code, out, err = run("stats", tmp_path, "--jobs", "1")
    assert code == 0, err
    assert "4 clips compressed, 0 skipped" in out
    for name in ("cesium.glb.gz", "CesiumMan.usdz", "blender_293_barbarian_7400_binary.fbx.xz"):
        assert name in out


def test_decompress_to_a_lossy_copy_of_the_source_glb(tmp_path: Path) -> None:
    shutil.copy(DATA / "gltf" / "Fox.glb", tmp_path / "fox.glb")
    ssc = tmp_path / "fox.ssc"
    assert run("compress", tmp_path / "fox.glb", "--animation", "Walk", "-o", ssc)[0] == 0
    code, out, err = run("decompress", ssc, "-o", tmp_path / "fox.lossy.glb")
    assert code == 0, err
    assert "found beside" in out and "replacing animation 'Walk'" in out
    assert "in the file: max error" in out and "against the raw clip" in out
    assert "every joint within its precision" in out
    lossy = load_clip(tmp_path / "fox.lossy.glb", animation="Walk")
    raw = load_clip(tmp_path / "fox.glb", animation="Walk")
    assert (lossy.num_samples, lossy.sample_rate) == (raw.num_samples, raw.sample_rate)
    code, out, _ = run("compress", tmp_path / "fox.lossy.glb", "--animation", "Survey")
    assert code == 0  # the other animations are still there
    # the decoded .ssc and the glTF copy hold the same poses
    code, _, err = run("decompress", ssc, "-o", tmp_path / "fox.lossy.acl.sjson")
    decoded = load_clip(tmp_path / "fox.lossy.acl.sjson")
    assert np.allclose(lossy.translations, decoded.translations, atol=2e-3)


def test_decompress_to_glb_without_a_source_says_how(tmp_path: Path) -> None:
    ssc = tmp_path / "walk.ssc"
    assert run("compress", DATA / "acl" / "cmu_09_02.acl.sjson", "-o", ssc)[0] == 0
    code, out, err = run("decompress", ssc, "-o", tmp_path / "walk.glb")
    assert code == 2 and "--source CLIP.glb" in err and out == ""
    code, _, err = run(
        "decompress", ssc, "-o", tmp_path / "walk.glb", "--source", DATA / "gltf" / "Fox.glb"
    )
    assert code == 2 and "not the clip's" in err
    assert not (tmp_path / "walk.glb").exists()


def test_flags_that_do_not_apply_are_said_to_be_ignored() -> None:
    clip = DATA / "acl" / "cmu_09_02.acl.sjson"
    code, out, err = run(
        "compress", clip, "--sample-rate", "60", "--animation", "Walk", "--bvh-positions", "add"
    )
    assert code == 0 and "samples at 24 Hz" in out
    assert "--sample-rate applies to glTF, FBX and USD; ignored" in err
    assert "--animation applies to glTF, FBX and USD; ignored" in err
    assert "--bvh-positions applies to BVH; ignored" in err


def test_bvh_positions_flag_chooses_how_channels_are_read(tmp_path: Path) -> None:
    """A file whose non-root channels hold local translations (Blender's way): auto reads
    it so and says it; --bvh-positions add reads it the other way, and quietly."""
    clip = tmp_path / "slide.bvh"
    clip.write_text(
        "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition "
        "Zrotation Xrotation Yrotation\n JOINT Slide\n {\n  OFFSET 10 0 0\n  CHANNELS 6 "
        "Xposition Yposition Zposition Zrotation Xrotation Yrotation\n  End Site\n  {\n"
        "   OFFSET 0 50 0\n  }\n }\n}\nMOTION\nFrames: 2\nFrame Time: 0.04\n"
        "0 0 0 0 0 0 10 0 0 0 0 0\n0 0 0 0 0 0 12 0 0 0 0 0\n"
    )
    code, _, err = run("compress", clip, "--units", "cm")
    assert code == 0 and "read as the joint's local translation, replacing OFFSET" in err
    code, _, err = run("compress", clip, "--units", "cm", "--bvh-positions", "add")
    assert code == 0 and "position channels" not in err


def test_decompress_to_usd_is_measured_against_the_source(tmp_path: Path) -> None:
    shutil.copy(DATA / "acl" / "cmu_09_02.acl.sjson", tmp_path / "walk.acl.sjson")
    ssc = tmp_path / "walk.ssc"
    assert run("compress", tmp_path / "walk.acl.sjson", "-o", ssc)[0] == 0
    code, out, err = run("decompress", ssc, "-o", tmp_path / "walk.usda")
    assert code == 0, err
    assert "source: " in out and "against the raw clip" in out
    back = load_clip(tmp_path / "walk.usda")
    assert (back.num_joints, back.num_samples, back.units.unit) == (44, 26, "cm")
