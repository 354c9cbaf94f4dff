"""glTF 2.0 reader (.gltf with external or data: buffers, .glb): a skin and one animation.

The skeleton is `skins[skin].joints`, parents first. A joint's parent is its nearest ancestor
node that is also a joint of the skin. Transforms of nodes that are not joints but sit
between joints (or above the root joints) are folded into the child joint's local
transform, bind and animated alike, so object space equals glTF world space.

Samples are the authored keys whenever they can be: when every key time of the animation
lies on one uniform grid (the spacing of the closest keys), the clip's rate is that grid's
and sample k is at the first key time + k / rate, so every authored key is a sample and
precision is measured against the authored data (CesiumMan: 48 keys at 24 Hz, 48 samples).
Otherwise, or when a `sample_rate` is asked for, the animation is resampled at that rate
(30 Hz by default) from its first to its last key, and a warning on the clip says so:
LINEAR (rotations by slerp, as the spec says), STEP and CUBICSPLINE (Hermite, tangents
scaled by the key interval, rotations normalised). A resampled clip has
ceil(duration * rate) + 1 samples, so the last key is always in it (held past its time).
Either way the keys stay on the clip as its authored curves (codec.model.authored_curves, in
clip seconds and centimetres, non-joint nodes folded in as in the samples): between samples
the raw clip is the file's own curve, and the samples are evaluated from those very curves.
glTF is in metres and +Y up by specification; the clip is returned in centimetres.

Hostile files: a buffer's uri is a data: URI or a relative path to a regular file in the
glTF's folder once links are resolved (codec.formats.input_paths; absolute paths, `..` out of
the folder, other schemes, devices and FIFOs are refused), read up to its
declared byteLength only. Sizes are checked before anything is allocated from them against
the file's transform budget (codec.model.limits, from the bytes of the glTF and its buffers):
an accessor without a bufferView (zeros not stored in the file) and the resampled clip
(samples x joints); every number must be one the codec can hold. The skin's hierarchy is
resolved in one pass over the nodes (a 20,000-node chain loads in a fraction of a second).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import re
import stat
import struct
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from codec.errors import ClipFormatError, ShellscopeError
from codec.formats.compressed import inner_name
from codec.formats.fields import REQUIRED, FieldProblem, field, out_of_range
from codec.formats.input_paths import outside_problem
from codec.formats.key_grid import finer_grid_rate, holds_every_key, key_grid
from codec.formats.spec import FormatSpec
from codec.model import quat
from codec.model.authored_curves import AuthoredCurves, groups_of
from codec.model.authored_curves import Track as AuthoredTrack
from codec.model.clip import Clip, Skeleton
from codec.model.limits import (
    file_bytes,
    over_budget,
    rate_problem,
    transform_budget,
)
from codec.model.mesh import SkinnedMesh, normalize_influences
from codec.model.transforms import compose, decompose, qvv_to_matrix
from codec.model.units import UNIT_CM, Units, user_units

Array = np.ndarray

GLB_MAGIC = b"glTF"
CHUNK_JSON = 0x4E4F534A
CHUNK_BIN = 0x004E4942
_COMPONENTS = {  # componentType -> (dtype, normalisation divisor for normalized ints)
    5120: (np.dtype("<i1"), 127.0),
    5121: (np.dtype("<u1"), 255.0),
    5122: (np.dtype("<i2"), 32767.0),
    5123: (np.dtype("<u2"), 65535.0),
    5125: (np.dtype("<u4"), None),
    5126: (np.dtype("<f4"), None),
}
_WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
_T = TypeVar("_T")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_PATH_WIDTH = {"translation": 3, "rotation": 4, "scale": 3}
DEFAULT_SAMPLE_RATE = 30.0
GLTF_UNITS = Units(
    "m",
    UNIT_CM["m"],
    "format",
    declared="metres (glTF 2.0)",
    up_axis="+Y",
    axes="right-handed, +Z front, as glTF 2.0 specifies",
)


class _Doc:
    """Parsed JSON plus binary buffers, with error helpers that name the JSON path."""

    def __init__(
        self, path: object, gltf: dict[str, Any], bin_chunk: bytes | None, size: int = 0
    ) -> None:
        self.path = path
        self.gltf = gltf
        self.bin_chunk = bin_chunk
        self._buffers: dict[int, bytes] = {}
        self.size = size  # bytes read so far: the file, then each external buffer

    @property
    def budget(self) -> int:
        """Transforms (or zero-filled elements) this file may make us allocate."""
        return transform_budget(self.size)

    def fail(self, message: str, offset: int | None = None) -> ClipFormatError:
        return ClipFormatError(self.path, message, offset=offset)

    def get(
        self, obj: Any, key: str, where: str, kind: type | tuple[type, ...], default: Any = ...
    ):
        """obj[key] of type `kind` (codec.formats.fields; a whole float is an int where an
        int is expected); `default` when absent, `...`: it must be there."""
        if not isinstance(obj, dict):
            raise self.fail(f"{where} is not an object")
        try:
            return field(
                obj, key, kind, REQUIRED if default is ... else default, whole_floats=kind is int
            )
        except FieldProblem as e:
            if e.missing:
                raise self.fail(f"{where}.{key} is missing") from None
            raise self.fail(
                f"{where}.{key} has the wrong type ({type(e.value).__name__})"
            ) from None

    def item(self, array_key: str, index: Any, where: str) -> dict[str, Any]:
        arr = self.gltf.get(array_key, [])
        if not isinstance(arr, list):
            raise self.fail(f"{array_key} is not an array")
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(arr):
            raise self.fail(f"{where} {index!r} does not exist ({array_key} has {len(arr)})")
        obj = arr[index]
        if not isinstance(obj, dict):
            raise self.fail(f"{array_key}[{index}] is not an object")
        return obj

    def numbers(self, obj: dict, key: str, where: str, n: int, default: list[float]) -> Array:
        v = obj.get(key, default)
        try:
            a = np.array(v, dtype=np.float64)
        except (TypeError, ValueError):
            raise self.fail(f"{where}.{key} is not a list of numbers") from None
        if a.shape != (n,) or not np.all(np.isfinite(a)):
            raise self.fail(f"{where}.{key} must be {n} finite numbers")
        bad = out_of_range(a)
        if bad is not None:
            raise self.fail(f"{where}.{key}[{bad[0][0]}]: {bad[1]}")
        return a

    def buffer(self, index: int, where: str) -> bytes:
        if index in self._buffers:
            return self._buffers[index]
        b = self.item("buffers", index, where)
        bw = f"buffers[{index}]"
        length = self.get(b, "byteLength", bw, int)
        if length < 0:
            raise self.fail(f"{bw}.byteLength {length} is negative")
        uri = self.get(b, "uri", bw, str, None)
        if uri is None:
            if index != 0 or self.bin_chunk is None:
                raise self.fail(f"{bw} has no uri and there is no GLB BIN chunk")
            data = self.bin_chunk
        elif uri.startswith("data:"):
            head, sep, payload = uri.partition(",")
            if not sep or not head.endswith(";base64"):
                raise self.fail(f"{bw}.uri is a data: URI that is not base64")
            try:
                data = base64.b64decode(payload, validate=True)
            except (binascii.Error, ValueError):
                raise self.fail(f"{bw}.uri holds invalid base64") from None
        else:
            data = self._external(uri, length, bw)
        if len(data) < length:
            raise self.fail(f"{bw} has {len(data)} bytes, byteLength says {length}")
        self._buffers[index] = data
        return data

    def _external(self, uri: str, length: int, bw: str) -> bytes:
        """At most `length` bytes of the regular file `uri` names, relative to the glTF.

        glTF uris are relative references; anything else (an absolute path, a scheme such as
        file: or http:) is refused, and so is anything but a regular file once links are
        followed: /dev/zero never ends and a FIFO blocks forever."""
        name = urllib.parse.unquote(uri)
        if _SCHEME.match(uri) or os.path.isabs(name) or name.startswith(("/", "\\")):
            raise self.fail(
                f"{bw}.uri {uri!r} is not a relative path: a buffer is read from a file beside "
                "the glTF or a data: URI only"
            )
        folder = Path(str(self.path)).parent
        file = folder / name
        problem = outside_problem(folder, file, "the glTF's folder")
        if problem:
            raise self.fail(f"{bw}.uri {uri!r} {problem}")
        try:
            mode = os.stat(file).st_mode
            if not stat.S_ISREG(mode):
                raise self.fail(
                    f"{bw}.uri {uri!r} is not a regular file (a directory, device or FIFO)"
                )
            with open(file, "rb") as f:
                data = f.read(length)
        except OSError as e:
            raise self.fail(f"{bw}.uri {uri!r} cannot be read: {e.strerror or e}") from None
        self.size += len(data)
        return data

    def accessor(self, index: Any, where: str) -> Array:
        """Accessor data as float64 `(count, width)`; normalized integers mapped to [-1, 1]."""
        acc = self.item("accessors", index, where)
        aw = f"accessors[{index}]"
        ctype = self.get(acc, "componentType", aw, int)
        if ctype not in _COMPONENTS:
            raise self.fail(f"{aw}.componentType {ctype} is not supported")
        dtype, norm = _COMPONENTS[ctype]
        type_name = self.get(acc, "type", aw, str)
        if type_name not in _WIDTH:
            raise self.fail(f"{aw}.type {type_name!r} is unknown")
        width = _WIDTH[type_name]
        count = self.get(acc, "count", aw, int)
        if count < 1:
            raise self.fail(f"{aw}.count {count} must be at least 1")
        normalized = bool(self.get(acc, "normalized", aw, bool, False))
        elem = dtype.itemsize * width
        if "bufferView" in acc:
            bv_index = self.get(acc, "bufferView", aw, int)
            bv = self.item("bufferViews", bv_index, f"{aw}.bufferView")
            bvw = f"bufferViews[{bv_index}]"
            data = self.buffer(self.get(bv, "buffer", bvw, int), f"{bvw}.buffer")
            view_off = self.get(bv, "byteOffset", bvw, int, 0)
            view_len = self.get(bv, "byteLength", bvw, int)
            stride = self.get(bv, "byteStride", bvw, int, 0) or elem
            acc_off = self.get(acc, "byteOffset", aw, int, 0)
            if min(view_off, view_len, acc_off) < 0 or stride < elem:
                raise self.fail(f"{aw}: negative offset or length, or byteStride < element size")
            if view_off + view_len > len(data):
                raise self.fail(
                    f"{bvw} ends at byte {view_off + view_len} past its buffer ({len(data)} bytes)",
                    offset=view_off,
                )
            need = acc_off + stride * (count - 1) + elem
            if need > view_len:
                raise self.fail(
                    f"{aw} needs {need} bytes of {bvw}, which has {view_len}",
                    offset=view_off + acc_off,
                )
            raw = np.ndarray(
                (count, width),
                dtype=dtype,
                buffer=data,
                offset=view_off + acc_off,
                strides=(stride, dtype.itemsize),
            )
            with np.errstate(invalid="ignore", over="ignore"):
                out = raw.astype(np.float64)
        else:
            if count * width > self.budget:
                raise self.fail(
                    f"{aw}.count {count} x {width} components with no bufferView (zeros not "
                    f"stored in the file) is over the limit of {self.budget} for this file"
                )
            out = np.zeros((count, width))
        if "sparse" in acc:
            self._apply_sparse(acc["sparse"], out, aw, dtype)
        if normalized:
            if norm is None:
                raise self.fail(f"{aw} is normalized but not an 8- or 16-bit integer")
            out = np.maximum(out / norm, -1.0)
        bad = out_of_range(out)
        if bad is not None:
            raise self.fail(f"{aw} element {bad[0][0]}: {bad[1]}")
        return out

    def _apply_sparse(self, sparse: Any, out: Array, aw: str, dtype: np.dtype) -> None:
        sw = f"{aw}.sparse"
        n = self.get(sparse, "count", sw, int)
        if not 1 <= n <= out.shape[0]:
            raise self.fail(f"{sw}.count {n} is not within 1..{out.shape[0]}")
        idx_spec = self.get(sparse, "indices", sw, dict)
        val_spec = self.get(sparse, "values", sw, dict)
        ictype = self.get(idx_spec, "componentType", f"{sw}.indices", int)
        if ictype not in (5121, 5123, 5125):
            raise self.fail(f"{sw}.indices.componentType {ictype} is not an unsigned integer")
        idx = self._view_array(idx_spec, f"{sw}.indices", _COMPONENTS[ictype][0], n, 1)[:, 0]
        vals = self._view_array(val_spec, f"{sw}.values", dtype, n, out.shape[1])
        if np.any(idx >= out.shape[0]):
            raise self.fail(f"{sw}.indices point past the accessor's {out.shape[0]} elements")
        out[idx.astype(np.int64)] = vals

    def _view_array(self, spec: dict, where: str, dtype: np.dtype, n: int, width: int) -> Array:
        bv_index = self.get(spec, "bufferView", where, int)
        bv = self.item("bufferViews", bv_index, f"{where}.bufferView")
        bvw = f"bufferViews[{bv_index}]"
        data = self.buffer(self.get(bv, "buffer", bvw, int), f"{bvw}.buffer")
        start = self.get(bv, "byteOffset", bvw, int, 0) + self.get(
            spec, "byteOffset", where, int, 0
        )
        size = n * width * dtype.itemsize
        view_end = self.get(bv, "byteOffset", bvw, int, 0) + self.get(bv, "byteLength", bvw, int)
        if start < 0 or start + size > min(view_end, len(data)):
            raise self.fail(f"{where} runs past its buffer view", offset=start)
        return (
            np.frombuffer(data, dtype=dtype, count=n * width, offset=start)
            .reshape(n, width)
            .astype(np.float64)
        )


def load_document(path: str | os.PathLike[str], data: bytes | None = None) -> _Doc:
    try:
        if data is None:
            data = Path(path).read_bytes()
    except OSError as e:
        raise ClipFormatError(path, f"cannot read the file: {e.strerror or e}") from None
    size = file_bytes(path, data)
    bin_chunk: bytes | None = None
    if data[:4] == GLB_MAGIC:
        if len(data) < 12:
            raise ClipFormatError(path, "GLB header is truncated", offset=len(data))
        _, version, total = struct.unpack_from("<4sII", data, 0)
        if version != 2:
            raise ClipFormatError(path, f"GLB version {version} is not 2", offset=4)
        if total > len(data):
            raise ClipFormatError(
                path, f"GLB header says {total} bytes but the file has {len(data)}", offset=8
            )
        off = 12
        json_bytes: bytes | None = None
        while off < total:
            if off + 8 > total:
                raise ClipFormatError(path, "GLB chunk header is truncated", offset=off)
            length, ctype = struct.unpack_from("<II", data, off)
            if off + 8 + length > total:
                raise ClipFormatError(
                    path, f"GLB chunk of {length} bytes runs past the end ({total})", offset=off
                )
            chunk = data[off + 8 : off + 8 + length]
            if json_bytes is None:
                if ctype != CHUNK_JSON:
                    raise ClipFormatError(path, "the first GLB chunk is not JSON", offset=off + 4)
                json_bytes = chunk
            elif ctype == CHUNK_BIN and bin_chunk is None:
                bin_chunk = chunk
            off += 8 + length
        if json_bytes is None:
            raise ClipFormatError(path, "GLB has no JSON chunk", offset=12)
        text_bytes = json_bytes
        json_at, what = 20, "the GLB's JSON chunk (from byte 20): "
    elif str(path).lower().endswith(".glb"):
        # a .glb must start with the binary header: reading it as JSON text would only say
        # "invalid JSON" of a file that was never meant to be text
        raise ClipFormatError(
            path,
            f"not a binary glTF: a .glb starts with the 12-byte header whose first 4 bytes "
            f"are b'glTF' (magic), this one starts with {bytes(data[:4])!r}",
            offset=0,
        )
    else:
        text_bytes, json_at, what = data, 0, ""
    try:
        gltf = json.loads(text_bytes.decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        raise ClipFormatError(path, f"{what}JSON is not UTF-8", offset=json_at + e.start) from None
    except json.JSONDecodeError as e:
        raise ClipFormatError(
            path,
            f"{what}invalid JSON: {e.msg} (line {e.lineno}, column {e.colno})",
            offset=json_at + e.pos,
        ) from None
    except RecursionError:
        raise ClipFormatError(path, f"{what}invalid JSON: nested too deeply") from None
    if not isinstance(gltf, dict):
        raise ClipFormatError(path, "the glTF JSON is not an object")
    asset = gltf.get("asset")
    version = asset.get("version") if isinstance(asset, dict) else None
    if not isinstance(version, str) or not version.startswith("2"):
        raise ClipFormatError(path, "asset.version: expected '2.0' (is this a glTF 2.0 file?)")
    return _Doc(path, gltf, bin_chunk, size)


def animation_names(doc: _Doc) -> list[str]:
    anims = doc.gltf.get("animations", [])
    if not isinstance(anims, list):
        raise doc.fail("animations is not an array")
    names = []
    for i, a in enumerate(anims):
        name = a.get("name") if isinstance(a, dict) else None
        names.append(name if isinstance(name, str) and name else f"animation_{i}")
    return names


def list_gltf_animations(path: str | os.PathLike[str], *, data: bytes | None = None) -> list[str]:
    """Names of the file's animations, in order; unnamed ones are called `animation_<index>`."""
    return guard(path, lambda: animation_names(load_document(path, data)))


def read_gltf(
    path: str | os.PathLike[str],
    *,
    animation: str | int | None = None,
    sample_rate: float | None = None,
    skin: int = 0,
    scale_to_cm: bool = True,
    units: str | None = None,
    data: bytes | None = None,
) -> Clip:
    """Read one animation of a glTF skin as a clip (its authored keys when uniform).

    `animation` is a name (as listed by `list_gltf_animations`), an index, or None for the
    first. `sample_rate` None keeps uniformly spaced keys as the samples and resamples other
    animations at 30 Hz; a number resamples at that rate. `units` overrides glTF's metres
    (a name of codec.model.units.UNIT_CM); `scale_to_cm=False` keeps metres (precision 0.0001).
    A file without animations gives the rest pose as one sample (with a warning).
    `data`: the file's bytes when already read. Raises ClipFormatError with a JSON path or
    byte offset on anything malformed.
    """
    if sample_rate is not None:
        ok = isinstance(sample_rate, int | float) and not isinstance(sample_rate, bool)
        problem = rate_problem(float(sample_rate)) if ok else f"{sample_rate!r} is not a number"
        if problem:
            raise ValueError(f"sample_rate: {problem}")
    chosen = user_units(units, GLTF_UNITS)
    if not scale_to_cm:
        chosen = Units(
            "m",
            1.0,
            "user",
            declared=GLTF_UNITS.declared,
            reason="kept in metres (scale_to_cm=False)",
            up_axis="+Y",
        )
    rate = None if sample_rate is None else float(sample_rate)
    return guard(path, lambda: _read(path, data, animation, rate, skin, chosen, scale_to_cm))


def guard(path: object, fn: Callable[[], _T]) -> _T:
    try:
        return fn()
    except ClipFormatError:
        raise
    except ShellscopeError as e:
        raise ClipFormatError(path, str(e)) from None
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, MemoryError) as e:
        raise ClipFormatError(path, f"unreadable glTF ({type(e).__name__}: {e})") from None


def _node_matrix(doc: _Doc, node: dict, where: str) -> Array:
    """Local 3x4 matrix of a node from `matrix` (column-major) or its TRS."""
    if "matrix" in node:
        m = doc.numbers(node, "matrix", where, 16, [])
        return m.reshape(4, 4).T[:3].copy()
    r, t, s = _node_trs(doc, node, where)
    return qvv_to_matrix(r, t, s)


def _node_trs(doc: _Doc, node: dict, where: str) -> tuple[Array, Array, Array]:
    if "matrix" in node:
        r, t, s = decompose(_node_matrix(doc, node, where))
        return r, t, s
    r = quat.normalize(doc.numbers(node, "rotation", where, 4, [0.0, 0.0, 0.0, 1.0]))
    t = doc.numbers(node, "translation", where, 3, [0.0, 0.0, 0.0])
    s = doc.numbers(node, "scale", where, 3, [1.0, 1.0, 1.0])
    return r, t, s


def _read(
    path: object,
    data: bytes | None,
    animation: str | int | None,
    rate: float | None,
    skin_index: int,
    units: Units,
    to_cm: bool,
) -> Clip:
    doc = load_document(path, data)
    joints = skin_joints(doc, skin_index)
    order, parents, names, pre = joints.order, joints.parents, joints.names, joints.pre
    nodes = doc.gltf["nodes"]
    rest = [_node_trs(doc, nodes[n], f"nodes[{n}]") for n in order]
    bind_r = np.array([r for r, _, _ in rest])
    bind_t = np.array([t for _, t, _ in rest])
    bind_s = np.array([s for _, _, s in rest])

    warnings: list[str] = []
    anim_names = animation_names(doc)
    if not anim_names:
        if animation is not None:
            raise doc.fail(f"animation {animation!r} does not exist: the file has no animations")
        warnings.append("the file has no animations: showing the rest pose")
        rot, trans, scl = bind_r[None].copy(), bind_t[None].copy(), bind_s[None].copy()
        clip_name = Path(inner_name(str(path))).stem
        rate = rate or DEFAULT_SAMPLE_RATE
        curves = None
    else:
        ai = choose_animation(doc, anim_names, animation)
        clip_name = anim_names[ai]
        tracks = animation_tracks(doc, ai, order, warnings)
        timeline = animation_timeline(tracks, rate)
        problem = over_budget(timeline.count, len(order), doc.budget)
        if problem:  # before a single sample is allocated
            end = timeline.start + (timeline.count - 1) / timeline.rate
            raise doc.fail(
                f"animations[{ai}] ({clip_name!r}) spans {timeline.start:g} s to {end:g} s: "
                f"at {timeline.rate:g} Hz {problem}"
            )
        if timeline.note:
            warnings.append(timeline.note)
        rate = timeline.rate
        rot, trans, scl, curves = _sample_tracks(tracks, timeline, bind_r, bind_t, bind_s)
        curves = clip_curves(curves, pre, (bind_r, bind_t, bind_s), timeline.start, units.to_cm)

    bind_r, bind_t, bind_s = _fold(pre, bind_r[None], bind_t[None], bind_s[None], warnings, names)
    bind_r, bind_t, bind_s = bind_r[0], bind_t[0], bind_s[0]
    rot, trans, scl = _fold(pre, rot, trans, scl, [], names)
    rot = quat.ensure_continuity(quat.normalize(rot), axis=0)
    factor = units.to_cm
    precision = 0.01 if to_cm else 0.0001
    shell = 3.0 if to_cm else 0.03
    skeleton = Skeleton.create(
        names,
        parents,
        bind_rotations=quat.normalize(bind_r),
        bind_translations=bind_t * factor,
        bind_scales=bind_s,
        precision=precision,
        shell_distance=shell,
    )
    meshes = skinned_meshes(doc, joints, factor, warnings)
    return Clip(
        skeleton=skeleton,
        sample_rate=rate,
        rotations=rot,
        translations=trans * factor,
        scales=scl,
        name=clip_name,
        warnings=warnings,
        units=units,
        meshes=meshes,
        curves=curves,
    )


@dataclass(frozen=True)
class SkinJoints:
    """A skin's joints in parents-first order: node indices `order`, `parents` (J,), unique
    `names`, and `pre[j]`, the 3x4 product of the non-joint nodes between joint j and its
    joint parent (None when there are none), which is folded into joint j."""

    order: list[int]
    parents: Array
    names: list[str]
    pre: list[Array | None]


def skin_joints(doc: _Doc, skin_index: int) -> SkinJoints:
    g = doc.gltf
    nodes = g.get("nodes", [])
    if not isinstance(nodes, list) or not nodes:
        raise doc.fail("the file has no nodes")
    skins = g.get("skins", [])
    if not isinstance(skins, list) or not skins:
        raise doc.fail("the file has no skin, so there is no skeleton to read")
    skin = doc.item("skins", skin_index, "skin")
    joints_nodes = doc.get(skin, "joints", f"skins[{skin_index}]", list)
    if not joints_nodes:
        raise doc.fail(f"skins[{skin_index}].joints is empty")
    for k, jn in enumerate(joints_nodes):
        doc.item("nodes", jn, f"skins[{skin_index}].joints[{k}]")
    if len(set(joints_nodes)) != len(joints_nodes):
        raise doc.fail(f"skins[{skin_index}].joints lists a node twice")

    # node parents, checking that the node graph is a forest
    count = len(nodes)
    node_parent = [-1] * count
    children: list[list[int]] = [[] for _ in range(count)]
    for i, node in enumerate(nodes):
        if not isinstance(node, dict):
            raise doc.fail(f"nodes[{i}] is not an object")
        for c in doc.get(node, "children", f"nodes[{i}]", list, []):
            doc.item("nodes", c, f"nodes[{i}].children")
            if node_parent[c] != -1 or c == i:
                raise doc.fail(f"nodes[{c}] has more than one parent (nodes[{i}].children)")
            node_parent[c] = i
            children[i].append(c)
    # one walk down from the roots gives every node's depth and its nearest joint ancestor;
    # a node it does not reach hangs below a cycle (each node has at most one parent)
    joint_set = set(joints_nodes)
    depth = [-1] * count
    joint_parent = [-1] * count
    walk = [i for i in range(count) if node_parent[i] < 0]
    for r in walk:
        depth[r] = 0
    topo: list[int] = []
    while walk:
        n = walk.pop()
        topo.append(n)
        up = n if n in joint_set else joint_parent[n]
        for c in children[n]:
            depth[c] = depth[n] + 1
            joint_parent[c] = up
            walk.append(c)
    if len(topo) < count:
        i = next(i for i in range(count) if depth[i] < 0)
        raise doc.fail(f"nodes[{i}] is part of a cycle of children")

    position = {n: k for k, n in enumerate(joints_nodes)}
    order = sorted(joints_nodes, key=lambda n: depth[n])  # ancestors before descendants
    if all(
        joint_parent[n] < 0 or position[joint_parent[n]] < k for k, n in enumerate(joints_nodes)
    ):
        order = list(joints_nodes)  # the skin's own order is already parents-first: keep it
    index_of = {n: k for k, n in enumerate(order)}
    parents = np.array([index_of.get(joint_parent[n], -1) for n in order], dtype=np.int64)
    names = _unique_names(
        [nodes[n].get("name") if isinstance(nodes[n].get("name"), str) else "" for n in order],
        order,
    )

    # fold the transforms of non-joint nodes above each joint into the joint: `above[n]` is
    # the product of the non-joint nodes from below n's nearest joint ancestor down to n,
    # computed top-down once, only for the nodes some joint hangs below
    needed: set[int] = set()
    for n in joints_nodes:
        a = node_parent[n]
        while a >= 0 and a not in joint_set and a not in needed:
            needed.add(a)
            a = node_parent[a]
    above: dict[int, Array] = {}
    for n in topo:
        if n in needed:
            m = _node_matrix(doc, nodes[n], f"nodes[{n}]")
            p = node_parent[n]
            above[n] = compose(above[p], m) if p in above else m
    pre: list[Array | None] = []
    for n in order:
        m = above.get(node_parent[n])
        if m is not None and np.allclose(m, np.eye(3, 4), atol=1e-12):
            m = None
        pre.append(m)

    return SkinJoints(order, parents, names, pre)


def _unique_names(raw: list[str], node_ids: list[int]) -> list[str]:
    """Names made unique with _2, _3, ...; the next suffix per base is remembered, so a
    file naming every node alike stays linear."""
    out: list[str] = []
    taken: set[str] = set()
    next_k: dict[str, int] = {}
    for name, n in zip(raw, node_ids, strict=True):
        base = name or f"node_{n}"
        cand, k = base, next_k.get(base, 1)
        while cand in taken:
            k += 1
            cand = f"{base}_{k}"
        next_k[base] = k
        taken.add(cand)
        out.append(cand)
    return out


def choose_animation(doc: _Doc, names: list[str], animation: str | int | None) -> int:
    if animation is None:
        return 0
    if isinstance(animation, int) and not isinstance(animation, bool):
        if not 0 <= animation < len(names):
            raise doc.fail(f"animation index {animation} does not exist ({len(names)} animations)")
        return animation
    if isinstance(animation, str) and animation in names:
        return names.index(animation)
    raise doc.fail(f"no animation named {animation!r}; the file has {', '.join(names)}")


def _fold(
    pre: list[Array | None],
    rot: Array,
    trans: Array,
    scl: Array,
    warnings: list[str],
    names: list[str],
) -> tuple[Array, Array, Array]:
    """Apply each joint's folded non-joint ancestor transform (if any) to its samples."""
    rot, trans, scl = rot.copy(), trans.copy(), scl.copy()
    for j, m in enumerate(pre):
        if m is None:
            continue
        full = compose(m[None], qvv_to_matrix(rot[:, j], trans[:, j], scl[:, j]))
        r, t, s = decompose(full)
        err = np.max(np.abs(qvv_to_matrix(r, t, s) - full))
        if err > 1e-6 * max(1.0, float(np.max(np.abs(full)))):
            warnings.append(
                f"joint {names[j]!r}: the non-joint nodes above it shear it; "
                f"folded approximately (error {err:.3g})"
            )
        rot[:, j], trans[:, j], scl[:, j] = r, t, s
    return rot, trans, scl


@dataclass(frozen=True)
class Track:
    """One channel of an animation that targets a joint: key `times` (K,), `values`."""

    joint: int
    path: str
    times: Array
    values: Array
    interpolation: str


@dataclass(frozen=True)
class Timeline:
    """Where the clip's samples are: sample k at file time `start + k / rate`.

    `authored` is True when every key time lies on that grid (the samples are the keys);
    `note` explains a resampling (empty when the keys are the samples).
    """

    start: float
    rate: float
    count: int
    authored: bool
    note: str = ""

    def times(self) -> Array:
        return self.start + np.arange(self.count) / self.rate


def animation_tracks(doc: _Doc, ai: int, order: list[int], warnings: list[str]) -> list[Track]:
    """The channels of animation `ai` that target the skin's joints, checked and read."""
    anim = doc.item("animations", ai, "animation")
    aw = f"animations[{ai}]"
    channels = doc.get(anim, "channels", aw, list)
    samplers = doc.get(anim, "samplers", aw, list)
    index_of = {n: k for k, n in enumerate(order)}
    tracks: list[Track] = []
    ignored = 0
    for ci, ch in enumerate(channels):
        cw = f"{aw}.channels[{ci}]"
        si = doc.get(ch, "sampler", cw, int)
        if not 0 <= si < len(samplers):
            raise doc.fail(f"{cw}.sampler {si} does not exist ({len(samplers)} samplers)")
        target = doc.get(ch, "target", cw, dict)
        node = doc.get(target, "node", f"{cw}.target", int, None)
        tpath = doc.get(target, "path", f"{cw}.target", str)
        sw = f"{aw}.samplers[{si}]"
        sampler = samplers[si]
        interp = doc.get(sampler, "interpolation", sw, str, "LINEAR")
        if interp not in ("LINEAR", "STEP", "CUBICSPLINE"):
            raise doc.fail(f"{sw}.interpolation {interp!r} is not LINEAR, STEP or CUBICSPLINE")
        times = doc.accessor(doc.get(sampler, "input", sw, int), f"{sw}.input")[:, 0]
        if np.any(np.diff(times) < 0):
            raise doc.fail(f"{sw}.input key times are not increasing")
        if node is None or node not in index_of or tpath not in _PATH_WIDTH:
            ignored += 1
            continue
        width = _PATH_WIDTH[tpath]
        values = doc.accessor(doc.get(sampler, "output", sw, int), f"{sw}.output")
        if values.shape[1] != width:
            raise doc.fail(f"{sw}.output has {values.shape[1]} components, {tpath} needs {width}")
        per_key = 3 if interp == "CUBICSPLINE" else 1
        if values.shape[0] != per_key * times.shape[0]:
            raise doc.fail(
                f"{sw}.output has {values.shape[0]} elements for {times.shape[0]} keys "
                f"({interp} needs {per_key} per key)"
            )
        tracks.append(Track(index_of[node], tpath, times, values, interp))
    if ignored:
        warnings.append(
            f"{ignored} channel(s) of animation {ai} target morph weights or nodes "
            "outside the skin and were ignored"
        )
    return tracks


def animation_timeline(tracks: list[Track], rate: float | None) -> Timeline:
    """The clip's sample times for `tracks`: the authored grid when there is one and no
    `rate` was asked for, else `rate` (default 30 Hz) from the first to the last key."""
    if not tracks:
        note = "the animation targets no joint of the skin: showing the rest pose"
        return Timeline(0.0, rate or DEFAULT_SAMPLE_RATE, 1, True, note)
    every = np.concatenate([tr.times for tr in tracks])
    first, last = float(every.min()), float(every.max())
    grid = key_grid(every)
    if grid is not None and rate_problem(grid[1]):
        grid = None  # keys 1e-7 s or an hour apart: not a rate to sample a clip at
    if rate is None and grid is not None:
        start, grid_rate = grid
        count = int(round((last - start) * grid_rate)) + 1
        return Timeline(start, grid_rate, count, True)
    if rate is not None and last > first and holds_every_key(every, rate):
        count = int(round((last - first) * rate)) + 1  # every key a sample, as asked
        return Timeline(first, rate, count, True)
    if rate is None and last == first:
        return Timeline(first, DEFAULT_SAMPLE_RATE, 1, True)
    if rate is None:
        rate = DEFAULT_SAMPLE_RATE
        why = "the key times are not uniformly spaced"
        finer = finer_grid_rate(every)
        if finer is not None:
            why += f"; at --sample-rate {finer:g} every key is a sample"
    elif grid is not None:
        why = f"as asked; the keys are at {grid[1]:g} Hz"
    else:
        why = "as asked; the key times are not uniformly spaced"
    count = int(math.ceil((last - first) * rate - 1e-6)) + 1
    over = first + (count - 1) / rate - last
    note = (
        f"resampled at {rate:g} Hz ({why}): the samples are not the authored keys, and "
        "precision is measured against the resampled clip"
    )
    if over > 1e-9:
        note += f"; the last sample is {over:.4g} s after the last key"
    return Timeline(first, rate, count, False, note)


def _snap_to_grid(times: Array, timeline: Timeline) -> Array:
    """Key times moved onto the exact grid (the float32 keys are within tolerance of it), so
    that sampling at grid times returns the keys themselves."""
    k = np.rint((times - timeline.start) * timeline.rate)
    return timeline.start + k / timeline.rate


_INTERPOLATION = {"STEP": "step", "LINEAR": "linear", "CUBICSPLINE": "cubic"}


def authored_tracks(tracks: list[Track], timeline: Timeline) -> list[AuthoredTrack]:
    """The channels as the model's authored tracks (codec.model.authored_curves), key times
    in the file's seconds (snapped onto the grid when the keys are the samples): LINEAR
    rotations are slerp, as the spec says; CUBICSPLINE's (in-tangent, value, out-tangent)
    triples split. A joint's path targeted twice keeps its last channel, as before."""
    last: dict[tuple[int, str], Track] = {}
    for tr in tracks:
        last[(tr.joint, tr.path)] = tr
    out = []
    for tr in last.values():
        times = _snap_to_grid(tr.times, timeline) if timeline.authored else tr.times
        interp = _INTERPOLATION[tr.interpolation]
        if interp == "linear" and tr.path == "rotation":
            interp = "slerp"
        if interp == "cubic":
            v3 = tr.values.reshape(times.shape[0], 3, tr.values.shape[1])
            out.append(
                AuthoredTrack(tr.joint, tr.path, interp, times, v3[:, 1], v3[:, 0], v3[:, 2])
            )
        else:
            out.append(AuthoredTrack(tr.joint, tr.path, interp, times, tr.values))
    return out


def _sample_tracks(
    tracks: list[Track],
    timeline: Timeline,
    bind_r: Array,
    bind_t: Array,
    bind_s: Array,
) -> tuple[Array, Array, Array, AuthoredCurves | None]:
    """Rotations (S, J, 4), translations and scales (S, J, 3) at the timeline's samples:
    bind values where no track; and the curves they come from (file seconds, unfolded,
    file units), None without a track."""
    count, num = timeline.count, bind_r.shape[0]
    rot = np.broadcast_to(bind_r, (count, num, 4))
    trans = np.broadcast_to(bind_t, (count, num, 3))
    scl = np.broadcast_to(bind_s, (count, num, 3))
    if not tracks:
        return rot.copy(), trans.copy(), scl.copy(), None
    curves = AuthoredCurves(groups_of(authored_tracks(tracks, timeline)))
    rot, trans, scl = curves.evaluate(timeline.times(), rot, trans, scl)
    return rot, trans, scl, curves


def clip_curves(
    curves: AuthoredCurves | None,
    pre: list[Array | None],
    bind: tuple[Array, Array, Array],
    start: float,
    factor: float,
) -> AuthoredCurves | None:
    """The clip's curves: in clip seconds (sample 0 at `start`), lengths times `factor`, and
    every animated joint under non-joint nodes folded as its samples are, `bind` (J, 4|3)
    its unfolded rest values where a channel has no curve."""
    if curves is None:
        return None
    animated = np.unique(np.concatenate([g.joints for g in curves.groups]))
    fold = np.array([j for j in animated if pre[j] is not None], dtype=np.int64)
    r, t, s = bind
    base = np.concatenate([r[fold], t[fold], s[fold]], axis=1)
    matrices = np.array([pre[j] for j in fold]).reshape(-1, 3, 4)
    folded = AuthoredCurves(curves.groups, fold, matrices, base)
    return folded.shifted(-start).scaled(factor)


# --- skinned meshes ---------------------------------------------------------------------

_TRIANGLES, _STRIP, _FAN = 4, 5, 6


def skinned_meshes(
    doc: _Doc, joints: SkinJoints, factor: float, warnings: list[str]
) -> tuple[SkinnedMesh, ...]:
    """Every mesh node whose skin's joints are all joints of the clip, one SkinnedMesh per
    node (its triangle primitives merged; the skin's joints are its palette), lengths times
    `factor`. The spec ignores a skinned mesh node's own transform, so node_matrix is the
    identity. A mesh that cannot be read is left out with a warning naming the place: the
    animation stays readable."""
    nodes = doc.gltf.get("nodes", [])
    index_of = {n: k for k, n in enumerate(joints.order)}
    out: list[SkinnedMesh] = []
    for i, node in enumerate(nodes):
        if not isinstance(node, dict) or "mesh" not in node or "skin" not in node:
            continue
        where = f"nodes[{i}]"
        try:
            mesh = _skinned_mesh(doc, node, where, index_of, factor, warnings)
        except ClipFormatError as e:
            warnings.append(f"skinned mesh of {where} left out: {e.message}")
            continue
        if mesh is not None:
            out.append(mesh)
    return tuple(out)


def _skinned_mesh(
    doc: _Doc,
    node: dict,
    where: str,
    index_of: dict[int, int],
    factor: float,
    warnings: list[str],
) -> SkinnedMesh | None:
    si = doc.get(node, "skin", where, int)
    skin = doc.item("skins", si, f"{where}.skin")
    sw = f"skins[{si}]"
    skin_nodes = doc.get(skin, "joints", sw, list)
    if not skin_nodes or any(n not in index_of for n in skin_nodes):
        return None  # bound to another skeleton
    to_clip = np.array([index_of[n] for n in skin_nodes], dtype=np.int64)
    ibm = np.tile(np.eye(3, 4), (len(skin_nodes), 1, 1))  # the spec's default: identity
    if "inverseBindMatrices" in skin:
        mats = doc.accessor(skin["inverseBindMatrices"], f"{sw}.inverseBindMatrices")
        if mats.shape != (len(skin_nodes), 16):
            raise doc.fail(
                f"{sw}.inverseBindMatrices holds {mats.shape[0]} x {mats.shape[1]} values for "
                f"{len(skin_nodes)} joints (MAT4 each)"
            )
        ibm = mats.reshape(-1, 4, 4).transpose(0, 2, 1)[:, :3].copy()  # column-major
        ibm[:, :, 3] *= factor
    mi = doc.get(node, "mesh", where, int)
    mesh = doc.item("meshes", mi, f"{where}.mesh")
    mw = f"meshes[{mi}]"
    verts, tris, jnts, wts = [], [], [], []
    count = 0
    for pi, prim in enumerate(doc.get(mesh, "primitives", mw, list)):
        pw = f"{mw}.primitives[{pi}]"
        part = _primitive(doc, prim, pw, len(skin_nodes), warnings)
        if part is None:
            continue
        v, t, j, w = part
        verts.append(v)
        tris.append(t + count)
        jnts.append(j)
        wts.append(w)
        count += len(v)
    if not verts:
        return None
    k = max(j.shape[1] for j in jnts)
    jnts = [np.pad(j, ((0, 0), (0, k - j.shape[1])), mode="edge") for j in jnts]
    wts = [np.pad(w, ((0, 0), (0, k - w.shape[1]))) for w in wts]
    joints, weights, notes = normalize_influences(np.concatenate(jnts), np.concatenate(wts))
    warnings.extend(f"{where}: {n}" for n in notes)
    name = node.get("name") if isinstance(node.get("name"), str) else None
    name = name or (mesh.get("name") if isinstance(mesh.get("name"), str) else None) or where
    return SkinnedMesh(
        name=name,
        vertices=np.concatenate(verts) * factor,
        triangles=np.concatenate(tris),
        influence=joints,
        weights=weights,
        palette_joint=to_clip,
        inverse_bind=ibm,
    )


def _primitive(
    doc: _Doc, prim: Any, pw: str, num_skin_joints: int, warnings: list[str]
) -> tuple[Array, Array, Array, Array] | None:
    """(positions (V, 3), triangles (T, 3), skin joint indices (V, K), weights (V, K)) of one
    triangle primitive; None (with a warning) for points, lines or an unskinned primitive."""
    mode = doc.get(prim, "mode", pw, int, _TRIANGLES)
    attrs = doc.get(prim, "attributes", pw, dict)
    if mode not in (_TRIANGLES, _STRIP, _FAN):
        warnings.append(f"{pw} draws points or lines (mode {mode}): not part of the skin")
        return None
    if "JOINTS_0" not in attrs or "WEIGHTS_0" not in attrs:
        warnings.append(f"{pw} has no JOINTS_0/WEIGHTS_0: not part of the skin")
        return None
    if "targets" in prim:
        warnings.append(f"{pw}: morph targets are ignored (the skin is measured without them)")
    pos = doc.accessor(
        doc.get(attrs, "POSITION", f"{pw}.attributes", int), f"{pw}.attributes.POSITION"
    )
    if pos.shape[1] != 3:
        raise doc.fail(f"{pw}.attributes.POSITION is not VEC3")
    n = len(pos)
    jnts, wts = [], []
    for set_ in range(2):  # JOINTS_0/1 and WEIGHTS_0/1: up to 8 influences
        jk, wk = f"JOINTS_{set_}", f"WEIGHTS_{set_}"
        if jk not in attrs or wk not in attrs:
            break
        j = doc.accessor(attrs[jk], f"{pw}.attributes.{jk}")
        w = doc.accessor(attrs[wk], f"{pw}.attributes.{wk}")
        if j.shape != (n, 4) or w.shape != (n, 4):
            raise doc.fail(f"{pw}.attributes.{jk}/{wk} must be VEC4 with one per vertex ({n})")
        bad = (j < 0) | (j >= num_skin_joints) | (j != np.round(j))
        if np.any(bad & (w > 0)):
            v = int(np.argwhere(bad & (w > 0))[0, 0])
            raise doc.fail(
                f"{pw}.attributes.{jk} of vertex {v} is {j[v].tolist()}: the skin has "
                f"{num_skin_joints} joints"
            )
        jnts.append(np.where(bad, 0, j).astype(np.int64))
        wts.append(np.where(bad, 0.0, w))
    if "indices" in prim:
        idx = doc.accessor(prim["indices"], f"{pw}.indices")[:, 0].astype(np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise doc.fail(f"{pw}.indices refer to vertex {int(idx.max())} of {n}")
    else:
        idx = np.arange(n)
    return pos, _triangles(idx, mode), np.concatenate(jnts, axis=1), np.concatenate(wts, axis=1)


def _triangles(idx: Array, mode: int) -> Array:
    """(T, 3) triangles of a TRIANGLES, TRIANGLE_STRIP or TRIANGLE_FAN index list, with
    strips' odd triangles flipped so every triangle keeps the same winding."""
    if mode == _TRIANGLES:
        return idx[: len(idx) // 3 * 3].reshape(-1, 3)
    if len(idx) < 3:
        return np.zeros((0, 3), dtype=np.int64)
    i = np.arange(len(idx) - 2)
    if mode == _STRIP:
        tri = np.stack([idx[i], idx[i + 1], idx[i + 2]], axis=1)
        odd = i % 2 == 1
        tri[odd] = tri[odd][:, [1, 0, 2]]
        return tri
    return np.stack([np.full(len(i), idx[0]), idx[i + 1], idx[i + 2]], axis=1)


FORMAT = FormatSpec(
    name="gltf",
    label="glTF",
    extensions=(".gltf", ".glb"),
    read=read_gltf,
    read_options=("animation", "sample_rate", "skin", "scale_to_cm", "units"),
    multi_animation=True,
    list=list_gltf_animations,
)
