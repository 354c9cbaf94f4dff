"""The window's settings flow (issue 30): what the next clip keeps, a value typed but not yet
entered when the window closes, and File > Save compressed."""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtCore import Qt

from app.views.joints import C_PREC
from codec.codecs import container
from codec.sidecar import load_sidecar
from codec.tuning import JointOverride
from tests.app.conftest import ACL_CLIP, DATA, RESULT_TIMEOUT_MS, open_through_ui


def _action(window, text: str):
    return next(a for a in window.findChildren(type(window.undo_action)) if a.text() == text)


def test_each_clip_compresses_with_its_own_settings_and_the_view_says_what_it_kept(
    qtbot, window, dialogs, acl_copy: Path, tmp_path: Path
) -> None:
    """Choosing `subsample` on one clip is that clip's tuning (saved, undoable): the next
    clip compresses with its own codec; how it is looked at stays and the status bar says so."""
    other = tmp_path / "RiggedSimple.glb"
    shutil.copy(DATA / "gltf" / "RiggedSimple.glb", other)
    ctl, doc = window.controller, window.document
    open_through_ui(qtbot, window, dialogs, acl_copy)
    assert not window.kept_label.isVisibleTo(window)
    with qtbot.waitSignal(ctl.result_ready, timeout=RESULT_TIMEOUT_MS):
        window.panels["SettingsPanel"].codec.setCurrentText("subsample")
    assert doc.result.codec_name == "subsample" and ctl.history.undo_label() == "codec"
    doc.set_rounding("floor")
    doc.update_display(magnify=10.0)
    open_through_ui(qtbot, window, dialogs, other)
    assert doc.codec == "acl-style" and doc.result.codec_name == "acl-style"
    assert window.panels["SettingsPanel"].codec.currentText() == "acl-style"
    assert window.kept_label.text() == "rounding floor, error \u00d710 kept from the last clip"
    assert window.kept_label.isVisibleTo(window)
    assert load_sidecar(acl_copy)[0].codec == "subsample"  # saved when the next clip opened
    open_through_ui(qtbot, window, dialogs, acl_copy)  # and it comes back with its clip
    assert doc.codec == "subsample" and doc.result.codec_name == "subsample"


def test_a_value_typed_in_settings_is_applied_when_the_window_closes(
    qtbot, window, dialogs, acl_copy: Path
) -> None:
    open_through_ui(qtbot, window, dialogs, acl_copy)
    spin = window.panels["SettingsPanel"].precision
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin, "0.005")  # no Enter
    assert window.document.settings.precision is None  # typed, not in yet
    window.close()
    assert window.document.settings.precision == 0.005
    assert load_sidecar(acl_copy)[0].precision == 0.005


def test_a_value_typed_in_settings_goes_to_its_own_clip_before_the_next_opens(
    qtbot, window, dialogs, acl_copy: Path, tmp_path: Path
) -> None:
    """Opening another clip (File > Open, a recent file, a drop) with a value typed but not
    entered applies it to the clip it was typed for, never drops it, never moves it on."""
    other = tmp_path / "RiggedSimple.glb"
    shutil.copy(DATA / "gltf" / "RiggedSimple.glb", other)
    open_through_ui(qtbot, window, dialogs, acl_copy)
    spin = window.panels["SettingsPanel"].precision
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin, "0.005")  # no Enter
    open_through_ui(qtbot, window, dialogs, other)
    assert load_sidecar(acl_copy)[0].precision == 0.005
    assert window.document.settings.precision is None  # the next clip: its own


def test_a_rule_that_cannot_be_applied_is_asked_about_before_the_next_clip_opens(
    qtbot, window, dialogs, acl_copy: Path, tmp_path: Path
) -> None:
    other = tmp_path / "RiggedSimple.glb"
    shutil.copy(DATA / "gltf" / "RiggedSimple.glb", other)
    open_through_ui(qtbot, window, dialogs, acl_copy)
    joints = window.panels["JointsPanel"]
    qtbot.mouseClick(joints.add_button, Qt.MouseButton.LeftButton)
    rules = joints.rules
    qtbot.keyClicks(rules.indexWidget(rules.currentIndex()), "*Hand*")
    qtbot.keyClick(rules.indexWidget(rules.currentIndex()), Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: rules.currentColumn() == 1 and rules.indexWidget(rules.currentIndex()) is not None
    )
    qtbot.keyClicks(rules.indexWidget(rules.currentIndex()), "fine")  # not a number, no Enter
    dialogs.discard_answer = False  # "go back and correct it": the clip stays
    assert not window.open_file(other, remember=False)
    assert window.document.path == acl_copy
    assert "precision 'fine' is not a number" in dialogs.discards[0]


def test_a_joint_value_typed_in_its_cell_is_applied_when_the_window_closes(
    qtbot, window, dialogs, acl_copy: Path
) -> None:
    open_through_ui(qtbot, window, dialogs, acl_copy)
    joints = window.panels["JointsPanel"]
    editor = joints.edit_cell(window.document.clip.skeleton.index("head"), C_PREC)
    editor.lineEdit().selectAll()
    qtbot.keyClicks(editor, "0.003")  # no Enter
    window.close()
    assert load_sidecar(acl_copy)[1] == (JointOverride("head", precision=0.003),)


def test_a_rule_that_cannot_be_applied_is_asked_about_before_quitting(
    qtbot, window, dialogs, acl_copy: Path
) -> None:
    open_through_ui(qtbot, window, dialogs, acl_copy)
    joints = window.panels["JointsPanel"]
    qtbot.mouseClick(joints.add_button, Qt.MouseButton.LeftButton)
    rules = joints.rules
    qtbot.keyClicks(rules.indexWidget(rules.currentIndex()), "*Hand*")
    qtbot.keyClick(rules.indexWidget(rules.currentIndex()), Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: rules.currentColumn() == 1 and rules.indexWidget(rules.currentIndex()) is not None
    )
    qtbot.keyClicks(rules.indexWidget(rules.currentIndex()), "fine")  # not a number, no Enter
    dialogs.discard_answer = False  # "go back and correct it"
    assert not window.close()
    assert window.isVisible() and "precision 'fine' is not a number" in dialogs.discards[0]
    dialogs.discard_answer = True
    assert window.close()


def test_file_save_compressed_writes_the_result_with_its_settings(
    qtbot, window, dialogs, acl_copy: Path, tmp_path: Path
) -> None:
    open_through_ui(qtbot, window, dialogs, acl_copy)
    out = tmp_path / "saved.ssc"
    dialogs.paths.append(str(out))
    _action(window, "&Save compressed (.ssc)\u2026").trigger()
    assert dialogs.saves == [str(acl_copy.with_name("cmu_09_02.ssc"))]
    frame = container.read(out.read_bytes())
    doc = window.document
    assert frame.compressed_size == doc.result.stats["compressed_size"]
    assert b'"format":"shellscope-settings"' in frame.settings
    assert doc.status.message == f"Saved saved.ssc ({out.stat().st_size:,} bytes)"
    # never over the clip itself, and only as .ssc: said in a box, nothing written
    for bad in (acl_copy, tmp_path / "saved.bvh"):
        dialogs.paths.append(str(bad))
        _action(window, "&Save compressed (.ssc)\u2026").trigger()
    assert [t for t, _ in dialogs.errors] == ["Cannot save the compressed clip"] * 2
    assert acl_copy.read_bytes() == ACL_CLIP.read_bytes() and not (tmp_path / "saved.bvh").exists()


def test_a_clips_own_per_joint_values_read_per_joint_until_one_is_set(
    qtbot, window, dialogs, tmp_path: Path
) -> None:
    from tests.app.test_one_truth import per_joint_sjson

    clip = tmp_path / "per_joint.acl.sjson"
    per_joint_sjson(ACL_CLIP, clip)
    open_through_ui(qtbot, window, dialogs, clip)
    settings, doc = window.panels["SettingsPanel"], window.document
    assert settings.precision.text() == settings.shell.text() == "per joint"
    assert "from the clip: 0.002\u20130.05 cm" in settings.precision.toolTip()
    assert "each joint's own" in window.panels["ErrorPlotPanel"].legend.text()
    assert sorted(set(doc.result.clip.skeleton.precision)) == [0.002, 0.01, 0.05]
    with qtbot.waitSignal(window.controller.result_ready, timeout=RESULT_TIMEOUT_MS):
        settings.precision.setValue(0.02)  # every joint's now
    assert set(doc.result.clip.skeleton.precision) == {0.02}
    assert settings.precision.text() == "0.02000" and settings.shell.text() == "per joint"
    with qtbot.waitSignal(window.controller.result_ready, timeout=RESULT_TIMEOUT_MS):
        window.reset_tuning_action.trigger()  # the clip's own again
    assert settings.precision.text() == "per joint"
    assert sorted(set(doc.result.clip.skeleton.precision)) == [0.002, 0.01, 0.05]
