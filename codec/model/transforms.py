"""QVV transforms and object space as 3x4 affine matrices.

A QVV transform maps a point p to R(s * p) + t. Object space composes a joint's local
transform under its parent's; 3x4 matrices keep non-uniform and negative scale exact.
"""

from __future__ import annotations

import numpy as np

from codec.model import quat
from codec.model.topology import depth_levels

Array = np.ndarray


def qvv_to_matrix(rotations: Array, translations: Array, scales: Array) -> Array:
    """Affine matrices `(..., 3, 4)` of QVV transforms (`(..., 4)`, `(..., 3)`, `(..., 3)`)."""
    r = quat.to_matrix(rotations)
    m = np.empty((*r.shape[:-2], 3, 4), dtype=r.dtype)
    m[..., :3] = r * np.asarray(scales)[..., None, :]
    m[..., 3] = translations
    return m


def compose(parent: Array, child: Array) -> Array:
    """`parent @ child` for affine 3x4 matrices `(..., 3, 4)`: child first, then parent."""
    out = parent[..., :3] @ child  # rotates the child's translation column as well
    out[..., 3] += parent[..., 3]
    return out


def transform_points(m: Array, p: Array) -> Array:
    """Apply affine matrices `(..., 3, 4)` to points `(..., 3)`."""
    return (m[..., :3] @ p[..., None])[..., 0] + m[..., 3]


def local_to_object(local: Array, parents: Array, levels: list[Array] | None = None) -> Array:
    """Object-space matrices `(..., J, 3, 4)` from local ones `(..., J, 3, 4)`.

    Batched over every leading axis (samples) and over all joints of one depth at a time.
    """
    out = np.array(local, copy=True)
    parents = np.asarray(parents)
    for level in levels if levels is not None else depth_levels(parents):
        p = parents[level]
        has = p >= 0
        if not np.any(has):
            continue
        kids = level[has]
        out[..., kids, :, :] = compose(out[..., p[has], :, :], out[..., kids, :, :])
    return out


def object_space(rotations: Array, translations: Array, scales: Array, parents: Array) -> Array:
    """Object-space matrices `(S, J, 3, 4)` of a clip's local QVV arrays."""
    return local_to_object(qvv_to_matrix(rotations, translations, scales), parents)


def decompose(m: Array) -> tuple[Array, Array, Array]:
    """Split affine matrices `(..., 3, 4)` into QVV (rotation, translation, scale).

    Exact for rotation times (possibly negative) axis scale; a reflection is carried by a
    negative x scale so the rotation stays proper.
    """
    m = np.asarray(m, dtype=np.float64)
    lin = m[..., :3]
    scale = np.linalg.norm(lin, axis=-2)
    det = np.linalg.det(lin)
    scale[..., 0] = np.where(det < 0, -scale[..., 0], scale[..., 0])
    safe = np.where(np.abs(scale) > 1e-12, scale, 1.0)
    rot = quat.from_matrix(lin / safe[..., None, :])
    return rot, m[..., 3].copy(), scale
