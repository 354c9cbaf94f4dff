"""Opening a clip after another never kills the window: every kind of clip after every other
kind, with and without a saved layout, and the sequence that used to segfault (a BVH, then a
skinned glTF: the Skin button's relayout repainted the 3D view with the old clip's bones).

A paint handler that raises is logged by `app.qt.handler_guard` instead of crashing, so
these tests fail on anything logged there, not only on a dead process."""

from __future__ import annotations

import logging
from itertools import pairwise, permutations

import pytest
from PySide6 import QtCore

from app.main_window import MainWindow

KINDS = {  # one clip of each kind the window opens, with the animation to choose
    "BVH": ("bvh/cmu_02_02_walk_daz.bvh", None),
    "ACL SJSON": ("acl/cmu_09_02.acl.sjson", None),
    "glTF with skin": ("gltf/Fox.glb", "Walk"),
    "FBX": ("fbx/quaternius_robot.fbx.xz", "RobotArmature|Robot_Wave"),
    "USD": ("usd/CesiumMan.usdz", None),
}
# a walk through every ordered pair of kinds once (20 pairs, 21 opens)
ORDER = (0, 1, 0, 2, 0, 3, 0, 4, 1, 2, 1, 3, 1, 4, 2, 3, 2, 4, 3, 4, 0)


def test_the_order_visits_every_ordered_pair_of_kinds() -> None:
    pairs = set(pairwise(ORDER))
    assert pairs == set(permutations(range(len(KINDS)), 2))


def _open(qtbot, window: MainWindow, dialogs, data, kind: str, wait_result: bool) -> None:
    path, animation = KINDS[kind]
    dialogs.paths.append(str(data / path))
    dialogs.animation = animation
    vp = window.viewport
    # the relayouts and repaints of the new clip's first frame (and its result, for half)
    signals = [vp.frame_drawn, window.controller.result_ready][: 1 + wait_result]
    with qtbot.waitSignals(signals, timeout=60_000):
        assert window.open_file(), kind
    with qtbot.waitSignal(vp.frame_drawn, timeout=10_000):
        vp.invalidate()
    clip = window.document.clip
    assert vp.raw_positions is not None and len(vp.raw_positions) == clip.num_joints, kind


def _window(qtbot, dialogs, saved_layout: bool) -> MainWindow:
    if saved_layout:  # a session before this one left its layout behind
        first = MainWindow(dialogs=dialogs)
        qtbot.addWidget(first)
        first.resize(1280, 800)
        first.show()
        qtbot.waitExposed(first)
        first.close()
    w = MainWindow(dialogs=dialogs)
    qtbot.addWidget(w)
    if not w.layout_restored:
        w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    assert w.layout_restored == saved_layout
    return w


@pytest.mark.parametrize("saved_layout", [False, True], ids=["no-layout", "saved-layout"])
def test_every_kind_of_clip_opens_after_every_other(
    qtbot, dialogs, ui, caplog, saved_layout: bool
) -> None:
    caplog.set_level(logging.ERROR, logger="shellscope")
    w = _window(qtbot, dialogs, saved_layout)
    names = list(KINDS)
    for step, k in enumerate(ORDER):
        # half the opens come before the previous clip's compression is done
        _open(qtbot, w, dialogs, ui.data, names[k], wait_result=step % 2 == 0)
    assert dialogs.errors == []
    assert [r.getMessage() for r in caplog.records] == []
    w.close()


@pytest.mark.parametrize("second", ["gltf/Fox.glb", "gltf/CesiumMan.glb"])
def test_a_bvh_then_a_skinned_gltf_with_no_saved_layout(qtbot, dialogs, ui, caplog, second):
    """The reported crash: no layout, the DAZ walk, then File > Open a skinned glTF."""
    caplog.set_level(logging.ERROR, logger="shellscope")
    w = _window(qtbot, dialogs, saved_layout=False)
    dialogs.animation = "Walk"
    for path in ("bvh/cmu_02_02_walk_daz.bvh", second):
        dialogs.paths.append(str(ui.data / path))
        with qtbot.waitSignal(w.viewport.frame_drawn, timeout=10_000):  # its first frame
            assert w.open_file()
    assert w.viewport.skin_controls.isVisible()
    with qtbot.waitSignal(w.viewport.frame_drawn, timeout=10_000):
        w.viewport.invalidate()
    assert len(w.viewport.raw_positions) == w.document.clip.num_joints
    assert [r.getMessage() for r in caplog.records] == []
    w.close()


def test_a_paint_that_raises_is_logged_and_the_view_keeps_drawing(qtbot, loaded, caplog):
    """The safety net itself: a failing geometry update is logged, frames keep coming."""
    caplog.set_level(logging.ERROR, logger="shellscope")
    vp = loaded.viewport

    def broken() -> None:
        raise IndexError("index 25 is out of bounds for axis 0 with size 24")

    vp._rebuild = broken  # the failure of the report: an index past the old clip's joints
    for _ in range(3):
        with qtbot.waitSignal(vp.frame_drawn, timeout=10_000):
            vp.invalidate()
    messages = [r.getMessage() for r in caplog.records]
    assert messages and "before_paint failed" in messages[0]
    assert "index 25" in caplog.records[0].exc_text
    del vp._rebuild
    with qtbot.waitSignal(vp.frame_drawn, timeout=10_000):
        vp.invalidate()
    assert not vp._dirty
    QtCore.QCoreApplication.processEvents()
