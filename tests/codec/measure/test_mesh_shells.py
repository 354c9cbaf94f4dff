"""Shell distances from the mesh: a rig measured by hand, the real clips, and the CLI."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import codec
from codec.errors import SettingsError
from codec.measure.mesh_shells import mesh_shell_distances, with_mesh_shells
from codec.model import quat
from codec.model.clip import Clip, Skeleton
from codec.model.mesh import SkinnedMesh
from tests.codec.helpers import chain_clip

GLTF = Path(__file__).resolve().parents[2] / "data" / "gltf"


def rig(with_root_vertex: bool = True) -> Clip:
    """j0 at the origin, j1 10 up, j2 10 above j1, j3 5 along x from j0 (no vertices)."""
    bind = np.array([[0, 0, 0], [0, 10, 0], [0, 10, 0], [5, 0, 0]], dtype=float)
    sk = Skeleton.create(
        ["j0", "j1", "j2", "j3"],
        [-1, 0, 1, 0],
        bind_translations=bind,
        shell_distance=[3.0, 3.0, 3.0, 2.5],
    )
    world = np.array([[0, 0, 0], [0, 10, 0], [0, 20, 0], [5, 0, 0]], dtype=float)
    ibm = np.tile(np.eye(3, 4), (4, 1, 1))
    ibm[:, :, 3] = -world
    verts = [[0, 10, 7], [0, 40, 0]]
    joints = [[1, 2], [1, 2]]
    weights = [[0.5, 0.5], [0.05, 0.95]]
    if with_root_vertex:
        verts.append([3, 4, 0])
        joints.append([0, 0])
        weights.append([1.0, 0.0])
    tris = np.array([[0, 1, len(verts) - 1]])
    mesh = SkinnedMesh("body", verts, tris, joints, weights, np.arange(4), ibm)
    rot = quat.identity((1, 4))
    return Clip(sk, 30.0, rot, bind[None], np.ones((1, 4, 3)), meshes=(mesh,))


def test_farthest_vertex_over_the_weight_threshold() -> None:
    dist, source = mesh_shell_distances(rig())
    # j0: (3, 4, 0) at 5; j1: (0, 0, 7) at 7 (the vertex 30 away weighs only 0.05);
    # j2: (0, 20, 0) at 20; j3 moves nothing and has no children: its own 2.5
    assert np.allclose(dist, [5.0, 7.0, 20.0, 2.5])
    assert list(source) == ["mesh", "mesh", "mesh", "fallback"]
    low, _ = mesh_shell_distances(rig(), threshold=0.01)
    assert low[1] == pytest.approx(30.0)
    fixed, _ = mesh_shell_distances(rig(), fallback=1.5)
    assert fixed[3] == 1.5 and np.allclose(fixed[:3], dist[:3])


def test_a_joint_without_vertices_takes_its_childrens_reach() -> None:
    dist, source = mesh_shell_distances(rig(with_root_vertex=False))
    # j1's shell of 7 pushed through its bind offset (0, 10, 0): the point (0, 17, 0)
    assert dist[0] == pytest.approx(17.0) and source[0] == "children"
    assert list(source[1:]) == ["mesh", "mesh", "fallback"]


def test_with_mesh_shells_writes_them_into_the_skeleton() -> None:
    clip = with_mesh_shells(rig())
    assert np.allclose(clip.skeleton.shell_distance, [5.0, 7.0, 20.0, 2.5])
    assert len(clip.meshes) == 1 and clip.meshes[0].num_vertices == 3


def test_a_clip_without_mesh_is_refused() -> None:
    with pytest.raises(SettingsError, match="no skinned mesh"):
        mesh_shell_distances(chain_clip())


@pytest.mark.parametrize("name, animation", [("Fox.glb", "Walk"), ("CesiumMan.glb", None)])
def test_real_clips_get_a_shell_per_joint(name: str, animation: str | None) -> None:
    clip = codec.load_clip(GLTF / name, animation=animation)
    dist, source = mesh_shell_distances(clip)
    moved = source == "mesh"
    assert moved.sum() >= clip.num_joints // 2
    assert len(np.unique(np.round(dist[moved], 6))) == moved.sum()  # all different
    # each one is a vertex's distance from its joint: check one joint by brute force
    m = clip.meshes[0]
    j = int(np.flatnonzero(moved)[0])
    ibm = m.inverse_bind[list(m.palette_joint).index(j)]
    heavy = np.any((m.joints == j) & (m.weights > 0.1), axis=1)
    local = m.vertices[heavy] @ ibm[:, :3].T + ibm[:, 3]
    assert dist[j] == pytest.approx(np.linalg.norm(local, axis=1).max())


def test_cli_compress_with_mesh_shells(tmp_path: Path, capsys) -> None:
    from codec.cli import main

    out = tmp_path / "fox.ssc"
    args = [
        "compress",
        str(GLTF / "Fox.glb"),
        "--animation",
        "Walk",
        "--shell-distance",
        "mesh",
        "-o",
        str(out),
    ]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "skin " in text and "shell honesty" in text and "vertex error" in text
    stored = codec.load_clip(out).skeleton.shell_distance  # the .ssc keeps them
    clip = codec.load_clip(GLTF / "Fox.glb", animation="Walk")
    want, _ = mesh_shell_distances(clip)
    assert np.allclose(stored, want) and len(np.unique(stored)) > clip.num_joints // 2
    assert not math.isclose(float(stored.min()), float(stored.max()))


def test_cli_refuses_mesh_shells_without_a_mesh(capsys) -> None:
    from codec.cli import main

    acl = Path(__file__).resolve().parents[2] / "data" / "acl" / "cmu_09_02.acl.sjson"
    assert main(["compress", str(acl), "--shell-distance", "mesh"]) == 2
    err = capsys.readouterr().err
    assert str(acl) in err and "no skinned mesh" in err
    assert main(["compress", str(acl), "--shell-distance", "meshy"]) == 2
    assert "not a number" in capsys.readouterr().err


def test_cli_stats_skips_meshless_clips_with_a_reason(tmp_path: Path, capsys) -> None:
    from codec.cli import main

    acl = Path(__file__).resolve().parents[2] / "data" / "acl" / "cmu_09_02.acl.sjson"
    csv = tmp_path / "rows.csv"
    args = [
        "stats",
        str(GLTF / "RiggedSimple.glb"),
        str(acl),
        "--shell-distance",
        "mesh",
        "--jobs",
        "1",
        "--csv",
        str(csv),
    ]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "skipped" in captured.err and "no skinned mesh" in captured.err
    assert "RiggedSimple" in csv.read_text() and "cmu_09_02" not in csv.read_text()
