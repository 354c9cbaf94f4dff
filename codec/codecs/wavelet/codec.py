"""wavelet: the survey's signal-processing codec (Daubechies D4, as on Thief, 2014).

Per animated sub-track: an offset per component (the middle of its range, float32) is taken
off, the track is cut into blocks of 16 and transformed (transform.py), and the coefficients
quantised with one step per track, finer for lower sub-bands (layout.py). The step is the
largest (bisected on a log scale, float32 as stored) whose rebuilt track stays within the
track's local budget on the joint's dominant shell; the budgets come from the object-space
shell error of the whole clip (codec.codecs.survey.fitting.fit_clip). Entropy coding: zigzag
varints, then deflate or LZMA2 of the whole body (codec.codecs.survey.byte_io.seal).

Compression time: per track STEP_ITERATIONS forward-quantise-inverse passes (one matrix
product over all blocks each), times the budget rounds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from codec.codecs.base import Encoded
from codec.codecs.survey.fitting import checked_encoding, fit_clip
from codec.codecs.survey.local_error import track_error
from codec.codecs.wavelet import layout
from codec.model.clip import Clip, Skeleton
from codec.settings import CompressionSettings

Array = np.ndarray
STEP_ITERATIONS = 30
MIN_STEP_SHARE = 2.0**-40  # the finest step tried, relative to the largest coefficient


class WaveletFitter:
    """survey.TrackFitter of quantised D4 coefficients: rep = (step, offset (C,), ints
    (C, blocks, 16))."""

    def __init__(self, num_samples: int) -> None:
        self.num_samples = num_samples

    def fit(
        self, sub: int, raw: Array, budget: float, dist: float, smag: Array, previous: object = None
    ) -> tuple:
        S = len(raw)
        offset = (0.5 * (raw.min(axis=0) + raw.max(axis=0))).astype(np.float32).astype(np.float64)
        coef = layout.coefficients(raw, offset)
        top = max(float(np.abs(coef).max()), 1e-30)
        scale = layout.STEP_SCALE

        def attempt(step: float) -> tuple[float, Array]:
            ints = np.rint(coef / (step * scale)).astype(np.int64)
            approx = layout.from_coefficients(ints, step, offset, S)
            return float(track_error(sub, raw, approx, dist, smag).max()), ints

        lo = np.log2(top * MIN_STEP_SHARE)
        hi = np.log2(top * 4.0)
        best = None
        for _ in range(STEP_ITERATIONS):
            mid = 0.5 * (lo + hi)
            step = float(np.float32(2.0**mid))
            err, ints = attempt(step)
            if err <= budget:
                best = (step, offset, ints)
                lo = mid
            else:
                hi = mid
        if best is None:  # the budget is below reach: the finest step
            step = float(np.float32(top * MIN_STEP_SHARE))
            best = (step, offset, attempt(step)[1])
        return best

    def evaluate(self, rep: tuple, pos: Array, interpolation: str = "nlerp") -> Array:
        step, offset, ints = rep
        values = layout.from_coefficients(ints, step, offset, ints.shape[1] * layout.BLOCK)
        S = self.num_samples
        values = values[:S]
        i = np.minimum(np.floor(pos).astype(np.int64), max(S - 2, 0))
        i1 = np.minimum(i + 1, S - 1)
        return values[i] + (values[i1] - values[i]) * (pos - i)[:, None]


class WaveletCodec:
    name = "wavelet"
    description = "Daubechies D4 per track in blocks of 16, finer steps for low sub-bands, deflated"
    codec_id = 4

    def encode(
        self,
        clip: Clip,
        settings: CompressionSettings,
        progress: Callable[[float, str], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> Encoded:
        t0 = time.perf_counter()
        clip = settings.apply(clip)
        fitted = fit_clip(clip, WaveletFitter(clip.num_samples), progress, cancelled)
        payload = layout.write(clip, fitted.kinds, fitted.fixed, fitted.reps)
        nonzero = sum(int(np.count_nonzero(r[2])) for r in fitted.reps.values())
        return checked_encoding(
            clip, payload, layout.read, fitted, t0, num_nonzero_coefficients=nonzero
        )

    def decode(self, payload: bytes, skeleton: Skeleton) -> layout.WaveletDecoder:
        return layout.read(payload, skeleton)
