"""The window: opening clips every way, failures keep the clip, recent files, closing."""

from __future__ import annotations

import json
import re
import shutil
import time

import pytest
from PySide6 import QtCore, QtGui, QtWidgets

import codec


def test_opening_through_file_open_compresses_in_the_background(window, ui, dialogs) -> None:
    ui.open(window, ui.acl_clip)
    doc = window.document
    assert doc.clip.num_joints == 44 and doc.path == ui.acl_clip
    assert doc.result is not None and doc.result.clip.num_joints == 44
    assert "cmu_09_02" in window.windowTitle()
    # the codec's encode and the whole run, each in a unit that shows it ("in 0.00 s" once)
    size = f"{doc.result.stats['compressed_size']:,}"
    status = window.status_label.text()
    assert re.fullmatch(
        rf"Compressed: {size} bytes \(encode [\d.]+ m?s, whole run [\d.]+ m?s\)", status
    ), status
    assert not window.progress_bar.isVisible() and not window.cancel_button.isVisible()
    assert dialogs.errors == []


def test_a_broken_file_shows_the_readers_message_and_keeps_the_clip(
    loaded, dialogs, tmp_path, ui
) -> None:
    doc = loaded.document
    clip, result = doc.clip, doc.result
    bad = tmp_path / "broken.bvh"
    bad.write_text("HIERARCHY\nROOT hip\n{\n  OFFSET 0 0\n")
    dialogs.paths.append(str(bad))
    assert not loaded.open_file()
    assert len(dialogs.errors) == 1
    title, message = dialogs.errors[0]
    assert "broken.bvh" in message
    try:
        codec.load_clip(bad)
    except codec.ClipFormatError as exc:
        assert str(exc) == message  # the reader's own words
    assert doc.clip is clip and doc.result is result
    ui.draw(loaded.viewport)
    assert loaded.viewport.lossy_positions is not None


def test_cancelling_the_file_dialog_changes_nothing(loaded, dialogs) -> None:
    clip = loaded.document.clip
    assert not loaded.open_file()  # no canned path: the dialog was cancelled
    assert loaded.document.clip is clip and dialogs.errors == []


def test_gltf_with_several_animations_asks_which_one(window, ui, dialogs) -> None:
    dialogs.animation = "Walk"
    ui.open(window, ui.data / "gltf" / "Fox.glb")
    assert dialogs.animation_choices == [["Survey", "Walk", "Run"]]
    assert (
        window.document.clip.num_samples
        == codec.load_clip(ui.data / "gltf" / "Fox.glb", animation="Walk").num_samples
    )
    dialogs.animation = None  # the user backs out of the chooser
    clip = window.document.clip
    dialogs.paths.append(str(ui.data / "gltf" / "Fox.glb"))
    assert not window.open_file()
    assert window.document.clip is clip


def test_recent_files_remember_and_reopen(window, ui, tmp_path, qtbot) -> None:
    other = tmp_path / "two.acl.sjson"
    shutil.copy(ui.data / "acl" / "cmu_81_16_two_samples.acl.sjson", other)
    ui.open(window, ui.acl_clip)
    ui.open(window, other)
    assert window.recent_files()[:2] == [str(other.resolve()), str(ui.acl_clip.resolve())]
    actions = window.recent_menu.actions()
    assert [a.text() for a in actions[:2]] == ["two.acl.sjson", "cmu_09_02.acl.sjson"]
    with qtbot.waitSignal(window.controller.result_ready, timeout=60_000):
        actions[1].trigger()
    assert window.document.path == ui.acl_clip.resolve()


def test_dropping_a_file_opens_it(window, ui, qtbot) -> None:
    mime = QtCore.QMimeData()
    mime.setUrls([QtCore.QUrl.fromLocalFile(str(ui.acl_clip))])
    pos = QtCore.QPointF(window.rect().center())
    enter = QtGui.QDragEnterEvent(
        pos.toPoint(),
        QtCore.Qt.DropAction.CopyAction,
        mime,
        QtCore.Qt.MouseButton.LeftButton,
        QtCore.Qt.KeyboardModifier.NoModifier,
    )
    window.dragEnterEvent(enter)
    assert enter.isAccepted()
    drop = QtGui.QDropEvent(
        pos,
        QtCore.Qt.DropAction.CopyAction,
        mime,
        QtCore.Qt.MouseButton.LeftButton,
        QtCore.Qt.KeyboardModifier.NoModifier,
    )
    with qtbot.waitSignal(window.controller.result_ready, timeout=60_000):
        window.dropEvent(drop)
    assert window.document.path == ui.acl_clip


def test_progress_shows_with_a_cancel_button_while_compressing(window, ui, qtbot) -> None:
    ui.open(window, ui.data / "bvh" / "cmu_02_03_run_ccrig.bvh")
    window.document.update_settings(precision=0.02)
    qtbot.waitUntil(lambda: window.controller.running, timeout=3000)
    assert window.progress_bar.isVisible() and window.cancel_button.isVisible()
    assert window.cancel_action.isEnabled()  # Compression > Cancel (Esc) while a run is on
    qtbot.mouseClick(window.cancel_button, QtCore.Qt.MouseButton.LeftButton)
    assert not window.controller.running
    assert not window.cancel_button.isVisible()
    assert not window.cancel_action.isEnabled()
    assert window.document.result.clip.skeleton.precision[0] == 0.01  # the old one stays
    # what the X server shows where the bar and Cancel were is the bar without them: hidden
    # with updates off, their pixels used to stay on screen after every run
    group = window.progress_bar.parentWidget()
    box = QtCore.QRect(group.mapTo(window, QtCore.QPoint(0, 0)), group.size())
    drawn = group.grab().toImage().convertToFormat(QtGui.QImage.Format.Format_RGB32)

    def on_screen() -> QtGui.QImage:
        shot = window.screen().grabWindow(window.winId()).copy(box).toImage()
        return shot.convertToFormat(QtGui.QImage.Format.Format_RGB32)

    qtbot.waitUntil(lambda: on_screen() == drawn, timeout=3000)


def test_closing_while_compressing_is_quick(window, ui, qtbot) -> None:
    window.open_file(ui.data / "bvh" / "cmu_02_03_run_ccrig.bvh")
    qtbot.waitUntil(lambda: window.controller.running, timeout=3000)
    # inside the codec: it has said how far it is
    qtbot.waitUntil(lambda: window.document.status.progress > 0, timeout=30_000)
    t0 = time.monotonic()
    window.close()
    assert time.monotonic() - t0 < 2.0


def test_every_panel_is_docked(window) -> None:
    from app.main_window import PANELS

    assert len(window.docks) == len(PANELS)
    for _, cls, title, _ in PANELS:
        assert window.docks[cls].windowTitle() == title


@pytest.mark.parametrize("mode", ["none", "all"])
def test_view_menu_shells(window, mode) -> None:
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    shells = next(a.menu() for a in menu.actions() if a.text() == "&Shells")
    next(a for a in shells.actions() if a.text().lower() == mode).trigger()
    assert window.document.display.shells == mode
    assert window.viewport.shells_mode.currentText() == mode


def test_reopening_a_clip_applies_its_sidecar_and_the_command_line_wins(
    qtbot, window, ui, tmp_path, dialogs
) -> None:
    from codec.sidecar import save_sidecar
    from codec.tuning import GlobalSettings, JointOverride

    clip = tmp_path / "tuned.acl.sjson"
    shutil.copy(ui.acl_clip, clip)
    rules = (JointOverride("*Hand*", precision=0.002), JointOverride("head", rounding="floor"))
    save_sidecar(clip, GlobalSettings(precision=0.02, level="medium"), rules)
    ui.open(window, clip)
    doc = window.document
    assert doc.settings.precision == 0.02 and doc.overrides == rules
    hand = doc.clip.skeleton.index("rHand")
    assert doc.result.clip.skeleton.precision[hand] == 0.002  # the codec saw the rule
    assert doc.per_track_rounding()[doc.clip.skeleton.index("head")] == "floor"
    # the command line's values replace the sidecar's for that open
    dialogs.paths.append(str(clip))
    with qtbot.waitSignal(window.controller.result_ready, timeout=60_000):
        assert window.open_file(tuning={"precision": 0.05}, overrides=())
    assert doc.settings.precision == 0.05 and doc.settings.level == "medium"
    assert doc.overrides == () and doc.result.clip.skeleton.precision[hand] == 0.05
    # a broken sidecar is reported and the clip still opens, untuned
    (tmp_path / "tuned.acl.sjson.shellscope.json").write_text("{ not json")
    dialogs.paths.append(str(clip))
    with qtbot.waitSignal(window.controller.result_ready, timeout=60_000):
        assert window.open_file()
    assert "tuned.acl.sjson.shellscope.json" in dialogs.errors[-1][1]
    assert doc.settings == GlobalSettings() and doc.overrides == ()


def test_view_menu_toggles_flip_what_is_drawn(window) -> None:
    actions = {a.text(): a for a in window.actions()}
    for text, shown in (
        ("Toggle &raw skeleton", "show_raw"),
        ("Toggle &lossy skeleton", "show_lossy"),
        ("Toggle raw s&kin", "show_raw_skin"),
        ("Toggle lossy sk&in", "show_lossy_skin"),
    ):
        before = getattr(window.document.display, shown)
        actions[text].trigger()
        assert getattr(window.document.display, shown) is (not before)
        actions[text].trigger()
        assert getattr(window.document.display, shown) is before


def test_warnings_sit_beside_the_status_and_belong_to_the_clip_they_are_about(
    qtbot, window, dialogs, ui, tmp_path
) -> None:
    """A failed open and a clip's warnings are listed (all of them) beside "Compressed: ...",
    never drawn over it, and go when another clip opens."""
    broken = tmp_path / "broken.glb"
    broken.write_bytes(b"glTF\x02\x00\x00\x00garbage")
    ui.open(window, ui.data / "acl" / "cmu_09_02.acl.sjson")
    compressed = window.status_label.text()
    assert compressed.startswith("Compressed")
    assert not window.open_file(broken)
    assert [n.split(":")[0] for n in window.notices] == ["Could not open broken.glb"]
    assert window.notice_button.isVisible() and "1 warning" in window.notice_button.text()
    assert window.statusBar().currentMessage() == ""  # nothing hides the status label
    assert window.status_label.isVisible() and window.status_label.text() == compressed
    # a clip with several warnings shows every one of them
    many = tmp_path / "many.bvh"
    text = (ui.data / "bvh" / "makehuman_tpose.bvh").read_text()
    head, _, motion = text.partition("MOTION")
    lines = motion.strip().splitlines()
    frames = [ln for ln in lines[2:] if ln.strip()]
    many.write_text(f"{head}MOTION\nFrames: {len(frames) + 3}\n{lines[1]}\n" + "\n".join(frames))
    clip_warnings = list(window.controller.load(many).warnings)
    assert clip_warnings
    ui.open(window, many)
    named = [w if w.startswith("many.bvh") else f"many.bvh: {w}" for w in clip_warnings]
    assert window.notices == named  # broken.glb is gone; the file is named once
    assert not any(n.startswith("many.bvh: many.bvh") for n in window.notices)
    assert not window.open_file(broken)  # a second warning joins the first, both kept
    assert len(window.notices) == len(clip_warnings) + 1
    assert f"{len(window.notices)} warnings" in window.notice_button.text()
    menu = [a.text() for a in window.notice_button.menu().actions() if a.text()]
    assert menu[: len(window.notices)] == window.notices
    assert window.notice_button.toolTip().splitlines() == window.notices
    first = window.notice_button.menu().actions()[0]
    assert first.isEnabled()  # readable, and a click copies it
    first.trigger()
    assert QtWidgets.QApplication.clipboard().text() == window.notices[0]
    # a clean clip: no warnings at all
    ui.open(window, ui.data / "acl" / "cmu_09_02.acl.sjson")
    assert window.notices == [] and not window.notice_button.isVisible()


def test_tuning_is_kept_per_animation_of_a_file(qtbot, window, tmp_path) -> None:
    """Fox Walk's tuning is not applied to Survey; each animation gets its own back."""
    import shutil

    from codec.tuning import GlobalSettings
    from tests.app.conftest import DATA

    fox = tmp_path / "Fox.glb"
    shutil.copy(DATA / "gltf" / "Fox.glb", fox)
    ctl, doc = window.controller, window.document
    with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
        assert window.open_file(fox, animation="Walk")
    window.panels["SettingsPanel"].precision.setValue(0.004)
    assert doc.settings.precision == 0.004
    with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
        assert window.open_file(fox, animation="Survey")  # saves Walk's edit first
    assert doc.clip.name == "Survey" and doc.settings == GlobalSettings()
    window.panels["SettingsPanel"].level.setCurrentText("low")
    with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
        assert window.open_file(fox, animation="Walk")
    assert doc.settings == GlobalSettings(precision=0.004)
    assert not window.undo_action.isEnabled()  # reopening is a new undo history
    with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
        assert window.open_file(fox, animation="Survey")
    assert doc.settings == GlobalSettings(level="low")


def test_a_failed_run_is_a_warning_until_a_run_succeeds(qtbot, dialogs, tmp_path) -> None:
    import shutil

    import codec
    from app.controller import Controller
    from app.main_window import MainWindow
    from app.model.document import Document
    from tests.app.conftest import ACL_CLIP

    def compress(clip, settings, progress, cancel):
        if clip.skeleton.precision[0] == 0.5:
            raise RuntimeError("out of bits")
        return codec.compress(clip, settings, progress=progress, cancel=cancel)

    doc = Document()
    window = MainWindow(doc, Controller(doc, compress=compress), dialogs, remember_layout=False)
    qtbot.addWidget(window)
    window.show()
    ctl = window.controller
    clip = tmp_path / ACL_CLIP.name  # edits save a sidecar beside it
    shutil.copy(ACL_CLIP, clip)
    with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
        window.open_file(clip, remember=False)
    with qtbot.waitSignal(ctl.failed, timeout=60_000):
        ctl.edit_settings({"precision": 0.5})
    assert window.notices == ["Compression failed: RuntimeError: out of bits"]
    assert "out of bits" in window.status_label.text()
    with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
        ctl.undo()
    assert window.notices == [] and window.status_label.text().startswith("Compressed")
    window.close()


def test_the_animation_switcher_opens_another_animation_in_place(
    window, ui, dialogs, qtbot, tmp_path
) -> None:
    fox = tmp_path / "Fox.glb"
    shutil.copy(ui.data / "gltf" / "Fox.glb", fox)
    dialogs.animation = "Walk"
    ui.open(window, fox)
    bar = window.animation_bar
    assert bar.isVisible() and bar.names == ["Survey", "Walk", "Run"]
    assert bar.box.currentText() == "Walk" and "Fox.glb \u00b7 Walk" in window.windowTitle()
    window.controller.edit_settings({"precision": 0.02})  # Walk's own tuning
    with qtbot.waitSignal(window.controller.result_ready, timeout=60_000):
        bar.box.setCurrentText("Run")  # the toolbar's combo: Run opens in place
    doc = window.document
    assert doc.clip.name == "Run" and doc.path == fox and "\u00b7 Run" in window.windowTitle()
    assert doc.settings.precision != 0.02  # Run has a tuning of its own
    menu = [a for a in bar.menu.actions() if a.isChecked()]
    assert [a.text() for a in menu] == ["Run"]
    recent = window.recent_menu.actions()[0]
    assert recent.text() == "Fox.glb \u00b7 Run"
    window.controller.edit_settings({"precision": 0.03})
    bar.apply_all_action.trigger()  # Run's tuning becomes every animation's
    saved = json.loads((tmp_path / "Fox.glb.shellscope.json").read_text())
    assert {k: v["settings"]["precision"] for k, v in saved["animations"].items()} == {
        "Survey": 0.03,
        "Walk": 0.03,
        "Run": 0.03,
    }
    assert "all 3 animations" in window.status_label.text()
    with qtbot.waitSignal(window.controller.result_ready, timeout=60_000):
        next(a for a in bar.menu.actions() if a.text() == "Walk").trigger()
    assert doc.clip.name == "Walk" and doc.settings.precision == 0.03
    with qtbot.waitSignal(window.controller.result_ready, timeout=60_000):
        window.recent_menu.actions()[0].trigger()  # Open Recent: the animation it had
    assert doc.clip.name == "Walk" and dialogs.animation_choices == [["Survey", "Walk", "Run"]]
    ui.open(window, ui.acl_clip)  # a file of one clip: no switcher
    assert not bar.isVisible() and not bar.menu.isEnabled()
