"""The window fits: no text elided or cut in any dock at 1280x800 and 1920x1080, every control
within reach, the layout remembered between sessions, views cleared for a new clip, and the
keyboard shortcuts listed."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics, QTextDocument
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractScrollArea,
    QApplication,
    QComboBox,
    QDockWidget,
    QGroupBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTabBar,
    QTableView,
    QWidget,
)

from tests.app.conftest import DATA, settle

SIZES = ((1280, 800), (1920, 1080))
BIG_RIG = DATA / "bvh" / "cmu_02_03_run_ccrig.bvh"  # 142 joints, the longest names we carry


def _inside_scroll_area(w: QWidget, root: QWidget) -> bool:
    p = w.parentWidget()
    while p is not None and p is not root:
        if isinstance(p, QAbstractScrollArea):
            return True
        p = p.parentWidget()
    return False


def _label_problem(w: QLabel) -> str | None:
    text = QLabel.text(w)  # what is drawn (a one-line readout draws its text elided)
    if not text or w.pixmap() is not None and not w.pixmap().isNull():
        return None
    box = w.contentsRect()
    rich = w.textFormat() == Qt.TextFormat.RichText or (
        w.textFormat() == Qt.TextFormat.AutoText and "<" in text and ">" in text
    )
    if w.wordWrap():
        need = w.heightForWidth(box.width())
        return f"needs {need} px of height, has {box.height()}" if need > box.height() + 1 else None
    if rich:
        doc = QTextDocument()
        doc.setDefaultFont(w.font())
        doc.setDocumentMargin(0)
        doc.setHtml(text)
        need = doc.idealWidth()
    else:
        need = QFontMetrics(w.font()).horizontalAdvance(text)
    return f"needs {need:.0f} px, has {box.width()}" if need > box.width() + 1 else None


def cut_texts(root: QWidget) -> list[str]:
    """Every piece of text under `root` that is shown shorter than it is."""
    problems: list[str] = []
    for w in root.findChildren(QWidget):
        if not w.isVisible() or w.width() <= 1:
            continue
        name = f"{type(w).__name__}"
        fm = QFontMetrics(w.font())
        why = None
        if isinstance(w, QLabel):
            why = _label_problem(w)
            name += f" {w.text()[:40]!r}"
        elif isinstance(w, QAbstractButton) and w.text():
            if w.sizeHint().width() > w.width() + 1:
                why = f"needs {w.sizeHint().width()} px, has {w.width()}"
            name += f" {w.text()!r}"
        elif isinstance(w, QComboBox):
            need = fm.horizontalAdvance(w.currentText()) + 28
            if need > w.width():
                why = f"needs {need} px, has {w.width()}"
            name += f" {w.currentText()!r}"
        elif isinstance(w, QGroupBox) and w.title():
            if fm.horizontalAdvance(w.title()) + 16 > w.width():
                why = "title cut"
            name += f" {w.title()!r}"
        elif isinstance(w, QLineEdit) and w.placeholderText() and not w.text():
            if fm.horizontalAdvance(w.placeholderText()) + 12 > w.width():
                why = "placeholder cut"
        elif isinstance(w, QHeaderView):
            model = w.model()
            for i in range(w.count()):
                if w.isSectionHidden(i) or model is None:
                    continue
                label = str(model.headerData(i, w.orientation()) or "")
                if label and w.sectionSize(i) < fm.horizontalAdvance(label) + 8:
                    problems.append(f"header {label!r}: {w.sectionSize(i)} px")
        elif isinstance(w, QAbstractItemView) and w.model() is not None:
            # cell text: never elided ("..."), or in columns as wide as their contents
            if w.textElideMode() != Qt.TextElideMode.ElideNone:
                header = w.horizontalHeader() if isinstance(w, QTableView) else w.header()
                for c in range(w.model().columnCount()):
                    if not header.isSectionHidden(c) and c != header.count() - 1:
                        if header.sectionSize(c) < w.sizeHintForColumn(c):
                            problems.append(f"{name} column {c} cut")
        elif isinstance(w, QTabBar):
            for i in range(w.count()):
                if w.tabRect(i).width() < fm.horizontalAdvance(w.tabText(i)) + 8:
                    problems.append(f"tab {w.tabText(i)!r} cut")
        if why:
            problems.append(f"{name}: {why}")
    return problems


def unreachable_controls(dock: QDockWidget) -> list[str]:
    """Buttons and fields that lie outside their dock and are not in anything that scrolls."""
    out = []
    inner = dock.widget()
    rect = inner.rect()
    for w in inner.findChildren(QWidget):
        if not isinstance(w, QAbstractButton | QComboBox | QLineEdit) or not w.isVisible():
            continue
        if _inside_scroll_area(w, inner):
            continue
        r = w.rect().translated(w.mapTo(inner, w.rect().topLeft()))
        if not rect.contains(r):
            out.append(f"{dock.windowTitle()}: {type(w).__name__} {getattr(w, 'text', str)()!r}")
    return out


@pytest.fixture
def big(ui, window):
    ui.open(window, BIG_RIG)
    window.document.set_selection(window.document.clip.skeleton.index("CC_Base_L_Pinky3"))
    ui.draw(window.viewport)
    return window


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_no_text_is_cut_in_any_dock_and_every_control_is_reachable(big, ui, size) -> None:
    window = big
    window.resize(*size)
    window.reset_layout()
    ui.settle(window)
    problems, unreachable = [], []
    tabbed = [d for d in window.docks.values() if window.tabifiedDockWidgets(d)]
    for dock in window.docks.values():
        if dock in tabbed:
            dock.raise_()
            ui.settle(window)
        problems += [f"{dock.windowTitle()}: {p}" for p in cut_texts(dock)]
        unreachable += unreachable_controls(dock)
        assert dock.widget().width() >= dock.widget().minimumSizeHint().width() - 1
    problems += [f"3D view: {p}" for p in cut_texts(window.viewport.toolbar)]
    problems += [f"3D view: {p}" for p in cut_texts(window.viewport.readout_row)]
    problems += [f"timeline: {p}" for p in cut_texts(window.timeline)]
    assert not problems, "\n".join(problems)
    assert not unreachable, "\n".join(unreachable)
    # the 3D view keeps the lion's share, and the docks grow with the screen
    assert window.viewport.scene.width() > 0.45 * size[0]
    joints = window.docks["JointsPanel"]
    assert joints.width() >= (300 if size[0] < 1500 else 400)


def test_the_checker_finds_a_cut_label(qtbot) -> None:
    """The check above can fail: a label narrower than its text, a squeezed button."""
    from PySide6.QtWidgets import QPushButton, QVBoxLayout

    host = QWidget()
    qtbot.addWidget(host)
    lay = QVBoxLayout(host)
    label = QLabel("Override rules (by name pattern; later rules win)")
    button = QPushButton("Stats JSON\u2026")
    lay.addWidget(label)
    lay.addWidget(button)
    host.show()
    label.setMinimumWidth(0)
    label.setFixedWidth(60)
    button.setFixedWidth(30)
    qtbot.waitExposed(host)
    found = cut_texts(host)
    assert any("Override rules" in p for p in found) and any("Stats JSON" in p for p in found)


def test_window_size_and_docks_are_remembered(qtbot, dialogs) -> None:
    from app.main_window import MainWindow

    first = MainWindow(dialogs=dialogs)  # type: ignore[arg-type]
    qtbot.addWidget(first)
    first.resize(1500, 900)
    first.show()
    qtbot.waitExposed(first)
    settle(qtbot, first.viewport)
    joints = first.docks["JointsPanel"]
    first.resizeDocks([joints], [444], Qt.Orientation.Horizontal)
    first.docks["StatsPanel"].hide()
    settle(qtbot, first.viewport)
    width = joints.width()
    first.close()

    second = MainWindow(dialogs=dialogs)  # type: ignore[arg-type]
    qtbot.addWidget(second)
    assert second.layout_restored
    second.show()
    qtbot.waitExposed(second)
    settle(qtbot, second.viewport)
    assert (second.width(), second.height()) == (1500, 900)
    assert abs(second.docks["JointsPanel"].width() - width) <= 4
    assert not second.docks["StatsPanel"].isVisible()
    second.reset_layout()  # View > Reset layout brings every dock back
    assert second.docks["StatsPanel"].isVisible()
    second.close()


def test_a_screenshot_window_neither_reads_nor_writes_the_layout(qtbot, dialogs) -> None:
    from app.main_window import MainWindow

    first = MainWindow(dialogs=dialogs)  # type: ignore[arg-type]
    qtbot.addWidget(first)
    first.resize(1600, 1000)
    first.close()  # saved
    shot = MainWindow(dialogs=dialogs, remember_layout=False)  # type: ignore[arg-type]
    qtbot.addWidget(shot)
    assert not shot.layout_restored
    shot.resize(900, 700)
    shot.close()
    third = MainWindow(dialogs=dialogs)  # type: ignore[arg-type]
    qtbot.addWidget(third)
    assert (third.width(), third.height()) == (1600, 1000)
    third.close()


def test_help_lists_every_shortcut(window, qtbot) -> None:
    dialog = window.show_shortcuts()
    qtbot.waitExposed(dialog)
    listed = {
        (dialog.table.item(r, 2).text(), dialog.table.item(r, 1).text())
        for r in range(dialog.table.rowCount())
    }
    for act in window.actions():
        if act.shortcuts():
            name = act.text().replace("&", "").replace("\u2026", "")
            keys = act.shortcuts()[0].toString()
            assert any(n == name and keys in k for n, k in listed), (name, keys)
    assert ("Front", "1, Num+1") in listed and ("Orbit" in {r[0] for r in listed})
    assert not cut_texts(dialog)
    dialog.close()


def test_views_are_cleared_for_a_new_clip_while_it_compresses(loaded, qtbot) -> None:
    window = loaded
    p = window.panels
    assert window.document.result is not None
    assert window.open_file(DATA / "bvh" / "cmu_02_02_walk_daz.bvh")
    # the result of the new clip has not arrived yet: nothing of the old clip is shown
    assert window.document.result is None and window.controller.running
    plot = p["ErrorPlotPanel"]
    x = plot.max_curve.getData()[0]
    assert x is None or len(x) == 0
    assert plot.plot.getViewBox().viewRange()[0][1] >= 0.99 * window.document.duration
    # panels behind another tab leave their work until they are shown: cleared, or to be
    # drawn again before they are
    heat, bits = p["ErrorHeatmapPanel"], p["BitRatePanel"]
    assert heat.image is None or heat.when_shown.stale
    assert bits.bits.size == 0 or bits.when_shown.stale
    assert p["StatsPanel"].values["compressed_size"].text() == "\u2013"
    assert all(item.text(1) == "" for item in p["JointsPanel"].items)
    window.viewport.sync()
    assert not window.viewport.lossy_bones.visible()
    with qtbot.waitSignal(window.controller.result_ready, timeout=60_000):
        pass
    window.docks["ErrorHeatmapPanel"].raise_()
    QApplication.processEvents()
    assert heat.image is not None and heat.image.height() == window.document.clip.num_joints
    window.docks["BitRatePanel"].raise_()
    QApplication.processEvents()
    assert np.asarray(p["BitRatePanel"].bits).size > 0


def _joints_fit(window) -> tuple[int, int, int, list[int]]:
    """(names pane width, widest name, values pane width, the value columns' right edges)."""
    from app.views.joints import C_NAME

    p = window.panels["JointsPanel"]
    h = p.values.header()
    shown = [c for c in range(1, h.count()) if not h.isSectionHidden(c)]
    return (
        p.tree.viewport().width(),
        p.tree.sizeHintForColumn(C_NAME),
        p.values.viewport().width(),
        list(np.cumsum([h.sectionSize(c) for c in shown])),
    )


@pytest.mark.parametrize(
    ("clip", "animation", "size"),
    [
        ("usd/CesiumMan.usdz", None, (1280, 800)),  # leg_joint_L_5 / _R_5: L/R at the end
        ("gltf/Fox.glb", "Walk", (1280, 800)),  # skinned: the Skin button and report
        ("bvh/makehuman_face_poseunits.bvh.xz", None, (1280, 800)),
        ("bvh/cmu_02_03_run_ccrig.bvh", None, (1920, 1080)),
    ],
    ids=["usd-1280", "fox-1280", "face-1280", "ccrig-1920"],
)
def test_joint_names_and_their_error_columns_are_whole(
    ui, window, dialogs, qtbot, clip, animation, size
) -> None:
    """The default layout keeps Max error, Used and Precision in view, whole (they were cut
    to '25 9', and Precision needed a scroll at 1280x800), and no column is cut at the
    pane's edge ('99.9 %' read '9.9 %'); the names get their width where that leaves room
    (1920x1080), else 40 % of the panel, eliding in the middle."""
    window.resize(*size)
    window.reset_layout()
    dialogs.animation = animation
    ui.open(window, DATA / clip)
    ui.settle(window)
    names, widest, values, edges = _joints_fit(window)
    assert values >= edges[2], f"values pane {values} px, three columns {edges[2]} px"
    assert values in edges, f"values pane {values} px cuts a column (edges {edges})"
    total = window.panels["JointsPanel"].table_split.width()
    assert names >= min(widest, 0.4 * total - 4), f"names pane {names} px, widest {widest}"
    if size == (1920, 1080):
        assert names >= widest and len([e for e in edges if e <= values]) >= 4


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_3d_view_and_the_heat_map_get_the_room(ui, window, qtbot, size) -> None:
    """At 1280x800 the 3D view is larger than the 650x390 it had, and the heat map shows
    every row of a 44-joint clip at once (it showed 7)."""
    window.resize(*size)
    window.reset_layout()
    ui.open(window, DATA / "acl" / "cmu_13_07.acl.sjson.xz")
    heat = window.panels["ErrorHeatmapPanel"]
    window.docks["ErrorHeatmapPanel"].raise_()
    ui.settle(window)
    scene = window.viewport.scene
    assert scene.width() * scene.height() > 650 * 390
    assert scene.height() > 390
    canvas = heat.canvas
    rows_in_view = heat.scroll.viewport().height() // canvas.row_height
    assert rows_in_view >= window.document.clip.num_joints == 44
    heat.fit_rows.setChecked(False)  # one line of text per row: the rows scroll instead
    ui.settle(window)
    assert canvas.row_height == canvas.text_row
    assert canvas.height() >= 44 * canvas.row_height > heat.scroll.viewport().height()


def test_readouts_keep_one_line_and_the_skin_summary_is_whole(ui, window, dialogs) -> None:
    """At 1280x800 a long readout is one elided line (it wrapped to 2-3 lines and moved the 3D
    view and the timeline), and the skin report's summary is read to its last line."""
    window.resize(1280, 800)
    window.reset_layout()
    dialogs.animation = "Walk"
    ui.open(window, DATA / "gltf" / "Fox.glb")
    window.docks["SkinReportPanel"].raise_()
    ui.settle(window)
    vp, plot = window.viewport, window.panels["ErrorPlotPanel"]
    scene = vp.scene_box.geometry()
    window.document.set_selection(3)  # its error, its budget and the skin's: too long
    ui.settle(window)
    for label in (vp.info, plot.readout):
        assert label.height() <= label.fontMetrics().height() + 4, label.text()
    text = vp.info.text()
    assert "skin" in text and text in vp.info.toolTip()
    assert vp.info.shown_text().endswith("\u2026")  # elided, one line
    assert vp.scene_box.geometry() == scene  # the 3D view did not move
    summary = window.panels["SkinReportPanel"].summary
    need = summary.heightForWidth(summary.width())
    assert summary.visibleRegion().boundingRect().height() >= need
    # the Stats sheet's error figures are one line each ("Max between samples 9.9…e−3 cm at
    # 1.0167 s" wrapped to a second line at this size)
    stats = window.panels["StatsPanel"].values
    for key in ("max_error", "max_error_between_samples", "worst_time_between_samples"):
        label = stats[key]
        assert label.text() not in ("", "\u2013"), key
        one_line = label.fontMetrics().height() + 4
        assert label.heightForWidth(label.width()) <= one_line, (key, label.text())
