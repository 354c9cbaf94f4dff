"""Skinned meshes read from glTF: a hand-built file exercising every rule, and the samples."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

import codec
from codec.formats.gltf import read_gltf

DATA = Path(__file__).resolve().parents[2] / "data" / "gltf"


def build(tmp_path: Path) -> Path:
    """Armature (non-joint) -> A -> B; skin 0 lists [B, A] (so file index 0 is clip joint 1)
    with inverse bind matrices; skin 1 lists [B] without any; skin 2 another skeleton (X).

    body (mesh 0, skin 0, node translated by 100 m, which glTF says to ignore):
      primitive 0: TRIANGLES, 4 vertices, uint16 indices, JOINTS_0/1 + WEIGHTS_0/1 (u8
        normalised): 8 influences; primitive 1: a TRIANGLE_STRIP of 4 vertices, no indices;
      primitive 2: POINTS (not skin).
    cap (mesh 1, skin 1): one triangle on B.  other (mesh 1, skin 2): another skeleton.
    broken (mesh 2, skin 0): JOINTS_0 points at joint 5 of a 2-joint skin.
    """
    parts: list[tuple[np.ndarray, int, str, bool]] = []

    def add(arr: np.ndarray, ctype: int, kind: str, normalized: bool = False) -> int:
        parts.append((arr, ctype, kind, normalized))
        return len(parts) - 1

    f4, u1, u2 = np.float32, np.uint8, np.uint16
    pos0 = add(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], f4), 5126, "VEC3")
    idx0 = add(np.array([0, 1, 2, 0, 2, 3], u2), 5123, "SCALAR")
    j0 = add(np.array([[0, 1, 0, 0]] * 4, u1), 5121, "VEC4")
    w0 = add(
        np.array([[204, 0, 0, 0], [255, 0, 0, 0], [0, 255, 0, 0], [51, 51, 51, 51]], u1),
        5121,
        "VEC4",
        True,
    )
    j1 = add(np.array([[1, 0, 0, 0]] * 4, u1), 5121, "VEC4")
    w1 = add(
        np.array([[51, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [51, 51, 51, 51]], u1),
        5121,
        "VEC4",
        True,
    )
    pos1 = add(np.array([[2, 0, 0], [2, 1, 0], [3, 0, 0], [3, 1, 0]], f4), 5126, "VEC3")
    j_1 = add(np.array([[1, 0, 0, 0]] * 4, u2), 5123, "VEC4")
    w_1 = add(np.array([[1, 0, 0, 0]] * 4, f4), 5126, "VEC4")
    pos_cap = add(np.array([[0, 2, 0], [1, 2, 0], [0, 3, 0]], f4), 5126, "VEC3")
    j_cap = add(np.array([[0, 0, 0, 0]] * 3, u1), 5121, "VEC4")
    w_cap = add(np.array([[1, 0, 0, 0]] * 3, f4), 5126, "VEC4")
    j_bad = add(np.array([[5, 0, 0, 0]] * 3, u1), 5121, "VEC4")
    ibm = np.tile(np.eye(4, dtype=f4), (2, 1, 1))
    ibm[0, :3, 3] = [0.5, 0, 0]  # B: bind space -> B shifts x by 0.5 m
    ibm_acc = add(ibm.transpose(0, 2, 1).reshape(2, 16), 5126, "MAT4")  # column-major

    views, accessors, blob = [], [], b""
    for arr, ctype, kind, normalized in parts:
        blob += b"\0" * (-len(blob) % 4)
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": arr.nbytes})
        acc = {
            "bufferView": len(views) - 1,
            "componentType": ctype,
            "count": len(arr),
            "type": kind,
        }
        if normalized:
            acc["normalized"] = True
        accessors.append(acc)
        blob += arr.tobytes()
    skinned = {"POSITION": pos0, "JOINTS_0": j0, "WEIGHTS_0": w0, "JOINTS_1": j1, "WEIGHTS_1": w1}
    doc = {
        "asset": {"version": "2.0"},
        "nodes": [
            {"name": "Armature", "translation": [1, 0, 0], "children": [1]},
            {"name": "A", "children": [2]},
            {"name": "B", "translation": [0, 1, 0]},
            {"name": "body", "mesh": 0, "skin": 0, "translation": [100, 0, 0]},
            {"name": "cap", "mesh": 1, "skin": 1},
            {"name": "other", "mesh": 1, "skin": 2},
            {"name": "X"},
            {"name": "broken", "mesh": 2, "skin": 0},
        ],
        "skins": [
            {"joints": [2, 1], "inverseBindMatrices": ibm_acc},
            {"joints": [2]},
            {"joints": [6]},
        ],
        "meshes": [
            {
                "primitives": [
                    {"attributes": skinned, "indices": idx0},
                    {
                        "attributes": {"POSITION": pos1, "JOINTS_0": j_1, "WEIGHTS_0": w_1},
                        "mode": 5,
                    },
                    {
                        "attributes": {"POSITION": pos1, "JOINTS_0": j_1, "WEIGHTS_0": w_1},
                        "mode": 0,
                    },
                ]
            },
            {
                "primitives": [
                    {"attributes": {"POSITION": pos_cap, "JOINTS_0": j_cap, "WEIGHTS_0": w_cap}}
                ]
            },
            {
                "primitives": [
                    {"attributes": {"POSITION": pos_cap, "JOINTS_0": j_bad, "WEIGHTS_0": w_cap}}
                ]
            },
        ],
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [
            {
                "byteLength": len(blob),
                "uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode(),
            }
        ],
    }
    path = tmp_path / "skinned.gltf"
    path.write_text(json.dumps(doc))
    return path


def test_hand_built_skin(tmp_path: Path) -> None:
    clip = read_gltf(build(tmp_path))
    assert clip.skeleton.names == ("A", "B")
    assert [m.name for m in clip.meshes] == ["body", "cap"]  # not other's, not the broken one
    body, cap = clip.meshes
    # metres to cm; the node's own 100 m translation is ignored as the spec says
    assert np.allclose(body.vertices[:4], [[0, 0, 0], [100, 0, 0], [0, 100, 0], [0, 0, 100]])
    assert np.allclose(body.node_matrix, np.eye(3, 4))
    # indexed triangles, then the strip with its second triangle's winding flipped back
    assert body.triangles.tolist() == [[0, 1, 2], [0, 2, 3], [4, 5, 6], [6, 5, 7]]
    # file joint 0 is B (clip 1), 1 is A (clip 0); 8 influences from the two sets
    assert body.joints.shape[1] == 8
    w = np.zeros((4, 2))  # weight of clip joint A, B per vertex
    np.add.at(w, (np.arange(4)[:, None].repeat(8, 1), body.joints[:4]), body.weights[:4])
    assert np.allclose(w, [[0.2, 0.8], [0.0, 1.0], [1.0, 0.0], [2 / 8, 6 / 8]], atol=1e-9)
    assert np.allclose(body.weights.sum(axis=1), 1.0)
    assert np.all(body.joints[4:] == 0)  # the strip's file joint 1 is clip joint A
    # the palette is the skin's joints: B's inverse bind matrix (cm), then A's identity
    assert body.palette_joint.tolist() == [1, 0]
    assert np.allclose(body.inverse_bind[0, :, 3], [50.0, 0, 0])
    assert np.allclose(body.inverse_bind[1], np.eye(3, 4))
    # skin 1 lists only B, without matrices: identity, and its joint 0 is clip joint 1
    assert cap.palette_joint.tolist() == [1] and np.all(cap.joints == 1)
    assert np.allclose(cap.inverse_bind, np.eye(3, 4))
    text = " | ".join(clip.warnings)
    assert "mode 0" in text and "meshes[0].primitives[2]" in text
    assert "nodes[7]" in text and "joint" in text and "left out" in text


def test_metres_kept_when_asked(tmp_path: Path) -> None:
    clip = read_gltf(build(tmp_path), scale_to_cm=False)
    body = clip.meshes[0]
    assert np.allclose(body.vertices[1], [1, 0, 0])
    assert np.allclose(body.inverse_bind[0, :, 3], [0.5, 0, 0])


@pytest.mark.parametrize(
    "name, vertices, triangles, joints",
    [
        ("Fox.glb", 1728, 576, 24),
        ("CesiumMan.glb", 3273, 4672, 19),
        ("RiggedSimple.glb", 160, 188, 2),
    ],
)
def test_samples_carry_their_mesh(name: str, vertices: int, triangles: int, joints: int) -> None:
    clip = codec.load_clip(DATA / name)
    (mesh,) = clip.meshes
    assert mesh.num_vertices == vertices and len(mesh.triangles) == triangles
    assert len(mesh.palette_joint) == joints == clip.num_joints
    assert sorted(mesh.palette_joint) == list(range(joints))
    assert np.allclose(mesh.weights.sum(axis=1), 1.0)
    # the first pose skinned with the file's matrices wraps the skin around the skeleton
    from codec.measure.skinning import skin_vertices
    from codec.model.mesh import skin_of

    skin = skin_of(clip.meshes)
    posed = skin_vertices(clip.object_space()[:1], skin)[0]
    joints_at = clip.object_space()[0, :, :, 3]
    lo, hi = posed.min(0), posed.max(0)
    assert np.all(joints_at >= lo - 0.05 * (hi - lo)) and np.all(joints_at <= hi + 0.05 * (hi - lo))
    assert np.ptp(posed, axis=0).max() < 3.0 * np.ptp(joints_at, axis=0).max()


def test_units_scale_the_mesh(tmp_path: Path) -> None:
    cm = codec.load_clip(DATA / "RiggedSimple.glb")
    inch = codec.load_clip(DATA / "RiggedSimple.glb", units="inch")
    assert np.allclose(inch.meshes[0].vertices, cm.meshes[0].vertices * 0.0254)
