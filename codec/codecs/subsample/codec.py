"""subsample: the clip stored at the lowest uniform rate whose linear interpolation keeps
every joint within its precision in object space, also when that rate does not divide the
source rate (the stored samples then fall between source samples, and take the raw clip's
interpolated values there).

Search: the stored sample count M is bisected on the unquantised object-space error (the
whole clip rebuilt from M raw-interpolated samples, codec.measure.error_metric.clip_errors) with a
share of the precision left for quantisation, then a few smaller M are tried as well (the
error is not monotone in M: a count that lands on the source grid can beat a larger one).
At the chosen M every track is quantised within budgets driven by the object-space error
(codec.codecs.survey.fitting.fit_clip); if that fails M grows and the fit runs again.

Compression time: O(log S) object-space measures of the clip, then one fit (and rarely a
few more at a larger M).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from codec.codecs.base import Encoded
from codec.codecs.subsample import layout
from codec.codecs.survey.fitting import checked_encoding, continuous_rotations, fit_clip
from codec.codecs.survey.local_error import track_error
from codec.codecs.survey.streams import MAX_BITS, Quantised, dequantise, quantise, stored_range
from codec.measure.error_metric import clip_errors
from codec.model import quat
from codec.model.clip import Clip, Skeleton
from codec.settings import CompressionSettings

Array = np.ndarray
APPROX_SHARE = 0.7  # of each joint's precision, for the sub-sampling alone
SCAN_BELOW = 8  # smaller counts tried below the bisection's answer
FULL_TRY = 0.75  # above this share of S, every source sample is tried as well


def resample(values: Array, stored: int) -> Array:
    """(M, ...) values of a track (S, ..., C) at the stored positions (linear between
    source samples: the raw clip's own playback)."""
    S = len(values)
    pos = layout.stored_positions(S, stored)
    i = np.minimum(np.floor(pos).astype(np.int64), max(S - 2, 0))
    a = pos - i
    a = a.reshape(-1, *([1] * (values.ndim - 1)))
    if S == 1:
        return values[:1].copy()
    return values[i] + (values[np.minimum(i + 1, S - 1)] - values[i]) * a


def approx_errors(clip: Clip, rot: Array, stored: int) -> Array:
    """(J,) object-space errors of the clip rebuilt from `stored` unquantised samples."""
    S = clip.num_samples
    pos = np.arange(S, dtype=np.float64)
    parts = []
    for a in (rot, clip.translations, clip.scales):
        m = resample(a, stored)
        flat = m.reshape(stored, -1)
        parts.append(layout.interpolate(flat, S, pos).reshape(S, *a.shape[1:]))
    lossy = clip.replace(rotations=quat.normalize(parts[0]), translations=parts[1], scales=parts[2])
    return clip_errors(clip, lossy).max(axis=0)


class SubsampleFitter:
    """survey.TrackFitter at one stored sample count: only the bits are chosen per track."""

    def __init__(self, num_samples: int, stored: int) -> None:
        self.num_samples = num_samples
        self.stored = stored

    def fit(
        self, sub: int, raw: Array, budget: float, dist: float, smag: Array, previous: object = None
    ) -> Quantised:
        S = len(raw)
        m = resample(raw, self.stored)
        if sub == 0:
            m = m / np.linalg.norm(m, axis=-1, keepdims=True)
        # the bits: fewest whose rebuild of every source sample is within the budget
        lo, hi, wide = stored_range(m.min(axis=0), m.max(axis=0))
        pos = np.arange(S, dtype=np.float64)
        best = None
        for bits in range(1, MAX_BITS + 1):
            ints = quantise(m, lo, hi, bits)
            approx = layout.interpolate(dequantise(lo, hi, bits, ints), S, pos)
            best = Quantised(lo, hi, wide, bits, ints)
            if track_error(sub, raw, approx, dist, smag).max() <= budget:
                break
        assert best is not None
        return best

    def evaluate(self, rep: Quantised, pos: Array, interpolation: str = "nlerp") -> Array:
        return layout.interpolate(rep.values(), self.num_samples, pos)


class SubsampleCodec:
    name = "subsample"
    description = (
        "the lowest uniform sample rate that meets the budget (any rate, not only divisors)"
    )
    codec_id = 1

    def encode(
        self,
        clip: Clip,
        settings: CompressionSettings,
        progress: Callable[[float, str], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> Encoded:
        t0 = time.perf_counter()
        clip = settings.apply(clip)
        S = clip.num_samples
        prec = clip.skeleton.precision * APPROX_SHARE
        rot = continuous_rotations(clip)

        def fits(m: int) -> bool:
            return bool(np.all(approx_errors(clip, rot, m) <= prec))

        if S <= 2:
            stored = S
        else:
            lo, hi = 2, S  # hi always fits (every source sample)
            while hi - lo > 0:
                mid = (lo + hi) // 2
                if fits(mid):
                    hi = mid
                else:
                    lo = mid + 1
            stored = hi
            for m in range(hi - 1, max(1, hi - SCAN_BELOW), -1):
                if fits(m):
                    stored = m
        while True:
            fitted = fit_clip(clip, SubsampleFitter(S, stored), progress, cancelled)
            if fitted.strict or stored == S:
                break
            stored = min(S, max(stored + 1, int(stored * 1.15)))
        payload = layout.write(clip, fitted.kinds, fitted.fixed, fitted.reps, stored)
        if stored < S and stored > FULL_TRY * S:
            # a count just under S rarely pays: its samples leave the source grid, so every
            # one needs more bits; the full grid is tried too and the smaller kept
            full = fit_clip(clip, SubsampleFitter(S, S), progress, cancelled)
            other = layout.write(clip, full.kinds, full.fixed, full.reps, S)
            if full.strict and len(other) < len(payload):
                payload, fitted, stored = other, full, S
        rate = clip.sample_rate * (stored - 1) / (S - 1) if S > 1 else clip.sample_rate
        return checked_encoding(
            clip,
            payload,
            layout.read,
            fitted,
            t0,
            num_samples_stored=int(stored),
            sample_rate_stored=float(rate),
        )

    def decode(self, payload: bytes, skeleton: Skeleton) -> layout.SubsampleDecoder:
        return layout.read(payload, skeleton)
