"""Are a clip's key times one uniform grid? Then the keys are the samples.

glTF and USD store keys at arbitrary times. When every key lies on one uniform grid, taking
the grid as the clip's samples keeps every authored key as a sample (nothing is resampled,
and precision is measured against the authored data); otherwise a reader resamples and says
so. Times are float32 in glTF, so "on the grid" allows a small fraction of a step.
"""

from __future__ import annotations

import numpy as np

GRID_TOLERANCE = 1e-3  # a key within this fraction of a step of a grid point is on the grid


def nice_rate(rate: float) -> float:
    """`rate` snapped to a whole or NTSC (x1000/1001) rate when float32 key times blur it."""
    for cand in (round(rate), round(rate * 1.001) / 1.001):
        if cand > 0 and abs(rate - cand) <= 1e-4 * cand:
            return float(cand)
    return rate


def key_grid(times: np.ndarray) -> tuple[float, float] | None:
    """(start, rate) of the uniform grid every key time lies on, or None.

    The grid's step is the smallest spacing between distinct keys; a key counts as on the
    grid within GRID_TOLERANCE of a step (float32 times drift by far less).
    """
    t = np.unique(np.asarray(times, dtype=np.float64))
    if t.size < 2:
        return None
    d = np.diff(t)
    step = float(d.min())
    span = float(t[-1] - t[0])
    if step <= 1e-9 * max(1.0, span) or span / step > 10_000_000:
        return None
    k = np.rint((t - t[0]) / step)
    step = span / k[-1]  # the whole span spreads float32 rounding over every step
    if np.any(np.abs((t - t[0]) / step - k) > GRID_TOLERANCE):
        return None
    return float(t[0]), nice_rate(1.0 / step)


MAX_SUGGESTED_RATE = 240.0  # finer grids than this are no rate a game samples at


def holds_every_key(times: np.ndarray, rate: float) -> bool:
    """Whether the grid at `rate` from the first key holds every key (GRID_TOLERANCE)."""
    t = np.asarray(times, dtype=np.float64)
    k = (t - t.min()) * float(rate)
    return bool(np.all(np.abs(k - np.rint(k)) <= GRID_TOLERANCE))


def finer_grid_rate(times: np.ndarray, limit: float = MAX_SUGGESTED_RATE) -> float | None:
    """The lowest rate (at most `limit`) whose grid from the first key holds every key, or
    None: keys at 24 Hz with one gap of 0.2 s sit on no 24 Hz grid but all on 120 Hz. A
    reader that resamples names it, so the user can keep every authored key as a sample."""
    t = np.unique(np.asarray(times, dtype=np.float64))
    if t.size < 2:
        return None
    smallest = float(np.diff(t).min())
    if smallest <= 0:
        return None
    for n in range(1, int(limit * smallest) + 1):  # steps that divide the smallest spacing
        step = smallest / n
        k = (t - t[0]) / step
        if np.all(np.abs(k - np.rint(k)) <= GRID_TOLERANCE * max(1.0, n / 10)):
            return nice_rate(1.0 / step)
    return None
