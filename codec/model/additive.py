"""Additive clips: a pose stored relative to a base pose, and the pose a game sees.

ACL's three additive formats (its SJSON `additive_format`), with `base` and `add` local
transforms (rotation quaternion, translation, scale) and `*` the Hamilton product (the right
factor applied first):

    relative   rotation = base.r * add.r, translation = base.r (add.t x base.s) + base.t,
               scale = add.s x base.s          (the additive's transform, then the base's)
    additive0  rotation = base.r * add.r, translation = add.t + base.t, scale = add.s x base.s
    additive1  as additive0 but scale = (1 + add.s) x base.s

(x: per component). The additive that leaves the base unchanged (`identity`) is the identity
rotation, zero translation and unit scale (zero for additive1): what a default sub-track of an
additive clip holds. `extract` is `apply`'s exact inverse, so an additive clip read from a file
round-trips to within float rounding.

The base clip plays over the additive's duration: at the additive's time t the base is sampled
at t / duration x base duration (ACL's rule; a single-sample base, as a bind pose, at 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codec.model import quat

Array = np.ndarray
Pose3 = tuple[Array, Array, Array]

FORMATS = ("relative", "additive0", "additive1")


def identity(fmt: str, num_joints: int) -> Pose3:
    """The additive that changes nothing: rotations (J, 4), translations, scales (J, 3)."""
    _check(fmt)
    scale = 0.0 if fmt == "additive1" else 1.0
    return quat.identity((num_joints,)), np.zeros((num_joints, 3)), np.full((num_joints, 3), scale)


def apply(fmt: str, base: Pose3, add: Pose3) -> Pose3:
    """The pose a game sees: `add` applied to `base` (arrays (..., J, 4) / (..., J, 3) that
    broadcast against each other)."""
    _check(fmt)
    b_r, b_t, b_s = base
    a_r, a_t, a_s = add
    rot = quat.mul(b_r, a_r)
    rot = rot / np.linalg.norm(rot, axis=-1, keepdims=True)
    if fmt == "relative":
        tr = quat.rotate(np.broadcast_to(b_r, a_r.shape), a_t * b_s) + b_t
    else:
        tr = a_t + b_t
    sc = (1.0 + a_s) * b_s if fmt == "additive1" else a_s * b_s
    return rot, tr, sc


def extract(fmt: str, base: Pose3, pose: Pose3) -> Pose3:
    """The additive that `apply` turns into `pose` on `base` (a base scale of 0 leaves that
    component's additive scale 0: nothing can scale it back)."""
    _check(fmt)
    b_r, b_t, b_s = base
    p_r, p_t, p_s = pose
    inv = quat.conjugate(np.broadcast_to(b_r, p_r.shape))
    rot = quat.mul(inv, p_r)
    rot = rot / np.linalg.norm(rot, axis=-1, keepdims=True)
    safe = np.where(b_s == 0.0, 1.0, b_s)
    if fmt == "relative":
        tr = quat.rotate(inv, p_t - b_t) / safe
    else:
        tr = p_t - b_t
    ratio = np.where(b_s == 0.0, 1.0, p_s / safe)
    sc = ratio - 1.0 if fmt == "additive1" else ratio
    return rot, tr, np.broadcast_to(sc, p_s.shape).copy()


@dataclass(frozen=True, eq=False)
class AdditiveBase:
    """The base an additive clip plays on: its format (FORMATS), the base clip's samples
    (rotations (B, J, 4), translations and scales (B, J, 3)) and sample rate, and its name.
    A clip that has one holds the applied pose (what a game sees) as its samples; the
    additive itself is `extract(format, base_at(...), samples)`."""

    format: str
    rotations: Array
    translations: Array
    scales: Array
    sample_rate: float
    name: str = ""

    def __post_init__(self) -> None:
        _check(self.format)

    @property
    def num_samples(self) -> int:
        return int(self.rotations.shape[0])

    def at_times(self, times: Array, duration: float) -> Pose3:
        """The base pose (N, J, ...) at the additive's times (N,) seconds, for an additive clip
        lasting `duration` seconds: sampled at the normalised time, blended as the codec
        blends (nlerp, lerp)."""
        times = np.asarray(times, dtype=np.float64)
        n = self.num_samples
        if n == 1 or duration <= 0.0:
            return tuple(np.broadcast_to(a[0], (len(times), *a.shape[1:])) for a in self._arrays)
        pos = np.clip(times / duration, 0.0, 1.0) * (n - 1)
        k = np.minimum(np.floor(pos).astype(np.int64), n - 1)
        k2 = np.minimum(k + 1, n - 1)
        alpha = (pos - k)[:, None, None]
        r0, r1 = self.rotations[k], self.rotations[k2]
        r1 = np.where(np.sum(r0 * r1, axis=-1, keepdims=True) < 0.0, -r1, r1)
        rot = r0 + (r1 - r0) * alpha
        rot = rot / np.linalg.norm(rot, axis=-1, keepdims=True)
        tr = self.translations[k] + (self.translations[k2] - self.translations[k]) * alpha
        sc = self.scales[k] + (self.scales[k2] - self.scales[k]) * alpha
        return rot, tr, sc

    def at_samples(self, num_samples: int, sample_rate: float) -> Pose3:
        """The base pose (S, J, ...) at each sample of an additive clip of `num_samples`."""
        duration = (num_samples - 1) / sample_rate
        return self.at_times(np.arange(num_samples) / sample_rate, duration)

    @property
    def _arrays(self) -> Pose3:
        return self.rotations, self.translations, self.scales


def bind_base(bind: Pose3, fmt: str = "additive0") -> AdditiveBase:
    """A bind pose (J, ...) as a single-sample base: what `--bind additive` stores against."""
    return AdditiveBase(fmt, bind[0][None], bind[1][None], bind[2][None], 1.0, "bind pose")


def _check(fmt: str) -> None:
    if fmt not in FORMATS:
        raise ValueError(f"unknown additive format {fmt!r}; expected one of {FORMATS}")
