"""The character's skin in the 3D view: the raw and the lossy mesh, coloured by true error.

Each skin is one merged GL mesh (every mesh of the clip): its triangles are uploaded once,
its positions, normals and colours are overwritten in place each frame. Skinning is the
codec's (codec.measure.skinning.posed_skin: batched numpy, about half a millisecond for CesiumMan's
3,273 vertices), normals are the bind normals computed once and moved by each vertex's
blended matrix, and a small shader lights them per vertex with a headlight. Software GL is
bound by the pixels it fills, so each mesh is turned outward once (by the sign of its
volume: files disagree on winding), only front faces are drawn, once per pixel. The lossy
skin's colour is each vertex's true error (raw against lossy, on screen now) over the
precision of its strongest joint, on the very scale the bones use (app.model.error_scale); with
the error magnifier its vertices are drawn at raw + k (lossy - raw) while the colours keep
the true error.

Styles: translucent (both skins see-through, bones visible inside), solid (the lossy skin
opaque, the raw one a ghost pushed behind it, so it shows only where the lossy skin sinks
in) and wireframe.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph.opengl as gl
from OpenGL import GL
from pyqtgraph.opengl import shaders
from pyqtgraph.opengl.GLViewWidget import GLViewMixin
from pyqtgraph.opengl.items.GLMeshItem import DirtyFlag as MeshDirty
from PySide6 import QtCore, QtGui, QtWidgets

from app.model import colors
from app.model.document import Document
from app.model.error_scale import format_cm, format_percent
from codec.measure.skinning import posed_skin, skin_vertices
from codec.model.clip import Clip
from codec.model.mesh import Skin, SkinnedMesh, skin_of
from codec.model.transforms import object_space

Array = np.ndarray

STYLES = ("translucent", "solid", "wireframe")
STYLE_LABELS = {"translucent": "Translucent", "solid": "Solid", "wireframe": "Wireframe"}
RAW_SKIN = (0.45, 0.68, 1.0)
ALPHA = {  # (raw, lossy) per style
    "translucent": (0.16, 0.42),
    "solid": (0.30, 1.0),
    "wireframe": (0.35, 0.85),
}
# software GL blends every sample of a multisampled pixel: the skin, a large surface, is
# drawn once per pixel instead (as the shells are), which halves its cost on llvmpipe
MULTISAMPLE = False
_BLEND = (
    "glBlendFuncSeparate",
    (GL.GL_SRC_ALPHA, GL.GL_ONE_MINUS_SRC_ALPHA, GL.GL_ONE, GL.GL_ONE_MINUS_SRC_ALPHA),
)
SEE_THROUGH = {
    GL.GL_DEPTH_TEST: True,
    GL.GL_BLEND: True,
    GL.GL_CULL_FACE: True,
    "glCullFace": (GL.GL_BACK,),
    "glDepthMask": (GL.GL_FALSE,),
    _BLEND[0]: _BLEND[1],
    GL.GL_MULTISAMPLE: MULTISAMPLE,
}
OPAQUE = {
    GL.GL_DEPTH_TEST: True,
    GL.GL_BLEND: False,
    GL.GL_CULL_FACE: True,
    "glCullFace": (GL.GL_BACK,),
    "glDepthMask": (GL.GL_TRUE,),
    GL.GL_MULTISAMPLE: MULTISAMPLE,
}
WIRE = {**SEE_THROUGH, GL.GL_CULL_FACE: False}  # a wireframe shows its far side too
BEHIND = {**SEE_THROUGH, GL.GL_POLYGON_OFFSET_FILL: True, "glPolygonOffset": (2.0, 4.0)}
# draw order among the scene's items (bones 0 and 5, shells 10): an opaque skin first, so
# it hides what is inside it; a see-through skin after the bones, so they show through
DEPTH = {"translucent": (7, 6), "solid": (7, -5), "wireframe": (7, 6)}


def outward(vertices: Array, triangles: Array, offsets: Array) -> Array:
    """Triangles (T, 3) wound counter-clockwise seen from outside: each mesh (vertices
    offsets[m]..offsets[m + 1]) whose signed volume is negative is flipped whole."""
    v = vertices[triangles]
    volume = np.einsum("ti,ti->t", v[:, 0], np.cross(v[:, 1], v[:, 2]))
    mesh = np.searchsorted(offsets, triangles[:, 0], side="right") - 1
    flip = np.bincount(mesh, weights=volume, minlength=len(offsets) - 1) < 0
    return np.where(flip[mesh][:, None], triangles[:, [0, 2, 1]], triangles)


def _shader() -> shaders.ShaderProgram:
    """Headlight shading per vertex, two-sided: brightness from the view-space normal's z."""
    vertex = shaders.VertexShader(
        """
        uniform mat4 u_mvp;
        uniform mat3 u_normal;
        attribute vec4 a_position;
        attribute vec3 a_normal;
        attribute vec4 a_color;
        varying vec4 v_color;
        void main() {
            float facing = abs(normalize(u_normal * a_normal).z);
            v_color = vec4(a_color.rgb * (0.38 + 0.62 * facing), a_color.a);
            gl_Position = u_mvp * a_position;
        }
        """
    )
    fragment = shaders.FragmentShader(
        """
        #ifdef GL_ES
        precision mediump float;
        #endif
        varying vec4 v_color;
        void main() {
            gl_FragColor = v_color;
        }
        """
    )
    return shaders.ShaderProgram("shellscope_skin", [vertex, fragment])


_SHADER: shaders.ShaderProgram | None = None


def skin_shader() -> shaders.ShaderProgram:
    """One program for every skin item (compiled once per process, contexts are shared)."""
    global _SHADER
    if _SHADER is None:
        _SHADER = _shader()
    return _SHADER


class SkinMesh(gl.GLMeshItem):
    """One merged, indexed GL mesh whose buffers are overwritten in place (while painting,
    so no repaint is requested)."""

    def __init__(self, depth: int) -> None:
        super().__init__(
            glOptions=SEE_THROUGH, shader=skin_shader(), smooth=True, computeNormals=False
        )
        self.setDepthValue(depth)
        self._pending = MeshDirty(0)
        self.wire = False
        self.gl_options: dict = SEE_THROUGH

    def set_faces(self, triangles: Array) -> None:
        self.faces = np.ascontiguousarray(triangles, dtype=np.uint32)
        self._pending |= MeshDirty.FACES

    def set_data(self, vertices: Array, normals: Array, rgba: Array) -> None:
        self.vertexes = np.ascontiguousarray(vertices, dtype=np.float32)
        self.normals = np.ascontiguousarray(normals, dtype=np.float32)
        self.colors = np.ascontiguousarray(rgba, dtype=np.float32)
        self._pending |= MeshDirty.POSITION | MeshDirty.NORMAL | MeshDirty.COLOR

    def set_style(self, options: dict, wire: bool, depth: int) -> None:
        self.gl_options = options
        self.setGLOptions(options)
        self.wire = wire
        self.setDepthValue(depth)

    def parseMeshData(self) -> MeshDirty:
        bits, self._pending = self._pending, MeshDirty(0)
        return bits

    def paint(self) -> None:
        if self.faces is None or self.vertexes is None:
            return
        if self.wire:
            GL.glPolygonMode(GL.GL_FRONT_AND_BACK, GL.GL_LINE)
        try:
            super().paint()
        finally:  # leave no state behind for the items drawn next
            GL.glPolygonMode(GL.GL_FRONT_AND_BACK, GL.GL_FILL)
            GL.glDisable(GL.GL_POLYGON_OFFSET_FILL)
            GL.glDisable(GL.GL_CULL_FACE)
            GL.glDepthMask(GL.GL_TRUE)


class SkinLayer:
    """The raw and the lossy skin of one scene, kept in step with the poses drawn.

    After `update`: `raw_vertices`, `lossy_vertices` (V, 3) as drawn (display space, lossy
    magnified), `vertex_error` (V,) the true error now and `fraction` (V,) its share of each
    vertex's budget; None where not drawn."""

    def __init__(self, scene: GLViewMixin) -> None:  # SceneView, or any pyqtgraph GL view
        self.raw_item = SkinMesh(7)
        self.lossy_item = SkinMesh(6)
        for item in (self.raw_item, self.lossy_item):
            item.setVisible(False)
            scene.addItem(item)
        self.skin: Skin | None = None
        self.raw_vertices: Array | None = None
        self.lossy_vertices: Array | None = None
        self.vertex_error: Array | None = None
        self.fraction: Array | None = None

    @property
    def items(self) -> tuple[SkinMesh, SkinMesh]:
        return self.raw_item, self.lossy_item

    def set_meshes(self, meshes: tuple[SkinnedMesh, ...]) -> None:
        """A new clip's meshes (none: nothing is drawn)."""
        self.skin = skin_of(meshes)
        self.raw_vertices = self.lossy_vertices = self.vertex_error = self.fraction = None
        for item in self.items:
            item.setVisible(False)
            if self.skin is not None:
                skin = self.skin
                item.set_faces(outward(skin.vertices, skin.triangles, skin.mesh_offsets))

    def hide(self) -> None:
        for item in self.items:
            item.setVisible(False)

    def update(
        self,
        raw: Array,
        lossy: Array | None,
        precision: Array | None,
        show_raw: bool,
        show_lossy: bool,
        style: str = "translucent",
        magnify: float = 1.0,
    ) -> None:
        """Skin the poses: raw and lossy object-space matrices (J, 3, 4) in display space,
        each joint's precision (J,) for the colours, what to show and how."""
        skin = self.skin
        if skin is None:
            self.hide()
            return
        style = style if style in STYLES else STYLES[0]
        raw_alpha, lossy_alpha = ALPHA[style]
        raw_depth, lossy_depth = DEPTH[style]
        wire = style == "wireframe"
        see_through = WIRE if wire else SEE_THROUGH
        self.raw_item.set_style(BEHIND if style == "solid" else see_through, wire, raw_depth)
        self.lossy_item.set_style(OPAQUE if style == "solid" else see_through, wire, lossy_depth)
        rv, rn = posed_skin(raw, skin)
        self.raw_vertices = rv
        rgba = np.empty((len(rv), 4))
        rgba[:, :3] = RAW_SKIN
        rgba[:, 3] = raw_alpha
        self.raw_item.set_data(rv, rn, rgba)
        self.raw_item.setVisible(show_raw)
        if lossy is None or precision is None:
            self.lossy_vertices = self.vertex_error = self.fraction = None
            self.lossy_item.setVisible(False)
            return
        lv, ln = posed_skin(lossy, skin)
        self.vertex_error = np.linalg.norm(lv - rv, axis=1)
        budget = np.asarray(precision, dtype=np.float64)[skin.dominant_joint]
        self.fraction = self.vertex_error / np.where(budget > 0, budget, np.inf)
        if magnify != 1.0:
            lv = rv + magnify * (lv - rv)
        self.lossy_vertices = lv
        self.lossy_item.set_data(lv, ln, colors.error_colors(self.fraction, lossy_alpha))
        self.lossy_item.setVisible(show_lossy)

    def readout(self) -> str:
        """A few words on the skin at the pose drawn: its largest true error now and the
        largest share of a vertex's budget (the vertex most over its joint's precision)."""
        if self.vertex_error is None or self.fraction is None or self.skin is None:
            return ""
        worst = float(self.fraction.max())
        return f"skin {format_cm(float(self.vertex_error.max()))}, {format_percent(worst)}"


class SkinControls(QtWidgets.QToolButton):
    """ "Skin" in the 3D view's toolbar: a menu with the two skins' toggles and the style.
    Hidden for clips without a mesh, so their view is exactly as it was."""

    def __init__(self, document: Document, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.setText("Skin")
        self.setToolTip(
            "The skinned mesh: raw (pale blue) and lossy (each vertex coloured by its true "
            "error, the distance to the raw skin, over its strongest joint's precision)"
        )
        self.setPopupMode(QtWidgets.QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
        menu = QtWidgets.QMenu(self)
        self.show_raw = menu.addAction("Raw skin")
        self.show_lossy = menu.addAction("Lossy skin")
        for action in (self.show_raw, self.show_lossy):
            action.setCheckable(True)
        menu.addSeparator()
        group = QtGui.QActionGroup(self)
        self.style_actions: dict[str, QtGui.QAction] = {}
        for s in STYLES:
            action = menu.addAction(STYLE_LABELS[s])
            action.setCheckable(True)
            group.addAction(action)
            action.triggered.connect(lambda _=False, s=s: document.update_display(skin_style=s))
            self.style_actions[s] = action
        self.setMenu(menu)
        self.show_raw.toggled.connect(lambda on: document.update_display(show_raw_skin=on))
        self.show_lossy.toggled.connect(lambda on: document.update_display(show_lossy_skin=on))
        document.display_changed.connect(self._sync)
        document.clip_changed.connect(self._sync)
        self._sync()

    def _sync(self) -> None:
        d = self.document.display
        clip = self.document.clip
        self.setVisible(clip is not None and bool(clip.meshes))
        for a, v in ((self.show_raw, d.show_raw_skin), (self.show_lossy, d.show_lossy_skin)):
            if a.isChecked() != v:
                a.setChecked(v)
        action = self.style_actions.get(d.skin_style)
        if action is not None and not action.isChecked():
            action.setChecked(True)


def framing_points(clip: Clip, max_samples: int, max_vertices: int = 512) -> Array | None:
    """(S', M, 3) file-space positions of some skin vertices at the samples
    app.model.up_axis.sampled_positions takes (None without a mesh), for the camera to frame the
    skin and not only the joints: a spread of vertices plus the bind pose's extremes in 26
    directions (the top of the head, the tips of the ears)."""
    skin = skin_of(clip.meshes)
    if skin is None:
        return None
    v = skin.vertices - skin.vertices.mean(axis=0)
    dirs = np.array(
        [
            [x, y, z]
            for x in (-1, 0, 1)
            for y in (-1, 0, 1)
            for z in (-1, 0, 1)
            if (x, y, z) != (0, 0, 0)
        ],
        dtype=np.float64,
    )
    extremes = np.argmax(v @ dirs.T, axis=0)
    step = max(1, skin.num_vertices // max_vertices)
    pick = np.unique(np.r_[np.arange(0, skin.num_vertices, step), extremes])
    sub = Skin(
        skin.vertices[pick],
        np.zeros((0, 3), dtype=np.int64),
        skin.palette_joint,
        skin.inverse_bind,
        skin.influence[pick],
        skin.weights[pick],
        skin.dominant_joint[pick],
        np.array([0, len(pick)]),
        ("framing",),
    )
    n = clip.num_samples
    idx = np.unique(np.linspace(0, n - 1, min(max_samples, n)).round().astype(np.int64))
    os_ = object_space(
        clip.rotations[idx], clip.translations[idx], clip.scales[idx], clip.skeleton.parents
    )
    return skin_vertices(os_, sub)
