"""The 3D view's multisampling: chosen from the GL renderer's name, since on a CPU rasteriser
4x MSAA costs a sixth of every whole-window frame, and kept for batch screenshots."""

from __future__ import annotations

import pytest
from OpenGL import GL

from app.views import scene_view
from app.views.scene_view import SAMPLES, SceneView, is_software_renderer, msaa_samples

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


def _drawn_with(qtbot) -> tuple[str, int]:
    """(GL_RENDERER, GL_SAMPLES) of a shown view's own context and framebuffer (its format()
    reports the context's samples, not the framebuffer's, once it is initialised)."""
    view = SceneView()
    qtbot.addWidget(view)
    view.resize(160, 120)
    view.show()
    qtbot.waitExposed(view)
    view.grabFramebuffer()  # the context and its framebuffer exist from here
    view.makeCurrent()  # binds the view's framebuffer
    try:
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
