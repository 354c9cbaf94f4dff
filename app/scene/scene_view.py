"""The GL window of the 3D view: multisampled (not on software GL, but in batch screenshots),
perspective or orthographic, with a 2D overlay (axis gizmo, view name) painted over each frame.

It is a QOpenGLWindow (pyqtgraph's GLViewMixin), shown in the main window through a window
container (`embed`), not a QOpenGLWidget: a QOpenGLWidget makes Qt compose the whole top-level
window through OpenGL for any change anywhere in it; a native GL window draws and swaps
alone and the widgets around it paint in plain raster (bench/frame_cost.py at 1280x800 on
llvmpipe: a status-text change 12-13 ms -> 3 ms, a 3D frame 16-17 ms -> 11-12 ms).

It knows nothing of skeletons: its owner brings the scene up to date in `before_paint` and
draws the overlay in `overlay(painter)`. A click (press and release without a drag) is a pick;
drags orbit and pan, the wheel zooms, as in pyqtgraph; each such move says what it did in
`camera_touched(kind)` so the owner can stop re-framing what the user framed by hand. The
window never takes the keyboard (a QWindow would keep keys it ignores from the widgets
around it): a press says `pressed` and the owner gives the focus to a widget of the window.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from math import radians, tan

import numpy as np
from OpenGL import GL
from pyqtgraph.opengl.GLViewWidget import GLViewMixin
from PySide6 import QtCore, QtGui, QtOpenGL, QtWidgets

from app.qt.frame_turns import FrameTurns
from app.qt.handler_guard import report, survives

Array = np.ndarray

SAMPLES = 4  # multisample anti-aliasing on a GPU (SHELLSCOPE_MSAA=N chooses N samples)
SOFTWARE_RENDERERS = ("llvmpipe", "softpipe", "swiftshader")  # GL_RENDERER of CPU rasterisers
KEEP_MSAA = False  # set by batch screenshot runs: nobody waits on their frames, they look best


def is_software_renderer(renderer: str) -> bool:
    """Whether a GL_RENDERER string names a CPU rasteriser (Mesa llvmpipe/softpipe,
    SwiftShader), where 4x multisampling makes each frame of the 3D view 3-6 ms dearer
    (bench/frame_cost.py at 1280x800: 11-14 ms without, 17 ms with)."""
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
    surface (the window's own format must be chosen before its context exists); "" if none
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


class SceneView(GLViewMixin, QtOpenGL.QOpenGLWindow):
    clicked = QtCore.Signal(float, float)
    pressed = QtCore.Signal()  # a mouse button went down in the view
    resized = QtCore.Signal()
    camera_touched = QtCore.Signal(str)  # "orbit", "pan" or "zoom"
    _preparing = False  # inside before_paint: the frame being drawn shows it all
    _overlay_device: QtGui.QPaintDevice | None = None  # the overlay's target in `render_image`

    def __init__(self) -> None:
        # NoPartialUpdate: each frame draws straight into the window's own (multisampled)
        # framebuffer; the other behaviours draw into a framebuffer object and copy it over
        super().__init__(QtOpenGL.QOpenGLWindow.UpdateBehavior.NoPartialUpdate)
        fmt = QtGui.QSurfaceFormat(self.requestedFormat())  # before the window exists
        env = os.environ.get("SHELLSCOPE_MSAA", "").strip() or None
        fmt.setSamples(msaa_samples("" if env else gl_renderer(), env, KEEP_MSAA))
        fmt.setDepthBufferSize(24)
        self.setFormat(fmt)
        # keys belong to the window around it: a focused QWindow would keep the ones it
        # ignores (arrows step time, view keys are the window's actions)
        self.setFlag(QtCore.Qt.WindowType.WindowDoesNotAcceptFocus, True)
        self.ortho = False
        self.before_paint: Callable[[], None] | None = None
        self.overlay: Callable[[QtGui.QPainter], None] | None = None
        self.container: QtWidgets.QWidget | None = None
        self._press: QtCore.QPointF | None = None
        # shared with the window's widgets: a frame of theirs drawn in this turn puts ours off
        self.turns: FrameTurns | None = None
        self._next_turn = QtCore.QTimer(self)
        self._next_turn.setSingleShot(True)
        self._next_turn.setInterval(0)
        self._next_turn.timeout.connect(self._post_frame)

    def embed(self, parent: QtWidgets.QWidget) -> QtWidgets.QWidget:
        """The widget that shows this window inside `parent` (a window container; it owns
        the window from now on, and takes the layout's size constraints)."""
        box = QtWidgets.QWidget.createWindowContainer(self, parent)
        # PySide leaves this window owned by its Python wrapper: Python would delete it under
        # the container, which then crashes when its top-level window is destroyed. The same
        # QObject parent set again (nothing changes in Qt) hands the ownership to C++.
        QtCore.QObject.setParent(self, self.parent())
        box.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)  # it would hand the focus to us
        self.container = box
        return box

    # --- what pyqtgraph asks of a widget ---------------------------------------------------
    def devicePixelRatioF(self) -> float:
        return float(self.devicePixelRatio())

    def rect(self) -> QtCore.QRect:
        return QtCore.QRect(0, 0, self.width(), self.height())

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
        """4x4 projection @ view of the whole view (what a paint uses)."""
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
    def event(self, ev: QtCore.QEvent) -> bool:
        """A frame asked for in a turn that has drawn the widgets' frame waits for the next
        turn (app.qt.frame_turns); the parts to draw stay marked, so the frame posted
        then draws them."""
        if ev.type() == QtCore.QEvent.Type.UpdateRequest and self.turns is not None:
            if self.turns.taken():
                self._next_turn.start()
                return True
            self.turns.take()
        return super().event(ev)

    def _post_frame(self) -> None:
        """Ask Qt again for the frame put off: an update() asked for meanwhile joins it (a
        frame posted by hand would be drawn, and then Qt's own for that update() again)."""
        self.requestUpdate()

    def update(self, *args: object) -> None:
        """Schedule a frame, except from inside `before_paint`: the items it refills call
        update() (pyqtgraph's GLGraphicsItem.update), and the frame being painted already
        draws what they now hold; honouring those calls drew every change twice."""
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
            painter = QtGui.QPainter(self._overlay_device or self)
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

    def render_image(self) -> QtGui.QImage:
        """The scene as drawn now, overlay included, rendered afresh into an offscreen
        framebuffer with the window's samples (reading the window's own framebuffer back is
        not reliable: after a swap its back buffer is undefined on most drivers). A null
        image before the window's first frame (no GL context yet)."""
        if not self.isValid():
            return QtGui.QImage()
        dpr = self.devicePixelRatio()
        size = QtCore.QSize(max(round(self.width() * dpr), 1), max(round(self.height() * dpr), 1))
        self.makeCurrent()
        try:
            fmt = QtOpenGL.QOpenGLFramebufferObjectFormat()
            fmt.setAttachment(QtOpenGL.QOpenGLFramebufferObject.Attachment.CombinedDepthStencil)
            fmt.setSamples(max(self.format().samples(), 0))
            fbo = QtOpenGL.QOpenGLFramebufferObject(size, fmt)
            fbo.bind()
            GL.glViewport(0, 0, size.width(), size.height())
            device = QtOpenGL.QOpenGLPaintDevice(size)  # paints into the bound framebuffer
            device.setDevicePixelRatio(dpr)
            self._overlay_device = device
            try:
                self.paintGL()
            finally:
                self._overlay_device = None
            image = fbo.toImage()  # resolves the samples
            image.setDevicePixelRatio(dpr)
            del fbo, device  # while their context is current
        finally:
            QtOpenGL.QOpenGLFramebufferObject.bindDefault()
            self.doneCurrent()
        return image

    def grabFramebuffer(self) -> QtGui.QImage:
        """What `render_image` draws (pyqtgraph's readQImage and our screenshots call this)."""
        return self.render_image()

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
        self.pressed.emit()

    @survives
    def mouseReleaseEvent(self, ev: QtGui.QMouseEvent) -> None:
        p = ev.position()
        if ev.button() == QtCore.Qt.MouseButton.LeftButton and self._press is not None:
            self.clicked.emit(p.x(), p.y())
        self._press = None
        super().mouseReleaseEvent(ev)

    # --- keys: never ours (pyqtgraph's would orbit on the arrows) -----------------------
    def keyPressEvent(self, ev: QtGui.QKeyEvent) -> None:
        self._to_container(ev)

    def keyReleaseEvent(self, ev: QtGui.QKeyEvent) -> None:
        self._to_container(ev)

    def _to_container(self, ev: QtGui.QKeyEvent) -> None:
        """A key that reached the window anyway (it takes no focus, but one can be sent to
        it) goes to the widgets around it, as an ignored key of a widget would."""
        ev.ignore()
        if self.container is not None:
            QtCore.QCoreApplication.sendEvent(self.container, ev)
