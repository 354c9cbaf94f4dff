"""keyreduce: every sub-track keeps the fewest source samples as keys that linear
interpolation between them holds within the track's budget; the budgets come from the
object-space shell error of the whole clip (codec.codecs.survey.fitting.fit_clip), so the error is
measured through the hierarchy, not per track against a fixed threshold.

Key choice: from each key, the next one is the farthest sample such that the line between
the two quantised keys stays within the budget at every sample between, measured on the
joint's dominant shell: every span up to TABLE_SPAN is tested in one batch (a longer span
can hold where a shorter one fails), longer ones by doubling, then bisecting. The
quantisation is chosen first: the fewest bits whose error is within a share of the budget;
several shares are tried and the cheapest track (estimated stream bits) is kept.

Compression time: per track S TABLE_SPAN^2 / 2 point errors in batches (half the spans on
clips over LONG_CLIP samples) plus O(log L) more where a gap is longer, per quantisation share,
times at most MAX_ROUNDS budget rounds for the chains that fail in object space.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from codec.codecs.base import Encoded
from codec.codecs.keyreduce import layout
from codec.codecs.survey.fitting import checked_encoding, fit_clip
from codec.codecs.survey.keyed import KeyedTrack, keyed_cost, keyed_track
from codec.codecs.survey.local_error import choose_bits, track_error
from codec.model.clip import Clip, Skeleton
from codec.settings import CompressionSettings

Array = np.ndarray
QUANT_SHARES = (0.1, 0.3, 0.6)  # parts of a track's budget its quantisation may take
MAX_GAP = 4096  # samples between two keys, at most
TABLE_SPAN = 16  # spans tested at once from every key
LONG_CLIP = 1000  # samples beyond which half the spans are tabled (time)
ROW_BATCH = 65536  # (key, inner sample) pairs per batch


def _triangle(longest: int) -> tuple[Array, Array, Array]:
    """For spans L = 2..longest, every inner sample m (1..L-1): span (P,), m (P,) and the
    first row of each span (longest - 1,), for np.maximum.reduceat."""
    spans = np.concatenate([np.full(n - 1, n) for n in range(2, longest + 1)]).astype(np.int64)
    inner = np.concatenate([np.arange(1, n) for n in range(2, longest + 1)]).astype(np.int64)
    starts = (np.cumsum([n - 1 for n in range(2, longest + 1)]) - np.arange(1, longest)).astype(
        np.int64
    )
    return spans, inner, starts


def spans_within(
    sub: int, raw: Array, vals: Array, budget: float, dist: float, smag: Array, tri
) -> Array:
    """ok (S, L + 1) bool for every key a and span L up to the triangle's longest: the line
    from a to a + L holds every sample between within the budget. Every (key, span, inner
    sample) triple is evaluated, in batches of rows, so no span is skipped because a shorter
    one failed (nlerp in-betweens: a line across two keys holds where a line to a sample
    between them does not)."""
    spans, inner, starts = tri
    S = len(raw)
    longest = len(starts) + 1
    ok = np.zeros((S, longest + 1), dtype=bool)
    ok[:, 1] = True
    rows = max(1, ROW_BATCH // max(len(spans), 1))
    for lo in range(0, S - 2, rows):
        a = np.arange(lo, min(lo + rows, S - 2))
        b = a[:, None] + spans[None, :]  # (R, P)
        valid = b < S
        bc = np.minimum(b, S - 1)
        m = np.minimum(a[:, None] + inner[None, :], S - 1)
        alpha = (inner / spans)[None, :, None]
        approx = vals[a][:, None] + (vals[bc] - vals[a][:, None]) * alpha
        err = track_error(sub, raw[m], approx, dist, smag[m])
        err = np.where(valid, err, np.inf)
        worst = np.maximum.reduceat(err, starts, axis=1)  # (R, longest - 1)
        ok[a, 2:] = worst <= budget
    return ok


def reduce_keys(
    sub: int, raw: Array, vals: Array, budget: float, dist: float, smag: Array
) -> Array:
    """Key indices (K,) of a track: from each key, the farthest next key whose line holds
    (every span up to TABLE_SPAN tested at once, then doubling and bisection beyond)."""
    S = len(raw)
    longest = max(min(TABLE_SPAN if S <= LONG_CLIP else TABLE_SPAN // 2, S - 1), 1)
    table = None
    if longest > 1:
        table = spans_within(sub, raw, vals, budget, dist, smag, _triangle(longest))

    def ok(a: int, b: int) -> bool:
        alpha = (np.arange(a, b + 1) - a) / (b - a)
        approx = vals[a] + (vals[b] - vals[a]) * alpha[:, None]
        err = track_error(sub, raw[a : b + 1], approx, dist, smag[a : b + 1])
        return bool(err.max() <= budget)

    keys = [0]
    a = 0
    while a < S - 1:
        reach = min(longest, S - 1 - a)
        good = a + 1 if table is None else a + int(np.flatnonzero(table[a, 1 : reach + 1])[-1]) + 1
        if good == a + longest and good < S - 1:
            step, bad = 2 * longest, None
            while True:
                b = min(a + step, S - 1, a + MAX_GAP)
                if b == good:
                    break
                if ok(a, b):
                    good = b
                    if b == S - 1 or b == a + MAX_GAP:
                        break
                    step *= 2
                else:
                    bad = b
                    break
            if bad is not None:
                lo, hi = good, bad
                while hi - lo > 1:
                    mid = (lo + hi) // 2
                    if ok(a, mid):
                        lo = mid
                    else:
                        hi = mid
                good = lo
        keys.append(good)
        a = good
    return np.asarray(keys, dtype=np.int64)


class KeyFitter:
    """survey.TrackFitter of linear keys."""

    def fit(
        self,
        sub: int,
        raw: Array,
        budget: float,
        dist: float,
        smag: Array,
        previous: KeyedTrack | None = None,
    ) -> KeyedTrack:
        best = None
        shares = QUANT_SHARES if len(raw) > 2 else (1.0,)
        if previous is not None and previous.hint:
            shares = previous.hint  # a later round: the share that won before
        for share in shares:
            q, err = choose_bits(sub, raw, dist, smag, share * budget)
            keys = (
                reduce_keys(sub, raw, q.values(), max(budget, err), dist, smag)
                if len(raw) > 1
                else np.zeros(1, np.int64)
            )
            cost = keyed_cost(q, keys)
            if best is None or cost < best[0]:
                best = (cost, keys, q, share)
            if err > share * budget:  # even the widest quantisation is over: no use trying more
                break
        assert best is not None
        _, keys, q, share = best
        return keyed_track(q, keys, (share,))

    def evaluate(self, rep: KeyedTrack, pos: Array, interpolation: str = "nlerp") -> Array:
        return layout.lerp_keys(rep, rep.values(), pos)


class KeyReduceCodec:
    name = "keyreduce"
    description = "per-track linear key reduction with time markers, error-driven in object space"
    codec_id = 2

    def encode(
        self,
        clip: Clip,
        settings: CompressionSettings,
        progress: Callable[[float, str], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> Encoded:
        t0 = time.perf_counter()
        clip = settings.apply(clip)
        fitted = fit_clip(clip, KeyFitter(), progress, cancelled)
        payload = layout.write(clip, fitted.kinds, fitted.fixed, fitted.reps)
        keys = [t.keys for t in fitted.reps.values()]
        return checked_encoding(
            clip,
            payload,
            layout.read,
            fitted,
            t0,
            num_keys=int(sum(len(k) for k in keys)),
            num_key_times=int(len(np.unique(np.concatenate(keys)))) if keys else 0,
        )

    def decode(self, payload: bytes, skeleton: Skeleton) -> layout.KeyDecoder:
        return layout.read(payload, skeleton)
