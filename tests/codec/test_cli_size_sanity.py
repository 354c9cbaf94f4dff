"""`python -m codec compress` warns when a clip is no character's size (a unit slip), in
its summary's warnings and in the stats JSON's `warnings`, and `--units` silences it."""

from __future__ import annotations

import json

import codec
from tests.codec.model.test_character_size import standing_clip
from tests.codec.test_cli import DATA, run

FOX = DATA / "gltf" / "Fox.glb"


def size_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if ": size: " in line]


def test_compress_warns_that_the_fox_is_155_m() -> None:
    code, out, err = run("compress", FOX)
    assert code == 0, err
    (line,) = size_lines(err)
    assert line.startswith(f"warning: {FOX}: size: the character measures 155 m (skinned mesh")
    assert "metres, as the format specifies" in line and "give --units cm" in line


def test_the_json_stats_carry_the_warning() -> None:
    code, out, err = run("compress", FOX, "--json", "-")
    assert code == 0, err
    (warning,) = json.loads(out)["warnings"]
    assert warning.startswith("size: the character measures 155 m")
    assert size_lines(err) == [f"warning: {FOX}: {warning}"]


def test_units_cm_silences_the_fox() -> None:
    code, out, err = run("compress", FOX, "--units", "cm", "--json", "-")
    assert code == 0, err
    assert json.loads(out)["warnings"] == [] and size_lines(err) == []


def test_cesium_man_and_cmu_bvh_raise_no_size_warning() -> None:
    for path in (DATA / "gltf" / "CesiumMan.glb", DATA / "bvh" / "cmu_02_02_walk_daz.bvh"):
        code, out, err = run("compress", path, "--json", "-")
        assert code == 0, err
        assert json.loads(out)["warnings"] == [] and size_lines(err) == [], path


def test_a_five_millimetre_clip_warns_too_small_until_read_in_metres(tmp_path) -> None:
    path = tmp_path / "tiny.acl.sjson"
    codec.save_clip(standing_clip(0.5), path)
    code, out, err = run("compress", path)
    assert code == 0, err
    (line,) = size_lines(err)
    assert "measures 5 mm (skeleton), smaller than any character" in line
    assert "give --units m" in line and "it then measures 50 cm" in line
    code, out, err = run("compress", path, "--units", "m")
    assert code == 0 and size_lines(err) == [], err
