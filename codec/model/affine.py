"""3x4 affine maths compiled for the codec's inner loops.

A matrix is 12 float64 in a row, the rows of [R * diag(s) | t]: the memory layout of a
(..., 3, 4) numpy array, so (S, J, 3, 4) arrays reshape to (S, J, 12) for free. A QVV
transform is 10 float64 in a row: rotation x, y, z, w, translation, scale (QVV_ROT,
QVV_TR, QVV_SC are the offsets). Kernels take 1-D views and write into caller-owned
buffers, so inner loops allocate nothing.
"""

from __future__ import annotations

import math

import numpy as np

from codec.jit import helper

QVV_ROT, QVV_TR, QVV_SC, QVV_SIZE = 0, 4, 7, 10


def pack_qvv(rotations: np.ndarray, translations: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """(..., 10) float64 QVV rows from (..., 4), (..., 3), (..., 3) arrays."""
    return np.ascontiguousarray(
        np.concatenate((rotations, translations, scales), axis=-1), dtype=np.float64
    )


@helper
def qvv_matrix(v, out):
    """out (12,) = the affine matrix of the QVV row v (10,)."""
    x, y, z, w = v[0], v[1], v[2], v[3]
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    s0, s1, s2 = v[7], v[8], v[9]
    out[0] = (1.0 - 2.0 * (yy + zz)) * s0
    out[1] = 2.0 * (xy - wz) * s1
    out[2] = 2.0 * (xz + wy) * s2
    out[3] = v[4]
    out[4] = 2.0 * (xy + wz) * s0
    out[5] = (1.0 - 2.0 * (xx + zz)) * s1
    out[6] = 2.0 * (yz - wx) * s2
    out[7] = v[5]
    out[8] = 2.0 * (xz - wy) * s0
    out[9] = 2.0 * (yz + wx) * s1
    out[10] = (1.0 - 2.0 * (xx + yy)) * s2
    out[11] = v[6]


@helper
def compose(a, b, out):
    """out = a @ b (b first, then a); out may be a or b."""
    b0, b1, b2, b3 = b[0], b[1], b[2], b[3]
    b4, b5, b6, b7 = b[4], b[5], b[6], b[7]
    b8, b9, b10, b11 = b[8], b[9], b[10], b[11]
    for r in range(3):
        a0, a1, a2, a3 = a[4 * r], a[4 * r + 1], a[4 * r + 2], a[4 * r + 3]
        out[4 * r] = a0 * b0 + a1 * b4 + a2 * b8
        out[4 * r + 1] = a0 * b1 + a1 * b5 + a2 * b9
        out[4 * r + 2] = a0 * b2 + a1 * b6 + a2 * b10
        out[4 * r + 3] = a0 * b3 + a1 * b7 + a2 * b11 + a3


@helper
def shell_error(raw, lossy, d):
    """Largest distance between the images of the shell points (d,0,0), (0,d,0), (0,0,d)."""
    worst = 0.0
    e0 = raw[3] - lossy[3]
    e1 = raw[7] - lossy[7]
    e2 = raw[11] - lossy[11]
    for i in range(3):
        x = (raw[i] - lossy[i]) * d + e0
        y = (raw[4 + i] - lossy[4 + i]) * d + e1
        z = (raw[8 + i] - lossy[8 + i]) * d + e2
        v = x * x + y * y + z * z
        if v > worst:
            worst = v
    return math.sqrt(worst)
