"""The numbers of one result by joint, segment and cell, as the panels and exports show them.

Pure numpy over a `Result` of any codec (shapes: G segments, J joints, 3 sub-tracks): the
app formats these, it does not compute them. Bytes per cell come from the codec's own
`TrackCosts` (codec.codecs.base), so they are the sizes its encoder weighed; a codec without
per-track costs gives one segment whose kinds and widths are unknown (-1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from codec.codecs.base import SUB_TRACKS, TrackCosts, TrackKind
from codec.result import Result

KIND_NAMES = {
    int(TrackKind.DEFAULT): "default",
    int(TrackKind.CONSTANT): "constant",
    int(TrackKind.ANIMATED): "animated",
    -1: "",  # a codec without per-track costs
}


def costs_of(result: Result) -> TrackCosts:
    """The result's per-track costs; for a codec without them, one segment of the whole
    clip where every kind and bit rate is unknown (-1)."""
    if result.costs is not None:
        return result.costs
    s, j = result.clip.num_samples, result.clip.num_joints
    none = np.full((1, j, 3), -1, dtype=np.int16)
    return TrackCosts(
        np.full((j, 3), -1), np.array([[0, s]]), none, none.copy(), np.zeros(1, np.int64)
    )


def segment_sample_counts(result: Result) -> np.ndarray:
    """(G,) samples stored in each segment (a stripped keyframe stores nothing)."""
    return costs_of(result).stored_per_segment


def cell_bytes(result: Result) -> np.ndarray:
    """(G, J, 3) bytes of packed samples per segment, joint and sub-track (0 if not animated):
    `TrackCosts.sample_bits` (segment ranges and rate bytes not counted) in bytes."""
    return costs_of(result).sample_bits() / 8.0


def segment_errors(result: Result) -> np.ndarray:
    """(G, J) the largest error of every joint over each segment's samples."""
    err = np.asarray(result.error)
    seg = np.asarray(costs_of(result).segments, dtype=np.int64).reshape(-1, 2)
    out = np.zeros((len(seg), err.shape[1]))
    for g, (start, count) in enumerate(seg):  # a handful of segments; joints stay batched
        rows = err[start : min(start + max(count, 1), err.shape[0])]
        out[g] = rows.max(axis=0) if len(rows) else 0.0
    return out


JOINT_COLUMNS = (
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


# with a skinned mesh (codec.measure.vertex_error), the per-joint table also says how honest each
# joint's shell is
SKIN_JOINT_COLUMNS = (
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


def joint_columns(result: Result) -> tuple[str, ...]:
    """The keys of `joint_rows`: the skin's added only when the clip has a mesh."""
    return JOINT_COLUMNS + (SKIN_JOINT_COLUMNS if result.vertex_error is not None else ())


def skin_report_rows(result: Result) -> list[dict[str, Any]]:
    """One row per joint, shell estimate against the true error of the vertices it drives
    most, under-estimating joints first (codec.measure.vertex_error.JointHonesty.order); empty
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


def joint_rows(result: Result) -> list[dict[str, Any]]:
    """One row per joint: its settings, storage and error (what the CSV and joints panel show)."""
    clip = result.clip
    sk = clip.skeleton
    err = np.asarray(result.error)
    costs = costs_of(result)
    bits = costs.bits_per_component.astype(np.float64)  # (G, J, 3)
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
    ds = costs.dominant_shells
    nan = np.full(sk.num_joints, np.nan)
    ds_dist = ds.distance if ds is not None else nan
    ds_prec = ds.precision if ds is not None else nan
    rows = []
    for j in range(sk.num_joints):
        row: dict[str, Any] = {
            "joint": j,
            "name": sk.names[j],
            "parent": int(sk.parents[j]),
            "precision": float(sk.precision[j]),
            "shell_distance": float(sk.shell_distance[j]),
            "dominant_shell_distance": float(ds_dist[j]),
            "dominant_shell_precision": float(ds_prec[j]),
        }
        for k, name in enumerate(SUB_TRACKS):
            row[f"{name}_kind"] = KIND_NAMES[int(costs.kinds[j, k])]
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
