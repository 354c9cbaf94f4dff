"""A Clip as plain named arrays and back: how a reader's child process hands its clip over.

Only arrays and one JSON string cross the pipe (np.savez / np.load with allow_pickle=False),
so the parent never unpickles anything a hostile file could have shaped.
"""

from __future__ import annotations

import dataclasses
import io
import json

import numpy as np

from codec.model.authored_curves import AuthoredCurves
from codec.model.clip import Clip, Skeleton
from codec.model.mesh import SkinnedMesh
from codec.model.units import Units

Array = np.ndarray
_MESH_ARRAYS = (
    "vertices",
    "triangles",
    "influence",
    "weights",
    "palette_joint",
    "inverse_bind",
    "node_matrix",
)


def clip_to_npz(clip: Clip) -> bytes:
    """The .npz bytes of `clip` (every field, meshes and authored curves included)."""
    sk = clip.skeleton
    meta = {
        "names": list(sk.names),
        "sample_rate": float(clip.sample_rate),
        "looping": bool(clip.looping),
        "name": clip.name,
        "warnings": list(clip.warnings),
        "units": dataclasses.asdict(clip.units) if clip.units is not None else None,
        "meshes": [m.name for m in clip.meshes],
    }
    arrays: dict[str, Array] = {
        "parents": sk.parents,
        "bind_rotations": sk.bind_rotations,
        "bind_translations": sk.bind_translations,
        "bind_scales": sk.bind_scales,
        "precision": sk.precision,
        "shell_distance": sk.shell_distance,
        "rotations": clip.rotations,
        "translations": clip.translations,
        "scales": clip.scales,
    }
    for i, mesh in enumerate(clip.meshes):
        for key in _MESH_ARRAYS:
            arrays[f"mesh{i}_{key}"] = getattr(mesh, key)
    if clip.curves is not None:
        arrays.update(clip.curves.to_arrays())
    buf = io.BytesIO()
    np.savez(buf, meta=np.array(json.dumps(meta)), **arrays)
    return buf.getvalue()


def clip_from_arrays(out: dict[str, Array]) -> Clip:
    """The clip `clip_to_npz` wrote (ClipValidationError when the arrays do not agree)."""
    meta = json.loads(str(out["meta"]))
    skeleton = Skeleton(
        names=tuple(str(n) for n in meta["names"]),
        parents=out["parents"],
        bind_rotations=out["bind_rotations"],
        bind_translations=out["bind_translations"],
        bind_scales=out["bind_scales"],
        precision=out["precision"],
        shell_distance=out["shell_distance"],
    )
    meshes = tuple(
        SkinnedMesh(str(name), *(out[f"mesh{i}_{key}"] for key in _MESH_ARRAYS))
        for i, name in enumerate(meta["meshes"])
    )
    units = Units(**meta["units"]) if meta["units"] is not None else None
    return Clip(
        skeleton=skeleton,
        sample_rate=float(meta["sample_rate"]),
        rotations=out["rotations"],
        translations=out["translations"],
        scales=out["scales"],
        looping=bool(meta["looping"]),
        name=str(meta["name"]),
        warnings=[str(w) for w in meta["warnings"]],
        units=units,
        meshes=meshes,
        curves=AuthoredCurves.from_arrays(out),
    )
