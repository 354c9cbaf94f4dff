"""Curves panel: the selected joint's channels, raw (in the file's Euler order) against lossy,
A while comparing, segment starts, stored keys, and click to scrub."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore

import codec
from app.model.comparison import stored_keys_of
from app.model.document import Document
from app.views.curves import CurvesPanel

BVH = Path(__file__).resolve().parents[2] / "data" / "bvh" / "cmu_02_02_walk_daz.bvh"


@pytest.fixture(scope="module")
def walk():
    clip = codec.load_clip(BVH, units="cm")
    a = codec.compress(clip, codec.CompressionSettings(precision=0.01))
    b = codec.compress(clip, codec.CompressionSettings(precision=0.5))
    return clip, a, b


def _panel(qtbot, clip, result) -> tuple[Document, CurvesPanel]:
    doc = Document()
    doc.set_clip(clip, BVH)
    doc.set_result(result)
    panel = CurvesPanel(doc)
    qtbot.addWidget(panel)
    panel.resize(1000, 260)
    panel.show()
    qtbot.waitExposed(panel)
    return doc, panel


def test_raw_rotation_is_the_files_euler_angles_and_lossy_stays_close(qtbot, walk) -> None:
    clip, _, b = walk
    doc, panel = _panel(qtbot, clip, b)
    assert not panel.series and "Select a joint" in panel.title.text()
    j = clip.skeleton.index("abdomen")
    doc.set_selection(j)
    assert panel.mode_box.itemText(0) == "Euler ZXY"  # the file's order
    text = BVH.read_text().split("MOTION")[1].split("\n")
    rows = np.array([[float(v) for v in line.split()] for line in text[3:] if line.strip()])
    for c, axis in enumerate("ZXY"):
        _, raw = panel.series[f"rotation {axis} rot raw"]
        np.testing.assert_allclose(raw, rows[:, 6 + c], atol=1e-6)
        _, lossy = panel.series[f"rotation {axis} rot B"]
        assert 0 < np.abs(lossy - raw).max() < 5.0  # degrees: close, not identical
    assert not any(name.endswith(" A") for name in panel.series)
    # segment starts: one grey line per segment after the first, on each plot
    drawn = panel._items[panel.plots[0]]
    lines = [it for it in drawn if type(it).__name__ == "InfiniteLine" and it.value() > 0]
    assert len(lines) == len(b.costs.segments) - 1
    n = len(stored_keys_of(b, j, 0))
    assert panel.plots[0].titleLabel.text == f"rotation: {n} keys"


def test_quaternion_mode_and_a_while_comparing(qtbot, walk) -> None:
    clip, a, b = walk
    doc, panel = _panel(qtbot, clip, a)
    doc.pin_a()
    doc.set_result(b)
    j = clip.skeleton.index("rFoot")
    doc.set_selection(j)
    assert "rotation X rot A" in panel.series or "rotation Z rot A" in panel.series
    panel.mode_box.setCurrentIndex(1)
    names = [n for n in panel.series if n.startswith("rotation") and n.endswith(" raw")]
    assert len(names) == 4
    raw = np.stack([panel.series[f"rotation {c} raw"][1] for c in "xyzw"], -1)
    for side in ("A", "B"):
        lossy = np.stack([panel.series[f"rotation {c} {side}"][1] for c in "xyzw"], -1)
        assert np.all(np.sum(raw * lossy, axis=-1) > 0.99)  # one hemisphere, close
    np.testing.assert_allclose(np.linalg.norm(raw, axis=-1), 1.0, atol=1e-9)
    tr_raw = panel.series["translation x raw"][1]
    np.testing.assert_allclose(tr_raw, clip.translations[:, j, 0])


def test_click_on_a_plot_scrubs(qtbot, walk) -> None:
    clip, _, b = walk
    doc, panel = _panel(qtbot, clip, b)
    doc.set_selection(3)
    vb = panel.plots[1].getViewBox()
    ymid = sum(vb.viewRange()[1]) / 2
    scene = vb.mapViewToScene(QtCore.QPointF(1.25, ymid))
    pos = panel.canvas.mapFromScene(scene)
    qtbot.mouseClick(panel.canvas.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=pos)
    assert doc.time == pytest.approx(1.25, abs=0.02)


def _wheel(qtbot, panel: CurvesPanel, plot, modifiers) -> None:
    """A real wheel turn (zoom in) over the middle of `plot`."""
    from PySide6.QtGui import QWheelEvent

    vb = plot.getViewBox()
    centre = vb.mapViewToScene(vb.viewRect().center())
    pos = QtCore.QPointF(panel.canvas.mapFromScene(centre))
    glob = QtCore.QPointF(panel.canvas.viewport().mapToGlobal(pos.toPoint()))
    event = QWheelEvent(
        pos, glob, QtCore.QPoint(), QtCore.QPoint(0, 120), QtCore.Qt.MouseButton.NoButton,
        modifiers, QtCore.Qt.ScrollPhase.NoScrollPhase, False,
    )  # fmt: skip
    QtCore.QCoreApplication.sendEvent(panel.canvas.viewport(), event)


def test_graph_editor_zooms_values_frames_shows_the_error_and_several_joints(qtbot, walk):
    """The raw-to-lossy band of a 0.5 cm run is a fraction of a degree on a curve spanning
    tens: Ctrl+wheel zooms the values, F frames the worst error, Lossy - raw fills the plot
    with it; a legend names each channel's colour; Pin keeps a joint's row."""
    clip, _, b = walk
    doc, panel = _panel(qtbot, clip, b)
    j = clip.skeleton.index("rFoot")
    doc.set_selection(j)
    vb = panel.plots[0].getViewBox()
    (x0, x1), (y0, y1) = vb.viewRange()
    _wheel(qtbot, panel, panel.plots[0], QtCore.Qt.KeyboardModifier.NoModifier)
    (x2, x3), (y2, y3) = vb.viewRange()
    assert x3 - x2 < 0.99 * (x1 - x0) and (y2, y3) == pytest.approx((y0, y1))
    _wheel(qtbot, panel, panel.plots[0], QtCore.Qt.KeyboardModifier.ControlModifier)
    (x4, x5), (y4, y5) = vb.viewRange()
    assert y5 - y4 < 0.99 * (y3 - y2) and (x4, x5) == pytest.approx((x2, x3))
    # A frames all; F the worst sample of this joint's shell error and its neighbours
    panel.canvas.setFocus()
    qtbot.keyClick(panel.canvas, QtCore.Qt.Key.Key_A)
    assert vb.viewRange()[0][1] - vb.viewRange()[0][0] >= clip.duration
    qtbot.keyClick(panel.canvas, QtCore.Qt.Key.Key_F)
    worst = float(np.argmax(b.error[:, j])) / clip.sample_rate
    lo, hi = vb.viewRange()[0]
    assert lo <= worst <= hi and hi - lo < 20 / clip.sample_rate
    # lossy - raw: the error curve per channel, the plot's values framed to it
    raw = panel.series["rotation X rot raw"][1]
    lossy = panel.series["rotation X rot B"][1]
    panel.error_box.setChecked(True)
    _, diff = panel.series["rotation X rot B-raw"]
    np.testing.assert_allclose(diff, lossy - raw)
    qtbot.waitUntil(lambda: vb.viewRange()[1][1] - vb.viewRange()[1][0] < 5 * np.ptp(diff) + 1e-9)
    assert np.ptp(raw) > 10 * np.ptp(diff)  # the curves' range would have hidden it
    # the legend: each channel's colour by name; its tooltip one item a line
    for name in ("X rot", "Y rot", "Z rot"):
        assert name in panel.swatches.text()
    assert "rgb(213, 94, 0)" in panel.swatches.text()
    assert "<br>" in panel.legend.toolTip()
    # several joints: pinned rows stay while another joint is selected
    panel.toggle_pin()
    hips = clip.skeleton.index("hip")
    doc.set_selection(hips)
    assert panel.joints_shown == [hips, j]
    assert panel.rows[1][0].isVisible() and "rFoot: rotation" in panel.rows[1][0].titleLabel.text
    assert "rFoot: rotation X rot B-raw" in panel.series
    panel.clear_pins()
    assert panel.joints_shown == [hips] and not panel.rows[1][0].isVisible()


def test_curves_follow_several_joints_selected_in_joints(qtbot, walk) -> None:
    """Ctrl-click in Joints selects several joints and Curves draws them all, the current
    one first, as a graph editor follows the outliner; one joint picked drops the others."""
    from app.views.joints import C_NAME, JOINT_ROLE, JointsPanel

    clip, a, _ = walk
    doc, curves = _panel(qtbot, clip, a)
    joints = JointsPanel(doc)
    qtbot.addWidget(joints)
    joints.resize(400, 700)
    joints.show()
    qtbot.waitExposed(joints)
    hand, foot, head = (clip.skeleton.index(n) for n in ("lHand", "rFoot", "head"))

    def click(j: int, modifier: QtCore.Qt.KeyboardModifier) -> None:
        tree = joints.tree
        tree.scrollToItem(joints.items[j])
        at = tree.visualItemRect(joints.items[j]).center()
        qtbot.mouseClick(tree.viewport(), QtCore.Qt.MouseButton.LeftButton, modifier, at)

    def selected_in_tree() -> set[int]:
        return {int(i.data(C_NAME, JOINT_ROLE)) for i in joints.tree.selectedItems()}

    ctrl = QtCore.Qt.KeyboardModifier.ControlModifier
    click(hand, QtCore.Qt.KeyboardModifier.NoModifier)
    assert doc.selection == hand and doc.also_selected == ()
    qtbot.waitUntil(lambda: curves.joints_shown == [hand])
    click(foot, ctrl)
    assert doc.selection == foot and doc.also_selected == (hand,)
    qtbot.waitUntil(lambda: curves.joints_shown == [foot, hand])
    click(head, ctrl)
    qtbot.waitUntil(lambda: curves.joints_shown[0] == head)
    assert sorted(curves.joints_shown) == sorted([hand, foot, head])
    assert "lHand" in curves.title.text() and "rFoot" in curves.title.text()
    assert all(row[0].isVisible() for row in curves.rows[:3])  # a row of plots each
    # a joint picked elsewhere (the 3D view, a link) selects it alone, in both panels
    doc.set_selection(hand)
    qtbot.waitUntil(lambda: curves.joints_shown == [hand])
    assert selected_in_tree() == {hand}
    # the document's multi-selection shows in the tree, and more than fits is said
    many = tuple(range(6))
    doc.set_selection(foot, also=many)
    assert selected_in_tree() == {foot, *many}
    qtbot.waitUntil(lambda: len(curves.joints_shown) == 4)
    assert curves.joints_shown[0] == foot and "more selected" in curves.title.text()
