"""Skinned and rigid meshes read from FBX, checked against ufbx's own skinning."""

from __future__ import annotations

import io
import json
import lzma
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import codec
from codec.measure.skinning import skin_vertices
from codec.model.mesh import skin_of

FBX = Path(__file__).resolve().parents[2] / "data" / "fbx"
ROOT = Path(__file__).resolve().parents[3]

# ufbx evaluates the scene and skins every skinned mesh itself (blend shapes included); run
# in a child process, as the reader does, because ufbx 0.0.5 crashes at interpreter exit
UFBX_SKIN = r"""
import io, json, lzma, os, sys
import numpy as np
import ufbx
keep = []
def k(x):
    keep.append(x)
    return x
req = json.loads(sys.argv[1])
data = lzma.decompress(open(req["path"], "rb").read())
scene = k(ufbx.load_memory(data, load_external_files=False, ignore_embedded=True,
          inherit_mode_handling=ufbx.InheritModeHandling.COMPENSATE))
stack = k(k(scene.anim_stacks)[0])
out = {}
for frame in req["frames"]:
    t = float(stack.time_begin) + frame / req["rate"]
    ev = k(ufbx.evaluate_scene(scene, k(stack.anim), t, evaluate_skinning=True))
    for m in k(ev.meshes):
        k(m)
        if not len(k(m.skin_deformers)):
            continue
        sp = k(m.skinned_position)
        per = np.zeros((m.num_vertices, 3))
        per[np.asarray(k(m.vertex_indices))] = np.asarray(k(sp.values))[np.asarray(k(sp.indices))]
        out[f"{frame}/{m.name}"] = per
        moved = np.zeros(m.num_vertices, dtype=bool)
        for b in k(m.blend_deformers):
            for ch in k(k(b).channels):
                for key in k(k(ch).keyframes):
                    moved[np.asarray(k(k(k(key).shape).offset_vertices), dtype=np.int64)] = True
        out[f"blend/{m.name}"] = moved
        d = k(k(m.skin_deformers)[0])
        counts = np.asarray(k(d.vertices))[:, 1]
        out[f"weighted/{m.name}"] = counts > 0
buf = io.BytesIO()
np.savez(buf, **out)
sys.stdout.buffer.write(buf.getvalue())
sys.stdout.flush()
os._exit(0)
"""


def ufbx_skinned(path: Path, frames: list[int], rate: float) -> dict[str, np.ndarray]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    req = json.dumps({"path": str(path), "frames": frames, "rate": rate})
    proc = subprocess.run(
        [sys.executable, "-c", UFBX_SKIN, req],
        capture_output=True,
        env=env,
        check=True,
        timeout=120,
    )
    with np.load(io.BytesIO(proc.stdout)) as npz:
        return {k: npz[k] for k in npz.files}


@pytest.mark.parametrize(
    "name, skinned, rigid",
    [
        ("maya_kenney_character_7700_binary.fbx.xz", 1, 0),
        ("quaternius_robot.fbx.xz", 2, 12),
        ("blender_293_barbarian_7400_binary.fbx.xz", 2, 0),
    ],
)
def test_skinned_meshes_follow_ufbx(name: str, skinned: int, rigid: int) -> None:
    clip = codec.load_clip(FBX / name)
    assert len(clip.meshes) == skinned + rigid
    skin = skin_of(clip.meshes)
    frames = [0, clip.num_samples // 2, clip.num_samples - 1]
    ours = skin_vertices(clip.object_space()[frames], skin)
    theirs = ufbx_skinned(FBX / name, frames, clip.sample_rate)
    checked = 0
    for i, mesh_name in enumerate(skin.names):
        key = f"{frames[0]}/{mesh_name if mesh_name != 'mesh_0' else ''}"
        if key not in theirs:
            continue  # a rigid mesh: ufbx skins only meshes with a skin deformer
        ufbx_name = key.split("/", 1)[1]
        shaped = theirs[f"blend/{ufbx_name}"]
        # vertices no joint moves (unweighted, the mesh node under no joint) are left out
        kept = np.ones(len(shaped), dtype=bool)
        if skin.mesh_offsets[i + 1] - skin.mesh_offsets[i] < len(shaped):
            kept = theirs[f"weighted/{ufbx_name}"]
            assert any("no joint moves are left out" in w for w in clip.warnings)
        shaped = shaped[kept]
        for f_i, frame in enumerate(frames):
            want = theirs[f"{frame}/{ufbx_name}"][kept] * clip.units.to_cm
            got = ours[f_i, skin.mesh_offsets[i] : skin.mesh_offsets[i + 1]]
            diff = np.linalg.norm(got - want, axis=1)
            # every vertex agrees but those ufbx also moves by blend shapes, which the
            # clip leaves out (and says so)
            assert np.all(diff[~shaped] < 1e-6), (mesh_name, frame, diff[~shaped].max())
            checked += int((~shaped).sum())
        if shaped.any():
            assert any("blend shapes are ignored" in w for w in clip.warnings)
    assert checked > 0


def test_rigid_parts_move_with_their_joint() -> None:
    """The robot's unskinned parts hang below bones: each follows its bone rigidly."""
    clip = codec.load_clip(FBX / "quaternius_robot.fbx.xz")
    skin = skin_of(clip.meshes)
    os_ = clip.object_space()
    posed = skin_vertices(os_, skin)
    rigid = [i for i, m in enumerate(clip.meshes) if len(np.unique(m.joints)) == 1]
    assert len(rigid) == 12
    for i in rigid:
        m = clip.meshes[i]
        j = int(m.joints[0, 0])
        v = posed[:, skin.mesh_offsets[i] : skin.mesh_offsets[i + 1]]
        # in the joint's own space the part does not move at all
        r, t = os_[:, j, :, :3], os_[:, j, :, 3]
        local = np.einsum("sij,svj->svi", np.linalg.inv(r), v - t[:, None])
        assert np.max(np.abs(local - local[:1])) < 1e-6
        # and it starts where the file puts it: near the joint, not at the origin
        assert np.linalg.norm(v[0].mean(0) - t[0]) < 60.0


def test_props_not_bound_to_the_skeleton_are_left_out_with_a_note() -> None:
    clip = codec.load_clip(FBX / "blender_293_barbarian_7400_binary.fbx.xz")
    assert [m.name for m in clip.meshes] == ["Sphere", "Cube"]
    assert "meshes: 31 neither skinned nor under a joint (props, scenery) left out" in clip.warnings


def test_a_file_without_meshes_has_none() -> None:
    clip = codec.load_clip(FBX / "cmu_07_01_blender.fbx.xz")
    assert clip.meshes == ()


def test_plain_and_compressed_fbx_read_the_same_mesh(tmp_path: Path) -> None:
    plain = tmp_path / "kenney.fbx"
    plain.write_bytes(
        lzma.decompress((FBX / "maya_kenney_character_7700_binary.fbx.xz").read_bytes())
    )
    a = codec.load_clip(plain).meshes[0]
    b = codec.load_clip(FBX / "maya_kenney_character_7700_binary.fbx.xz").meshes[0]
    assert np.array_equal(a.vertices, b.vertices) and np.array_equal(a.weights, b.weights)
