"""The character's skin in the 3D view: the raw and the lossy mesh, coloured by true error.

Each skin is one merged GL mesh (every mesh of the clip): its triangles are uploaded once,
its positions, normals and colours are overwritten in place each frame. Skinning is the
codec's (codec.skinning.posed_skin: batched numpy, about a millisecond for CesiumMan's 3,273
vertices), normals are the bind normals computed once and moved by each vertex's blended
matrix, and a small shader lights them per vertex with a headlight. Software GL is bound by
the pixels it fills, so each mesh is turned outward once (by the sign of its volume: files
disagree on winding) and only its front faces are drawn. The lossy skin's colour is each
vertex's true error (raw against lossy, on screen now) over the precision of its strongest
joint, on the very scale the bones use;
with the error magnifier its vertices are drawn at raw + k (lossy - raw) while the colours
keep the true error.

Styles: translucent (both skins see-through, bones visible inside), solid (the lossy skin
opaque, the raw one a ghost pushed behind it, so it shows only where the lossy skin sinks
in) and wireframe.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph.opengl as gl
from OpenGL import GL
from pyqtgraph.opengl import shaders
from pyqtgraph.opengl.items.GLMeshItem import DirtyFlag as MeshDirty
from PySide6 import QtCore, QtWidgets

from app.document import Document
from app.views import colors
from codec.mesh import Skin, SkinnedMesh, skin_of
from codec.skinning import posed_skin

Array = np.ndarray

STYLES = ("translucent", "solid", "wireframe")
STYLE_LABELS = {"translucent": "Translucent", "solid": "Solid", "wireframe": "Wireframe"}
RAW_SKIN = (0.45, 0.68, 1.0)
ALPHA = {  # (raw, lossy) per style
    "translucent": (0.16, 0.42),
    "solid": (0.30, 1.0),
    "wireframe": (0.35, 0.85),
}
_BLEND = (
    "glBlendFuncSeparate",
    (GL.GL_SRC_ALPHA, GL.GL_ONE_MINUS_SRC_ALPHA, GL.GL_ONE, GL.GL_ONE_MINUS_SRC_ALPHA),
)
SEE_THROUGH = {
    GL.GL_DEPTH_TEST: True, GL.GL_BLEND: True, GL.GL_CULL_FACE: True, "glCullFace": (GL.GL_BACK,),
    "glDepthMask": (GL.GL_FALSE,), _BLEND[0]: _BLEND[1],
}  # fmt: skip
OPAQUE = {
    GL.GL_DEPTH_TEST: True, GL.GL_BLEND: False, GL.GL_CULL_FACE: True, "glCullFace": (GL.GL_BACK,),
    "glDepthMask": (GL.GL_TRUE,),
}  # fmt: skip
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
    """Headlight shading, two-sided: brightness from the view-space normal's z."""
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
        super().__init__(glOptions=SEE_THROUGH, shader=skin_shader(), smooth=True,
                         computeNormals=False)  # fmt: skip
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

    def parseMeshData(self) -> MeshDirty:  # noqa: N802 (pyqtgraph's name)
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

    def __init__(self, scene: gl.GLViewWidget) -> None:
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
        self.lossy_item.set_style(OPAQUE if style == "solid" else see_through, wire,
                                  lossy_depth)  # fmt: skip
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
        """One line on the skin at the pose drawn: its worst vertex now."""
        if self.vertex_error is None or self.fraction is None or self.skin is None:
            return ""
        v = int(np.argmax(self.fraction))
        err = float(self.vertex_error.max())
        return (f"skin max {err:.4g} cm; worst {100 * self.fraction[v]:.0f} % of budget "
                f"(vertex {v})")  # fmt: skip


class SkinControls(QtWidgets.QWidget):
    """The skin's toggles and style in the 3D view's toolbar; hidden for clips without a
    mesh, so their view is exactly as it was."""

    def __init__(self, document: Document, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        row = QtWidgets.QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        self.show_raw = QtWidgets.QCheckBox("Raw skin")
        self.show_raw.setToolTip("The raw (uncompressed) skinned mesh, pale blue")
        self.show_lossy = QtWidgets.QCheckBox("Lossy skin")
        self.show_lossy.setToolTip(
            "The decompressed skinned mesh, each vertex coloured by its true error (distance "
            "to the raw skin) over the precision of its strongest joint"
        )
        self.style = QtWidgets.QComboBox()
        for s in STYLES:
            self.style.addItem(STYLE_LABELS[s], s)
        self.style.setToolTip("How the skins are drawn: see-through, solid or wireframe")
        for w in (self.show_raw, self.show_lossy, self.style):
            w.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
            row.addWidget(w)
        self.show_raw.toggled.connect(lambda on: document.update_display(show_raw_skin=on))
        self.show_lossy.toggled.connect(lambda on: document.update_display(show_lossy_skin=on))
        self.style.currentIndexChanged.connect(
            lambda i: document.update_display(skin_style=str(self.style.itemData(i)))
        )
        document.display_changed.connect(self._sync)
        document.clip_changed.connect(self._sync)
        self._sync()

    def _sync(self) -> None:
        d = self.document.display
        clip = self.document.clip
        self.setVisible(clip is not None and bool(clip.meshes))
        for w, v in ((self.show_raw, d.show_raw_skin), (self.show_lossy, d.show_lossy_skin)):
            if w.isChecked() != v:
                w.setChecked(v)
        i = self.style.findData(d.skin_style)
        if i >= 0 and i != self.style.currentIndex():
            self.style.setCurrentIndex(i)
