"""A result is handled and drawn in separate event-loop turns, so that the UI thread serves
input and timers between them (handling a result costs 10-20 ms, a frame of the window's
widgets a few ms, of the 3D view's own GL window 5-10 ms on software GL); the frame is only
put off, never lost. A widget change never redraws the 3D view. The Joints panel's result
tooltips are written when hovered, from the numbers on show."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QDockWidget, QToolTip

from app.model.error_scale import eng, format_budget
from app.views.joints import C_DOM, C_ERR, C_PREC, C_USED, JointsPanel
from tests.app.panel_helpers import attach, make_document, make_result


class WidgetFrames(QObject):
    """Counts the frames of the window's widgets: the UpdateRequests the window paints (one
    it puts off a turn, after a result or after the 3D view's frame of this turn, is counted
    when it comes again). Installed after the window's own
    filter, so it sees each one first."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.seen: list[str] | None = None
        self.count = 0
        window.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        put_off = self.window._frame_waits or self.window.frame_turns.taken()
        if event.type() == QEvent.Type.UpdateRequest and not put_off:
            self.count += 1
            if self.seen is not None and "result" in self.seen:
                self.seen.append("widgets")
        return False


class GlCauses(QObject):
    """What asked for each frame of the 3D view's GL window: our code (an UpdateRequest it
    posted, drawn in this turn) or the window system (an Expose or a Resize: a tooltip or
    another window unmapped over the view, which a loaded machine does at any moment)."""

    def __init__(self, scene) -> None:
        super().__init__(scene)
        self.scene = scene
        self.cause = "system"
        scene.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        kind = event.type()
        turns = self.scene.turns
        if kind == QEvent.Type.UpdateRequest and not (turns is not None and turns.taken()):
            self.cause = "gl"
        elif kind in (QEvent.Type.Expose, QEvent.Type.Resize):
            self.cause = f"gl ({kind.name})"
        return False

    def take(self) -> str:
        cause, self.cause = self.cause, "system"
        return cause


def _edit_and_watch(qtbot, window, precision: float) -> list[str]:
    """Edit the global precision as the Settings panel does; what happens from the moment
    the new result is handled until it is drawn in the widgets and in the 3D view, in order."""
    doc, vp = window.document, window.viewport
    seen: list[str] = []
    frames = WidgetFrames(window)
    frames.seen = seen
    causes = GlCauses(vp.scene)

    def on_result() -> None:
        seen.append("result")
        QTimer.singleShot(0, lambda: seen.append("timer"))  # due while the result is handled

    def on_frame() -> None:
        cause = causes.take()
        if "result" in seen:
            seen.append(cause)

    doc.result_changed.connect(on_result)
    vp.frame_drawn.connect(on_frame)
    try:
        window.panels["SettingsPanel"].precision.setValue(precision)
        qtbot.waitUntil(lambda: "gl" in seen and "widgets" in seen, timeout=60_000)
    finally:
        doc.result_changed.disconnect(on_result)
        vp.frame_drawn.disconnect(on_frame)
        window.removeEventFilter(frames)
        vp.scene.removeEventFilter(causes)
    return seen


@pytest.fixture
def opened(window, ui):
    """The window with a copy of the ACL test clip open (edits save a sidecar beside it)."""
    ui.open(window, ui.acl_clip)
    ui.draw(window.viewport)
    return window


def test_a_timer_due_when_a_result_is_handled_runs_before_its_frame(qtbot, opened) -> None:
    loaded = opened
    for precision in (0.02, 0.005, 0.013):
        seen = _edit_and_watch(qtbot, loaded, precision)
        assert seen.index("timer") < seen.index("widgets"), seen
        assert seen.count("gl") == 1, seen  # the 3D view drew the result in one frame
        # the frame drew the result now in the document: nothing left to draw
        assert not loaded.viewport._dirty
        assert loaded.document.result.clip.skeleton.precision[0] == precision


def test_a_frame_put_off_once_is_drawn_and_later_frames_are_not_put_off(qtbot, opened) -> None:
    window = opened
    _edit_and_watch(qtbot, window, 0.02)
    assert not window._frame_waits  # the flag went with the frame it held back
    # a time change alone (a scrub) is drawn without waiting for a turn
    frames = WidgetFrames(window)
    drawn = window.viewport.frames
    window.document.set_time(window.document.clip.duration / 3)
    qtbot.waitUntil(lambda: frames.count and window.viewport.frames > drawn, timeout=10_000)
    assert not window._frame_waits


def _tip(panel: JointsPanel, joint: int, column: int) -> str:
    """The tooltip the values view shows when the mouse rests on a cell."""
    QToolTip.hideText()
    view = panel.values
    index = panel.tree.indexFromItem(panel.items[joint], column)
    pos = view.visualRect(index).center()
    event = QHelpEvent(QEvent.Type.ToolTip, pos, view.viewport().mapToGlobal(pos))
    QApplication.sendEvent(view.viewport(), event)
    return QToolTip.text()


def test_result_tooltips_say_the_numbers_of_the_latest_result(qtbot) -> None:
    doc = make_document()
    panel = JointsPanel(doc)
    qtbot.addWidget(panel)
    attach(doc, panel)
    panel.resize(900, 400)
    panel.show()
    qtbot.waitExposed(panel)
    for scale in (1.0, 4.0, 0.25):  # several results: each tooltip reads the newest
        doc.set_result(make_result(doc.compression_input(), scale=scale))
        error = doc.result.error
        for j in range(len(panel.items)):
            err = float(error[:, j].max())
            budget = float(doc.result.clip.skeleton.precision[j])
            said = f"{eng(err)} cm of a {format_budget(budget)} budget"
            over = ": over budget" if err > budget else ""
            assert _tip(panel, j, C_ERR) == said + over, (scale, j)
            assert _tip(panel, j, C_USED) == said, (scale, j)
            shells = doc.result.costs.dominant_shells
            assert _tip(panel, j, C_DOM) == (
                f"dominant shell {eng(shells.distance[j], 6)} cm, "
                f"its precision {eng(shells.precision[j], 6)} cm"
            )
    # at scale 4 the hand was over budget; at 0.25 it is not, and its tooltip says so
    assert not _tip(panel, 2, C_ERR).endswith("over budget")
    doc.set_result(make_result(doc.compression_input(), scale=4.0))
    assert _tip(panel, 2, C_ERR).endswith(": over budget")
    # a tuning column keeps Qt's own tooltip (none): the panel writes no result text there
    assert panel.result_tip(2, C_PREC) == ""
    doc.set_result(None)
    assert panel.result_tip(2, C_ERR) == "" and panel.result_tip(2, C_DOM) == ""


def test_the_window_handles_its_own_events_without_a_python_event_override(qtbot, window) -> None:
    """Qt calls a Python `event` override for every event of the window, the frames it paints
    too, holding the GIL: a compression beside it then waits for each whole frame. The
    window's own events go through its event filter; what they did stays done: a frame asked
    for is drawn, and every dock takes the window's instant-layout style."""
    from app.main_window import MainWindow

    assert "event" not in MainWindow.__dict__
    for dock in window.docks.values():
        assert dock.style() is window._instant
    later = QDockWidget("later", window)  # polished after the window is on screen
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, later)
    qtbot.waitUntil(lambda: later.style() is window._instant, timeout=5_000)
    # the menu and status bars, never animated, ask no style hint of Python
    assert window.menuBar().style() is not window._instant
    assert window.statusBar().style() is not window._instant
    frames = WidgetFrames(window)
    window.status_label.setText("a frame, please")
    qtbot.waitUntil(lambda: frames.count > 0, timeout=10_000)


def opening_drawn(qtbot, window) -> None:
    """Wait until whatever the opening asked for is drawn: the window puts no frame off and
    300 ms pass without a 3D frame (a loaded machine draws the opening's last frames late;
    a fixed wait was too short there)."""
    vp, gl_frames = window.viewport, []

    def on_frame() -> None:
        gl_frames.append(1)

    vp.frame_drawn.connect(on_frame)
    try:
        seen, quiet = 0, 0
        for _ in range(200):
            qtbot.wait(50)
            idle = len(gl_frames) == seen and not window._frame_waits and not vp._dirty
            seen, quiet = len(gl_frames), (quiet + 1 if idle else 0)
            if quiet >= 6:
                return
        raise AssertionError("the 3D view kept drawing after the clip was opened")
    finally:
        vp.frame_drawn.disconnect(on_frame)


def test_a_widget_change_does_not_redraw_the_3d_view(qtbot, opened) -> None:
    """The 3D view is a GL window of its own: the window's widgets paint without it (in a
    window holding a QOpenGLWidget every widget change composed the whole window in GL)."""
    window, vp = opened, opened.viewport
    opening_drawn(qtbot, window)
    frames, causes, gl_frames = WidgetFrames(window), GlCauses(vp.scene), []
    vp.frame_drawn.connect(lambda: gl_frames.append(causes.take()))
    for i in range(5):
        before = frames.count
        window.status_label.setText(f"a status text, {i}")
        qtbot.waitUntil(lambda b=before: frames.count > b, timeout=10_000)
    qtbot.wait(100)  # watching for a 3D frame asked for by our code: none comes
    # none from an update our code asked for, none from the view being resized by the widgets'
    # layout; the window system's own (an Expose, or a frame no event of ours led to)
    # are not the widgets' doing: a loaded machine re-exposes the GL window at times (CI saw
    # one 3D frame here in 1 of its runs, a fresh clone another with no event seen before it)
    ours = [cause for cause in gl_frames if cause in ("gl", "gl (Resize)")]
    assert frames.count >= 5 and not ours, gl_frames
    asked = len(gl_frames)
    vp.invalidate()  # the 3D view still draws when asked
    qtbot.waitUntil(lambda: len(gl_frames) > asked and not vp._dirty, timeout=10_000)


class Paints(QObject):
    """Counts the paints of one widget."""

    def __init__(self, widget) -> None:
        super().__init__(widget)
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


def test_the_3d_view_draws_in_a_turn_of_its_own_after_the_widgets(qtbot, opened) -> None:
    """A 3D frame asked for in the turn the widgets' frame was drawn waits for the next turn
    (the two back to back blocked the UI for their sum), and is drawn then, not lost."""
    window, vp = opened, opened.viewport
    opening_drawn(qtbot, window)
    gl = []
    vp.frame_drawn.connect(lambda: gl.append(1))
    window.frame_turns.take()  # as the widgets' frame does
    vp.scene.update()
    QApplication.sendEvent(vp.scene, QEvent(QEvent.Type.UpdateRequest))
    assert not gl  # put off
    qtbot.waitUntil(lambda: len(gl) >= 1, timeout=10_000)
    assert window.frame_turns.taken() or not window.frame_turns._end.isActive()


def test_a_put_off_3d_frame_and_a_change_meanwhile_are_drawn_in_one_frame(qtbot, opened) -> None:
    """The frame put off is asked of Qt again, so a change made before it is drawn joins it:
    one frame, not the frame put off and then Qt's own for the change."""
    window, vp = opened, opened.viewport
    opening_drawn(qtbot, window)
    gl: list[str] = []
    causes = GlCauses(vp.scene)
    vp.frame_drawn.connect(lambda: gl.append(causes.take()))
    vp._dirty = True
    window.frame_turns.take()  # as the widgets' frame does
    QApplication.sendEvent(vp.scene, QEvent(QEvent.Type.UpdateRequest))
    assert not gl  # put off
    vp.invalidate()  # a change before the frame put off is drawn
    qtbot.waitUntil(lambda: "gl" in gl, timeout=10_000)
    qtbot.wait(200)  # watching for a second frame of ours: none comes
    assert gl.count("gl") == 1 and not vp._dirty, gl


def test_the_widgets_draw_in_a_turn_of_their_own_after_the_3d_view(qtbot, opened) -> None:
    """The widgets' frame asked for in the turn the 3D view drew waits for the next turn."""
    window = opened
    opening_drawn(qtbot, window)
    assert not window._frame_waits
    paints = Paints(window.timeline)
    window.timeline.update()
    window.frame_turns.take()  # as the 3D view's frame does
    QApplication.sendEvent(window, QEvent(QEvent.Type.UpdateRequest))
    assert paints.count == 0  # put off
    qtbot.waitUntil(lambda: paints.count > 0, timeout=10_000)


def test_a_frame_turn_ends_when_the_event_loop_comes_round(qtbot) -> None:
    from app.qt.frame_turns import FrameTurns

    turns = FrameTurns()
    assert not turns.taken()
    turns.take()
    assert turns.taken()
    qtbot.waitUntil(lambda: not turns.taken(), timeout=5_000)
