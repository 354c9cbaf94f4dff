"""The few GL items the 3D view draws with, and the GL state each one needs.

pyqtgraph's line and scatter items default to additive blending with no depth test, and a GL
enable set by one item leaks into the next, so every item here states its whole state. Data is
written straight into the items while a frame is being painted: no item asks for another
repaint, and one merged triangle soup per kind keeps the draw calls few.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph.opengl as gl
from OpenGL import GL
from pyqtgraph.opengl.items.GLMeshItem import DirtyFlag as MeshDirty
from pyqtgraph.opengl.items.GLScatterPlotItem import DirtyFlag as ScatterDirty

Array = np.ndarray

_BLEND = (
    "glBlendFuncSeparate",
    (GL.GL_SRC_ALPHA, GL.GL_ONE_MINUS_SRC_ALPHA, GL.GL_ONE, GL.GL_ONE_MINUS_SRC_ALPHA),
)
SOLID = {
    GL.GL_DEPTH_TEST: True,
    GL.GL_BLEND: False,
    GL.GL_CULL_FACE: True,
    GL.GL_MULTISAMPLE: True,
    "glCullFace": (GL.GL_BACK,),
    "glDepthMask": (GL.GL_TRUE,),
}
# translucent, front faces only: each closed shape blends once, independent of draw order
GHOST = {
    GL.GL_DEPTH_TEST: True,
    GL.GL_BLEND: True,
    GL.GL_CULL_FACE: True,
    GL.GL_MULTISAMPLE: True,
    "glCullFace": (GL.GL_BACK,),
    "glDepthMask": (GL.GL_FALSE,),
    _BLEND[0]: _BLEND[1],
}
# shells are sorted back to front on the CPU, so they need no depth reads; a software
# rasteriser is fill-bound on them, so they are drawn once per pixel, not once per sample
SHELLS = {
    GL.GL_DEPTH_TEST: False,
    GL.GL_BLEND: True,
    GL.GL_CULL_FACE: True,
    GL.GL_MULTISAMPLE: False,
    "glCullFace": (GL.GL_BACK,),
    "glDepthMask": (GL.GL_FALSE,),
    _BLEND[0]: _BLEND[1],
}
LINES = {
    GL.GL_DEPTH_TEST: True,
    GL.GL_BLEND: True,
    GL.GL_CULL_FACE: False,
    GL.GL_MULTISAMPLE: True,
    "glDepthMask": (GL.GL_FALSE,),
    _BLEND[0]: _BLEND[1],
}
# outlines and joints stay visible through bones
ON_TOP = {
    GL.GL_DEPTH_TEST: False,
    GL.GL_BLEND: True,
    GL.GL_CULL_FACE: False,
    GL.GL_MULTISAMPLE: True,
    "glDepthMask": (GL.GL_FALSE,),
    _BLEND[0]: _BLEND[1],
}


class SoupMesh(gl.GLMeshItem):
    """A GLMeshItem fed a flat triangle soup directly, skipping MeshData and normals."""

    def __init__(self, gl_options: dict, depth: int) -> None:
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

    def parseMeshData(self) -> MeshDirty:
        bits, self._pending = self._pending, MeshDirty(0)
        return bits


def points(gl_options: dict, depth: int) -> gl.GLScatterPlotItem:
    item = gl.GLScatterPlotItem(glOptions=gl_options, pxMode=True)
    item.setDepthValue(depth)
    return item


def lines(gl_options: dict, depth: int, width: float, color: tuple) -> gl.GLLinePlotItem:
    item = gl.GLLinePlotItem(
        glOptions=gl_options, mode="lines", width=width, color=color, antialias=False
    )
    item.setDepthValue(depth)
    return item


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


def set_lines(item: gl.GLLinePlotItem, pos: Array, rgba: Array | None = None) -> None:
    """GLLinePlotItem.setData without its repaint request; per-vertex colours if given."""
    item.pos = np.ascontiguousarray(pos, dtype=np.float32)
    item.dirty_bits |= type(item.dirty_bits).POSITION
    if rgba is not None:
        item.color = np.ascontiguousarray(rgba, dtype=np.float32)
        item.dirty_bits |= type(item.dirty_bits).COLOR
