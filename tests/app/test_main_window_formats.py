"""The window and the new formats: FBX stacks in the animation chooser, units and up axis in
the title and status bar, USD, the dialog filters, and the Stats panel's lossy glTF export."""

from __future__ import annotations

from pathlib import Path

import codec
from app.main_window import CLIP_SUFFIXES, OPEN_FILTER


def test_fbx_stacks_are_offered_and_the_units_are_stated(window, ui, dialogs) -> None:
    robot = ui.data / "fbx" / "quaternius_robot.fbx.xz"
    dialogs.animation = "RobotArmature|Robot_Wave"
    ui.open(window, robot)
    (choices,) = dialogs.animation_choices
    assert len(choices) == 14 and choices[0] == "RobotArmature|Robot_Dance"
    clip = window.document.clip
    assert clip.name == "RobotArmature|Robot_Wave" and clip.num_samples == 45
    assert "[cm (file), +Y up]" in window.windowTitle()
    assert window.units_label.text() == "units: cm (file), +Y up"
    assert window.units_label.toolTip().startswith("units: centimetres as the file declares")
    assert dialogs.errors == []


def test_usd_opens_with_its_units_in_the_title(window, ui, dialogs) -> None:
    ui.open(window, ui.data / "usd" / "CesiumMan.usdz")
    assert dialogs.animation_choices == []  # one skeleton: nothing to choose
    assert window.document.clip.num_samples == 48
    assert "[m (file) \u2192 cm, +Y up]" in window.windowTitle()


def test_bvh_title_says_the_units_were_guessed(window, ui) -> None:
    ui.open(window, ui.data / "bvh" / "makehuman_tpose.bvh")
    assert "[dm (auto) \u2192 cm]" in window.windowTitle()


def test_open_dialog_and_drops_know_every_format() -> None:
    for pattern in (
        "*.fbx",
        "*.usdz",
        "*.usda",
        "*.glb",
        "*.acl.sjson.xz",
        "*.bvh.gz",
        "*.fbx.zst",
    ):
        assert pattern in OPEN_FILTER
    for suffix in (".fbx", ".usd", ".usdc", ".acl.sjson.xz", ".gltf.gz"):
        assert suffix in CLIP_SUFFIXES


def test_stats_panel_exports_a_lossy_copy_of_the_source_glb(window, ui, tmp_path) -> None:
    ui.open(window, ui.data / "gltf" / "CesiumMan.glb")
    panel = window.panels["StatsPanel"]
    out = panel.export_to("lossy", tmp_path / "cesium.lossy.glb")
    assert out == tmp_path / "cesium.lossy.glb"
    said = panel.export_error.text()  # the error measured in the file, under "Wrote"
    assert "in the file: max error" in said and "every joint within its precision" in said
    back = codec.load_clip(out)
    lossy = window.document.result.lossy
    assert (back.num_samples, back.sample_rate) == (48, 24.0)
    assert abs(back.translations - lossy.translations).max() < 1e-4


def test_a_lossy_glb_of_a_non_gltf_clip_is_refused_in_the_panel(window, ui, tmp_path) -> None:
    ui.open(window, ui.acl_clip)
    panel = window.panels["StatsPanel"]
    assert panel.export_to("lossy", tmp_path / "x.glb") is None
    assert "copy of the source glTF" in panel.export_error.text()
    assert not (tmp_path / "x.glb").exists()


def test_lossy_gltf_export_undoes_the_units_the_clip_was_opened_with(tmp_path) -> None:
    from app.model.exports import export_lossy

    source = Path(__file__).resolve().parents[1] / "data" / "gltf" / "RiggedSimple.glb"
    clip = codec.load_clip(source, units="cm")  # values taken as cm: no x100
    result = codec.compress(clip, codec.CompressionSettings())
    out = export_lossy(tmp_path / "x.glb", result, source=source)
    back = codec.load_clip(out, units="cm")
    assert abs(back.translations - result.lossy.translations).max() < 1e-5
    plain = codec.load_clip(out)  # read as glTF's metres: the file holds the source's values
    assert abs(plain.translations - 100 * result.lossy.translations).max() < 1e-3


def test_the_open_dialog_lists_every_declared_format() -> None:
    from codec.formats import SPECS

    for spec in SPECS.values():
        for ext in spec.extensions:
            assert f"*{ext}" in OPEN_FILTER and ext in CLIP_SUFFIXES
        if spec.compressible:
            assert f"{spec.label} (" in OPEN_FILTER


def test_bvh_position_channels_can_be_read_the_other_way(window, ui, tmp_path) -> None:
    """File > BVH position channels: a file read as Blender writes it (the channel replaces
    OFFSET) opens again read as MakeHuman writes it, and the warning said how to."""
    path = tmp_path / "slide.bvh"
    path.write_text(
        "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition "
        "Zrotation Xrotation Yrotation\n JOINT Slide\n {\n  OFFSET 10 0 0\n  CHANNELS 6 "
        "Xposition Yposition Zposition Zrotation Xrotation Yrotation\n  End Site\n  {\n"
        "   OFFSET 0 5 0\n  }\n }\n}\nMOTION\nFrames: 2\nFrame Time: 0.04\n"
        "0 0 0 0 0 0 10 0 0 0 0 0\n0 0 0 0 0 0 12 0 0 0 0 0\n"
    )
    window.open_options["units"] = "cm"
    ui.open(window, path)
    assert window.document.clip.translations[1, 1, 0] == 12.0
    assert any("--bvh-positions add" in n for n in window.notices)
    window.bvh_position_actions["add"].trigger()
    assert window.document.clip.translations[1, 1, 0] == 22.0
    assert window.bvh_position_actions["add"].isChecked()
