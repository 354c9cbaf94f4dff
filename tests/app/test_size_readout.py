"""The window's units readout (status bar) flags a clip that is no character's size, the
whole warning in its tooltip; a person-sized clip reads as before."""

from __future__ import annotations

import codec
from tests.codec.model.test_character_size import standing_clip


def test_the_fox_readout_says_155_m(window, ui, dialogs) -> None:
    dialogs.animation = "Survey"
    ui.open(window, ui.data / "gltf" / "Fox.glb")
    assert window.units_label.text() == "units: m (format) \u2192 cm, +Y up \u26a0 155 m"
    tip = window.units_label.toolTip()
    assert tip.startswith("units: metres as the format specifies")
    assert "size: the character measures 155 m (skinned mesh" in tip and "--units cm" in tip
    assert "#d08020" in window.units_label.styleSheet()
    ui.open(window, ui.data / "gltf" / "CesiumMan.glb")  # the next clip: the flag goes
    assert window.units_label.text() == "units: m (format) \u2192 cm, +Y up"
    assert "size:" not in window.units_label.toolTip()
    assert window.units_label.styleSheet() == ""
    assert dialogs.errors == []


def test_a_five_millimetre_clip_reads_too_small(window, ui, tmp_path) -> None:
    path = tmp_path / "tiny.acl.sjson"
    codec.save_clip(standing_clip(0.5), path)
    ui.open(window, path)
    assert window.units_label.text().endswith("\u26a0 5 mm")
    assert "smaller than any character" in window.units_label.toolTip()


def test_opened_with_units_m_the_tiny_clip_is_not_flagged(window, ui, tmp_path) -> None:
    path = tmp_path / "tiny.acl.sjson"
    codec.save_clip(standing_clip(0.5), path)
    window.open_options["units"] = "m"  # what `shellscope tiny.acl.sjson --units m` sets
    ui.open(window, path)
    assert "\u26a0" not in window.units_label.text()
    assert window.units_label.text().startswith("units: m (user)")
