"""A compression session keeps the clip's warnings (the size check) from run to run
(RawPoses.warnings): every run's stats must still say exactly what a fresh check of that
run's clip says, whatever changed in between."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

import codec
from codec.compression import Compression
from codec.measure.measure import RawPoses
from codec.measure.stats import clip_warnings
from codec.model.units import Units
from codec.settings import CompressionSettings
from tests.codec.helpers import DATA

FOX = DATA / "gltf" / "Fox.glb"
CCRIG = DATA / "bvh" / "cmu_02_03_run_ccrig.bvh"


def test_the_fox_warns_in_every_run_of_a_session_and_a_silent_clip_never_does() -> None:
    fox = codec.load_clip(FOX)  # metres as the format says: 155 m long
    session = Compression(fox)
    settings = CompressionSettings()
    first = session.run(settings).stats["warnings"]
    assert first == clip_warnings(fox) and any("size:" in w for w in first)
    precisions = fox.skeleton.precision * 3.0  # another per-joint precision: same warnings
    again = session.run(settings, skeleton=fox.skeleton.with_settings(precision=precisions))
    assert again.stats["warnings"] == first

    run = codec.load_clip(CCRIG)
    stats = Compression(run).run(settings).stats
    assert stats["warnings"] == clip_warnings(run) == []


def test_kept_warnings_follow_the_units_the_reader_notes_and_the_poses() -> None:
    fox = codec.load_clip(FOX)
    kept = RawPoses()
    assert kept.warnings(fox) == clip_warnings(fox)
    assert any("size:" in w for w in kept.warnings(fox))

    # the same arrays said to be read as the user's centimetres: the warning names them
    as_cm = fox.replace(units=Units(unit="cm", to_cm=1.0, chosen_by="user"))
    assert kept.warnings(as_cm) == clip_warnings(as_cm) != clip_warnings(fox)

    # a reader's note joins the list
    noted = fox.replace(warnings=["frames: 3 declared, 2 read"])
    assert kept.warnings(noted) == clip_warnings(noted)
    assert "frames: 3 declared, 2 read" in kept.warnings(noted)

    # the skeleton 100x smaller, without its mesh (new arrays): a character in metres
    small = fox.replace(
        translations=fox.translations / 100.0,
        skeleton=replace(fox.skeleton, bind_translations=fox.skeleton.bind_translations / 100.0),
        meshes=(),
    )
    assert kept.warnings(small) == clip_warnings(small)
    assert kept.warnings(fox) == clip_warnings(fox) != clip_warnings(small)


def test_a_returned_list_is_the_callers_own() -> None:
    fox = codec.load_clip(FOX)
    kept = RawPoses()
    got = kept.warnings(fox)
    got.append("changed by the caller")
    assert kept.warnings(fox) == clip_warnings(fox)
    assert np.all([w != "changed by the caller" for w in kept.warnings(fox)])


def test_a_precision_edit_reuses_the_kept_check_and_another_bind_pose_does_not() -> None:
    """A global or per-joint precision edit gives the clip a new skeleton (copies of the
    same bind pose and hierarchy): the kept check still answers. The same sample arrays
    under another bind pose are measured afresh."""
    fox = codec.load_clip(FOX)
    session = Compression(fox)
    first = session.run(CompressionSettings(precision=0.05)).stats["warnings"]
    kept = session._raw_poses._warned
    assert kept is not None
    for precision in (0.07, 0.09):
        again = session.run(CompressionSettings(precision=precision))
        assert again.clip.skeleton is not fox.skeleton  # a new skeleton each edit
        assert session._raw_poses._warned is kept  # the check was not run again
        assert again.stats["warnings"] == first == clip_warnings(again.clip)

    sk = fox.skeleton
    far = fox.replace(skeleton=replace(sk, bind_translations=sk.bind_translations * 1000.0))
    assert far.rotations is fox.rotations  # only the bind pose differs
    got = session._raw_poses.warnings(far)
    assert got == clip_warnings(far) != first
