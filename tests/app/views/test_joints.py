"""Joints panel: shows the result; edits become override rules that save beside the clip."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox

from app.model.document import Document
from app.model.error_scale import eng, format_percent
from app.views.joints import (
    C_DOM,
    C_ERR,
    C_NAME,
    C_PREC,
    C_ROT,
    C_ROUND,
    C_SCALE,
    C_SHELL,
    C_TRANS,
    C_USED,
    JointsPanel,
    matches_filter,
)
from codec.sidecar import load_sidecar, sidecar_path
from codec.tuning import JointOverride
from tests.app.panel_helpers import Recompressions, attach, make_document, make_result

DATA = Path(__file__).resolve().parents[2] / "data"


def _panel(qtbot, tmp_path: Path | None = None) -> tuple[JointsPanel, object, Recompressions]:
    doc = make_document(path=tmp_path / "walk.bvh" if tmp_path else None)
    panel = JointsPanel(doc)
    qtbot.addWidget(panel)
    attach(doc, panel)
    return panel, doc, Recompressions(doc)


def _saved(qtbot, doc) -> tuple:
    """The rules in the clip's sidecar, once the controller's debounce has saved them."""
    qtbot.waitUntil(
        lambda: sidecar_path(doc.path).exists() and load_sidecar(doc.path)[1] == doc.overrides
    )
    return load_sidecar(doc.path)[1]


def test_tree_shows_hierarchy_kinds_bits_shells_and_error(qtbot) -> None:
    panel, doc, _ = _panel(qtbot)
    assert panel.tree.topLevelItemCount() == 1
    root = panel.tree.topLevelItem(0)
    assert root.text(C_NAME) == "root" and root.child(0).text(C_NAME) == "Spine"
    assert root.child(0).childCount() == 3
    hand = panel.items[2]
    assert hand.text(C_ROT) == "11–13" and hand.text(C_TRANS) == "C" and hand.text(C_SCALE) == "D"
    assert panel.items[4].text(C_ROT) == "C"
    assert hand.text(C_PREC) == "0.01" and hand.text(C_SHELL) == "3"
    assert hand.text(C_DOM) == "3"
    assert hand.text(C_ERR) == eng(doc.result.error[:, 2].max(), 4)
    assert hand.foreground(C_ERR).color().red() > 150  # over its precision: red
    assert hand.text(C_USED) == "300 %"  # 0.03 of a 0.01 budget
    assert hand.background(C_USED).color().red() > 200 > hand.background(C_USED).color().green()
    spine = panel.items[1]  # 0.004 * 2.2 of 0.01: under budget, warm
    assert spine.foreground(C_ERR).color().red() < 150 and spine.text(C_USED).endswith("%")
    doc.set_result(make_result(doc.compression_input(), bits_shift=1))
    assert hand.text(C_ROT) == "12–14"


def test_filter_keeps_ancestors_and_accepts_globs(qtbot) -> None:
    panel, _, _ = _panel(qtbot)
    panel.filter.setText("hand")
    hidden = [item.isHidden() for item in panel.items]
    assert hidden == [False, False, False, False, True]
    panel.filter.setText("left*")
    assert [item.isHidden() for item in panel.items] == [False, False, False, True, True]
    assert matches_filter("RightHand", "") and not matches_filter("Head", "hand")
    panel.filter.setText("*a" * 40)  # past the rules' bound: matches nothing, raises nothing
    assert all(item.isHidden() for item in panel.items)
    assert not matches_filter("Head", "[" * 100_000) and matches_filter("LeftHand", "*HAND")


def test_selection_syncs_both_ways(qtbot) -> None:
    panel, doc, counter = _panel(qtbot)
    doc.set_selection(3)
    assert panel.tree.currentItem() is panel.items[3]
    panel.tree.setCurrentItem(panel.items[1])
    assert doc.selection == 1
    assert counter.count == 0


def test_editing_a_joint_adds_an_exact_rule_recompresses_and_saves(qtbot, tmp_path: Path) -> None:
    panel, doc, counter = _panel(qtbot, tmp_path)
    panel.show()
    qtbot.waitExposed(panel)
    editor = panel.edit_cell(2, C_PREC)
    assert isinstance(editor, QDoubleSpinBox)
    editor.setValue(0.002)
    qtbot.keyClick(editor, Qt.Key.Key_Return)  # the delegate commits on the next event loop turn
    qtbot.waitUntil(lambda: doc.overrides != ())
    assert doc.overrides == (JointOverride("LeftHand", precision=0.002),)
    assert counter.count == 1
    assert doc.resolved_joints().precision[2] == 0.002
    assert panel.items[2].text(C_PREC) == "0.002" and panel.items[2].font(C_PREC).bold()
    assert panel.rules.rowCount() == 1 and panel.rules.item(0, 0).text() == "LeftHand"
    assert _saved(qtbot, doc) == doc.overrides

    combo = panel.edit_cell(2, C_ROUND)
    assert isinstance(combo, QComboBox)
    combo.setCurrentText("floor")
    qtbot.keyClick(combo, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: doc.overrides[0].rounding is not None)
    assert doc.overrides == (JointOverride("LeftHand", precision=0.002, rounding="floor"),)
    assert doc.per_track_rounding()[2] == "floor"
    panel.edit_joint(2, "shell_distance", 7.0)
    assert doc.resolved_joints().shell_distance[2] == 7.0
    assert panel.items[2].text(C_SHELL) == "7"
    doc.set_selection(2)
    panel.reset_selected_joint()
    # precision, shell distance and the reset recompress; the rounding edit does not
    assert doc.overrides == () and counter.count == 3
    assert _saved(qtbot, doc) == ()


def test_pattern_rules_add_edit_remove(qtbot, tmp_path: Path) -> None:
    panel, doc, counter = _panel(qtbot, tmp_path)
    panel.add_rule("*Hand*", precision=0.001)
    assert panel.rules.item(0, 4).text() == "2"  # joints matched
    assert doc.resolved_joints().precision.tolist() == [0.01, 0.01, 0.001, 0.001, 0.01]
    assert panel.items[3].font(C_NAME).bold() and not panel.items[4].font(C_NAME).bold()
    panel.rules.item(0, 0).setText("root")  # what typing in the cell does
    assert doc.overrides == (JointOverride("root", precision=0.001),)
    assert panel.rules.item(0, 4).text() == "1"
    panel.rules.item(0, 1).setText("abc")
    assert "not a number" in panel.rule_error.text()
    assert doc.overrides == (JointOverride("root", precision=0.001),)  # a bad edit changes nothing
    panel.rules.item(0, 1).setText("0.5")
    panel.rules.item(0, 3).setText("ceil")
    assert doc.overrides == (JointOverride("root", precision=0.5, rounding="ceil"),)
    assert panel.rule_error.text() == ""
    panel.add_rule("*", precision=0.01)
    assert len(doc.overrides) == 2 and doc.overrides[1].pattern == "*"
    panel.rules.selectRow(0)
    qtbot.mouseClick(panel.remove_button, Qt.MouseButton.LeftButton)
    assert doc.overrides == (JointOverride("*", precision=0.01),)
    # only edits that change a resolved precision or shell distance recompress: adding
    # *Hand*, renaming it to root, 0.5, adding "*" (root back to 0.01); not "ceil", not the
    # removal of a rule that "*" already overrode
    assert counter.count == 4
    assert _saved(qtbot, doc) == doc.overrides
    doc.set_overrides([JointOverride("*IK*", shell_distance=2.0)])  # from elsewhere (a sidecar)
    assert panel.rules.rowCount() == 1 and panel.rules.item(0, 2).text() == "2"


def test_reopening_a_clip_rebuilds_the_tree(qtbot) -> None:
    panel, doc, _ = _panel(qtbot)
    doc.set_clip(doc.clip, None, [JointOverride("Head", precision=0.3)])
    assert len(panel.items) == 5 and panel.items[4].text(C_PREC) == "0.3"
    assert panel.items[4].text(C_ROT) == ""  # no result for the reopened clip yet
    assert panel.rules.rowCount() == 1


def test_lowering_then_raising_a_joints_precision_end_to_end(qtbot, tmp_path: Path) -> None:
    """Real controller, real codec: the heat map and the stats answer a joint's precision."""
    import codec
    from app.controller import Controller
    from app.model.document import Document
    from app.views.bitrates import BitRatePanel
    from app.views.stats import StatsPanel

    path = tmp_path / "cmu_09_02.acl.sjson"  # a copy: edits save a sidecar beside the clip
    path.write_bytes((Path(__file__).parents[2] / "data" / "acl" / path.name).read_bytes())
    doc = Document()
    controller = Controller(doc, debounce_ms=20)
    joints, bitrates, stats = JointsPanel(doc), BitRatePanel(doc), StatsPanel(doc)
    for w in (joints, bitrates, stats):
        qtbot.addWidget(w)
        controller.attach(w)
    joints.show()
    qtbot.waitExposed(joints)
    with qtbot.waitSignal(controller.result_ready, timeout=30_000):
        controller.open_clip(codec.load_clip(path), path)
    head = doc.clip.skeleton.index("head")

    def state() -> tuple[int, int, str]:
        size = doc.result.stats["compressed_size"]
        return bitrates.joint_bits(head), size, stats.values["compressed_size"].text()

    bits0, size0, text0 = state()
    assert f"{size0:,} B" in text0

    editor = joints.edit_cell(head, C_PREC)  # lower it: 0.01 -> 0.0005
    editor.setValue(0.0005)
    with qtbot.waitSignal(controller.result_ready, timeout=30_000):
        qtbot.keyClick(editor, Qt.Key.Key_Return)
    bits1, size1, text1 = state()
    assert bits1 > bits0 and size1 > size0 and f"{size1:,} B" in text1
    assert doc.result.clip.skeleton.precision[head] == 0.0005
    assert "+" in stats.change.text()

    with qtbot.waitSignal(controller.result_ready, timeout=30_000):
        joints.edit_joint(head, "precision", 0.01)  # raise it again
    bits2, size2, text2 = state()
    assert bits2 < bits1 and size2 < size1 and f"{size2:,} B" in text2
    assert joints.items[head].text(C_ERR) == eng(doc.result.error[:, head].max(), 4)
    controller.shutdown()  # what closing the window does: a pending save is written
    assert load_sidecar(path)[1] == (JointOverride("head", precision=0.01),)


def _editor(panel: JointsPanel):
    """The open editor of the rules table's current cell (None when none is open)."""
    return panel.rules.indexWidget(panel.rules.currentIndex())


def test_add_rule_pins_nothing_until_a_pattern_is_typed_and_esc_cancels(
    qtbot, tmp_path: Path
) -> None:
    """Add rule opens an empty row with its pattern being typed: no rule exists (no joint is
    pinned) until a pattern is entered; Esc leaves no rule behind; the new rule's precision is
    typed next, and several rules stay in view."""
    panel, doc, counter = _panel(qtbot, tmp_path)
    panel.show()
    qtbot.waitExposed(panel)
    qtbot.mouseClick(panel.add_button, Qt.MouseButton.LeftButton)
    assert panel.rules.rowCount() == 1 and doc.overrides == () and counter.count == 0
    editor = _editor(panel)
    assert editor is not None and editor.text() == ""
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert panel.rules.rowCount() == 0 and doc.overrides == ()
    # an empty pattern entered is the same as Esc
    qtbot.mouseClick(panel.add_button, Qt.MouseButton.LeftButton)
    qtbot.keyClick(_editor(panel), Qt.Key.Key_Return)  # committed on the next loop turn
    qtbot.waitUntil(lambda: panel.rules.rowCount() == 0)
    assert doc.overrides == () and panel.rule_error.text() == ""
    # a pattern makes it a rule that changes nothing yet; its precision is asked for next
    qtbot.mouseClick(panel.add_button, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(_editor(panel), "*Hand*")
    qtbot.keyClick(_editor(panel), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: doc.overrides == (JointOverride("*Hand*"),))
    assert doc.resolved_joints().precision.tolist() == [0.01] * 5 and counter.count == 0
    assert panel.rules.item(0, 4).text() == "2"
    qtbot.waitUntil(lambda: panel.rules.currentColumn() == 1 and _editor(panel) is not None)
    qtbot.keyClicks(_editor(panel), "0.002")
    qtbot.keyClick(_editor(panel), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: doc.overrides == (JointOverride("*Hand*", precision=0.002),))
    assert counter.count == 1
    # later global edits still move every other joint
    doc.update_settings(precision=0.05)
    assert doc.resolved_joints().precision.tolist() == [0.05, 0.05, 0.002, 0.002, 0.05]
    assert _saved(qtbot, doc) == doc.overrides
    # room for more than one rule
    assert panel.rules.minimumHeight() >= 4 * panel.rules.verticalHeader().defaultSectionSize()


def test_a_new_result_rewrites_only_its_columns_and_sizes_them_to_fit(qtbot) -> None:
    """A result changes the error columns and nothing else; every value column ends as wide
    as its widest cell (sized once, not by Qt re-measuring on every cell written)."""
    panel, doc, _ = _panel(qtbot)
    panel.show()
    qtbot.waitExposed(panel)
    written: list[tuple[int, int]] = []
    panel.tree.itemChanged.connect(lambda item, col: written.append((id(item), col)))
    doc.set_result(make_result(doc.clip, scale=4.0))  # 4x the error, same bits and shells
    columns = {col for _, col in written}
    assert columns and columns <= {C_ERR, C_USED}, columns
    assert len(written) <= 6 * len(panel.items)  # per joint: its texts, brushes and tooltips
    err = doc.result.error[:, 2].max()
    assert panel.items[2].text(C_USED) == format_percent(err / 0.01)
    header = panel.values.header()
    for c in (C_ERR, C_USED, C_PREC, C_SHELL, C_DOM, C_ROT):
        assert header.sectionSize(c) >= panel.values.sizeHintForColumn(c), c
    written.clear()
    doc.set_result(doc.result)  # the same numbers again: nothing to write
    assert written == []


def test_a_joints_edit_rewrites_its_row_and_a_global_edit_every_row(qtbot) -> None:
    """Tuning edits visit only the joints whose values changed: one joint's precision writes
    its own row; a global precision every row that follows it; the same values nothing."""
    panel, doc, _ = _panel(qtbot)
    written: list[tuple[int, int]] = []
    panel.tree.itemChanged.connect(lambda item, col: written.append((id(item), col)))
    rows = {id(item): j for j, item in enumerate(panel.items)}
    panel.edit_joint(2, "precision", 0.002)
    assert {rows[i] for i, _ in written} == {2}
    assert panel.items[2].text(C_PREC) == "0.002" and panel.items[2].font(C_PREC).bold()
    assert panel.items[2].font(C_NAME).bold() and not panel.items[1].font(C_NAME).bold()
    written.clear()
    doc.update_settings(precision=0.05)
    assert {rows[i] for i, _ in written} == {0, 1, 3, 4}  # joint 2 keeps its own 0.002
    assert [item.text(C_PREC) for item in panel.items] == [
        f"{p:.6g}" for p in doc.resolved_joints().precision
    ]
    written.clear()
    doc.set_overrides(doc.overrides)  # the same tuning again
    assert written == []
    panel.reset_selected_joint()  # nothing selected: nothing changes
    doc.set_selection(2)
    panel.reset_selected_joint()
    assert {rows[i] for i, _ in written} == {2}
    assert panel.items[2].text(C_PREC) == "0.05" and not panel.items[2].font(C_PREC).bold()


def test_a_result_with_one_joints_bits_changed_rewrites_that_joints_bit_columns(qtbot) -> None:
    """Each group of result columns is written for the joints whose numbers in it moved: a
    result that changes one joint's bit rates (errors the same) writes that joint's Rot cell
    and nothing else; one that changes every error writes only the error columns."""
    panel, doc, _ = _panel(qtbot)
    written: list[tuple[int, int]] = []
    panel.tree.itemChanged.connect(lambda item, col: written.append((id(item), col)))
    rows = {id(item): j for j, item in enumerate(panel.items)}
    r = make_result(doc.compression_input())
    r.costs.bits_per_component[:, 2, 0] += 1  # LeftHand's rotation only: 11-13 -> 12-14
    doc.set_result(r)
    assert {(rows[i], c) for i, c in written} == {(2, C_ROT)}
    assert panel.items[2].text(C_ROT) == "12–14" and panel.items[3].text(C_ROT) == "9–12"
    written.clear()
    doc.set_result(make_result(doc.compression_input(), scale=2.0))
    assert {c for _, c in written} == {C_ROT, C_ERR, C_USED}  # the hand's bits go back too
    assert {rows[i] for i, c in written if c == C_ROT} == {2}
    assert {rows[i] for i, c in written if c == C_ERR} == set(range(5))


def test_value_columns_fit_their_widest_cell_on_a_real_clip(qtbot) -> None:
    """Columns are sized from the texts written (not by asking Qt for every row's size hint):
    on a real 44-joint result each value column is at least what Qt measures, and a text
    column no more than two pixels wider."""
    import codec
    from codec.compression import Compression

    clip = codec.load_clip(DATA / "acl" / "cmu_13_07.acl.sjson.xz")
    doc = Document()
    panel = JointsPanel(doc)
    qtbot.addWidget(panel)
    panel.resize(500, 600)
    panel.show()
    qtbot.waitExposed(panel)
    doc.set_clip(clip)
    compression = Compression(clip)
    header = panel.values.header()
    for precision in (0.01, 0.0005, 2.0):
        doc.update_settings(precision=precision)
        settings = doc.settings.compression_settings(codec=doc.codec, has_mesh=False)
        skeleton = doc.compression_input().skeleton
        doc.set_result(compression.run(settings, skeleton=skeleton))
        for c in (C_ERR, C_USED, C_PREC, C_SHELL, C_DOM, C_ROT, C_TRANS, C_SCALE, C_ROUND):
            measured = max(panel.values.sizeHintForColumn(c), header.sectionSizeHint(c))
            assert measured <= header.sectionSize(c) <= measured + 2, (precision, c)


def test_rules_say_when_they_match_nothing_which_rule_set_a_value_and_presets(
    qtbot, tmp_path: Path
) -> None:
    """A rule matching no joint is marked and said; `|` alternatives and `!` exclusions
    match; the selected joint says which rule set each value; adding a rule and typing its
    value is one undo step; presets ship (fingers, face, IK) and the user's own are kept."""
    from app.views.joints import PRESETS_KEY

    panel, doc, _ = _panel(qtbot, tmp_path)
    panel.show()
    qtbot.waitExposed(panel)
    panel.add_rule("*Thumb*", precision=0.5)
    assert panel.rules.item(0, 4).text() == "0 \u26a0"
    assert panel.rule_warning.isVisible() and "1 (*Thumb*) matches no joint" in (
        panel.rule_warning.text()
    )
    panel.add_rule("*Hand*|!Left*", precision=0.002)  # the right hand only
    assert panel.rules.item(1, 4).text() == "1"
    assert doc.resolved_joints().precision.tolist() == [0.01, 0.01, 0.01, 0.002, 0.01]
    doc.set_selection(3)
    assert panel.source_label.text() == (
        "RightHand: precision 0.002 (rule 2: *Hand*|!Left*); shell 3 (global); "
        "rounding none (global)"
    )
    panel.edit_joint(3, "precision", 0.004)
    assert "precision 0.004 (its own value, rule 3)" in panel.source_label.text()
    # presets: the shipped ones, and the user's own saved per user (QSettings)
    names = list(panel.presets())
    assert names[:3] == ["Fingers (0.005 cm)", "Face (0.002 cm)", "IK joints (0.001 cm)"]
    panel.save_preset("my hands")
    assert "my hands" in QSettings().value(PRESETS_KEY, "", type=str)
    assert panel.presets()["my hands"] == doc.overrides[:2]
    panel._fill_presets_menu()
    texts = [a.text() for a in panel.presets_menu.actions()]
    assert "my hands" in texts and "Fingers (0.005 cm)" in texts
    before = doc.overrides
    panel.presets_menu.actions()[texts.index("IK joints (0.001 cm)")].trigger()
    assert doc.overrides[len(before) :] == panel.presets()["IK joints (0.001 cm)"]
    panel.delete_preset("my hands")
    assert "my hands" not in panel.presets()


def test_adding_a_rule_and_typing_its_value_is_one_undo_step(qtbot, tmp_path: Path) -> None:
    doc = make_document(path=tmp_path / "walk.bvh")
    panel = JointsPanel(doc)
    qtbot.addWidget(panel)
    controller = attach(doc, panel)
    panel.show()
    qtbot.waitExposed(panel)
    panel.edit_joint(2, "precision", 0.5)  # an earlier edit, its own step
    qtbot.mouseClick(panel.add_button, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(_editor(panel), "*Hand*")
    qtbot.keyClick(_editor(panel), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.rules.currentColumn() == 1 and _editor(panel) is not None)
    qtbot.keyClicks(_editor(panel), "0.002")
    qtbot.keyClick(_editor(panel), Qt.Key.Key_Return)
    want = (JointOverride("LeftHand", precision=0.5), JointOverride("*Hand*", precision=0.002))
    qtbot.waitUntil(lambda: doc.overrides == want)
    assert controller.undo() and doc.overrides == want[:1]  # the rule and its value, gone
    assert controller.redo() and doc.overrides == want
    panel.rules.item(1, 1).setText("0.003")  # a later edit of it is a step of its own
    assert controller.undo() and doc.overrides == want
