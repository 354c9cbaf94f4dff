"""A library run as files: JSON (everything, and what `--compare` reads back), CSV (one row
per clip, the columns of codec.library.rows) and plain text for the terminal."""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any

from codec.errors import SettingsError
from codec.formats.input_paths import InputRefused, load_json, read_capped
from codec.library.rows import OUTPUT_COLUMNS, Row, is_error, row_problem, totals
from codec.printable import csv_cell

FORMAT = "shellscope-library"
VERSION = 1
# the largest --compare file read: about 150,000 rows, parsed in under 500 MB
MAX_LIBRARY_JSON = 64 << 20


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become None (strict JSON has no such numbers)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def library_json(
    rows: list[Row],
    meta: dict[str, Any],
    sweep: list[dict[str, Any]] | None = None,
    comparison: dict[str, Any] | None = None,
) -> str:
    """The run as JSON text: format, meta (root, settings, codec version, interrupted),
    totals, rows, and the sweep and comparison when there are."""
    data: dict[str, Any] = {"format": FORMAT, "version": VERSION, **meta}
    data["totals"] = totals(rows)
    if sweep is not None:
        data["sweep"] = sweep
    if comparison is not None:
        data["compare"] = comparison
    data["rows"] = [{k: _clean(r.get(k)) for k in OUTPUT_COLUMNS} for r in rows]
    return json.dumps(data, indent=1, allow_nan=False) + "\n"


def library_csv(rows: list[Row], extra: dict[str, Any] | None = None) -> str:
    """One line per clip, OUTPUT_COLUMNS in order (with `extra` columns first, e.g. a sweep's
    precision); the settings block as compact JSON in its cell."""
    extra = extra or {}
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([*extra, *OUTPUT_COLUMNS])
    for r in rows:
        cells = [r.get(k) for k in OUTPUT_COLUMNS]
        writer.writerow([*extra.values(), *("" if c is None else _cell(c) for c in cells)])
    return buf.getvalue()


def sweep_csv(runs: list[tuple[float, list[Row]]]) -> str:
    """Every run of a sweep in one CSV, its precision in the first column."""
    parts = [library_csv(rows, {"sweep_precision": p}) for p, rows in runs]
    return parts[0] + "".join(p.split("\n", 1)[1] for p in parts[1:]) if parts else ""


def _cell(value: Any) -> Any:
    if isinstance(value, dict):  # the settings block
        return json.dumps(value, separators=(",", ":"), allow_nan=False)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ""
    if isinstance(value, str):  # a name: never a formula, never a control character
        return csv_cell(value)
    return value


def sweep_points(runs: list[tuple[float, list[Row]]]) -> list[dict[str, Any]]:
    """A sweep's data, one point per precision: its totals (what `--json` writes as
    "sweep", the HTML report and the library window's chart draw)."""
    return [{"precision": p, "totals": totals(rows)} for p, rows in runs]


def read_sweep_json(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The sweep of a JSON written by `library --sweep ... --json` (SettingsError naming the
    file and the place): each point a precision > 0 and the totals' sizes as numbers."""
    path = Path(path)
    try:
        data = load_json(read_capped(path, MAX_LIBRARY_JSON, "library JSON"))
    except InputRefused as e:
        raise SettingsError(f"{path}: not a library JSON we can read ({e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SettingsError(f"{path}: format: expected {FORMAT!r} (written by library --json)")
    sweep = data.get("sweep")
    if not isinstance(sweep, list) or not sweep:
        raise SettingsError(f"{path}: sweep: none (write it with library --sweep P1,P2 --json)")
    for i, point in enumerate(sweep):
        t = point.get("totals") if isinstance(point, dict) else None
        p = point.get("precision") if isinstance(point, dict) else None
        numbers = isinstance(t, dict) and all(
            isinstance(t.get(k), int | float) and not isinstance(t.get(k), bool)
            for k in ("compressed_size", "raw_size", "precision_missed", "errors")
        )
        if not (isinstance(p, int | float) and not isinstance(p, bool) and p > 0 and numbers):
            raise SettingsError(
                f"{path}: sweep[{i}]: expected a precision > 0 and totals with sizes"
            )
    return sweep


def read_library_json(path: str | os.PathLike[str]) -> list[Row]:
    """The rows of a JSON written by `--json` (SettingsError naming the file and the place):
    read with a cap (MAX_LIBRARY_JSON; a FIFO or a device is refused, never read), and every
    row checked for the shape `--compare` relies on (codec.library.rows.row_problem)."""
    path = Path(path)
    try:
        data = load_json(read_capped(path, MAX_LIBRARY_JSON, "library JSON"))
    except InputRefused as e:
        raise SettingsError(f"{path}: not a library JSON we can read ({e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SettingsError(f"{path}: format: expected {FORMAT!r} (written by library --json)")
    rows = data.get("rows")
    if not isinstance(rows, list):
        raise SettingsError(f"{path}: rows: expected a list of rows")
    for i, r in enumerate(rows):
        problem = row_problem(r)
        if problem:
            raise SettingsError(f"{path}: rows[{i}]{problem}")
    return rows


def summary_text(rows: list[Row], worst: int = 10) -> str:
    """Totals, the worst clips (over budget first, then by share of budget) and the errors."""
    t = totals(rows)
    lines = [
        f"{t['clips']} clips: {t['compressed']} compressed, {t['errors']} errors, "
        f"{t['precision_missed']} missed their precision",
        f"raw {t['raw_size']:,} B, compressed {t['compressed_size']:,} B, "
        f"ratio {t['compression_ratio']:.2f}:1, largest error {t['max_error']:.6g} cm",
    ]
    ranked = worst_rows(rows)[:worst]
    if ranked:
        lines.append("worst clips (error / budget):")
        for r in ranked:
            share = budget_share(r)
            mark = "  OVER" if not r["precision_met"] else ""
            lines.append(
                f"  {share:7.1%}  {r['max_error']:.6g} cm  {r['path']} [{r['animation']}] "
                f"at {r['worst_joint']}{mark}"
            )
    errors = [r for r in rows if is_error(r)]
    if errors:
        lines.append("errors:")
        lines += [f"  {r['error']}" for r in errors]
    return "\n".join(lines) + "\n"


def budget_share(row: Row) -> float:
    """The row's max error as a share of its worst joint's precision (0 for an error row)."""
    if is_error(row) or not row.get("precision"):
        return 0.0
    return float(row["max_error"]) / float(row["precision"])


def worst_rows(rows: list[Row]) -> list[Row]:
    """Compressed rows, those that missed their precision first, then by share of budget."""
    ok = [r for r in rows if not is_error(r)]
    return sorted(ok, key=lambda r: (bool(r["precision_met"]), -budget_share(r)))
