"""Shell distances from the mesh: how far each joint really reaches into the skin.

ACL's shell distance is one guess for every joint (3 cm). With a skin at hand the honest
value is measurable: a joint's shell is the distance, in the joint's own bind space, to the
farthest vertex it moves with a weight over a threshold. A joint that moves no vertex takes
the largest shell its children reach in its space (their shells pushed through their bind
local transforms: the dominant value, as codec.measure.shells computes it per sample); a joint with
no skinned descendant keeps the fallback value the user gave. Lengths in clip units.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from codec.errors import SettingsError
from codec.measure.error_metric import shell_reach
from codec.model.mesh import skin_of
from codec.model.transforms import qvv_to_matrix

if TYPE_CHECKING:
    from codec.model.clip import Clip

Array = np.ndarray

WEIGHT_THRESHOLD = 0.1  # a vertex counts for a joint when the joint moves it this much
MIN_SHELL = 1e-3  # a vertex sitting on its joint must not give a zero shell

FROM_MESH, FROM_CHILDREN, FALLBACK = "mesh", "children", "fallback"


def mesh_shell_distances(
    clip: Clip, fallback: float | Array | None = None, threshold: float = WEIGHT_THRESHOLD
) -> tuple[Array, Array]:
    """(distance (J,), source (J,) of 'mesh' | 'children' | 'fallback') for a clip with
    meshes. `fallback` (default: the skeleton's own shell distances) is what joints with no
    skinned vertex below them keep. SettingsError when the clip has no skinned mesh."""
    skin = skin_of(clip.meshes)
    sk = clip.skeleton
    if skin is None:
        raise SettingsError(
            "the clip has no skinned mesh, so shell distances cannot come from the mesh "
            "(glTF, FBX and USD files with a skin have one)"
        )
    if not 0.0 <= threshold < 1.0:
        raise SettingsError(f"the weight threshold must be in [0, 1), got {threshold}")
    num = sk.num_joints
    fall = np.broadcast_to(
        sk.shell_distance if fallback is None else np.asarray(fallback, dtype=np.float64), (num,)
    )
    local, joints, weights = skin.joint_space_vertices()
    reach = np.linalg.norm(local, axis=-1)
    use = weights > threshold
    dist = np.full(num, -1.0)
    np.maximum.at(dist, joints[use], reach[use])
    source = np.where(dist >= 0, FROM_MESH, FALLBACK).astype(object)
    dist = np.where(dist >= 0, np.maximum(dist, MIN_SHELL), np.nan)
    bind = qvv_to_matrix(sk.bind_rotations, sk.bind_translations, sk.bind_scales)
    parents = sk.parents
    for j in range(num - 1, -1, -1):  # children first: parents come before them
        p = parents[j]
        if p < 0 or np.isnan(dist[j]) or source[p] == FROM_MESH:
            continue
        pushed = float(shell_reach(bind[j], dist[j]))
        if np.isnan(dist[p]) or pushed > dist[p]:
            dist[p] = max(pushed, MIN_SHELL)
            source[p] = FROM_CHILDREN
    dist = np.where(np.isnan(dist), fall, dist)
    return dist, source.astype(str)


def with_mesh_shells(clip: Clip, fallback: float | Array | None = None) -> Clip:
    """The clip with every joint's shell distance taken from its mesh (see module doc)."""
    dist, _ = mesh_shell_distances(clip, fallback)
    return clip.with_skeleton_settings(shell_distance=dist)
