"""The skinned-mesh model: validation, influences, merging meshes, normals."""

from __future__ import annotations

import numpy as np
import pytest

from codec.errors import ClipValidationError
from codec.model.clip import Clip, Skeleton
from codec.model.mesh import Skin, SkinnedMesh, normalize_influences, skin_of, vertex_normals


def cube() -> tuple[np.ndarray, np.ndarray]:
    """A unit cube around the origin, 8 vertices, 12 outward (counter-clockwise) triangles."""
    v = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    tris = [t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))]
    return v, np.array(tris)


def mesh(num_joints: int = 3, name: str = "m", joints=None, weights=None) -> SkinnedMesh:
    v, t = cube()
    j = np.zeros((8, 2), dtype=int) if joints is None else joints
    w = np.tile([1.0, 0.0], (8, 1)) if weights is None else weights
    ibm = np.tile(np.eye(3, 4), (num_joints, 1, 1))
    return SkinnedMesh(name, v, t, j, w, np.arange(num_joints), ibm)


def test_cube_normals_point_outwards() -> None:
    v, t = cube()
    n = vertex_normals(v, t)
    assert np.allclose(np.linalg.norm(n, axis=1), 1.0)
    assert np.all(np.sum(n * v, axis=1) > 0.5)  # every corner's normal points away
    # corner 0 touches both triangles of its three faces: its normal is its diagonal
    assert np.allclose(n[0], v[0] / np.sqrt(3.0), atol=1e-12)


def test_welded_normals_hide_split_seams() -> None:
    v, t = cube()
    # split vertex 0 into a copy used by one face only, as a texture seam does
    v2 = np.vstack([v, v[:1]])
    t2 = t.copy()
    t2[0] = [8, 1, 3]
    n = vertex_normals(v2, t2)
    assert np.allclose(n[8], n[0]) and np.allclose(n[0], v[0] / np.sqrt(3.0))


def test_normalize_influences_keeps_the_strongest_and_renormalises() -> None:
    joints = np.array([np.arange(10), np.arange(10)])
    weights = np.array([np.arange(10, dtype=float), np.r_[np.zeros(9), 0.0]])
    j, w, warnings = normalize_influences(joints, weights, limit=8)
    assert j.shape == (2, 8)
    assert set(j[0]) == set(range(2, 10))  # 0 and 1 were the weakest
    assert np.allclose(w[0].sum(), 1.0) and np.isclose(w[0, 0], 9 / sum(range(2, 10)))
    assert np.allclose(w[1], np.r_[1.0, np.zeros(7)])  # no weight: bound to its first joint
    assert any("more than 8" in m for m in warnings)
    assert any("no joint weight" in m for m in warnings)
    # slots without weight point at the vertex's strongest joint, never at a stray joint
    j2, w2, _ = normalize_influences(np.array([[5, 7, 0, 0]]), np.array([[0.25, 0.75, 0, 0]]))
    assert list(j2[0]) == [5, 7, 7, 7] and np.allclose(w2[0], [0.25, 0.75, 0, 0])


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"vertices": np.zeros((0, 3))}, "vertices"),
        ({"triangles": np.array([[0, 1, 8]])}, "vertex 8"),
        ({"influence": np.full((8, 2), 3)}, "palette entry 3"),
        ({"palette_joint": np.array([0, -1, 2])}, "negative"),
        ({"palette_joint": np.arange(2)}, "for 2 palette"),
        ({"weights": np.tile([0.5, 0.4], (8, 1))}, "sum to 1"),
        ({"weights": np.tile([np.nan, 0.0], (8, 1))}, "finite"),
        (
            {
                "influence": np.zeros((8, 9), dtype=int),
                "weights": np.c_[np.ones(8), np.zeros((8, 8))],
            },
            "9 influences",
        ),
    ],
)
def test_bad_meshes_are_refused(change: dict, expected: str) -> None:
    base = mesh()
    keys = (
        "name",
        "vertices",
        "triangles",
        "influence",
        "weights",
        "palette_joint",
        "inverse_bind",
    )
    fields = {k: getattr(base, k) for k in keys}
    fields.update(change)
    with pytest.raises(ClipValidationError, match=expected):
        SkinnedMesh(**fields)


def test_clip_refuses_a_mesh_of_another_skeleton() -> None:
    sk = Skeleton.create(["a", "b"], [-1, 0])
    rot = np.tile([0.0, 0.0, 0.0, 1.0], (1, 2, 1))
    with pytest.raises(ClipValidationError, match="bound to joint 2"):
        Clip(sk, 30.0, rot, np.zeros((1, 2, 3)), np.ones((1, 2, 3)), meshes=(mesh(3),))
    clip = Clip(sk, 30.0, rot, np.zeros((1, 2, 3)), np.ones((1, 2, 3)), meshes=[mesh(2)])
    assert isinstance(clip.meshes, tuple) and clip.replace(name="x").meshes is clip.meshes


def test_skin_merges_meshes_with_their_own_palettes() -> None:
    a = mesh(3, "a", joints=np.tile([2, 2], (8, 1)))
    w = np.tile([0.25, 0.75], (8, 1))
    b = mesh(3, "b", joints=np.tile([0, 1], (8, 1)), weights=w)
    b = SkinnedMesh(
        "b",
        b.vertices,
        b.triangles,
        b.influence,
        b.weights,
        b.palette_joint,
        b.inverse_bind * 2.0,
        np.eye(3, 4) + [[0, 0, 0, 5]] * 3,
    )
    skin = Skin.of((a, b))
    assert skin.num_vertices == 16 and len(skin.triangles) == 24
    assert skin.triangles[12:].min() == 8  # b's triangles point at b's vertices
    assert list(skin.mesh_offsets) == [0, 8, 16] and skin.names == ("a", "b")
    assert skin.mesh_of(7) == 0 and skin.mesh_of(8) == 1
    # each mesh keeps its own inverse bind matrices: joint 2 of a, joints 0 and 1 of b
    assert list(skin.palette_joint) == [2, 0, 1]
    assert np.allclose(skin.inverse_bind[1:], 2.0 * np.eye(3, 4))
    assert np.all(skin.dominant_joint[:8] == 2) and np.all(skin.dominant_joint[8:] == 1)
    # b's node matrix moved its vertices into bind space
    assert np.allclose(skin.vertices[8:], a.vertices + 5.0)
    local, joints, weights = skin.joint_space_vertices()
    assert np.allclose(local[8:, 0], 2.0 * (a.vertices + 5.0))
    assert np.array_equal(joints[8:], np.tile([0, 1], (8, 1)))


def test_skin_of_is_built_once_per_meshes_tuple() -> None:
    meshes = (mesh(),)
    assert skin_of(meshes) is skin_of(meshes)
    assert skin_of(()) is None
    assert skin_of((mesh(),)) is not skin_of(meshes)


def test_scaled_mesh_scales_lengths_only() -> None:
    m = mesh()
    ibm = np.array(m.inverse_bind)
    ibm[1, :, 3] = [1.0, 2.0, 3.0]
    m = SkinnedMesh(m.name, m.vertices, m.triangles, m.influence, m.weights, m.palette_joint, ibm)
    s = m.scaled(100.0)
    assert np.allclose(s.vertices, m.vertices * 100)
    assert np.allclose(s.inverse_bind[1, :, 3], [100.0, 200.0, 300.0])
    assert np.allclose(s.inverse_bind[:, :, :3], m.inverse_bind[:, :, :3])
    assert np.array_equal(s.weights, m.weights)
