"""authored: the file's own curves, as they are. A glTF or USD clip keeps its keys and their
interpolation (glTF LINEAR / STEP / CUBICSPLINE, USD time samples); this codec stores those
keys quantised and reads them as the file does, so between samples the lossy clip follows
the file's curve (slerp, Hermite) where other codecs blend samples. Tracks the file gives no
curve for are stored as their samples, read linearly.

Budgets come from the object-space shell error of the whole clip (codec.codecs.survey
.fit_clip), strict at every sample like every codec; per track the coarsest value step that
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
from codec.model.clip import Clip, Skeleton
from codec.settings import CompressionSettings


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
        fitter = AuthoredFitter(sources, clip.sample_rate, clip.num_samples)
        fitted = fit_clip(clip, fitter, progress, cancelled)
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
        )

    def decode(self, payload: bytes, skeleton: Skeleton) -> layout.AuthoredDecoder:
        return layout.read(payload, skeleton)
