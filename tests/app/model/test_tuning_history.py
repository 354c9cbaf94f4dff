"""Undo and redo of the tuning: the Qt-free history, the controller applying it on a real clip
(byte-identical results), the sidecar following the history, and the Edit menu's keys."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6 import QtCore

import codec
from app.controller import Controller
from app.model.document import Document
from app.model.tuning_history import MERGE_SECONDS, Tuning, TuningHistory
from codec.sidecar import load_sidecar, sidecar_path
from codec.tuning import GlobalSettings, JointOverride
from tests.app.conftest import ACL_CLIP, RESULT_TIMEOUT_MS


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def tuning(precision: float = 0.01, *rules: JointOverride) -> Tuning:
    return Tuning(GlobalSettings(precision=precision), tuple(rules))


def test_history_undoes_and_redoes_whole_states_and_a_new_edit_drops_the_redo() -> None:
    clock = Clock()
    h = TuningHistory(tuning(), clock=clock)
    assert not h.can_undo() and h.undo() is None and h.redo() is None
    a, b, c = tuning(0.02), tuning(0.02, JointOverride("*Hand*", 0.001)), tuning(0.5)
    for t, label in ((a, "precision"), (b, "add rule"), (c, "precision")):
        clock.now += 5
        assert h.push(t, label)
    assert not h.push(c, "precision")  # no change, no step
    assert len(h) == 3 and h.undo_label() == "precision"
    assert h.undo() == b and h.undo() == a and h.redo_label() == "add rule"
    assert h.current == a
    assert h.redo() == b and h.current == b
    clock.now += 5
    h.push(tuning(0.3), "precision")  # a new branch: c cannot come back
    assert not h.can_redo() and h.undo() == b and h.undo() == a and h.undo() == tuning()
    assert h.undo() is None


def test_a_drag_of_one_knob_is_one_step_but_a_pause_or_another_knob_is_not() -> None:
    clock = Clock()
    h = TuningHistory(tuning(), clock=clock)
    for p in (0.011, 0.012, 0.013, 0.014):  # a slider drag
        clock.now += 0.05
        h.push(tuning(p), "precision", merge="precision")
    assert len(h) == 1 and h.current == tuning(0.014)
    clock.now += MERGE_SECONDS + 0.1  # a pause: a new step
    h.push(tuning(0.02), "precision", merge="precision")
    h.push(Tuning(GlobalSettings(precision=0.02, level="high")), "level", merge="level")
    assert len(h) == 3
    assert h.undo() == tuning(0.02) and h.undo() == tuning(0.014) and h.undo() == tuning()
    h.redo()
    clock.now += 0.05  # a redone step never swallows the next edit
    h.push(tuning(0.015), "precision", merge="precision")
    assert len(h) == 2
    clock.now += 0.05  # dragged back to where the step started: no step at all
    h.push(tuning(0.014), "precision", merge="precision")
    assert len(h) == 1


def test_a_long_drag_is_one_step_the_window_counting_from_its_last_edit() -> None:
    """A 3 s drag with an edit every 0.5 s (each within MERGE_SECONDS of the one before,
    though most are further from the first): one step, and one undo goes back before it."""
    clock = Clock()
    h = TuningHistory(tuning(), clock=clock)
    assert 0.5 < MERGE_SECONDS < 3.0
    for i in range(1, 8):  # t = 0, 0.5, ... 3.0 s
        h.push(tuning(0.01 + 0.001 * i), "precision", merge="precision")
        clock.now += 0.5
    assert len(h) == 1 and h.current == tuning(0.017)
    assert h.undo() == tuning() and h.undo() is None
    assert h.redo() == tuning(0.017)


def test_a_held_slider_is_one_step_however_long_it_pauses_and_the_next_drag_its_own() -> None:
    clock = Clock()
    h = TuningHistory(tuning(), clock=clock)
    h.push(tuning(0.02), "precision", merge="precision")  # typed in the spin box
    clock.now += 0.2
    h.hold("precision")  # the slider pressed: a step of its own
    for p in (0.03, 0.04):
        h.push(tuning(p), "precision", merge="precision")
        clock.now += 2 * MERGE_SECONDS  # held still, longer than the window
    h.seal()  # released
    clock.now += 0.1
    h.push(tuning(0.05), "precision", merge="precision")  # the next drag, at once
    assert len(h) == 3
    assert h.undo() == tuning(0.04) and h.undo() == tuning(0.02) and h.undo() == tuning()


def test_the_oldest_steps_are_forgotten_past_the_limit() -> None:
    h = TuningHistory(tuning(), limit=3)
    for p in (0.02, 0.03, 0.04, 0.05):
        h.push(tuning(p), "precision")
    assert len(h) == 3
    while h.undo() is not None:
        pass
    assert h.current == tuning(0.02)


def _settle(qtbot, ctl: Controller, doc: Document) -> bytes:
    """The .ssc bytes once the newest tuning is compressed."""

    def done() -> bool:
        r = doc.result
        inp = doc.compression_input()
        return (
            not ctl.running
            and not ctl._pending
            and r is not None
            and inp is not None
            and (r.clip.skeleton.precision == inp.skeleton.precision).all()
            and (r.clip.skeleton.shell_distance == inp.skeleton.shell_distance).all()
            and r.settings.level == ctl.settings().level
        )

    qtbot.waitUntil(done, timeout=RESULT_TIMEOUT_MS)
    assert doc.result is not None
    return doc.result.data


class Intents(QtCore.QObject):
    settings_edited = QtCore.Signal(object)
    overrides_edited = QtCore.Signal(object)


def test_ten_mixed_edits_undone_and_redone_give_byte_identical_results(
    qtbot, tmp_path: Path
) -> None:
    """Global settings, per-joint values, rules added, edited and removed, and a reset: every
    state the history steps back and forth through compresses to the very bytes it had."""
    path = tmp_path / ACL_CLIP.name
    shutil.copy(ACL_CLIP, path)
    doc = Document()
    ctl = Controller(doc, debounce_ms=10)
    view = Intents()
    ctl.attach(view)
    ctl.open_clip(codec.load_clip(path), path, settings=GlobalSettings(precision=0.03))
    names = doc.clip.skeleton.names
    hand = next(n for n in names if "hand" in n.lower())
    states = [(Tuning(doc.settings, doc.overrides), _settle(qtbot, ctl, doc))]

    def rules(*extra: JointOverride) -> tuple[JointOverride, ...]:
        return (*doc.overrides, *extra)

    edits = [
        lambda: view.settings_edited.emit({"precision": 0.05}),
        lambda: view.overrides_edited.emit(rules(JointOverride("*Hand*", precision=0.002))),
        lambda: view.settings_edited.emit({"shell_distance": 6.0}),
        lambda: view.overrides_edited.emit(rules(JointOverride(hand, shell_distance=1.5))),
        lambda: view.settings_edited.emit({"level": "high"}),
        lambda: view.overrides_edited.emit(
            (JointOverride("*Hand*", precision=0.02), *doc.overrides[1:])  # edit a rule
        ),
        lambda: view.settings_edited.emit({"precision": 0.003}),
        lambda: view.overrides_edited.emit(doc.overrides[1:]),  # remove a rule
        ctl.reset_tuning,
        lambda: view.settings_edited.emit({"precision": 0.2}),
    ]
    for edit in edits:
        edit()
        states.append((Tuning(doc.settings, doc.overrides), _settle(qtbot, ctl, doc)))
    assert len(ctl.history) == 10
    assert len({t for t, _ in states}) == 11  # every edit changed the tuning
    assert len({b for _, b in states}) >= 8  # and most changed the bytes

    for want, data in reversed(states[:-1]):
        assert ctl.undo()
        assert Tuning(doc.settings, doc.overrides) == want
        assert _settle(qtbot, ctl, doc) == data
    assert not ctl.undo()
    for want, data in states[1:]:
        assert ctl.redo()
        assert Tuning(doc.settings, doc.overrides) == want
        assert _settle(qtbot, ctl, doc) == data
    assert not ctl.redo()

    # the sidecar holds the history's state; reopening restores it with a new history
    ctl.undo()
    ctl.save_tuning()
    assert load_sidecar(path) == (states[-2][0].settings, states[-2][0].overrides)
    saved, saved_rules = load_sidecar(path)
    ctl.open_clip(codec.load_clip(path), path, saved_rules, saved)
    assert Tuning(doc.settings, doc.overrides) == states[-2][0]
    assert not ctl.history.can_undo() and not ctl.history.can_redo()
    ctl.shutdown()


def test_edit_menu_undoes_and_redoes_with_its_keys(qtbot, window, tmp_path: Path) -> None:
    from PySide6.QtTest import QTest

    path = tmp_path / ACL_CLIP.name
    shutil.copy(ACL_CLIP, path)
    assert window.open_file(path)
    doc = window.document
    start = doc.settings.precision
    assert not window.undo_action.isEnabled()
    settings_panel = window.panels["SettingsPanel"]
    settings_panel.precision.setValue(0.25)
    assert doc.settings.precision == 0.25
    assert window.undo_action.isEnabled() and "precision" in window.undo_action.text()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)
    window.viewport.setFocus()
    key = QtCore.Qt.Key
    ctrl = QtCore.Qt.KeyboardModifier.ControlModifier
    shift = QtCore.Qt.KeyboardModifier.ShiftModifier
    QTest.keyClick(window.focusWidget() or window, key.Key_Z, ctrl)
    assert doc.settings.precision == start and settings_panel.precision.value() == (
        doc.global_precision()
    )
    QTest.keyClick(window.focusWidget() or window, key.Key_Z, ctrl | shift)
    assert doc.settings.precision == 0.25
    QTest.keyClick(window.focusWidget() or window, key.Key_Z, ctrl)
    QTest.keyClick(window.focusWidget() or window, key.Key_Y, ctrl)
    assert doc.settings.precision == 0.25
    window.reset_tuning_action.trigger()
    assert doc.settings == GlobalSettings() and doc.overrides == ()
    window.controller.save_tuning()
    assert load_sidecar(path) == (GlobalSettings(), ())
    window.undo_action.trigger()
    window.controller.save_tuning()
    assert load_sidecar(path)[0].precision == 0.25
    assert sidecar_path(path).exists()


@pytest.mark.parametrize("field", ["precision", "shell_distance"])
def test_set_tuning_tells_the_views_once(field: str) -> None:
    doc = Document()
    doc.set_clip(codec.load_clip(ACL_CLIP))
    calls: list[str] = []
    doc.settings_changed.connect(lambda: calls.append("settings"))
    doc.rounding_changed.connect(lambda: calls.append("rounding"))
    rule = JointOverride("*", **{field: 0.5})
    doc.set_tuning(GlobalSettings(precision=0.02), (rule,))
    assert calls == ["settings", "rounding"]
    calls.clear()
    doc.set_tuning(GlobalSettings(precision=0.02), (rule,))
    assert calls == []


def test_undo_names_what_it_undoes() -> None:
    from app.controller import _rules_label

    names = ("root", "LeftHand", "weird*name")
    hand = JointOverride("*Hand*", precision=0.002)
    own = JointOverride("LeftHand", precision=0.001)
    assert _rules_label((), (hand,), names) == "add rule *Hand*"
    assert _rules_label((hand,), (), names) == "remove rule *Hand*"
    assert _rules_label((hand,), (JointOverride("*Hand*", 0.5),), names) == "edit rule *Hand*"
    assert _rules_label((hand,), (hand, own), names) == "edit joint LeftHand"
    assert _rules_label((hand, own), (hand,), names) == "reset joint LeftHand"
    odd = JointOverride("weird[*]name", shell_distance=2.0)
    assert _rules_label((), (odd,), names) == "edit joint weird*name"


def test_a_drag_of_the_precision_slider_is_one_undo_step(qtbot, loaded) -> None:
    """Pressed, moved with a pause longer than the merge window, released: one step; a
    second drag right after it is another."""
    clock = Clock()
    ctl, slider = loaded.controller, loaded.panels["SettingsPanel"].slider
    ctl.history._clock = clock
    start = loaded.document.settings.precision
    for values in ((slider.value() + 5, slider.value() + 10), (slider.value() + 20,)):
        slider.setSliderDown(True)  # as a mouse press on the handle does
        for v in values:
            slider.setValue(v)
            clock.now += 3 * MERGE_SECONDS
        slider.setSliderDown(False)
        clock.now += 0.1
    assert len(ctl.history) == 2
    assert ctl.undo() and ctl.undo() and loaded.document.settings.precision == start
