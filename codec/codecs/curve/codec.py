"""curve: every sub-track is a Catmull-Rom spline through some of its source samples (the
knots), with knots added where the error needs them; budgets come from the object-space
shell error of the whole clip (codec.codecs.survey.fit_clip).

Knot placement, per track: start from evenly spaced knots (every k-th sample and the last,
for each k of SPACINGS at the first quantisation share, the winning k at the others:
hand-keyed clips are keyed on such a grid), then repeatedly add, in
every span between two knots where some sample is over the budget, a knot at that span's
worst sample, until every sample is within; keep the k that needs the fewest knots. The
quantisation is chosen first (the fewest bits within a share of the budget; several shares
are tried, the cheapest track in bits is kept) and the knots hold quantised values, so what
is measured is what decodes.

Least-squares B-splines were not built: an interpolating spline keeps each knot's error at
the quantisation's and every change local to four spans, which the refinement needs.

Compression time: per track, at most len(SPACINGS) x len(QUANT_SHARES) refinements of a few
whole-track evaluations (O(S) numpy each), times the budget rounds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from codec.codecs.base import Encoded
from codec.codecs.curve import layout
from codec.codecs.survey import (
    KeyedTrack,
    checked_encoding,
    choose_bits,
    fit_clip,
    keyed_cost,
    keyed_track,
    track_error,
)
from codec.model.clip import Clip, Skeleton
from codec.settings import CompressionSettings

Array = np.ndarray
QUANT_SHARES = (0.1, 0.3, 0.6)  # parts of a track's budget its quantisation may take
SPACINGS = (1, 2, 3, 4, 5, 6, 8, 12, 16, 24)  # first knot grids tried, in this order
GIVE_UP = 1.5  # a grid needing this many times the fewest knots so far ends the tries


def grid(num_samples: int, spacing: int) -> Array:
    keys = np.arange(0, num_samples, spacing)
    return keys if keys[-1] == num_samples - 1 else np.append(keys, num_samples - 1)


def refine(
    sub: int, raw: Array, vals: Array, knots: Array, budget: float, dist: float, smag: Array
) -> Array:
    """Knots (K,) after adding, span by span, the worst sample over the budget."""
    pos = np.arange(len(raw), dtype=np.float64)
    while True:
        t = KeyedTrack(knots, None)  # type: ignore[arg-type]
        e = track_error(sub, raw, layout.hermite(t, vals[knots], pos), dist, smag)
        e[knots] = 0.0  # a knot holds its quantised value: nothing to add there
        bad = np.flatnonzero(e > budget)
        if len(bad) == 0:
            return knots
        span = np.searchsorted(knots, bad, side="right") - 1
        order = np.lexsort((-e[bad], span))
        _, first = np.unique(span[order], return_index=True)
        knots = np.union1d(knots, bad[order][first])


class CurveFitter:
    """survey.TrackFitter of Catmull-Rom knots."""

    def fit(
        self,
        sub: int,
        raw: Array,
        budget: float,
        dist: float,
        smag: Array,
        previous: KeyedTrack | None = None,
    ) -> KeyedTrack:
        S = len(raw)
        best = None
        shares = QUANT_SHARES if S > 2 else (1.0,)
        starts: list = list(SPACINGS)
        best_start: int | Array = 1
        if previous is not None and previous.hint:
            # a later round, at a tighter budget: the winning share, and its knots to add to
            shares = (previous.hint[0],)
            starts = [previous.keys]
        for share in shares:
            q, err = choose_bits(sub, raw, dist, smag, share * budget)
            vals = q.values()
            b = max(budget, err)
            fewest = S + 1
            for k in starts:
                if isinstance(k, int) and k > 1 and k >= S:
                    break
                first = grid(S, k) if isinstance(k, int) else k
                knots = (
                    refine(sub, raw, vals, first, b, dist, smag) if S > 1 else np.zeros(1, np.int64)
                )
                cost = keyed_cost(q, knots)
                if best is None or cost < best[0]:
                    best = (cost, knots, q, share)
                    best_start = k
                if len(knots) > GIVE_UP * fewest:
                    break  # coarser grids only add refinement on this track
                fewest = min(fewest, len(knots))
            if err > share * budget:
                break
            starts = [best_start]  # the other shares start from the grid that won
        assert best is not None
        _, knots, q, share = best
        return keyed_track(q, knots, (share,))

    def evaluate(self, rep: KeyedTrack, pos: Array, interpolation: str = "nlerp") -> Array:
        return layout.hermite(rep, rep.values(), pos)


class CurveCodec:
    name = "curve"
    description = (
        "per-track Catmull-Rom splines, knots added where the object-space error needs them"
    )
    codec_id = 3

    def encode(
        self,
        clip: Clip,
        settings: CompressionSettings,
        progress: Callable[[float, str], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> Encoded:
        t0 = time.perf_counter()
        clip = settings.apply(clip)
        fitted = fit_clip(clip, CurveFitter(), progress, cancelled)
        payload = layout.write(clip, fitted.kinds, fitted.fixed, fitted.reps)
        knots = sum(len(t.keys) for t in fitted.reps.values())
        return checked_encoding(clip, payload, layout.read, fitted, t0, num_knots=int(knots))

    def decode(self, payload: bytes, skeleton: Skeleton) -> layout.CurveDecoder:
        return layout.read(payload, skeleton)
