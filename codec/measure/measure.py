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
from codec.measure.error_metric import array_errors, between_keys, clip_errors
from codec.measure.stats import build_stats, clip_warnings
from codec.measure.vertex_error import VertexError, skin_error, vertex_stats
from codec.model.sampling import clip_between

if TYPE_CHECKING:
    from codec.codecs.base import Decoder
    from codec.model.clip import Clip
    from codec.settings import CompressionSettings

Array = np.ndarray
BETWEEN_CHUNK = 4096  # poses measured at once between samples
RAW_KEEP = 1 << 19  # poses x joints of the raw clip between samples a RawPoses keeps (42 MB)


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
    """The raw clip's poses between samples, and its warnings, kept from one measurement to
    the next: they depend on the raw clip alone, not on the settings, so a session that
    compresses one clip again and again (the window's edits) blends and checks it once.
    Poses (`chunk`) depend on the clip's arrays, its authored curves and the supersampling,
    kept while they are small (RAW_KEEP); warnings (`warnings`) on its poses, skeleton,
    meshes and units. Either is kept only for the very arrays it came from."""

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._chunks: dict[int, tuple[Array, Array, Array]] = {}
        self._warned: tuple[tuple[object, ...], list[str]] | None = None

    def warnings(self, clip: Clip) -> list[str]:
        """`clip_warnings(clip)`, kept while the clip's poses, bind pose, hierarchy, meshes,
        units and reader warnings are the very same: the size check poses the skeleton (6 ms
        a run at 212 joints), and per-joint precisions do not change its answer."""
        sk = clip.skeleton
        arrays = (clip.rotations, clip.translations, clip.scales, sk.parents)
        arrays += (sk.bind_rotations, sk.bind_translations, sk.bind_scales, clip.meshes)
        values = (clip.units, tuple(clip.warnings), clip.num_samples)
        kept = self._warned
        if kept is not None:
            same = all(a is b for a, b in zip(kept[0][:8], arrays, strict=True))
            if same and kept[0][8:] == values:
                return list(kept[1])
        got = clip_warnings(clip)
        self._warned = ((*arrays, *values), list(got))
        return got

    def chunk(
        self, clip: Clip, supersample: int, lo: int, ks: Array, alphas: Array
    ) -> tuple[Array, Array, Array]:
        """`clip_between(clip, ks, alphas)` of the chunk starting at pose `lo`."""
        arrays = (clip.rotations, clip.translations, clip.scales, clip.curves)
        key = self._key
        same = key is not None and key[4] == supersample
        if not (same and all(a is b for a, b in zip(key[:4], arrays, strict=True))):
            self._key = (*arrays, supersample)
            self._chunks = {}
        got = self._chunks.get(lo)
        if got is None:
            got = clip_between(clip, ks, alphas)
            if len(ks) * clip.num_joints <= RAW_KEEP:  # long clips: blended each time
                self._chunks[lo] = got
        return got


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
    the file size; `raw_poses` keeps the raw clip's poses between samples for the next
    measurement of the same clip."""
    lossy = decoder.decode_source(clip.name)
    if clip.looping and not lossy.looping:
        lossy = lossy.replace(looping=True)
    error = clip_errors(clip, lossy)
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
    samples."""
    ks, alphas = between_keys(clip.num_samples, supersample)
    times = (ks + alphas) / clip.sample_rate
    out = np.empty((len(ks), clip.num_joints), dtype=np.float32)
    sk = clip.skeleton
    for lo in range(0, len(ks), BETWEEN_CHUNK):
        hi = min(lo + BETWEEN_CHUNK, len(ks))
        if raw_poses is None:
            raw = clip_between(clip, ks[lo:hi], alphas[lo:hi])
        else:
            raw = raw_poses.chunk(clip, supersample, lo, ks[lo:hi], alphas[lo:hi])
        lossy = decoder.sample_times(times[lo:hi], "none")
        at = np.arange(hi - lo)
        out[lo:hi] = array_errors(raw, lossy, at, np.zeros(hi - lo), sk.parents, sk.shell_distance)
    return times, out
