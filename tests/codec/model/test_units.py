"""Units facts: the sentence the CLI and the window show, the user's override, the BVH guess."""

from __future__ import annotations

import pytest

from codec.model.units import (
    HUMAN_HEIGHT,
    UNIT_CM,
    Units,
    unit_name_for_metres,
    units_from_height,
    user_units,
)

FBX_CM = Units(
    "cm",
    1.0,
    "file",
    declared="1 unit = 0.01 m (FBX 7400 binary)",
    up_axis="+Y",
    axes="front +Z, right +X",
)


def test_statements_say_what_was_chosen_and_how() -> None:
    assert FBX_CM.statement() == (
        "units: centimetres as the file declares; shown in cm; up axis +Y (front +Z, right +X)"
    )
    metres = Units("m", 100.0, "format", declared="metres (glTF 2.0)", up_axis="+Y")
    assert (
        metres.statement()
        == "units: metres as the format specifies; shown in cm (x100); up axis +Y"
    )
    guess = Units("cmu", UNIT_CM["cmu"], "auto", reason="skeleton 24.3 units tall")
    assert guess.statement() == (
        "units: CMU units (1/0.45 inch) guessed (skeleton 24.3 units tall); shown in cm "
        "(x5.64444); up axis not declared"
    )
    assert guess.short() == "cmu (auto) \u2192 cm" and FBX_CM.short() == "cm (file), +Y up"


def test_the_user_overrides_the_declaration_and_both_are_said() -> None:
    chosen = user_units("m", FBX_CM)
    assert (chosen.unit, chosen.to_cm, chosen.chosen_by, chosen.up_axis) == (
        "m",
        100.0,
        "user",
        "+Y",
    )
    assert "as given by --units; the file declares 1 unit = 0.01 m" in chosen.statement()
    assert user_units("auto", FBX_CM) is FBX_CM and user_units(None, FBX_CM) is FBX_CM
    with pytest.raises(ValueError, match="furlong"):
        user_units("furlong", FBX_CM)


def test_unit_names_for_declared_lengths() -> None:
    assert [unit_name_for_metres(m) for m in (0.01, 1.0, 0.0254, 0.001)] == [
        "cm",
        "m",
        "inch",
        "mm",
    ]
    assert unit_name_for_metres(0.5) == "0.5 m"


def test_human_height_ranges_do_not_overlap_and_cover_typical_humans() -> None:
    ranges = sorted(HUMAN_HEIGHT.values())
    assert all(a[1] <= b[0] for a, b in zip(ranges, ranges[1:], strict=False))
    # typical human heights in each unit
    for unit, heights in {
        "cm": (150, 200),
        "inch": (60, 75),
        "cmu": (21, 35),
        "dm": (15, 20),
        "m": (1.5, 2),
    }.items():
        for h in heights:
            assert units_from_height(h)[0] == unit, (unit, h)
    assert units_from_height(4.0) is None and units_from_height(500.0) is None
