"""Object-space matrices of a few poses, compiled: `transforms.object_space` one joint at a
time instead of numpy's batch per hierarchy level, which costs more than the maths itself
when the poses are few (the size check poses the bind pose and 64 poses of the motion on
every measurement). The same matrices up to rounding: the products are summed in another
order, so callers that compare to the bit keep numpy's object_space."""

from __future__ import annotations

import numpy as np

from codec.jit import inlined, kernel
from codec.model import affine

Array = np.ndarray

_qvv_matrix = inlined(affine.qvv_matrix)
_compose = inlined(affine.compose)


@kernel
def _pose_matrices(rot, tr, sc, parents, pose, out):
    """out (N, J, 12): object-space matrices of local poses rot (N, J, 4), tr and sc."""
    for i in range(rot.shape[0]):
        for j in range(parents.shape[0]):
            for c in range(4):
                pose[c] = rot[i, j, c]
            for c in range(3):
                pose[4 + c] = tr[i, j, c]
                pose[7 + c] = sc[i, j, c]
            _qvv_matrix(pose, out[i, j])
            p = parents[j]
            if p >= 0:
                _compose(out[i, p], out[i, j], out[i, j])


def pose_matrices(rotations: Array, translations: Array, scales: Array, parents: Array) -> Array:
    """Object-space matrices `(N, J, 3, 4)` of local rotations (N, J, 4), translations and
    scales (N, J, 3)."""
    c = np.ascontiguousarray
    rot, tr, sc = (c(a, dtype=np.float64) for a in (rotations, translations, scales))
    out = np.empty((*rot.shape[:2], 12))
    _pose_matrices(rot, tr, sc, np.asarray(parents, np.int64), np.empty(10), out)
    return out.reshape(*rot.shape[:2], 3, 4)
