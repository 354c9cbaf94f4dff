"""Many poses blended from a few stored ones, compiled: `codec.model.sampling.blend` (nlerp)
to the bit, without its (N, J, 4) temporaries.

A decoder sampling N times between S stored samples (supersampled errors: N = 4 S) spends
most of its time in numpy's temporaries (indexing, dot, sign, lerp, norm, divide: a dozen
(N, J, 4) arrays). This kernel does the same float64 operations in the same order (sums of
four products left to right, as numpy's reduction over a last axis of four does), one
quaternion at a time, and writes straight into the caller's arrays.
"""

from __future__ import annotations

import math

import numpy as np

from codec.jit import kernel

Array = np.ndarray


@kernel
def _blend(rot, tr, sc, first, second, alpha, exact_at_zero, out_rot, out_tr, out_sc):
    """out_*[i] = the stored poses rot/tr/sc[first[i]] and [second[i]] (R, J, 4|3) blended by
    alpha[i]: nlerp on the shorter arc (a zero quaternion becomes the identity, as
    quat.normalize does), translations and scales lerp. With exact_at_zero, alpha 0 copies
    the first pose as it is (no renormalisation)."""
    for i in range(first.shape[0]):
        a = first[i]
        b = second[i]
        t = alpha[i]
        copy = exact_at_zero and t == 0.0
        for j in range(rot.shape[1]):
            if copy:
                for c in range(4):
                    out_rot[i, j, c] = rot[a, j, c]
            else:
                d = 0.0
                for c in range(4):
                    d += rot[a, j, c] * rot[b, j, c]
                sign = -1.0 if d < 0.0 else 1.0
                n2 = 0.0
                for c in range(4):
                    p = rot[a, j, c]
                    q = p + (rot[b, j, c] * sign - p) * t
                    out_rot[i, j, c] = q
                    n2 += q * q
                n = math.sqrt(n2)
                if n > 0.0:
                    for c in range(4):
                        out_rot[i, j, c] = out_rot[i, j, c] / n
                else:  # zero or not a number: the identity, as quat.normalize gives
                    for c in range(3):
                        out_rot[i, j, c] = 0.0
                    out_rot[i, j, 3] = 1.0
            for c in range(3):
                p = tr[a, j, c]
                out_tr[i, j, c] = p + (tr[b, j, c] - p) * t
                p = sc[a, j, c]
                out_sc[i, j, c] = p + (sc[b, j, c] - p) * t


def blend_rows(
    rows: tuple[Array, Array, Array],
    first: Array,
    second: Array,
    alpha: Array,
    out: tuple[Array, Array, Array] | None = None,
    exact_at_zero: bool = False,
) -> tuple[Array, Array, Array]:
    """Rotations (N, J, 4), translations and scales (N, J, 3) float64: rows first (N,) and
    second (N,) of the stored poses `rows` (R, J, 4|3) blended by alpha (N,), bit for bit
    what `sampling.blend` (nlerp) gives on the same rows. `out`: C-contiguous float64 arrays
    to fill (e.g. slices of a larger result); `exact_at_zero`: alpha 0 gives the first row
    itself, as `sampling.blend_samples` does."""
    c = np.ascontiguousarray
    rot, tr, sc = (c(a, dtype=np.float64) for a in rows)
    n, nj = len(first), rot.shape[1]
    if out is None:
        out = (np.empty((n, nj, 4)), np.empty((n, nj, 3)), np.empty((n, nj, 3)))
    for o, width in zip(out, (4, 3, 3), strict=True):
        if o.shape != (n, nj, width) or o.dtype != np.float64 or not o.flags.c_contiguous:
            raise ValueError(f"out must be C-contiguous float64 of shape {(n, nj, width)}")
    _blend(
        rot,
        tr,
        sc,
        c(first, dtype=np.int64),
        c(second, dtype=np.int64),
        c(alpha, dtype=np.float64),
        exact_at_zero,
        *out,
    )
    return out
