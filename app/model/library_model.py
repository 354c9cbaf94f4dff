"""The library table the window shows (File > Open Library), and the background run that
fills it. Qt-free: the view (app/views/library.py) draws this model and polls it.

The table holds one row per clip as codec.library makes them; it sorts by any column, filters
by text (path, animation, joint, error) and by "problems only" (over budget or failed), and
colours each row on the one error scale (app.model.error_scale: the max error as a share of the
worst joint's precision). The run goes on a thread of its own, which hands finished files to
a queue the view drains on its timer: results arrive while the table stays responsive.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from app.model.error_scale import budget_fraction, error_colors, format_cm, format_percent
from codec.library.rows import Row, is_error

# (title, row key or a derived one) in the order the table shows them
COLUMNS: tuple[tuple[str, str], ...] = (
    ("Clip", "path"),
    ("Animation", "animation"),
    ("Problem", "error"),  # beside the clip: a failed file's reason is read, not scrolled to
    ("Joints", "joints"),
    ("Samples", "samples"),
    ("Duration s", "duration"),
    ("Compressed B", "compressed_size"),
    ("Ratio", "compression_ratio"),
    ("Max error", "max_error"),
    ("Used", "used"),
    ("Worst joint", "worst_joint"),
    ("Encode s", "compression_time"),
)
HEADER_TIPS = {
    "error": "Why the clip could not be compressed (the whole message on hover)",
    "compression_time": "Seconds the codec took to encode the clip (not reading nor measuring)",
    "animation": "The animation's (take's) name; the whole name on hover",
    "used": "Max error as a share of the worst joint's precision",
}
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
        """A cell as the table writes it (errors in cm, engineering notation; shares in %;
        a problem without the file's path the Clip column already names; an animation by
        its take's name)."""
        if key == "error":
            return problem_text(row)
        if key == "animation":
            return take_name(str(row.get("animation") or ""))
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


def problem_text(row: Row) -> str:
    """A failed row's message from what follows the file's path (the Clip column says which
    file): '/lib/d.bvh (line 3): no ROOT' reads 'line 3: no ROOT'."""
    message = str(row.get("error") or "")
    name = str(row.get("path") or "")
    at = message.find(name) if name else -1
    if at < 0 or " " in message[:at]:
        return message
    rest = message[at + len(name) :].lstrip()
    if rest.startswith("("):  # the place: (line 3), (byte 8)
        close = rest.find(")")
        if close > 0:
            rest = rest[1:close] + rest[close + 1 :]
    return rest.lstrip(": ").strip() or message


def take_name(animation: str) -> str:
    """An FBX animation named 'Armature|Take' by its take, which tells the rows apart (every
    row of a rig starts with the same armature)."""
    return animation.rsplit("|", 1)[-1] if "|" in animation else animation


def tooltip_of(root: str | Path | None, row: Row, key: str) -> str:
    """A cell's hover text: the whole message, animation name or file path."""
    if key == "error" and row.get("error"):
        return str(row["error"])
    if key == "animation":
        return str(row.get("animation") or "")
    path = str(Path(root) / str(row["path"])) if root is not None else str(row["path"])
    return row.get("error") or f"{path} [{row.get('animation') or ''}]"


def open_target(root: str | Path, row: Row) -> tuple[Path, str | None]:
    """The file and animation to open for a row (animation only for the formats that hold
    several, so opening a BVH or ACL clip asks nothing)."""
    from codec.formats import format_of

    path = Path(root) / str(row["path"])
    anim = row.get("animation") or None
    return path, (anim if format_of(path) in ("gltf", "fbx", "usd") else None)


def export_settings(
    root: str | Path, rows: list[Row], folder: str | Path
) -> tuple[Any, list[tuple[str, str]]]:
    """An export run of `rows`: the settings writing each row's .ssc into `folder` (only
    those rows' animations) and the files to run."""
    from codec.library.tuning import LibrarySettings

    names = sorted({str(r["path"]) for r in rows})
    only = tuple(sorted({(str(r["path"]), str(r.get("animation") or "")) for r in rows}))
    multi = {n for n, a in only if a and open_target(root, {"path": n, "animation": a})[1]}
    only = tuple((n, a) for n, a in only if n in multi)  # single-animation files: the file
    settings = LibrarySettings(export_to=str(Path(folder).resolve()), export_only=only)
    return settings, [(str(Path(root) / n), n) for n in names]


def rules_of_file(path: str | Path) -> tuple[Any, ...]:
    """The rules of a rules file or sidecar, as `--overrides` reads them (SidecarError)."""
    from codec.sidecar import read_layer

    return read_layer(path)[1]


def apply_rules_to_rows(
    root: str | Path, rows: list[Row], rules: tuple[Any, ...]
) -> tuple[int, list[str]]:
    """Append `rules` to the sidecar of each row's clip (its animation's entry), where every
    run reads them (codec.run_settings). Returns how many rows took them and why others
    did not (a file that could not be read has no joints; a sidecar that cannot be read is
    left alone)."""
    from codec.sidecar import append_rules

    return _each_row(root, rows, lambda path, animation: append_rules(path, rules, animation))


def apply_tuning_to_rows(
    root: str | Path, rows: list[Row], settings: Any, overrides: tuple[Any, ...]
) -> tuple[int, list[str]]:
    """The window's tuning (its settings and rules, as File > Save tuning writes them) made
    the own tuning of each row's clip (its animation's entry of the sidecar; the file's
    other animations keep theirs). Returns how many rows took it and why others did not."""
    from codec.sidecar import save_sidecar

    return _each_row(
        root, rows, lambda path, animation: save_sidecar(path, settings, overrides, animation)
    )


def _each_row(root: str | Path, rows: list[Row], write: Any) -> tuple[int, list[str]]:
    """`write(clip path, animation)` for every row that names a clip; (done, failures)."""
    from codec.errors import ShellscopeError

    done, failed = 0, []
    for row in rows:
        if is_error(row) and not row.get("animation"):
            failed.append(f"{row['path']}: could not be read")
            continue
        path, animation = open_target(root, row)
        try:
            write(path, animation)
            done += 1
        except (ShellscopeError, OSError) as e:
            failed.append(f"{row['path']}: {e}")
    return done, failed


def sweep_settings(precisions: Sequence[float]) -> list[Any]:
    """A sweep's runs: the library's settings at each precision (as `library --sweep`)."""
    from codec.library.tuning import LibrarySettings

    return [LibrarySettings().with_precision(float(p)) for p in precisions]


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
    view `drain`s them. `stop` ends the run, keeping what finished.

    `settings`: one run per LibrarySettings, in order, on one Dask cluster (a sweep: one per
    precision, as `library --sweep` runs them); `files`: the (path, name) pairs to run
    (default every clip of `root`); `cached` False for an export run, which must compress
    (and write) every clip. `results` holds each finished run's rows."""

    def __init__(
        self,
        root: str | Path,
        workers: int | None = None,
        scheduler: str | None = None,
        settings: Sequence[Any] | None = None,
        files: list[tuple[str, str]] | None = None,
        cached: bool = True,
    ):
        from codec.library.cache import RowCache, default_folder
        from codec.library.engine import library_files
        from codec.library.tuning import LibrarySettings

        self.root = Path(root)
        self.files = library_files(self.root) if files is None else files
        self.settings = list(settings) if settings else [LibrarySettings()]
        self.workers, self.scheduler = workers, scheduler
        self.cache = RowCache(default_folder()) if cached else None
        self.queue: deque[list[Row]] = deque()
        self.results: list[list[Row]] = []
        self.stop_event = threading.Event()
        self.progress = Progress(total=len(self.files) * len(self.settings))
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
        from codec.library.engine import DaskCluster, default_workers, run_library

        cluster = None
        try:
            if len(self.settings) > 1 and self.files:  # a sweep: one cluster for every run
                n = min(self.workers or default_workers(), len(self.files))
                cluster = DaskCluster(self.scheduler, n)
            for settings in self.settings:
                run = run_library(
                    self.files,
                    settings,
                    scheduler=self.scheduler,
                    workers=self.workers,
                    cache=self.cache,
                    on_file=self._on_file,
                    stop=self.stop_event,
                    cluster=cluster,
                )
                self.results.append(run.rows)
                self.progress.interrupted = run.interrupted
                if run.interrupted or self.stop_event.is_set():
                    break
        except Exception as e:  # shown in the dialog; the window lives on
            self.progress.message = f"{type(e).__name__}: {e}"
        finally:
            if cluster is not None:
                cluster.close()
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
