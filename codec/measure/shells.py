"""Dominant shells: how far, and how precisely, a joint's rotation must be kept.

A joint's error moves every descendant, so its rotation is judged on the farthest shell any
descendant puts in its space. Walking leaves to root, each joint pushes its current shell
through its own local transform at every sample; the largest reach, plus the joint's
precision (the error it may carry), becomes its parent's shell when it is farther. The
parent's precision becomes the tightest of its subtree's (ACL 2.1 takes the dominant
child's, which lets a loose leaf loosen its whole chain).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codec.jit import kernel
from codec.model.affine import qvv_matrix
from codec.model.clip import Clip

Array = np.ndarray
# relative: a reach this close to its bound may fall on either side of it with numpy's
# arccos instead of the kernel's acos (an ulp apart at most)
ACOS_MARGIN = 1e-12


@dataclass(frozen=True, eq=False)
class DominantShells:
    """Dominant shell of every joint: distance (J,) and precision (J,) for the whole clip,
    and per segment `segment_distance (G, J)`, `segment_precision (G, J)`."""

    distance: Array
    precision: Array
    segment_distance: Array
    segment_precision: Array


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
            for k in range(3):  # codec.measure.error_metric.shell_reach
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


def ancestor_scale(clip: Clip) -> Array:
    """(J,) how much a joint's local error can grow on its way to object space: the largest,
    over the samples, of the product of its ancestors' largest |scale| (1 for a root).

    The local tests (constant and default sub-tracks, the optimiser's lower bound) measure
    in the parent's space, and the parent's object transform stretches that by at most this
    factor. A rig under a 100x armature scale (FBX files in centimetres often carry one)
    would otherwise pass local tests 100 times too loose, and only the object-space repair
    would find out, one freed chain at a time.
    """
    out = np.zeros(clip.num_joints)
    c = np.ascontiguousarray
    _ancestor_scale(c(clip.scales), np.asarray(clip.skeleton.parents, np.int64), out)
    return out


def identity_strays(clip: Clip) -> tuple[Array, Array]:
    """How near the identity each joint's samples stay, per joint (J, 3): the smallest |w|
    of its rotations, the largest |component| of its translations, the largest
    |component - 1| of its scales; and its `ancestor_scale` (J,). One compiled pass: a
    screen that runs beside every encode (bind_modes' none) paid more in numpy's calls
    than a short clip's whole analysis."""
    c = np.ascontiguousarray
    strays, scale = np.empty((clip.num_joints, 3)), np.zeros(clip.num_joints)
    parents = np.asarray(clip.skeleton.parents, np.int64)
    _identity_strays(c(clip.rotations), c(clip.translations), c(clip.scales), parents, strays)
    _ancestor_scale(c(clip.scales), parents, scale)
    return strays, scale


def identity_within(
    clip: Clip, distance: Array, bound: Array, stored: Array
) -> tuple[int, Array, Array]:
    """Whether some sub-track of `stored` (J, 3) bool stays, at every sample, within
    `bound` (J,) of the identity on its shell `distance` (J,) times its ancestor_scale: a
    rotation's angle times the distance, a translation's largest component, a scale's
    largest |component - 1| times the distance (how bind_modes screens `none`). 1 or 0, or
    -1 where a rotation's angle is within rounding of its bound (the kernel's acos may
    differ from numpy's arccos by an ulp: numpy's must decide); with the `identity_strays`
    it measured (J, 3) and (J,) for that."""
    c = np.ascontiguousarray
    strays, scale = np.empty((clip.num_joints, 3)), np.zeros(clip.num_joints)
    some = _identity_within(
        c(clip.rotations),
        c(clip.translations),
        c(clip.scales),
        np.asarray(clip.skeleton.parents, np.int64),
        c(distance, dtype=np.float64),
        c(bound, dtype=np.float64),
        c(stored, dtype=np.bool_),
        strays,
        scale,
    )
    return int(some), strays, scale


@kernel
def _identity_within(rot, tr, sc, parents, distance, bound, stored, strays, scale):
    """`identity_within`: identity_strays' numbers into strays (J, 3) and scale (J,)
    zeros, compared as numpy compares them (((2 acos(min(|w|, 1))) d) s, t s,
    (|s - 1| d) s against the bound)."""
    nj = parents.shape[0]
    _identity_strays(rot, tr, sc, parents, strays)
    _ancestor_scale(sc, parents, scale)
    unclear = False
    for j in range(nj):
        if stored[j, 1] and strays[j, 1] * scale[j] <= bound[j]:
            return 1
        if stored[j, 2] and (strays[j, 2] * distance[j]) * scale[j] <= bound[j]:
            return 1
        if stored[j, 0]:
            reach = ((2.0 * np.arccos(min(strays[j, 0], 1.0))) * distance[j]) * scale[j]
            if reach <= bound[j] * (1.0 - ACOS_MARGIN):
                return 1
            if not reach > bound[j] * (1.0 + ACOS_MARGIN):
                unclear = True
    return -1 if unclear else 0


@kernel
def _identity_strays(rot, tr, sc, parents, out):
    """out (J, 3): `identity_strays`' first part of rotations (S, J, 4), translations and
    scales (S, J, 3)."""
    for j in range(parents.shape[0]):
        out[j, 0], out[j, 1], out[j, 2] = np.inf, 0.0, 0.0
        for s in range(rot.shape[0]):
            out[j, 0] = min(out[j, 0], abs(rot[s, j, 3]))
            for c in range(3):
                out[j, 1] = max(out[j, 1], abs(tr[s, j, c]))
                out[j, 2] = max(out[j, 2], abs(sc[s, j, c] - 1.0))


@kernel
def _ancestor_scale(sc, parents, out):
    """out (J,) zeros: `ancestor_scale` of scales (S, J, 3), sample by sample (a joint's
    reach is its parent's reach times the parent's largest |scale|; parents come first)."""
    reach = np.ones(parents.shape[0])
    for s in range(sc.shape[0]):
        for j in range(parents.shape[0]):
            p = parents[j]
            if p >= 0:
                big = max(max(abs(sc[s, p, 0]), abs(sc[s, p, 1])), abs(sc[s, p, 2]))
                reach[j] = reach[p] * big
            out[j] = max(out[j], reach[j])


def local_precision(precision: Array, scale: Array) -> Array:
    """Object-space precisions (..., J) as bounds on errors measured in each parent's space,
    given each joint's `ancestor_scale` (J,); under ancestors scaled to nothing any local
    error is allowed."""
    precision = np.ascontiguousarray(precision, dtype=np.float64)
    out = np.empty(precision.shape)
    num_joints = len(scale)
    _local_precision(
        precision.reshape(-1, num_joints),
        np.ascontiguousarray(scale, dtype=np.float64),
        out.reshape(-1, num_joints),
    )
    return out


@kernel
def _local_precision(precision, scale, out):
    """out (N, J): precision (N, J) / scale (J,) where scale > 0, else infinity (nothing to
    silence: numpy's errstate and two where cost more than a short clip's analysis)."""
    for i in range(precision.shape[0]):
        for j in range(precision.shape[1]):
            out[i, j] = precision[i, j] / scale[j] if scale[j] > 0.0 else np.inf


def segment_dominant_shells(clip: Clip, table: Array, wrap: bool) -> tuple[Array, Array]:
    """Dominant shells of every segment, (G, J) each. `table (G, 2)` holds each segment's
    first stored sample and count; with `wrap`, segment 0 also answers for the dropped last
    sample (S - 1), which decodes as its first."""
    sk = clip.skeleton
    g = len(table)
    dist = np.empty((g, clip.num_joints))
    prec = np.empty((g, clip.num_joints))
    c = np.ascontiguousarray
    _segment_dominant(
        c(clip.rotations),
        c(clip.translations),
        c(clip.scales),
        np.asarray(table, dtype=np.int64),
        clip.num_samples - 1 if wrap else -1,
        np.asarray(sk.parents, dtype=np.int64),
        np.asarray(sk.shell_distance, np.float64),
        np.asarray(sk.precision, np.float64),
        dist,
        prec,
    )
    return dist, prec


@kernel
def _segment_dominant(rot, tr, sc, table, wrapped, parents, shell, precision, dist, prec):
    """dist, prec (G, J) = `dominant_shells` of each segment's rows: table (G, 2) first
    sample and count; segment 0 also takes sample `wrapped` when it is >= 0."""
    v = np.empty(10)
    m = np.empty(12)
    for g in range(table.shape[0]):
        first, n = table[g, 0], table[g, 1]
        extra = 1 if g == 0 and wrapped >= 0 else 0
        rows = np.empty(n + extra, dtype=np.int64)
        for i in range(n):
            rows[i] = first + i
        if extra:
            rows[n] = wrapped
        for j in range(parents.shape[0]):
            dist[g, j] = shell[j]
            prec[g, j] = precision[j]
        _dominant(rot, tr, sc, rows, parents, dist[g], prec[g], v, m)
