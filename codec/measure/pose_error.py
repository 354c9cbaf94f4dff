"""Error at one shown pose: the raw and the lossy pose at the same time, under the same rounding.

`Result.error` is measured at sample times (rounding nearest); a viewer that shows
a time between samples, or snaps it with floor or ceil, shows a different pose, and its
readouts must quote the error of what is on screen. This is that one function.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codec.measure.error_metric import shell_error
from codec.model.sampling import Pose
from codec.model.topology import depth_levels
from codec.model.transforms import local_to_object, qvv_to_matrix

Array = np.ndarray


def pose_matrices(pose: Pose, parents: Array, levels: list[Array] | None = None) -> Array:
    """(J, 3, 4) object-space matrices of one local pose."""
    local = qvv_to_matrix(pose.rotations, pose.translations, pose.scales)
    return local_to_object(local, parents, levels)


@dataclass(frozen=True, eq=False)
class PoseError:
    """raw and lossy (J, 3, 4) object-space matrices of one shown pose and error (J,) between
    them on each joint's shell (None without a lossy pose)."""

    raw: Array
    lossy: Array | None
    error: Array | None


def pose_error(
    raw: Pose,
    lossy: Pose | None,
    parents: Array,
    shell_distance: Array,
    levels: list[Array] | None = None,
) -> PoseError:
    """Object space of both poses and the shell error between them."""
    levels = levels if levels is not None else depth_levels(np.asarray(parents))
    raw_m = pose_matrices(raw, parents, levels)
    if lossy is None:
        return PoseError(raw_m, None, None)
    lossy_m = pose_matrices(lossy, parents, levels)
    return PoseError(raw_m, lossy_m, shell_error(raw_m, lossy_m, shell_distance))
