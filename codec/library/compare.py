"""Two runs of one library side by side: regressions first (clips that grew, stopped meeting
their precision or started failing), then improvements, then clips new or gone."""

from __future__ import annotations

from typing import Any

from codec.library.rows import Row, is_error, row_key

ORDER = ("regressed", "improved", "new", "gone", "same")


def compare_rows(old: list[Row], new: list[Row]) -> list[dict[str, Any]]:
    """One entry per clip in either run: key, status (ORDER), why, and both sizes; sorted
    by status in ORDER, then by the size change, largest growth first."""
    before = {row_key(r): r for r in old}
    after = {row_key(r): r for r in new}
    out = []
    for key in list(after) + [k for k in before if k not in after]:
        a, b = before.get(key), after.get(key)
        status, why = _judge(a, b)
        size_a = None if a is None or is_error(a) else a.get("compressed_size")
        size_b = None if b is None or is_error(b) else b.get("compressed_size")
        change = (size_b - size_a) if size_a is not None and size_b is not None else 0
        out.append(
            {
                "path": key[0],
                "animation": key[1],
                "status": status,
                "why": why,
                "old_size": size_a,
                "new_size": size_b,
                "size_change": change,
            }
        )
    out.sort(key=lambda e: (ORDER.index(e["status"]), -e["size_change"]))
    return out


def _judge(a: Row | None, b: Row | None) -> tuple[str, str]:
    if a is None:
        return "new", "not in the old run"
    if b is None:
        return "gone", "not in this run"
    if is_error(b) and not is_error(a):
        return "regressed", f"now fails: {b['error']}"
    if is_error(a) and not is_error(b):
        return "improved", "compressed now (failed before)"
    if is_error(a) and is_error(b):
        return "same", "fails in both"
    reasons = []
    if a["precision_met"] and not b["precision_met"]:
        reasons.append("stopped meeting its precision")
    if b["compressed_size"] > a["compressed_size"]:
        reasons.append(f"grew {a['compressed_size']:,} -> {b['compressed_size']:,} B")
    if reasons:
        return "regressed", "; ".join(reasons)
    if b["compressed_size"] < a["compressed_size"] or (
        b["precision_met"] and not a["precision_met"]
    ):
        return "improved", f"{a['compressed_size']:,} -> {b['compressed_size']:,} B"
    return "same", ""


def compare_text(entries: list[dict[str, Any]]) -> str:
    """The comparison for the terminal: counts, then every changed clip, regressions first."""
    counts = {s: sum(e["status"] == s for e in entries) for s in ORDER}
    lines = [", ".join(f"{counts[s]} {s}" for s in ORDER)]
    for e in entries:
        if e["status"] != "same":
            lines.append(f"  {e['status']:9}  {e['path']} [{e['animation']}]  {e['why']}")
    return "\n".join(lines) + "\n"
