"""The GL widget of the 3D view: multisampled (not on software GL, but in batch screenshots),
perspective or orthographic, with a 2D overlay (axis gizmo, view name) painted over each frame.

It knows nothing of skeletons: its owner brings the scene up to date in `before_paint` and
draws the overlay in `overlay(painter)`. A click (press and release without a drag) is a pick;
drags orbit and pan, the wheel zooms, as in pyqtgraph; each such move says what it did in
`camera_touched(kind)` so the owner can stop re-framing what the user framed by hand.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from math import radians, tan

import numpy as np
import pyqtgraph.opengl as gl
from OpenGL import GL
from PySide6 import QtCore, QtGui, QtWidgets

from app.views.handler_guard import report, survives

Array = np.ndarray

SAMPLES = 4  # multisample anti-aliasing on a GPU (SHELLSCOPE_MSAA=N chooses N samples)
SOFTWARE_RENDERERS = ("llvmpipe", "softpipe", "swiftshader")  # GL_RENDERER of CPU rasterisers
KEEP_MSAA = False  # set by batch screenshot runs: nobody waits on their frames, they look best


def is_software_renderer(renderer: str) -> bool:
    """Whether a GL_RENDERER string names a CPU rasteriser (Mesa llvmpipe/softpipe,
    SwiftShader), where 4x multisampling costs ~3 ms of an ~18 ms whole-window frame."""
    name = renderer.lower()
    return any(s in name for s in SOFTWARE_RENDERERS)


def msaa_samples(renderer: str, env: str | None, keep: bool) -> int:
    """Samples for the 3D view: SHELLSCOPE_MSAA (`env`) when set, SAMPLES when asked to keep
    them (batch screenshots) or on a GPU, none on software GL (the interactive frame rate
    matters more there than smooth edges)."""
    if env is not None and env.strip():
        return max(int(env), 0)
    if keep or not is_software_renderer(renderer):
        return SAMPLES
    return 0


@functools.cache
def gl_renderer() -> str:
    """GL_RENDERER of a context like the view's, probed once per process on an offscreen
    surface (the widget's own format must be chosen before its context exists); "" if none
    can be made."""
    name = ""
    ctx = QtGui.QOpenGLContext()
    surface = QtGui.QOffscreenSurface()
    surface.create()
    if ctx.create() and ctx.makeCurrent(surface):
        try:
            raw = GL.glGetString(GL.GL_RENDERER)
            name = raw.decode("latin-1") if isinstance(raw, bytes) else str(raw or "")
        except Exception:  # no GL function pointers: treat as unknown (a GPU)
            name = ""
        ctx.doneCurrent()
    surface.destroy()
    return name


def qmatrix_to_numpy(m: QtGui.QMatrix4x4) -> Array:
    return np.array(m.data(), dtype=np.float64).reshape(4, 4).T


class SceneView(gl.GLViewWidget):
    clicked = QtCore.Signal(float, float)
    resized = QtCore.Signal()
    camera_touched = QtCore.Signal(str)  # "orbit", "pan" or "zoom"
    _preparing = False  # inside before_paint: the frame being drawn shows it all

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        fmt = QtGui.QSurfaceFormat(self.format())
        env = os.environ.get("SHELLSCOPE_MSAA", "").strip() or None
        fmt.setSamples(msaa_samples("" if env else gl_renderer(), env, KEEP_MSAA))
        fmt.setDepthBufferSize(24)
        self.setFormat(fmt)
        self.ortho = False
        self.before_paint: Callable[[], None] | None = None
        self.overlay: Callable[[QtGui.QPainter], None] | None = None
        self._press: QtCore.QPointF | None = None
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.ClickFocus)

    # --- projection ---------------------------------------------------------------------
    def projectionMatrix(self, region: tuple, viewport: tuple) -> QtGui.QMatrix4x4:
        """pyqtgraph's frustum, or an orthographic box seeing as wide as the frustum does at
        the target (half-width distance * tan(fov / 2)), so switching keeps the framing."""
        if not self.ortho:
            return super().projectionMatrix(region, viewport)
        x0, y0, w, h = viewport
        dist = self.opts["distance"]
        r = dist * tan(0.5 * radians(self.opts["fov"]))
        t = r * h / w
        left = r * ((region[0] - x0) * (2.0 / w) - 1)
        right = r * ((region[0] + region[2] - x0) * (2.0 / w) - 1)
        bottom = t * ((region[1] - y0) * (2.0 / h) - 1)
        top = t * ((region[1] + region[3] - y0) * (2.0 / h) - 1)
        m = QtGui.QMatrix4x4()
        m.ortho(left, right, bottom, top, -1000.0 * dist, 1000.0 * dist)
        return m

    def mvp(self) -> Array:
        """4x4 projection @ view of the whole widget (what a paint uses)."""
        region = (0, 0, self.width(), self.height())
        return qmatrix_to_numpy(self.projectionMatrix(region, region)) @ qmatrix_to_numpy(
            self.viewMatrix()
        )

    def view_rotation(self) -> Array:
        """(3, 3) rotation from world to view space (x right, y up, z towards the eye)."""
        return qmatrix_to_numpy(self.viewMatrix())[:3, :3]

    def eye(self) -> Array:
        c = self.cameraPosition()
        return np.array([c.x(), c.y(), c.z()])

    def view_direction(self) -> Array:
        """Unit direction the camera looks along (world space)."""
        return -self.view_rotation()[2]

    # --- painting -----------------------------------------------------------------------
    def update(self, *args: object) -> None:
        """Schedule a frame, except from inside `before_paint`: the items it refills call
        update() (pyqtgraph's GLGraphicsItem.update), and the frame being painted already
        draws what they now hold. Honouring those calls drew every change twice, each time
        composing the whole window (about 18 ms at 1280x800 on llvmpipe, more under load)."""
        if self._preparing and not args:
            return
        super().update(*args)

    @survives
    def paintGL(self) -> None:
        if self.before_paint is not None:
            self._preparing = True
            try:
                self.before_paint()
            except Exception as exc:  # draw what the items already hold, log why
                report("SceneView.before_paint", exc)
            finally:
                self._preparing = False
        super().paintGL()
        if self.overlay is not None:
            painter = QtGui.QPainter(self)
            painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
            self.overlay(painter)
            painter.end()

    def paint(self, *, region: tuple, viewport: tuple, useItemNames: bool = False) -> None:
        self.setProjection(region, viewport)
        self.setModelview()
        # items leave the depth mask off (translucent ones) and QPainter leaves its own state:
        # a clear with the mask off would keep the last frame's depth
        GL.glDepthMask(GL.GL_TRUE)
        GL.glFrontFace(GL.GL_CCW)
        GL.glClearColor(*self.opts["bgcolor"])
        GL.glClear(GL.GL_DEPTH_BUFFER_BIT | GL.GL_COLOR_BUFFER_BIT)
        self.drawItemTree(useItemNames=useItemNames)

    @survives
    def resizeGL(self, w: int, h: int) -> None:
        super().resizeGL(w, h)
        self.resized.emit()

    # --- mouse --------------------------------------------------------------------------
    @survives
    def wheelEvent(self, ev: QtGui.QWheelEvent) -> None:
        super().wheelEvent(ev)
        self.camera_touched.emit("zoom")

    @survives
    def mouseMoveEvent(self, ev: QtGui.QMouseEvent) -> None:
        buttons = ev.buttons()
        if self._press is not None and (ev.position() - self._press).manhattanLength() <= 4:
            self.mousePos = ev.position()  # a click's jitter is not a drag
            return
        self._press = None
        super().mouseMoveEvent(ev)
        if buttons == QtCore.Qt.MouseButton.NoButton:
            return
        ctrl = bool(ev.modifiers() & QtCore.Qt.KeyboardModifier.ControlModifier)
        orbit = buttons == QtCore.Qt.MouseButton.LeftButton and not ctrl
        self.camera_touched.emit("orbit" if orbit else "pan")

    @survives
    def mousePressEvent(self, ev: QtGui.QMouseEvent) -> None:
        self._press = ev.position()
        super().mousePressEvent(ev)

    @survives
    def mouseReleaseEvent(self, ev: QtGui.QMouseEvent) -> None:
        p = ev.position()
        if ev.button() == QtCore.Qt.MouseButton.LeftButton and self._press is not None:
            self.clicked.emit(p.x(), p.y())
        self._press = None
        super().mouseReleaseEvent(ev)

    def keyPressEvent(self, ev: QtGui.QKeyEvent) -> None:
        ev.ignore()  # arrows belong to the timeline, view keys to the window's actions

    def keyReleaseEvent(self, ev: QtGui.QKeyEvent) -> None:
        ev.ignore()
