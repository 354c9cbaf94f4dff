"""The Qt-free document model: signals fire only on real changes."""

from __future__ import annotations

import numpy as np

from app.model.document import Document
from codec.tuning import GlobalSettings, JointOverride
from tests.codec.helpers import chain_clip


def counters(doc: Document) -> dict[str, int]:
    seen = {"settings": 0, "rounding": 0, "time": 0}
    doc.settings_changed.connect(lambda: seen.__setitem__("settings", seen["settings"] + 1))
    doc.rounding_changed.connect(lambda: seen.__setitem__("rounding", seen["rounding"] + 1))
    doc.time_changed.connect(lambda: seen.__setitem__("time", seen["time"] + 1))
    return seen


def test_rounding_only_rules_do_not_ask_for_a_new_compression() -> None:
    doc = Document()
    doc.set_clip(chain_clip())
    seen = counters(doc)
    doc.set_overrides([JointOverride("j1", rounding="floor")])
    assert seen == {"settings": 0, "rounding": 1, "time": 0}
    assert doc.per_track_rounding().tolist() == ["none", "floor", "none", "none"]
    doc.set_overrides([JointOverride("j1", rounding="floor", precision=0.5)])
    assert seen["settings"] == 1
    np.testing.assert_allclose(doc.compression_input().skeleton.precision, [0.01, 0.5, 0.01, 0.01])


def test_time_is_clamped_and_unchanged_values_are_silent() -> None:
    doc = Document()
    doc.set_clip(chain_clip(num_samples=31))
    seen = counters(doc)
    doc.set_time(5.0)
    assert doc.time == doc.duration == 1.0 and seen["time"] == 1
    doc.set_time(5.0)
    doc.update_settings(precision=None)  # the clip's own values, as they were
    assert seen == {"settings": 0, "rounding": 0, "time": 1}


def test_a_clip_a_listener_fails_on_does_not_replace_the_open_one() -> None:
    """set_clip is all or nothing: a view raising on the new clip (the 3D view once asked
    for 200 million grid lines for a 1-joint clip) puts the old clip, tuning, result, time
    and selection back, tells the listeners again, and raises."""
    import codec

    doc = Document()
    old = chain_clip(num_samples=31)
    doc.set_clip(old, "old.bvh", [JointOverride("j1", precision=0.5)], GlobalSettings(0.02))
    result = codec.compress(doc.compression_input())
    doc.set_result(result)
    doc.set_time(0.5)
    doc.set_selection(2)
    shown: list[object] = []

    def view() -> None:
        shown.append(doc.clip)
        if doc.clip is not old:
            raise MemoryError("Unable to allocate 51.4 GiB")

    doc.clip_changed.connect(view)
    seen = counters(doc)
    new = chain_clip(num_joints=1)
    try:
        doc.set_clip(new, "new.bvh", [], GlobalSettings(0.1))
    except MemoryError as e:
        assert "51.4 GiB" in str(e)
    else:
        raise AssertionError("the view's error must reach the caller")
    assert doc.clip is old and doc.path.name == "old.bvh"
    assert doc.overrides == (JointOverride("j1", precision=0.5),)
    assert doc.settings == GlobalSettings(0.02)
    assert doc.result is result and doc.time == 0.5 and doc.selection == 2
    assert shown == [new, old]  # the views were shown the old clip again
    assert seen["time"] == 1  # told once more, after the failed attempt (which stopped early)


def test_shells_from_the_mesh_are_the_base_that_rules_refine() -> None:
    from pathlib import Path

    import codec
    from codec.measure.mesh_shells import mesh_shell_distances

    clip = codec.load_clip(Path(__file__).parents[2] / "data" / "gltf" / "CesiumMan.glb")
    doc = Document()
    doc.set_clip(clip)
    assert np.all(doc.resolved_joints().shell_distance == 3.0) and doc.mesh_shells() is None
    seen = counters(doc)
    doc.update_settings(shell_from_mesh=True)
    assert seen["settings"] == 1
    want, _ = mesh_shell_distances(clip, 3.0)
    np.testing.assert_array_equal(doc.resolved_joints().shell_distance, want)
    assert doc.mesh_shells() is doc.mesh_shells()  # measured once
    name = clip.skeleton.names[4]
    doc.set_overrides([JointOverride(name, shell_distance=1.5)])
    got = doc.compression_input().skeleton.shell_distance
    assert got[4] == 1.5 and np.array_equal(np.delete(got, 4), np.delete(want, 4))


def test_shells_from_the_mesh_mean_nothing_without_a_mesh() -> None:
    doc = Document()
    doc.set_clip(chain_clip())
    doc.update_settings(shell_from_mesh=True, shell_distance=4.0)
    assert doc.mesh_shells() is None
    np.testing.assert_array_equal(doc.resolved_joints().shell_distance, 4.0)


def test_raw_pose_between_samples_is_the_files_curve(tmp_path) -> None:
    """A glTF clip whose joint B turns 0 -> 90 degrees about z between keys 0 s and 1 s
    (LINEAR, the keys are the samples): scrubbing to 1/3 s with rounding none shows the
    file's slerp (30 degrees), nearest shows the sample; the codec gets the curves too."""
    from codec.formats.gltf import read_gltf
    from tests.codec.formats.test_gltf import hand_gltf, save_gltf

    doc_json, blob = hand_gltf()
    doc = Document()
    doc.set_clip(read_gltf(save_gltf(tmp_path, doc_json, blob), scale_to_cm=False))
    doc.set_time(1 / 3)
    q = doc.raw_pose().rotations[1]
    assert abs(np.degrees(2 * np.arctan2(q[2], q[3])) - 30.0) < 1e-9  # nlerp: 29.28
    doc.set_rounding("nearest")
    np.testing.assert_array_equal(doc.raw_pose().rotations[1], doc.clip.rotations[0, 1])
    assert doc.compression_input().curves is doc.clip.curves


def test_the_shown_pose_is_sampled_again_only_when_rules_can_change_it() -> None:
    """A precision rule changes no pose on screen until its result comes: the shown pose
    stays; under per-track rounding a rule's rounding moves the pose and it is sampled again."""
    import codec

    doc = Document()
    doc.set_clip(chain_clip())
    doc.set_result(codec.compress(doc.compression_input()))
    doc.set_time(0.4 / doc.clip.sample_rate)  # between samples 0 and 1
    doc.set_rounding("nearest")
    before = doc.shown_pose()
    doc.set_overrides([JointOverride("j1", precision=0.5)])
    assert doc.shown_pose() is before
    doc.set_rounding("per_track")
    shown = doc.shown_pose()
    doc.set_overrides([JointOverride("j1", precision=0.5, rounding="ceil")])
    moved = doc.shown_pose()
    assert moved is not shown
    assert moved.keys.alpha[1] == 1.0 and moved.keys.alpha[0] == shown.keys.alpha[0]
    assert not np.array_equal(moved.raw[1], shown.raw[1])
