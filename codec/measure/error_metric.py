"""The one error number: distance between raw and lossy images of a joint's shell points.

A joint with shell distance d has shell points (d,0,0), (0,d,0), (0,0,d). Its error is the
largest distance between where the raw and the lossy transform put them. Given affine
matrices, that is max_i |d * D[:, i] + D[:, 3]| with D = raw - lossy, so no points are built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from codec.jit import inlined, kernel
from codec.model import affine
from codec.model.affine import compose, qvv_matrix

if TYPE_CHECKING:
    from codec.model.clip import Clip

Array = np.ndarray
# An error summed in another order than a reference's differs from it by rounding alone
# (about 1e-16 of the pose's size per operation); within these margins of a bound the
# reference's own arithmetic decides (`rounding_margin`)
MARGIN_RELATIVE = 1e-6  # of the precision
MARGIN_SIZE = 1e-9  # of the pose's largest object-space coordinate (times the shell)


def shell_error(raw: Array, lossy: Array, distance: Array) -> Array:
    """Error (...) between affine matrices raw and lossy (..., 3, 4) on shells `distance`.

    `distance` broadcasts against the leading axes (e.g. (J,) for (S, J, 3, 4) inputs).
    """
    d = raw - lossy
    lin = d[..., :3] * np.asarray(distance, dtype=d.dtype)[..., None, None]
    pts = lin + d[..., 3:4]  # (..., 3 coords, 3 points)
    return np.sqrt(np.max(np.sum(pts * pts, axis=-2), axis=-1))


def rounding_margin(precision: Array, shell: Array, size: float) -> Array:
    """(J,) how far from a joint's precision an error computed in another order than the
    reference's must lie to be on the same side of it: `size` is the largest object-space
    coordinate of the poses compared."""
    return MARGIN_RELATIVE * precision + MARGIN_SIZE * size * (1.0 + shell)


def shell_reach(m: Array, distance: Array) -> Array:
    """Largest length |m (d e_i)| over the three shell points: how far a shell reaches
    in the parent's space under affine matrices m (..., 3, 4)."""
    lin = m[..., :3] * np.asarray(distance, dtype=m.dtype)[..., None, None]
    pts = lin + m[..., 3:4]
    return np.sqrt(np.max(np.sum(pts * pts, axis=-2), axis=-1))


# --- compiled: the error of a whole clip, pose by pose, without object-space arrays ------


@kernel
def _pose_errors(
    r_rot, r_tr, r_sc, l_rot, l_tr, l_sc, ks, alphas, parents, shell, poses, mats, out
):
    """out (N, J): error of every joint at N poses of the raw clip (r_*) and the lossy one
    (l_*): rotations (S, J, 4), translations and scales (S, J, 3). Pose i blends samples
    ks[i] and ks[i] + 1 by alphas[i] the way ACL does (component lerp of the rotation on the
    shorter arc, normalised); alpha 0 takes sample ks[i] as it is."""
    for i in range(ks.shape[0]):
        k = ks[i]
        alpha = alphas[i]
        k1 = k + 1 if alpha != 0.0 else k
        for side in range(2):
            rot = r_rot if side == 0 else l_rot
            tr = r_tr if side == 0 else l_tr
            sc = r_sc if side == 0 else l_sc
            pose = poses[side]
            for j in range(parents.shape[0]):
                d = 0.0
                for c in range(4):
                    d += rot[k, j, c] * rot[k1, j, c]
                sign = -1.0 if d < 0.0 else 1.0
                n2 = 0.0
                for c in range(4):
                    a = rot[k, j, c]
                    v = a + (rot[k1, j, c] * sign - a) * alpha
                    pose[j, c] = v
                    n2 += v * v
                if alpha != 0.0:
                    n = np.sqrt(n2)
                    for c in range(4):
                        pose[j, c] = pose[j, c] / n if n > 0.0 else (1.0 if c == 3 else 0.0)
                for c in range(3):
                    a = tr[k, j, c]
                    pose[j, 4 + c] = a + (tr[k1, j, c] - a) * alpha
                    a = sc[k, j, c]
                    pose[j, 7 + c] = a + (sc[k1, j, c] - a) * alpha
                p = parents[j]
                qvv_matrix(pose[j], mats[side, j])
                if p >= 0:
                    compose(mats[side, p], mats[side, j], mats[side, j])
        for j in range(parents.shape[0]):
            out[i, j] = affine.shell_error(mats[0, j], mats[1, j], shell[j])


# the affine helpers inlined into the kernels below, which run once per edit over every
# pose and joint between samples: the same functions, without a call per joint
_qvv_matrix = inlined(qvv_matrix)
_compose = inlined(compose)
_shell_error = inlined(affine.shell_error)
_rounding_margin = inlined(rounding_margin)  # one joint's, from its precision and shell


@inlined
def _local_matrix(rot, tr, sc, i, j, pose, out):
    """out (12,): the local matrix of joint j in pose i, through the scratch pose (10,)."""
    for c in range(4):
        pose[c] = rot[i, j, c]
    for c in range(3):
        pose[4 + c] = tr[i, j, c]
        pose[7 + c] = sc[i, j, c]
    _qvv_matrix(pose, out)


@inlined
def _pose_matrices(rot, tr, sc, i, parents, pose, out):
    """out (J, 12): object-space matrices of pose i, by the very operations `_pose_errors`
    applies to a pose at alpha 0."""
    for j in range(parents.shape[0]):
        _local_matrix(rot, tr, sc, i, j, pose, out[j])
        p = parents[j]
        if p >= 0:
            _compose(out[p], out[j], out[j])


@kernel
def _object_matrices(rot, tr, sc, parents, pose, out):
    """out (N, J, 12): object-space matrices of N local poses rot (N, J, 4), tr and sc
    (N, J, 3)."""
    for i in range(rot.shape[0]):
        _pose_matrices(rot, tr, sc, i, parents, pose, out[i])


@kernel
def _errors_against(raw_mats, rot, tr, sc, parents, shell, pose, mats, out):
    """out (N, J): error of every joint of N local poses rot (N, J, 4), tr and sc (N, J, 3)
    against the object-space matrices raw_mats (N, J, 12) of the raw poses (float32 or
    float64 out: the float64 error rounded once, as numpy's astype does)."""
    for i in range(rot.shape[0]):
        for j in range(parents.shape[0]):
            _local_matrix(rot, tr, sc, i, j, pose, mats[j])
            p = parents[j]
            if p >= 0:
                _compose(mats[p], mats[j], mats[j])
            out[i, j] = _shell_error(raw_mats[i, j], mats[j], shell[j])


@kernel
def _ends_within(rot, tr, sc, parents, shell, precision, pose, mats):
    """Whether the last pose of rot (S, J, 4), tr and sc (S, J, 3) is within every joint's
    precision of the first on its shell: 1 clearly (by more than `rounding_margin` at
    every joint), 0 clearly not (over by more than it at some joint), -1 where rounding
    could decide. The error is `errors_against`'s (the first pose raw), the margin's size
    the largest coordinate of either pose's object matrices (J, 12) in mats (2, J, 12)."""
    _pose_matrices(rot, tr, sc, 0, parents, pose, mats[0])
    _pose_matrices(rot, tr, sc, rot.shape[0] - 1, parents, pose, mats[1])
    size = 0.0
    for v in mats.ravel():
        size = max(size, abs(v))
    within = 1
    for j in range(parents.shape[0]):
        err = _shell_error(mats[0, j], mats[1, j], shell[j])
        margin = _rounding_margin(precision[j], shell[j], size)
        if err > precision[j] + margin:
            return 0
        if not err <= precision[j] - margin:  # NaN too: numpy's arithmetic decides
            within = -1
    return within


def ends_within(
    poses: tuple[Array, Array, Array], parents: Array, shell: Array, precision: Array
) -> int:
    """`_ends_within` of local rotations (S, J, 4), translations and scales (S, J, 3),
    float64 C-contiguous (a Clip's), S >= 1: 1, 0 or -1 (rounding could decide)."""
    nj = len(parents)
    return int(
        _ends_within(
            poses[0],
            poses[1],
            poses[2],
            parents,
            shell,
            precision,
            np.empty(10),
            np.empty((2, nj, 12)),
        )
    )


def object_matrices(poses: tuple[Array, Array, Array], parents: Array) -> Array:
    """(N, J, 12) object-space matrices (rows of 3x4) of local rotations (N, J, 4),
    translations and scales (N, J, 3): the raw side of `errors_against`, computed once for
    a clip that is measured again and again."""
    c = np.ascontiguousarray
    rot, tr, sc = (c(a, dtype=np.float64) for a in poses)
    out = np.empty((rot.shape[0], rot.shape[1], 12))
    _object_matrices(rot, tr, sc, np.asarray(parents, np.int64), np.empty(10), out)
    return out


def errors_against(
    raw_matrices: Array,
    lossy: tuple[Array, Array, Array],
    parents: Array,
    shell: Array,
    out: Array | None = None,
) -> Array:
    """(N, J) error of the lossy local poses (rotations (N, J, 4), translations and scales
    (N, J, 3)) against the raw poses' `object_matrices` (N, J, 12): bit for bit
    `array_errors` of the raw and the lossy poses at alpha 0, without posing the raw side
    again. `out`: a C-contiguous float64 or float32 (N, J) array to fill."""
    c = np.ascontiguousarray
    rot, tr, sc = (c(a, dtype=np.float64) for a in lossy)
    n, nj = rot.shape[0], rot.shape[1]
    if raw_matrices.shape != (n, nj, 12) or raw_matrices.dtype != np.float64:
        raise ValueError(f"raw matrices must be float64 of shape {(n, nj, 12)}")
    if out is None:
        out = np.empty((n, nj))
    if out.shape != (n, nj) or not out.flags.c_contiguous:
        raise ValueError(f"out must be C-contiguous of shape {(n, nj)}")
    _errors_against(
        c(raw_matrices),
        rot,
        tr,
        sc,
        np.asarray(parents, np.int64),
        np.asarray(shell, np.float64),
        np.empty(10),
        np.empty((nj, 12)),
        out,
    )
    return out


def pose_errors(raw: Clip, lossy: Clip, ks: Array, alphas: Array) -> Array:
    """(N, J) error of every joint at N poses of two clips: pose i blends samples ks[i] and
    ks[i] + 1 by alphas[i] the way ACL does; alpha 0 takes sample ks[i] itself."""
    return array_errors(
        (raw.rotations, raw.translations, raw.scales),
        (lossy.rotations, lossy.translations, lossy.scales),
        ks,
        alphas,
        raw.skeleton.parents,
        raw.skeleton.shell_distance,
    )


def array_errors(
    raw: tuple[Array, Array, Array],
    lossy: tuple[Array, Array, Array],
    ks: Array,
    alphas: Array,
    parents: Array,
    shell: Array,
) -> Array:
    """`pose_errors` of local rotations (S, J, 4), translations and scales (S, J, 3) given
    as arrays: (N, J) at the poses blending ks, ks + 1 by alphas."""
    num_joints = len(parents)
    out = np.empty((len(ks), num_joints))
    c = np.ascontiguousarray
    _pose_errors(
        c(raw[0], dtype=np.float64),
        c(raw[1], dtype=np.float64),
        c(raw[2], dtype=np.float64),
        c(lossy[0], dtype=np.float64),
        c(lossy[1], dtype=np.float64),
        c(lossy[2], dtype=np.float64),
        np.asarray(ks, np.int64),
        np.asarray(alphas, np.float64),
        np.asarray(parents, np.int64),
        np.asarray(shell, np.float64),
        np.empty((2, num_joints, 10)),
        np.empty((2, num_joints, 12)),
        out,
    )
    return out


def clip_errors(raw: Clip, lossy: Clip, raw_matrices: Array | None = None) -> Array:
    """(S, J) error of every joint on its own shell at every sample (nearest rounding);
    `raw_matrices` (S, J, 12): the raw clip's `object_matrices` at its samples when the
    caller keeps them (the same errors, bit for bit, without posing the raw clip again)."""
    s = raw.num_samples
    if raw_matrices is not None:
        sk = raw.skeleton
        lossy_poses = (lossy.rotations, lossy.translations, lossy.scales)
        return errors_against(raw_matrices, lossy_poses, sk.parents, sk.shell_distance)
    return pose_errors(raw, lossy, np.arange(s), np.zeros(s))


def between_keys(num_samples: int, supersample: int) -> tuple[Array, Array]:
    """Sample ks (N,) and alphas (N,) of `supersample` poses per sample interval, ending on
    the last sample: where the error between samples is measured."""
    if supersample <= 0 or num_samples < 2:
        return np.zeros(0, np.int64), np.zeros(0)
    frac = np.arange(supersample) / supersample
    k = np.append(np.repeat(np.arange(num_samples - 1), supersample), num_samples - 1)
    alpha = np.append(np.tile(frac, num_samples - 1), 0.0)
    return k, alpha
