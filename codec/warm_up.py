"""Paying numba's compile (or its cache load) before a user waits for a compression.

The kernels are compiled once and cached on disk (codec.jit): `pip install` builds the cache
into the wheel, `make`'s set-up into the checkout. Where the cache is missing or made for
another machine, the first compression in a process waits for the compiler: the window
warms up on a background thread at start (its status line says when it compiles), scripts
call `warm_up()` or run `python -m codec warm-up` once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

import numpy as np

from codec.codecs.registry import AUTO
from codec.compression import compress
from codec.model import quat
from codec.model.clip import Clip, Skeleton
from codec.model.mesh import SkinnedMesh
from codec.settings import CompressionSettings

COMPILING = "compiling the codec's kernels (first start only; cached for the next)"

_lock = threading.Lock()
_reports: dict[str, WarmUp] = {}  # by the codec setting warmed up ("auto": every codec)


@dataclass(frozen=True)
class WarmUp:
    """What a warm-up did: its seconds, and how many kernel specialisations numba compiled
    (0 when every kernel came from the cache)."""

    seconds: float
    compiled: int

    def __str__(self) -> str:
        if self.compiled == 0:
            return f"kernels loaded from the cache in {self.seconds:.2f} s"
        return f"{self.compiled} kernels compiled and cached in {self.seconds:.1f} s"


def is_warm() -> bool:
    """Whether `warm_up` has run in this process for every codec."""
    return AUTO in _reports


def warm_up(compiling: Callable[[], object] | None = None, codec: str = AUTO) -> WarmUp:
    """Compile (or load from the cache) every kernel a compression uses, on a tiny clip:
    with `codec` (a codec setting: by default auto, every codec a user can choose), the
    kernels that codec and the measurement use.

    `compiling()` is called once, from this thread, when the first kernel has to be
    compiled (the cache does not hold it). Idempotent per codec setting and thread-safe: a
    second call returns the first one's report.
    """
    with _lock:
        if codec in _reports:
            return _reports[codec]
        counter = CompileCounter(compiling)
        start = time.perf_counter()
        with counter.listening():
            result = compress(
                _skinned(warm_up_clip()), CompressionSettings(level="highest", codec=codec)
            )
            result.decoder.sample(0.01, "none")
        _reports[codec] = WarmUp(time.perf_counter() - start, counter.count)
        return _reports[codec]


class CompileCounter:
    """Counts numba's compilations (numba's event API: a cache hit is not one) and says
    when the first one starts."""

    def __init__(self, first: Callable[[], object] | None = None) -> None:
        self.count = 0
        self._first = first

    def listening(self) -> AbstractContextManager[object]:
        from numba.core import event

        counter = self

        class Listener(event.Listener):
            def on_start(self, event: object) -> None:
                if counter.count == 0 and counter._first is not None:
                    counter._first()
                counter.count += 1

            def on_end(self, event: object) -> None:
                pass

        return event.install_listener("numba:compile", Listener())


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
