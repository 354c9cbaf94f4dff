"""Readers against values worked out here, with strict tolerances.

`np.allclose` keeps rtol=1e-5, and rows of tiny angles make every rotation order look alike,
so a reader reading ZXY as ZYX passed. Here every BVH rotation order is read on rows of
large angles, and glTF accessors are read from interleaved (byteStride) and sparse storage,
all compared with rtol=0: BVH text parses to float64 (atol 1e-12 is rounding of the degree
to radian conversion and one matrix product); glTF stores float32, which float64 holds
exactly, so a key read at its own time must come back to within float64 rounding.
"""

from __future__ import annotations

import base64
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from codec.formats.bvh import read_bvh
from codec.formats.gltf import read_gltf
from codec.model import quat

DATA = Path(__file__).resolve().parents[2] / "data"
ORDERS = ["".join(p) for p in itertools.permutations("XYZ")]
ROWS = [  # root position, root rotation (3), child rotation (3), in channel order
    (1.5, -2.25, 3.0, 97.25, -143.5, 171.125, -179.5, 88.75, -45.375),
    (-10.0, 20.5, 0.125, 12.5, 260.0, -333.25, 45.0, -120.5, 170.0),
    (0.0, 0.0, 0.0, -89.0, 179.0, 91.5, 135.0, 60.0, -150.0),
]


def axis_matrix(axis: str, degrees: float) -> np.ndarray:
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    if axis == "X":
        return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    if axis == "Y":
        return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def order_matrix(order: str, angles) -> np.ndarray:
    """BVH channel order: the first listed rotation is the outermost, R = R1 R2 R3."""
    m = np.eye(3)
    for axis, value in zip(order, angles, strict=True):
        m = m @ axis_matrix(axis, value)
    return m


def bvh_text(order: str) -> str:
    rot = " ".join(f"{a}rotation" for a in order)
    rows = "\n".join(" ".join(repr(v) for v in row) for row in ROWS)
    return f"""HIERARCHY
ROOT Hips
{{
  OFFSET 5 6 7
  CHANNELS 6 Xposition Yposition Zposition {rot}
  JOINT Arm
  {{
    OFFSET 0 4 0
    CHANNELS 3 {rot}
    End Site
    {{
      OFFSET 0 2 0
    }}
  }}
}}
MOTION
Frames: {len(ROWS)}
Frame Time: 0.04
{rows}
"""


@pytest.mark.parametrize("order", ORDERS)
def test_every_bvh_rotation_order_on_large_angles(tmp_path: Path, order: str) -> None:
    path = tmp_path / f"{order}.bvh"
    path.write_text(bvh_text(order))
    clip = read_bvh(path, units="cm")
    for s, row in enumerate(ROWS):
        for j, angles in ((0, row[3:6]), (1, row[6:9])):
            got = quat.to_matrix(clip.rotations[s, j])
            np.testing.assert_allclose(got, order_matrix(order, angles), rtol=0, atol=1e-12)
        np.testing.assert_allclose(clip.translations[s, 0], row[:3], rtol=0, atol=0)
        np.testing.assert_allclose(clip.translations[s, 1], [0, 4, 0], rtol=0, atol=0)


def test_real_bvh_mixed_orders_on_its_largest_angles() -> None:
    """cmu_02_02: root ZYX, abdomen ZXY; the row where abdomen turns the most."""
    clip = read_bvh(DATA / "bvh" / "cmu_02_02_walk_daz.bvh", units="cm")
    text = (DATA / "bvh" / "cmu_02_02_walk_daz.bvh").read_text().split("MOTION")[1]
    rows = np.array([[float(v) for v in line.split()] for line in text.split("\n")[3:] if line])
    s = int(np.argmax(np.abs(rows[:, 6:9]).max(axis=1)))
    assert np.abs(rows[s, 6:9]).max() > 10  # large enough to tell the orders apart
    want = order_matrix("ZXY", rows[s, 6:9])
    got = quat.to_matrix(clip.rotations[s, clip.skeleton.index("abdomen")])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        quat.to_matrix(clip.rotations[s, 0]), order_matrix("ZYX", rows[s, 3:6]), rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(clip.translations[s, 0], rows[s, :3], rtol=0, atol=0)


KEYS = 4
RATE = 4.0


def _keys() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    q = rng.normal(size=(KEYS, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    q[q[:, 3] < 0] *= -1
    return {
        "times": (np.arange(KEYS) / RATE).astype(np.float32),
        "a_translation": rng.uniform(-50, 50, (KEYS, 3)).astype(np.float32),
        "a_rotation": q.astype(np.float32),  # large, random turns
        "b_scale": rng.uniform(0.5, 2.0, (KEYS, 3)).astype(np.float32),
        "c_base": rng.uniform(-5, 5, (KEYS, 3)).astype(np.float32),
        "c_sparse": rng.uniform(-5, 5, (2, 3)).astype(np.float32),
        "b_sparse": rng.uniform(-5, 5, (2, 3)).astype(np.float32),
    }


def strided_sparse_gltf(tmp_path: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """Nodes A -> B -> C. A's translation and rotation interleave in one view (stride 32:
    VEC3, VEC4, 4 bytes of junk); key times and B's scale interleave in another (stride 16).
    C's translation is a plain accessor with keys 1 and 3 replaced by a sparse block; B's
    translation has no bufferView (zeros) and sparse keys 0 and 2."""
    k = _keys()
    junk = np.full((KEYS, 1), 7.5e3, np.float32)
    view0 = np.concatenate((k["a_translation"], k["a_rotation"], junk), axis=1)  # 32 bytes
    view1 = np.concatenate((k["times"][:, None], k["b_scale"]), axis=1)  # 16 bytes
    blob = view0.tobytes() + view1.tobytes()
    plain_at = len(blob)
    blob += k["c_base"].tobytes()
    idx_at = len(blob)
    blob += np.array([1, 3, 0, 2], np.uint16).tobytes()  # C: 1, 3; B: 0, 2
    val_at = len(blob)
    blob += k["c_sparse"].tobytes() + k["b_sparse"].tobytes()
    views = [
        {"buffer": 0, "byteOffset": 0, "byteLength": view0.nbytes, "byteStride": 32},
        {"buffer": 0, "byteOffset": view0.nbytes, "byteLength": view1.nbytes, "byteStride": 16},
        {"buffer": 0, "byteOffset": plain_at, "byteLength": 48},
        {"buffer": 0, "byteOffset": idx_at, "byteLength": 8},
        {"buffer": 0, "byteOffset": val_at, "byteLength": 48},
    ]

    def acc(view, offset, kind, **extra):
        out = {"componentType": 5126, "count": KEYS, "type": kind, **extra}
        if view is not None:
            out.update(bufferView=view, byteOffset=offset)
        return out

    def sparse(index_offset, value_offset):
        return {
            "count": 2,
            "indices": {"bufferView": 3, "byteOffset": index_offset, "componentType": 5123},
            "values": {"bufferView": 4, "byteOffset": value_offset},
        }

    accessors = [
        acc(1, 0, "SCALAR", min=[0.0], max=[float(k["times"][-1])]),  # 0 times
        acc(0, 0, "VEC3"),  # 1 A translation
        acc(0, 12, "VEC4"),  # 2 A rotation
        acc(1, 4, "VEC3"),  # 3 B scale
        acc(2, 0, "VEC3", sparse=sparse(0, 0)),  # 4 C translation
        acc(None, 0, "VEC3", sparse=sparse(4, 24)),  # 5 B translation
    ]
    targets = [(0, "translation", 1), (0, "rotation", 2), (1, "scale", 3), (2, "translation", 4)]
    targets.append((1, "translation", 5))
    doc = {
        "asset": {"version": "2.0"},
        "nodes": [
            {"name": "A", "children": [1]},
            {"name": "B", "children": [2]},
            {"name": "C"},
        ],
        "skins": [{"joints": [0, 1, 2]}],
        "animations": [
            {
                "name": "strided",
                "samplers": [{"input": 0, "output": a} for _, _, a in targets],
                "channels": [
                    {"sampler": i, "target": {"node": n, "path": p}}
                    for i, (n, p, _) in enumerate(targets)
                ],
            }
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
    path = tmp_path / "strided.gltf"
    path.write_text(json.dumps(doc))
    return path, k


def test_gltf_interleaved_and_sparse_accessors(tmp_path: Path) -> None:
    path, k = strided_sparse_gltf(tmp_path)
    clip = read_gltf(path, sample_rate=RATE, scale_to_cm=False)
    assert clip.skeleton.names == ("A", "B", "C") and clip.num_samples == KEYS
    exact = {"rtol": 0, "atol": 1e-12}
    np.testing.assert_allclose(clip.translations[:, 0], k["a_translation"], **exact)
    want = k["a_rotation"].astype(np.float64)
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    got = clip.rotations[:, 0] * np.sign(np.sum(clip.rotations[:, 0] * want, axis=1))[:, None]
    # float32 quaternions renormalised in float64: within a few float64 ulps
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(clip.scales[:, 1], k["b_scale"], **exact)
    c = k["c_base"].astype(np.float64)
    c[[1, 3]] = k["c_sparse"]
    np.testing.assert_allclose(clip.translations[:, 2], c, **exact)
    b = np.zeros((KEYS, 3))
    b[[0, 2]] = k["b_sparse"]
    np.testing.assert_allclose(clip.translations[:, 1], b, **exact)
