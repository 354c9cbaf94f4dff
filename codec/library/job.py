"""What a worker does with one file: read every animation, compress it, measure it, a row each.

Runs inside a Dask worker process (or in-process), so it takes and returns plain picklable
values. Nothing escapes as an exception: a file that cannot be read, an animation that
raises, or a file that runs past its time limit is a row with its error. A file still busy
after its time limit leaves its thread running, so the worker asks to be replaced (its
process exits a moment after the rows are sent); Dask's nanny starts a fresh one.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from codec.library.rows import Row, error_row, row_from_stats
from codec.library.tuning import LibrarySettings

EXIT_GRACE = 5.0  # seconds between returning a timed-out file's rows and leaving the worker


@dataclass(frozen=True)
class FileJob:
    """One file of the library: where it is, its name in the rows, and the run's settings."""

    path: str
    name: str
    settings: LibrarySettings


@dataclass(frozen=True)
class JobResult:
    """A file's rows; `cacheable` is False when the rows say something about this run (a
    time-out) rather than about the file."""

    rows: list[Row]
    cacheable: bool = True


def _animations(path: str) -> list[str | None]:
    """The animations to compress: every one of a multi-animation format, else [None]."""
    from codec import formats

    if formats.format_of(path) in ("gltf", "fbx", "usd"):
        return list(formats.list_animations(path))
    return [None]


def compress_file(job: FileJob) -> list[Row]:
    """Every animation of the file as a row (errors as rows), in the file's order, each
    compressed with its complete settings (codec.run_settings, as the window resolves them)
    and carrying them."""
    from codec import formats

    options = job.settings.reader
    try:
        animations = _animations(job.path)
    except Exception as e:
        return [error_row(job.name, "", _message(job.path, e))]
    rows: list[Row] = []
    only = {a for n, a in job.settings.export_only if n == job.name}
    for anim in animations:
        label = anim or ""
        if only and anim is not None and anim not in only:
            continue  # an export of chosen rows: not this animation
        try:
            opts = dict(options, animation=anim) if anim is not None else options
            clip = formats.load_clip(job.path, **opts)
            run = job.settings.for_clip(job.path, clip.name)
            result = run.compress(clip)
            stats = result.stats
            if not label:
                label = str(stats.get("clip_name") or "")
            worst = int(stats.get("worst_track", 0))
            sk = result.clip.skeleton
            budget = float(sk.precision[worst]) if sk.num_joints else 0.0
            row = row_from_stats(job.name, label, stats, budget, run.block(clip))
            if job.settings.export_to is not None:
                row["exported"] = str(_export(job, anim, run.stamp(result.data, clip)))
            rows.append(row)
        except Exception as e:  # one broken animation must not stop the library
            rows.append(error_row(job.name, label, _message(job.path, e)))
    return rows


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def export_name(name: str, animation: str | None) -> str:
    """The .ssc file name of a library row: its path in the library (folders joined by
    '__') and its animation, characters other than letters, digits, '.', '_', '-' as '_'."""
    stem = "__".join(Path(name).with_suffix("").parts)
    if animation:
        stem += "_" + animation
    return _UNSAFE.sub("_", stem).strip("._") + ".ssc"


def _export(job: FileJob, animation: str | None, data: bytes) -> Path:
    """Write one row's .ssc (settings block included) into the export folder, whole or not
    at all, never over an input."""
    from codec.formats.atomic import write_bytes
    from codec.formats.output_paths import output_problem

    folder = Path(str(job.settings.export_to))
    target = folder / export_name(job.name, animation)
    problem = output_problem(target, [job.path])
    if problem:
        raise ValueError(f"{target}: {problem}")
    write_bytes(target, data)
    return target


def _message(path: str, e: BaseException) -> str:
    from codec.errors import ShellscopeError

    text = " / ".join(p.strip() for p in str(e).splitlines() if p.strip())
    if isinstance(e, ShellscopeError):
        return text if text.startswith(path) else f"{path}: {text}"
    if isinstance(e, MemoryError):
        return f"{path}: out of memory"
    return f"{path}: internal error ({type(e).__name__}: {text})"


def run_job(job: FileJob, timeout: float | None = None) -> JobResult:
    """compress_file under a time limit (None: none). A file over its limit is one error row;
    its thread cannot be stopped, so this worker process leaves soon after."""
    if not timeout:
        return JobResult(compress_file(job))
    box: list[list[Row]] = []
    thread = threading.Thread(target=lambda: box.append(compress_file(job)), daemon=True)
    thread.start()
    thread.join(timeout)
    if box:
        return JobResult(box[0])
    _leave_soon()
    return JobResult(
        [error_row(job.name, "", f"{job.path}: timed out after {timeout:g} s")], cacheable=False
    )


def _leave_soon() -> None:
    """End this worker process in EXIT_GRACE seconds (only inside a Dask worker: never the
    process that runs the command or the window)."""
    try:
        from distributed import get_worker

        get_worker()
    except (ImportError, ValueError):
        return
    timer = threading.Timer(EXIT_GRACE, os._exit, args=(3,))
    timer.daemon = True
    timer.start()
