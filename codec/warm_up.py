"""Paying numba's compile (or its cache load) before a user waits for a compression.

A first compression in a process with an empty kernel cache waits seconds for the compiler;
the window warms up on a background thread at start and `make`'s set-up once per checkout.
"""

from __future__ import annotations

import threading

import numpy as np

from codec.compression import compress
from codec.model import quat
from codec.model.clip import Clip, Skeleton
from codec.model.mesh import SkinnedMesh
from codec.settings import CompressionSettings

_lock = threading.Lock()
_warm = False


def is_warm() -> bool:
    """Whether `warm_up` has run in this process."""
    return _warm


def warm_up() -> None:
    """Compile (or load from the cache) every kernel a compression uses, on a tiny clip.

    Idempotent and thread-safe.
    """
    global _warm
    with _lock:
        if _warm:
            return
        result = compress(_skinned(warm_up_clip()), CompressionSettings(level="highest"))
        result.decoder.sample(0.01, "none")
        _warm = True


def warm_up_clip() -> Clip:
    """A tiny clip that takes every path of the kernels: two segments, a joint turning
    through 180 degrees (per-segment rotation layouts), scale, constant and default tracks."""
    s = 40
    t = np.linspace(0.0, 1.0, s)
    angle = np.stack((np.pi * t, 0.3 * np.sin(6 * t), np.zeros(s)), axis=1)
    axes = np.broadcast_to(np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), (s, 3, 3))
    rot = quat.from_axis_angle(axes, angle)
    tr = np.zeros((s, 3, 3))
    tr[:, 1:, 1] = 10.0
    tr[:, 0, 0] = 5.0 * t
    sc = np.ones((s, 3, 3))
    sc[:, 2, 0] = 1.0 + 0.2 * t
    sk = Skeleton.create(["a", "b", "c"], [-1, 0, 1], bind_translations=tr[0])
    return Clip(sk, 30.0, rot, tr, sc, name="warm-up")


def _skinned(clip: Clip) -> Clip:
    """The clip with a three-vertex mesh on two joints: the true skin error's kernel too."""
    sk = clip.skeleton
    rest = np.tile(np.eye(3, 4), (sk.num_joints, 1, 1))
    rest[:, :, 3] = -np.cumsum(sk.bind_translations, axis=0)  # the chain's bind offsets
    mesh = SkinnedMesh(
        "warm-up",
        np.array([[0.0, 1.0, 0.0], [1.0, 10.0, 0.0], [0.0, 20.0, 1.0]]),
        np.array([[0, 1, 2]]),
        np.array([[0, 1], [0, 1], [1, 2]]),
        np.array([[1.0, 0.0], [0.5, 0.5], [0.7, 0.3]]),
        np.arange(sk.num_joints),
        rest,
    )
    return clip.replace(meshes=(mesh,))
