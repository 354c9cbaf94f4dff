"""authored: the file's own curves, as they are. A glTF or USD clip keeps its keys and their
interpolation (glTF LINEAR / STEP / CUBICSPLINE, USD time samples); this codec stores those
keys quantised and reads them as the file does, so between samples the lossy clip follows
the file's curve (slerp, Hermite) where other codecs blend samples. Tracks the file gives no
curve for are stored as their samples, read linearly.

Budgets come from the object-space shell error of the whole clip (codec.codecs.survey
.fit_clip), strict at every sample like every codec, and here between samples too: the clip
is fitted at the settings' `supersample` poses per sample interval, the file's curves between
samples (`dense_clip`), where `auto` measures whether an encoding follows the file's curves
(Fox Run fitted at the samples alone: 0.0104 cm between them on a 0.01 cm precision). When
that cannot hold (a track the file gives no curve for, read by slerp where the reference
blends by nlerp), the fit at the samples alone. Per track the coarsest value step that
holds (codec.codecs.authored.fitter). Keys are never moved or dropped: what the file keyed
is what decodes. `auto` tries it on clips that carry curves.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from codec.codecs.authored import layout
from codec.codecs.authored.fitter import AuthoredFitter
from codec.codecs.authored.sources import INTERPOLATIONS, clip_sources
from codec.codecs.base import Encoded
from codec.codecs.survey.fitting import checked_encoding, fit_clip
from codec.measure.error_metric import between_keys
from codec.model.clip import Clip, Skeleton
from codec.model.sampling import clip_between
from codec.settings import CompressionSettings


def dense_clip(clip: Clip, every: int) -> Clip:
    """The clip at `every` poses per sample interval, ending on its last sample (N = (S - 1)
    every + 1 samples): between samples the file's own curves, as the error between
    samples is measured (codec.measure.error_metric.between_keys, model.sampling.clip_between)."""
    ks, alphas = between_keys(clip.num_samples, every)
    rot, tr, sc = clip_between(clip, ks, alphas)
    return Clip(clip.skeleton, clip.sample_rate * every, rot, tr, sc, clip.looping, clip.name)


class AuthoredCodec:
    name = "authored"
    description = (
        "the file's own keys and interpolation (glTF, USD), quantised, read as the file reads them"
    )
    codec_id = 5

    def suits(self, clip: Clip) -> bool:
        """Whether `auto` tries it: the clip carries the file's curves."""
        return clip.curves is not None

    def encode(
        self,
        clip: Clip,
        settings: CompressionSettings,
        progress: Callable[[float, str], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> Encoded:
        t0 = time.perf_counter()
        clip = settings.apply(clip)
        sources = clip_sources(clip)
        fitted = None
        every = settings.supersample
        if every > 1 and sources.tracks and clip.num_samples > 1 and clip.additive is None:
            dense = dense_clip(clip, every)
            fitter = AuthoredFitter(sources, dense.sample_rate, dense.num_samples, every)
            fitted = fit_clip(dense, fitter, progress, cancelled)
        between = fitted is not None and fitted.strict
        if not between:
            fitter = AuthoredFitter(sources, clip.sample_rate, clip.num_samples)
            fitted = fit_clip(clip, fitter, progress, cancelled)
        assert fitted is not None
        payload = layout.write(clip, fitted.kinds, fitted.fixed, fitted.reps, sources.timelines)
        reps = list(fitted.reps.values())
        own = [jk for jk in fitted.reps if jk in sources.tracks]
        return checked_encoding(
            clip,
            payload,
            layout.read,
            fitted,
            t0,
            num_keys=int(sum(len(t.ints) for t in reps)),
            file_curve_tracks=len(own),
            sampled_tracks=len(reps) - len(own),
            interpolations={i: sum(t.interpolation == i for t in reps) for i in INTERPOLATIONS},
            timelines=len({t.timeline for t in reps}),
            fitted_between_samples=between,
        )

    def decode(self, payload: bytes, skeleton: Skeleton) -> layout.AuthoredDecoder:
        return layout.read(payload, skeleton)
