"""Linear-blend skinning, batched over poses and vertices.

A skinned vertex is sum_k w_k (O[j_k] @ IBM_k) v: every palette matrix (a joint's
object-space matrix after its inverse bind matrix) is built once per pose, then each
influence slot gathers its matrices for every vertex at once. Poses go through in chunks so
memory stays bounded (a chunk holds about CHUNK_VALUES floats per gathered array) however
long the clip. float64 throughout: vertex errors are differences of two skinned positions
and must keep 1e-5 cm on a 2 m character.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from codec.jit import kernel
from codec.model.mesh import Skin
from codec.model.transforms import compose

Array = np.ndarray

CHUNK_VALUES = 1 << 21


def palette(object_space: Array, skin: Skin) -> Array:
    """Skinning matrices (..., P, 3, 4) from object-space matrices (..., J, 3, 4)."""
    return compose(object_space[..., skin.palette_joint, :, :], skin.inverse_bind)


def skin_points(pal: Array, skin: Skin, normals: bool = False) -> Array:
    """Skinned bind-space vertices (N, V, 3) for palettes (N, P, 3, 4); with `normals`,
    the skin's bind normals moved the same way (N, V, 3), renormalised (for drawing)."""
    v = skin.normals if normals else skin.vertices
    out = np.zeros((pal.shape[0], skin.num_vertices, 3))
    for k in range(skin.influence.shape[1]):
        w = skin.weights[:, k]
        live = np.flatnonzero(w > 0)
        if len(live) == 0:
            continue
        m = pal[:, skin.influence[live, k]]  # (N, v, 3, 4)
        moved = np.einsum("nvij,vj->nvi", m[..., :3], v[live])
        if not normals:
            moved += m[..., 3]
        out[:, live] += w[live, None] * moved
    if normals:
        length = np.linalg.norm(out, axis=-1, keepdims=True)
        out /= np.where(length > 0, length, 1.0)
    return out


def chunks(num_poses: int, skin: Skin) -> Iterator[slice]:
    """Slices of poses small enough that one gathered (n, V, 3, 4) array stays bounded."""
    step = max(1, CHUNK_VALUES // max(1, 12 * skin.num_vertices))
    for start in range(0, num_poses, step):
        yield slice(start, min(start + step, num_poses))


def skin_vertices(object_space: Array, skin: Skin) -> Array:
    """Skinned vertices (N, V, 3) of N poses given as object-space matrices (N, J, 3, 4)."""
    out = np.empty((object_space.shape[0], skin.num_vertices, 3))
    for s in chunks(object_space.shape[0], skin):
        out[s] = skin_points(palette(object_space[s], skin), skin)
    return out


@kernel
def _distances(d, influence, weights, vertices, out):
    """out (n, V): |sum_k w_k D_k v| per vertex, D the palette differences d (n, P, 3, 4).
    The float64 operations of numpy's batched form, in its order: each row
    (m0 x + m1 y) + (m2 z + m3), slots accumulated in order where the weight is > 0, and
    the squared length summed as numpy's einsum over three components sums it
    ((x^2 + z^2) + y^2), so the distances are the same to the bit."""
    for i in range(d.shape[0]):
        for v in range(vertices.shape[0]):
            x = vertices[v, 0]
            y = vertices[v, 1]
            z = vertices[v, 2]
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            for k in range(influence.shape[1]):
                w = weights[v, k]
                if w > 0.0:
                    m = d[i, influence[v, k]]
                    a0 += w * ((m[0, 0] * x + m[0, 1] * y) + (m[0, 2] * z + m[0, 3]))
                    a1 += w * ((m[1, 0] * x + m[1, 1] * y) + (m[1, 2] * z + m[1, 3]))
                    a2 += w * ((m[2, 0] * x + m[2, 1] * y) + (m[2, 2] * z + m[2, 3]))
            out[i, v] = np.sqrt((a0 * a0 + a2 * a2) + a1 * a1)


def pose_distances(raw: Array, lossy: Array, skin: Skin) -> Array:
    """(n, V) distance between every vertex skinned by the raw and by the lossy pose, for
    a few poses of object-space matrices (n, J, 3, 4) each (see `vertex_distances`).

    Skinning is linear in the palette, so the distance is |sum_k w_k D_k v| with D the
    difference of the two palettes: one palette difference instead of two skinned meshes,
    and no cancellation between two large positions (a 1e-4 cm error on a vertex 2 m from
    the origin keeps its digits). Compiled (`_distances`): numpy's gathers of (n, V, 3, 4)
    per influence slot cost 20-50 times the arithmetic."""
    d = np.ascontiguousarray(palette(raw, skin) - palette(lossy, skin), dtype=np.float64)
    out = np.empty((d.shape[0], skin.num_vertices))
    _distances(
        d,
        np.ascontiguousarray(skin.influence, dtype=np.int64),
        np.ascontiguousarray(skin.weights, dtype=np.float64),
        np.ascontiguousarray(skin.vertices, dtype=np.float64),
        out,
    )
    return out


def vertex_distances(raw: Array, lossy: Array, skin: Skin) -> Array:
    """(N, V) distance between every vertex skinned by the raw and by the lossy pose, for
    N poses of object-space matrices (N, J, 3, 4) each, a chunk of poses at a time."""
    out = np.empty((raw.shape[0], skin.num_vertices))
    for s in chunks(raw.shape[0], skin):
        out[s] = pose_distances(raw[s], lossy[s], skin)
    return out


def posed_skin(object_space: Array, skin: Skin) -> tuple[Array, Array]:
    """Vertices (V, 3) and unit normals (V, 3) of one pose (J, 3, 4), for drawing: each
    vertex's blended matrix is built once and moves both its position and its normal (the
    bind normals are computed once per skin)."""
    pal = palette(object_space, skin)  # (P, 3, 4)
    blended = np.einsum("vk,vkij->vij", skin.weights, pal[skin.influence])
    verts = np.einsum("vij,vj->vi", blended[..., :3], skin.vertices) + blended[..., 3]
    normals = np.einsum("vij,vj->vi", blended[..., :3], skin.normals)
    length = np.linalg.norm(normals, axis=-1, keepdims=True)
    return verts, normals / np.where(length > 0, length, 1.0)
