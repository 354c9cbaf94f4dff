"""Statistics of one compression, under ACL's key names where ACL has one."""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from codec.bit_rates import BIT_RATE_BITS, SUB_TRACKS, TrackKind
from codec.segments import IDEAL_SEGMENT_SIZE, MAX_SEGMENT_SIZE

if TYPE_CHECKING:
    from codec.result import CompressionResult

RAW_BYTES_PER_TRANSFORM = 40  # 10 floats per QVV, as ACL counts raw size


def build_stats(
    result: CompressionResult, level: str, compressed_size: int, compression_time: float
) -> dict[str, Any]:
    """Everything the stats panel, the CLI and the JSON export show."""
    clip = result.clip
    sk = clip.skeleton
    err = result.error
    S, J = err.shape
    flat = int(np.argmax(err))
    worst_sample, worst_joint = divmod(flat, J)
    raw_size = J * S * RAW_BYTES_PER_TRANSFORM
    per_joint_max = err.max(axis=0)
    stats: dict[str, Any] = {
        "clip_name": clip.name,
        "raw_size": raw_size,
        "compressed_size": compressed_size,
        "metadata_size": len(result.data) - compressed_size,
        "file_size": len(result.data),
        "compression_ratio": raw_size / compressed_size,
        "compression_time": compression_time,
        "duration": clip.duration,
        "num_samples": S,
        "num_stored_samples": int(result.compressed.num_samples),
        "num_bones": J,
        "sample_rate": clip.sample_rate,
        "looping": bool(result.compressed.wrap),
        "has_scale": clip.has_scale,
        "level": level,
        "requested_level": result.settings.level,
        "rotation_format": "quatf_drop_one_variable",
        "translation_format": "vector3f_variable",
        "scale_format": "vector3f_variable",
        "max_error": float(err[worst_sample, worst_joint]),
        "worst_track": int(worst_joint),
        "worst_track_name": sk.names[worst_joint],
        "worst_time": worst_sample / clip.sample_rate,
        "error_p99": float(np.percentile(err, 99)),
        "precision_met": bool(np.all(per_joint_max <= sk.precision)),
        "joints_over_precision": [
            sk.names[j] for j in np.flatnonzero(per_joint_max > sk.precision)
        ],
    }
    if result.error_between.size:
        eb = result.error_between
        fb = int(np.argmax(eb))
        ts, tj = divmod(fb, J)
        stats["max_error_between_samples"] = float(eb[ts, tj])
        stats["worst_track_between_samples"] = int(tj)
        stats["worst_time_between_samples"] = float(result.error_between_times[ts])
    else:
        stats["max_error_between_samples"] = stats["max_error"]
        stats["worst_track_between_samples"] = stats["worst_track"]
        stats["worst_time_between_samples"] = stats["worst_time"]
    segs = result.segments
    sizes = _segment_sizes(result)
    stats["num_segments"] = len(segs)
    stats["segmenting"] = {
        "num_segments": len(segs),
        "ideal_num_samples": IDEAL_SEGMENT_SIZE,
        "max_num_samples": MAX_SEGMENT_SIZE,
    }
    strip = result.stripping
    g = len(segs)
    stripped = strip.stripped if strip is not None else np.zeros(g, np.int64)
    trivial = strip.trivial if strip is not None else np.zeros(g, np.int64)
    settings = result.settings.stripping
    stats["num_stripped_keyframes"] = int(stripped.sum())
    stats["num_trivial_keyframes"] = int(trivial.sum())
    stats["keyframe_stripping"] = {
        "strip_trivial": settings.trivial,
        "proportion": settings.proportion,
        "threshold": settings.threshold,
        "destructive": settings.destructive,
    }
    stats["segments"] = [
        {
            "start": int(a),
            "num_samples": int(n),
            "segment_size": int(sz),
            "num_stripped_keyframes": int(ns),
            "num_trivial_keyframes": int(nt),
        }
        for (a, n), sz, ns, nt in zip(segs, sizes, stripped, trivial, strict=True)
    ]
    stats["sub_tracks"] = {
        name: {
            "default": int(np.sum(result.kinds[:, k] == TrackKind.DEFAULT)),
            "constant": int(np.sum(result.kinds[:, k] == TrackKind.CONSTANT)),
            "animated": int(np.sum(result.kinds[:, k] == TrackKind.ANIMATED)),
        }
        for k, name in enumerate(SUB_TRACKS)
    }
    rates = result.bit_rates[result.bit_rates >= 0]
    bits = BIT_RATE_BITS[rates.astype(np.int64)]
    stats["bit_rate_histogram"] = {
        str(int(b)): int(c) for b, c in zip(*np.unique(bits, return_counts=True), strict=True)
    }
    return stats


def _segment_sizes(result: CompressionResult) -> list[int]:
    """Bytes of each segment's keyframe mask, rates, ranges and packed samples (as written)."""
    return [int(b) for b in result.compressed.encoded.segment_bytes()]


def json_safe(value: Any) -> Any:
    """`value` with numpy scalars / arrays, tuples, sets and paths turned into JSON types,
    for the stats JSON of the command line and the app's export alike.

    Non-finite floats become None, so the output is strict JSON; anything else is left as
    it is, so a value JSON cannot hold fails the export instead of being written as text.
    """
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, np.generic):
        return json_safe(value.item())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value
