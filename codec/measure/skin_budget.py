"""What skin-strict compression needs from the mesh: each vertex's budget, its true error at
the samples, and how much tighter each joint's precision must be where the skin is over.

Skin-strict (`CompressionSettings.skin_strict`) promises the skin itself: every vertex within
the precision of its strongest joint (largest weight) at every sample, measured exactly as
the true error is (codec.measure.vertex_error: the decoded clip at the samples, skinned in
float64). The codecs only know per-joint precisions on shells, so the promise is kept by a
loop outside every codec (codec.compression): encode with shells from the mesh, measure the
skin, and where a vertex is over its budget tighten the precision of every joint that moves
it by the share it is over, then encode again. The error of a vertex is at most the weighted
sum of its joints' errors at its bind-local position, so tightening every joint it hangs on
by the same factor scales that bound by it; the shells (three points per joint) only
approximate that error, which is why the loop measures the real thing each round.

Memory stays bounded on large meshes: the skin is measured a chunk of samples at a time
(codec.measure.skinning.chunks), keeping one number per vertex.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from codec.measure.skinning import chunks, pose_distances
from codec.measure.vertex_error import ErrorSummary, blended_object_space
from codec.model.mesh import Skin

if TYPE_CHECKING:
    from codec.model.clip import Clip

Array = np.ndarray

AIM = 1.0 - 1e-6  # rounds aim this far under a budget (an independent float64 check agrees)
OVERSHOOT = 0.97  # a tightened joint is asked this much more than the measured share


def vertex_budget(skin: Skin, precision: Array) -> Array:
    """(V,) each vertex's budget: the precision (J,) of its strongest joint."""
    return np.asarray(precision, dtype=np.float64)[skin.dominant_joint]


def sample_vertex_error(clip: Clip, lossy: Clip, skin: Skin) -> Array:
    """(V,) each vertex's largest true error over the samples (rounding nearest) between the
    raw clip and the decoded one, as codec.measure.vertex_error measures it; a chunk of
    samples at a time."""
    s = clip.num_samples
    summary = ErrorSummary(s, skin.num_vertices, keep=False)
    ks, alphas = np.arange(s), np.zeros(s)
    for rows in chunks(s, skin):
        raw = blended_object_space(clip, ks[rows], alphas[rows])
        out = blended_object_space(lossy, ks[rows], alphas[rows])
        summary.add(rows, pose_distances(raw, out, skin))
    return summary.vertex_max


def over_budget(error: Array, budget: Array) -> Array:
    """(V,) bool: vertices whose error (V,) is over the rounds' aim at their budget (V,)."""
    return error > budget * AIM


def tightened(precision: Array, skin: Skin, error: Array, budget: Array) -> Array:
    """Per-joint precisions (J,) for the next round: every joint that moves a vertex over
    its budget (any weight above 0) takes its precision times the smallest share
    budget / error among those vertices, a little more (OVERSHOOT) so that the rounds end
    soon; the others keep theirs."""
    prec = np.array(precision, dtype=np.float64, copy=True)
    over = np.flatnonzero(over_budget(error, budget))
    if len(over) == 0:
        return prec
    share = budget[over] * AIM / error[over] * OVERSHOOT  # (n,) < 1
    factor = np.ones(len(prec))
    joints = skin.palette_joint[skin.influence[over]]  # (n, K)
    live = skin.weights[over] > 0
    np.minimum.at(factor, joints[live], np.broadcast_to(share[:, None], joints.shape)[live])
    return prec * factor
