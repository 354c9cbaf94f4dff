"""`compress`: a clip through the chosen codec, then measured the same way for every codec.

registry codec -> encode (payload, decoder, details) -> the .ssc container -> measurement
of the decoder against the raw clip -> Result. A `Compression` keeps one clip's encoder
between calls when the codec offers one (acl-style reuses its solved segments), which is
what the window's re-tuning loop runs on.

Skin-strict (settings.skin_strict) wraps the codec in rounds that measure the true skin error
and tighten per-joint precisions where a vertex is over its budget; codecs never know.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from codec.codecs import container, registry
from codec.codecs.base import Encoded, Progress
from codec.errors import Cancelled, SettingsError
from codec.measure import skin_budget
from codec.measure.measure import RawPoses, between_errors, measure
from codec.measure.mesh_shells import with_mesh_shells
from codec.model.clip import Clip, Skeleton
from codec.model.mesh import skin_of
from codec.result import Result
from codec.settings import CompressionSettings

__all__ = ["Compression", "compress"]

SKIN_ROUNDS = 8  # skin-strict encodings at most (three or four reach the budget on real clips)


def compress(
    clip: Clip,
    settings: CompressionSettings | None = None,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
) -> Result:
    """Compress `clip` with `settings.codec` (`auto`: the smallest strict encoding of every
    codec) and measure it. Raises Cancelled when `cancel()` is True."""
    return Compression(clip).run(settings, progress, cancel)


class Compression:
    """Compresses one clip under changing settings (and per-joint skeletons)."""

    def __init__(self, clip: Clip, fixed: Any = None) -> None:
        """`fixed`: a codec object used, when settings name it, instead of the registry's
        codec of that name (ACL's output read from a file: codec.codecs.acl21.AclOutput)."""
        self.clip = clip
        self.fixed = fixed
        self._sessions: dict[tuple[str, int], Any] = {}
        self._cleaning: tuple[float, Clip, dict[str, Any]] | None = None
        self._source = clip  # what sessions encode: the clip, or its cleaned samples
        self._raw_poses = RawPoses()  # every run measures against the same raw clip

    @property
    def segments_solved(self) -> int:
        """How many segments acl-style's last run optimised (not reused); 0 otherwise."""
        return sum(getattr(s, "segments_solved", 0) for s in self._sessions.values())

    def run(
        self,
        settings: CompressionSettings | None = None,
        progress: Progress | None = None,
        cancel: Callable[[], bool] | None = None,
        skeleton: Skeleton | None = None,
    ) -> Result:
        """Encode and measure; `skeleton` gives other per-joint precisions and shell
        distances (the same joints, parents and bind pose)."""
        settings = settings or CompressionSettings()
        codecs = registry.chosen(settings.codec, self.clip)
        if self.fixed is not None and settings.codec == self.fixed.name:
            codecs = (self.fixed,)
        source, cleaning = self._cleaned(settings.clean_defaults)
        self._source = source
        clip = source if skeleton is None else source.with_skeleton(skeleton)
        clip = settings.apply(clip)
        start = time.perf_counter()
        strict_skin: dict[str, Any] | None = None
        if settings.skin_strict:
            clip, codec, encoded, strict_skin = self._skin_strict(
                clip, settings, codecs, progress, cancel
            )
        else:
            codec, encoded = self._encode(clip, settings, codecs, progress, cancel, skeleton)
        seconds = time.perf_counter() - start
        frame = container.write(
            codec.codec_id, encoded.payload, clip.skeleton if settings.include_metadata else None
        )
        sizes = (frame.compressed_size, len(frame.data))
        measuring = settings
        if settings.skin_strict and not settings.skin_error:  # the promise must be measured
            measuring = dataclasses.replace(settings, skin_error=True)
        measured = measure(
            clip, encoded.decoder, measuring, sizes, seconds, encoded.details, self._raw_poses
        )
        if strict_skin is not None:
            measured.stats["skin_strict"] = _skin_strict_stats(strict_skin, measured, clip)
        if cleaning is not None:
            measured.stats["default_cleaning"] = cleaning
        return Result(
            clip=clip,
            settings=settings,
            codec_name=codec.name,
            data=frame.data,
            decoder=encoded.decoder,
            measurements=measured,
            costs=encoded.costs,
            details=encoded.details,
        )

    def _encode(
        self,
        clip: Clip,
        settings: CompressionSettings,
        codecs: list[Any],
        progress: Progress | None,
        cancel: Callable[[], bool] | None,
        skeleton: Skeleton | None,
    ) -> tuple[Any, Encoded]:
        """The chosen codec's encoding (under `auto`, the smallest strict one of every codec,
        its details saying which won and what the others cost). `clip` is the clip as given
        (settings applied); `skeleton` what a codec's session gets for it."""
        best: tuple[tuple[bool, bool, int], Any, Encoded] | None = None
        tried: dict[str, dict[str, Any]] = {}
        for codec in codecs:  # one, or every codec under `auto`
            session = self._session(codec, self._source)
            started = time.perf_counter()
            if session is not None:
                encoded = session.run(settings, progress, cancel, skeleton)
            else:
                encoded = codec.encode(clip, settings, progress, cancel)
            seconds = time.perf_counter() - started
            strict = bool(encoded.details.get("strict", True))
            size = container.HEADER_SIZE + len(encoded.payload)
            tried[codec.name] = {
                "compressed_size": size,
                "strict": strict,
                "compression_time": seconds,
            }
            between = strict and _follows_curves(clip, settings, encoded, len(codecs))
            if between is not None:
                tried[codec.name]["strict_between_samples"] = between
            rank = (not strict, between is False, len(encoded.payload))
            if best is None or rank < best[0]:
                best = (rank, codec, encoded)
        assert best is not None
        _, codec, encoded = best
        if len(codecs) > 1:  # auto: say which codec won and what the others cost
            auto = {"chosen": codec.name, "codecs": tried}
            encoded = dataclasses.replace(encoded, details={**encoded.details, "auto": auto})
        return codec, encoded

    def _skin_strict(
        self,
        clip: Clip,
        settings: CompressionSettings,
        codecs: list[Any],
        progress: Progress | None,
        cancel: Callable[[], bool] | None,
    ) -> tuple[Clip, Any, Encoded, dict[str, Any]]:
        """Skin-strict rounds (codec.measure.skin_budget): shells from the mesh, then encode,
        measure every vertex at the samples and tighten the precision of the joints that
        move a vertex over its budget, until none is or SKIN_ROUNDS have run. Every codec
        takes part through per-joint precisions alone. Returns the clip to measure (the
        user's precisions, shells from the mesh), the codec, its encoding and what the
        rounds did."""
        skin = skin_of(clip.meshes)
        if skin is None:
            raise SettingsError(
                f"{clip.name or 'clip'}: skin-strict needs a skinned mesh and the clip has none "
                "(glTF, FBX and USD files with a skin have one)"
            )
        clip = with_mesh_shells(clip)
        user = clip.skeleton.precision
        budget = skin_budget.vertex_budget(skin, user)
        inner = settings.skeleton_values()
        precision = user.copy()
        rounds: list[dict[str, Any]] = []
        while True:
            sk = clip.skeleton.with_settings(precision=precision)
            told = _round_progress(progress, len(rounds) + 1) if rounds else progress
            codec, encoded = self._encode(
                clip.replace(skeleton=sk), inner, codecs, told, cancel, sk
            )
            lossy = encoded.decoder.decode_source(clip.name)
            error = skin_budget.sample_vertex_error(clip, lossy, skin)
            over = int(np.sum(skin_budget.over_budget(error, budget)))
            rounds.append(
                {
                    "compressed_size": container.HEADER_SIZE + len(encoded.payload),
                    "vertex_max_error": float(error.max()),
                    "vertices_over": over,
                }
            )
            if over == 0 or len(rounds) >= SKIN_ROUNDS:
                break
            if cancel is not None and cancel():
                raise Cancelled("compression cancelled")
            precision = skin_budget.tightened(precision, skin, error, budget)
        return clip, codec, encoded, {"rounds": rounds, "precision": precision, "user": user}

    def _cleaned(self, tolerance: float) -> tuple[Clip, dict[str, Any] | None]:
        """The clip with its near-default sub-tracks snapped (codec.default_cleaning; the
        clip itself at tolerance 0) and what changed, kept per tolerance."""
        if tolerance <= 0.0:
            return self.clip, None
        if self._cleaning is None or self._cleaning[0] != tolerance:
            from codec.default_cleaning import clean

            self._cleaning = (tolerance, *clean(self.clip, tolerance))
        return self._cleaning[1], self._cleaning[2]

    def _session(self, codec: Any, source: Clip | None = None) -> Any:
        """The codec's encoder of this clip (or of `source`, its cleaned samples), kept
        between runs, when it has one."""
        make = getattr(codec, "session", None)
        if make is None:
            return None
        source = self.clip if source is None else source
        key = (codec.name, id(source))
        if key not in self._sessions:
            self._sessions = {k: v for k, v in self._sessions.items() if k[1] == id(source)}
            self._sessions[key] = make(source)
        return self._sessions[key]


def _round_progress(progress: Progress | None, n: int) -> Progress | None:
    """The codec's progress, its message saying which skin-strict round it belongs to."""
    if progress is None:
        return None
    report = progress

    def told(fraction: float, message: str) -> None:
        report(fraction, f"skin-strict round {n}: {message}")

    return told


def _skin_strict_stats(rounds: dict[str, Any], measured: Any, clip: Clip) -> dict[str, Any]:
    """The stats of a skin-strict run: whether the skin met its budgets (measured on the
    result, as every other number), its worst vertex against its budget, and the rounds."""
    ve = measured.vertex_error
    share = ve.vertex_max / ve.precision
    v = int(np.argmax(share))
    tighter = rounds["precision"] < rounds["user"]
    return {
        "on": True,
        "met": bool(np.all(ve.vertex_max <= ve.precision)),
        "vertex_max_error": float(np.max(ve.vertex_max)),
        "worst_share": float(share[v]),
        "worst_vertex": v,
        "worst_vertex_error": float(ve.vertex_max[v]),
        "worst_vertex_budget": float(ve.precision[v]),
        "rounds": len(rounds["rounds"]),
        "round_sizes": [r["compressed_size"] for r in rounds["rounds"]],
        "tightened_joints": [clip.skeleton.names[j] for j in np.flatnonzero(tighter)],
        "tightest_scale": float(np.min(rounds["precision"] / rounds["user"])),
    }


def _follows_curves(
    clip: Clip, settings: CompressionSettings, encoded: Encoded, candidates: int
) -> bool | None:
    """Under `auto`, for a clip that carries the file's own curves: whether the encoding
    keeps every joint within its precision between samples too, against those curves (at
    `settings.supersample` times per interval). A game samples at its own frame times, and a
    tech animator keying in a DCC tool expects what plays between two frames to be the curve
    the file holds, not a pop: an encoding that does so ranks before a smaller one that
    does not. None: not measured (one codec, no curves, no supersampling)."""
    if candidates < 2 or clip.curves is None or settings.supersample < 1:
        return None
    errors = between_errors(clip, encoded.decoder, settings.supersample)[1].max(axis=0)
    bound = clip.skeleton.precision * (1.0 + 1e-6)  # float32 errors: their rounding
    return bool(np.all(errors <= bound))
