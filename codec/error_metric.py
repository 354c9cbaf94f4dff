"""The one error number: distance between raw and lossy images of a joint's shell points.

A joint with shell distance d has shell points (d,0,0), (0,d,0), (0,0,d). Its error is the
largest distance between where the raw and the lossy transform put them. Given affine
matrices, that is max_i |d * D[:, i] + D[:, 3]| with D = raw - lossy, so no points are built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from codec import affine
from codec.affine import compose, pack_qvv, qvv_matrix
from codec.jit import kernel

if TYPE_CHECKING:
    from codec.clip import Clip

Array = np.ndarray


def shell_error(raw: Array, lossy: Array, distance: Array) -> Array:
    """Error (...) between affine matrices raw and lossy (..., 3, 4) on shells `distance`.

    `distance` broadcasts against the leading axes (e.g. (J,) for (S, J, 3, 4) inputs).
    """
    d = raw - lossy
    lin = d[..., :3] * np.asarray(distance, dtype=d.dtype)[..., None, None]
    pts = lin + d[..., 3:4]  # (..., 3 coords, 3 points)
    return np.sqrt(np.max(np.sum(pts * pts, axis=-2), axis=-1))


def shell_reach(m: Array, distance: Array) -> Array:
    """Largest length |m (d e_i)| over the three shell points: how far a shell reaches
    in the parent's space under affine matrices m (..., 3, 4)."""
    lin = m[..., :3] * np.asarray(distance, dtype=m.dtype)[..., None, None]
    pts = lin + m[..., 3:4]
    return np.sqrt(np.max(np.sum(pts * pts, axis=-2), axis=-1))


# --- compiled: the error of a whole clip, pose by pose, without object-space arrays ------


@kernel
def _pose_errors(raw, lossy, parents, shell, ks, alphas, poses, mats, out):
    """out (N, J): error of every joint at N poses, pose i blending samples ks[i] and
    ks[i] + 1 of both clips (S, J, 10) by alphas[i] the way ACL does (component lerp of the
    rotation on the shorter arc, normalised); alpha 0 takes sample ks[i] as it is."""
    for i in range(ks.shape[0]):
        k = ks[i]
        alpha = alphas[i]
        for side in range(2):
            clip = raw if side == 0 else lossy
            pose = poses[side]
            for j in range(parents.shape[0]):
                if alpha == 0.0:
                    for c in range(10):
                        pose[j, c] = clip[k, j, c]
                else:
                    d = 0.0
                    for c in range(4):
                        d += clip[k, j, c] * clip[k + 1, j, c]
                    sign = -1.0 if d < 0.0 else 1.0
                    n2 = 0.0
                    for c in range(4):
                        v = clip[k, j, c] + (clip[k + 1, j, c] * sign - clip[k, j, c]) * alpha
                        pose[j, c] = v
                        n2 += v * v
                    n = np.sqrt(n2)
                    for c in range(4):
                        pose[j, c] = pose[j, c] / n if n > 0.0 else (1.0 if c == 3 else 0.0)
                    for c in range(4, 10):
                        pose[j, c] = clip[k, j, c] + (clip[k + 1, j, c] - clip[k, j, c]) * alpha
                p = parents[j]
                qvv_matrix(pose[j], mats[side, j])
                if p >= 0:
                    compose(mats[side, p], mats[side, j], mats[side, j])
        for j in range(parents.shape[0]):
            out[i, j] = affine.shell_error(mats[0, j], mats[1, j], shell[j])


def _poses(raw: Clip, lossy: Clip, ks: Array, alphas: Array) -> Array:
    num_joints = raw.num_joints
    out = np.empty((len(ks), num_joints))
    _pose_errors(
        pack_qvv(raw.rotations, raw.translations, raw.scales),
        pack_qvv(lossy.rotations, lossy.translations, lossy.scales),
        np.asarray(raw.skeleton.parents, np.int64),
        np.asarray(raw.skeleton.shell_distance, np.float64),
        ks,
        alphas,
        np.empty((2, num_joints, 10)),
        np.empty((2, num_joints, 12)),
        out,
    )
    return out


def clip_errors(raw: Clip, lossy: Clip) -> Array:
    """(S, J) error of every joint on its own shell at every sample (nearest rounding)."""
    return _poses(raw, lossy, np.arange(raw.num_samples), np.zeros(raw.num_samples))


def between_errors(raw: Clip, lossy: Clip, supersample: int) -> tuple[Array, Array]:
    """Times (N,) and errors (N, J) at `supersample` times per sample interval, rounding
    none (ACL's nlerp blend of both clips), ending on the last sample."""
    S = raw.num_samples
    if supersample <= 0 or S < 2:
        return np.zeros(0), np.zeros((0, raw.num_joints))
    frac = np.arange(supersample) / supersample
    k = np.append(np.repeat(np.arange(S - 1), supersample), S - 1)
    alpha = np.append(np.tile(frac, S - 1), 0.0)
    return (k + alpha) / raw.sample_rate, _poses(raw, lossy, k, alpha)
