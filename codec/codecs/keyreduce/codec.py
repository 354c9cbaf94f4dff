"""keyreduce: every sub-track keeps the fewest source samples as keys that linear
interpolation between them holds within the track's budget; the budgets come from the
object-space shell error of the whole clip (codec.codecs.survey.fit_clip), so the error is
measured through the hierarchy, not per track against a fixed threshold.

Key choice: from each key, the next one is the farthest sample (searched by doubling, then
bisecting) such that the line between the two quantised keys stays within the budget at
every sample between, measured on the joint's dominant shell. The quantisation is chosen
first: the fewest bits whose error is within a share of the budget; several shares are tried
and the cheapest track in bits is kept.

Compression time: per track O(K log L) small numpy evaluations (K keys, L the longest gap),
times at most MAX_ROUNDS budget rounds for the chains that fail in object space.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from codec.clip import Clip, Skeleton
from codec.codecs.base import Encoded
from codec.codecs.keyreduce import layout
from codec.codecs.survey import (
    KeyedTrack,
    Quantised,
    base_details,
    choose_bits,
    fit_clip,
    stream_cost,
    strict_check,
    track_error,
)
from codec.settings import CompressionSettings

Array = np.ndarray
QUANT_SHARES = (0.1, 0.3, 0.6)  # parts of a track's budget its quantisation may take
MAX_GAP = 4096  # samples between two keys, at most
TABLE_SPAN = 16  # spans tested for every key at once
PATIENCE = 4  # failed lengths in a row after which a key's longer lines are not tested


def spans_within(
    sub: int, raw: Array, vals: Array, budget: float, dist: float, smag: Array, longest: int
) -> Array:
    """ok (S, longest + 1) bool: the line from key a to key a + L holds every sample between
    within the budget (L = 1 always does). One batched evaluation per L, over the a whose
    line held at one of the PATIENCE shorter lengths (past PATIENCE failures in a row a key's
    longer lines are not tested; beyond the table a doubling search still finds long lines
    on a track that has them)."""
    S = len(raw)
    ok = np.zeros((S, longest + 1), dtype=bool)
    ok[:, :2] = True
    for span in range(2, longest + 1):
        a = np.flatnonzero(np.any(ok[: S - span, max(0, span - PATIENCE) : span], axis=1))
        if len(a) == 0:
            break
        m = np.arange(1, span)
        idx = a[:, None] + m[None, :]
        alpha = (m / span)[None, :, None]
        approx = vals[a][:, None] + (vals[a + span] - vals[a])[:, None] * alpha
        err = track_error(sub, raw[idx], approx, dist, smag[idx]).max(axis=1)
        ok[a, span] = err <= budget
    ok[:, 0] = False
    return ok


def reduce_keys(
    sub: int, raw: Array, vals: Array, budget: float, dist: float, smag: Array
) -> Array:
    """Key indices (K,) of a track: from each key, the farthest next key whose line holds
    (a table of every span up to TABLE_SPAN, then doubling and bisection beyond)."""
    S = len(raw)
    longest = min(TABLE_SPAN, S - 1)
    table = spans_within(sub, raw, vals, budget, dist, smag, longest)

    def ok(a: int, b: int) -> bool:
        if b - a <= longest:
            return bool(table[a, b - a])
        alpha = (np.arange(a, b + 1) - a) / (b - a)
        approx = vals[a] + (vals[b] - vals[a]) * alpha[:, None]
        err = track_error(sub, raw[a : b + 1], approx, dist, smag[a : b + 1])
        return bool(err.max() <= budget)

    keys = [0]
    a = 0
    while a < S - 1:
        reach = min(longest, S - 1 - a)
        good = a + int(np.flatnonzero(table[a, 1 : reach + 1])[-1]) + 1
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
            cost = stream_cost(q.ints[keys]) + len(keys)
            if best is None or cost < best[0]:
                best = (cost, keys, q, share)
            if err > share * budget:  # even the widest quantisation is over: no use trying more
                break
        assert best is not None
        _, keys, q, share = best
        return KeyedTrack(keys, Quantised(q.lo, q.hi, q.wide, q.bits, q.ints[keys]), (share,))

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
        decoder = layout.read(payload, clip.skeleton)
        errors, strict = strict_check(clip, decoder)
        keys = [len(t.keys) for t in fitted.reps.values()]
        details: dict[str, Any] = base_details(
            clip,
            payload,
            errors,
            strict,
            num_animated_tracks=len(keys),
            num_keys=int(sum(keys)),
            num_key_times=int(
                len(np.unique(np.concatenate([t.keys for t in fitted.reps.values()])))
            )
            if keys
            else 0,
            rounds=fitted.rounds,
            encode_time=time.perf_counter() - t0,
        )
        return Encoded(payload, decoder, details)

    def decode(self, payload: bytes, skeleton: Skeleton) -> layout.KeyDecoder:
        return layout.read(payload, skeleton)
