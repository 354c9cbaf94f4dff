"""The curve codec's rate-distortion pass: the object-space slack the budgets left, spent.

`fit_clip` gives every sub-track a local budget and tightens whole chains where a joint is
over its precision, so most joints end well inside theirs (cmu_13_07 keyed linearly every
3 samples: the hips at 0.19 of the precision, the hands at 0.57, one foot at 0.97). This
pass takes the fitted tracks as they are (knots, modes, tangents) and requantises their
knot values, hierarchically:
- a rotation's knots aim not at the source's local rotation but at the one that, under its
  lossy parent, best puts the joint's shell points and the joints that turn with it (its
  descendants through unanimated rotations) where the source has them (`Slack.aim`, the
  least-squares rotation of Kabsch). A parent's error is then compensated, not passed down
  the chain (every rotation below it would add its own error to it), and a bone's direction
  takes back part of its parent's position error. First every rotation is aimed so, parents
  first;
- then the grids are coarsened greedily: among the tracks whose grid one step coarser (a
  factor of COARSER) still saves estimated bits, the highest in the skeleton is tried, the
  rotations below it aimed again at their own grids (its error changed), and all kept
  when every joint of the clip stays within its precision at every source sample (object
  space, as `fit_clip` measures); a track that fails waits for the next, finer factor.
Only the tracks' integers change, so the knots found on a keyed clip stay the keys.
cmu_13_07 keyed linearly every 3 samples: 5,990 B fitted, 5,803 B with the grids coarsened
alone (the most bits saved first), 5,409 B aimed and coarsened parents first. The pass
without aiming (`compensate=False`: the most bits saved first) costs a tenth of the time and
now and then ends smaller (cmu_49_15 Bezier clamped at irregular keys: 4,150 B against
4,182 B); the codec runs both and keeps the smaller.

Cost: per try one evaluation of the track and of each rotation below it (O(S)), their aims
(compiled: codec.codecs.curve.aim, O(K depth)) and the object-space error of the clip (O(S J),
compiled); a try per track and factor, plus one per track kept, at most MAX_TRIES per track.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from codec.codecs.curve.aim import aimed_rotations
from codec.codecs.curve.fitter import SplineTrack, cost
from codec.codecs.curve.tangents import knot_search
from codec.codecs.curve.values import Grid
from codec.codecs.survey.frame import CONSTANT, ROT, SC
from codec.measure.error_metric import errors_against, object_matrices
from codec.model.clip import Clip

Array = np.ndarray

COARSER = (2.0, 2.0**0.5, 2.0**0.25, 2.0**0.125)  # grid step factors, coarsest first
MAX_TRIES = 16  # tries per track over all factors (a long clip of many joints stays cheap)
# constant rotation components / translations rounded to multiples of these, coarsest first
ROUNDINGS = tuple((2.0**-e, 2.0 ** (4 - e)) for e in (14, 16, 18, 20))  # (rot, tr)


def coarsened(track: SplineTrack, at: Array, factor: float) -> SplineTrack:
    """The track with its knot values on a grid `factor` times coarser: the values `at (K, C)`
    its knots aim at quantised again, signed as the track stores them (a rotation and its
    negative are the same)."""
    grid = Grid(float(np.float32(track.grid.step * factor)), track.grid.drop)
    if at.shape[1] == 4:  # rows[0]: the knot values, kept since the track was evaluated
        flip = np.sum(at * track.rows[0], axis=1) < 0.0
        at = np.where(flip[:, None], -at, at)
    return replace(track, grid=grid, ints=grid.quantise(at))


def _unit(rot: Array) -> Array:
    """Rotations (..., 4) normalised (NaN where zero, as the decoder's poses would be)."""
    with np.errstate(invalid="ignore", divide="ignore"):  # np.linalg.norm's sum, its calls spared
        return rot / np.sqrt(np.add.reduce(rot * rot, axis=-1, keepdims=True))


def rigid_descendants(parents: Array, turning: frozenset[int]) -> list[Array]:
    """Per joint, its descendants that no rotation of their own turns on the way down (the
    joints in `turning` have animated rotations; those joints themselves are included)."""
    out: list[list[int]] = [[] for _ in parents]
    for d in range(len(parents) - 1, -1, -1):  # children after their parents: bottom up
        p = parents[d]
        if p >= 0:
            out[p] = [d, *([] if d in turning else out[d]), *out[p]]
    return [np.asarray(sorted(o), np.int64) for o in out]


class Slack:
    """The lossy clip as arrays and the object-space errors of its joints: `parts` are the
    decoded local rotations (S, J, 4, not normalised), translations and scales (S, J, 3)."""

    def __init__(
        self, clip: Clip, parts: list[Array], limit: Array, turning: frozenset[int] = frozenset()
    ) -> None:
        sk = clip.skeleton
        self.parents = np.asarray(sk.parents, np.int64)
        self.shell = np.asarray(sk.shell_distance, np.float64)
        self.raw = object_matrices((clip.rotations, clip.translations, clip.scales), self.parents)
        self.parts = parts
        self.limit = limit
        self.out = np.empty(self.raw.shape[:2])
        self.rigid = rigid_descendants(self.parents, turning)
        self.chains = [np.asarray(c[:-1], np.int64) for c in sk.chains()]  # ancestors
        self._cache: dict[int, tuple[Array, Array, Array]] = {}
        self.unit = _unit(parts[0])  # the rotations normalised, kept as `put` changes them

    def put(self, j: int, k: int, values: Array) -> None:
        """Sub-track k of joint j takes the values (S, C) (its rotations normalised too)."""
        self.parts[k][:, j] = values
        if k == ROT:
            self.unit[:, j] = _unit(values)

    def aim(self, j: int, k: int, keys: Array, raw: Array) -> Array:
        """(K, C) the values a track of joint j (sub-track k, source values `raw (S, C)`)
        aims at on its knots `keys (K,)`. A rotation: the local rotation that, under the
        lossy parent, best puts the joint's shell points and the joints that turn with it
        where the source has them (least squares: Kabsch's rotation). So a parent's error
        is compensated rather than passed down the chain, and a bone's direction takes back
        some of its parent's position error. Anything else: its source values."""
        if k != ROT or self.parents[j] < 0:
            return raw[keys]
        v, y, moved = self._points(j, keys)
        return aimed_rotations(*self.parts, keys, self.chains[j], j, v, y, moved)

    def _points(self, j: int, keys: Array) -> tuple[Array, Array, Array]:
        """The points that turn with joint j: in its frame (K, P, 3), where the source has
        them (K, P, 3; its shell points relative to the joint, the joints that turn with it
        absolute: `moved` (P,) bool) at the knots `keys` (a track's knots stay in the pass)."""
        if j not in self._cache:
            m = self.raw[keys].reshape(len(keys), -1, 3, 4)
            d = self.shell[j]
            shell = np.broadcast_to(d * np.eye(3), (len(keys), 3, 3))
            x = m[:, self.rigid[j]][..., 3]  # (K, R, 3)
            frame = m[:, j, :, :3]
            ok = np.abs(np.linalg.det(frame)) > 1e-12  # a zero scale: no frame to aim in
            frame = np.where(ok[:, None, None], frame, np.eye(3))
            rel = np.linalg.solve(frame[:, None], (x - m[:, j, None, :, 3])[..., None])[..., 0]
            rel, x = (np.where(ok[:, None, None], a, 0.0) for a in (rel, x))
            v = np.concatenate((shell, rel), axis=1)
            y = np.concatenate((d * np.swapaxes(m[:, j, :, :3], 1, 2), x), axis=1)
            moved = np.arange(v.shape[1]) >= 3
            c = np.ascontiguousarray  # one compiled layout, whatever strides these took
            self._cache[j] = (c(v), c(y), moved)
        return self._cache[j]

    def holds(self) -> bool:
        """Whether every joint is within its limit at every sample (the compiled pose
        kernel on the whole skeleton: cheaper than gathering the joints a track moves)."""
        lossy = (self.unit, self.parts[1], self.parts[2])
        err = errors_against(self.raw, lossy, self.parents, self.shell, self.out)
        return bool(np.all(err.max(axis=0) <= self.limit))


def spend_slack(
    clip: Clip,
    raws: tuple[Array, Array, Array],
    fixed: tuple[Array, Array, Array],
    reps: dict[tuple[int, int], SplineTrack],
    limit: Array,
    compensate: bool = True,
) -> dict[tuple[int, int], SplineTrack]:
    """The tracks `reps {(joint, sub): SplineTrack}` of a clip that holds `limit (J,)` at
    every sample, their grids coarsened greedily while it still does (module docstring).
    `raws` are the source tracks as fitted (rotations continuous), `fixed` the values of
    the other sub-tracks (J, 4) / (J, 3). Without `compensate` every track aims at its
    source values and the track saving the most bits is tried first (no rotation aimed
    again): a tenth of the time, and now and then smaller (the codec keeps the smaller)."""
    S = clip.num_samples
    pos = np.arange(S, dtype=np.float64)
    # a track's knots stay (only its integers change): each knot search done once
    search = {jk: knot_search(rep.mode, rep.keys, pos) for jk, rep in reps.items()}
    parts = [np.repeat(np.asarray(f, np.float64)[None], S, axis=0) for f in fixed]
    for (j, k), rep in reps.items():
        parts[k][:, j] = rep.evaluate(pos, search[j, k])
    slack = Slack(clip, parts, limit, frozenset(j for j, k in reps if k == ROT))
    out = dict(reps)
    tries = dict.fromkeys(out, 0)
    bits = {jk: cost(rep) for jk, rep in out.items()}
    below = {
        jk: [d for d in sorted(out) if d[1] == ROT and jk[0] in slack.chains[d[0]]]
        if compensate
        else []
        for jk in out
    }

    def aim(j: int, k: int, rep: SplineTrack) -> Array:
        return slack.aim(j, k, rep.keys, raws[k][:, j]) if compensate else raws[k][rep.keys, j]

    def attempt(jk: tuple[int, int], candidate: SplineTrack) -> bool:
        """Put the track in, the rotations below it aimed again at their own grids (they
        compensate their parents' errors): kept when the clip holds, else all undone."""
        changed = {jk: candidate}
        saved = {jk: parts[jk[1]][:, jk[0]].copy()}
        slack.put(*jk, candidate.evaluate(pos, search[jk]))
        for d in below[jk]:
            rep = out[d]
            changed[d] = coarsened(rep, aim(*d, rep), 1.0)
            saved[d] = parts[ROT][:, d[0]].copy()
            slack.put(*d, changed[d].evaluate(pos, search[d]))
        if slack.holds():
            for d, rep in changed.items():
                out[d] = rep
                bits[d] = cost(rep)
            return True
        for d, before in saved.items():
            slack.put(*d, before)
        return False

    aimed: set[tuple[int, int]] = set()
    for jk in sorted(out) if compensate else ():  # parents first: each under its lossy parent
        if (
            jk[1] == ROT
            and jk not in aimed
            and attempt(jk, coarsened(out[jk], aim(*jk, out[jk]), 1.0))
        ):
            aimed.update(below[jk])  # aimed with it
    for factor in COARSER:
        waiting: dict[tuple[int, int], float] = {}  # tracks whose coarser grid saves bits
        done: set[tuple[int, int]] = set()
        while True:
            for (j, k), rep in out.items():
                if (j, k) in done or (j, k) in waiting or tries[j, k] >= MAX_TRIES:
                    continue
                saved = bits[j, k] - cost(coarsened(rep, raws[k][rep.keys, j], factor))
                if saved > 0.0:
                    waiting[j, k] = saved
                else:
                    done.add((j, k))
            if not waiting:
                break
            # parents first (the rotations below are aimed again), else the most bits saved
            jk = min(waiting) if compensate else max(waiting, key=waiting.__getitem__)
            del waiting[jk]
            tries[jk] += 1
            if not attempt(jk, coarsened(out[jk], aim(*jk, out[jk]), factor)):
                done.add(jk)
    return out


def rounded_constants(
    clip: Clip,
    kinds: Array,
    fixed: tuple[Array, Array, Array],
    reps: dict[tuple[int, int], SplineTrack],
    limit: Array,
) -> tuple[Array, Array, Array]:
    """The fixed values `fixed` ((J, 4), (J, 3), (J, 3)) with the clip's constant rotations
    and translations rounded to multiples of the coarsest of ROUNDINGS under which every
    joint still holds `limit (J,)` at every sample (the tracks `reps` as they decode);
    `fixed` itself when none holds. The payload keeps constants as float32 (survey.frame);
    one rounded to a short binary fraction ends in zero bits the entropy coding packs away
    (cmu_13_07 keyed linearly every 3: 44 joints, 66 constant sub-tracks, the payload
    5,409 -> 5,136 B at 2^-18 / 2^-14), and the error it adds is far inside the precision."""
    const = [(int(j), int(k)) for j, k in np.argwhere(kinds == CONSTANT) if k != SC]
    if not const:
        return fixed
    S = clip.num_samples
    pos = np.arange(S, dtype=np.float64)
    parts = [np.repeat(np.asarray(f, np.float64)[None], S, axis=0) for f in fixed]
    for (j, k), rep in reps.items():
        parts[k][:, j] = rep.evaluate(pos)
    slack = Slack(clip, parts, limit)
    for steps in ROUNDINGS:
        out = tuple(np.array(f, np.float64) for f in fixed)
        for j, k in const:
            v = np.rint(np.asarray(fixed[k][j], np.float64) / steps[k]) * steps[k]
            as_read = v.astype(np.float32)  # what the payload holds and its reader makes of it
            if k == ROT:
                as_read = as_read / np.linalg.norm(as_read)
            if not np.all(np.isfinite(as_read)):
                continue  # a rotation rounded to zero: kept as it was
            out[k][j] = v
            slack.put(j, k, np.broadcast_to(as_read.astype(np.float64), (S, len(v))))
        if slack.holds():
            return out
    return fixed
