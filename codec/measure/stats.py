"""Statistics of one compression, under ACL's key names where ACL has one."""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from codec.model.character_size import size_warning

if TYPE_CHECKING:
    from codec.model.clip import Clip
    from codec.settings import CompressionSettings

Array = np.ndarray
RAW_BYTES_PER_TRANSFORM = 40  # 10 floats per QVV, as ACL counts raw size


def build_stats(
    clip: Clip,
    settings: CompressionSettings,
    error: Array,
    between_times: Array,
    between: Array,
    codec_name: str,
    sizes: tuple[int, int],
    compression_time: float,
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """What the stats panel, the CLI and the JSON export show for any codec; error (S, J)
    at the samples, between (N, J) at between_times (N,); sizes the compressed size
    (container header and payload) and the file size; `warnings` the clip's
    `clip_warnings` when the caller has them already."""
    sk = clip.skeleton
    S, J = error.shape
    flat = int(np.argmax(error))
    worst_sample, worst_joint = divmod(flat, J)
    raw_size = J * S * RAW_BYTES_PER_TRANSFORM
    per_joint_max = error.max(axis=0)
    compressed_size, file_size = sizes
    stats: dict[str, Any] = {
        "clip_name": clip.name,
        "codec": codec_name,
        "raw_size": raw_size,
        "compressed_size": compressed_size,
        "metadata_size": file_size - compressed_size,
        "file_size": file_size,
        "compression_ratio": raw_size / compressed_size,
        "compression_time": compression_time,
        "duration": clip.duration,
        "num_samples": S,
        "num_bones": J,
        "sample_rate": clip.sample_rate,
        "has_scale": clip.has_scale,
        "requested_level": settings.level,
        "max_error": float(error[worst_sample, worst_joint]),
        "worst_track": int(worst_joint),
        "worst_track_name": sk.names[worst_joint],
        "worst_time": worst_sample / clip.sample_rate,
        "error_p99": float(np.percentile(error, 99)),
        "precision_met": bool(np.all(per_joint_max <= sk.precision)),
        "joints_over_precision": [
            sk.names[j] for j in np.flatnonzero(per_joint_max > sk.precision)
        ],
        "warnings": clip_warnings(clip) if warnings is None else list(warnings),
    }
    if between.size:
        fb = int(np.argmax(between))
        ts, tj = divmod(fb, J)
        stats["max_error_between_samples"] = float(between[ts, tj])
        stats["worst_track_between_samples"] = int(tj)
        stats["worst_time_between_samples"] = float(between_times[ts])
    else:
        stats["max_error_between_samples"] = stats["max_error"]
        stats["worst_track_between_samples"] = stats["worst_track"]
        stats["worst_time_between_samples"] = stats["worst_time"]
    return stats


def clip_warnings(clip: Clip) -> list[str]:
    """What to doubt about a result that the numbers cannot show: what the reader
    tolerated, and a clip that is no character's size (codec.model.character_size: a unit
    slip makes every budget 100x off)."""
    size = size_warning(clip)
    return [*clip.warnings, *([size] if size else [])]


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
