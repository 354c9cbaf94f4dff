"""Knot values on a uniform grid: a step per track, integers per value, and rotations stored
by three of their four components.

A track's values are multiples of its own step (float32): v = q * step with q an integer,
so the step is exactly as coarse as the track's budget allows (no power-of-two bit width
rounds it finer) and successive knots differ by small integers, which the entropy coding of
the payload packs tightly. A rotation track whose components keep one of them away from
zero along the whole track (made continuous first, then signed so that one is positive)
stores the other three; the decoder rebuilds it as sqrt(1 - the others' squares), a unit
quaternion at every knot, before the curve blends components. Otherwise all four are stored.

Choosing the step: the largest (within STEP_RATIO) whose quantisation of every sample of the
track keeps the local error (codec.codecs.survey.local_error.track_error's) within the budget given.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codec.codecs.curve.placement import sample_errors
from codec.codecs.survey.frame import ROT, SC

Array = np.ndarray

ALL = 4  # rotation layout: every component stored
DROP_MIN = 0.3  # a rotation component this far from zero everywhere is rebuilt, not stored
STEP_RATIO = 0.84  # steps tried shrink by this factor
MAX_TRIES = 40
MAX_INT = 1 << 40  # |q| at most: hostile payloads stop there
FINEST = 2.0**-30  # the finest step, times the track's largest magnitude (+1)
_KEPT = [np.array([c for c in range(4) if c != drop]) for drop in range(4)]  # stored components


@dataclass(frozen=True)
class Grid:
    """How a track's values are stored: `step` (float32-exact) and, for rotations, the
    component rebuilt from the others (0..3) or ALL."""

    step: float
    drop: int = ALL

    def stored(self, full: Array) -> Array:
        """(n, C stored) the components a track's values (n, C) keep."""
        if self.drop == ALL:
            return full
        return full[..., _KEPT[self.drop]]  # np.delete's result, cheaper

    def quantise(self, full: Array) -> Array:
        """(n, C stored) int64 nearest grid integers of values (n, C)."""
        return np.rint(self.stored(full) / self.step).astype(np.int64)

    def values(self, ints: Array) -> Array:
        """(n, C) float64 values of stored integers (n, C stored)."""
        v = np.asarray(ints, np.float64) * self.step
        if self.drop == ALL:
            return v
        out = np.empty((*v.shape[:-1], v.shape[-1] + 1))  # np.insert's result, cheaper
        out[..., : self.drop] = v[..., : self.drop]
        out[..., self.drop + 1 :] = v[..., self.drop :]
        out[..., self.drop] = np.sqrt(np.maximum(1.0 - np.sum(v * v, axis=-1), 0.0))
        return out


def rotation_layout(raw: Array) -> tuple[Array, int]:
    """A rotation track (S, 4) continuous along samples, signed so that the component it
    can drop is positive, and that component (ALL when none stays away from zero)."""
    low = np.abs(raw).min(axis=0)
    c = int(np.argmax(low))
    if low[c] < DROP_MIN or np.any(raw[:, c] * raw[0, c] <= 0.0):
        return raw, ALL
    return (raw if raw[0, c] > 0 else np.ascontiguousarray(-raw)), c


def first_step(sub: int, budget: float, dist: float, smag: Array, width: int) -> float:
    """A step a little coarser than the budget allows (rounding error step / 2 per
    component), where the search starts."""
    if sub == ROT:
        scale = 2.0 * dist * max(float(smag.max()), 1e-12)
        return 2.0 * budget / (scale * np.sqrt(width)) * 1.5
    if sub == SC:
        return 2.0 * budget / max(dist, 1e-12) * 1.5
    return 2.0 * budget / np.sqrt(width) * 1.5


def choose_grid(
    sub: int, raw: Array, dist: float, smag: Array, budget: float
) -> tuple[Grid, Array, Array, float]:
    """The coarsest grid (of those tried) whose quantisation of the track `raw (S, C)` keeps
    every sample within `budget`: the grid, the track as signed for it (S, C), every
    sample's integers (S, C stored) and the error they leave."""
    drop = ALL
    if sub == ROT:
        raw, drop = rotation_layout(raw)
    width = raw.shape[1] - (0 if drop == ALL else 1)
    span = float(np.abs(raw).max()) + 1.0
    finest = span * FINEST
    step = max(first_step(sub, budget, dist, smag, width), finest)
    best = None
    for _ in range(MAX_TRIES):
        grid = Grid(float(np.float32(step)), drop)
        ints = grid.quantise(raw)
        err = float(sample_errors(sub, raw, grid.values(ints), dist, smag).max())
        best = (grid, raw, ints, err)
        if err <= budget or step <= finest:
            break
        step = max(step * STEP_RATIO, finest)
    assert best is not None
    return best
