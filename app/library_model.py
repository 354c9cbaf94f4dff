"""The library table the window shows (File > Open Library), and the background run that
fills it. Qt-free: the view (app/views/library.py) draws this model and polls it.

The table holds one row per clip as codec.library makes them; it sorts by any column, filters
by text (path, animation, joint, error) and by "problems only" (over budget or failed), and
colours each row on the one error scale (app.error_scale: the max error as a share of the
worst joint's precision). The run goes on a thread of its own, which hands finished files to
a queue the view drains on its timer: results arrive while the table stays responsive.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from app.error_scale import budget_fraction, error_colors, format_cm, format_percent
from codec.library.rows import Row, is_error

# (title, row key or a derived one) in the order the table shows them
COLUMNS: tuple[tuple[str, str], ...] = (
    ("Clip", "path"),
    ("Animation", "animation"),
    ("Joints", "joints"),
    ("Samples", "samples"),
    ("Duration s", "duration"),
    ("Compressed B", "compressed_size"),
    ("Ratio", "compression_ratio"),
    ("Max error", "max_error"),
    ("Used", "used"),
    ("Worst joint", "worst_joint"),
    ("Time s", "compression_time"),
    ("Error", "error"),
)
NUMERIC = {
    "joints",
    "samples",
    "duration",
    "compressed_size",
    "compression_ratio",
    "max_error",
    "used",
    "compression_time",
}
ERROR_ROW_RGBA = (0.55, 0.55, 0.57, 1.0)  # a failed clip: no error to colour


def used(row: Row) -> float:
    """The row's max error as a share of its worst joint's budget (NaN for a failed clip)."""
    if is_error(row) or not row.get("precision"):
        return float("nan")
    return float(budget_fraction(row["max_error"], row["precision"]))


def sort_value(row: Row, key: str) -> Any:
    """What a column sorts by: numbers as numbers (failed clips last), text case-blind."""
    value = used(row) if key == "used" else row.get(key)
    if key in NUMERIC:
        return (value is None or value != value, 0.0 if value is None else value)
    return (False, str(value or "").lower())


class LibraryTable:
    """Rows, their order and the filter; `visible` is what the view shows, in order."""

    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.sort_key = ""
        self.descending = False
        self.text = ""
        self.problems_only = False
        self.visible: list[Row] = []

    def clear(self) -> None:
        self.rows = []
        self._refresh()

    def add(self, rows: list[Row]) -> None:
        self.rows.extend(rows)
        self._refresh()

    def sort(self, key: str, descending: bool = False) -> None:
        self.sort_key, self.descending = key, descending
        self._refresh()

    def set_filter(self, text: str = "", problems_only: bool = False) -> None:
        self.text, self.problems_only = text.strip().lower(), problems_only
        self._refresh()

    def _shown(self, row: Row) -> bool:
        if self.problems_only and not (is_error(row) or not row.get("precision_met", True)):
            return False
        if not self.text:
            return True
        hay = " ".join(str(row.get(k) or "") for k in ("path", "animation", "worst_joint", "error"))
        return self.text in hay.lower()

    def _refresh(self) -> None:
        shown = [r for r in self.rows if self._shown(r)]
        if self.sort_key:
            failed = [r for r in shown if sort_value(r, self.sort_key)[0]]
            fine = [r for r in shown if not sort_value(r, self.sort_key)[0]]
            fine.sort(key=lambda r: sort_value(r, self.sort_key)[1], reverse=self.descending)
            shown = fine + failed  # failed clips stay at the bottom either way
        self.visible = shown

    def text_of(self, row: Row, key: str) -> str:
        """A cell as the table writes it (errors in cm, engineering notation; shares in %)."""
        if key == "used":
            u = used(row)
            return "" if u != u else format_percent(u)
        value = row.get(key)
        if value is None:
            return ""
        if key == "max_error":
            return format_cm(float(value))
        if key == "compressed_size":
            return f"{int(value):,}"
        if key == "compression_ratio":
            return f"{float(value):.2f}"
        if key in ("duration", "compression_time"):
            return f"{float(value):.3g}"
        return str(value)

    @staticmethod
    def rgba(row: Row) -> tuple[float, float, float, float]:
        """The row's colour on the one error scale (grey for a failed clip)."""
        u = used(row)
        if u != u:
            return ERROR_ROW_RGBA
        c = error_colors(np.array(u))
        return (float(c[0]), float(c[1]), float(c[2]), float(c[3]))


def open_target(root: str | Path, row: Row) -> tuple[Path, str | None]:
    """The file and animation to open for a row (animation only for the formats that hold
    several, so opening a BVH or ACL clip asks nothing)."""
    from codec.formats import format_of

    path = Path(root) / str(row["path"])
    anim = row.get("animation") or None
    return path, (anim if format_of(path) in ("gltf", "fbx", "usd") else None)


@dataclass
class Progress:
    """How far a run is: files done of total, clips computed per second, seconds left."""

    files: int = 0
    total: int = 0
    clips_per_second: float = 0.0
    seconds_left: float = 0.0
    finished: bool = False
    interrupted: bool = False
    message: str = ""


class BackgroundLibraryRun:
    """codec.library.engine.run_library on a thread; finished files wait in a queue until the
    view `drain`s them. `stop` ends the run, keeping what finished."""

    def __init__(self, root: str | Path, workers: int | None = None, scheduler: str | None = None):
        from codec.library.cache import RowCache, default_folder
        from codec.library.engine import library_files

        self.root = Path(root)
        self.files = library_files(self.root)
        self.workers, self.scheduler = workers, scheduler
        self.cache = RowCache(default_folder())
        self.queue: deque[list[Row]] = deque()
        self.stop_event = threading.Event()
        self.progress = Progress(total=len(self.files))
        self._clips = 0
        self._computed = 0
        self._start = time.perf_counter()
        self.thread = threading.Thread(target=self._run, name="library-run", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _on_file(self, done: Any) -> None:
        self.queue.append(done.rows)
        p = self.progress
        p.files += 1
        if not done.cached:
            self._clips += len(done.rows)
            self._computed += 1
        elapsed = time.perf_counter() - self._start
        p.clips_per_second = self._clips / elapsed if elapsed > 0 else 0.0
        per_file = elapsed / self._computed if self._computed else 0.0
        p.seconds_left = (p.total - p.files) * per_file

    def _run(self) -> None:
        from codec.library.engine import run_library
        from codec.library.tuning import LibrarySettings

        try:
            run = run_library(
                self.files,
                LibrarySettings(),
                scheduler=self.scheduler,
                workers=self.workers,
                cache=self.cache,
                on_file=self._on_file,
                stop=self.stop_event,
            )
            self.progress.interrupted = run.interrupted
        except Exception as e:  # shown in the dialog; the window lives on
            self.progress.message = f"{type(e).__name__}: {e}"
        self.progress.finished = True

    def drain(self) -> list[Row]:
        """Rows of the files finished since the last call."""
        out: list[Row] = []
        while self.queue:
            out.extend(self.queue.popleft())
        return out

    def stop(self, wait: float = 0.0) -> None:
        self.stop_event.set()
        if wait:
            self.thread.join(wait)
