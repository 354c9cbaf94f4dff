"""Every FBX and USD clip stands on the up axis its file declares (clip.units.up_axis), not on
one guessed from the motion; BVH and ACL, which declare none, are still read off the motion."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import codec
from app.model.up_axis import declared_up_axis, detect_up_axis, up_axis
from codec.model.units import Units
from tests.app.conftest import DATA

DECLARING = sorted(
    p
    for p in (*(DATA / "fbx").iterdir(), *(DATA / "usd").iterdir())
    if p.name.lower().split(".xz")[0].endswith((".fbx", ".usd", ".usda", ".usdc", ".usdz"))
)


def test_there_are_fbx_and_usd_clips_to_check() -> None:
    kinds = {p.suffixes[0] if p.suffix == ".xz" else p.suffix for p in DECLARING}
    assert ".fbx" in kinds and ".usdz" in kinds


@pytest.mark.parametrize("path", DECLARING, ids=lambda p: p.name)
def test_fbx_and_usd_clips_use_their_declared_up_axis(path: Path) -> None:
    clip = codec.load_clip(path)
    assert clip.units is not None and clip.units.up_axis, "the reader states the axis"
    stated = clip.units.up_axis.lstrip("+")
    assert up_axis(clip, path) == (stated, "declared by the file")


def test_the_declaration_wins_over_the_motion_and_a_downward_one_does_not() -> None:
    walk = codec.load_clip(DATA / "bvh" / "cmu_02_02_walk_daz.bvh")  # Y-up by its motion
    assert declared_up_axis(walk) is None and detect_up_axis(walk) == "Y"
    base = walk.units or Units("cm", 1.0, "assumed")
    for stated, shown in (("+Z", "Z"), ("X", "X"), ("+y", "Y")):
        told = dataclasses.replace(walk, units=dataclasses.replace(base, up_axis=stated))
        assert up_axis(told) == (shown, "declared by the file")
    down = dataclasses.replace(walk, units=dataclasses.replace(base, up_axis="-Z"))
    assert up_axis(down) == ("Y", "detected from the motion")
