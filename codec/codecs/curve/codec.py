"""curve: every sub-track is a curve through some of its source samples (the knots), as an
animator's tool keys it: stepped, linear, or cubic with the tangents of a tool's tangent rule
(flat, Catmull-Rom, auto, clamped) or fitted by least squares, knots placed where the error
needs them; budgets come from the object-space shell error of the whole clip
(codec.codecs.survey.fitting.fit_clip).

Per track (codec.codecs.curve.fitter): the samples are quantised on the coarsest uniform grid
a share of the budget allows (rotations by three components when one stays away from zero);
for each mode the knots go where each segment is as long as the budget lets it be
(codec.codecs.curve.placement: on a keyed clip, the keys); a cubic track keeps a tangent rule
alone when it holds, or the rule plus a quantised correction per knot; the cheapest in
estimated bits wins. Everything measured is what decodes: knots hold quantised values.
Then the object-space slack the budgets left is spent (codec.codecs.curve.allocation): each
rotation aimed under its lossy parent and value grids coarsened greedily, parents first,
while every joint holds its precision, and again without aiming, the most bits saved first;
the smallest kept when its bytes are smaller and strict. Last the constant rotations and
translations are rounded to short binary fractions while every joint holds (their float32
bytes end in zeros the entropy coding packs).

Compression time: per track and quantisation share, three knot placements (compiled, O(L^2)
per knot for segments of L samples) and a few whole-track evaluations (O(S) numpy each),
times the budget rounds; the slack pass, a few whole-track evaluations and subtree errors
per track.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from codec.codecs.base import Encoded
from codec.codecs.curve import layout
from codec.codecs.curve.allocation import rounded_constants, spend_slack
from codec.codecs.curve.fitter import KEYED_SHARE, CurveFitter
from codec.codecs.curve.keys import clip_keys
from codec.codecs.curve.tangents import MODES, RULES
from codec.codecs.survey.fitting import (
    STRICT_MARGIN,
    checked_encoding,
    continuous_rotations,
    fit_clip,
    strict_check,
)
from codec.model.clip import Clip, Skeleton
from codec.settings import CompressionSettings


class CurveCodec:
    name = "curve"
    description = (
        "per-track stepped, linear or cubic curves as animators key them, knots and "
        "tangents fitted where the object-space error needs them"
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
        keys = clip_keys(clip, KEYED_SHARE)
        fitted = fit_clip(clip, CurveFitter(keys), progress, cancelled)
        payload = layout.write(clip, fitted.kinds, fitted.fixed, fitted.reps)
        if fitted.strict and fitted.reps:  # the slack the budgets left, spent (allocation)
            limit = clip.skeleton.precision * STRICT_MARGIN
            raws = (continuous_rotations(clip), clip.translations, clip.scales)
            start = fitted
            for compensate in (True, False):  # the smaller of the two, strict from the bytes
                spent = spend_slack(clip, raws, start.fixed, start.reps, limit, compensate)
                smaller = layout.write(clip, start.kinds, start.fixed, spent)
                held = strict_check(clip, layout.read(smaller, clip.skeleton))[1]
                if len(smaller) < len(payload) and held:
                    payload, fitted = smaller, replace(start, reps=spent)
        if fitted.strict:  # the slack left, on the constants' bytes (allocation)
            limit = clip.skeleton.precision * STRICT_MARGIN
            fixed = rounded_constants(clip, fitted.kinds, fitted.fixed, fitted.reps, limit)
            if fixed is not fitted.fixed:
                smaller = layout.write(clip, fitted.kinds, fixed, fitted.reps)
                held = strict_check(clip, layout.read(smaller, clip.skeleton))[1]
                if len(smaller) < len(payload) and held:
                    payload, fitted = smaller, replace(fitted, fixed=fixed)
        reps = list(fitted.reps.values())
        modes = {m: sum(t.mode == i for t in reps) for i, m in enumerate(MODES)}
        rules = {r: sum(t.mode == 2 and t.rule == i for t in reps) for i, r in enumerate(RULES)}
        return checked_encoding(
            clip,
            payload,
            layout.read,
            fitted,
            t0,
            num_knots=int(sum(len(t.keys) for t in reps)),
            num_knot_times=int(len(np.unique(np.concatenate([t.keys for t in reps]))))
            if reps
            else 0,
            track_modes=modes,
            tangent_rules=rules,
            tangent_corrections=int(sum(t.extra is not None for t in reps)),
            key_candidates=int(keys.sum()) if keys is not None else 0,
        )

    def decode(self, payload: bytes, skeleton: Skeleton) -> layout.CurveDecoder:
        return layout.read(payload, skeleton)
