"""A lossy copy of a glTF file: the source with one animation replaced by a decoded clip.

A tech animator judges compression by eye in the tools they trust: this writes the source
glTF again (meshes, skins, materials, other animations untouched) with the chosen
animation's joint channels replaced by the lossy clip, sampled at the same times the reader
used (the authored keys when they were the samples), so raw and lossy files play side by
side in any glTF viewer or DCC. Channels of that animation that target other nodes or morph
weights are kept as they were; a joint channel the source animation did not have is left
out while the lossy clip holds that joint at its rest value. Joint transforms are unfolded
again (the reader folds the non-joint nodes above a joint into it) and converted back to
the file's unit.

The file holds only what it uses (Khronos glTF-Validator: no UNUSED_OBJECT): the replaced
channels' accessors are dropped, and so are their bytes, also where they shared a buffer
view with data that stays (the view is cut down to the accessors that use it). A file with
an extension whose references to accessors or buffer views are not known here keeps every
accessor and says so. glTF forbids animating a node that has a `matrix`: such a joint's
matrix is decomposed into its TRS first, or, when a TRS cannot hold it (shear), the export
is refused with the reason.

The output is one self-contained file: a .glb with every buffer merged into its BIN chunk,
or a .gltf with the buffer embedded as a data: URI; image URIs are rewritten to stay valid
from the output's folder. Written whole or not at all.
"""

from __future__ import annotations

import base64
import json
import os
import struct
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np

from codec.errors import ClipFormatError
from codec.formats.atomic import write_bytes
from codec.formats.gltf import (
    CHUNK_BIN,
    CHUNK_JSON,
    GLB_MAGIC,
    GLTF_UNITS,
    animation_names,
    animation_timeline,
    animation_tracks,
    choose_animation,
    guard,
    load_document,
    skin_joints,
)
from codec.formats.input_paths import outside_problem
from codec.model import quat
from codec.model.clip import Clip
from codec.model.transforms import compose, decompose, qvv_to_matrix
from codec.model.units import user_units

Array = np.ndarray
_FLOAT = 5126
_TRS = ("translation", "rotation", "scale")
# extensions whose references to accessors and buffer views are known here (or that have
# none): any other one keeps every accessor, since dropping one it names would break it
_KNOWN_EXTENSIONS = {
    "KHR_draco_mesh_compression",
    "EXT_mesh_gpu_instancing",
    "KHR_mesh_quantization",
    "KHR_texture_transform",
    "KHR_texture_basisu",
    "EXT_texture_webp",
    "EXT_texture_avif",
    "KHR_lights_punctual",
    "KHR_materials_variants",
    "KHR_animation_pointer",
    "KHR_xmp_json_ld",
    "KHR_node_visibility",
}


def _invert(m: Array) -> Array:
    """Inverse of a 3x4 affine matrix."""
    full = np.eye(4)
    full[:3] = m
    return np.linalg.inv(full)[:3]


def _same_skeleton(source: object, names: list[str], clip: Clip) -> None:
    if tuple(names) != clip.skeleton.names:
        raise ClipFormatError(
            source,
            f"its skin's joints ({len(names)}) are not the clip's ({clip.num_joints}): "
            "is this the clip's source file?",
        )


def pick_animation(source: str | os.PathLike[str], clip: Clip, animation: str | int | None) -> str:
    """The source animation a lossy clip replaces: `animation`, else the one named like the
    clip, else the only one, else the only one with the clip's sample count and rate."""
    doc = guard(source, lambda: load_document(source))
    _same_skeleton(source, guard(source, lambda: skin_joints(doc, 0)).names, clip)
    names = animation_names(doc)
    if not names:
        raise ClipFormatError(source, "has no animation to replace")
    if animation is not None:
        return names[guard(source, lambda: choose_animation(doc, names, animation))]
    if clip.name in names:
        return clip.name
    if len(names) == 1:
        return names[0]
    order = guard(source, lambda: skin_joints(doc, 0)).order
    fits = []
    for i, name in enumerate(names):
        tracks = guard(source, lambda i=i: animation_tracks(doc, i, order, []))
        tl = animation_timeline(tracks, None)
        if tl.count == clip.num_samples and abs(tl.rate - clip.sample_rate) < 1e-6:
            fits.append(name)
    if len(fits) == 1:
        return fits[0]
    raise ClipFormatError(
        source, f"holds several animations ({', '.join(names)}): say which one the clip replaces"
    )


def write_lossy_gltf(
    source: str | os.PathLike[str],
    clip: Clip,
    out: str | os.PathLike[str],
    *,
    animation: str | int | None = None,
    units: str | None = None,
) -> list[str]:
    """Write `out` (.glb or .gltf): `source` with `animation` (see `pick_animation`) replaced
    by `clip`, whose joints must be the source skin's. `units` is what was given when the
    source was read (default: glTF's metres). Returns notes worth showing the user."""
    data, notes = lossy_gltf_bytes(source, clip, out, animation=animation, units=units)
    write_bytes(out, data)
    return notes


def lossy_gltf_bytes(
    source: str | os.PathLike[str],
    clip: Clip,
    out: str | os.PathLike[str],
    *,
    animation: str | int | None = None,
    units: str | None = None,
) -> tuple[bytes, list[str]]:
    """The bytes `write_lossy_gltf` writes to `out` (whose suffix chooses .glb or .gltf and
    whose folder image URIs are made relative to), and its notes."""
    name = pick_animation(source, clip, animation)
    return guard(source, lambda: _lossy(source, clip, Path(out), name, units))


def _lossy(
    source: object, clip: Clip, out: Path, name: str, units: str | None
) -> tuple[bytes, list[str]]:
    doc = load_document(source)  # type: ignore[arg-type]
    g = json.loads(json.dumps(doc.gltf))  # a private copy to edit
    joints = skin_joints(doc, 0)
    _same_skeleton(source, joints.names, clip)
    notes: list[str] = []
    ai = animation_names(doc).index(name)
    tracks = animation_tracks(doc, ai, joints.order, [])
    timeline = animation_timeline(tracks, None)
    times = timeline.start + np.arange(clip.num_samples) / clip.sample_rate
    if not (
        timeline.authored
        and timeline.count == clip.num_samples
        and abs(timeline.rate - clip.sample_rate) < 1e-6
    ):
        notes.append(
            f"animation {name!r} is written at the clip's {clip.sample_rate:g} Hz, "
            "not at its authored keys"
        )
    _trs_nodes(source, g, joints.order, joints.names)
    to_cm = user_units(units, GLTF_UNITS).to_cm
    rot, trans, scl = _unfold(clip, joints.pre, to_cm)

    anim = g["animations"][ai]
    joint_nodes = set(joints.order)
    kept = [
        c
        for c in anim["channels"]
        if c.get("target", {}).get("node") not in joint_nodes or c["target"].get("path") not in _TRS
    ]
    animated = {(joints.order[t.joint], t.path) for t in tracks}
    samplers: list[dict[str, Any]] = []
    channels: list[dict[str, Any]] = []
    for c in kept:
        samplers.append(anim["samplers"][c["sampler"]])
        channels.append({**c, "sampler": len(samplers) - 1})
    anim["samplers"], anim["channels"] = samplers, channels

    known = set(g.get("extensionsUsed", [])) <= _KNOWN_EXTENSIONS | {
        e for e in g.get("extensionsUsed", []) if e.startswith("KHR_materials_")
    }
    if not known:
        unknown = sorted(
            e
            for e in g.get("extensionsUsed", [])
            if e not in _KNOWN_EXTENSIONS and not e.startswith("KHR_materials_")
        )
        notes.append(
            f"kept every accessor of the source: it uses {', '.join(unknown)}, whose "
            "references to accessors are not known here"
        )
    blob = _compact(g, doc, keep_all=not known)

    # the new animation's data: one buffer view, one accessor per array, in the order added
    arrays: list[Array] = []

    def add(values: Array, kind: str) -> int:
        data = np.ascontiguousarray(values, dtype="<f4")
        acc = {"componentType": _FLOAT, "count": int(data.shape[0]), "type": kind}
        if kind == "SCALAR":
            acc["min"], acc["max"] = [float(data.min())], [float(data.max())]
        arrays.append(data)
        g.setdefault("accessors", []).append(acc)
        return len(g["accessors"]) - 1

    time_acc: int | None = None
    for j, node in enumerate(joints.order):
        for path, values, kind in (
            ("translation", trans[:, j], "VEC3"),
            ("rotation", rot[:, j], "VEC4"),
            ("scale", scl[:, j], "VEC3"),
        ):
            if (node, path) not in animated and _at_rest(g["nodes"][node], path, values):
                continue
            if time_acc is None:
                time_acc = add(times[:, None], "SCALAR")
            samplers.append({"input": time_acc, "output": add(values, kind)})
            channels.append({"sampler": len(samplers) - 1, "target": {"node": node, "path": path}})
    if not channels:  # a clip at rest throughout: an animation needs a channel
        time_acc = add(times[:, None], "SCALAR")
        samplers.append({"input": time_acc, "output": add(rot[:, 0], "VEC4")})
        channels.append(
            {"sampler": len(samplers) - 1, "target": {"node": joints.order[0], "path": "rotation"}}
        )
    _pad(blob)
    view = len(g.setdefault("bufferViews", []))
    start = len(blob)
    for acc, data in zip(g["accessors"][-len(arrays) :], arrays, strict=True):
        acc["bufferView"] = view
        if len(blob) > start:
            acc["byteOffset"] = len(blob) - start
        blob.extend(data.tobytes())
    g["bufferViews"].append({"buffer": 0, "byteOffset": start, "byteLength": len(blob) - start})
    extras = g.setdefault("asset", {}).setdefault("extras", {})
    if isinstance(extras, dict):
        extras["shellscope"] = (
            f"animation {name!r} replaced by the lossy decode of the clip "
            f"({clip.num_samples} samples at {clip.sample_rate:g} Hz)"
        )
    _rebase_images(g, Path(str(source)), out.parent)
    _pad(blob)
    if not blob:
        g.pop("buffers", None)
        g.pop("bufferViews", None)
    if out.suffix.lower() == ".glb":
        if blob:
            g["buffers"] = [{"byteLength": len(blob)}]
        return _glb(g, bytes(blob)), notes
    if blob:
        uri = "data:application/octet-stream;base64," + base64.b64encode(bytes(blob)).decode()
        g["buffers"] = [{"byteLength": len(blob), "uri": uri}]
    return json.dumps(g, indent=1).encode(), notes


def _trs_nodes(source: object, g: dict, nodes: list[int], names: list[str]) -> None:
    """Replace the `matrix` of each of `nodes` (the joints, which the animation targets) by
    its translation, rotation and scale; ClipFormatError when a TRS cannot hold it."""
    for n, name in zip(nodes, names, strict=True):
        node = g["nodes"][n]
        if "matrix" not in node:
            continue
        m = np.array(node["matrix"], dtype=np.float64).reshape(4, 4).T
        if not np.allclose(m[3], [0.0, 0.0, 0.0, 1.0], atol=1e-9):
            raise ClipFormatError(
                source, f"nodes[{n}] ({name!r}) has a projective matrix: it cannot be animated"
            )
        r, t, s = decompose(m[:3])
        err = float(np.max(np.abs(qvv_to_matrix(r, t, s) - m[:3])))
        if err > 1e-6 * max(1.0, float(np.max(np.abs(m[:3])))):
            raise ClipFormatError(
                source,
                f"nodes[{n}] ({name!r}) has a matrix with shear (off by {err:.3g} as TRS), "
                "which glTF cannot animate: the lossy animation cannot be written",
            )
        del node["matrix"]
        node["translation"] = [float(v) for v in t]
        node["rotation"] = [float(v) for v in quat.normalize(r)]
        node["scale"] = [float(v) for v in s]


def _at_rest(node: dict, path: str, values: Array) -> bool:
    """Whether every value of a channel rounds (to float32, as it would be written) to the
    node's own rest value, so leaving the channel out changes nothing."""
    rest = {"translation": [0.0] * 3, "rotation": [0.0, 0.0, 0.0, 1.0], "scale": [1.0] * 3}
    want = np.float32(node.get(path, rest[path]))
    got = values.astype(np.float32)
    if path == "rotation":  # q and -q are one rotation
        got = got * np.where(np.sum(got * want, axis=-1) < 0, -1, 1)[:, None].astype(np.float32)
    return bool(np.all(got == want))


def _accessor_refs(g: dict) -> list[tuple[dict | list, Any]]:
    """Every place (container, key) in the document that holds an accessor index."""
    refs: list[tuple[dict | list, Any]] = []

    def attributes(obj: Any) -> None:
        if isinstance(obj, dict):
            refs.extend((obj, k) for k, v in obj.items() if isinstance(v, int))

    for mesh in g.get("meshes", []):
        for prim in mesh.get("primitives", []):
            attributes(prim.get("attributes"))
            if isinstance(prim.get("indices"), int):
                refs.append((prim, "indices"))
            for target in prim.get("targets", []):
                attributes(target)
    for skin in g.get("skins", []):
        if isinstance(skin.get("inverseBindMatrices"), int):
            refs.append((skin, "inverseBindMatrices"))
    for anim in g.get("animations", []):
        for s in anim.get("samplers", []):
            refs.extend((s, k) for k in ("input", "output") if isinstance(s.get(k), int))
    for node in g.get("nodes", []):
        inst = node.get("extensions", {}).get("EXT_mesh_gpu_instancing", {})
        attributes(inst.get("attributes"))
    return refs


def _view_refs(g: dict) -> list[tuple[dict, str]]:
    """Every place outside the accessors that holds a buffer view index."""
    refs: list[tuple[dict, str]] = []
    for image in g.get("images", []):
        if isinstance(image.get("bufferView"), int):
            refs.append((image, "bufferView"))
    for mesh in g.get("meshes", []):
        for prim in mesh.get("primitives", []):
            draco = prim.get("extensions", {}).get("KHR_draco_mesh_compression", {})
            if isinstance(draco.get("bufferView"), int):
                refs.append((draco, "bufferView"))
    for acc in g.get("accessors", []):
        for part in ("indices", "values"):
            sparse = acc.get("sparse", {}).get(part)
            if isinstance(sparse, dict) and isinstance(sparse.get("bufferView"), int):
                refs.append((sparse, "bufferView"))
    return refs


def _compact(g: dict, doc: Any, keep_all: bool) -> bytearray:
    """Drop the accessors nothing refers to (all kept when `keep_all`), then rebuild one
    binary blob holding only the bytes the remaining accessors and views use; every index
    and offset in `g` is rewritten to match. Returns the blob (buffer 0)."""
    accessors = g.get("accessors", [])
    refs = _accessor_refs(g)
    used = set(range(len(accessors))) if keep_all else {c[k] for c, k in refs}
    new_index = {old: new for new, old in enumerate(sorted(used))}
    for c, k in refs:
        c[k] = new_index[c[k]]
    accessors = [accessors[i] for i in sorted(used)]
    g["accessors"] = accessors

    views = g.get("bufferViews", [])
    # per view: None = keep whole; else the (start, end) byte ranges its accessors use
    whole: set[int] = set()
    ranges: dict[int, list[tuple[int, int]]] = {}
    for c, k in _view_refs(g):
        whole.add(c[k])
    for acc in accessors:
        v = acc.get("bufferView")
        if not isinstance(v, int):
            continue
        if views[v].get("byteStride") or keep_all:
            whole.add(v)
            continue
        size = np.dtype(_COMPONENT_SIZE[acc["componentType"]]).itemsize * _WIDTH[acc["type"]]
        start = acc.get("byteOffset", 0)
        ranges.setdefault(v, []).append((start, start + size * acc["count"]))

    blob = bytearray()
    view_index: dict[int, int] = {}
    shift: dict[int, list[tuple[int, int, int]]] = {}  # view -> (start, end, new start)
    new_views = []
    for v, view in enumerate(views):
        if v not in whole and v not in ranges:
            continue
        data = doc.buffer(view["buffer"], f"bufferViews[{v}].buffer")
        base = view.get("byteOffset", 0)
        if v in whole:
            parts = [(0, view["byteLength"])]
        else:
            parts = _merged(ranges[v])
        new_view = {k: val for k, val in view.items() if k not in ("byteOffset", "byteLength")}
        _pad(blob)
        start = len(blob)
        moved = []
        for a, b in parts:
            if v not in whole:  # a part keeps its place modulo 4, so its alignment
                blob.extend(b"\0" * ((base + a - (len(blob) - start)) % 4))
            moved.append((a, b, len(blob) - start))
            blob.extend(data[base + a : base + b])
        new_view.update(buffer=0, byteOffset=start, byteLength=len(blob) - start)
        shift[v] = moved
        view_index[v] = len(new_views)
        new_views.append(new_view)
    for acc in accessors:
        v = acc.get("bufferView")
        if isinstance(v, int):
            off = acc.get("byteOffset", 0)
            a, _, new = next(m for m in shift[v] if m[0] <= off < max(m[1], m[0] + 1))
            if new + off - a:
                acc["byteOffset"] = new + off - a
            else:
                acc.pop("byteOffset", None)
            acc["bufferView"] = view_index[v]
    for c, k in _view_refs(g):
        c[k] = view_index[c[k]]
    g["bufferViews"] = new_views
    return blob


_COMPONENT_SIZE = {5120: "i1", 5121: "u1", 5122: "i2", 5123: "u2", 5125: "u4", 5126: "f4"}
_WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Byte ranges sorted, overlapping or touching ones joined."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _unfold(clip: Clip, pre: list[Array | None], to_cm: float) -> tuple[Array, Array, Array]:
    """The clip's joint locals as the source nodes' own TRS, in the file's unit."""
    rot, trans, scl = clip.rotations.copy(), clip.translations / to_cm, clip.scales.copy()
    for j, m in enumerate(pre):
        if m is None:
            continue
        local = compose(_invert(m)[None], qvv_to_matrix(rot[:, j], trans[:, j], scl[:, j]))
        rot[:, j], trans[:, j], scl[:, j] = decompose(local)
    rot = quat.normalize(rot)
    return rot, trans, scl


def _rebase_images(g: dict, source: Path, out_dir: Path) -> None:
    """Image uris made relative to the copy's folder; one that leaves the source's folder
    (an absolute path, `..`, a link out of it) is refused (codec.formats.input_paths)."""
    source_dir = source.parent
    for i, image in enumerate(g.get("images", [])):
        uri = image.get("uri") if isinstance(image, dict) else None
        if not isinstance(uri, str) or uri.startswith("data:") or "://" in uri:
            continue
        problem = outside_problem(source_dir, source_dir / unquote(uri), "the source's folder")
        if problem:
            raise ClipFormatError(source, f"images[{i}].uri {uri!r} {problem}")
        image["uri"] = Path(os.path.relpath(source_dir / uri, out_dir)).as_posix()


def _pad(blob: bytearray, fill: bytes = b"\0") -> None:
    blob.extend(fill * (-len(blob) % 4))


def _glb(g: dict, blob: bytes) -> bytes:
    text = bytearray(json.dumps(g, separators=(",", ":")).encode())
    _pad(text, b" ")
    total = 12 + 8 + len(text) + (8 + len(blob) if blob else 0)
    out = (
        GLB_MAGIC
        + struct.pack("<II", 2, total)
        + struct.pack("<II", len(text), CHUNK_JSON)
        + bytes(text)
    )
    if blob:
        out += struct.pack("<II", len(blob), CHUNK_BIN) + blob
    return out
