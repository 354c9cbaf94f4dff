"""The 3D view: raw and lossy skeletons overlaid, bones coloured by error, dominant shells.

It only draws the document. The poses and their error come from `document.shown_pose()` (the
same numbers every readout quotes); geometry is rebuilt lazily right before a paint (so a burst
of time changes costs one frame) from the Qt-free builders in `app.model.skeleton_mesh`, into a few
merged GL items whose buffers are overwritten in place. The camera keeps the character in view
(`app.model.camera`): it follows the root, frames the whole clip, follows the selection, or is left
alone; named views (front, side, top) are orthographic, as in Blender with auto perspective.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph.opengl as gl
from PySide6 import QtCore, QtGui, QtWidgets

from app.model import camera, colors
from app.model.document import Document
from app.model.error_scale import describe
from app.model.picking import pick, project
from app.model.skeleton_mesh import (
    BoneMesh,
    ShellMesh,
    body_joints,
    magnify,
    ring_lines,
    silhouette_circles,
)
from app.model.up_axis import AXES, sampled_positions, to_display, up_axis
from app.qt.elided_label import ElidedLabel
from app.scene.color_bar import ColorBar
from app.scene.gl_items import (
    GHOST,
    LINES,
    ON_TOP,
    SHELLS,
    SOLID,
    SoupMesh,
    lines,
    points,
    set_lines,
    set_points,
)
from app.scene.scene_view import SceneView
from app.scene.skin_item import SkinControls, SkinLayer, framing_points

Array = np.ndarray

FRAMING_SAMPLES = 6000  # poses looked at to keep a clip in view (every one for real clips)
MAGNIFY_STEPS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
VIEW_TITLES = {
    "front": "Front",
    "back": "Back",
    "right": "Right",
    "left": "Left",
    "top": "Top",
    "bottom": "Bottom",
    "perspective": "Perspective",
}
GIZMO_SIZE = 34.0  # the axis gizmo's arm, in pixels
AXIS_COLOURS = {"X": (232, 72, 85), "Y": (120, 200, 40), "Z": (60, 140, 255)}


def nice_spacing(x: float) -> float:
    """The 1-2-5 step nearest to `x` (grid lines at round distances)."""
    x = max(float(x), 1e-9)
    exp = 10.0 ** np.floor(np.log10(x))
    return float(min((1.0, 2.0, 5.0, 10.0), key=lambda m: abs(np.log(m * exp / x))) * exp)


def swatch(rgba: tuple[float, ...]) -> QtGui.QIcon:
    pm = QtGui.QPixmap(14, 14)
    pm.fill(QtGui.QColor.fromRgbF(rgba[0], rgba[1], rgba[2], 1.0))
    return QtGui.QIcon(pm)


def all_shells_alpha(count: int) -> float:
    """Opacity of each outline when `count` shells are drawn at once: a handful keep half
    their strength, a hundred-joint rig a tenth, so together they never hide the character."""
    return float(np.clip(1.6 / np.sqrt(max(count, 1)), 0.1, 0.5))


class Viewport3D(QtWidgets.QWidget):
    """Toolbar and readout over the GL scene. Exposes what it last drew for tests and tools:
    `raw_positions`, `lossy_positions` (J, 3) in display space (Z up; lossy as magnified),
    `current_error` (J,), `drawn_time`, `frames`, `view_name`, `up`."""

    frame_drawn = QtCore.Signal()
    view_changed = QtCore.Signal()

    def __init__(self, document: Document, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.scene = SceneView()  # a GL window of its own: see app.scene.scene_view
        self.scene_box = self.scene.embed(self)  # the widget that holds it in the layout
        self.scene_box.setMinimumSize(320, 240)
        self.scene.setBackgroundColor(colors.BACKGROUND)
        # a click in the view gives the keyboard to this widget, which leaves every key to
        # the window (arrows step time, view keys and Ctrl+Z are the window's actions)
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.ClickFocus)
        self.scene.pressed.connect(lambda: self.setFocus(QtCore.Qt.FocusReason.MouseFocusReason))
        self.scene.before_paint = self._before_paint
        self.scene.overlay = self._paint_overlay
        self.scene.clicked.connect(self._on_click)
        self.scene.frameSwapped.connect(self.frame_drawn)
        self.scene.resized.connect(self._on_resized)
        self.scene.camera_touched.connect(self._on_camera_touched)

        self.grid = gl.GLGridItem(glOptions=LINES)
        self.grid.setColor(colors.GRID)
        self.grid.setDepthValue(-10)
        self.lossy_bones = SoupMesh(SOLID, 0)
        self.raw_bones = SoupMesh(GHOST, 5)
        self.own_shells = lines(LINES, 2, 1.0, colors.OWN_SHELL)
        self.shells = SoupMesh(SHELLS, 10)
        self.shell_outlines = lines(ON_TOP, 11, 1.0, colors.DOMINANT_SHELL_OUTLINE)
        self.raw_joints = points(ON_TOP, 20)
        self.roots = points(ON_TOP, 21)
        self.lossy_joints = points(ON_TOP, 22)
        self.marker = points(ON_TOP, 30)
        for item in (
            self.grid,
            self.lossy_bones,
            self.raw_bones,
            self.own_shells,
            self.shells,
            self.shell_outlines,
            self.raw_joints,
            self.roots,
            self.lossy_joints,
            self.marker,
        ):
            self.scene.addItem(item)
        self.skin = SkinLayer(self.scene)  # the clip's skinned mesh, when it has one

        self._build_toolbar()
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.toolbar)
        lay.addWidget(self.readout_row)
        lay.addWidget(self.scene_box, 1)

        self.up = "Y"
        self.up_reason = ""
        self.rotation = to_display("Y")
        self._geometry_clip: object | None = None  # the clip the meshes below were built for
        self.raw_mesh: BoneMesh | None = None
        self._raw_drawn: tuple | None = None  # (mesh, raw matrices, view rotation) drawn
        self.lossy_mesh: BoneMesh | None = None
        self.shell_mesh = ShellMesh(16, 10)
        self.body: Array = np.zeros(0, dtype=np.int64)
        self.root_joints: Array = np.zeros(0, dtype=np.int64)
        self.clip_positions: Array | None = None  # (S, J, 3) display space
        self.framing: dict[str, camera.Framing] = {}
        self.raw_matrices = self.lossy_matrices = None
        self.raw_positions: Array | None = None
        self.lossy_positions: Array | None = None
        self.current_error: Array | None = None
        self.drawn_time: float | None = None
        self.frames = 0
        self.view_name = "perspective"
        self._auto_ortho = False  # ortho because a named view asked for it
        self._auto_distance = True  # fit the distance until the user zooms
        self._pan_offset = np.zeros(3)
        self._base_target = np.zeros(3)
        self._dirty = True
        self._camera_key: tuple | None = None
        self._pending_frame = False
        # extra layers (app.scene.compare_layer): called after each rebuild and each overlay
        self.after_rebuild: list[Callable[[], None]] = []
        self.overlays: list[Callable[[QtGui.QPainter], None]] = []

        d = document
        d.clip_changed.connect(self._on_clip)
        for sig in (
            d.result_changed,
            d.time_changed,
            d.rounding_changed,
            d.selection_changed,
        ):
            sig.connect(self.invalidate)
        d.settings_changed.connect(self._on_settings)
        d.display_changed.connect(self._on_display)
        self._last_display = d.display
        self._on_display()
        if d.clip is not None:
            self._on_clip()

    # --- toolbar / readout --------------------------------------------------------------
    def _build_toolbar(self) -> None:
        self.toolbar = QtWidgets.QWidget(self)
        row = QtWidgets.QHBoxLayout(self.toolbar)
        row.setContentsMargins(4, 2, 4, 0)
        row.setSpacing(6)
        self.show_raw = QtWidgets.QCheckBox("Raw")
        self.show_raw.setIcon(swatch(colors.RAW))
        self.show_raw.setToolTip("Raw (uncompressed) skeleton, a translucent blue sleeve (R)")
        self.show_lossy = QtWidgets.QCheckBox("Lossy")
        self.show_lossy.setIcon(swatch(colors.LOSSY_SWATCH))
        self.show_lossy.setToolTip("Decompressed skeleton, solid, coloured by its error (E)")
        self.shells_mode = QtWidgets.QComboBox()
        self.shells_mode.addItems(["none", "selected", "all"])
        self.shells_mode.setToolTip(
            "Dominant shells (orange spheres, outlined) and each joint's own shell (cyan rings)"
        )
        self.camera_mode = QtWidgets.QComboBox()
        for mode in camera.MODES:
            self.camera_mode.addItem(camera.MODE_LABELS[mode], mode)
        self.camera_mode.setToolTip(
            "Follow root: the camera rides with the hips; Whole clip: one fixed framing of all "
            "the motion; Selection: keeps the selected joint centred; Free: the camera stays "
            "where you put it. F frames again."
        )
        self.magnify = QtWidgets.QComboBox()
        for k in MAGNIFY_STEPS:
            self.magnify.addItem(f"\u00d7{k}", k)
        self.magnify.setToolTip(
            "Error magnifier: the lossy skeleton is drawn as raw + k \u00d7 (lossy \u2212 raw), so "
            "a 0.01 cm error shows as 10 cm at \u00d71000. Colours keep the true error."
        )
        self.frame_button = QtWidgets.QToolButton()
        self.frame_button.setText("Frame")
        self.frame_button.setToolTip("Frame the clip again (F)")
        self.frame_button.clicked.connect(self.frame_all)
        for w in (
            self.show_raw,
            self.show_lossy,
            self.shells_mode,
            self.camera_mode,
            self.magnify,
            self.frame_button,
        ):
            w.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
        row.addWidget(self.show_raw)
        row.addWidget(self.show_lossy)
        row.addSpacing(4)
        row.addWidget(QtWidgets.QLabel("Shells"))
        row.addWidget(self.shells_mode)
        row.addWidget(self.camera_mode)  # "Follow root", "Whole clip": no label needed
        row.addWidget(QtWidgets.QLabel("Error"))
        row.addWidget(self.magnify)
        row.addWidget(self.frame_button)
        row.addStretch(1)
        self.show_raw.toggled.connect(lambda on: self.document.update_display(show_raw=on))
        self.show_lossy.toggled.connect(lambda on: self.document.update_display(show_lossy=on))
        self.shells_mode.currentTextChanged.connect(
            lambda s: self.document.update_display(shells=s)
        )
        self.camera_mode.currentIndexChanged.connect(
            lambda i: self.document.update_display(camera=self.camera_mode.itemData(i))
        )
        self.magnify.currentIndexChanged.connect(
            lambda i: self.document.update_display(magnify=float(self.magnify.itemData(i)))
        )

        self.readout_row = QtWidgets.QWidget(self)
        r2 = QtWidgets.QHBoxLayout(self.readout_row)
        r2.setContentsMargins(6, 0, 4, 2)
        # one line at any width (a wrapped line moved the 3D view); the whole in its tooltip
        self.info = ElidedLabel("Error of the selected joint at the pose on screen")
        self.color_bar = ColorBar()
        # the skin's menu beside the skin's readout, not in the toolbar: the toolbar's width
        # is the 3D column's least width, which the joint names' dock pays for
        self.skin_controls = SkinControls(self.document)  # hidden for clips without a mesh
        r2.addWidget(self.skin_controls)
        r2.addWidget(self.info, 1)
        r2.addWidget(self.color_bar)

    def _on_display(self) -> None:
        disp = self.document.display
        for w, v in ((self.show_raw, disp.show_raw), (self.show_lossy, disp.show_lossy)):
            if w.isChecked() != v:
                w.setChecked(v)
        if self.shells_mode.currentText() != disp.shells:
            self.shells_mode.setCurrentText(disp.shells)
        i = self.camera_mode.findData(disp.camera)
        if i >= 0 and i != self.camera_mode.currentIndex():
            self.camera_mode.setCurrentIndex(i)
        k = int(np.argmin([abs(np.log(s / max(disp.magnify, 1e-9))) for s in MAGNIFY_STEPS]))
        if k != self.magnify.currentIndex():
            self.magnify.setCurrentIndex(k)
        last, self._last_display = self._last_display, disp
        if disp.up_axis != last.up_axis and self.document.clip is not None:
            self._on_clip()  # a new up axis re-frames everything
            return
        if disp.camera != last.camera:
            self._pan_offset = np.zeros(3)
            self._auto_distance = True
        self.invalidate()

    # --- model -> geometry --------------------------------------------------------------
    def invalidate(self) -> None:
        self._dirty = True
        self.scene.update()

    def _on_settings(self) -> None:
        """A tuning edit changes nothing drawn but the selected joint's own shell (colours
        and readouts come with the result): no frame for it otherwise, so the new result
        does not wait behind a redundant one."""
        if self.document.selection is not None and self.document.display.shells != "none":
            self.invalidate()

    def _on_clip(self) -> None:
        doc = self.document
        clip = doc.clip
        self._geometry_clip = clip
        self.raw_positions = self.lossy_positions = self.current_error = None
        self.raw_matrices = self.lossy_matrices = None
        self.skin.set_meshes(clip.meshes if clip is not None else ())
        if clip is None:
            self.raw_mesh = self.lossy_mesh = None
            self.clip_positions = None
            self.invalidate()
            return
        file_pos = sampled_positions(clip, FRAMING_SAMPLES)  # every sample of real clips
        override = doc.display.up_axis if doc.display.up_axis in AXES else None
        self.up, self.up_reason = up_axis(clip, doc.path, override, file_pos)
        self.rotation = to_display(self.up)
        self.clip_positions = file_pos @ self.rotation.T
        parents = clip.skeleton.parents
        first = self.clip_positions[0]
        self.body = body_joints(parents, first)
        self.root_joints = np.flatnonzero(np.asarray(parents) < 0)
        size = float(np.ptp(first[self.body], axis=0).max())
        if not size > 1e-6:  # 1 joint or a zero-size pose: its motion's size, else 100 cm
            motion = float(np.ptp(self.clip_positions.reshape(-1, 3), axis=0).max())
            size = motion if motion > 1e-6 else 100.0
        self.joint_size = size
        rest = np.zeros((clip.num_joints, 3, 4))
        rest[:, :, 3] = first
        self.raw_mesh = BoneMesh(parents, 0.11, 0.030 * size, rest=rest)
        self.lossy_mesh = BoneMesh(parents, 0.075, 0.021 * size, rest=rest)
        hips = camera.body_root(parents, self.body)
        framed = self.clip_positions  # the skin too, when there is one: it reaches farther
        skin_pos = framing_points(clip, FRAMING_SAMPLES)
        if skin_pos is not None:
            framed = np.concatenate([framed, skin_pos @ self.rotation.T], axis=1)
        self.framing = {
            "follow": camera.follow_framing(framed, hips),
            "clip": camera.clip_framing(framed),
        }
        self._fit_grid()
        self._pan_offset = np.zeros(3)
        self._auto_distance = True
        self._pending_frame = True
        # a new clip starts from a clean view: the named one in use, else the 3/4 view
        azimuth, elevation = camera.VIEWS[self.view_name]
        self.scene.opts["azimuth"], self.scene.opts["elevation"] = azimuth, elevation
        self.view_changed.emit()
        self.invalidate()

    def _fit_grid(self) -> None:
        """A floor under the whole motion, in round steps of the character's size."""
        assert self.clip_positions is not None
        pts = self.clip_positions.reshape(-1, 3)
        lo, hi = pts.min(0), pts.max(0)
        spacing = nice_spacing(self.joint_size / 8)  # about 20 cm for a person
        span = float(np.max(hi[:2] - lo[:2])) + 2 * self.joint_size
        n = min(max(2, int(np.ceil(span / spacing))), 400)
        self.grid.resetTransform()
        self.grid.setSize(0, 0)  # each call rebuilds the lines: never new spacing x old size
        self.grid.setSpacing(spacing, spacing)
        self.grid.setSize(n * spacing, n * spacing)
        mid = (lo + hi) / 2
        self.grid.translate(float(mid[0]), float(mid[1]), float(lo[2]))

    def _on_resized(self) -> None:
        self.invalidate()  # the fitted distance depends on the aspect ratio

    def _on_camera_touched(self, kind: str) -> None:
        if kind == "zoom":
            self._auto_distance = False
        elif kind == "pan":
            c = self.scene.opts["center"]
            self._pan_offset = np.array([c.x(), c.y(), c.z()]) - self._base_target
        elif kind == "orbit":
            if self._auto_ortho:  # leaving a named view goes back to perspective
                self._auto_ortho = False
                self.scene.ortho = False
            if self.view_name != "perspective":
                self.view_name = "perspective"
                self.view_changed.emit()
            else:
                self.view_name = "perspective"
        self.invalidate()

    # --- camera commands ----------------------------------------------------------------
    def frame_all(self) -> None:
        """Frame the clip again: target and distance back to automatic, no pan."""
        self._pan_offset = np.zeros(3)
        self._auto_distance = True
        self.invalidate()

    def set_view(self, name: str) -> None:
        """A named view: front, back, right, left, top, bottom (orthographic) or perspective."""
        azimuth, elevation = camera.VIEWS[name]
        self.scene.opts["azimuth"] = azimuth
        self.scene.opts["elevation"] = elevation
        self._auto_ortho = name in camera.ORTHO_VIEWS
        self.scene.ortho = self._auto_ortho
        self.view_name = name
        self.view_changed.emit()
        self.invalidate()

    def set_ortho(self, on: bool) -> None:
        self.scene.ortho = bool(on)
        self._auto_ortho = False
        self.view_changed.emit()
        self.invalidate()

    def toggle_ortho(self) -> None:
        self.set_ortho(not self.scene.ortho)

    def _framing(self) -> camera.Framing | None:
        mode = self.document.display.camera
        return self.framing.get("clip" if mode == "clip" else "follow")

    def _update_camera(self, t: float) -> None:
        framing = self._framing()
        if framing is None or self.raw_positions is None:
            return
        mode = self.document.display.camera
        sel = self.document.selection
        rate = self.document.clip.sample_rate if self.document.clip is not None else 1.0
        if mode == "follow":
            base = framing.target_at(t * rate)
        elif mode == "clip":
            base = framing.targets[0]
        elif mode == "selection" and sel is not None:
            base = self.raw_positions[sel]
        elif self._pending_frame:  # a free camera starts where follow would put it
            base = framing.target_at(t * rate)
        else:
            return
        self._base_target = np.asarray(base, dtype=np.float64)
        centre = self._base_target + self._pan_offset
        self.scene.opts["center"] = QtGui.QVector3D(*map(float, centre))
        if self._auto_distance:
            s = self.scene
            radius = framing.radius  # a single point (1 joint, standing still): half its size
            radius = radius if radius > 1e-3 * self.joint_size else 0.5 * self.joint_size
            s.opts["distance"] = camera.fit_distance(
                radius, s.opts["fov"], s.width(), s.height(), s.ortho
            )

    def _before_paint(self) -> None:
        s = self.scene
        key = (
            s.opts["distance"],
            s.opts["elevation"],
            s.opts["azimuth"],
            tuple(s.opts["center"].toTuple()),
            s.width(),
            s.height(),
            s.ortho,
        )
        fresh = self._geometry_clip is self.document.clip
        if not self._dirty and key == self._camera_key and fresh:
            self.frames += 1
            return
        self._dirty = False
        self._rebuild()
        self._camera_key = (
            s.opts["distance"],
            s.opts["elevation"],
            s.opts["azimuth"],
            tuple(s.opts["center"].toTuple()),
            s.width(),
            s.height(),
            s.ortho,
        )
        self.frames += 1

    def sync(self) -> None:
        """Bring geometry and camera up to date with the document now, without painting
        (what each paint does first; tools and tests call it to step through time fast)."""
        self._dirty = False
        self._rebuild()

    def _rebuild(self) -> None:
        doc = self.document
        if self._geometry_clip is not doc.clip:
            # a repaint came before clip_changed reached us (another listener's relayout
            # paints the GL widget at once): never pose the old clip's meshes with the new
            # clip's joints
            self._on_clip()
        disp = doc.display
        items = (
            self.lossy_bones,
            self.raw_bones,
            self.shells,
            self.shell_outlines,
            self.own_shells,
            self.raw_joints,
            self.roots,
            self.lossy_joints,
            self.marker,
        )
        shown = doc.shown_pose()
        if shown is None or self.raw_mesh is None:
            for it in items:
                it.setVisible(False)
            self.grid.setVisible(False)
            self.skin.hide()
            self._update_info()
            for hook in self.after_rebuild:
                hook()
            return
        self.grid.setVisible(True)
        u = self.rotation
        raw = u @ shown.raw  # (J, 3, 4): turn both the axes and the position columns
        self.raw_matrices = raw
        self.raw_positions = raw[:, :, 3]
        lossy = None if shown.lossy is None else u @ shown.lossy
        if lossy is not None and disp.magnify != 1.0:
            lossy = magnify(raw, lossy, disp.magnify)
        self.lossy_matrices = lossy
        self.lossy_positions = None if lossy is None else lossy[:, :, 3]
        self.current_error = shown.error
        self.drawn_time = doc.time

        self._update_camera(doc.time)
        self._pending_frame = False
        s = self.scene
        view_rot = s.view_rotation()
        sel = doc.selection
        n = len(raw)

        mesh = self.raw_mesh
        drawn = self._raw_drawn
        if not (  # a new result at the same time: the raw skeleton's buffers stay as they are
            drawn is not None
            and drawn[0] is mesh
            and np.array_equal(drawn[1], raw)
            and np.array_equal(drawn[2], view_rot)
        ):
            rgba = np.broadcast_to(np.array(colors.RAW), (mesh.num_bones, 4))
            tris, normals = mesh.posed(raw)
            self.raw_bones.set_soup(tris, mesh.colors(normals, rgba, view_rot, ghost=True))
            set_points(
                self.raw_joints,
                self.raw_positions,
                np.broadcast_to(np.array(colors.RAW_JOINT), (n, 4)),
                5.0,
            )
            roots = self.root_joints
            set_points(
                self.roots,
                self.raw_positions[roots],
                np.broadcast_to(np.array(colors.ROOT), (len(roots), 4)),
                11.0,
            )
            self._raw_drawn = (mesh, raw.copy(), view_rot.copy())
        self.raw_bones.setVisible(disp.show_raw)
        self.raw_joints.setVisible(disp.show_raw)
        self.roots.setVisible(disp.show_raw)

        if lossy is not None and shown.fraction is not None:
            assert self.lossy_mesh is not None
            joint_rgba = colors.error_colors(shown.fraction)
            m = self.lossy_mesh
            tris, normals = m.posed(lossy)
            self.lossy_bones.set_soup(tris, m.colors(normals, joint_rgba[m.child], view_rot))
            set_points(self.lossy_joints, self.lossy_positions, joint_rgba, 6.0)
        self.lossy_bones.setVisible(lossy is not None and disp.show_lossy)
        self.lossy_joints.setVisible(lossy is not None and disp.show_lossy)
        # the skin: true (unmagnified) lossy pose in, magnified like the bones when drawn
        true_lossy = None if shown.lossy is None else u @ shown.lossy
        self.skin.update(
            raw,
            true_lossy,
            shown.precision,
            disp.show_raw_skin,
            disp.show_lossy_skin,
            disp.skin_style,
            disp.magnify,
        )

        if sel is not None:
            set_points(
                self.marker, self.raw_positions[sel : sel + 1], np.array([colors.SELECTED]), 13.0
            )
        self.marker.setVisible(sel is not None)

        self._build_shells(disp.shells, sel)
        self._update_info()
        for hook in self.after_rebuild:
            hook()

    def _build_shells(self, mode: str, sel: int | None) -> None:
        doc = self.document
        assert self.raw_positions is not None
        n = len(self.raw_positions)
        if mode == "all":
            idx = np.arange(n)
        elif mode == "selected" and sel is not None:
            idx = np.array([sel])
        else:
            idx = np.zeros(0, dtype=np.int64)
        centres = self.raw_positions[idx]
        result = doc.result
        shells = result.costs.dominant_shells if result and result.costs else None
        have_dominant = bool(len(idx)) and doc.has_lossy() and shells is not None
        eye = self.scene.eye()
        if self.scene.ortho:  # parallel rays: faces and outlines as seen from very far away
            eye = np.array(self.scene.opts["center"].toTuple()) - self.scene.view_direction() * (
                1e4 * self.scene.opts["distance"]
            )
        many = len(idx) > 1
        if have_dominant:
            assert shells is not None
            radii = shells.distance[idx]
            if not many:  # one shell: a translucent ball with its outline
                rgba = np.tile(np.array(colors.DOMINANT_SHELL), (1, 1))
                self.shells.set_soup(*self.shell_mesh.build(centres, radii, rgba, eye))
            # every shell's outline; many nested balls would only fog the skeleton over, and
            # many bright rings hide the character: with all shells on they are faint (the
            # more, the fainter), the selected joint's stays bright
            alpha = np.full(len(idx), all_shells_alpha(len(idx)) if many else 1.0)
            if many and sel is not None:
                alpha[idx == sel] = 1.0
            self._outline_shells(centres, radii, eye, alpha)
        self.shells.setVisible(have_dominant and not many)
        self.shell_outlines.setVisible(have_dominant)
        # the joint's own shell (where its error is measured): the selected joint's only,
        # a hundred sets of rings would hide the skeleton
        resolved = doc.resolved_joints()
        own = mode != "none" and sel is not None and resolved is not None
        if own:
            assert resolved is not None and sel is not None
            ring = ring_lines(self.raw_positions[sel : sel + 1], resolved.shell_distance[[sel]], 32)
            set_lines(self.own_shells, ring)
        self.own_shells.setVisible(own)

    def _outline_shells(self, centres: Array, radii: Array, eye: Array, alpha: Array) -> None:
        """Outlines with as many segments as their size on screen needs (software GL pays
        per segment): small circles 16, large ones 64; `alpha` (N,) scales each one's
        opacity."""
        s = self.scene
        ortho_dir = s.view_direction() if s.ortho else None
        if s.ortho:
            dist = np.full(len(centres), float(s.opts["distance"]))
        else:
            dist = np.linalg.norm(centres - eye, axis=1)
        pixel = dist * 2.0 * np.tan(np.radians(s.opts["fov"]) / 2.0) / max(s.width(), 1)
        big = radii / np.maximum(pixel, 1e-12) > 60.0
        r, g, b, a = colors.DOMINANT_SHELL_OUTLINE
        parts, tints = [], []
        for level in np.unique(alpha):
            for sel, n in ((~big, 16), (big, 64)):
                group = sel & (alpha == level)
                if group.any():
                    pts = silhouette_circles(centres[group], radii[group], eye, ortho_dir, n)
                    parts.append(pts)
                    tints.append(np.tile([r, g, b, a * level], (len(pts), 1)))
        pts = np.concatenate(parts) if parts else np.zeros((0, 3), np.float32)
        rgba = np.concatenate(tints) if tints else np.zeros((0, 4))
        set_lines(self.shell_outlines, pts, rgba)

    def _update_info(self) -> None:
        doc = self.document
        shown = doc.shown_pose()
        sel = doc.selection
        skin = self.skin.readout()  # empty without a skin drawn
        if sel is None or doc.clip is None or shown is None:
            text = "Click a joint to see its error" if doc.clip is not None else ""
            self.info.setText(f"{text} \u00b7 {skin}" if skin and text else text)
            self.color_bar.set_budget(None)
            return
        name = doc.clip.skeleton.names[sel]
        if shown.error is None or shown.precision is None:
            self.info.setText(f"{name}  (compressing\u2026)")
            self.color_bar.set_budget(None)
            return
        text = f"{name}  {describe(shown.error[sel], shown.precision[sel])}"
        self.info.setText(f"{text} \u00b7 {skin}" if skin else text)
        self.color_bar.set_budget(float(shown.precision[sel]))

    # --- overlay: view name, up axis and the axis gizmo ----------------------------------
    def _paint_overlay(self, p: QtGui.QPainter) -> None:
        if self.document.clip is None:
            return
        s = self.scene
        fm = p.fontMetrics()
        title = VIEW_TITLES.get(self.view_name, "Perspective")
        proj = "Orthographic" if s.ortho else "Perspective"
        head = title if title == proj else f"{title} \u00b7 {proj}"
        mode = camera.MODE_LABELS.get(self.document.display.camera, "")
        lines_ = [head, f"{self.up} up ({self.up_reason}) \u00b7 {mode}", *self.clip_notes()]
        k = self.document.display.magnify
        p.setPen(QtGui.QColor(225, 228, 232))
        y = 6 + fm.ascent()
        for text in lines_:
            p.drawText(QtCore.QPointF(8, y), text)
            y += fm.height()
        if k != 1.0 and self.document.has_lossy():
            p.setPen(QtGui.QColor(255, 170, 60))
            p.drawText(QtCore.QPointF(8, y), f"Lossy error magnified \u00d7{k:g}")
        self._paint_gizmo(p)
        for paint in self.overlays:
            paint(p)

    def clip_notes(self) -> list[str]:
        """Overlay lines about what the skeleton is: an additive clip is drawn applied to
        its base (the pose a game sees), and the base is named."""
        clip = self.document.clip
        base = None if clip is None else clip.additive
        if base is None:
            return []
        named = f" '{base.name}'" if base.name else ""
        return [f"Additive ({base.format}) applied to its base{named}, {base.num_samples} samples"]

    def gizmo_rect(self) -> QtCore.QRectF:
        """The square the axis gizmo can reach, bottom left (its tips' discs included)."""
        size, tip = GIZMO_SIZE, 8.0
        centre = QtCore.QPointF(14 + size, self.scene.height() - 14 - size)
        reach = size + tip
        return QtCore.QRectF(centre.x() - reach, centre.y() - reach, 2 * reach, 2 * reach)

    def _paint_gizmo(self, p: QtGui.QPainter) -> None:
        """File axes as seen from the camera, bottom left, nearest drawn last."""
        rot = self.scene.view_rotation() @ self.rotation  # file axes -> view space
        size = GIZMO_SIZE
        centre = QtCore.QPointF(14 + size, self.scene.height() - 14 - size)
        order = np.argsort(rot[2])  # far (most negative z) first
        fm = p.fontMetrics()
        for i in order:
            name = AXES[i]
            v = rot[:, i]
            tip = centre + QtCore.QPointF(v[0] * size, -v[1] * size)
            colour = QtGui.QColor(*AXIS_COLOURS[name])
            p.setPen(QtGui.QPen(colour, 2.2))
            p.drawLine(centre, tip)
            p.setBrush(colour)
            p.drawEllipse(tip, 8.0, 8.0)
            p.setPen(QtGui.QColor(20, 22, 26))
            w = fm.horizontalAdvance(name)
            p.drawText(QtCore.QPointF(tip.x() - w / 2, tip.y() + fm.ascent() / 2 - 1), name)
        p.setBrush(QtCore.Qt.BrushStyle.NoBrush)

    # --- picking ------------------------------------------------------------------------
    def joint_at(self, x: float, y: float, tolerance: float = 10.0) -> int | None:
        if self.raw_positions is None:
            return None
        return pick(
            self.raw_positions,
            self.scene.mvp(),
            x,
            y,
            self.scene.width(),
            self.scene.height(),
            tolerance,
        )

    def project(self, positions: Array) -> tuple[Array, Array]:
        """Widget pixels (N, 2) and clip-space w (N,) of display-space points, as drawn."""
        return project(positions, self.scene.mvp(), self.scene.width(), self.scene.height())

    def screen_position(self, joint: int) -> QtCore.QPoint:
        """Where a joint of the raw skeleton is in the scene's window (for tests and tools)."""
        assert self.raw_positions is not None
        xy, _ = self.project(self.raw_positions[joint : joint + 1])
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

    def grab_scene(self, overlay: bool = True) -> Array:
        """(H, W, 4) RGBA uint8 of the scene drawn now (pixels, for checks and shots);
        `overlay=False` leaves out the view name and the axis gizmo."""
        saved = self.scene.overlay
        if not overlay:
            self.scene.overlay = None
        try:
            img = self.scene.grabFramebuffer()
        finally:
            self.scene.overlay = saved
        img = img.convertToFormat(QtGui.QImage.Format.Format_RGBA8888)
        h, w = img.height(), img.width()
        arr = np.frombuffer(img.constBits(), dtype=np.uint8, count=img.sizeInBytes())
        return arr.reshape(h, img.bytesPerLine() // 4, 4)[:, :w].copy()
