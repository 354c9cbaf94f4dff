"""The curve codec's rate-distortion pass: the object-space slack the budgets left, spent.

`fit_clip` gives every sub-track a local budget and tightens whole chains where a joint is
over its precision, so most joints end well inside theirs (cmu_13_07 keyed linearly every
3 samples: the hips at 0.19 of the precision, the hands at 0.57, one foot at 0.97). This
pass takes the fitted tracks as they are (knots, modes, tangents) and coarsens their value
grids, greedily: among the tracks whose grid one step coarser (a factor of COARSER) still
saves estimated bits, the one saving the most is tried, and kept when every joint of the
clip stays within its precision at every source sample (object space, as `fit_clip`
measures); a track that fails waits for the next, finer factor. Only the tracks' integers
change, so the knots found on a keyed clip stay the keys.

Cost: per try one evaluation of the track (O(S)) and the object-space error of the clip
(O(S J), compiled); a try per track and factor, plus one per track kept, at most MAX_TRIES
per track.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from codec.codecs.curve.fitter import SplineTrack, cost
from codec.codecs.curve.values import Grid
from codec.measure.error_metric import errors_against, object_matrices
from codec.model.clip import Clip

Array = np.ndarray

COARSER = (2.0, 2.0**0.5, 2.0**0.25, 2.0**0.125)  # grid step factors, coarsest first
MAX_TRIES = 16  # tries per track over all factors (a long clip of many joints stays cheap)


def coarsened(track: SplineTrack, raw: Array, factor: float) -> SplineTrack:
    """The track with its knot values on a grid `factor` times coarser: the source values at
    its knots `raw (S, C)` quantised again, signed as the track stores them (a rotation
    and its negative are the same)."""
    grid = Grid(float(np.float32(track.grid.step * factor)), track.grid.drop)
    at = raw[track.keys]
    if at.shape[1] == 4:
        flip = np.sum(at * track.grid.values(track.ints), axis=1) < 0.0
        at = np.where(flip[:, None], -at, at)
    return replace(track, grid=grid, ints=grid.quantise(at))


class Slack:
    """The lossy clip as arrays and the object-space errors of its joints: `parts` are the
    decoded local rotations (S, J, 4, not normalised), translations and scales (S, J, 3)."""

    def __init__(self, clip: Clip, parts: list[Array], limit: Array) -> None:
        sk = clip.skeleton
        self.parents = np.asarray(sk.parents, np.int64)
        self.shell = np.asarray(sk.shell_distance, np.float64)
        self.raw = object_matrices((clip.rotations, clip.translations, clip.scales), self.parents)
        self.parts = parts
        self.limit = limit
        self.out = np.empty(self.raw.shape[:2])

    def holds(self) -> bool:
        """Whether every joint is within its limit at every sample (the compiled pose
        kernel on the whole skeleton: cheaper than gathering the joints a track moves)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            rot = self.parts[0] / np.linalg.norm(self.parts[0], axis=-1, keepdims=True)
        lossy = (rot, self.parts[1], self.parts[2])
        err = errors_against(self.raw, lossy, self.parents, self.shell, self.out)
        return bool(np.all(err.max(axis=0) <= self.limit))


def spend_slack(
    clip: Clip,
    raws: tuple[Array, Array, Array],
    fixed: tuple[Array, Array, Array],
    reps: dict[tuple[int, int], SplineTrack],
    limit: Array,
) -> dict[tuple[int, int], SplineTrack]:
    """The tracks `reps {(joint, sub): SplineTrack}` of a clip that holds `limit (J,)` at
    every sample, their grids coarsened greedily while it still does (module docstring).
    `raws` are the source tracks as fitted (rotations continuous), `fixed` the values of
    the other sub-tracks (J, 4) / (J, 3)."""
    S = clip.num_samples
    pos = np.arange(S, dtype=np.float64)
    parts = [np.repeat(np.asarray(f, np.float64)[None], S, axis=0) for f in fixed]
    for (j, k), rep in reps.items():
        parts[k][:, j] = rep.evaluate(pos)
    slack = Slack(clip, parts, limit)
    out = dict(reps)
    tries = dict.fromkeys(out, 0)
    bits = {jk: cost(rep) for jk, rep in out.items()}
    for factor in COARSER:
        waiting: dict[tuple[int, int], tuple[float, SplineTrack]] = {}
        done: set[tuple[int, int]] = set()
        while True:
            for jk, rep in out.items():
                if jk in done or jk in waiting or tries[jk] >= MAX_TRIES:
                    continue
                candidate = coarsened(rep, raws[jk[1]][:, jk[0]], factor)
                saved = bits[jk] - cost(candidate)
                if saved > 0.0:
                    waiting[jk] = (saved, candidate)
                else:
                    done.add(jk)
            if not waiting:
                break
            jk = max(waiting, key=lambda t: waiting[t][0])  # the most bits saved first
            saved, candidate = waiting.pop(jk)
            j, k = jk
            tries[jk] += 1
            before = parts[k][:, j].copy()
            parts[k][:, j] = candidate.evaluate(pos)
            if slack.holds():
                out[jk] = candidate
                bits[jk] -= saved
            else:
                parts[k][:, j] = before
                done.add(jk)
    return out
