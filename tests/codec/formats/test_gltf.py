"""glTF reader: Khronos samples (facts from SOURCES.md, inverse bind matrices), hand-built
files whose resampled values are computed by hand, and malformed input."""

from __future__ import annotations

import base64
import json
import math
import struct
from pathlib import Path

import numpy as np
import pytest

from codec.errors import ClipFormatError
from codec.formats.gltf import list_gltf_animations, read_gltf
from codec.model import quat
from codec.model.transforms import object_space

DATA = Path(__file__).resolve().parents[2] / "data" / "gltf"


# ---------------------------------------------------------------- an independent GLB peek


def glb_json_and_bin(path: Path) -> tuple[dict, bytes]:
    data = path.read_bytes()
    n_json = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20 : 20 + n_json])
    start = 20 + n_json
    n_bin = struct.unpack_from("<I", data, start)[0]
    return doc, data[start + 8 : start + 8 + n_bin]


def float_accessor(doc: dict, blob: bytes, index: int) -> np.ndarray:
    acc = doc["accessors"][index]
    view = doc["bufferViews"][acc["bufferView"]]
    assert acc["componentType"] == 5126 and "byteStride" not in view
    width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4, "MAT4": 16}[acc["type"]]
    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    a = np.frombuffer(blob, "<f4", acc["count"] * width, start).astype(np.float64)
    return a.reshape(acc["count"], width)


def node_matrix(node: dict) -> np.ndarray:
    if "matrix" in node:
        return np.array(node["matrix"], dtype=np.float64).reshape(4, 4).T
    m = np.eye(4)
    x, y, z, w = node.get("rotation", [0, 0, 0, 1])
    r = np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )
    m[:3, :3] = r * np.array(node.get("scale", [1, 1, 1]))
    m[:3, 3] = node.get("translation", [0, 0, 0])
    return m


def world_of(doc: dict, node_index: int) -> np.ndarray:
    parent = {c: i for i, n in enumerate(doc["nodes"]) for c in n.get("children", [])}
    m = np.eye(4)
    n = node_index
    while True:
        m = node_matrix(doc["nodes"][n]) @ m
        if n not in parent:
            return m
        n = parent[n]


def bind_world_in_metres(clip) -> dict[str, np.ndarray]:
    sk = clip.skeleton
    w = object_space(
        sk.bind_rotations[None],
        sk.bind_translations[None] / 100.0,
        sk.bind_scales[None],
        sk.parents,
    )[0]
    out = {}
    for j, name in enumerate(sk.names):
        m = np.eye(4)
        m[:3] = w[j]
        out[name] = m
    return out


# ---------------------------------------------------------------- Khronos sample models


def test_fox_lists_three_named_animations() -> None:
    assert list_gltf_animations(DATA / "Fox.glb") == ["Survey", "Walk", "Run"]
    assert list_gltf_animations(DATA / "RiggedSimple.glb") == ["animation_0"]


# (file, joints, animation, keys, key duration in s) from SOURCES.md; keys None: not uniform
@pytest.mark.parametrize(
    ("name", "joints", "animation", "keys", "seconds"),
    [
        ("Fox.glb", 24, "Survey", 83, 3.417),
        ("Fox.glb", 24, "Walk", 18, 0.708),
        ("Fox.glb", 24, "Run", None, 1.158),
        ("CesiumMan.glb", 19, None, 48, 2.0),
        ("RiggedSimple.glb", 2, None, 50, 2.083),
    ],
)
def test_sample_models_match_sources(
    name: str, joints: int, animation: str | None, keys: int | None, seconds: float
) -> None:
    clip = read_gltf(DATA / name, animation=animation)
    assert clip.num_joints == joints
    if keys is not None:  # uniformly spaced keys: they are the samples, at 24 Hz
        assert (clip.num_samples, clip.sample_rate, clip.warnings) == (keys, 24.0, [])
    else:  # Fox Run has a 4.8-frame gap: resampled at 30 Hz, and the clip says so
        assert clip.sample_rate == 30.0
        assert clip.duration == pytest.approx(seconds, abs=1 / 30)
        assert any("resampled at 30 Hz" in w and "not uniformly" in w for w in clip.warnings)
        assert any("at --sample-rate 120 every key is a sample" in w for w in clip.warnings)
    assert np.allclose(np.linalg.norm(clip.rotations, axis=-1), 1.0, atol=1e-12)
    assert np.all(quat.dot(clip.rotations[1:], clip.rotations[:-1]) >= 0.0)
    parents = clip.skeleton.parents
    assert np.all(parents < np.arange(joints))


def test_cesium_man_samples_are_its_authored_keys() -> None:
    """Acceptance: 48 samples at 24 Hz, each equal to its authored key within float32.

    The keys are read straight from the GLB's accessors here, not through the reader. The
    root joint sits under non-joint nodes (a Z_UP node) that the reader folds into it, so
    its keys are compared through the nodes' own matrices."""
    doc, blob = glb_json_and_bin(DATA / "CesiumMan.glb")
    clip = read_gltf(DATA / "CesiumMan.glb")
    assert (clip.num_samples, clip.sample_rate) == (48, 24.0)
    anim = doc["animations"][0]
    nodes = doc["nodes"]
    joint_nodes = set(doc["skins"][0]["joints"])
    parent = {c: i for i, n in enumerate(nodes) for c in n.get("children", [])}
    eps = 2 * np.finfo(np.float32).eps
    keys: dict[int, dict[str, np.ndarray]] = {}
    for ch in anim["channels"]:
        sampler = anim["samplers"][ch["sampler"]]
        times = float_accessor(doc, blob, sampler["input"])[:, 0]
        k = np.rint((times - times[0]) * 24).astype(int)
        assert times[0] == pytest.approx(1 / 24, abs=1e-6) and k.tolist() == list(range(48))
        keys.setdefault(ch["target"]["node"], {})[ch["target"]["path"]] = float_accessor(
            doc, blob, sampler["output"]
        )
    assert sum(len(v) for v in keys.values()) == 57  # T/R/S of 19 joints, as SOURCES.md says
    for node, paths in keys.items():
        j = clip.skeleton.index(nodes[node]["name"])
        if parent.get(node) in joint_nodes:  # local keys are the samples themselves
            assert np.all(np.abs(clip.translations[:, j] / 100.0 - paths["translation"]) <= eps)
            assert np.all(np.abs(clip.scales[:, j] - paths["scale"]) <= eps)
            q = paths["rotation"] / np.linalg.norm(paths["rotation"], axis=-1, keepdims=True)
            got = clip.rotations[:, j] * np.sign(np.sum(clip.rotations[:, j] * q, -1))[:, None]
            assert np.all(np.abs(got - q) <= eps)
            continue
        above = world_of(doc, parent[node])
        for k in range(48):
            key = {
                "translation": paths["translation"][k].tolist(),
                "rotation": paths["rotation"][k].tolist(),
                "scale": paths["scale"][k].tolist(),
            }
            want = above @ node_matrix(key)
            got = object_space(
                clip.rotations[k : k + 1, j : j + 1],
                clip.translations[k : k + 1, j : j + 1] / 100.0,
                clip.scales[k : k + 1, j : j + 1],
                np.array([-1]),
            )[0, 0]
            assert np.allclose(got, want[:3], atol=4 * eps), k


def test_fox_run_at_the_rate_its_warning_names_keeps_every_key_as_a_sample() -> None:
    """Fox Run's keys are 24 Hz with one 0.2 s gap: on no 24 Hz grid, all on 120 Hz. Asked
    for 120 Hz the reader takes the keys as samples (no warning), each key exactly a sample."""
    from codec.formats.key_grid import finer_grid_rate, holds_every_key

    clip = read_gltf(DATA / "Fox.glb", animation="Run", sample_rate=120)
    assert (clip.sample_rate, clip.warnings) == (120.0, [])
    times = np.unique(np.concatenate([g.times for g in clip.curves.groups]))
    assert finer_grid_rate(times) == 120.0 and holds_every_key(times, 120.0)
    assert not holds_every_key(times, 24.0) and not holds_every_key(times, 60.0)
    assert clip.num_samples == round((times[-1] - times[0]) * 120) + 1
    ks = np.rint((times - times[0]) * 120).astype(int)
    for g in clip.curves.groups:
        if g.kind == "rotation" and g.interpolation in ("linear", "slerp"):
            at = np.searchsorted(times, g.times)
            got = clip.rotations[ks[at]][:, g.joints]  # (K, T, 4)
            assert np.allclose(np.abs(np.sum(got * quat.normalize(g.values), -1)), 1, atol=1e-9)


def test_cesium_man_resamples_only_when_asked() -> None:
    clip = read_gltf(DATA / "CesiumMan.glb", sample_rate=60)
    assert clip.sample_rate == 60.0 and clip.num_samples == 1 + math.ceil((2.0 - 1 / 24) * 60)
    assert any("resampled at 60 Hz (as asked; the keys are at 24 Hz)" in w for w in clip.warnings)


def test_fox_rest_world_times_inverse_bind_is_identity() -> None:
    doc, blob = glb_json_and_bin(DATA / "Fox.glb")
    skin = doc["skins"][0]
    ibm = float_accessor(doc, blob, skin["inverseBindMatrices"]).reshape(-1, 4, 4)
    ibm = ibm.transpose(0, 2, 1)  # column-major
    world = bind_world_in_metres(read_gltf(DATA / "Fox.glb"))
    assert len(world) == len(skin["joints"]) == 24
    for k, node in enumerate(skin["joints"]):
        product = world[doc["nodes"][node]["name"]] @ ibm[k]
        assert np.allclose(product, np.eye(4), atol=1e-4), doc["nodes"][node]["name"]


@pytest.mark.parametrize("name", ["CesiumMan.glb", "RiggedSimple.glb"])
def test_folded_ancestors_give_world_space(name: str) -> None:
    """Z_UP and Armature nodes sit above the joints: object space must be glTF world space.

    Then joint world @ inverse bind is one and the same matrix for every joint (the space
    the skin was bound in): CesiumMan binds in its mesh node's space; RiggedSimple's
    COLLADA2GLTF export binds in a frame that leaves out the Armature node's rotation."""
    doc, blob = glb_json_and_bin(DATA / name)
    skin = doc["skins"][0]
    ibm = float_accessor(doc, blob, skin["inverseBindMatrices"]).reshape(-1, 4, 4)
    ibm = ibm.transpose(0, 2, 1)
    world = bind_world_in_metres(read_gltf(DATA / name))
    products = []
    for k, node in enumerate(skin["joints"]):
        assert np.allclose(world[doc["nodes"][node]["name"]], world_of(doc, node), atol=1e-6)
        products.append(world[doc["nodes"][node]["name"]] @ ibm[k])
    assert np.allclose(products, products[0], atol=1e-3)
    if name == "CesiumMan.glb":
        mesh_node = next(i for i, n in enumerate(doc["nodes"]) if n.get("skin") == 0)
        assert np.allclose(products[0], world_of(doc, mesh_node), atol=1e-3)


def test_fox_walk_at_its_key_rate_reproduces_the_keys() -> None:
    doc, blob = glb_json_and_bin(DATA / "Fox.glb")
    anim = doc["animations"][1]
    times = float_accessor(doc, blob, anim["samplers"][0]["input"])[:, 0]
    rate = (len(times) - 1) / times[-1]  # 24 Hz: samples land on the keys
    clip = read_gltf(DATA / "Fox.glb", animation="Walk", sample_rate=rate)
    assert clip.num_samples == len(times)
    for ch in anim["channels"]:
        node = doc["nodes"][ch["target"]["node"]]
        keys = float_accessor(doc, blob, anim["samplers"][ch["sampler"]]["output"])
        j = clip.skeleton.index(node["name"])
        if ch["target"]["path"] == "rotation":
            got = clip.rotations[:, j]
            keys = keys / np.linalg.norm(keys, axis=-1, keepdims=True)
            assert np.allclose(np.abs(quat.dot(got, keys)), 1.0, atol=1e-9)
        elif ch["target"]["path"] == "translation" and node["name"] != "_rootJoint":
            assert np.allclose(clip.translations[:, j], keys * 100.0, atol=1e-6)


def test_metres_option() -> None:
    cm = read_gltf(DATA / "RiggedSimple.glb")
    m = read_gltf(DATA / "RiggedSimple.glb", scale_to_cm=False)
    assert np.allclose(cm.translations, m.translations * 100.0)
    assert np.allclose(cm.rotations, m.rotations)
    assert cm.skeleton.precision[0] == 0.01 and cm.skeleton.shell_distance[0] == 3.0


# ---------------------------------------------------------------- hand-built files


def hand_gltf(extra_anims: list[dict] | None = None) -> tuple[dict, bytes]:
    """Armature (non-joint, translation (1,0,0)) -> A -> B, one animation of four channels.

    Samplers (key times / values, x components only where it is a vector):
      0 STEP translation of B: t 0, 1 -> (0, 1, 0), (2, 1, 0)
      1 CUBICSPLINE translation of A: t 0, 2; v 0 -> 1, out-tangent of key 0 = 3,
        in-tangent of key 1 = 1 (per second)
      2 LINEAR rotation of B: t 0, 1; identity -> 90 degrees about z
    """
    f = np.float32
    times01 = np.array([0, 1], f)
    times02 = np.array([0, 2], f)
    step_vals = np.array([[0, 1, 0], [2, 1, 0]], f)
    cubic = np.array(
        [[9, 9, 9], [0, 0, 0], [3, 0, 0], [1, 0, 0], [1, 0, 0], [9, 9, 9]], f
    )  # in0, v0, out0, in1, v1, out1 (in0 and out1 never matter)
    s = math.sqrt(0.5)
    rots = np.array([[0, 0, 0, 1], [0, 0, s, s]], f)
    parts = [times01, step_vals, times02, cubic, rots]
    views, accessors, blob = [], [], b""
    kinds = [("SCALAR", 2), ("VEC3", 2), ("SCALAR", 2), ("VEC3", 6), ("VEC4", 2)]
    for arr, (kind, count) in zip(parts, kinds, strict=True):
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": arr.nbytes})
        accessors.append(
            {"bufferView": len(views) - 1, "componentType": 5126, "count": count, "type": kind}
        )
        blob += arr.tobytes()
    doc = {
        "asset": {"version": "2.0"},
        "nodes": [
            {"name": "Armature", "translation": [1, 0, 0], "children": [1]},
            {"name": "A", "children": [2]},
            {"name": "B", "translation": [0, 1, 0]},
        ],
        "skins": [{"joints": [1, 2]}],
        "animations": [
            {
                "name": "hand",
                "samplers": [
                    {"input": 0, "output": 1, "interpolation": "STEP"},
                    {"input": 2, "output": 3, "interpolation": "CUBICSPLINE"},
                    {"input": 0, "output": 4},
                ],
                "channels": [
                    {"sampler": 0, "target": {"node": 2, "path": "translation"}},
                    {"sampler": 1, "target": {"node": 1, "path": "translation"}},
                    {"sampler": 2, "target": {"node": 2, "path": "rotation"}},
                ],
            },
            *(extra_anims or []),
        ],
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [{"byteLength": len(blob)}],
    }
    return doc, blob


def save_gltf(tmp_path: Path, doc: dict, blob: bytes, kind: str = "data") -> Path:
    doc = json.loads(json.dumps(doc))
    if kind == "glb":
        js = json.dumps(doc).encode()
        js += b" " * (-len(js) % 4)
        bin_ = blob + b"\0" * (-len(blob) % 4)
        total = 12 + 8 + len(js) + 8 + len(bin_)
        data = struct.pack("<4sII", b"glTF", 2, total)
        data += struct.pack("<II", len(js), 0x4E4F534A) + js
        data += struct.pack("<II", len(bin_), 0x004E4942) + bin_
        p = tmp_path / "hand.glb"
        p.write_bytes(data)
        return p
    if kind == "data":
        uri = "data:application/octet-stream;base64," + base64.b64encode(blob).decode()
    else:
        (tmp_path / "hand data.bin").write_bytes(blob)
        uri = "hand%20data.bin"
    doc["buffers"][0]["uri"] = uri
    p = tmp_path / "hand.gltf"
    p.write_text(json.dumps(doc))
    return p


@pytest.mark.parametrize("kind", ["data", "file", "glb"])
def test_hand_built_step_cubic_linear(tmp_path: Path, kind: str) -> None:
    doc, blob = hand_gltf()
    clip = read_gltf(save_gltf(tmp_path, doc, blob, kind), sample_rate=4.0, scale_to_cm=False)
    assert clip.skeleton.names == ("A", "B") and list(clip.skeleton.parents) == [-1, 0]
    assert clip.name == "hand" and clip.num_samples == 9  # 2 s at 4 Hz
    t = np.arange(9) / 4.0
    # STEP: 0 until t reaches 1, then 2 (held after the last key)
    assert np.allclose(clip.translations[:, 1, 0], np.where(t < 1, 0.0, 2.0))
    assert np.allclose(clip.translations[:, 1, 1], 1.0)
    # CUBICSPLINE over [0, 2], dt = 2: p(s) = h10*2*3 + h01*1 + h11*2*1, plus Armature's x=1
    s = t / 2.0
    h10, h01, h11 = s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2
    expected = 6 * h10 + h01 + 2 * h11
    assert expected[4] == pytest.approx(1.0)  # by hand: 0.75 + 0.5 - 0.25
    assert np.allclose(clip.translations[:, 0, 0], 1.0 + expected, atol=1e-6)
    # LINEAR rotation is slerp: 22.5 degrees at t = 0.25 (nlerp would give 20.7)
    angle = 2 * np.degrees(np.arctan2(clip.rotations[:, 1, 2], clip.rotations[:, 1, 3]))
    assert np.allclose(angle[:5], [0, 22.5, 45, 67.5, 90], atol=1e-4)
    assert np.allclose(angle[5:], 90, atol=1e-4)
    # bind pose: the Armature's translation folded into the root joint
    assert np.allclose(clip.skeleton.bind_translations, [[1, 0, 0], [0, 1, 0]])


def test_hand_built_choose_by_index_name_and_default_units(tmp_path: Path) -> None:
    extra = {
        "samplers": [{"input": 0, "output": 1, "interpolation": "LINEAR"}],
        "channels": [{"sampler": 0, "target": {"node": 1, "path": "translation"}}],
    }
    doc, blob = hand_gltf([extra])
    p = save_gltf(tmp_path, doc, blob)
    assert list_gltf_animations(p) == ["hand", "animation_1"]
    for which in (1, "animation_1"):
        clip = read_gltf(p, animation=which, sample_rate=2.0)
        assert clip.num_samples == 3 and clip.name == "animation_1"
        # LINEAR x 0 -> 2 over 1 s, plus the folded Armature x = 1, in centimetres
        assert np.allclose(clip.translations[:, 0, 0], [100, 200, 300])
    with pytest.raises(ClipFormatError, match="no animation named 'Idle'"):
        read_gltf(p, animation="Idle")
    with pytest.raises(ClipFormatError, match="index 5"):
        read_gltf(p, animation=5)


def test_non_uniform_duration_samples_uniformly_and_holds_last_key(tmp_path: Path) -> None:
    doc, blob = hand_gltf()
    clip = read_gltf(save_gltf(tmp_path, doc, blob), sample_rate=3.0, scale_to_cm=False)
    # 2 s * 3 Hz = 6 steps -> 7 samples; at 0.4 Hz: 0.8 steps -> 1 step, 2 samples, the last
    # at 2.5 s holding the final key
    assert clip.num_samples == 7
    slow = read_gltf(save_gltf(tmp_path, doc, blob), sample_rate=0.4, scale_to_cm=False)
    assert slow.num_samples == 2 and slow.duration == 2.5
    assert np.allclose(slow.translations[-1, 0, 0], 2.0)  # final CUBICSPLINE key 1 + Armature


# ---------------------------------------------------------------- bad input


def test_bad_sampler_names_the_json_path(tmp_path: Path) -> None:
    doc, blob = hand_gltf()
    doc["animations"][0]["channels"][2]["sampler"] = 9
    with pytest.raises(ClipFormatError) as info:
        read_gltf(save_gltf(tmp_path, doc, blob))
    assert "animations[0].channels[2].sampler 9 does not exist" in str(info.value)


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d["accessors"][1].update(count=999_999_999), "needs"),
        (lambda d: d["bufferViews"][3].update(byteLength=10**9), "past its buffer"),
        (lambda d: d.pop("skins"), "no skin"),
        (lambda d: d["skins"][0].update(joints=[1, 7]), "joints[1] 7 does not exist"),
        (lambda d: d["nodes"][2].update(children=[1]), "more than one parent"),
        (lambda d: d["accessors"][4].update(type="VEC3"), "3 components"),
        (lambda d: d["animations"][0]["samplers"][0].update(interpolation="BEZIER"), "BEZIER"),
        (lambda d: d["asset"].update(version="1.0"), "asset.version"),
        (lambda d: d["accessors"][3].update(count=5), "elements for 2 keys"),
    ],
)
def test_bad_documents(tmp_path: Path, mutate, expected: str) -> None:
    doc, blob = hand_gltf()
    mutate(doc)
    with pytest.raises(ClipFormatError, match=expected.replace("[", r"\[").replace("]", r"\]")):
        read_gltf(save_gltf(tmp_path, doc, blob))


def test_a_broken_glb_says_what_is_wrong_with_its_binary_form(tmp_path: Path) -> None:
    """A .glb whose header is damaged, or whose JSON chunk is, says so with the byte: never
    a bare "invalid JSON" as if the binary file were text."""
    data = (DATA / "RiggedSimple.glb").read_bytes()
    p = tmp_path / "zeroed.glb"
    p.write_bytes(b"\0\0\0\0" + data[4:])  # the magic lost (a copy cut at its start)
    with pytest.raises(ClipFormatError, match="not a binary glTF") as info:
        read_gltf(p)
    assert info.value.offset == 0 and "b'glTF'" in str(info.value)
    assert "invalid JSON" not in str(info.value)
    (length,) = struct.unpack_from("<I", data, 12)
    broken = bytearray(data)
    broken[20 + length // 2] = ord("}")  # a byte of the JSON chunk damaged
    p = tmp_path / "chunk.glb"
    p.write_bytes(bytes(broken))
    with pytest.raises(ClipFormatError, match="GLB's JSON chunk") as info:
        read_gltf(p)
    assert 20 <= info.value.offset < 20 + length
    with pytest.raises(ClipFormatError, match="not a binary glTF"):
        list_gltf_animations(tmp_path / "zeroed.glb")


def test_bad_glb_bytes_report_offsets(tmp_path: Path) -> None:
    data = (DATA / "RiggedSimple.glb").read_bytes()
    p = tmp_path / "cut.glb"
    p.write_bytes(data[:5000])
    with pytest.raises(ClipFormatError) as info:
        read_gltf(p)
    assert info.value.offset == 8 and "15104" in str(info.value)
    lying = bytearray(data)
    struct.pack_into("<I", lying, 12, 10**9)  # JSON chunk length
    p.write_bytes(bytes(lying))
    with pytest.raises(ClipFormatError) as info:
        read_gltf(p)
    assert info.value.offset == 12
    p.write_bytes(b"glTF" + struct.pack("<II", 1, 12))
    with pytest.raises(ClipFormatError, match="version 1"):
        read_gltf(p)
    (tmp_path / "x.gltf").write_text("{ nope")
    with pytest.raises(ClipFormatError, match="invalid JSON"):
        list_gltf_animations(tmp_path / "x.gltf")
    doc, blob = hand_gltf()
    path = save_gltf(tmp_path, doc, blob, "file")
    (tmp_path / "hand data.bin").unlink()
    with pytest.raises(ClipFormatError, match="cannot be read"):
        read_gltf(path)
