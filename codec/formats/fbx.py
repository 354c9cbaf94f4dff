"""FBX reader (binary and ASCII, 6.x and 7.x) through ufbx, run in a child process.

Chosen by measurement over Debian's assimp: on the four shared FBX files both agree on every
joint's world position at every frame (within 0.001 cm), but ufbx evaluates the FBX curves
themselves and folds pre/post rotations and pivots into each node's transform, while assimp
only lerps between the union of key times and inserts `$AssimpFbx$` helper nodes that
would have to be folded back; ufbx is also a pip wheel (no system package) and parses the
files in 1-8 ms (geometry skipped) where assimp takes 6-120 ms. Starting the child process
makes a load 0.13-0.2 s (bench/load_clips.py). Its one flaw (ufbx 0.0.5 frees objects too
early and crashes at exit) is contained in codec.formats.fbx_worker, a child process: a
crash there is a ClipFormatError here, never a dead window. The child runs under
codec.formats.reader_process's memory and time limits, and codec.formats.fbx_scan checks
the arrays the file declares (counts, zlib sizes) before ufbx inflates any of them.

This module starts the worker, then builds the clip: each joint's local transform is its
own with every non-joint node between it and its joint parent (or above a root) folded in,
so object space is the file's world space; translations go from the file's declared unit
(FBX UnitScaleFactor) to centimetres; the declared axes are reported in `clip.units`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from codec.errors import ClipFormatError, ClipValidationError
from codec.formats.compressed import inner_name
from codec.formats.spec import FormatSpec
from codec.model import quat
from codec.model.clip import Clip, Skeleton
from codec.model.limits import file_bytes, rate_problem, transform_budget, unit_problem
from codec.model.mesh import SkinnedMesh, normalize_influences
from codec.model.transforms import compose, decompose, qvv_to_matrix
from codec.model.units import Units, unit_name_for_metres, user_units

Array = np.ndarray


def _run_worker(path: object, data: bytes | None, request: dict) -> dict[str, Array]:
    """Ask the worker (under codec.formats.reader_process's memory and time limits); its
    .npz as a dict, or ClipFormatError naming the file."""
    from codec.formats.fbx_scan import check_declared_sizes
    from codec.formats.reader_process import run_reader

    size = file_bytes(path, data)
    check_declared_sizes(path, data)
    req = dict(request, budget=transform_budget(size))
    return run_reader(path, data, req, module="codec.formats.fbx_worker", library="ufbx")


def list_fbx_animations(path: str | os.PathLike[str], *, data: bytes | None = None) -> list[str]:
    """The names of the file's animation stacks, in file order."""
    out = _run_worker(path, data, {"mode": "list"})
    return list(json.loads(str(out["meta"]))["stacks"])


def read_fbx(
    path: str | os.PathLike[str],
    *,
    animation: str | int | None = None,
    sample_rate: float | None = None,
    units: str | None = None,
    data: bytes | None = None,
) -> Clip:
    """Read one animation stack of an FBX file into a clip in centimetres.

    `animation`: a stack name (Blender's "Armature|Action" or just "Action" when unique), an
    index, or None for the first. `sample_rate`: None evaluates the curves at the file's
    frame rate, a number at that rate (with a warning). `units` overrides the declared unit
    (a name of codec.model.units.UNIT_CM). `data`: the file's bytes when already read.
    """
    if sample_rate is not None and rate_problem(float(sample_rate)):
        raise ValueError(f"sample_rate: {rate_problem(float(sample_rate))}")
    request = {"mode": "read", "animation": animation, "sample_rate": sample_rate, "meshes": True}
    out = _run_worker(path, data, request)
    meta = json.loads(str(out["meta"]))
    names = _unique([str(n) for n in out["names"]])
    parents = out["parents"]
    num = len(names)
    owners = out["fold_owner"]
    declared = _declared_units(meta)
    problem = unit_problem(float(meta["unit_meters"]))
    if problem and units in (None, "auto"):
        raise ClipFormatError(
            path,
            f"UnitScaleFactor {float(meta['unit_meters']) * 100:g}: {problem}; "
            "give the units to read it in",
        )
    try:
        chosen = user_units(units, declared)
    except ValueError as e:
        raise ClipFormatError(path, str(e)) from None
    warnings = list(meta["warnings"])
    rest = _fold(out["rest"][None], num, owners, names, warnings)
    rot, trans, scl = _fold(out["samples"], num, owners, names, [])
    rot = quat.ensure_continuity(quat.normalize(rot), axis=0)
    f = chosen.to_cm
    skeleton = Skeleton.create(
        names,
        parents,
        bind_rotations=quat.normalize(rest[0][0]),
        bind_translations=rest[1][0] * f,
        bind_scales=rest[2][0],
    )
    name = meta["name"] or Path(inner_name(str(path))).stem
    meshes = _meshes(out, meta.get("meshes", []), f, warnings)
    return Clip(
        skeleton=skeleton,
        sample_rate=float(meta["rate"]),
        rotations=rot,
        translations=trans * f,
        scales=scl,
        name=name,
        warnings=warnings,
        units=chosen,
        meshes=meshes,
    )


def _meshes(
    out: dict[str, Array], names: list[str], factor: float, warnings: list[str]
) -> tuple[SkinnedMesh, ...]:
    """The worker's mesh arrays (see fbx_worker._meshes) as SkinnedMeshes in cm; a mesh
    that does not hold together is left out with a warning."""
    if not names:
        return ()

    def split(key: str, counts: str) -> list[Array]:
        return np.split(out[key], np.cumsum(out[counts])[:-1])

    verts = split("mesh_vertices", "mesh_vertex_counts")
    tris = split("mesh_triangles", "mesh_triangle_counts")
    infl = split("mesh_influence", "mesh_vertex_counts")
    wts = split("mesh_weights", "mesh_vertex_counts")
    pal = split("mesh_palette_joint", "mesh_palette_counts")
    ibms = split("mesh_inverse_bind", "mesh_palette_counts")
    meshes = []
    for i, name in enumerate(names):
        ibm = ibms[i].copy()
        ibm[:, :, 3] *= factor
        node = out["mesh_node"][i].copy()
        node[:, 3] *= factor
        live = (infl[i] >= 0) & (wts[i] > 0)
        j, w, notes = normalize_influences(np.where(live, infl[i], 0), np.where(live, wts[i], 0))
        warnings.extend(f"mesh {name!r}: {n}" for n in notes)
        try:
            meshes.append(
                SkinnedMesh(
                    name or f"mesh_{i}", verts[i] * factor, tris[i], j, w, pal[i], ibm, node
                )
            )
        except ClipValidationError as e:
            warnings.append(f"mesh {name!r} left out: {e}")
    return tuple(meshes)


def _declared_units(meta: dict) -> Units:
    meters = float(meta["unit_meters"])
    unit = unit_name_for_metres(meters)
    kind = "ASCII" if meta["ascii"] else "binary"
    return Units(
        unit=unit,
        to_cm=meters * 100.0,
        chosen_by="file",
        declared=f"1 unit = {meters:g} m (FBX {meta['version']} {kind})",
        up_axis=meta["up_axis"],
        axes=meta["axes"],
    )


def _fold(
    trs: Array, num: int, owners: Array, names: list[str], warnings: list[str]
) -> tuple[Array, Array, Array]:
    """Joint locals (S, J, ...) with their fold nodes' transforms applied above them.

    `trs` is (S, J + F, 10): joints first, then fold nodes top-down, `owners[f]` the joint
    fold node f belongs to."""
    t, r, s = trs[..., 0:3], trs[..., 3:7], trs[..., 7:10]
    rot, trans, scl = r[:, :num].copy(), t[:, :num].copy(), s[:, :num].copy()
    for j in np.unique(owners):
        idx = num + np.flatnonzero(owners == j)
        m = qvv_to_matrix(quat.normalize(r[:, idx[0]]), t[:, idx[0]], s[:, idx[0]])
        for k in idx[1:]:
            m = compose(m, qvv_to_matrix(quat.normalize(r[:, k]), t[:, k], s[:, k]))
        if np.allclose(m, np.eye(3, 4), atol=1e-12):
            continue
        full = compose(m, qvv_to_matrix(quat.normalize(rot[:, j]), trans[:, j], scl[:, j]))
        rj, tj, sj = decompose(full)
        err = float(np.max(np.abs(qvv_to_matrix(rj, tj, sj) - full)))
        if err > 1e-6 * max(1.0, float(np.max(np.abs(full)))):
            warnings.append(
                f"joint {names[j]!r}: the nodes above it shear it; folded approximately "
                f"(error {err:.3g})"
            )
        rot[:, j], trans[:, j], scl[:, j] = rj, tj, sj
    return rot, trans, scl


def _unique(raw: list[str]) -> list[str]:
    out: list[str] = []
    taken: set[str] = set()
    for i, name in enumerate(raw):
        base = name or f"joint_{i}"
        cand, k = base, 1
        while cand in taken:
            k += 1
            cand = f"{base}_{k}"
        taken.add(cand)
        out.append(cand)
    return out


FORMAT = FormatSpec(
    name="fbx",
    label="FBX",
    extensions=(".fbx",),
    read=read_fbx,
    read_options=("animation", "sample_rate", "units"),
    multi_animation=True,
    list=list_fbx_animations,
    read_imports=("codec.formats.fbx_scan", "codec.formats.reader_process"),
)
