"""The FBX reader's child process: ufbx reads the file and hands back plain arrays.

Run as `python -m codec.formats.fbx_worker`; codec.formats.fbx starts it, never a user.
Why a separate process: ufbx 0.0.5's Python objects free the scene's memory too early
(every element fetched must be kept referenced, or a later access reads freed memory), and
the interpreter crashes at exit while freeing them. Here every fetched element is kept in
`_KEEP` until the end, the answer is written, and the process leaves with `os._exit`,
skipping the teardown that crashes. Should ufbx crash anyway, only this process dies and
the caller reports it as an unreadable file.

Protocol: stdin holds one JSON line {"mode": "list" | "read", "path": str | null,
"animation": str | int | null, "sample_rate": float | null, "budget": int} followed, when
path is null, by the file's bytes. `budget` is how many transforms (frames x nodes) the file
may make (codec.model.limits.transform_budget of its size), checked before any frame is evaluated.
On success stdout holds an .npz (see `_read`) and the exit code is 0; on a file problem
stderr holds the message (codec.formats.reader_process.child_message) and the exit
code is EXIT_BAD_FILE.

What is read: the joints are the bone nodes (FBX LimbNode / Root / Limb) and the nodes skin
clusters deform with, in depth-first order; a joint's parent is its nearest joint ancestor.
Every node in between (and above the roots) is a "fold" node whose transform the caller
folds into the joint below it. Local transforms are ufbx's, which fold FBX's pre/post
rotations, rotation/scaling offsets and pivots into translation, rotation and scale. Each
animation stack is one animation; its curves are evaluated at the file's frame rate (or a
requested rate), from the stack's start to its end, never at the key times. The keys'
interpolation flags (constant / linear / cubic) are not read: the clip is sampled data, and
between frames the codec's own interpolation stands (codec.model.authored_curves).
"""

from __future__ import annotations

import io
import json
import math
import os
import sys
from typing import Any

import numpy as np

from codec.formats.reader_process import EXIT_BAD_FILE, child_message
from codec.model.limits import FREE_TRANSFORMS, over_budget, rate_problem

# what codec.formats.reader_zygote imports once, before it forks a child per file
PRELOAD = ("ufbx",)
_KEEP: list[Any] = []  # every ufbx element fetched, alive until the process exits
_AXIS = ("+X", "-X", "+Y", "-Y", "+Z", "-Z", None)


class BadFile(Exception):
    """A problem with the file, reported to the caller as its message."""


def _k(obj: Any) -> Any:
    _KEEP.append(obj)
    return obj


def _load(request: dict, data: bytes | None) -> Any:
    import ufbx

    opts = {
        "ignore_geometry": not request.get("meshes"),
        "ignore_embedded": True,
        "load_external_files": False,
        "inherit_mode_handling": ufbx.InheritModeHandling.COMPENSATE,
    }
    try:
        if data is not None:
            return _k(ufbx.load_memory(data, **opts))
        return _k(ufbx.load_file(request["path"], **opts))
    except ufbx.UfbxError as e:
        raise BadFile(f"not a readable FBX file ({_ufbx_message(e)})") from None


def _ufbx_message(e: Exception) -> str:
    text = str(e).strip() or type(e).__name__
    return " ".join(text.split())[:300]


def _stacks(scene: Any) -> list[Any]:
    return [_k(s) for s in _k(scene.anim_stacks)]


def _choose_stack(stacks: list[Any], animation: str | int | None) -> int:
    names = [s.name for s in stacks]
    if animation is None:
        return 0
    if isinstance(animation, int):
        if not 0 <= animation < len(names):
            raise BadFile(f"animation index {animation} does not exist ({len(names)} stacks)")
        return animation
    if animation in names:
        return names.index(animation)
    # Blender names stacks "Armature|Action": the action's name alone is enough when unique
    tails = [n.rsplit("|", 1)[-1] for n in names]
    if tails.count(animation) == 1:
        return tails.index(animation)
    raise BadFile(f"no animation stack named {animation!r}; the file has {', '.join(names)}")


def _skeleton(scene: Any) -> tuple[list[Any], list[int], list[Any], list[int], list[str]]:
    """(joints, parents, fold nodes, fold owners, warnings); fold nodes top-down per joint."""
    import ufbx

    warnings: list[str] = []
    nodes = [_k(n) for n in _k(scene.nodes)]
    joint_ids = {n.element_id for n in nodes if _k(n.bone) is not None}
    for cluster in _k(scene.skin_clusters):
        bone = _k(_k(cluster).bone_node)
        if bone is not None:
            joint_ids.add(bone.element_id)
    if not joint_ids:
        plain = (ufbx.ElementType.EMPTY, ufbx.ElementType.UNKNOWN)
        joint_ids = {n.element_id for n in nodes if not n.is_root and _k(n.attrib_type) in plain}
        if not joint_ids:
            raise BadFile("the file has no bone nodes (and no null nodes to use as a skeleton)")
        warnings.append(
            "the file has no bone nodes: its null (empty) nodes are read as the skeleton"
        )
    root = _k(scene.root_node)
    joints: list[Any] = []
    parents: list[int] = []
    folds: list[Any] = []
    owners: list[int] = []

    def visit(node: Any, joint_parent: int, between: list[Any]) -> None:
        for child in _k(node.children):
            _k(child)
            if child.element_id in joint_ids:
                index = len(joints)
                joints.append(child)
                parents.append(joint_parent)
                folds.extend(between)
                owners.extend([index] * len(between))
                visit(child, index, [])
            else:
                visit(child, joint_parent, [*between, child])

    visit(root, -1, [root])
    return joints, parents, folds, owners, warnings


def _trs(transform: Any) -> list[float]:
    t, r, s = transform.translation, transform.rotation, transform.scale
    return [t.x, t.y, t.z, r.x, r.y, r.z, r.w, s.x, s.y, s.z]


def _axes(settings: Any) -> tuple[str | None, str]:
    axes = _k(settings.axes)
    up, front, right = (_AXIS[min(int(a), 6)] for a in (axes.up, axes.front, axes.right))
    detail = f"front {front}, right {right}" if front and right else ""
    original = _AXIS[min(int(settings.original_axis_up), 6)]
    if original and original != up:
        detail += f"; the authoring tool's up axis was {original}"
    return up, detail


def _read(request: dict, data: bytes | None) -> bytes:
    """The .npz the caller builds a clip from.

    Arrays: names (J,), parents (J,), fold_owner (F,) the joint each fold node belongs to,
    rest (J+F, 10) and samples (S, J+F, 10): translation xyz, rotation xyzw, scale xyz of
    the joints then the fold nodes; `meta` a JSON text (stack names, chosen stack, rate,
    start, units, axes, warnings).
    """
    scene = _load(request, data)
    settings = _k(scene.settings)
    meta_src = _k(scene.metadata)
    stacks = _stacks(scene)
    joints, parents, folds, owners, warnings = _skeleton(scene)
    nodes = joints + folds
    fps = float(settings.frames_per_second) or 30.0
    rate = request.get("sample_rate") or fps
    problem = rate_problem(rate)
    if problem:
        raise BadFile(f"frame rate (GlobalSettings): {problem}")
    if stacks:
        si = _choose_stack(stacks, request.get("animation"))
        stack = stacks[si]
        anim = _k(stack.anim)
        begin, end = float(stack.time_begin), float(stack.time_end)
        if not (math.isfinite(begin) and math.isfinite(end)) or end < begin:
            raise BadFile(f"animation stack {stack.name!r} has a bad time span {begin}..{end}")
        frames = (end - begin) * rate
        if request.get("sample_rate"):
            count = int(math.ceil(frames - 1e-6)) + 1
            warnings.append(
                f"curves evaluated at {rate:g} Hz as asked; the file's frame rate is {fps:g}"
            )
        else:
            count = int(round(frames)) + 1
            if abs(frames - round(frames)) > 1e-3:
                warnings.append(
                    f"stack {stack.name!r} ends between frames ({frames + 1:.3f} frames at "
                    f"{fps:g} Hz): read as {count} frames"
                )
        problem = over_budget(count, len(nodes), int(request.get("budget", FREE_TRANSFORMS)))
        if problem:
            raise BadFile(
                f"animation stack {stack.name!r} spans {begin:g} s to {end:g} s: at {rate:g} Hz "
                f"{problem} (nodes evaluated: the joints and the nodes above them)"
            )
        samples = np.empty((count, len(nodes), 10))
        for f in range(count):
            t = begin + f / rate
            samples[f] = [_trs(n.evaluate_transform(anim, t)) for n in nodes]
        name = stack.name
    else:
        si, begin, name = -1, 0.0, ""
        warnings.append("the file has no animation stack: showing the rest pose")
        samples = np.array([[_trs(_k(n.local_transform)) for n in nodes]])
    rest = np.array([_trs(_k(n.local_transform)) for n in nodes])
    mesh_arrays, mesh_names = ({}, [])
    if request.get("meshes"):
        mesh_arrays, mesh_names = _meshes(scene, joints, warnings)
    up, axes_detail = _axes(settings)
    meta = {
        "stacks": [s.name for s in stacks],
        "stack": si,
        "name": name,
        "rate": rate,
        "fps": fps,
        "start": begin,
        "unit_meters": float(settings.unit_meters),
        "up_axis": up,
        "axes": axes_detail,
        "creator": str(meta_src.creator),
        "version": int(meta_src.version),
        "ascii": bool(meta_src.ascii),
        "warnings": warnings,
        "meshes": mesh_names,
    }
    buf = io.BytesIO()
    np.savez(
        buf,
        names=np.array([j.name for j in joints], dtype=str),
        parents=np.array(parents, dtype=np.int64),
        fold_owner=np.array(owners, dtype=np.int64),
        rest=rest,
        samples=samples,
        meta=np.array(json.dumps(meta)),
        **mesh_arrays,
    )
    return buf.getvalue()


def _matrix(m: Any) -> np.ndarray:
    """A ufbx affine matrix (columns c0..c3) as a 3x4 array."""
    return np.array([[c.x, c.y, c.z] for c in (m.c0, m.c1, m.c2, m.c3)], dtype=np.float64).T


def _triangles(mesh: Any) -> np.ndarray:
    """(T, 3) vertex indices: every polygon fanned from its first corner (points and lines
    left out), winding as the file has it."""
    faces = np.asarray(_k(mesh.faces), dtype=np.int64).reshape(-1, 2)
    corners = np.asarray(_k(mesh.vertex_indices), dtype=np.int64)
    faces = faces[faces[:, 1] >= 3]
    per = faces[:, 1] - 2
    face = np.repeat(np.arange(len(faces)), per)
    k = np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per)
    first = faces[face, 0]
    tri = np.stack([corners[first], corners[first + k + 1], corners[first + k + 2]], axis=1)
    return tri[:, [0, 2, 1]] if mesh.reversed_winding else tri


def _rest_inverse(node: Any) -> np.ndarray:
    """4x4 inverse of a node's rest world matrix."""
    return np.linalg.inv(np.vstack([_matrix(_k(node.node_to_world)), [0.0, 0.0, 0.0, 1.0]]))


def _joint_above(node: Any, index: dict[int, int]) -> Any:
    """The node itself or its nearest ancestor that is a joint (None when there is none)."""
    while node is not None and node.element_id not in index:
        node = _k(node.parent)
    return node


def _meshes(scene: Any, joints: list[Any], warnings: list[str]) -> tuple[dict, list[str]]:
    """The meshes that follow the skeleton, as arrays for the caller's SkinnedMesh.

    A mesh with a skin deformer is skinned by its clusters (the palette): a vertex goes to
    the bone's world matrix times the cluster's geometry_to_bone (inverse bind, the mesh's
    own bind placement included), so node_matrix is the identity. A vertex no cluster weighs
    follows the mesh's node as ufbx does: rigidly with the node's nearest joint ancestor, or,
    with none, it never moves and is left out. A mesh without a skin that hangs below a
    joint moves rigidly with that joint (one palette entry: the joint's rest world inverse;
    node_matrix its geometry-to-world at rest). Other meshes (props, scenery) are left out.

    Arrays: mesh_vertices (V, 3), mesh_triangles (T, 3) per-mesh vertex indices,
    mesh_vertex_counts (M,), mesh_triangle_counts (M,), mesh_influence (V, K) palette
    entries (-1 unused), mesh_weights (V, K), mesh_palette_counts (M,), mesh_palette_joint
    (B,), mesh_inverse_bind (B, 3, 4), mesh_node (M, 3, 4).
    """
    index = {j.element_id: i for i, j in enumerate(joints)}
    parts: list[dict[str, Any]] = []
    left_out = 0
    for mesh in _k(scene.meshes):
        _k(mesh)
        verts = np.asarray(_k(mesh.vertices), dtype=np.float64).reshape(-1, 3)
        if len(verts) == 0:
            continue
        tris = _triangles(mesh)
        name = str(mesh.name)
        instances = _k(mesh.instances)
        inst = _k(instances[0]) if len(instances) else None
        owner = _joint_above(inst, index) if inst is not None else None
        if len(_k(mesh.blend_deformers)):
            warnings.append(
                f"mesh {name!r}: blend shapes are ignored (the skin is measured without them)"
            )
        skins = [_k(d) for d in _k(mesh.skin_deformers)]
        if skins:
            part = _skinned(mesh, skins, verts, tris, index, inst, owner, warnings)
            if part is None:
                continue
        elif owner is not None:
            part = {
                "vertices": verts,
                "triangles": tris,
                "influence": np.zeros((len(verts), 1), dtype=np.int64),
                "weights": np.ones((len(verts), 1)),
                "palette_joint": np.array([index[owner.element_id]], dtype=np.int64),
                "inverse_bind": _rest_inverse(owner)[None, :3],
                "node": _matrix(_k(inst.geometry_to_world)),
            }
        else:
            left_out += 1
            continue
        part["name"] = name
        parts.append(part)
    if left_out:
        warnings.append(
            f"meshes: {left_out} neither skinned nor under a joint (props, scenery) left out"
        )
    if not parts:
        return {}, []
    width = max(p["influence"].shape[1] for p in parts)

    def pad(a: np.ndarray, value: float) -> np.ndarray:
        return np.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=value)

    return {
        "mesh_vertices": np.concatenate([p["vertices"] for p in parts]),
        "mesh_triangles": np.concatenate([p["triangles"] for p in parts]),
        "mesh_vertex_counts": np.array([len(p["vertices"]) for p in parts], dtype=np.int64),
        "mesh_triangle_counts": np.array([len(p["triangles"]) for p in parts], dtype=np.int64),
        "mesh_influence": np.concatenate([pad(p["influence"], -1) for p in parts]),
        "mesh_weights": np.concatenate([pad(p["weights"], 0.0) for p in parts]),
        "mesh_palette_counts": np.array([len(p["palette_joint"]) for p in parts], np.int64),
        "mesh_palette_joint": np.concatenate([p["palette_joint"] for p in parts]),
        "mesh_inverse_bind": np.concatenate([p["inverse_bind"] for p in parts]),
        "mesh_node": np.array([p["node"] for p in parts]),
    }, [p["name"] for p in parts]


def _skinned(
    mesh: Any,
    skins: list[Any],
    verts: np.ndarray,
    tris: np.ndarray,
    index: dict[int, int],
    inst: Any,
    owner: Any,
    warnings: list[str],
) -> dict[str, Any] | None:
    """The palette and influences of a mesh skinned by its (first) skin deformer."""
    name = str(mesh.name)
    deformer = skins[0]
    if len(skins) > 1:
        warnings.append(f"mesh {name!r} has {len(skins)} skins: the first is used")
    if int(deformer.skinning_method) != 0:
        warnings.append(
            f"mesh {name!r} is skinned by {deformer.skinning_method.name}; "
            "measured with linear blend skinning"
        )
    clusters = [_k(c) for c in _k(deformer.clusters)]
    pal_joint = np.array(
        [index.get(_k(c.bone_node).element_id, -1) if c.bone_node else -1 for c in clusters],
        dtype=np.int64,
    )
    ibm = np.array([_matrix(_k(c.geometry_to_bone)) for c in clusters]).reshape(-1, 3, 4)
    sv = np.asarray(_k(deformer.vertices), dtype=np.float64).reshape(-1, 3)
    sw = np.asarray(_k(deformer.weights), dtype=np.float64).reshape(-1, 2)
    if len(sv) != len(verts) or len(clusters) == 0:
        warnings.append(f"mesh {name!r}: its skin does not match its vertices; left out")
        return None
    begin, count = sv[:, 0].astype(np.int64), sv[:, 1].astype(np.int64)
    width = max(1, int(count.max(initial=0)))
    slot = np.arange(width)
    live = slot[None] < count[:, None]
    at = np.where(live, begin[:, None] + slot[None], 0)
    cluster = sw[at, 0].astype(np.int64) if len(sw) else np.zeros_like(at)
    cluster = np.clip(cluster, 0, len(clusters) - 1)
    live &= pal_joint[cluster] >= 0
    weights = np.where(live, sw[at, 1] if len(sw) else 0.0, 0.0)
    influence = np.where(live, cluster, -1)
    unweighted = weights.sum(axis=1) <= 0
    keep = np.ones(len(verts), dtype=bool)
    if np.any(unweighted):
        if owner is not None:  # they follow the mesh node, as ufbx skins them
            node = np.vstack([_matrix(_k(inst.geometry_to_world)), [0.0, 0.0, 0.0, 1.0]])
            pal_joint = np.append(pal_joint, index[owner.element_id])
            ibm = np.concatenate([ibm, (_rest_inverse(owner) @ node)[None, :3]])
            influence[unweighted, 0] = len(pal_joint) - 1
            weights[unweighted, 0] = 1.0
        else:  # a vertex that never moves has no error: it is not part of the skin
            keep = ~unweighted
            warnings.append(
                f"mesh {name!r}: {int(unweighted.sum())} vertices no joint moves are left out"
            )
    if not keep.all():
        new = np.cumsum(keep) - 1
        tris = new[tris[np.all(keep[tris], axis=1)]]
        verts, influence, weights = verts[keep], influence[keep], weights[keep]
    return {
        "vertices": verts,
        "triangles": tris,
        "influence": influence,
        "weights": weights,
        "palette_joint": pal_joint,
        "inverse_bind": ibm,
        "node": np.eye(3, 4),
    }


def _list(request: dict, data: bytes | None) -> bytes:
    scene = _load(request, data)
    buf = io.BytesIO()
    np.savez(buf, meta=np.array(json.dumps({"stacks": [s.name for s in _stacks(scene)]})))
    return buf.getvalue()


def main() -> None:
    code = 0
    try:
        head = sys.stdin.buffer.readline()
        request = json.loads(head)
        data = sys.stdin.buffer.read() if request.get("path") is None else None
        out = (_list if request["mode"] == "list" else _read)(request, data)
        sys.stdout.buffer.write(out)
    except BadFile as e:
        child_message(str(e))
        code = EXIT_BAD_FILE
    except MemoryError:
        child_message("too large to read into memory")
        code = EXIT_BAD_FILE
    except Exception as e:  # ufbx raising on a malformed value: still the file's doing
        text = " ".join(str(e).split())[:200]
        child_message(f"ufbx cannot read a value of it ({type(e).__name__}: {text})")
        code = EXIT_BAD_FILE
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # skip the interpreter teardown that crashes in ufbx 0.0.5


if __name__ == "__main__":
    main()
