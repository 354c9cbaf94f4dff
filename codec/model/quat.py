"""Batched quaternion maths. Quaternions are (..., 4) arrays stored x, y, z, w.

Every function broadcasts over leading axes, so a whole clip `(S, J, 4)` goes through one
call; nothing here loops in Python.
"""

from __future__ import annotations

import numpy as np

Array = np.ndarray


def identity(shape: tuple[int, ...] = (), dtype: type = np.float64) -> Array:
    """Identity rotations of shape `shape + (4,)`."""
    q = np.zeros((*shape, 4), dtype=dtype)
    q[..., 3] = 1.0
    return q


def mul(a: Array, b: Array) -> Array:
    """Hamilton product `a * b`: rotating by the result applies `b` first, then `a`."""
    ax, ay, az, aw = np.moveaxis(np.asarray(a), -1, 0)
    bx, by, bz, bw = np.moveaxis(np.asarray(b), -1, 0)
    return np.stack(
        (
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ),
        axis=-1,
    )


def conjugate(q: Array) -> Array:
    """(-x, -y, -z, w): the inverse of a unit quaternion."""
    out = np.array(q, dtype=np.result_type(q, np.float32), copy=True)
    out[..., :3] *= -1.0
    return out


def inverse(q: Array) -> Array:
    """Inverse that also holds for non-unit quaternions (conjugate over squared norm)."""
    q = np.asarray(q)
    return conjugate(q) / np.sum(q * q, axis=-1, keepdims=True)


def normalize(q: Array) -> Array:
    """Unit-length copy; a zero quaternion becomes the identity rather than NaN."""
    q = np.asarray(q, dtype=np.result_type(q, np.float32))
    n = np.sqrt(np.sum(q * q, axis=-1, keepdims=True))
    safe = n > 0.0
    out = np.where(safe, q / np.where(safe, n, 1.0), 0.0)
    out[..., 3] = np.where(safe[..., 0], out[..., 3], 1.0)
    return out


def rotate(q: Array, v: Array) -> Array:
    """Rotate vectors `v (..., 3)` by unit quaternions `q (..., 4)`.

    Uses v' = v + 2w (u x v) + 2 u x (u x v), which is exact for unit q and cheaper than
    building matrices.
    """
    q = np.asarray(q)
    u = q[..., :3]
    w = q[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def to_matrix(q: Array) -> Array:
    """Rotation matrices `(..., 3, 3)` of unit quaternions `(..., 4)`."""
    x, y, z, w = np.moveaxis(np.asarray(q), -1, 0)
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    m = np.stack(
        (
            1 - 2 * (yy + zz),
            2 * (xy - wz),
            2 * (xz + wy),
            2 * (xy + wz),
            1 - 2 * (xx + zz),
            2 * (yz - wx),
            2 * (xz - wy),
            2 * (yz + wx),
            1 - 2 * (xx + yy),
        ),
        axis=-1,
    )
    return m.reshape(*m.shape[:-1], 3, 3)


def from_matrix(m: Array) -> Array:
    """Unit quaternions `(..., 4)` from rotation matrices `(..., 3, 3)` (Shepperd's method)."""
    m = np.asarray(m, dtype=np.float64)
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    trace = m00 + m11 + m22
    cand = np.stack(
        (
            np.stack(
                (
                    m[..., 2, 1] - m[..., 1, 2],
                    m[..., 0, 2] - m[..., 2, 0],
                    m[..., 1, 0] - m[..., 0, 1],
                    1 + trace,
                ),
                -1,
            ),
            np.stack(
                (
                    1 + m00 - m11 - m22,
                    m[..., 0, 1] + m[..., 1, 0],
                    m[..., 0, 2] + m[..., 2, 0],
                    m[..., 2, 1] - m[..., 1, 2],
                ),
                -1,
            ),
            np.stack(
                (
                    m[..., 0, 1] + m[..., 1, 0],
                    1 - m00 + m11 - m22,
                    m[..., 1, 2] + m[..., 2, 1],
                    m[..., 0, 2] - m[..., 2, 0],
                ),
                -1,
            ),
            np.stack(
                (
                    m[..., 0, 2] + m[..., 2, 0],
                    m[..., 1, 2] + m[..., 2, 1],
                    1 - m00 - m11 + m22,
                    m[..., 1, 0] - m[..., 0, 1],
                ),
                -1,
            ),
        ),
        axis=-2,
    )
    pick = np.argmax(np.stack((trace, m00, m11, m22), -1), axis=-1)
    q = np.take_along_axis(cand, pick[..., None, None], axis=-2)[..., 0, :]
    q = normalize(q)
    return np.where(q[..., 3:4] < 0, -q, q)


def from_axis_angle(axis: Array, angle: Array) -> Array:
    """Quaternions rotating by `angle (...)` radians about unit `axis (..., 3)`."""
    angle = np.asarray(angle, dtype=np.float64)
    half = 0.5 * angle
    s = np.sin(half)[..., None]
    axis = np.broadcast_to(np.asarray(axis, dtype=np.float64), (*angle.shape, 3))
    return np.concatenate((axis * s, np.cos(half)[..., None]), axis=-1)


def dot(a: Array, b: Array) -> Array:
    """Four-component dot product over the last axis."""
    return np.sum(np.asarray(a) * np.asarray(b), axis=-1)


def nlerp(a: Array, b: Array, alpha: Array) -> Array:
    """ACL's rotation interpolation: component lerp on the shorter arc, then normalise.

    `alpha` broadcasts against the leading axes of `a` and `b` (give it a trailing axis of 1
    or a shape without the component axis, both work).
    """
    a = np.asarray(a)
    b = np.asarray(b)
    alpha = np.asarray(alpha, dtype=a.dtype)
    if alpha.ndim and alpha.shape[-1] != 1:
        alpha = alpha[..., None]
    elif alpha.ndim == 0:
        alpha = alpha.reshape(1)
    sign = np.where(dot(a, b)[..., None] < 0.0, -1.0, 1.0).astype(a.dtype)
    return normalize(a + (b * sign - a) * alpha)


def slerp(a: Array, b: Array, alpha: Array) -> Array:
    """Spherical interpolation on the shorter arc (constant angular speed)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    alpha = np.asarray(alpha, dtype=np.float64)
    if alpha.ndim and alpha.shape[-1] != 1:
        alpha = alpha[..., None]
    elif alpha.ndim == 0:
        alpha = alpha.reshape(1)
    d = dot(a, b)[..., None]
    b = np.where(d < 0.0, -b, b)
    d = np.clip(np.abs(d), -1.0, 1.0)
    theta = np.arccos(d)
    sin_theta = np.sin(theta)
    small = sin_theta < 1e-6
    safe = np.where(small, 1.0, sin_theta)
    wa = np.where(small, 1.0 - alpha, np.sin((1.0 - alpha) * theta) / safe)
    wb = np.where(small, alpha, np.sin(alpha * theta) / safe)
    return normalize(wa * a + wb * b)


def ensure_continuity(q: Array, axis: int = 0) -> Array:
    """Flip signs along `axis` so consecutive quaternions lie on the same hemisphere."""
    q = np.array(q, copy=True)
    qm = np.moveaxis(q, axis, 0)
    d = np.sum(qm[1:] * qm[:-1], axis=-1)
    flips = np.cumsum(d < 0.0, axis=0) % 2
    qm[1:] *= np.where(flips[..., None] == 1, -1.0, 1.0)
    return q


def to_euler(q: Array, order: str = "XYZ") -> Array:
    """Intrinsic Euler angles (..., 3) in radians of unit quaternions (..., 4) xyzw, for a
    Tait-Bryan `order` such as "ZXY": R = R_Z(a0) R_X(a1) R_Y(a2), the first axis outermost
    (BVH's convention). The middle angle is in [-pi/2, pi/2]; at +-pi/2 (gimbal lock) the
    split between the outer two is arbitrary but the rotation is exact."""
    order = order.upper()
    if sorted(order) != ["X", "Y", "Z"]:
        raise ValueError(f"Euler order {order!r} is not a permutation of XYZ")
    i, j, k = ("XYZ".index(c) for c in order)
    e = 1.0 if (j - i) % 3 == 1 else -1.0  # cyclic orders (XYZ, YZX, ZXY) are even
    m = to_matrix(q)
    b = np.arcsin(np.clip(e * m[..., i, k], -1.0, 1.0))
    a = np.arctan2(-e * m[..., j, k], m[..., k, k])
    c = np.arctan2(-e * m[..., i, j], m[..., i, i])
    return np.stack([a, b, c], axis=-1)
