"""ACL 2.1's own error measure, computed as `acl_compressor` computes it, so our numbers and
ACL's stats compare like with like (number for number, and worst joint for worst joint).

Shellscope's measure (codec.measure.error_metric) composes affine matrices in float64 and
looks at three shell points. ACL's `qvvf_transform_error_metric` composes QVV transforms in
float32: object rotation = normalise(parent rotation x local rotation), object translation
= parent rotation applied to (local translation x parent scale) plus the parent's
translation, scales multiplied; and:

- `max_error` / `worst_track` / `worst_time` always use the scaled form and three shell
  points (d,0,0), (0,d,0), (0,0,d);
- the per-sample `error_per_frame_and_bone` (`-stat_exhaustive`) uses, when the clip has no
  scale, the form without scale and two points, (d,0,0) and (0,d,0).

Both sides are float32 and the errors are float32 differences of coordinates: at 250 cm
float32 steps by 1.5e-5 cm, so ACL's number carries that much rounding. Every operation
here is ACL's (its math library's SSE2 code, term by term, in its order), so the rounding
is the same, down to the reciprocal square root that normalises a rotation, which starts
from the processor's own estimate (codec.measure.rsqrt). Without scale, or with uniform
positive scale, the QVV and affine compositions agree; with non-uniform scale a QVV cannot
hold the shear a matrix product makes, and ACL's number is the QVV one. Where a joint's or
its parent's scale is negative, ACL's math library (rtm's `qvv_mul`) composes the two as 3x4
matrices instead, takes the scale out of the product's axes, turns the mirrored axes back
and reads the rotation off the matrix; so do we (`mirrored`), else a mirrored joint's
children come out up to 1e-3 cm off ACL's numbers.
"""

from __future__ import annotations

import numpy as np

from codec.measure import rsqrt

Array = np.ndarray
F32 = np.float32
HALF = F32(0.5)


def quat_mul(lhs: Array, rhs: Array) -> Array:
    """(..., 4) float32 rotation by `lhs` then by `rhs` (the Hamilton product rhs lhs), in
    the order ACL's math library sums the terms."""
    lx, ly, lz, lw = (lhs[..., i] for i in range(4))
    rx, ry, rz, rw = (rhs[..., i] for i in range(4))
    return np.stack(
        (
            (rw * lx + rx * lw) + (ry * lz - rz * ly),
            (rw * ly - rx * lz) + (ry * lw + rz * lx),
            (rw * lz + rx * ly) + (rz * lw - ry * lx),
            (rw * lw - rx * lx) - (ry * ly + rz * lz),
        ),
        axis=-1,
    )


def rotate(v: Array, r: Array) -> Array:
    """(..., 3) float32 vectors `v` rotated by unit quaternions `r` (..., 4): ACL's
    conjugate product, term by term."""
    vx, vy, vz = (v[..., i] for i in range(3))
    rx, ry, rz, rw = (r[..., i] for i in range(4))
    tx = (vx * rw - vy * rz) + vz * ry
    ty = (vx * rz + vy * rw) - vz * rx
    tz = (vy * rx - vx * ry) + vz * rw
    tw = (vx * rx + vy * ry) + vz * rz
    return np.stack(
        (
            (rw * tx + rx * tw) + (ry * tz - rz * ty),
            (rw * ty - rx * tz) + (ry * tw + rz * tx),
            (rw * tz + rx * ty) + (rz * tw - ry * tx),
        ),
        axis=-1,
    )


def normalize(q: Array) -> Array:
    """(..., 4) float32 quaternions normalised as ACL's math library does: the squared
    length summed (x x + z z) + (y y + w w), a reciprocal square root refined by two Newton
    steps, then a multiply."""
    sq = q * q
    dot = (sq[..., 0] + sq[..., 2]) + (sq[..., 1] + sq[..., 3])
    x = rsqrt.estimate(dot)
    h = dot * HALF
    for _ in range(2):
        x = x * (HALF - h * (x * x)) + x
    return q * x[..., None]


def normalize_deterministic(q: Array) -> Array:
    """(..., 4) float32 quaternions normalised the way ACL normalises what it reads (default
    values, and the rotations of a `clip` SJSON file): the squared length summed
    (x x + y y) + (z z + w w) in float32, its square root taken in float64 and rounded to
    float32, then a division."""
    q = np.asarray(q, dtype=F32)
    sq = q * q
    dot = (sq[..., 0] + sq[..., 1]) + (sq[..., 2] + sq[..., 3])
    return q / np.sqrt(dot.astype(np.float64)).astype(F32)[..., None]


def sample_times(num_samples: int, sample_rate: float) -> Array:
    """(S,) float32 the times ACL measures a clip of S samples at: min(i / rate, duration),
    in float32 as `calculate_compression_error` computes them."""
    rate = F32(sample_rate)
    duration = F32(num_samples - 1) / rate if num_samples > 1 else F32(0.0)
    return np.minimum(np.arange(num_samples, dtype=F32) / rate, duration)


def raw_samples(poses: Array, sample_rate: float, times: Array, rounding: str) -> Array:
    """(N, J, 10) float32 a raw clip's local poses (S, J, 10) sampled at float32 times (N,)
    as ACL samples its raw tracks (clamped): keyframes from `t * rate`, alpha rounded
    ('nearest': floor(alpha + 0.5); 'none': kept), rotations lerped on the shorter arc and
    normalised, translations and scales lerped, all in float32."""
    poses = np.asarray(poses, dtype=F32)
    S = poses.shape[0]
    index = np.asarray(times, dtype=F32) * F32(sample_rate)
    k0 = np.minimum(index.astype(np.int64), S - 1)
    k1 = np.minimum(k0 + 1, S - 1)
    alpha = index - k0.astype(F32)
    if rounding == "nearest":
        alpha = np.floor(alpha + HALF)
    elif rounding != "none":
        raise ValueError(f"ACL measures with rounding 'nearest' or 'none', not {rounding!r}")
    a, b = poses[k0], poses[k1]
    al = alpha[:, None, None]
    rot_a, rot_b = a[..., :4], b[..., :4]
    dot = np.sum(rot_a * rot_b, axis=-1, dtype=F32)
    rot_b = np.where(np.signbit(dot)[..., None], -rot_b, rot_b)
    out = np.empty_like(a)
    out[..., :4] = normalize((rot_a - al * rot_a) + al * rot_b)
    out[..., 4:] = b[..., 4:] * al + (a[..., 4:] - a[..., 4:] * al)
    return out


def object_qvv(rot: Array, tr: Array, sc: Array, parents: Array, scale: bool = True) -> Array:
    """(N, J, 10) float32 object-space QVV transforms (rotation xyzw, translation, scale) of
    local transforms rot (N, J, 4), tr and sc (N, J, 3), composed as ACL composes them
    (`scale` False: ACL's composition without scale). Parents come before children."""
    local = np.concatenate((rot, tr, sc), axis=-1).astype(F32)
    out = np.empty_like(local)
    for j, p in enumerate(np.asarray(parents).tolist()):
        if p < 0:
            out[:, j] = local[:, j]
            continue
        lr, lt, ls = local[:, j, :4], local[:, j, 4:7], local[:, j, 7:]
        pr, pt, ps = out[:, p, :4], out[:, p, 4:7], out[:, p, 7:]
        out[:, j, :4] = normalize(quat_mul(lr, pr))
        out[:, j, 4:7] = rotate(lt * ps if scale else lt, pr) + pt
        out[:, j, 7:] = ls * ps if scale else ls
        flip = (np.minimum(ls, ps) < 0).any(axis=-1) if scale else np.zeros(len(out), bool)
        if flip.any():  # a negative scale: ACL composes these samples through matrices
            turned, moved = mirrored(local[flip, j], out[flip, p])
            out[flip, j, :4], out[flip, j, 4:7] = normalize(turned), moved
    return out


def qvv_matrix(qvv: Array) -> Array:
    """(..., 4, 3) float32 3x4 matrices (rows: x, y, z axes, translation) of QVV transforms
    (..., 10), term by term as rtm's `matrix_from_qvv`."""
    x, y, z, w = (qvv[..., i] for i in range(4))
    x2, y2, z2 = x + x, y + y, z + z
    xx, xy, xz, yy, yz, zz = x * x2, x * y2, x * z2, y * y2, y * z2, z * z2
    wx, wy, wz = w * x2, w * y2, w * z2
    one, sc = F32(1.0), qvv[..., 7:, None]
    axes = np.stack(
        (
            np.stack((one - (yy + zz), xy + wz, xz - wy), axis=-1),
            np.stack((xy - wz, one - (xx + zz), yz + wx), axis=-1),
            np.stack((xz + wy, yz - wx, one - (xx + yy)), axis=-1),
        ),
        axis=-2,
    )
    return np.concatenate((axes * sc, qvv[..., None, 4:7]), axis=-2)


def quat_from_axes(m: Array) -> Array:
    """(..., 4) float32 rotations of 3x3 rotation matrices (..., 3, 3) (rows are axes), as
    rtm's `quat_from_matrix`: identity when an axis is (near) zero; from the trace when it
    is positive, else from the largest diagonal term; normalised."""
    d = np.diagonal(m, axis1=-2, axis2=-1)
    flat = m.reshape(*m.shape[:-2], 9)

    def at(row: Array, col: Array) -> Array:
        return np.take_along_axis(flat, (row * 3 + col)[..., None], axis=-1)[..., 0]

    one = F32(1.0)
    best = np.where(d[..., 1] > d[..., 0], 1, 0)
    best = np.where(d[..., 2] > np.take_along_axis(d, best[..., None], -1)[..., 0], 2, best)
    nxt = (best + 1) % 3
    last = (nxt + 1) % 3
    with np.errstate(invalid="ignore", divide="ignore"):  # each branch is taken where valid
        inv = one / np.sqrt(((one + at(best, best)) - at(nxt, nxt)) - at(last, last))
        half = inv * HALF
        diag = np.empty((*m.shape[:-2], 4), dtype=F32)
        for axis, value in (
            (best, (one / inv) * HALF),
            (nxt, half * (at(best, nxt) + at(nxt, best))),
            (last, half * (at(best, last) + at(last, best))),
        ):
            np.put_along_axis(diag, axis[..., None], value[..., None], axis=-1)
        diag[..., 3] = half * (at(nxt, last) - at(last, nxt))
        trace = (d[..., 0] + d[..., 1]) + d[..., 2]
        inv = one / np.sqrt(trace + one)
        half = inv * HALF
        from_trace = np.stack(
            (
                (m[..., 1, 2] - m[..., 2, 1]) * half,
                (m[..., 2, 0] - m[..., 0, 2]) * half,
                (m[..., 0, 1] - m[..., 1, 0]) * half,
                (one / inv) * HALF,
            ),
            axis=-1,
        )
        q = normalize(np.where((trace > 0)[..., None], from_trace, diag))
    zero = (np.abs(m) <= F32(1e-5)).all(axis=-1).any(axis=-1)
    return np.where(zero[..., None], np.array([0, 0, 0, 1], dtype=F32), q)


def mirrored(local: Array, parent: Array) -> tuple[Array, Array]:
    """(N, 4) rotation (before the object pose's normalisation) and (N, 3) translation of
    local QVV transforms (N, 10) composed with their parents' object transforms (N, 10) when
    a scale is negative, as rtm's `qvv_mul` does then: the 3x4 matrix product, each axis
    normalised (kept when shorter than 1e-4), the axes whose combined scale is negative (by
    its sign bit) turned back, the rotation read off that matrix."""
    a, b = qvv_matrix(local), qvv_matrix(parent)
    terms = a[..., :, :, None] * b[..., None, :3, :]  # (N, 4, 3, 3): a[i, k] b[k]
    prod = (terms[..., 0, :] + terms[..., 1, :]) + terms[..., 2, :]
    axes, tr = prod[..., :3, :], b[..., 3, :] + prod[..., 3, :]
    sq = axes * axes
    len_sq = (sq[..., 0] + sq[..., 1]) + sq[..., 2]
    with np.errstate(divide="ignore"):
        inv = F32(1.0) / np.sqrt(len_sq)
    axes = np.where((len_sq >= F32(1e-8))[..., None], axes * inv[..., None], axes)
    sign = np.signbit(local[..., 7:] * parent[..., 7:])
    axes = np.where(sign[..., None], -axes, axes)
    return quat_from_axes(axes), tr


def shell_points(qvv: Array, shell: Array, points: int, scale: bool) -> Array:
    """(N, J, points, 3) float32 where QVV transforms (N, J, 10) put the first `points` of
    each joint's shell points (d,0,0), (0,d,0), (0,0,d), shell distances d (J,)."""
    axes = (np.eye(3, dtype=F32)[:points] * np.asarray(shell, dtype=F32)[:, None, None])[None]
    q = qvv[:, :, None, :]
    local = q[..., 7:] * axes if scale else np.broadcast_to(axes, (*qvv.shape[:2], points, 3))
    return rotate(local, q[..., :4]) + q[..., 4:7]


def acl_errors(
    raw: Array,
    lossy: Array,
    parents: Array,
    shell: Array,
    scale: bool = True,
    points: int = 3,
) -> Array:
    """(N, J) ACL's error of every joint between raw and lossy local poses (N, J, 10)
    (rotation xyzw, translation, scale; as ACL samples them: codec.measure.acl_metric's
    `raw_samples`, the decoder's float32 output): the largest float32 distance between
    their images of each joint's first `points` shell points, composed with or without
    `scale` (ACL's `calculate_error` / `calculate_error_no_scale`)."""
    a = shell_points(
        object_qvv(raw[..., :4], raw[..., 4:7], raw[..., 7:], parents, scale), shell, points, scale
    )
    b = shell_points(
        object_qvv(lossy[..., :4], lossy[..., 4:7], lossy[..., 7:], parents, scale),
        shell,
        points,
        scale,
    )
    d = a - b
    sq = d * d
    return np.sqrt((sq[..., 0] + sq[..., 1]) + sq[..., 2]).max(axis=-1).astype(np.float64)


CHUNK = 2048  # samples measured at once: bounds the (N, J, 3, 3) temporaries


def acl_max_error(
    raw: Array,
    lossy_at: object,
    sample_rate: float,
    parents: Array,
    shell: Array,
    stripped: bool = False,
) -> tuple[float, int, float]:
    """ACL's `max_error`, `worst_track` and `worst_time` of a clip: raw local poses (S, J,
    10), `lossy_at(times, rounding)` the decoder's float32 poses (N, J, 10) at float32 times;
    every sample time, rounding nearest (none when keyframes were stripped, as ACL does),
    three shell points with scale. The first of equal errors wins, samples before joints."""
    S = raw.shape[0]
    times = sample_times(S, sample_rate)
    rounding = "none" if stripped else "nearest"
    best, where = -1.0, (0, 0)
    for lo in range(0, S, CHUNK):
        t = times[lo : lo + CHUNK]
        e = acl_errors(
            raw_samples(raw, sample_rate, t, rounding),
            lossy_at(t, rounding),  # type: ignore[operator]
            parents,
            shell,
        )
        i = int(np.argmax(e))
        if e.flat[i] > best:
            best, where = float(e.flat[i]), (lo + i // e.shape[1], i % e.shape[1])
    return best, where[1], float(times[where[0]])
