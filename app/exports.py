"""Exports of one compression: stats JSON, per-joint CSV, the lossy clip and a screenshot.

Qt-free so the command line (`app.headless`) writes exactly what the menus write. Every file is
written whole or not at all (codec.atomic): an export that fails leaves the old file in place.
The main window can put `export_stats`, `export_joint_csv`, `export_lossy` and
`export_screenshot` straight into a menu; the views pass PNG bytes to the last one.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from codec.atomic import write_bytes, write_text
from codec.bit_rates import SUB_TRACKS, TrackKind, segment_cost_bits
from codec.overrides import JointOverride
from codec.result import CompressionResult

KIND_NAMES = {
    int(TrackKind.DEFAULT): "default",
    int(TrackKind.CONSTANT): "constant",
    int(TrackKind.ANIMATED): "animated",
}


def _json_safe(value: Any) -> Any:
    """numpy scalars and arrays to plain JSON; non-finite floats to null (JSON has no NaN)."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return _json_safe(value.tolist())
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating | float):
        f = float(value)
        return f if math.isfinite(f) else None
    return value


def stats_dict(
    result: CompressionResult, overrides: tuple[JointOverride, ...] | list = ()
) -> dict[str, Any]:
    """The codec's stats under ACL's key names, plus what Shellscope tuned to get them.

    Top-level keys are exactly `result.stats` (so tools reading ACL stats read ours); the
    tuning goes under "shellscope" so the run can be repeated.
    """
    out = _json_safe(dict(result.stats))
    out.setdefault("clip_name", result.clip.name)
    s = result.settings
    out["shellscope"] = {
        "settings": {
            "level": s.level,
            "precision": s.precision,
            "shell_distance": s.shell_distance,
            "supersample": s.supersample,
        },
        "overrides": [
            {
                k: getattr(r, k)
                for k in ("pattern", "precision", "shell_distance", "rounding")
                if getattr(r, k) is not None
            }
            for r in overrides
        ],
    }
    return out


def refuse_inputs(path: str | os.PathLike[str], inputs: Sequence[object]) -> None:
    """ValueError when `path` is one of `inputs` (the clip, its sidecar, an overrides file):
    an export never replaces a file it was made from."""
    target = os.path.realpath(path)
    for i in inputs:
        if i is None:
            continue
        same = target == os.path.realpath(os.fspath(i))  # type: ignore[arg-type]
        if not same and os.path.exists(path) and os.path.exists(os.fspath(i)):  # type: ignore
            same = os.path.samefile(path, os.fspath(i))  # type: ignore[arg-type]
        if same:
            raise ValueError(f"{path}: is the input file {i}; refusing to overwrite it")


def export_stats(
    path: str | os.PathLike[str],
    result: CompressionResult,
    overrides: tuple[JointOverride, ...] | list = (),
    inputs: Sequence[object] = (),
) -> Path:
    """Stats JSON (ACL key names), written whole or not at all; never over `inputs`."""
    refuse_inputs(path, inputs)
    text = json.dumps(stats_dict(result, overrides), indent=2, allow_nan=False) + "\n"
    write_text(path, text)
    return Path(path)


def segment_sample_counts(result: CompressionResult) -> np.ndarray:
    """(G,) samples stored in each segment."""
    return np.asarray(result.segments, dtype=np.int64).reshape(-1, 2)[:, 1]


def cell_bytes(result: CompressionResult) -> np.ndarray:
    """(G, J, 3) bytes of packed samples per segment, joint and sub-track (0 if not animated).

    What codec.bit_rates.segment_cost_bits charges each sub-track in a single-segment clip:
    bit rate 0 stores one constant for the segment, the others every sample of the segment
    (segment ranges and rate bytes not counted).
    """
    rates = np.asarray(result.bit_rates, dtype=np.int64)
    out = np.zeros(rates.shape)
    for g, n in enumerate(segment_sample_counts(result)):  # a handful of segments
        cost = segment_cost_bits(int(n), multi_segment=False)
        out[g] = np.where(rates[g] >= 0, cost[np.maximum(rates[g], 0)], 0) / 8.0
    return out


def segment_errors(result: CompressionResult) -> np.ndarray:
    """(G, J) the largest error of every joint over each segment's samples."""
    err = np.asarray(result.error)
    seg = np.asarray(result.segments, dtype=np.int64).reshape(-1, 2)
    out = np.zeros((len(seg), err.shape[1]))
    for g, (start, count) in enumerate(seg):  # a handful of segments; joints stay batched
        rows = err[start : min(start + max(count, 1), err.shape[0])]
        out[g] = rows.max(axis=0) if len(rows) else 0.0
    return out


JOINT_CSV_COLUMNS = (
    "joint",
    "name",
    "parent",
    "precision",
    "shell_distance",
    "dominant_shell_distance",
    "dominant_shell_precision",
    *(f"{k}_kind" for k in SUB_TRACKS),
    *(f"{k}_bits_mean" for k in SUB_TRACKS),
    *(f"{k}_bits_max" for k in SUB_TRACKS),
    "sample_bytes",
    "max_error",
    "worst_time",
    "error_p99",
    "max_error_between_samples",
)


# with a skinned mesh (codec.vertex_error), the per-joint CSV also says how honest each
# joint's shell is
SKIN_CSV_COLUMNS = (
    "skin_vertices",
    "mesh_shell_distance",
    "mesh_shell_source",
    "shell_max_error",
    "vertex_max_error",
    "shell_to_vertex_ratio",
    "shell_underestimates",
    "vertex_worst_time",
)
SKIN_REPORT_COLUMNS = (
    "joint",
    "name",
    "vertices",
    "precision",
    "shell_distance",
    "mesh_shell_distance",
    "shell_max_error",
    "vertex_max_error",
    "shell_to_vertex_ratio",
    "shell_underestimates",
    "vertex_budget_fraction",
    "vertex_worst_time",
)


def joint_csv_columns(result: CompressionResult) -> tuple[str, ...]:
    """The per-joint CSV's columns: the skin's added only when the clip has a mesh."""
    return JOINT_CSV_COLUMNS + (SKIN_CSV_COLUMNS if result.vertex_error is not None else ())


def skin_report_rows(result: CompressionResult) -> list[dict[str, Any]]:
    """One row per joint, shell estimate against the true error of the vertices it drives
    most, under-estimating joints first (codec.vertex_error.JointHonesty.order); empty
    without a mesh. NaN where a joint drives no vertex."""
    ve = result.vertex_error
    if ve is None:
        return []
    h = ve.joints
    sk = result.clip.skeleton
    rows = []
    for j in h.order():
        j = int(j)
        rows.append(
            {
                "joint": j,
                "name": sk.names[j],
                "vertices": int(h.vertices[j]),
                "precision": float(sk.precision[j]),
                "shell_distance": float(sk.shell_distance[j]),
                "mesh_shell_distance": float(h.mesh_shell[j]),
                "shell_max_error": float(h.shell_error[j]),
                "vertex_max_error": float(h.vertex_error[j]),
                "shell_to_vertex_ratio": float(h.ratio[j]),
                "shell_underestimates": bool(h.underestimates[j]),
                "vertex_budget_fraction": float(h.vertex_error[j] / sk.precision[j]),
                "vertex_worst_time": float(h.worst_time[j]),
            }
        )
    return rows


def _csv_text(columns: tuple[str, ...], rows: list[dict[str, Any]]) -> str:
    """CSV with floats in full precision, NaN (does not apply) as an empty cell."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow(
            {
                k: ""
                if isinstance(v, float) and math.isnan(v)
                else repr(v)
                if isinstance(v, float)
                else v
                for k, v in row.items()
            }
        )
    return buf.getvalue()


def export_skin_report_csv(path: str | os.PathLike[str], result: CompressionResult) -> Path:
    """The skin report (shell estimate against true vertex error per joint) as CSV."""
    if result.vertex_error is None:
        raise ValueError("the clip has no skinned mesh: there is no skin report")
    write_text(path, _csv_text(SKIN_REPORT_COLUMNS, skin_report_rows(result)))
    return Path(path)


def joint_rows(result: CompressionResult) -> list[dict[str, Any]]:
    """One row per joint: its settings, storage and error (what the CSV and joints panel show)."""
    clip = result.clip
    sk = clip.skeleton
    err = np.asarray(result.error)
    bits = result.bits_per_component.astype(np.float64)  # (G, J, 3)
    animated = bits >= 0
    with np.errstate(invalid="ignore"):
        mean_bits = np.where(
            animated.any(0), np.where(animated, bits, 0).sum(0) / animated.sum(0), np.nan
        )
    max_bits = np.where(animated.any(0), bits.max(0), np.nan)
    nbytes = cell_bytes(result).sum(axis=(0, 2))
    worst = err.argmax(axis=0)
    times = np.arange(err.shape[0]) / clip.sample_rate
    p99 = np.percentile(err, 99, axis=0) if err.size else np.zeros(sk.num_joints)
    between = (
        np.asarray(result.error_between).max(axis=0)
        if np.asarray(result.error_between).size
        else np.full(sk.num_joints, np.nan)
    )
    ds = result.dominant_shells
    rows = []
    for j in range(sk.num_joints):
        row: dict[str, Any] = {
            "joint": j,
            "name": sk.names[j],
            "parent": int(sk.parents[j]),
            "precision": float(sk.precision[j]),
            "shell_distance": float(sk.shell_distance[j]),
            "dominant_shell_distance": float(ds.distance[j]),
            "dominant_shell_precision": float(ds.precision[j]),
        }
        for k, name in enumerate(SUB_TRACKS):
            row[f"{name}_kind"] = KIND_NAMES[int(result.kinds[j, k])]
        for k, name in enumerate(SUB_TRACKS):
            row[f"{name}_bits_mean"] = float(mean_bits[j, k])
        for k, name in enumerate(SUB_TRACKS):
            row[f"{name}_bits_max"] = float(max_bits[j, k])
        row["sample_bytes"] = float(nbytes[j])
        row["max_error"] = float(err[:, j].max()) if err.size else 0.0
        row["worst_time"] = float(times[worst[j]]) if err.size else 0.0
        row["error_p99"] = float(p99[j])
        row["max_error_between_samples"] = float(between[j])
        rows.append(row)
    ve = result.vertex_error
    if ve is not None:
        h = ve.joints
        for j, row in enumerate(rows):
            row.update(
                {
                    "skin_vertices": int(h.vertices[j]),
                    "mesh_shell_distance": float(h.mesh_shell[j]),
                    "mesh_shell_source": str(h.mesh_shell_source[j]),
                    "shell_max_error": float(h.shell_error[j]),
                    "vertex_max_error": float(h.vertex_error[j]),
                    "shell_to_vertex_ratio": float(h.ratio[j]),
                    "shell_underestimates": bool(h.underestimates[j]),
                    "vertex_worst_time": float(h.worst_time[j]),
                }
            )
    return rows


def joint_csv_text(result: CompressionResult) -> str:
    """The per-joint CSV; NaN (a value that does not apply) is written as an empty cell."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=joint_csv_columns(result), lineterminator="\n")
    w.writeheader()
    for row in joint_rows(result):
        w.writerow(
            {
                k: (
                    ""
                    if isinstance(v, float) and math.isnan(v)
                    else repr(v)
                    if isinstance(v, float)
                    else v
                )
                for k, v in row.items()
            }
        )
    return buf.getvalue()


def export_joint_csv(
    path: str | os.PathLike[str], result: CompressionResult, inputs: Sequence[object] = ()
) -> Path:
    """Per-joint CSV (floats written with full precision), whole or not at all; never over
    `inputs`."""
    refuse_inputs(path, inputs)
    write_text(path, joint_csv_text(result))
    return Path(path)


def export_lossy(
    path: str | os.PathLike[str],
    result: CompressionResult,
    source: str | os.PathLike[str] | None = None,
    inputs: Sequence[object] = (),
) -> Path:
    """The decoded clip in the format the name asks for (`.acl.sjson`, `.bvh`, ...); for
    `.glb` / `.gltf`, a copy of the `source` glTF with the clip's animation replaced by the
    lossy one (codec.formats.gltf_lossy). Written whole or not at all (codec.atomic), so a
    failed export leaves no partial file; never over the `source` clip or other `inputs`.
    """
    from codec import save_clip  # lazy: the formats package is heavy and optional here

    refuse_inputs(path, [source, *inputs])
    path = Path(path)
    if path.suffix.lower() in (".glb", ".gltf"):
        from codec.formats import format_of
        from codec.formats.gltf_lossy import write_lossy_gltf

        if source is None or format_of(source) != "gltf":
            raise ValueError("a lossy glTF is a copy of the source glTF: open a .glb/.gltf clip")
        read_as = result.clip.units  # a unit the user gave when opening is undone the same way
        units = read_as.unit if read_as is not None and read_as.chosen_by == "user" else None
        write_lossy_gltf(
            source, result.lossy, path, animation=result.lossy.name or None, units=units
        )
        return path
    save_clip(result.lossy, path)
    return path


def export_screenshot(
    path: str | os.PathLike[str], png: bytes, inputs: Sequence[object] = ()
) -> Path:
    """A PNG grabbed by a view (see app.views.screenshot), whole or not at all; never over
    `inputs`."""
    refuse_inputs(path, inputs)
    if not png.startswith(b"\x89PNG\r\n\x1a\n"):
        raise ValueError("screenshot data is not a PNG image")
    write_bytes(path, png)
    return Path(path)
