"""One row per clip (per animation of a multi-animation file): the columns every output shares.

A row is a plain dict (JSON-safe, picklable across Dask workers): a compressed clip fills
every column and leaves `error` empty; a clip that failed (unreadable, raised, timed out,
killed its worker) has only `path`, `animation` and `error` set, the rest None, so one table
holds both and a failure is never silently dropped.
"""

from __future__ import annotations

import math
from typing import Any

COLUMNS = (
    "path",
    "animation",
    "joints",
    "samples",
    "duration",
    "raw_size",
    "compressed_size",
    "compression_ratio",
    "max_error",
    "precision",
    "precision_met",
    "worst_joint",
    "worst_time",
    "codec",
    "compression_time",
    "error",
)
# `precision` is the budget of the worst joint (its precision after every rule), so that a
# row's error reads as a share of its own budget on the one error scale.
SETTINGS = "settings"  # the run's settings block (codec.run_settings), None for an error row
OUTPUT_COLUMNS = (*COLUMNS, SETTINGS)  # what the JSON and the CSV hold (the tables: COLUMNS)
NUMERIC = (
    "joints",
    "samples",
    "duration",
    "raw_size",
    "compressed_size",
    "compression_ratio",
    "max_error",
    "precision",
    "worst_time",
    "compression_time",
)

Row = dict[str, Any]


def row_from_stats(
    path: str,
    animation: str,
    stats: dict[str, Any],
    budget: float,
    settings: dict[str, Any] | None = None,
) -> Row:
    """The row of one compression from its stats (ACL key names), the worst joint's
    precision `budget` and the run's settings block."""
    return {
        "path": path,
        "animation": animation,
        "joints": int(stats["num_bones"]),
        "samples": int(stats["num_samples"]),
        "duration": float(stats["duration"]),
        "raw_size": int(stats["raw_size"]),
        "compressed_size": int(stats["compressed_size"]),
        "compression_ratio": float(stats["compression_ratio"]),
        "max_error": float(stats["max_error"]),
        "precision": float(budget),
        "precision_met": bool(stats["precision_met"]),
        "worst_joint": str(stats.get("worst_track_name", "")),
        "worst_time": float(stats.get("worst_time", 0.0)),
        "codec": str(stats.get("codec", "acl-style")),
        "compression_time": float(stats["compression_time"]),
        "error": "",
        SETTINGS: settings,
    }


def error_row(path: str, animation: str, message: str) -> Row:
    """The row of a clip that produced no result: every measure None, `error` says why."""
    row: Row = dict.fromkeys(OUTPUT_COLUMNS)
    row.update(path=path, animation=animation, error=message)
    return row


def is_error(row: Row) -> bool:
    return bool(row.get("error"))


def row_key(row: Row) -> tuple[str, str]:
    """What identifies a clip across runs: its path and animation."""
    return (str(row["path"]), str(row.get("animation") or ""))


def totals(rows: list[Row]) -> dict[str, Any]:
    """Library totals: clips, errors, failures to meet precision, sizes and the overall ratio."""
    ok = [r for r in rows if not is_error(r)]
    raw = sum(r["raw_size"] for r in ok)
    comp = sum(r["compressed_size"] for r in ok)
    return {
        "clips": len(rows),
        "compressed": len(ok),
        "errors": len(rows) - len(ok),
        "precision_missed": sum(not r["precision_met"] for r in ok),
        "raw_size": raw,
        "compressed_size": comp,
        "compression_ratio": raw / comp if comp else 0.0,
        "max_error": max((r["max_error"] for r in ok), default=0.0),
        "duration": sum(r["duration"] for r in ok),
        "compression_time": sum(r["compression_time"] for r in ok),
    }


TEXT = ("path", "animation", "worst_joint", "codec", "error")


def row_problem(row: Any) -> str | None:
    """None when `row` has the shape of a row (what a cache entry or a `--compare` file must
    hold before anything uses it), else what is wrong, from the row's own place on
    (".max_error: expected a number", ": expected a row ..."): every text column
    a string (or null), and for a clip that compressed (no `error`) every number a finite
    number and `precision_met` true or false; an error row's numbers may be null."""
    if not isinstance(row, dict):
        return f": expected a row (an object), got {type(row).__name__}"
    if not isinstance(row.get("path"), str):
        return ".path: expected a string"
    for key in TEXT[1:]:
        if row.get(key) is not None and not isinstance(row[key], str):
            return f".{key}: expected a string or null"
    failed = bool(row.get("error"))
    for key in NUMERIC:
        v = row.get(key)
        if v is None and failed:
            continue
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            return f".{key}: expected a number"
    if not failed and not isinstance(row.get("precision_met"), bool):
        return ".precision_met: expected true or false"
    return None
