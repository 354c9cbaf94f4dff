"""Skinned meshes: the character's skin, bound to a clip's skeleton.

The shell error (codec.measure.error_metric) estimates how far the skin moves with three virtual
points per joint; a mesh lets us measure the real thing. A `SkinnedMesh` is what a reader
hands over for one mesh: vertices, triangles, the mesh's bind palette (entries of a clip
joint and an inverse bind matrix: a glTF skin's joints, USD's skel:joints, FBX's clusters),
up to MAX_INFLUENCES palette entries and weights per vertex, and the mesh's own bind
transform. A clip may carry several meshes (a body, a head, armour); `Skin` merges them
into one set of arrays so skinning (codec.measure.skinning) runs once over every vertex.

Conventions, the same for every format: lengths are the clip's (cm); a vertex goes from mesh
space to bind space by `node_matrix` (glTF: identity, the spec ignores a skinned mesh's node
transform; USD: geomBindTransform; FBX: folded into the cluster matrices); `inverse_bind[b]`
takes bind space to the space of joint `palette_joint[b]` at bind time, so that joint's
object-space matrix times `inverse_bind[b]` moves a bind-space vertex with the joint. A
palette rather than one matrix per joint: FBX may bind one joint twice with two matrices.
Qt-free.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from codec.errors import ClipValidationError

Array = np.ndarray

MAX_INFLUENCES = 8


@dataclass(frozen=True, eq=False)
class SkinnedMesh:
    """One mesh bound to a skeleton.

    vertices (V, 3) mesh space; triangles (T, 3) vertex indices; influence (V, K) palette
    entries and weights (V, K) summing to 1 per vertex (K <= 8, unused slots weight 0);
    palette_joint (B,) the clip joint and inverse_bind (B, 3, 4) the matrix of each palette
    entry; node_matrix (3, 4) mesh space -> bind space.
    """

    name: str
    vertices: Array
    triangles: Array
    influence: Array
    weights: Array
    palette_joint: Array
    inverse_bind: Array
    node_matrix: Array = field(default_factory=lambda: np.eye(3, 4))

    def __post_init__(self) -> None:
        v = np.array(self.vertices, dtype=np.float64)
        if v.ndim != 2 or v.shape[1] != 3 or len(v) == 0:
            raise ClipValidationError(f"mesh {self.name!r}: vertices have shape {v.shape}")
        n = len(v)
        tri = np.array(self.triangles, dtype=np.int64).reshape(-1, 3)
        if tri.size and (tri.min() < 0 or tri.max() >= n):
            raise ClipValidationError(
                f"mesh {self.name!r}: a triangle refers to vertex {int(tri.max())} of {n}"
            )
        infl = np.array(self.influence, dtype=np.int64)
        weights = np.array(self.weights, dtype=np.float64)
        if infl.ndim != 2 or infl.shape != weights.shape or infl.shape[0] != n:
            raise ClipValidationError(
                f"mesh {self.name!r}: influence {infl.shape} and weights {weights.shape} "
                f"do not match {n} vertices"
            )
        if not 1 <= infl.shape[1] <= MAX_INFLUENCES:
            raise ClipValidationError(
                f"mesh {self.name!r}: {infl.shape[1]} influences per vertex (1..8 allowed)"
            )
        ibm = np.array(self.inverse_bind, dtype=np.float64)
        pal = np.array(self.palette_joint, dtype=np.int64).reshape(-1)
        if ibm.ndim != 3 or ibm.shape[1:] != (3, 4) or len(ibm) != len(pal) or len(pal) == 0:
            raise ClipValidationError(
                f"mesh {self.name!r}: inverse_bind {ibm.shape} for {len(pal)} palette joints"
            )
        if pal.min() < 0:
            raise ClipValidationError(f"mesh {self.name!r}: a palette joint is negative")
        if infl.min() < 0 or infl.max() >= len(pal):
            raise ClipValidationError(
                f"mesh {self.name!r}: a vertex refers to palette entry {int(infl.max())} of "
                f"{len(pal)}"
            )
        node = np.array(self.node_matrix, dtype=np.float64)
        if node.shape != (3, 4):
            raise ClipValidationError(f"mesh {self.name!r}: node_matrix has shape {node.shape}")
        for label, a in (
            ("vertices", v),
            ("weights", weights),
            ("inverse_bind", ibm),
            ("node_matrix", node),
        ):
            if not np.all(np.isfinite(a)):
                raise ClipValidationError(f"mesh {self.name!r}: {label} are not all finite")
        if np.any(weights < 0) or np.any(np.abs(weights.sum(axis=1) - 1.0) > 1e-6):
            raise ClipValidationError(
                f"mesh {self.name!r}: weights must be >= 0 and sum to 1 per vertex"
            )
        arrays = {
            "vertices": v,
            "triangles": tri,
            "influence": infl,
            "weights": weights,
            "palette_joint": pal,
            "inverse_bind": ibm,
            "node_matrix": node,
        }
        for name, a in arrays.items():
            a.setflags(write=False)
            object.__setattr__(self, name, a)

    @property
    def num_vertices(self) -> int:
        return int(self.vertices.shape[0])

    @property
    def joints(self) -> Array:
        """(V, K) the clip joint of every influence slot."""
        return self.palette_joint[self.influence]

    def scaled(self, factor: float) -> SkinnedMesh:
        """The same mesh with every length times `factor` (unit changes)."""
        ibm = self.inverse_bind.copy()
        ibm[:, :, 3] *= factor
        node = self.node_matrix.copy()
        node[:, 3] *= factor
        return SkinnedMesh(
            self.name,
            self.vertices * factor,
            self.triangles,
            self.influence,
            self.weights,
            self.palette_joint,
            ibm,
            node,
        )


def normalize_influences(
    joints: Array, weights: Array, limit: int = MAX_INFLUENCES
) -> tuple[Array, Array, list[str]]:
    """Influences as a mesh stores them: the `limit` strongest per vertex, weights summing
    to 1, zero-weight slots pointing at the vertex's strongest entry. Returns (joints (V, K),
    weights (V, K), warnings); a vertex with no weight at all is bound fully to its first
    listed entry, and a warning says how many were (readers that know better, FBX's mesh
    node, bind those vertices themselves first)."""
    joints = np.asarray(joints, dtype=np.int64)
    weights = np.clip(np.asarray(weights, dtype=np.float64), 0.0, None)
    warnings: list[str] = []
    if joints.shape[1] > limit:
        order = np.argsort(-weights, axis=1, kind="stable")
        dropped = np.take_along_axis(weights, order[:, limit:], axis=1)
        lost = int(np.sum(dropped.sum(axis=1) > 0))
        joints = np.take_along_axis(joints, order[:, :limit], axis=1)
        weights = np.take_along_axis(weights, order[:, :limit], axis=1)
        if lost:
            warnings.append(
                f"{lost} vertices have more than {limit} joint influences: the {limit} "
                "strongest are kept"
            )
    total = weights.sum(axis=1)
    empty = total <= 0
    if np.any(empty):
        weights[empty, 0] = 1.0
        total[empty] = 1.0
        warnings.append(
            f"{int(empty.sum())} vertices have no joint weight: bound to their first joint"
        )
    weights = weights / total[:, None]
    strongest = joints[np.arange(len(joints)), np.argmax(weights, axis=1)]
    joints = np.where(weights > 0, joints, strongest[:, None])
    return joints, weights, warnings


def vertex_normals(vertices: Array, triangles: Array) -> Array:
    """Smooth unit normals (V, 3): area-weighted face normals summed over every vertex at
    the same position, so seams split for texture coordinates do not show as creases."""
    v = np.asarray(vertices, dtype=np.float64)
    tri = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    if len(tri) == 0:
        return np.tile([0.0, 0.0, 1.0], (len(v), 1))
    face = np.cross(v[tri[:, 1]] - v[tri[:, 0]], v[tri[:, 2]] - v[tri[:, 0]])
    scale = max(float(np.ptp(v, axis=0).max()), 1e-12)
    _, weld = np.unique(np.round(v / (scale * 1e-6)), axis=0, return_inverse=True)
    weld = weld.reshape(-1)
    acc = np.zeros((int(weld.max()) + 1, 3))
    for c in range(3):
        np.add.at(acc, weld[tri[:, c]], face)
    n = acc[weld]
    length = np.linalg.norm(n, axis=1, keepdims=True)
    return np.where(length > 0, n / np.where(length > 0, length, 1.0), [0.0, 0.0, 1.0])


@dataclass(frozen=True, eq=False)
class Skin:
    """Every mesh of a clip merged for batched skinning.

    vertices (V, 3) in bind space; triangles (T, 3) into them; `palette_joint (P,)` the clip
    joint of each palette entry and `inverse_bind (P, 3, 4)` its matrix (one entry per mesh
    and joint that some vertex uses); influence (V, K) palette indices and weights (V, K);
    `dominant_joint (V,)` each vertex's strongest clip joint; `mesh_offsets (M + 1,)` where
    each mesh's vertices start; `names (M,)`.
    """

    vertices: Array
    triangles: Array
    palette_joint: Array
    inverse_bind: Array
    influence: Array
    weights: Array
    dominant_joint: Array
    mesh_offsets: Array
    names: tuple[str, ...]

    @classmethod
    def of(cls, meshes: tuple[SkinnedMesh, ...] | list[SkinnedMesh]) -> Skin:
        if not meshes:
            raise ValueError("a skin needs at least one mesh")
        k = max(m.influence.shape[1] for m in meshes)
        verts, tris, infl, wts, pal_joint, pal_ibm = [], [], [], [], [], []
        offsets = [0]
        for m in meshes:
            node = m.node_matrix
            verts.append(m.vertices @ node[:, :3].T + node[:, 3])
            tris.append(m.triangles + offsets[-1])
            used, local = np.unique(m.influence, return_inverse=True)  # only entries in use
            local = local.reshape(m.influence.shape) + sum(len(p) for p in pal_joint)
            pad = k - m.influence.shape[1]
            infl.append(np.pad(local, ((0, 0), (0, pad)), mode="edge"))
            wts.append(np.pad(m.weights, ((0, 0), (0, pad))))
            pal_joint.append(m.palette_joint[used])
            pal_ibm.append(m.inverse_bind[used])
            offsets.append(offsets[-1] + m.num_vertices)
        influence = np.concatenate(infl)
        weights = np.concatenate(wts)
        palette_joint = np.concatenate(pal_joint)
        strongest = influence[np.arange(len(influence)), np.argmax(weights, axis=1)]
        return cls(
            vertices=np.concatenate(verts),
            triangles=np.concatenate(tris),
            palette_joint=palette_joint,
            inverse_bind=np.concatenate(pal_ibm),
            influence=influence,
            weights=weights,
            dominant_joint=palette_joint[strongest],
            mesh_offsets=np.array(offsets, dtype=np.int64),
            names=tuple(m.name for m in meshes),
        )

    @property
    def num_vertices(self) -> int:
        return int(self.vertices.shape[0])

    @cached_property
    def normals(self) -> Array:
        """(V, 3) bind-space normals, computed once (codec.measure.skinning skins them per pose)."""
        return vertex_normals(self.vertices, self.triangles)

    def mesh_of(self, vertex: int) -> int:
        """Index of the mesh a merged vertex belongs to."""
        return int(np.searchsorted(self.mesh_offsets, vertex, side="right") - 1)

    def joint_space_vertices(self) -> tuple[Array, Array, Array]:
        """Every (vertex, influence) pair in its joint's bind space: positions (V, K, 3),
        clip joints (V, K) and weights (V, K). Shells from the mesh measure these lengths."""
        ibm = self.inverse_bind[self.influence]  # (V, K, 3, 4)
        local = np.einsum("vkij,vj->vki", ibm[..., :3], self.vertices) + ibm[..., 3]
        return local, self.palette_joint[self.influence], self.weights


_SKINS: dict[int, tuple[tuple[SkinnedMesh, ...], Skin]] = {}
_SKINS_KEPT = 8


def skin_of(meshes: tuple[SkinnedMesh, ...]) -> Skin | None:
    """The merged `Skin` of a clip's meshes (None without meshes), built once per tuple:
    a clip's copies (`Clip.replace`) share their meshes tuple, so they share the skin."""
    if not meshes:
        return None
    hit = _SKINS.get(id(meshes))
    if hit is not None and hit[0] is meshes:
        return hit[1]
    skin = Skin.of(meshes)
    if len(_SKINS) >= _SKINS_KEPT:
        _SKINS.pop(next(iter(_SKINS)))
    _SKINS[id(meshes)] = (meshes, skin)
    return skin
