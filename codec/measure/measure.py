"""Measurement: any codec's decoder against the raw clip, the same way for every codec.

The error at every sample (rounding nearest: the decoded source samples), the error between
samples (supersampled, rounding none, through the decoder's `sample_times`, against the raw
clip as the file interpolates it: codec.model.sampling.clip_between), the true skin
error when the clip has meshes, and the statistics of all of it. A codec's own numbers come
in as its details and are merged into the stats; nothing here imports a codec.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from codec.errors import ShellscopeError
from codec.measure.error_metric import (
    array_errors,
    between_keys,
    clip_errors,
    errors_against,
    object_matrices,
)
from codec.measure.stats import build_stats, clip_warnings
from codec.measure.vertex_error import VertexError, skin_error, vertex_stats
from codec.model.sampling import clip_between

if TYPE_CHECKING:
    from codec.codecs.base import Decoder
    from codec.model.clip import Clip
    from codec.settings import CompressionSettings

Array = np.ndarray
BETWEEN_CHUNK = 4096  # poses measured at once between samples
RAW_KEEP = 1 << 19  # poses x joints of the raw clip a RawPoses keeps as matrices (50 MB each)


@dataclass(frozen=True, eq=False)
class Measurements:
    """What measuring one decoder against its raw clip gives.

    lossy     the decoded clip, aligned sample for sample with the raw one (S samples)
    error     (S, J) object-space error on each joint's own shell at every sample (nearest)
    error_between_times (N,) and error_between (N, J) float32: the error supersampled
              between samples with rounding none (empty when settings.supersample == 0)
    vertex_error the true skin error when the clip has meshes and settings.skin_error
    stats     ACL-named statistics (codec.measure.stats), the codec's details merged in
    """

    lossy: Clip
    error: Array
    error_between_times: Array
    error_between: Array
    vertex_error: VertexError | None
    stats: dict[str, Any]


class RawPoses:
    """The raw clip's object-space matrices between samples and at them, and its warnings,
    kept from one measurement to the next: they depend on the raw clip alone, not on the
    per-joint settings, so a session that compresses one clip again and again (the window's
    edits) blends, poses and checks it once.

    Matrices between samples (`matrices`) depend on the clip's arrays, its authored curves,
    its sample rate (the curves' time), the supersampling and the hierarchy; those at the
    samples (`sample_matrices`) on the arrays and the hierarchy. The arrays and curves are
    matched by identity (a clip never writes to its arrays and the key holds them, so an
    identity is never reused), the rest by value. They are kept while they are small
    (RAW_KEEP); longer clips are posed each time. Warnings (`warnings`) are kept for the
    very poses, skeleton, meshes and units they came from."""

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._chunks: dict[int, Array] = {}
        self._samples: tuple[tuple[object, ...], Array] | None = None
        self._warned: tuple[tuple[object, ...], list[str]] | None = None

    def warnings(self, clip: Clip) -> list[str]:
        """`clip_warnings(clip)`, kept while the clip's poses and meshes are the very same
        and its bind pose, hierarchy, units and reader warnings equal: the size check poses
        the skeleton (7 ms a run at 212 joints), and per-joint precisions and shells do not
        change its answer. The skeleton's arrays are compared by value: a precision edit
        gives the clip a new skeleton with copies of them."""
        sk = clip.skeleton
        arrays = (clip.rotations, clip.translations, clip.scales, clip.meshes)
        small = (sk.parents, sk.bind_rotations, sk.bind_translations, sk.bind_scales)
        values = (*(a.tobytes() for a in small), clip.units, tuple(clip.warnings))
        kept = self._warned
        if kept is not None and _same(kept[0], arrays, values):
            return list(kept[1])
        got = clip_warnings(clip)
        self._warned = ((*arrays, *values), list(got))
        return got

    def matrices(
        self, clip: Clip, supersample: int, lo: int, ks: Array, alphas: Array
    ) -> Array | None:
        """`object_matrices` (n, J, 12) of `clip_between(clip, ks, alphas)`, the chunk of
        poses starting at pose `lo` of `between_keys(S, supersample)`; None when the clip
        is too long to keep them (the caller then poses the raw clip itself)."""
        total = (clip.num_samples - 1) * supersample + 1  # every chunk's poses together
        if total * clip.num_joints > RAW_KEEP:
            return None
        arrays = (clip.rotations, clip.translations, clip.scales, clip.curves)
        values = (supersample, clip.sample_rate, clip.skeleton.parents.tobytes())
        key = self._key
        if not (key is not None and _same(key, arrays, values)):
            self._key = (*arrays, *values)
            self._chunks = {}
        got = self._chunks.get(lo)
        if got is None:
            raw = clip_between(clip, ks, alphas)
            got = object_matrices(raw, clip.skeleton.parents)
            self._chunks[lo] = got
        return got

    def sample_matrices(self, clip: Clip) -> Array | None:
        """`object_matrices` (S, J, 12) of the clip's samples; None when too long to keep."""
        if clip.num_samples * clip.num_joints > RAW_KEEP:
            return None
        arrays = (clip.rotations, clip.translations, clip.scales)
        values = (clip.skeleton.parents.tobytes(),)
        kept = self._samples
        if kept is not None and _same(kept[0], arrays, values):
            return kept[1]
        got = object_matrices(arrays, clip.skeleton.parents)
        self._samples = ((*arrays, *values), got)
        return got


def _same(key: tuple[object, ...], arrays: tuple[object, ...], values: tuple[object, ...]) -> bool:
    """Whether a kept key holds these very arrays and equal values."""
    n = len(arrays)
    return all(a is b for a, b in zip(key[:n], arrays, strict=True)) and key[n:] == values


def measure(
    clip: Clip,
    decoder: Decoder,
    settings: CompressionSettings,
    sizes: tuple[int, int],
    compression_time: float,
    details: dict[str, Any] | None = None,
    raw_poses: RawPoses | None = None,
) -> Measurements:
    """Measure `decoder` against `clip` (the raw clip the codec was given, per-joint
    settings applied); `sizes` the compressed size (container header and payload) and
    the file size; `raw_poses` keeps the raw clip's object-space matrices (between and at
    the samples) and warnings for the next measurement of the same clip."""
    lossy = decoder.decode_source(clip.name)
    if clip.looping and not lossy.looping:
        lossy = lossy.replace(looping=True)
    kept = None if raw_poses is None else raw_poses.sample_matrices(clip)
    error = clip_errors(clip, lossy, kept)
    if not np.all(np.isfinite(error)):  # the inputs are bounded: this is a codec bug
        raise ShellscopeError(
            f"{clip.name or 'clip'}: the {decoder.codec_name} decoder gave a non-finite error"
        )
    times, between = between_errors(clip, decoder, settings.supersample, raw_poses)
    stats = build_stats(
        clip,
        settings,
        error,
        times,
        between,
        decoder.codec_name,
        sizes,
        compression_time,
        warnings=None if raw_poses is None else raw_poses.warnings(clip),
    )
    # what was measured is the truth: a codec's details add keys, never replace one
    stats.update({k: v for k, v in (details or {}).items() if k not in stats})
    vertex_error = None
    if settings.skin_error:
        vertex_error = skin_error(clip, lossy, error, decoder, times, settings.supersample)
        if vertex_error is not None:
            stats.update(vertex_stats(vertex_error, clip))
    return Measurements(lossy, error, times, between, vertex_error, stats)


def between_errors(
    clip: Clip, decoder: Decoder, supersample: int, raw_poses: RawPoses | None = None
) -> tuple[Array, Array]:
    """Times (N,) and errors (N, J) float32 at `supersample` times per sample interval,
    rounding none, ending on the last sample: the raw clip (the file's own curves between
    samples where it has them, else blended as ACL does) against the decoder's own poses at
    those times. Float32 is plenty for a curve to look at and halves
    the largest table a result keeps; the bound is checked on the float64 errors at the
    samples. With `raw_poses` the raw side is posed once per clip and supersampling (its
    matrices kept), so a run poses only the lossy side: the same errors to the bit."""
    ks, alphas = between_keys(clip.num_samples, supersample)
    times = (ks + alphas) / clip.sample_rate
    out = np.empty((len(ks), clip.num_joints), dtype=np.float32)
    sk = clip.skeleton
    for lo in range(0, len(ks), BETWEEN_CHUNK):
        hi = min(lo + BETWEEN_CHUNK, len(ks))
        lossy = decoder.sample_times(times[lo:hi], "none")
        kept = (
            None
            if raw_poses is None
            else raw_poses.matrices(clip, supersample, lo, ks[lo:hi], alphas[lo:hi])
        )
        if kept is not None:  # the raw side posed once for every run: only the lossy one here
            errors_against(kept, lossy, sk.parents, sk.shell_distance, out[lo:hi])
            continue
        raw = clip_between(clip, ks[lo:hi], alphas[lo:hi])
        at = np.arange(hi - lo)
        out[lo:hi] = array_errors(raw, lossy, at, np.zeros(hi - lo), sk.parents, sk.shell_distance)
    return times, out
