"""Linear-blend skinning: a case worked by hand, and the batched code against a plain loop."""

from __future__ import annotations

import numpy as np
import pytest

from codec.measure import skinning
from codec.measure.skinning import palette, skin_points, skin_vertices, vertex_distances
from codec.model import quat
from codec.model.clip import Clip, Skeleton
from codec.model.mesh import Skin, SkinnedMesh
from codec.model.transforms import object_space
from tests.codec.helpers import random_hierarchy_clip


def two_bone_clip() -> Clip:
    """root at the origin, child 10 cm up; sample 1 turns the child 90 degrees about z."""
    sk = Skeleton.create(["root", "child"], [-1, 0], bind_translations=[[0, 0, 0], [0, 10, 0]])
    rot = quat.identity((2, 2))
    rot[1, 1] = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), np.pi / 2)
    tr = np.tile(sk.bind_translations, (2, 1, 1))
    return Clip(sk, 30.0, rot, tr, np.ones((2, 2, 3)))


def inverse_binds(clip: Clip) -> np.ndarray:
    sk = clip.skeleton
    bind = object_space(
        sk.bind_rotations[None], sk.bind_translations[None], sk.bind_scales[None], sk.parents
    )[0]
    full = np.tile(np.eye(4), (len(bind), 1, 1))
    full[:, :3] = bind
    return np.linalg.inv(full)[:, :3]


def test_two_bones_by_hand() -> None:
    clip = two_bone_clip()
    verts = np.array([[0.0, 15, 0], [0.0, 15, 0], [1.0, 0, 0]])
    m = SkinnedMesh(
        "arm",
        verts,
        np.array([[0, 1, 2]]),
        [[1, 0], [0, 1], [0, 0]],
        [[1.0, 0.0], [0.5, 0.5], [1.0, 0.0]],
        [0, 1],
        inverse_binds(clip),
    )
    out = skin_vertices(clip.object_space(), Skin.of([m]))
    assert np.allclose(out[0], verts)  # the bind pose leaves the skin where it was
    # the child's vertex swings about the child: (0, 5, 0) -> (-5, 0, 0) around (0, 10, 0)
    assert np.allclose(out[1], [[-5.0, 10, 0], [-2.5, 12.5, 0], [1.0, 0, 0]])


def naive(os_: np.ndarray, m: SkinnedMesh) -> np.ndarray:
    """Skin every vertex of every pose one by one with 4x4 matrices."""
    out = np.zeros((len(os_), m.num_vertices, 3))
    node = np.vstack([m.node_matrix, [0, 0, 0, 1]])
    for s in range(len(os_)):
        for v in range(m.num_vertices):
            p = node @ np.r_[m.vertices[v], 1.0]
            acc = np.zeros(4)
            for b, w in zip(m.influence[v], m.weights[v], strict=True):
                world = np.vstack([os_[s, m.palette_joint[b]], [0, 0, 0, 1]])
                ibm = np.vstack([m.inverse_bind[b], [0, 0, 0, 1]])
                acc += w * (world @ ibm @ p)
            out[s, v] = acc[:3]
    return out


def random_mesh(clip: Clip, rng: np.random.Generator, n: int, k: int, name: str) -> SkinnedMesh:
    """A palette binding some joints twice with different matrices, as FBX clusters may."""
    palette = np.r_[np.arange(clip.num_joints), rng.integers(0, clip.num_joints, 3)]
    j = rng.integers(0, len(palette), size=(n, k))
    w = rng.random((n, k)) * (rng.random((n, k)) > 0.3)
    w[:, 0] += 0.1
    w /= w.sum(axis=1, keepdims=True)
    ibm = rng.normal(size=(len(palette), 3, 4))
    node = np.c_[quat.to_matrix(quat.normalize(rng.normal(size=4))) * 2.0, rng.normal(size=3)]
    tris = rng.integers(0, n, size=(n, 3))
    return SkinnedMesh(name, rng.normal(size=(n, 3)) * 20, tris, j, w, palette, ibm, node)


@pytest.mark.parametrize("seed", [0, 1])
def test_batched_matches_a_plain_loop_over_vertices(seed: int) -> None:
    clip = random_hierarchy_clip(seed, num_joints=7, num_samples=9)
    rng = np.random.default_rng(seed)
    meshes = [random_mesh(clip, rng, 30, 8, "a"), random_mesh(clip, rng, 20, 3, "b")]
    os_ = clip.object_space()
    got = skin_vertices(os_, Skin.of(meshes))
    want = np.concatenate([naive(os_, m) for m in meshes], axis=1)
    assert np.allclose(got, want, rtol=0, atol=1e-9)


def test_chunks_do_not_change_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    clip = random_hierarchy_clip(3, num_joints=6, num_samples=25)
    rng = np.random.default_rng(3)
    skin = Skin.of([random_mesh(clip, rng, 40, 4, "a")])
    raw = clip.object_space()
    lossy = raw + rng.normal(scale=1e-3, size=raw.shape)
    whole = vertex_distances(raw, lossy, skin)
    monkeypatch.setattr(skinning, "CHUNK_VALUES", 12 * 40 * 2)  # two poses per chunk
    assert len(list(skinning.chunks(25, skin))) == 13
    assert np.array_equal(vertex_distances(raw, lossy, skin), whole)
    a, b = skin_vertices(raw, skin), skin_vertices(lossy, skin)
    assert np.allclose(whole, np.linalg.norm(a - b, axis=-1), rtol=0, atol=1e-12)


def test_normals_turn_with_their_joint() -> None:
    clip = two_bone_clip()
    verts = np.array([[1.0, 15, 0], [-1.0, 15, 0], [0.0, 15, 1]])
    m = SkinnedMesh(
        "tube",
        verts,
        np.array([[0, 1, 2]]),
        [[1], [1], [1]],
        [[1.0]] * 3,
        [0, 1],
        inverse_binds(clip),
    )
    skin = Skin.of([m])
    n = skin_points(palette(clip.object_space(), skin), skin, normals=True)
    assert np.allclose(np.linalg.norm(n, axis=-1), 1.0)
    # a 90 degree turn about z takes the bind normal's x to y and y to -x
    bind = skin.normals
    turned = np.c_[-bind[:, 1], bind[:, 0], bind[:, 2]]
    assert np.allclose(n[0], bind) and np.allclose(n[1], turned)


def numpy_pose_distances(raw: np.ndarray, lossy: np.ndarray, skin: Skin) -> np.ndarray:
    """The distances as numpy computed them before the compiled kernel: the palette
    difference gathered per influence slot, the squared length summed by einsum."""
    v = skin.vertices
    d = palette(raw, skin) - palette(lossy, skin)
    acc = np.zeros((d.shape[0], skin.num_vertices, 3))
    for k in range(skin.influence.shape[1]):
        w = skin.weights[:, k]
        live = np.flatnonzero(w > 0)
        if len(live) == 0:
            continue
        m = d[:, skin.influence[live, k]]
        x = v[live]
        moved = m[..., 0] * x[:, None, 0] + m[..., 1] * x[:, None, 1]
        moved += m[..., 2] * x[:, None, 2] + m[..., 3]
        acc[:, live] += w[live, None] * moved
    return np.sqrt(np.einsum("nvi,nvi->nv", acc, acc))


@pytest.mark.parametrize("source", ["CesiumMan.glb", "Fox.glb", "RiggedSimple.glb", "random"])
def test_compiled_distances_are_numpys_to_the_bit(source: str) -> None:
    """Real skins (their compressed poses against the raw ones) and a random one with empty
    influence slots: the compiled kernel gives numpy's float64 distances bit for bit."""
    import codec
    from codec.model.mesh import skin_of
    from codec.settings import CompressionSettings
    from tests.codec.helpers import DATA

    if source == "random":
        clip = random_hierarchy_clip(5, num_joints=7, num_samples=12)
        rng = np.random.default_rng(5)
        skin = Skin.of([random_mesh(clip, rng, 50, 4, "a"), random_mesh(clip, rng, 9, 2, "b")])
        raw = clip.object_space()
        lossy = raw + rng.normal(scale=1e-3, size=raw.shape)
    else:
        clip = codec.load_clip(DATA / "gltf" / source)
        settings = CompressionSettings(precision=0.05, skin_error=False)
        r = codec.compress(clip, settings)
        got_skin = skin_of(clip.meshes)
        assert got_skin is not None
        skin = got_skin
        raw, lossy = clip.object_space(), r.lossy.object_space()
    got = skinning.pose_distances(raw, lossy, skin)
    want = numpy_pose_distances(raw, lossy, skin)
    assert want.max() > 0.0
    assert got.shape == want.shape and got.tobytes() == want.tobytes()
