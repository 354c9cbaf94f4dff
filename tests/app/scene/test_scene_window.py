"""The 3D view is a GL window of its own (a QOpenGLWindow in a window container): owned by
its container, never the keyboard's target (a click leaves every key to the window: Left /
Right step time, view keys, Space, Ctrl+Z), and drawn into every screenshot of the window."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from app.scene.scene_view import SceneView

Key = QtCore.Qt.Key


def _activate(window, qtbot) -> None:
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)


def _click_view(vp, qtbot) -> None:
    """A left click in an empty corner of the 3D view (a pick of nothing)."""
    QTest.mouseClick(vp.scene, QtCore.Qt.MouseButton.LeftButton, pos=QtCore.QPoint(3, 3))
    qtbot.waitUntil(lambda: QtWidgets.QApplication.focusWidget() is vp, timeout=10_000)


def _press(key: Key, mods=QtCore.Qt.KeyboardModifier.NoModifier) -> None:
    """A key pressed as the windowing system delivers it: to the focus window, through Qt's
    shortcut map and then its focus widget."""
    target = QtGui.QGuiApplication.focusWindow()
    assert target is not None
    QTest.keyClick(target, key, mods)


def test_the_view_is_a_native_gl_window_its_container_owns(window) -> None:
    vp = window.viewport
    assert isinstance(vp.scene, SceneView) and isinstance(vp.scene, QtGui.QWindow)
    assert vp.scene.container is vp.scene_box and vp.scene_box.isVisible()
    assert not shiboken6.ownedByPython(vp.scene)  # the container deletes it, not Python
    assert vp.scene.flags() & QtCore.Qt.WindowType.WindowDoesNotAcceptFocus
    assert vp.scene_box.minimumSize() == QtCore.QSize(320, 240)
    assert vp.scene.size() == vp.scene_box.size()
    # the 3D view takes the layout's spare height: more than the toolbar and readout rows
    assert vp.scene_box.height() > 0.6 * vp.height()


EXIT_SCRIPT = """
import sys
from PySide6 import QtCore, QtWidgets
QtCore.QCoreApplication.setAttribute(QtCore.Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
app = QtWidgets.QApplication(sys.argv[:1])
app.setApplicationName("ShellscopeTests")
from app.main_window import MainWindow
w = MainWindow(remember_layout=False)
w.show()
for _ in range(50):
    app.processEvents()
w.close()
w.deleteLater()  # never carried out: the application goes first, with the window alive
print("closed")
"""


def test_the_process_exits_cleanly_with_a_closed_window_still_alive() -> None:
    """PySide's exit clean-up deletes every object Python owns; had Python still owned the
    GL window, it went before its container, which then crashed (a segfault at exit)."""
    root = Path(__file__).resolve().parents[3]
    run = subprocess.run(
        [sys.executable, "-c", EXIT_SCRIPT],
        cwd=root,
        env={**os.environ, "PYOPENGL_PLATFORM": "glx"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    assert "closed" in run.stdout


def test_a_click_in_the_view_leaves_the_keys_to_the_window(loaded, qtbot) -> None:
    doc, vp = loaded.document, loaded.viewport
    rate = doc.clip.sample_rate
    _activate(loaded, qtbot)
    spin = loaded.panels["SettingsPanel"].precision
    spin.setFocus()  # a text field: it keeps Left / Right for its cursor
    assert QtWidgets.QApplication.focusWidget() is spin
    _click_view(vp, qtbot)
    assert QtWidgets.QApplication.focusWidget() is vp  # the click took the keys from the box
    assert QtGui.QGuiApplication.focusWindow() is not vp.scene  # the GL window takes none
    t = doc.time
    _press(Key.Key_Right)
    _press(Key.Key_Right)
    _press(Key.Key_Left)
    assert doc.time == t + 1 / rate
    _press(Key.Key_1)  # View > Views > Front
    assert vp.view_name == "front" and vp.scene.ortho
    _press(Key.Key_5)  # View > Views > Orthographic (off)
    assert not vp.scene.ortho
    _press(Key.Key_Space)  # Playback > Play / pause
    assert loaded.timeline.playing
    _press(Key.Key_Space)
    assert not loaded.timeline.playing


def test_ctrl_z_after_a_click_in_the_view_undoes_the_last_edit(loaded, qtbot) -> None:
    doc, vp = loaded.document, loaded.viewport
    start = doc.settings.precision
    loaded.panels["SettingsPanel"].precision.setValue(0.25)
    assert doc.settings.precision == 0.25
    _activate(loaded, qtbot)
    _click_view(vp, qtbot)
    _press(Key.Key_Z, QtCore.Qt.KeyboardModifier.ControlModifier)
    assert doc.settings.precision == start


def test_a_key_sent_to_the_gl_window_itself_still_reaches_the_window(loaded, qtbot) -> None:
    """The GL window takes no focus, but a key can be sent to it: it goes to the widgets
    around it (the window's shortcuts), never to pyqtgraph's orbit-on-arrows."""
    doc, vp = loaded.document, loaded.viewport
    _activate(loaded, qtbot)
    azimuth, t = vp.scene.opts["azimuth"], doc.time
    QTest.keyClick(vp.scene, Key.Key_Right)
    assert doc.time == t + 1 / doc.clip.sample_rate
    assert vp.scene.opts["azimuth"] == azimuth


def _png_pixels(data: bytes) -> np.ndarray:
    img = QtGui.QImage.fromData(data, "PNG").convertToFormat(QtGui.QImage.Format.Format_RGB888)
    arr = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine())
    return arr[:, : 3 * img.width()].reshape(img.height(), img.width(), 3).copy()


def test_an_exported_window_screenshot_shows_the_3d_view(loaded, ui, tmp_path) -> None:
    """Stats > Screenshot: the PNG holds the scene where the view is (QWidget.grab alone
    leaves a native GL window out), the same pixels the view draws."""
    vp = loaded.viewport
    ui.draw(vp)
    out = loaded.panels["StatsPanel"].export_to("screenshot", tmp_path / "window.png")
    assert out is not None
    shot = _png_pixels(out.read_bytes())
    assert shot.shape[:2] == (loaded.height(), loaded.width())
    top_left = vp.scene_box.mapTo(loaded, QtCore.QPoint(0, 0))
    x, y, w, h = top_left.x(), top_left.y(), vp.scene_box.width(), vp.scene_box.height()
    region = shot[y : y + h, x : x + w].astype(int)
    scene = vp.grab_scene()[:, :, :3].astype(int)
    assert region.shape == scene.shape
    assert np.abs(region - scene).max() <= 2  # the view's own pixels, where it is
    bg = np.round(np.array(vp.scene.opts["bgcolor"][:3]) * 255)
    drawn = np.abs(region - bg).sum(axis=-1) > 30
    assert drawn.sum() > 2000  # the skeleton, the grid and the overlay, not an empty box


def test_a_grab_without_the_view_in_it_is_the_widgets_own(loaded) -> None:
    from app.scene.screenshot import grab_image

    dock = loaded.docks["StatsPanel"]
    mine = grab_image(dock).convertToFormat(QtGui.QImage.Format.Format_RGB888)
    plain = dock.grab().toImage().convertToFormat(QtGui.QImage.Format.Format_RGB888)
    assert mine == plain


def test_closing_the_window_frees_the_views_gl_buffers(loaded) -> None:
    """Window close releases every item's vertex buffers while the GL context still exists."""
    vp = loaded.viewport

    def buffers() -> list:
        return [
            value
            for item in vp.scene.items
            for name, value in vars(item).items()
            if name.startswith(("m_vbo", "m_ibo")) and hasattr(value, "isCreated")
        ]

    assert sum(b.isCreated() for b in buffers()) >= 5  # the bones, joints, grid... on the GPU
    loaded.close()
    assert vp.scene.isValid()  # the context outlives the release
    assert not any(b.isCreated() for b in buffers())
