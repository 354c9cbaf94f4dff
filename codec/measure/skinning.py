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


def pose_distances(raw: Array, lossy: Array, skin: Skin) -> Array:
    """(n, V) distance between every vertex skinned by the raw and by the lossy pose, for a
    few poses of object-space matrices (n, J, 3, 4) each (see `vertex_distances`).

    Skinning is linear in the palette, so the distance is |sum_k w_k D_k v| with D the
    difference of the two palettes: one gather instead of two, and no cancellation between
    two large positions (a 1e-4 cm error on a vertex 2 m from the origin keeps its digits)."""
    v = skin.vertices
    d = palette(raw, skin) - palette(lossy, skin)  # (n, P, 3, 4)
    acc = np.zeros((d.shape[0], skin.num_vertices, 3))
    for k in range(skin.influence.shape[1]):
        w = skin.weights[:, k]
        live = np.flatnonzero(w > 0)
        if len(live) == 0:
            continue
        m = d[:, skin.influence[live, k]]  # (n, v, 3, 4)
        x = v[live]
        moved = m[..., 0] * x[:, None, 0] + m[..., 1] * x[:, None, 1]
        moved += m[..., 2] * x[:, None, 2] + m[..., 3]
        acc[:, live] += w[live, None] * moved
    return np.sqrt(np.einsum("nvi,nvi->nv", acc, acc))


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
