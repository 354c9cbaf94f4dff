"""Opening hostile files in the window: the reader's one-line message, and the clip already
open stays with its title, result and drawing. A view that fails on a new clip changes
nothing either; 1-joint and zero-size skeletons draw at a sensible scale."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.codec.formats import hostile_files as hf


def test_each_hostile_file_keeps_the_open_clip_its_title_and_result(
    loaded, dialogs, tmp_path: Path, ui
) -> None:
    doc = loaded.document
    clip, result, title = doc.clip, doc.result, loaded.windowTitle()
    recent = loaded.recent_files()
    for name, (build, words) in sorted(hf.CASES.items()):
        folder = tmp_path / name
        folder.mkdir()
        path = build(folder)
        dialogs.paths.append(str(path))
        assert not loaded.open_file(), name
        assert len(dialogs.errors) == 1, (name, dialogs.errors)
        _, message = dialogs.errors.pop()
        assert message.startswith(str(path)) and "\n" not in message, (name, message)
        for word in words:
            assert word in message, (name, word, message)
        assert doc.clip is clip and doc.result is result, name
        assert loaded.windowTitle() == title and not loaded.controller.running, name
    assert loaded.recent_files() == recent
    ui.draw(loaded.viewport)
    assert loaded.viewport.lossy_positions is not None


def test_a_view_failing_on_a_new_clip_keeps_the_open_one(
    loaded, dialogs, tmp_path: Path, ui, monkeypatch
) -> None:
    """The 3D view raising on the new clip (as it once did with MemoryError for a 1-joint
    BVH) happens while the document switches: the switch is undone, the message shown."""
    import app.scene.viewport3d as viewport3d

    doc = loaded.document
    clip, result, title = doc.clip, doc.result, loaded.windowTitle()
    real = viewport3d.sampled_positions

    def positions(new_clip, *args):  # type: ignore[no-untyped-def]
        if new_clip.num_joints == 1:
            raise MemoryError("Unable to allocate 51.4 GiB for an array")
        return real(new_clip, *args)

    monkeypatch.setattr(viewport3d, "sampled_positions", positions)
    path = hf.bvh_one_joint(tmp_path)
    dialogs.paths.append(str(path))
    assert not loaded.open_file()
    ((_, message),) = dialogs.errors
    assert message == f"{path}: MemoryError: Unable to allocate 51.4 GiB for an array"
    assert doc.clip is clip and doc.result is result and doc.path.name == "cmu_09_02.acl.sjson"
    assert loaded.windowTitle() == title and not loaded.controller.running
    assert any("Could not open one_joint.bvh" in n for n in loaded.notices)
    ui.draw(loaded.viewport)
    assert loaded.viewport.lossy_positions.shape == (clip.num_joints, 3)


def _sensible(viewport, scale: float) -> None:
    """The view is sized by `scale` cm: a grid of round steps of at least 1/100 of it (not
    1e-7 cm and 200 million lines) and a camera that stands back from what it frames."""
    size, spacing = viewport.grid.size()[0], viewport.grid.spacing()[0]
    assert viewport.joint_size == scale
    assert scale / 100 <= spacing <= scale and size / spacing <= 401
    assert viewport.scene.opts["distance"] > scale / 4
    assert np.all(np.isfinite(viewport.raw_positions))


def test_a_one_joint_clip_draws_at_a_sensible_scale(window, dialogs, tmp_path: Path, ui) -> None:
    ui.open(window, hf.bvh_one_joint(tmp_path))
    ui.draw(window.viewport)
    assert dialogs.errors == [] and window.document.clip.num_joints == 1
    _sensible(window.viewport, 100.0)  # a point that does not move: a person's height


def test_a_zero_size_skeleton_that_moves_takes_its_scale_from_the_motion(
    window, dialogs, tmp_path: Path, ui
) -> None:
    path = tmp_path / "flat.bvh"
    path.write_text(
        "HIERARCHY\nROOT a\n{\n\tOFFSET 0 0 0\n\tCHANNELS 6 Xposition Yposition Zposition "
        "Zrotation Xrotation Yrotation\n\tJOINT b\n\t{\n\t\tOFFSET 0 0 0\n\t\tCHANNELS 3 "
        "Zrotation Xrotation Yrotation\n\t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 0 0\n\t\t}\n\t}\n}\n"
        "MOTION\nFrames: 3\nFrame Time: 0.04\n0 0 0 0 0 0 0 0 0\n25 0 0 0 0 0 0 0 0\n"
        "50 0 0 0 0 0 0 0 0\n"
    )
    ui.open(window, path, tuning={"precision": 0.01})
    ui.draw(window.viewport)
    assert dialogs.errors == []
    _sensible(window.viewport, 50.0)  # 50 cm of travel
