"""Dominant shells: how far, and how precisely, a joint's rotation must be kept.

A joint's error moves every descendant, so its rotation is judged on the farthest shell any
descendant puts in its space. Walking leaves to root, each joint pushes its current shell
through its own local transform at every sample; the largest reach, plus the joint's
precision (the error it may carry), becomes its parent's shell when it is farther. The
parent's precision becomes the tightest of its subtree's (ACL 2.1 takes the dominant
child's, which lets a loose leaf loosen its whole chain).
"""

from __future__ import annotations

import numpy as np

from codec.affine import qvv_matrix
from codec.clip import Clip
from codec.jit import kernel

Array = np.ndarray


@kernel
def _dominant(rot, tr, sc, rows, parents, dist, prec, v, m):
    for j in range(parents.shape[0] - 1, -1, -1):
        p = parents[j]
        if p < 0:
            continue
        d = dist[j]
        reach = 0.0
        for i in range(rows.shape[0]):
            s = rows[i]
            for c in range(4):
                v[c] = rot[s, j, c]
            for c in range(3):
                v[4 + c] = tr[s, j, c]
                v[7 + c] = sc[s, j, c]
            qvv_matrix(v, m)
            for k in range(3):  # codec.error_metric.shell_reach
                x = m[k] * d + m[3]
                y = m[4 + k] * d + m[7]
                z = m[8 + k] * d + m[11]
                reach = max(reach, x * x + y * y + z * z)
        reach = np.sqrt(reach) + prec[j]
        if reach > dist[p]:
            dist[p] = reach
        if prec[j] < prec[p]:
            prec[p] = prec[j]


def dominant_shells(
    clip: Clip,
    distance: Array | None = None,
    precision: Array | None = None,
    rows: Array | None = None,
) -> tuple[Array, Array]:
    """Dominant shell distance and precision (J,) each of a clip, from its own shell
    distances and precisions unless given. `rows` selects the samples that count (all by
    default)."""
    sk = clip.skeleton
    dist = np.array(sk.shell_distance if distance is None else distance, np.float64, copy=True)
    prec = np.array(sk.precision if precision is None else precision, np.float64, copy=True)
    if rows is None:
        rows = np.arange(clip.num_samples)
    c = np.ascontiguousarray
    _dominant(
        c(clip.rotations),
        c(clip.translations),
        c(clip.scales),
        np.asarray(rows, dtype=np.int64),
        np.asarray(sk.parents, dtype=np.int64),
        dist,
        prec,
        np.empty(10),
        np.empty(12),
    )
    return dist, prec


def segment_dominant_shells(clip: Clip, table: Array, wrap: bool) -> tuple[Array, Array]:
    """Dominant shells of every segment, (G, J) each. `table (G, 2)` holds each segment's
    first stored sample and count; with `wrap`, segment 0 also answers for the dropped last
    sample (S - 1), which decodes as its first."""
    num_joints = clip.num_joints
    dist = np.empty((len(table), num_joints))
    prec = np.empty((len(table), num_joints))
    for g, (first, n) in enumerate(table):
        rows = np.arange(first, first + n)
        if wrap and g == 0:
            rows = np.append(rows, clip.num_samples - 1)
        dist[g], prec[g] = dominant_shells(clip, rows=rows)
    return dist, prec
