"""The 3D view's multisampling: chosen from the GL renderer's name, since on a CPU rasteriser
4x MSAA costs a sixth of every whole-window frame, and kept for batch screenshots."""

from __future__ import annotations

import numpy as np
import pyqtgraph.opengl as gl
import pytest
from OpenGL import GL
from PySide6 import QtGui, QtWidgets

from app.scene import scene_view
from app.scene.scene_view import SAMPLES, SceneView, is_software_renderer, msaa_samples

SOFTWARE = [
    "llvmpipe (LLVM 15.0.7, 256 bits)",
    "softpipe",
    "Google SwiftShader",
    "SwiftShader Device (Subzero)",
    "Gallium 0.4 on LLVMPIPE",
]
GPUS = [
    "NVIDIA GeForce RTX 3080/PCIe/SSE2",
    "Mesa Intel(R) UHD Graphics 620 (KBL GT2)",
    "AMD Radeon RX 6800 (radeonsi, navi21, LLVM 15.0.7, DRM 3.49)",
    "Apple M2",
    "",
]


@pytest.mark.parametrize("name", SOFTWARE)
def test_cpu_rasterisers_draw_without_multisampling(name: str) -> None:
    assert is_software_renderer(name)
    assert msaa_samples(name, None, keep=False) == 0


@pytest.mark.parametrize("name", GPUS)
def test_gpus_and_unknown_renderers_keep_multisampling(name: str) -> None:
    assert not is_software_renderer(name)
    assert msaa_samples(name, None, keep=False) == SAMPLES


def test_batch_screenshots_keep_multisampling_and_the_environment_wins() -> None:
    assert msaa_samples(SOFTWARE[0], None, keep=True) == SAMPLES
    assert msaa_samples(SOFTWARE[0], "8", keep=False) == 8
    assert msaa_samples(GPUS[0], "0", keep=False) == 0
    assert msaa_samples(GPUS[0], " ", keep=False) == SAMPLES  # blank is unset


def _shown_view(qtbot) -> tuple[QtWidgets.QWidget, SceneView]:
    """(host widget, SceneView in its container in it), shown and drawn once (its GL context
    exists); keep the host: it owns the view."""
    host = QtWidgets.QWidget()
    qtbot.addWidget(host)
    view = SceneView()
    box = view.embed(host)
    QtWidgets.QVBoxLayout(host).addWidget(box)
    host.resize(160, 120)
    host.show()
    qtbot.waitExposed(host)
    qtbot.waitUntil(view.isValid)
    return host, view


def _drawn_with(qtbot) -> tuple[str, int]:
    """(GL_RENDERER, GL_SAMPLES) of a shown view's own context and framebuffer (the window's
    default framebuffer: it draws there, not into a framebuffer object)."""
    host, view = _shown_view(qtbot)
    view.makeCurrent()  # binds the window's framebuffer
    try:
        assert view.defaultFramebufferObject() == 0
        name = GL.glGetString(GL.GL_RENDERER).decode("latin-1")
        return name, int(GL.glGetIntegerv(GL.GL_SAMPLES))
    finally:
        view.doneCurrent()


def test_the_probed_renderer_is_the_views_own_and_decides_its_samples(qtbot, monkeypatch) -> None:
    monkeypatch.delenv("SHELLSCOPE_MSAA", raising=False)
    monkeypatch.setattr(scene_view, "KEEP_MSAA", False)
    name, samples = _drawn_with(qtbot)
    assert name == scene_view.gl_renderer()
    assert samples == msaa_samples(name, None, keep=False)


def test_a_screenshot_run_asks_for_samples_on_any_renderer(qtbot, monkeypatch) -> None:
    monkeypatch.delenv("SHELLSCOPE_MSAA", raising=False)
    monkeypatch.setattr(scene_view, "KEEP_MSAA", True)
    assert _drawn_with(qtbot)[1] == SAMPLES


def _edge_shades(qtbot) -> tuple[int, int]:
    """(pixels neither background nor line colour, pixels of the line colour) in a grab of
    a white grid on black: a multisampled grab has blended shades along the lines."""
    host, view = _shown_view(qtbot)
    view.setBackgroundColor((0, 0, 0))
    grid = gl.GLGridItem(antialias=False, glOptions="opaque")  # edges: the samples' only
    grid.setColor((255, 255, 255, 255))
    view.addItem(grid)
    img = view.grabFramebuffer().convertToFormat(QtGui.QImage.Format.Format_RGB888)
    assert (img.width(), img.height()) == (view.width(), view.height())
    bpl = img.bytesPerLine()
    rgb = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), bpl)
    grey = rgb[:, : 3 * img.width()].reshape(img.height(), img.width(), 3).max(axis=-1)
    return int(((grey > 8) & (grey < 247)).sum()), int((grey >= 247).sum())


def test_a_screenshot_runs_grab_is_multisampled(qtbot, monkeypatch) -> None:
    """The grab renders offscreen with the window's samples: without samples the lines of
    the grid are hard-edged, a screenshot run's (KEEP_MSAA) has blended edges."""
    monkeypatch.setenv("SHELLSCOPE_MSAA", "0")
    hard_blend, hard_lines = _edge_shades(qtbot)
    monkeypatch.delenv("SHELLSCOPE_MSAA")
    monkeypatch.setattr(scene_view, "KEEP_MSAA", True)
    soft_blend, soft_lines = _edge_shades(qtbot)
    assert hard_lines > 200 and soft_blend > 200  # the grid is in both pictures
    assert soft_blend > 3 * max(hard_blend, 1)
