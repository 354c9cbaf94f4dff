"""Which way is up in a clip, and the rotation that stands it up in the 3D view (Z up).

Formats that declare an up axis win: glTF is Y-up by its specification, and the FBX and USD
readers put the file's axis settings in `clip.units.up_axis` ("+Y", "+Z", ...). BVH and
ACL SJSON say nothing, and both Y-up (CMU, Daz, MakeHuman) and Z-up (3ds Max, iClone, Blender)
exports exist, so for them the axis is read off the motion: a character's head is above the
middle of its body (when the rig names a head), and a standing body is taller than it is wide
or deep. Anything unclear stays Y-up, the most common convention.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from codec.model.clip import Clip
from codec.model.transforms import object_space

Array = np.ndarray

AXES = ("X", "Y", "Z")
DEFAULT = "Y"
Y_UP_SUFFIXES = (".gltf", ".glb")  # glTF 2.0: "+Y is up"
HEAD = re.compile(r"head(?!.*(end|top|nub|site))", re.IGNORECASE)
MAX_SAMPLES = 64  # poses looked at; evenly spread over the clip
CLEAR = 0.75  # share of the head direction one axis must hold to be trusted

# file axes -> display axes (Z up); each a proper rotation, so handedness is kept
TO_DISPLAY = {
    "Z": np.eye(3),
    "Y": np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]),  # +90 deg about X
    "X": np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]),  # x->z, y->x, z->y
}


def declared_up_axis(clip: Clip, path: str | Path | None = None) -> str | None:
    """The up axis the file states, if it states a positive one ("+Y" or "Y" -> "Y"; a
    downward axis is left to the motion, the view has no upside-down frame)."""
    units = getattr(clip, "units", None)
    axis = getattr(units, "up_axis", None)
    if isinstance(axis, str) and axis.strip().upper().lstrip("+") in AXES:
        return axis.strip().upper().lstrip("+")
    if path is not None and str(path).lower().endswith(Y_UP_SUFFIXES):
        return "Y"
    return None


def sampled_positions(clip: Clip, max_samples: int = MAX_SAMPLES) -> Array:
    """(S', J, 3) object-space joint positions at up to `max_samples` evenly spread samples."""
    idx = np.unique(
        np.linspace(0, clip.num_samples - 1, min(max_samples, clip.num_samples))
        .round()
        .astype(np.int64)
    )
    m = object_space(
        clip.rotations[idx], clip.translations[idx], clip.scales[idx], clip.skeleton.parents
    )
    return m[..., 3]


def detect_up_axis(clip: Clip, positions: Array | None = None) -> str:
    """Up axis guessed from the motion (positions (S, J, 3) in file axes, sampled if None)."""
    pos = sampled_positions(clip) if positions is None else np.asarray(positions)
    if clip.num_joints < 3:
        return DEFAULT
    heads = [j for j, n in enumerate(clip.skeleton.names) if HEAD.search(n)]
    if heads:
        # the head above the middle of the body, on average over the clip
        rise = (pos[:, heads[0]] - pos.mean(axis=1)).mean(axis=0)
        share = np.abs(rise) / max(float(np.linalg.norm(rise)), 1e-12)
        axis = int(np.argmax(share))
        if share[axis] >= CLEAR and rise[axis] > 0:
            return AXES[axis]
    # no head (or a lying one): a standing body is tallest along up
    extent = np.ptp(pos, axis=1).mean(axis=0)  # (3,) mean per-pose size
    order = np.argsort(extent)[::-1]
    if extent[order[0]] > 1.15 * extent[order[1]]:
        return AXES[int(order[0])]
    return DEFAULT


def up_axis(
    clip: Clip,
    path: str | Path | None = None,
    override: str | None = None,
    positions: Array | None = None,
) -> tuple[str, str]:
    """(axis, why): the override, what the file declares, or what the motion shows."""
    if override in AXES:
        return override, "chosen in View > Up axis"
    declared = declared_up_axis(clip, path)
    if declared is not None:
        return declared, "declared by the file"
    return detect_up_axis(clip, positions), "detected from the motion"


def to_display(axis: str) -> Array:
    """(3, 3) rotation taking file coordinates with `axis` up to the view's Z-up ones."""
    return TO_DISPLAY[axis]
