"""The local rotation a joint aims at under its lossy parent (compiled; numba).

The curve codec's slack pass (codec.codecs.curve.allocation) aims each rotation's knots at
the local rotation that, under the lossy parent, best puts the joint's shell points and the
joints that turn with it where the source has them: the least-squares rotation of point
pairs (Kabsch's problem). Solved here per knot, in one compiled pass over the knots, by
Horn's quaternion method (the rotation is the eigenvector of the largest eigenvalue of a
symmetric 4x4 matrix built from the pairs' 3x3 correlation, found by Jacobi rotations): the
same optimal proper rotation as Kabsch's SVD with its reflection fixed, without LAPACK (numba
takes its SVD from scipy, which the project does not depend on). The numpy version it
replaced cost most of the slack pass in call overhead (about 0.8 ms an aim, 540 aims on
cmu_49_15 Bezier auto every 6).

Cost: per knot, the parent's object matrix along its chain (O(depth)), the correlation of
the P point pairs (O(P)), a few Jacobi sweeps of a 4x4 matrix.
"""

from __future__ import annotations

import numpy as np

from codec.jit import inlined, kernel
from codec.model.affine import compose, qvv_matrix

Array = np.ndarray

SWEEPS = 16  # Jacobi sweeps at most (a 4x4 symmetric matrix converges in 4-6)
CONVERGED = 1e-34  # off-diagonal mass left, of the matrix's: the eigenvector to ~1e-16

_qvv_matrix = inlined(qvv_matrix)
_compose = inlined(compose)


@inlined
def _local(rot: Array, tr: Array, sc: Array, s: int, j: int, pose: Array, out: Array) -> None:
    """out (12,): joint j's local matrix at sample s, its rotation normalised (NaN when it
    is zero, as numpy divides)."""
    n = np.sqrt(rot[s, j, 0] ** 2 + rot[s, j, 1] ** 2 + rot[s, j, 2] ** 2 + rot[s, j, 3] ** 2)
    for c in range(4):
        pose[c] = rot[s, j, c] / n
    for c in range(3):
        pose[4 + c] = tr[s, j, c]
        pose[7 + c] = sc[s, j, c]
    _qvv_matrix(pose, out)


@inlined
def _largest_eigenvector(a: Array, q: Array) -> None:
    """q (4,) <- the unit eigenvector of the largest eigenvalue of the symmetric a (4, 4)
    (cyclic Jacobi; a is overwritten)."""
    v = np.eye(4)
    size = 0.0
    for p in range(4):
        for r in range(4):
            size += a[p, r] * a[p, r]
    for _ in range(SWEEPS):
        off = 0.0
        for p in range(3):
            for r in range(p + 1, 4):
                off += a[p, r] * a[p, r]
        if off <= CONVERGED * size:
            break
        for p in range(3):
            for r in range(p + 1, 4):
                if a[p, r] == 0.0:
                    continue
                theta = (a[r, r] - a[p, p]) / (2.0 * a[p, r])
                t = (1.0 if theta >= 0.0 else -1.0) / (abs(theta) + np.sqrt(theta * theta + 1.0))
                c = 1.0 / np.sqrt(t * t + 1.0)
                s = t * c
                for k in range(4):  # a <- J^T a J, columns then rows
                    akp, akr = a[k, p], a[k, r]
                    a[k, p] = c * akp - s * akr
                    a[k, r] = s * akp + c * akr
                for k in range(4):
                    apk, ark = a[p, k], a[r, k]
                    a[p, k] = c * apk - s * ark
                    a[r, k] = s * apk + c * ark
                for k in range(4):
                    vkp, vkr = v[k, p], v[k, r]
                    v[k, p] = c * vkp - s * vkr
                    v[k, r] = s * vkp + c * vkr
    best = 0
    for i in range(1, 4):
        if a[i, i] > a[best, best]:
            best = i
    for i in range(4):
        q[i] = v[i, best]


@inlined
def _from_matrix(m: Array, out: Array) -> None:
    """out (4,) x, y, z, w: the unit quaternion of the rotation matrix m (3, 3), w >= 0
    (Shepperd's method, as codec.model.quat.from_matrix)."""
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    pick = 0
    big = trace
    for i in range(3):
        if m[i, i] > big:
            big = m[i, i]
            pick = i + 1
    if pick == 0:
        out[0], out[1], out[2] = m[2, 1] - m[1, 2], m[0, 2] - m[2, 0], m[1, 0] - m[0, 1]
        out[3] = 1.0 + trace
    elif pick == 1:
        out[0], out[1] = 1.0 + m[0, 0] - m[1, 1] - m[2, 2], m[0, 1] + m[1, 0]
        out[2], out[3] = m[0, 2] + m[2, 0], m[2, 1] - m[1, 2]
    elif pick == 2:
        out[0], out[1] = m[0, 1] + m[1, 0], 1.0 - m[0, 0] + m[1, 1] - m[2, 2]
        out[2], out[3] = m[1, 2] + m[2, 1], m[0, 2] - m[2, 0]
    else:
        out[0], out[1] = m[0, 2] + m[2, 0], m[1, 2] + m[2, 1]
        out[2], out[3] = 1.0 - m[0, 0] - m[1, 1] + m[2, 2], m[1, 0] - m[0, 1]
    n = np.sqrt(out[0] ** 2 + out[1] ** 2 + out[2] ** 2 + out[3] ** 2)
    sign = -1.0 if out[3] < 0.0 else 1.0
    for c in range(4):
        out[c] = sign * out[c] / n


@kernel
def aimed_rotations(
    rot: Array,
    tr: Array,
    sc: Array,
    keys: Array,
    chain: Array,
    j: int,
    v: Array,
    y: Array,
    moved: Array,
) -> Array:
    """(K, 4) the local rotation of joint j at each knot `keys (K,)` that, under its lossy
    parent, best maps the points `v (K, P, 3)` in the joint's frame onto `y (K, P, 3)`, where
    the source has them (least squares; `moved (P,)`: the points taken absolute, the others
    relative to the joint). `rot (S, J, 4)` (not normalised), `tr`, `sc (S, J, 3)` the lossy
    local pose; `chain (D,)` j's ancestors, the root first."""
    K, P = v.shape[0], v.shape[1]
    out = np.empty((K, 4))
    pose = np.empty(10)
    m = np.empty(12)
    local = np.empty(12)
    h = np.empty((3, 3))
    n4 = np.empty((4, 4))
    q = np.empty(4)
    turn = np.empty((3, 3))
    axes = np.empty((3, 3))
    rel = np.empty((3, 3))
    at = np.empty(3)
    for k in range(K):
        s = keys[k]
        _local(rot, tr, sc, s, chain[0], pose, m)
        for d in range(1, chain.shape[0]):
            _local(rot, tr, sc, s, chain[d], pose, local)
            _compose(m, local, m)
        for a in range(3):  # where the joint is: the parent's matrix applied to its offset
            at[a] = m[4 * a] * tr[s, j, 0] + m[4 * a + 1] * tr[s, j, 1]
            at[a] += m[4 * a + 2] * tr[s, j, 2] + m[4 * a + 3]
        for a in range(3):
            for b in range(3):
                h[a, b] = 0.0
        for p in range(P):
            for b in range(3):
                yb = y[k, p, b] - at[b] if moved[p] else y[k, p, b]
                for a in range(3):
                    h[a, b] += v[k, p, a] * yb
        sxx, sxy, sxz = h[0, 0], h[0, 1], h[0, 2]
        syx, syy, syz = h[1, 0], h[1, 1], h[1, 2]
        szx, szy, szz = h[2, 0], h[2, 1], h[2, 2]
        n4[0, 0], n4[0, 1], n4[0, 2], n4[0, 3] = sxx + syy + szz, syz - szy, szx - sxz, sxy - syx
        n4[1, 1], n4[1, 2], n4[1, 3] = sxx - syy - szz, sxy + syx, szx + sxz
        n4[2, 2], n4[2, 3] = -sxx + syy - szz, syz + szy
        n4[3, 3] = -sxx - syy + szz
        for a in range(4):
            for b in range(a):
                n4[a, b] = n4[b, a]
        _largest_eigenvector(n4, q)  # (w, x, y, z): the rotation taking v to y
        w, x, yq, z = q[0], q[1], q[2], q[3]
        turn[0, 0] = 1.0 - 2.0 * (yq * yq + z * z)
        turn[0, 1] = 2.0 * (x * yq - w * z)
        turn[0, 2] = 2.0 * (x * z + w * yq)
        turn[1, 0] = 2.0 * (x * yq + w * z)
        turn[1, 1] = 1.0 - 2.0 * (x * x + z * z)
        turn[1, 2] = 2.0 * (yq * z - w * x)
        turn[2, 0] = 2.0 * (x * z - w * yq)
        turn[2, 1] = 2.0 * (yq * z + w * x)
        turn[2, 2] = 1.0 - 2.0 * (x * x + yq * yq)
        for b in range(3):  # the parent's axes, its scale taken out
            length = np.sqrt(m[b] ** 2 + m[4 + b] ** 2 + m[8 + b] ** 2)
            for a in range(3):
                axes[a, b] = m[4 * a + b] / length
        for a in range(3):  # axes^T turn: the turn in the parent's frame
            for b in range(3):
                rel[a, b] = axes[0, a] * turn[0, b] + axes[1, a] * turn[1, b]
                rel[a, b] += axes[2, a] * turn[2, b]
        _from_matrix(rel, out[k])
    return out
