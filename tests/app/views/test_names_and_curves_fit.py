"""At 1280x800 and 1920x1080: a deep rig's joint names are whole or keep their side and their
end around an ellipsis (full name on hover), and the Curves plots get a readable height
while Curves is in front, the 3D view getting its height back after."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QFontMetrics, QHelpEvent
from PySide6.QtWidgets import QStyleOptionViewItem, QToolTip

from app.views.elided_names import (
    ELLIPSIS,
    SIDE,
    ElidedNameDelegate,
    elide_name,
    kept_ends,
)
from app.views.joints import C_NAME
from tests.app.conftest import DATA

CC_RIG = DATA / "bvh" / "cmu_02_03_run_ccrig.bvh"
WALK = DATA / "bvh" / "cmu_02_02_walk_daz.bvh"
SIZES = ((1280, 800), (1920, 1080))
MIN_PLOT_HEIGHT = 120  # px of plot area: a curve's shape can be read (it was about 30-90)


def assert_keeps_both_ends(name: str, text: str) -> None:
    """`text`, an elided `name`, keeps its side marker and its end (`kept_ends`)."""
    head, _, tail = text.partition(ELLIPSIS)
    keep_head, keep_tail = kept_ends(name)
    if not head:  # too deep for its prefix: the prefix went, the side and end stayed
        side = SIDE.search(name)
        assert side is not None and name[side.start() : keep_head] in tail, text
        assert name.endswith(tail.rpartition(ELLIPSIS)[2]) and not tail.endswith(ELLIPSIS)
        return
    assert name.startswith(head) and name.endswith(tail) and tail, (name, text)
    assert len(head) >= keep_head and len(tail) >= len(name) - keep_tail, (name, text)


def chars(n: int):
    return lambda s: len(s) <= n


@pytest.mark.parametrize(
    ("name", "width", "shown"),
    [
        ("CC_Base_R_ToeBaseShareBone_End", 40, "CC_Base_R_ToeBaseShareBone_End"),
        ("CC_Base_R_ToeBaseShareBone_End", 24, "CC_Base_R_ToeB\u2026eBone_End"),
        ("CC_Base_L_KneeShareBone_End", 14, "CC_Base_L_K\u2026nd"),
        ("mixamorig:RightFoot", 14, "m\u2026ig:RightFoot"),  # a side near the end: the tail
        ("Skeleton_torso_joint_1", 12, "Ske\u2026_joint_1"),  # no side: both ends
        ("lHand", 5, "lHand"),
    ],
)
def test_names_keep_their_side_and_their_end(name: str, width: int, shown: str) -> None:
    assert elide_name(name, chars(width)) == shown
    assert len(shown) <= width


def test_a_side_that_cannot_fit_with_its_prefix_keeps_the_side_and_the_end() -> None:
    assert elide_name("CC_Base_R_ToeBaseShareBone_End", chars(8)) == "\u2026R_\u2026_End"
    assert elide_name("CC_Base_R_Eye_End", chars(11)) == "\u2026_R_Eye_End"
    assert elide_name("Spine_Mid_End", chars(8)) == "Sp\u2026d_End"  # no side: the middle
    assert elide_name("CC_Base_R_ToeBaseShareBone_End", chars(0)) == ELLIPSIS


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_cc_rig_name_is_whole_or_keeps_both_ends(ui, window, qtbot, size) -> None:
    window.resize(*size)
    window.reset_layout()
    ui.open(window, CC_RIG)
    ui.settle(window)
    panel = window.panels["JointsPanel"]
    tree = panel.tree
    delegate = tree.itemDelegateForColumn(C_NAME)  # what paints the names
    assert isinstance(delegate, ElidedNameDelegate)
    elided = []
    for item in panel.items:
        name = item.text(C_NAME)
        index = tree.indexFromItem(item, C_NAME)
        assert tree.visualRect(index).right() < tree.viewport().width()  # nothing off-view
        text, width, room = delegate.shown_text(tree, index)
        assert width <= room, (name, text, width, room)
        if text == name:
            continue
        elided.append(name)
        assert_keeps_both_ends(name, text)
    # the Bit rates panel's names too (a fixed 150 px column cut them at 1920x1080)
    window.docks["BitRatePanel"].raise_()
    ui.settle(window)
    canvas = window.panels["BitRatePanel"].canvas
    fm = QFontMetrics(canvas._small)
    assert canvas.name_width <= 0.4 * canvas.width() + 1
    cut = []
    for j, (name, text) in enumerate(zip(canvas.names, canvas.shown_names, strict=True)):
        assert canvas._name_left(j) + fm.horizontalAdvance(text) + 4 <= canvas.name_width, text
        if text != name:
            cut.append(name)
            assert_keeps_both_ends(name, text)
    assert len(canvas.names) == window.document.clip.num_joints
    if size == (1920, 1080):
        assert cut == [], cut
    if size == (1280, 800):  # the deepest names do not fit: they were cut by up to 44 px
        assert "CC_Base_R_ToeBaseShareBone_End" in elided
        shown = delegate.shown_text(
            tree, tree.indexFromItem(panel.items[window.document.clip.skeleton.index(elided[0])])
        )[0]
        assert "L_" in shown or "R_" in shown, shown  # its side, at least
    else:  # at 1920x1080 every name is whole
        assert elided == []


def test_the_full_name_is_the_tooltip(ui, window, qtbot) -> None:
    window.resize(1280, 800)
    window.reset_layout()
    ui.open(window, CC_RIG)
    panel = window.panels["JointsPanel"]
    tree = panel.tree
    j = window.document.clip.skeleton.index("CC_Base_R_ToeBaseShareBone_End")
    index = tree.indexFromItem(panel.items[j], C_NAME)
    tree.scrollTo(index)
    ui.settle(window)
    rect = tree.visualRect(index)
    event = QHelpEvent(QEvent.Type.ToolTip, rect.center(), tree.viewport().mapToGlobal(QPoint()))
    assert tree.itemDelegateForColumn(C_NAME).helpEvent(event, tree, QStyleOptionViewItem(), index)
    assert QToolTip.text().startswith("CC_Base_R_ToeBaseShareBone_End")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_curves_get_room_while_in_front(ui, window, qtbot, size) -> None:
    window.resize(*size)
    window.reset_layout()
    ui.open(window, WALK)
    doc = window.document
    doc.set_selection(doc.clip.skeleton.index("rFoot"))
    ui.settle(window)
    error_dock = window.docks["ErrorPlotPanel"]
    error_dock.raise_()
    ui.settle(window)
    before, scene_before = error_dock.height(), window.viewport.scene.height()
    window.docks["CurvesPanel"].raise_()
    qtbot.waitUntil(lambda: window.docks["CurvesPanel"].height() > before, timeout=2000)
    panel = window.panels["CurvesPanel"]
    ui.settle(window)
    canvas = panel.canvas
    for plot in panel.plots:
        assert plot.getViewBox().height() >= MIN_PLOT_HEIGHT
        right = plot.mapRectToScene(plot.boundingRect()).right()
        assert right <= canvas.viewport().width() + 1  # the three fit side by side
    assert window.viewport.scene.height() > 0.35 * size[1]  # the 3D view keeps its share
    error_dock.raise_()  # another tab in front: the bottom docks go back to their height
    qtbot.waitUntil(lambda: abs(error_dock.height() - before) <= 2, timeout=2000)
    assert abs(window.viewport.scene.height() - scene_before) <= 2
