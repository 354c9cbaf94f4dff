"""Timeline: keys and transport move the document's time, the bar scrubs between samples."""

from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest


def key(window, k: Qt.Key) -> None:
    """A real key press on whatever has focus in the window (the 3D view by default)."""
    target = window.focusWidget() or window
    QTest.keyClick(target, k)


def activate(window, qtbot) -> None:
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=30_000)  # soon, however busy the machine


def test_space_plays_in_real_time_and_pauses(loaded, qtbot) -> None:
    doc, tl = loaded.document, loaded.timeline
    activate(loaded, qtbot)
    assert doc.time == 0.0
    ticks: list[tuple[float, float]] = []  # (wall clock since Space, the time shown)
    start = time.monotonic()
    doc.time_changed.connect(lambda: ticks.append((time.monotonic() - start, doc.time)))
    key(loaded, Qt.Key.Key_Space)
    started_within = time.monotonic() - start  # playback's clock started in this span
    assert tl.playing
    # 0.3 s of playback in 4 ticks or more: counted as seen, however long the machine takes
    qtbot.waitUntil(lambda: len(ticks) >= 4 and ticks[-1][0] >= 0.3, timeout=60_000)
    key(loaded, Qt.Key.Key_Space)
    assert not tl.playing and not tl.timer.isActive()
    # wall clock drives time, whatever the frame rate (however busy the machine): a tick
    # shows the time since Space as it read the clock, after the tick before it was seen
    # and before it is seen itself (a frame count would fall behind or run ahead). A busy
    # machine may pass the clip's end between two ticks: playback loops, so the time shown
    # is that time less the loops (each restarts the clock, which loses under 1 ms)
    loops, last = 0, ticks[0][1]
    for (before, _), (wall, t) in zip(ticks, ticks[1:], strict=False):
        loops += t < last
        last = t
        shown = t + loops * doc.duration
        assert before - started_within - 1e-3 * loops <= shown <= wall, (before, t, wall, loops)
    t = doc.time
    qtbot.wait(100)  # paused: nothing moves it (the timer that would is stopped)
    assert doc.time == t


def test_speed_and_loop(loaded, qtbot) -> None:
    doc, tl = loaded.document, loaded.timeline
    tl.set_speed(4.0)
    assert tl.speed == 4.0
    tl.loop_box.setChecked(False)
    tl.play()
    qtbot.waitUntil(lambda: not tl.playing, timeout=30_000)  # 1.04 s clip at 4x: at the end
    assert doc.time == pytest.approx(doc.duration)
    tl.loop_box.setChecked(True)
    tl.set_speed(0.1)
    start = time.monotonic()
    tl.play()
    qtbot.waitUntil(lambda: doc.time < doc.duration, timeout=10_000)  # looped back
    assert tl.playing and doc.time <= 0.1 * (time.monotonic() - start)  # to the start, slowly
    tl.pause()


def test_right_and_left_step_one_sample_from_between_samples(loaded, qtbot) -> None:
    doc = loaded.document
    rate = doc.clip.sample_rate
    doc.set_time(3.4 / rate)
    activate(loaded, qtbot)
    key(loaded, Qt.Key.Key_Right)
    assert doc.time == pytest.approx(4 / rate)
    key(loaded, Qt.Key.Key_Right)
    assert doc.time == pytest.approx(5 / rate)
    key(loaded, Qt.Key.Key_Left)
    key(loaded, Qt.Key.Key_Left)
    assert doc.time == pytest.approx(3 / rate)
    key(loaded, Qt.Key.Key_End)
    assert doc.time == pytest.approx(doc.duration)
    key(loaded, Qt.Key.Key_Right)
    assert doc.time == pytest.approx(doc.duration)
    key(loaded, Qt.Key.Key_Home)
    assert doc.time == 0.0


def test_dragging_the_bar_scrubs_continuously(loaded, qtbot, ui) -> None:
    doc, bar = loaded.document, loaded.timeline.bar
    y = bar.height() // 2
    x0 = round(bar.time_to_x(0.25 * doc.duration))
    QTest.mousePress(bar, Qt.MouseButton.LeftButton, pos=QPoint(x0, y))
    assert doc.time == pytest.approx(bar.x_to_time(x0))
    seen = []
    for x in range(x0, x0 + 40, 3):
        QTest.mouseMove(bar, QPoint(x, y))
        seen.append(doc.time)
    QTest.mouseRelease(bar, Qt.MouseButton.LeftButton, pos=QPoint(x0 + 40, y))
    assert doc.time == pytest.approx(bar.x_to_time(x0 + 40))
    assert seen == sorted(seen) and len(set(seen)) == len(seen)
    frames = [t * doc.clip.sample_rate for t in seen]
    assert any(abs(f - round(f)) > 0.05 for f in frames)  # between samples, not snapped
    ui.draw(loaded.viewport)
    assert loaded.viewport.drawn_time == doc.time


def test_readout_names_time_frame_samples_and_alpha(loaded) -> None:
    doc, tl = loaded.document, loaded.timeline
    rate = doc.clip.sample_rate
    doc.set_time(7.25 / rate)
    text = tl.readout.text()
    assert "7.25" in text and "7\u21928" in text and "0.25" in text and "24 Hz" in text
    doc.set_rounding("ceil")
    assert tl.rounding_box.currentText() == "ceil"
    assert "\u2192 1" in tl.readout.text()


def test_segment_boundaries_come_from_the_result(loaded) -> None:
    tl, doc = loaded.timeline, loaded.document
    img = tl.bar.grab().toImage()
    segs = doc.result.costs.segments
    x = round(tl.bar.time_to_x(segs[0][0] / doc.clip.sample_rate))
    c = img.pixelColor(x, 6)
    assert c.red() > 200 and c.blue() < 120  # the orange boundary line
    # and the bar's tooltip says what the orange lines are
    tip = tl.bar.toolTip()
    assert "Orange lines: where each compression segment starts" in tip


def test_stripped_keyframes_get_violet_ticks(qtbot) -> None:
    from app.model.document import Document
    from app.views.timeline import STRIPPED_COLOR, ScrubBar
    from codec.compression import compress
    from codec.settings import CompressionSettings
    from tests.codec.helpers import chain_clip, keyed_clip

    clip = keyed_clip(chain_clip(num_samples=31, num_joints=5, amplitude=0.9), 5)
    doc = Document()
    doc.set_clip(clip)
    doc.set_result(compress(clip, CompressionSettings(precision=0.1, skin_error=False)))
    stored = doc.stored_keyframes()
    assert np.flatnonzero(stored).tolist() == list(range(0, 31, 5))
    bar = ScrubBar(doc)
    qtbot.addWidget(bar)
    bar.resize(620, 40)
    img = bar.grab().toImage()

    def violet(sample: int) -> bool:
        x = round(bar.time_to_x(sample / clip.sample_rate))
        return any(
            img.pixelColor(dx, y) == STRIPPED_COLOR for dx in (x - 1, x, x + 1) for y in (8, 10)
        )

    assert violet(3) and violet(12)
    assert not violet(5) and not violet(10)  # stored keys: the short grey tick only


@pytest.mark.parametrize("active", [True, False], ids=["active", "inactive-window"])
def test_left_right_step_time_from_the_precision_slider_and_the_joint_tree(
    loaded, qtbot, active: bool
) -> None:
    """A slider or the joint tree with the keyboard does not eat Left / Right: they step time
    (also when the window is not the active one and its shortcuts are asleep). Up / Down
    still walk the tree, and a spin box keeps its arrows for its text cursor."""
    doc = loaded.document
    rate = doc.clip.sample_rate
    if active:
        activate(loaded, qtbot)
    settings = loaded.panels["SettingsPanel"]
    joints = loaded.panels["JointsPanel"]
    precision = doc.settings.precision
    for widget in (settings.slider, joints.tree, joints.values):
        widget.setFocus()
        t = doc.time
        QTest.keyClick(widget, Qt.Key.Key_Right)
        QTest.keyClick(widget, Qt.Key.Key_Right)
        QTest.keyClick(widget, Qt.Key.Key_Left)
        assert doc.time == pytest.approx(t + 1 / rate), type(widget).__name__
    assert doc.settings.precision == precision  # the slider did not move
    doc.set_selection(0)
    joints.tree.setFocus()
    QTest.keyClick(joints.tree, Qt.Key.Key_Down)
    assert doc.selection == 1  # the tree still walks its rows
    assert all(item.isExpanded() for item in joints.items if item.childCount())
    spin = settings.precision
    spin.setFocus()
    spin.lineEdit().setCursorPosition(0)
    t = doc.time
    QTest.keyClick(spin, Qt.Key.Key_Right)
    assert doc.time == t and spin.lineEdit().cursorPosition() == 1


def test_a_rate_within_float_noise_of_an_integer_reads_as_that_integer(window, ui) -> None:
    """cmu_02_03_run_ccrig.bvh stores a frame time of 0.016667 s: 59.9988 Hz, shown as 60."""
    ui.open(window, ui.data / "bvh" / "cmu_02_03_run_ccrig.bvh")
    assert window.document.clip.sample_rate == pytest.approx(59.9988, abs=1e-4)
    text = window.timeline.readout.text()
    assert text.endswith("60 Hz") and "59.99" not in text


def test_the_ticks_follow_a_new_result_and_a_new_width(qtbot) -> None:
    """The tick lines are kept between paints: a result that strips other keyframes, or a new
    width, draws the new ones."""
    from app.model.document import Document
    from app.views.timeline import STRIPPED_COLOR, ScrubBar
    from codec.compression import compress
    from codec.settings import CompressionSettings
    from tests.codec.helpers import chain_clip, keyed_clip

    clip = keyed_clip(chain_clip(num_samples=31, num_joints=5, amplitude=0.9), 5)
    doc = Document()
    doc.set_clip(clip)
    bar = ScrubBar(doc)
    qtbot.addWidget(bar)
    bar.resize(620, 40)

    def violet_samples() -> list[int]:
        img = bar.grab().toImage()
        out = []
        for s in range(31):
            x = round(bar.time_to_x(s / clip.sample_rate))
            if any(img.pixelColor(dx, 8) == STRIPPED_COLOR for dx in (x - 1, x, x + 1)):
                out.append(s)
        return out

    assert violet_samples() == []  # no result: every keyframe is stored
    doc.set_result(compress(clip, CompressionSettings(precision=0.1, skin_error=False)))
    stripped = np.flatnonzero(~doc.stored_keyframes()).tolist()
    assert stripped and violet_samples() == stripped
    bar.resize(400, 40)
    assert violet_samples() == stripped  # at the new width's positions
