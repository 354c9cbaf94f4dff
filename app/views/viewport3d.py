"""The 3D view: raw and lossy skeletons overlaid, bones coloured by error, dominant shells.

It only draws the document. Geometry is rebuilt lazily right before a paint (so a burst of
time changes costs one frame), from the Qt-free builders in `app.skeleton_mesh`, into a few
merged GL items whose buffers are overwritten in place.
"""

from __future__ import annotations

from collections.abc import Callable
from math import atan, radians, sin, tan

import numpy as np
import pyqtgraph.opengl as gl
from OpenGL import GL
from pyqtgraph.opengl.items.GLMeshItem import DirtyFlag as MeshDirty
from pyqtgraph.opengl.items.GLScatterPlotItem import DirtyFlag as ScatterDirty
from PySide6 import QtCore, QtGui, QtWidgets

from app.document import Document
from app.picking import pick
from app.skeleton_mesh import (
    Y_UP_TO_Z_UP,
    BoneMesh,
    PoseSolver,
    ShellMesh,
    body_joints,
    ring_lines,
)
from app.views import colors
from app.views.skin_item import SkinControls, SkinLayer
from codec.error_metric import shell_error

Array = np.ndarray

OPAQUE = "opaque"
TRANSLUCENT = "translucent"
# translucent, front faces only: each closed shape blends once, independent of draw order
TRANSLUCENT_CULLED = {
    GL.GL_DEPTH_TEST: True,
    GL.GL_BLEND: True,
    GL.GL_CULL_FACE: True,
    "glCullFace": (GL.GL_BACK,),
    "glBlendFuncSeparate": (
        GL.GL_SRC_ALPHA, GL.GL_ONE_MINUS_SRC_ALPHA, GL.GL_ONE, GL.GL_ONE_MINUS_SRC_ALPHA,
    ),
}  # fmt: skip
# shells: sorted back to front on the CPU, so no depth reads are needed for blending them
# (software GL is fill-bound here: skipping the depth test saves a read per layer)
SHELLS = {**TRANSLUCENT_CULLED, GL.GL_DEPTH_TEST: False}
# joints and the selection marker stay visible through bones
ON_TOP = {
    GL.GL_DEPTH_TEST: False,
    GL.GL_BLEND: True,
    GL.GL_CULL_FACE: False,
    "glBlendFuncSeparate": (
        GL.GL_SRC_ALPHA, GL.GL_ONE_MINUS_SRC_ALPHA, GL.GL_ONE, GL.GL_ONE_MINUS_SRC_ALPHA,
    ),
}  # fmt: skip


def qmatrix_to_numpy(m: QtGui.QMatrix4x4) -> Array:
    return np.array(m.data(), dtype=np.float64).reshape(4, 4).T


class SoupMesh(gl.GLMeshItem):
    """A GLMeshItem fed a flat triangle soup directly, skipping MeshData and normals."""

    def __init__(self, gl_options: object, depth: int) -> None:
        super().__init__(glOptions=gl_options, shader=None, smooth=False, computeNormals=False)
        self.setDepthValue(depth)
        self._pending = MeshDirty(0)

    def set_soup(self, vertices: Array, vertex_colors: Array) -> None:
        """Replace the triangles without scheduling a repaint (called while painting)."""
        if len(vertices) == 0:
            self.vertexes = None
            return
        self.vertexes = np.ascontiguousarray(vertices, dtype=np.float32)
        self.colors = np.ascontiguousarray(vertex_colors, dtype=np.float32)
        self._pending |= MeshDirty.POSITION | MeshDirty.COLOR

    def parseMeshData(self) -> MeshDirty:  # noqa: N802 (pyqtgraph's name)
        bits, self._pending = self._pending, MeshDirty(0)
        return bits


def set_points(item: gl.GLScatterPlotItem, pos: Array, rgba: Array, size: Array | float) -> None:
    """GLScatterPlotItem.setData without its repaint request (called while painting)."""
    item.pos = np.ascontiguousarray(pos, dtype=np.float32)
    item.color = np.ascontiguousarray(rgba, dtype=np.float32)
    item.dirty_bits |= ScatterDirty.POSITION | ScatterDirty.COLOR
    if isinstance(size, np.ndarray):
        item.size = np.ascontiguousarray(size, dtype=np.float32)
        item.dirty_bits |= ScatterDirty.SIZE
    else:
        item.size = size


def set_lines(item: gl.GLLinePlotItem, pos: Array) -> None:
    item.pos = np.ascontiguousarray(pos, dtype=np.float32)
    item.dirty_bits |= type(item.dirty_bits).POSITION


class SceneView(gl.GLViewWidget):
    """GLViewWidget that picks on a click (press and release without a drag) and asks its
    owner to bring the geometry up to date right before each paint."""

    clicked = QtCore.Signal(float, float)
    resized = QtCore.Signal()
    camera_touched = QtCore.Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.before_paint: Callable[[], None] | None = None
        self._press: QtCore.QPointF | None = None
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.ClickFocus)

    def paintGL(self) -> None:  # noqa: N802
        if self.before_paint is not None:
            self.before_paint()
        super().paintGL()

    def resizeGL(self, w: int, h: int) -> None:  # noqa: N802
        super().resizeGL(w, h)
        self.resized.emit()

    def wheelEvent(self, ev: QtGui.QWheelEvent) -> None:  # noqa: N802
        self.camera_touched.emit()
        super().wheelEvent(ev)

    def mouseMoveEvent(self, ev: QtGui.QMouseEvent) -> None:  # noqa: N802
        if ev.buttons() != QtCore.Qt.MouseButton.NoButton:
            self.camera_touched.emit()
        super().mouseMoveEvent(ev)

    def mousePressEvent(self, ev: QtGui.QMouseEvent) -> None:  # noqa: N802
        self._press = ev.position()
        super().mousePressEvent(ev)

    def mouseReleaseEvent(self, ev: QtGui.QMouseEvent) -> None:  # noqa: N802
        p = ev.position()
        if (
            ev.button() == QtCore.Qt.MouseButton.LeftButton
            and self._press is not None
            and (p - self._press).manhattanLength() <= 4
        ):
            self.clicked.emit(p.x(), p.y())
        self._press = None
        super().mouseReleaseEvent(ev)

    def keyPressEvent(self, ev: QtGui.QKeyEvent) -> None:  # noqa: N802
        ev.ignore()  # arrows belong to the timeline, not to camera orbiting

    def keyReleaseEvent(self, ev: QtGui.QKeyEvent) -> None:  # noqa: N802
        ev.ignore()

    def mvp(self) -> Array:
        """4x4 projection @ view of the whole widget (what a paint uses)."""
        region = (0, 0, self.width(), self.height())
        return qmatrix_to_numpy(self.projectionMatrix(region, region)) @ qmatrix_to_numpy(
            self.viewMatrix()
        )

    def eye(self) -> Array:
        c = self.cameraPosition()
        return np.array([c.x(), c.y(), c.z()])


class ColorBar(QtWidgets.QWidget):
    """The error legend: error / precision from 0 (green) to >= 1 (red)."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumWidth(150)
        self.setFixedHeight(26)
        self.setToolTip("Lossy bones are coloured by their current error / precision")

    def paintEvent(self, _ev: QtGui.QPaintEvent) -> None:  # noqa: N802
        p = QtGui.QPainter(self)
        fm = p.fontMetrics()
        bar = QtCore.QRect(4, 2, self.width() - 8, 10)
        grad = QtGui.QLinearGradient(bar.left(), 0, bar.right(), 0)
        for stop, rgb in zip(colors.ERROR_STOPS, colors.ERROR_COLORS, strict=True):
            grad.setColorAt(float(stop), QtGui.QColor.fromRgbF(*map(float, rgb)))
        p.fillRect(bar, grad)
        p.setPen(self.palette().color(QtGui.QPalette.ColorRole.WindowText))
        y = bar.bottom() + fm.ascent() + 1
        p.drawText(bar.left(), y, "0")
        mid = "error / precision"
        p.drawText(bar.center().x() - fm.horizontalAdvance(mid) // 2, y, mid)
        end = "\u2265 1"
        p.drawText(bar.right() - fm.horizontalAdvance(end), y, end)
        p.end()


def swatch(rgba: tuple[float, ...]) -> QtGui.QIcon:
    pm = QtGui.QPixmap(14, 14)
    pm.fill(QtGui.QColor.fromRgbF(rgba[0], rgba[1], rgba[2], 1.0))
    return QtGui.QIcon(pm)


class Viewport3D(QtWidgets.QWidget):
    """Legend/toolbar row over the GL scene. Exposes what it last drew for tests and tools:
    `raw_positions`, `lossy_positions` (J, 3) in display space, `drawn_time`, `frames`."""

    frame_drawn = QtCore.Signal()

    def __init__(self, document: Document, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.scene = SceneView(self)
        self.scene.setBackgroundColor(colors.BACKGROUND)
        self.scene.setMinimumSize(320, 240)
        self.scene.before_paint = self._before_paint
        self.scene.clicked.connect(self._on_click)
        self.scene.frameSwapped.connect(self.frame_drawn)
        self.scene.resized.connect(self._on_resized)
        self.scene.camera_touched.connect(self._on_camera_touched)

        self.grid = gl.GLGridItem(glOptions=TRANSLUCENT)
        self.grid.setColor(colors.GRID)
        self.grid.setDepthValue(-10)
        self.lossy_bones = SoupMesh(OPAQUE, 0)
        self.raw_bones = SoupMesh(TRANSLUCENT_CULLED, 5)
        self.own_shells = gl.GLLinePlotItem(
            glOptions=OPAQUE, mode="lines", width=1.0, color=colors.OWN_SHELL
        )
        self.own_shells.setDepthValue(2)
        self.shells = SoupMesh(SHELLS, 10)
        self.raw_joints = gl.GLScatterPlotItem(glOptions=ON_TOP, pxMode=True)
        self.raw_joints.setDepthValue(20)
        self.lossy_joints = gl.GLScatterPlotItem(glOptions=ON_TOP, pxMode=True)
        self.lossy_joints.setDepthValue(21)
        self.marker = gl.GLScatterPlotItem(glOptions=ON_TOP, pxMode=True)
        self.marker.setDepthValue(30)
        for item in (
            self.grid, self.lossy_bones, self.raw_bones, self.own_shells, self.shells,
            self.raw_joints, self.lossy_joints, self.marker,
        ):  # fmt: skip
            self.scene.addItem(item)
        self.skin = SkinLayer(self.scene)  # the clip's skinned mesh, when it has one

        self._build_toolbar()
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addWidget(self.toolbar)
        lay.addWidget(self.scene, 1)

        self.solver: PoseSolver | None = None
        self.raw_mesh: BoneMesh | None = None
        self.lossy_mesh: BoneMesh | None = None
        self.shell_mesh = ShellMesh(12, 8)
        self.shell_mesh_many = ShellMesh(10, 6)  # "all": many faint shells, fewer faces
        self.clip_positions: Array | None = None
        self.body: Array = np.zeros(0, dtype=np.int64)
        self.raw_matrices: Array | None = None
        self.lossy_matrices: Array | None = None
        self.raw_positions: Array | None = None
        self.lossy_positions: Array | None = None
        self.current_error: Array | None = None
        self.drawn_time: float | None = None
        self.frames = 0
        self._dirty = True
        self._camera_key: tuple[object, ...] | None = None
        self._first_frame = False
        self._pending_frame: bool | None = None
        self._auto_frame: bool | None = None

        d = document
        d.clip_changed.connect(self._on_clip)
        for sig in (d.result_changed, d.time_changed, d.rounding_changed, d.selection_changed):
            sig.connect(self.invalidate)
        d.display_changed.connect(self._on_display)
        self._on_display()
        if d.clip is not None:
            self._on_clip()

    # --- toolbar / legend ---------------------------------------------------------------
    def _build_toolbar(self) -> None:
        self.toolbar = QtWidgets.QWidget(self)
        row = QtWidgets.QHBoxLayout(self.toolbar)
        row.setContentsMargins(4, 2, 4, 2)
        self.show_raw = QtWidgets.QCheckBox("Raw")
        self.show_raw.setIcon(swatch(colors.RAW))
        self.show_raw.setToolTip("Raw (uncompressed) skeleton, drawn as a blue glass sleeve")
        self.show_lossy = QtWidgets.QCheckBox("Lossy")
        self.show_lossy.setIcon(swatch(tuple(colors.ERROR_COLORS[0])))
        self.show_lossy.setToolTip("Decompressed skeleton, solid, coloured by error")
        self.shells_mode = QtWidgets.QComboBox()
        self.shells_mode.addItems(["none", "selected", "all"])
        self.shells_mode.setToolTip(
            "Dominant shells (orange spheres) and each joint's own shell (cyan rings)"
        )
        self.follow = QtWidgets.QCheckBox("Follow")
        self.follow.setToolTip("Keep the selected joint at the centre of the view")
        self.frame_button = QtWidgets.QToolButton()
        self.frame_button.setText("Frame (F)")
        self.frame_button.clicked.connect(self.frame_all)
        self.info = QtWidgets.QLabel()
        self.info.setMinimumWidth(160)
        self.info.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored,
                                QtWidgets.QSizePolicy.Policy.Preferred)  # fmt: skip
        self.color_bar = ColorBar()
        for w in (self.show_raw, self.show_lossy, self.shells_mode, self.follow, self.frame_button):
            w.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
        row.addWidget(self.show_raw)
        row.addWidget(self.show_lossy)
        row.addWidget(QtWidgets.QLabel("Shells:"))
        row.addWidget(self.shells_mode)
        row.addWidget(self.follow)
        row.addWidget(self.frame_button)
        self.skin_controls = SkinControls(self.document)
        row.addWidget(self.skin_controls)
        row.addWidget(self.info, 1)
        row.addWidget(self.color_bar)
        self.show_raw.toggled.connect(lambda on: self.document.update_display(show_raw=on))
        self.show_lossy.toggled.connect(lambda on: self.document.update_display(show_lossy=on))
        self.shells_mode.currentTextChanged.connect(
            lambda s: self.document.update_display(shells=s)
        )
        self.follow.toggled.connect(lambda on: self.document.update_display(follow_selected=on))

    def _on_display(self) -> None:
        disp = self.document.display
        for w, v in ((self.show_raw, disp.show_raw), (self.show_lossy, disp.show_lossy),
                     (self.follow, disp.follow_selected)):  # fmt: skip
            if w.isChecked() != v:
                w.setChecked(v)
        if self.shells_mode.currentText() != disp.shells:
            self.shells_mode.setCurrentText(disp.shells)
        self.invalidate()

    # --- model -> geometry --------------------------------------------------------------
    def invalidate(self) -> None:
        self._dirty = True
        self.scene.update()

    def _on_clip(self) -> None:
        clip = self.document.clip
        if clip is None:
            self.solver = None
            self.invalidate()
            return
        self.raw_positions = self.lossy_positions = None
        self.raw_matrices = self.lossy_matrices = None
        self.skin.set_meshes(clip.meshes)
        # every reader hands over Y-up clips (BVH, glTF and ACL's CMU data alike)
        self.solver = PoseSolver(clip.skeleton.parents, Y_UP_TO_Z_UP)
        step = max(1, clip.num_samples // 200)
        self.clip_positions = self.solver.clip_positions(
            clip.rotations[::step], clip.translations[::step], clip.scales[::step]
        )
        body = body_joints(clip.skeleton.parents, self.clip_positions[0])
        self.body = body
        pts = self.clip_positions[:, body].reshape(-1, 3)
        lo, hi = pts.min(0), pts.max(0)
        size = max(float(np.ptp(self.clip_positions[0, body], axis=0).max()), 1e-6)
        self.raw_mesh = BoneMesh(clip.skeleton.parents, 0.10, 0.028 * size, body)
        self.lossy_mesh = BoneMesh(clip.skeleton.parents, 0.055, 0.016 * size, body)
        spacing = 10.0 ** np.floor(np.log10(size / 4))
        span = float(np.max(hi[:2] - lo[:2])) + 2 * size
        n = max(2, int(np.ceil(span / spacing)))
        n = min(n, 200)
        self.grid.resetTransform()
        self.grid.setSpacing(spacing, spacing)
        self.grid.setSize(n * spacing, n * spacing)
        mid = (lo + hi) / 2
        self.grid.translate(float(mid[0]), float(mid[1]), float(lo[2]))
        # frame the whole motion unless the clip travels far (a walk): then its first pose
        motion = float(np.linalg.norm(hi - lo))
        pose = float(np.linalg.norm(np.ptp(self.clip_positions[0, body], axis=0)))
        # framed at the first paint, and again on resizes until the user moves the camera
        self._pending_frame = self._auto_frame = motion <= 1.6 * pose
        self.invalidate()

    def _on_resized(self) -> None:
        if self._auto_frame is not None:
            self._pending_frame = self._auto_frame

    def _on_camera_touched(self) -> None:
        self._auto_frame = None

    def frame_all(self, whole_clip: bool = False) -> None:
        """Fit the current pose (or, on opening, the whole motion) in view."""
        if self.clip_positions is None:
            return
        pts = self.clip_positions[:, self.body].reshape(-1, 3)
        if not whole_clip:
            now = self.raw_positions if self.raw_positions is not None else self.clip_positions[0]
            pts = now[self.body]
        lo, hi = pts.min(0), pts.max(0)
        centre = (lo + hi) / 2
        radius = max(float(np.linalg.norm(hi - lo)) / 2, 1e-3)
        fov = self.scene.opts["fov"]  # pyqtgraph's fov is horizontal
        aspect = max(self.scene.height(), 1) / max(self.scene.width(), 1)
        half = atan(tan(radians(fov) / 2) * min(1.0, aspect))
        self.scene.setCameraPosition(
            pos=QtGui.QVector3D(*map(float, centre)),
            distance=radius / sin(half),
            elevation=12,
            azimuth=-70 if self._first_frame else self.scene.opts["azimuth"],
        )
        # the sphere bound is loose for a tall thin body: tighten on the projected box
        corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                            for z in (lo[2], hi[2])])  # fmt: skip
        for _ in range(3):
            h = np.c_[corners, np.ones(8)] @ self.scene.mvp().T
            ndc = np.abs(h[:, :2] / np.maximum(h[:, 3:4], 1e-9)).max()
            if not np.isfinite(ndc) or ndc <= 0 or np.any(h[:, 3] <= 0):
                break
            self.scene.opts["distance"] *= 0.5 + 0.5 * ndc / 0.85
        self.invalidate()

    def _before_paint(self) -> None:
        if self._pending_frame is not None:
            whole, self._pending_frame = self._pending_frame, None
            self._rebuild()  # frame the pose as it is now, not as it was
            self._first_frame = True
            self.frame_all(whole_clip=whole)
            self._first_frame = False
            self._dirty = True
        key = (
            self.scene.opts["distance"], self.scene.opts["elevation"], self.scene.opts["azimuth"],
            tuple(self.scene.opts["center"].toTuple()), self.scene.width(), self.scene.height(),
        )  # fmt: skip
        if not self._dirty and key == self._camera_key:
            self.frames += 1
            return
        self._dirty = False
        self._rebuild()
        self._camera_key = (
            self.scene.opts["distance"], self.scene.opts["elevation"], self.scene.opts["azimuth"],
            tuple(self.scene.opts["center"].toTuple()), self.scene.width(), self.scene.height(),
        )  # fmt: skip
        self.frames += 1

    def _rebuild(self) -> None:
        doc = self.document
        disp = doc.display
        items = (self.lossy_bones, self.raw_bones, self.shells, self.own_shells,
                 self.raw_joints, self.lossy_joints, self.marker)  # fmt: skip
        if doc.clip is None or self.solver is None or self.raw_mesh is None:
            for it in items:
                it.setVisible(False)
            self.grid.setVisible(False)
            self.skin.hide()
            return
        self.grid.setVisible(True)
        raw = self.solver.matrices(doc.raw_pose())
        self.raw_matrices = raw
        self.raw_positions = raw[:, :, 3]
        result = doc.result
        lossy = None
        if result is not None and result.clip.num_joints == doc.clip.num_joints:
            lossy = self.solver.matrices(doc.lossy_pose())
        self.lossy_matrices = lossy
        self.lossy_positions = None if lossy is None else lossy[:, :, 3]
        self.drawn_time = doc.time

        sel = doc.selection
        if disp.follow_selected and sel is not None:
            c = self.raw_positions[sel]
            self.scene.opts["center"] = QtGui.QVector3D(*map(float, c))
        eye = self.scene.eye()
        centre = np.array(self.scene.opts["center"].toTuple())
        view_dir = centre - eye
        view_dir /= max(np.linalg.norm(view_dir), 1e-12)

        mesh = self.raw_mesh
        tris = mesh.triangles(raw)
        rgba = np.broadcast_to(np.array(colors.RAW), (mesh.num_bones, 4))
        self.raw_bones.set_soup(tris, mesh.colors(tris, rgba, view_dir, rim=True))
        self.raw_bones.setVisible(disp.show_raw)
        set_points(self.raw_joints, self.raw_positions,
                   np.broadcast_to(np.array(colors.RAW_JOINT), (len(raw), 4)), 5.0)  # fmt: skip
        self.raw_joints.setVisible(disp.show_raw)

        if lossy is not None:
            assert result is not None and self.lossy_mesh is not None
            sk = result.clip.skeleton
            err = shell_error(raw, lossy, sk.shell_distance)
            self.current_error = err
            joint_rgba = colors.error_colors(err / sk.precision)
            m = self.lossy_mesh
            tris = m.triangles(lossy)
            self.lossy_bones.set_soup(tris, m.colors(tris, joint_rgba[m.child], view_dir))
            set_points(self.lossy_joints, self.lossy_positions, joint_rgba, 6.0)
        else:
            self.current_error = None
        self.lossy_bones.setVisible(lossy is not None and disp.show_lossy)
        self.lossy_joints.setVisible(lossy is not None and disp.show_lossy)
        precision = None if lossy is None or result is None else result.clip.skeleton.precision
        self.skin.update(raw, lossy, precision, disp.show_raw_skin, disp.show_lossy_skin,
                         disp.skin_style)  # fmt: skip

        if sel is not None:
            set_points(self.marker, self.raw_positions[sel : sel + 1],
                       np.array([colors.SELECTED]), 13.0)  # fmt: skip
        self.marker.setVisible(sel is not None)

        self._build_shells(disp.shells, sel, eye)
        self._update_info()

    def _build_shells(self, mode: str, sel: int | None, eye: Array) -> None:
        doc = self.document
        if mode == "all":
            idx = np.arange(doc.clip.num_joints)  # type: ignore[union-attr]
        elif mode == "selected" and sel is not None:
            idx = np.array([sel])
        else:
            idx = np.zeros(0, dtype=np.int64)
        assert self.raw_positions is not None
        centres = self.raw_positions[idx]
        result = doc.result
        have_dominant = (
            result is not None
            and len(idx)
            and (result.dominant_shells.distance.shape[0] == self.raw_positions.shape[0])
        )
        if have_dominant:
            assert result is not None
            radii = result.dominant_shells.distance[idx]
            rgba = np.tile(np.array(colors.DOMINANT_SHELL), (len(idx), 1))
            many = len(idx) > 1
            if many:  # many nested shells: keep the skeleton readable through them
                rgba[:, 3] = colors.DOMINANT_SHELL_MANY_ALPHA
            if many:
                soup = self.shell_mesh_many.build(centres, radii, rgba, eye, 0.5)
            else:
                soup = self.shell_mesh.build(centres, radii, rgba, eye)
            self.shells.set_soup(*soup)
        self.shells.setVisible(bool(have_dominant))
        resolved = doc.resolved_joints()
        if len(idx) and resolved is not None:
            set_lines(self.own_shells, ring_lines(centres, resolved.shell_distance[idx], 24))
            self.own_shells.setVisible(True)
        else:
            self.own_shells.setVisible(False)

    def _update_info(self) -> None:
        doc = self.document
        sel = doc.selection
        if sel is None or doc.clip is None:
            self.info.setText(self.skin.readout() if doc.clip is not None else "")
            return
        text = doc.clip.skeleton.names[sel]
        if self.current_error is not None and doc.result is not None:
            p = doc.result.clip.skeleton.precision[sel]
            text += f"  error {self.current_error[sel]:.4g} (precision {p:.4g})"
        skin = self.skin.readout()
        self.info.setText(f"{text}  · {skin}" if skin else text)

    # --- picking ------------------------------------------------------------------------
    def joint_at(self, x: float, y: float, tolerance: float = 10.0) -> int | None:
        if self.raw_positions is None:
            return None
        return pick(self.raw_positions, self.scene.mvp(), x, y,
                    self.scene.width(), self.scene.height(), tolerance)  # fmt: skip

    def screen_position(self, joint: int) -> QtCore.QPoint:
        """Where a joint of the raw skeleton is on the scene widget (for tests and tools)."""
        from app.picking import project

        assert self.raw_positions is not None
        xy, _ = project(self.raw_positions[joint : joint + 1], self.scene.mvp(),
                        self.scene.width(), self.scene.height())  # fmt: skip
        return QtCore.QPoint(round(xy[0, 0]), round(xy[0, 1]))

    def _on_click(self, x: float, y: float) -> None:
        j = self.joint_at(x, y)
        if j is not None:
            self.document.set_selection(j)

    def release_gl(self) -> None:
        """Free the GL buffers while the context still exists (at window close)."""
        scene = self.scene
        if not scene.isValid():
            return
        scene.makeCurrent()
        for item in scene.items:
            for name, value in vars(item).items():
                if name.startswith(("m_vbo", "m_ibo")) and hasattr(value, "destroy"):
                    value.destroy()
        scene.doneCurrent()

    def grab_scene(self) -> Array:
        """(H, W, 4) RGBA uint8 of the scene as last drawn (pixels, for checks and shots)."""
        img = self.scene.grabFramebuffer().convertToFormat(QtGui.QImage.Format.Format_RGBA8888)
        h, w = img.height(), img.width()
        arr = np.frombuffer(img.constBits(), dtype=np.uint8, count=img.sizeInBytes())
        return arr.reshape(h, img.bytesPerLine() // 4, 4)[:, :w].copy()
