"""Skin-strict compression: every vertex within its strongest joint's precision at every sample,
checked from the written bytes by a float64 skinning of our own (4x4 matrices, one vertex
influence at a time), on the real skinned clips and on a hand-made one where shells from the
mesh under-protect the skin."""

from __future__ import annotations

import io
import json
import shutil
from functools import cache
from pathlib import Path

import numpy as np
import pytest

import codec
from codec.compression import compress
from codec.errors import SettingsError
from codec.measure.mesh_shells import with_mesh_shells
from codec.model.clip import Clip
from codec.model.mesh import SkinnedMesh
from codec.model.transforms import object_space
from codec.settings import CompressionSettings
from tests.codec.helpers import chain_clip, data_clip
from tests.codec.measure.test_vertex_error import worlds

GLTF = Path(__file__).resolve().parents[1] / "data" / "gltf"
STRICT = CompressionSettings(skin_strict=True)


def world_matrices(clip: Clip) -> np.ndarray:
    """(S, J, 4, 4) object-space matrices of every sample, built with 4x4 maths here."""
    return worlds(clip.rotations, clip.translations, clip.scales, clip.skeleton.parents)


def independent_vertex_error(raw: Clip, data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """(V,) each vertex's largest error over the samples and (V,) its budget (its strongest
    joint's precision), from the .ssc bytes decoded at the source samples, every mesh of the
    clip skinned vertex influence by vertex influence in float64."""
    lossy = codec.decode(data, raw.skeleton).decode_source()
    a, b = world_matrices(raw), world_matrices(lossy)
    errors, budgets = [], []
    for mesh in raw.meshes:
        node = np.vstack([mesh.node_matrix, [0, 0, 0, 1]])
        pos = np.c_[mesh.vertices, np.ones(mesh.num_vertices)] @ node.T  # (V, 4) bind space
        ibm = np.tile(np.eye(4), (len(mesh.inverse_bind), 1, 1))
        ibm[:, :3] = mesh.inverse_bind
        diff = np.zeros((raw.num_samples, mesh.num_vertices, 4))
        for k in range(mesh.influence.shape[1]):
            w = mesh.weights[:, k]
            entry = mesh.influence[:, k]
            joint = mesh.palette_joint[entry]
            local = np.einsum("vab,vb->va", ibm[entry], pos)  # (V, 4) in the joint's bind space
            moved = np.einsum("svab,vb->sva", a[:, joint] - b[:, joint], local)
            diff += w[None, :, None] * moved
        errors.append(np.linalg.norm(diff[..., :3], axis=-1).max(axis=0))
        strongest = mesh.palette_joint[
            mesh.influence[np.arange(mesh.num_vertices), mesh.weights.argmax(1)]
        ]
        budgets.append(raw.skeleton.precision[strongest])
    return np.concatenate(errors), np.concatenate(budgets)


@cache
def strict_result(name: str, animation: str | None):
    clip = codec.load_clip(GLTF / name, animation=animation)
    return clip, compress(clip, STRICT), compress(with_mesh_shells(clip))


@pytest.mark.parametrize("name, animation", [("CesiumMan.glb", None), ("Fox.glb", "Walk")])
def test_the_real_skins_meet_their_budget_from_the_bytes(name: str, animation: str | None) -> None:
    clip, result, mesh_shells = strict_result(name, animation)
    err, budget = independent_vertex_error(result.clip, result.data)
    assert err.max() > 1e-3  # a real error was checked, not zeros
    assert np.all(err <= budget), f"vertex {int(np.argmax(err / budget))}: {err.max():.9f}"
    k = result.stats["skin_strict"]
    assert k["on"] and k["met"] and result.stats["vertex_precision_met"]
    # the stats give the same number as the outsider
    assert err.max() == pytest.approx(k["vertex_max_error"], rel=1e-9, abs=1e-12)
    assert k["worst_share"] == pytest.approx(np.max(err / budget), rel=1e-9)
    # close to the shells from the mesh, in bytes
    assert result.stats["compressed_size"] <= 1.15 * mesh_shells.stats["compressed_size"]
    # the shells it used are the mesh's, the budgets the user's
    assert np.array_equal(
        result.clip.skeleton.shell_distance, mesh_shells.clip.skeleton.shell_distance
    )
    assert np.array_equal(result.clip.skeleton.precision, clip.skeleton.precision)


def test_cesium_man_is_over_its_budget_with_mesh_shells_and_within_it_skin_strict() -> None:
    _, result, mesh_shells = strict_result("CesiumMan.glb", None)
    err, budget = independent_vertex_error(mesh_shells.clip, mesh_shells.data)
    assert np.any(err > budget)  # the premise: three points per joint under-protect the skin
    assert result.stats["skin_strict"]["rounds"] > 1
    assert result.stats["skin_strict"]["tightened_joints"]


def ball_rig(
    seed: int = 5, per_joint: int = 100, radius: float = 12.0, palette: tuple[int, ...] = (0, 1, 2)
) -> Clip:
    """A swinging 3-joint chain, each joint holding a ball of vertices around it (weight 1):
    a rotation about a diagonal moves its points off the shell axes most, so three shell
    points at the ball's radius under-estimate it. `palette`: the joint of each palette
    entry (vertex v still hangs on joint v // per_joint)."""
    chain = chain_clip(num_samples=20, num_joints=3, seed=seed)
    bind = object_space(
        chain.rotations[0], chain.translations[0], chain.scales[0], chain.skeleton.parents
    )
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=(per_joint, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    verts = np.concatenate([direction * radius @ m[:, :3].T + m[:, 3] for m in bind])
    order = np.array(palette)
    entries = np.argsort(order)[np.repeat(np.arange(3), per_joint)][:, None]
    ibm = np.empty((3, 3, 4))
    for e, m in enumerate(bind[order]):
        inv = np.linalg.inv(m[:, :3])
        ibm[e] = np.c_[inv, -inv @ m[:, 3]]
    mesh = SkinnedMesh("ball", verts, np.zeros((0, 3)), entries, np.ones_like(entries), order, ibm)
    return chain.replace(meshes=(mesh,))


@pytest.mark.parametrize("palette", [(0, 1, 2), (2, 0, 1)], ids=["joint-order", "shuffled"])
def test_a_hand_made_skin_shells_under_protect_is_kept_within_budget(palette) -> None:
    """Also with a palette out of joint order (entry 0 is joint 2): the joints tightened are
    those whose balls were over their budget, not the joints numbered as their entries."""
    clip = ball_rig(palette=palette)
    shells = compress(with_mesh_shells(clip))
    before, budget = independent_vertex_error(shells.clip, shells.data)
    assert before.max() > budget.max()  # the shells from the mesh let the ball move too much
    over = sorted({clip.skeleton.names[v // 100] for v in np.flatnonzero(before > budget)})
    result = compress(clip, STRICT)
    after, budget = independent_vertex_error(result.clip, result.data)
    assert np.all(after <= budget)
    assert result.stats["skin_strict"]["met"] and result.stats["skin_strict"]["rounds"] >= 2
    assert result.stats["skin_strict"]["tightened_joints"] == over
    # the file decodes with the ordinary decoder alone, and means the measured clip
    again = codec.decode(result.data).decode_source()
    assert np.array_equal(again.rotations, result.lossy.rotations)


@pytest.mark.parametrize("name", ["subsample", "auto"])
def test_every_codec_takes_part(name: str) -> None:
    clip = ball_rig()
    result = compress(clip, CompressionSettings(skin_strict=True, codec=name))
    err, budget = independent_vertex_error(result.clip, result.data)
    assert np.all(err <= budget) and result.stats["skin_strict"]["met"]


def test_a_clip_without_a_mesh_is_refused() -> None:
    clip = codec.load_clip(data_clip("cmu_09_02.acl.sjson"))
    with pytest.raises(SettingsError, match="skin-strict needs a skinned mesh"):
        compress(clip, STRICT)


def test_destructive_stripping_and_skin_strict_do_not_go_together() -> None:
    with pytest.raises(SettingsError, match="destructive keyframe stripping"):
        CompressionSettings(skin_strict=True, strip_proportion=0.2)


# ------------------------------------------------------------------------ the command line


def run_cli(*argv: object) -> tuple[int, str, str]:
    from codec.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_compress_skin_strict_says_so_in_the_summary_and_the_json(tmp_path: Path) -> None:
    out_json = tmp_path / "walk.json"
    fox = GLTF / "Fox.glb"
    code, out, err = run_cli(
        "compress", fox, "--animation", "Walk", "--skin-strict", "--json", out_json
    )
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.strip().startswith("skin strict"))
    assert "on, met: yes" in line and "of its budget 0.01 cm" in line
    stats = json.loads(out_json.read_text())
    assert stats["skin_strict"]["on"] and stats["skin_strict"]["met"]
    assert stats["skin_strict"]["vertex_max_error"] == stats["vertex_max_error"] <= 0.01
    code, out, _ = run_cli("compress", fox, "--animation", "Walk", "--json", "-")
    assert code == 0 and "skin_strict" not in json.loads(out)  # off unless asked


def test_compress_skin_strict_on_a_clip_without_a_mesh_is_one_line_exit_2() -> None:
    clip = data_clip("cmu_09_02.acl.sjson")
    code, out, err = run_cli("compress", clip, "--skin-strict")
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert str(clip) in lines[0] and "--skin-strict: the clip has no skinned mesh" in lines[0]


def test_a_sidecar_can_turn_skin_strict_on(tmp_path: Path) -> None:
    from codec.sidecar import load_sidecar, save_sidecar
    from codec.tuning import GlobalSettings

    fox = tmp_path / "Fox.glb"
    shutil.copy(GLTF / "Fox.glb", fox)
    save_sidecar(fox, GlobalSettings(skin_strict=True), (), "Walk")
    assert load_sidecar(fox, "Walk")[0].skin_strict
    code, out, err = run_cli("compress", fox, "--animation", "Walk", "--json", "-")
    assert code == 0, err
    assert json.loads(out)["skin_strict"]["met"]
