"""The Qt-free document model: signals fire only on real changes."""

from __future__ import annotations

import numpy as np

from app.document import Document
from codec.overrides import JointOverride
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
    doc.update_settings(precision=0.01)
    assert seen == {"settings": 0, "rounding": 0, "time": 1}


def test_shells_from_the_mesh_are_the_base_that_rules_refine() -> None:
    from pathlib import Path

    import codec
    from codec.mesh_shells import mesh_shell_distances

    clip = codec.load_clip(Path(__file__).parents[1] / "data" / "gltf" / "CesiumMan.glb")
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
