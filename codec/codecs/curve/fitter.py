"""The curve codec's track fitter: per sub-track, the cheapest curve that holds its budget.

For each share of the budget given to quantisation (QUANT_SHARES), the track's samples are
quantised on the coarsest grid that share allows (codec.codecs.curve.values), and then each
track mode is tried, its knots placed twice (codec.codecs.curve.placement):
- through the exact samples, the fewest knots whose segments fit them almost exactly
  (each of EXACT_SHARES of the budget that finds few knots): on a keyed clip the keys.
  Knots are added where the C1 curve through them misses and removed where not needed;
- through the quantised samples, segments as long as the whole budget allows.
STEP and LINEAR tracks are their knots. CUBIC tracks take C1 tangents fitted by least
squares, stored as cheaply as they can be: a tangent rule alone (tangents.RULES: the tool
that keyed the clip used one of them) when its curve holds the budget, else the rule closest
to the fitted tangents plus a quantised correction at the knots of the segments the rule
misses (at every knot if that is not enough). Where even the fitted tangents miss, a knot
is added where it fits best in each segment they miss (FIXUPS rounds).
The candidate with the fewest estimated bits (`cost`) is kept. A later budget round starts
from the share that won.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from codec.codecs.curve.placement import (
    best_splits,
    c1_tangents,
    curve_errors,
    fewest_knots,
    place_knots,
    remove_knots,
    snap_knots,
)
from codec.codecs.curve.tangents import (
    CUBIC,
    LINEAR,
    STEP,
    evaluate_track,
    knot_tangents,
    tangents_by_rule,
)
from codec.codecs.curve.values import Grid, choose_grid
from codec.codecs.survey.frame import ROT, SC
from codec.codecs.survey.streams import stream_cost, zigzag

Array = np.ndarray

QUANT_SHARES = (0.45, 0.65, 0.85)  # parts of a track's budget its quantisation may take
# knots through the exact samples: segments that fit this well (a key's): float64 keys,
# float32 keys, keys and a little noise
EXACT_SHARES = (0.05, 1e-2, 1e-4, 1e-6)  # loosest first: when it finds many, all do
PLACE_SHARE = 0.95  # a cubic track's knots hold this part of the budget (the rest: tangents)
KERNEL_SLACK = 1.0 - 1e-9  # the kernels' arithmetic is not numpy's to the last bit
SNAP = 2  # samples a knot may move to where its segments fit best
SETTLED = 0.01  # a knot whose curve fits this share of the exact budget is not moved
KEYED_SHARE = 0.5  # exact knots on at most this share of the samples: a keyed track
REFINES = 6  # rounds of knots added where the exact knots' C1 curve misses
FIXUPS = 4  # knot insertions where the C1 tangents miss, before a mode gives up
HALVINGS = 12  # correction steps tried, halving from the one the error left allows
BASIS = 4.0 / 27.0  # the largest |Hermite tangent basis|: a tangent's reach into a segment
ZERO_BITS = 0.25  # a zero correction among others: runs of them pack to little
HEAD_BITS = 40.0  # a track's head: flags, layout, step (and a tangent step: 32 more)


@dataclass(frozen=True, eq=False)
class SplineTrack:
    """One animated sub-track as the payload stores it: knots (K,) ascending source
    samples, the mode (tangents.MODES), a cubic track's tangent rule, the value grid and the
    knots' integers (K, C stored); `extra` (K, C) int64 tangent corrections in units of
    `tangent_step` (None: the rule alone)."""

    keys: Array
    mode: int
    rule: int
    grid: Grid
    ints: Array
    extra: Array | None = None
    tangent_step: float = 0.0
    hint: tuple = field(default=(), compare=False)  # the fitter's choices (not stored)

    @cached_property
    def rows(self) -> tuple[Array, Array, Array]:
        """Knot values (K, C) and out / in tangents (K, C) per sample."""
        v = self.grid.values(self.ints)
        k = len(self.keys)
        first = np.arange(k) == 0
        last = np.arange(k) == k - 1
        extra = None if self.extra is None else self.extra * self.tangent_step
        out, inn = knot_tangents(
            self.mode, self.rule, self.keys.astype(np.float64), v, first, last, extra
        )
        return v, out, inn

    def evaluate(self, pos: Array, search: tuple | None = None) -> Array:
        """Values (N, C) at positions (N,) in source samples (`search`: tangents.knot_search
        of the keys at pos, when the caller keeps it)."""
        v, out, inn = self.rows
        return evaluate_track(self.mode, self.keys, v, out, inn, pos, search)

    def errors(self, sub: int, raw: Array, dist: float, smag: Array) -> Array:
        """(S,) the local error at every sample of the track `raw (S, C)`."""
        v, out, inn = self.rows
        return curve_errors(self.mode, sub, raw, self.keys, v, out, inn, dist, smag)


def cost(track: SplineTrack) -> float:
    """Estimated bits of a track in the payload: its knots' value stream, a marker bit a
    knot, its head and its tangent corrections."""
    bits = stream_cost(track.ints) + len(track.keys) + HEAD_BITS
    if track.extra is not None:
        z = zigzag(track.extra).astype(np.float64)
        bits += float(np.sum(np.where(z > 0, np.log2(z + 1.0) + 3.0, ZERO_BITS))) + 32.0
    return bits


class CurveFitter:
    """survey.TrackFitter of step, linear and cubic tracks; `keys` (S,) bool the clip's key
    candidates (codec.codecs.curve.keys), where knots go first, or None."""

    def __init__(self, keys: Array | None = None) -> None:
        self.keys = keys

    def fit(
        self,
        sub: int,
        raw: Array,
        budget: float,
        dist: float,
        smag: Array,
        previous: SplineTrack | None = None,
    ) -> SplineTrack:
        raw = np.ascontiguousarray(raw, dtype=np.float64)  # one compiled kernel per shape
        smag = np.ascontiguousarray(smag, dtype=np.float64)
        shares = QUANT_SHARES if len(raw) > 2 else (1.0,)
        modes = (LINEAR, STEP, CUBIC)  # linear first: a tie (a knot at every sample) is linear
        exact = None
        if previous is not None and previous.hint:  # a later round, at a tighter budget:
            shares, modes = (previous.hint[0],), (previous.hint[1],)  # what won before
            exact = {previous.mode: [previous.keys]}
        best: tuple[float, SplineTrack] | None = None
        for share in shares:
            grid, signed, ints, err = choose_grid(sub, raw, dist, smag, share * budget)
            if exact is None:  # the exact samples' knots: the same for every share
                exact = _exact_knots(sub, signed, budget, dist, smag, self.keys)
            b = max(budget, err)
            for mode in modes:
                knots = exact.get(mode, [])
                for track in _tracks(mode, sub, signed, grid, ints, b, knots, dist, smag):
                    bits = cost(track)
                    if best is None or bits < best[0]:
                        best = (bits, replace(track, hint=(share, mode)))
            if err > share * budget:  # the finest grid misses already: no use trying more
                break
        assert best is not None
        return best[1]

    def evaluate(self, rep: SplineTrack, pos: Array, interpolation: str = "nlerp") -> Array:
        return rep.evaluate(pos)


def _exact_knots(
    sub: int, raw: Array, budget: float, dist: float, smag: Array, candidates: Array | None
) -> dict[int, list[Array]]:
    """Per mode, the knot sets through the exact samples: for each of EXACT_SHARES of the
    budget, the fewest knots (among the clip's key candidates first) whose segments fit
    within it, when they are few (KEYED_SHARE), refined (`_refine`). No CUBIC sets when a
    STEP or LINEAR set fits exactly (a keyed stepped or linear track: a cubic needs as many
    knots and tangents besides). The candidates themselves come first, as they are: keys
    close together are where a fit's own placement is in doubt."""
    anywhere = np.ones(len(raw), dtype=bool)
    masks = (anywhere,) if candidates is None else (candidates, anywhere)
    given = [] if candidates is None else [np.flatnonzero(candidates)]
    out: dict[int, list[Array]] = {}
    for mode in (STEP, LINEAR, CUBIC):
        placed: list[Array] = list(given)
        out[mode] = list(given)
        for share in EXACT_SHARES:  # every fit tight enough to find keys, each refined
            within = share * budget * KERNEL_SLACK
            for allowed in masks:  # the clip's keys first
                keys = fewest_knots(mode, sub, raw, raw, within, dist, smag, allowed)
                if 0 < len(keys) <= KEYED_SHARE * len(raw):
                    break
            if not 0 < len(keys) <= KEYED_SHARE * len(raw):
                break  # a tighter fit needs more knots still
            if any(np.array_equal(keys, p) for p in placed):
                continue
            placed.append(keys)
            keys = _refine(mode, sub, raw, keys, within, dist, smag)
            out[mode].append(keys)
            if mode != CUBIC:  # keyed in this mode when the curve through the keys is exact
                k = len(keys)
                ends = np.arange(k) == 0, np.arange(k) == k - 1
                tangents = knot_tangents(mode, 0, keys.astype(np.float64), raw[keys], *ends, None)
                e = curve_errors(mode, sub, raw, keys, raw[keys], *tangents, dist, smag)
                if e.max() <= SETTLED * within:
                    return out
    return out


def _tracks(
    mode: int,
    sub: int,
    raw: Array,
    grid: Grid,
    ints: Array,
    budget: float,
    exact: list[Array],
    dist: float,
    smag: Array,
) -> list[SplineTrack]:
    """The tracks in one mode within `budget` (none when the mode cannot hold it): one per
    knot set through the exact samples and one through the quantised samples (module
    docstring)."""
    vals = grid.values(ints)
    whole = budget * (PLACE_SHARE if mode == CUBIC else 1.0) * KERNEL_SLACK
    found: list[SplineTrack] = []
    for keys in [*exact, None]:
        if keys is None:  # through the quantised samples, unless a rule alone fits the keys
            if any(f.mode == CUBIC and f.extra is None for f in found):
                break
            keys = place_knots(mode, sub, raw, vals, whole, dist, smag)
        if any(np.array_equal(keys, f.keys) for f in found):
            continue
        if mode != CUBIC:
            track = SplineTrack(keys, mode, 0, grid, ints[keys])
            if track.errors(sub, raw, dist, smag).max() <= budget * KERNEL_SLACK:
                found.append(track)
            continue
        for _ in range(FIXUPS):
            cubic, missed = _tangents(sub, raw, vals, ints, grid, keys, budget, dist, smag)
            if cubic is not None:
                found.append(cubic)
                break
            keys = np.union1d(keys, best_splits(CUBIC, sub, raw, vals, keys, missed, dist, smag))
    return found


def _refine(
    mode: int, sub: int, raw: Array, keys: Array, within: float, dist: float, smag: Array
) -> Array:
    """Knots (K,) placed through the exact samples, made to hold `within` as a C1 curve
    (CUBIC; each segment was held on its own): while it misses somewhere, the knots around
    each segment it misses are moved where the curve fits best, or where that is not enough
    a knot is added where it fits best in each such segment (REFINES rounds); last every
    knot the curve does not need is removed. Knots inserted where the error needs them and
    removed where not; on a keyed clip, the keys."""
    if mode != CUBIC:
        return keys
    settled = SETTLED * within
    moved = False
    for _ in range(REFINES):
        m = c1_tangents(sub, raw, raw, keys)
        e = curve_errors(CUBIC, sub, raw, keys, raw[keys], m, m, dist, smag)
        missed = _missed(keys, e, within)
        if len(missed) == 0:
            break
        if not moved:  # move the knots around the misses first
            at = missed
            moved = True
        else:  # then add one in each segment missed, and move its neighbours
            added = best_splits(CUBIC, sub, raw, raw, keys, missed, dist, smag)
            keys = np.union1d(keys, added)
            at = np.searchsorted(keys, added)
            moved = False
        todo = np.zeros(len(keys), bool)
        for d in range(-SNAP, SNAP + 2):
            todo[np.clip(at + d, 0, len(keys) - 1)] = True
        keys = snap_knots(CUBIC, sub, raw, raw, keys, dist, smag, SNAP, settled, todo)
    return remove_knots(CUBIC, sub, raw, raw, keys, within, dist, smag)


def _tangents(
    sub: int,
    raw: Array,
    vals: Array,
    ints: Array,
    grid: Grid,
    keys: Array,
    budget: float,
    dist: float,
    smag: Array,
) -> tuple[SplineTrack | None, Array]:
    """A cubic track through `keys` within `budget`: a tangent rule alone when one holds
    (the cheapest), else the rule closest to the least-squares C1 tangents with corrections
    towards them at the knots of the segments the rule misses (at every knot if that is not
    enough), on the coarsest correction step that holds. None when even the fitted tangents
    miss, with the knot intervals (their left knots) they miss."""
    within = budget * KERNEL_SLACK
    kv = vals[keys]
    t = keys.astype(np.float64)
    first = np.arange(len(keys)) == 0
    last = np.arange(len(keys)) == len(keys) - 1
    fitted = c1_tangents(sub, raw, vals, keys)

    def errors(m: Array) -> Array:
        return curve_errors(CUBIC, sub, raw, keys, kv, m, m, dist, smag)

    options = []
    closest = None
    for rule, m in tangents_by_rule(t, kv, first, last).items():
        e = errors(m)
        if e.max() <= within:
            options.append(SplineTrack(keys, CUBIC, rule, grid, ints[keys]))
        miss = float(np.abs(fitted - m).sum())
        if closest is None or miss < closest[0]:
            closest = (miss, rule, e, m)
    if options:
        return min(options, key=cost), keys
    assert closest is not None
    _, rule, e, base = closest
    residual = fitted - base
    e_fit = errors(fitted)
    if e_fit.max() > within:
        return None, _missed(keys, e_fit, within)
    span = np.clip(np.searchsorted(keys, np.flatnonzero(e > within), side="right") - 1, 0, None)
    near = np.zeros(len(keys), bool)
    near[span] = True
    near[np.minimum(span + 1, len(keys) - 1)] = True
    # a correction rounded by half a step moves a segment of h samples by at most
    # BASIS h step / 2 per component at each end
    gap = float(np.diff(keys).max()) if len(keys) > 1 else 1.0
    reach = BASIS * gap * np.sqrt(raw.shape[1]) * _unit(sub, dist, smag)
    start = max((within - float(e_fit.max())) / reach, 1e-30)
    for mask in (near, np.ones(len(keys), bool)):
        step = start
        for _ in range(HALVINGS):
            s = float(np.float32(step))
            extra = np.where(mask[:, None], np.rint(residual / s), 0).astype(np.int64)
            if errors(base + extra * s).max() <= within:
                return SplineTrack(keys, CUBIC, rule, grid, ints[keys], extra, s), keys
            step *= 0.5
    return None, _missed(keys, e_fit, within)


def _unit(sub: int, dist: float, smag: Array) -> float:
    """How far a shell point moves per unit of a component's change (survey.track_error)."""
    if sub == ROT:
        return 2.0 * dist * max(float(smag.max()), 1e-12)
    if sub == SC:
        return dist
    return 1.0


def _missed(keys: Array, e: Array, budget: float) -> Array:
    """The knot intervals (their left knots' indices) where the error `e (S,)` is over."""
    bad = np.flatnonzero(e > budget)
    return np.unique(np.clip(np.searchsorted(keys, bad, side="right") - 1, 0, len(keys) - 2))
