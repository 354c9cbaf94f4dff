"""The authored codec's track fitter: a sub-track's own keys, quantised as coarsely as its
budget allows.

A track's keys (codec.codecs.authored.sources: the file's curve, or its samples) keep their
times and interpolation; their values are stored as integer multiples of a step (float32)
per track, cubic tangents as multiples of a tangent step tied to it (TANGENT_RATIO over the
typical key interval: a tangent rounded by half a step then moves a segment about as much
as a value rounded by half a step). The step is the coarsest (shrinking by STEP_RATIO from a
little above what the budget allows) whose curve, read as the file reads it, keeps the local
error on the joint's dominant shell (codec.codecs.survey.local_error.track_error) at every
sample within the budget. Everything measured is what decodes: the same keys, the same reading.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codec.codecs.authored.sources import Source, Sources, curve
from codec.codecs.survey.frame import ROT, SC
from codec.codecs.survey.local_error import track_error
from codec.model.authored_curves import CurveGroup

Array = np.ndarray

STEP_RATIO = 0.84  # steps tried shrink by this factor
MAX_TRIES = 80
FINEST = 2.0**-30  # the finest step, times the track's largest magnitude (+1)
START = 1.5  # the first step tried, over the one a value's rounding alone allows
TANGENT_RATIO = 6.0  # tangent step = this x value step / the median key interval
MAX_INT = 1 << 40  # |integer| at most: hostile payloads stop there
SLACK = 1.0 - 1e-9  # aim just under the budget (float64 reorderings)
DROP_NONE = 4  # every rotation component stored
DROP_MIN = 0.3  # a component this far from zero at every key is rebuilt, not stored


@dataclass(frozen=True, eq=False)
class KeyTrack:
    """One animated sub-track (rotation, translation or scale) as the payload stores it:
    interpolation, timeline, value step and the keys' integers (K, C stored); a rotation
    read by step, linear or slerp may store three components, `drop` the one rebuilt
    (positive, the keys' unit length; DROP_NONE: all four stored); a cubic track's tangent
    step and in / out integers (2, K, C)."""

    sub: int
    interpolation: str
    timeline: int
    step: float
    ints: Array
    tangent_step: float = 0.0
    tangent_ints: Array | None = None
    drop: int = DROP_NONE

    def values(self) -> Array:
        """(K, C) the keys' values (a dropped component rebuilt)."""
        v = self.ints * self.step
        if self.drop == DROP_NONE:
            return v
        rest = np.maximum(1.0 - np.sum(v * v, axis=-1), 0.0)
        return np.insert(v, self.drop, np.sqrt(rest), axis=-1)

    def tangents(self) -> tuple[Array | None, Array | None]:
        if self.tangent_ints is None:
            return None, None
        t = self.tangent_ints * self.tangent_step
        return t[0], t[1]

    def curve(self, times: Array) -> CurveGroup:
        """The track's curve on its key times (K,) in clip seconds."""
        return curve(self.sub, self.interpolation, times, self.values(), *self.tangents())


def _rotation_layout(src: Source) -> tuple[Array, int]:
    """A rotation's keys (K, C stored) and the component rebuilt from the others: step,
    linear and slerp read each key as a unit quaternion and on the shorter arc, so each
    key may be signed to make that component positive; a cubic track's keys are blended
    as they are (all four stored)."""
    q = src.values
    if src.interpolation == "cubic":
        return q, DROP_NONE
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    low = np.abs(q).min(axis=0)
    c = int(np.argmax(low))
    if low[c] < DROP_MIN:
        return q, DROP_NONE
    q = q * np.sign(q[:, c : c + 1])
    return np.delete(q, c, axis=-1), c


def _unit(sub: int, dist: float, smag: Array) -> float:
    """Local error per unit of a component's change, at most."""
    if sub == ROT:
        return 2.0 * dist * max(float(smag.max()), 1e-12)
    if sub == SC:
        return max(dist, 1e-12)
    return 1.0


class AuthoredFitter:
    """survey.TrackFitter of the clip's own keys; tracks differ per joint (`fit_joint`)."""

    def __init__(self, sources: Sources, rate: float, num_samples: int, every: int = 1) -> None:
        """`rate` and `num_samples` those of the clip fitted: the source clip, or it at
        `every` poses per sample interval (codec.codecs.authored.codec.dense_clip)."""
        self.sources = sources
        self.rate = rate
        self.every = every
        self.grid = np.arange(num_samples, dtype=np.float64) / rate
        self._curves: dict[int, CurveGroup] = {}

    def source(self, joint: int, sub: int, raw: Array) -> Source:
        """The file's curve of the track, or its source samples (every `every`-th of `raw
        (S, C)`) read linearly."""
        found = self.sources.tracks.get((joint, sub))
        return found if found is not None else Source("linear", 0, raw[:: self.every])

    def fit_joint(
        self,
        joint: int,
        sub: int,
        raw: Array,
        budget: float,
        dist: float,
        smag: Array,
        previous: KeyTrack | None = None,
    ) -> KeyTrack:
        src = self.source(joint, sub, raw)
        times = self.sources.timelines[src.timeline]
        width = src.values.shape[1]
        span = float(np.abs(src.values).max()) + 1.0
        step = START * 2.0 * budget / (_unit(sub, dist, smag) * np.sqrt(width))
        step = max(step, span * FINEST)
        gaps = np.diff(times)
        gap = float(np.median(gaps[gaps > 0])) if np.any(gaps > 0) else 1.0 / self.rate
        best = None
        for _ in range(MAX_TRIES):
            track = self._quantised(sub, src, float(np.float32(step)), gap)
            got = track.curve(times).evaluate(self.grid)[:, 0]
            best = track
            if track_error(sub, raw, got, dist, smag).max() <= budget * SLACK:
                break
            if step <= span * FINEST:
                break
            step = max(step * STEP_RATIO, span * FINEST)
        assert best is not None
        return best

    def _quantised(self, sub: int, src: Source, step: float, gap: float) -> KeyTrack:
        values, drop = _rotation_layout(src) if sub == ROT else (src.values, DROP_NONE)
        ints = np.rint(values / step).astype(np.int64)
        if src.in_tangents is None or src.out_tangents is None:
            return KeyTrack(sub, src.interpolation, src.timeline, step, ints, drop=drop)
        tstep = float(np.float32(TANGENT_RATIO * step / gap))
        tangents = np.stack((src.in_tangents, src.out_tangents))
        tints = np.rint(tangents / tstep).astype(np.int64)
        return KeyTrack(sub, src.interpolation, src.timeline, step, ints, tstep, tints)

    def fit(
        self, sub: int, raw: Array, budget: float, dist: float, smag: Array, previous=None
    ) -> KeyTrack:
        raise TypeError("the authored fitter fits a joint's own keys: fit_clip calls fit_joint")

    def evaluate(self, rep: KeyTrack, pos: Array, interpolation: str = "nlerp") -> Array:
        """Values (N, C) at positions (N,) in source samples."""
        times = self.sources.timelines[rep.timeline]
        return rep.curve(times).evaluate(np.asarray(pos, np.float64) / self.rate)[:, 0]
