"""Plain-text reports: aligned tables and byte counts, as the command line and the benchmark
print them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def fmt_bytes(n: int) -> str:
    return f"{n:,} B"


def table(rows: Sequence[Sequence[str]], right: Iterable[int] = ()) -> str:
    """Rows of cells as an aligned text table; columns in `right` are right-aligned."""
    right = set(right)
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = []
    for r in rows:
        cells = [
            cell.rjust(w) if c in right else cell.ljust(w)
            for c, (cell, w) in enumerate(zip(r, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"
