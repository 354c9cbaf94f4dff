"""Run a library on Dask: the embedded local cluster by default, or an existing scheduler.

The same code runs from a laptop to a cluster: every file is one Dask task (`job.run_job`),
submitted at once and collected as it finishes, so a slow clip never holds the others back.
Rows the cache already knows are never submitted. Whatever happens to a task becomes rows:
its own errors come back as rows from the worker; a worker that dies under it (a crash, the
OOM killer, `kill`) makes Dask retry it once elsewhere, and a second death is an error row
(`distributed.scheduler.allowed-failures` = 1 on the embedded cluster; an existing scheduler
keeps its own setting). Ctrl+C (or `stop`) cancels what has not finished and returns what has.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codec.errors import ShellscopeError
from codec.library.cache import RowCache, content_hash
from codec.library.job import FileJob, JobResult, run_job
from codec.library.rows import Row, error_row
from codec.library.tuning import LibrarySettings

POLL = 0.05  # seconds between looks for finished tasks (and for a stop request)


class LibraryError(ShellscopeError):
    """A run that cannot start: no scheduler at the address given, no Dask installed."""


@dataclass(frozen=True)
class FileDone:
    """One file finished: its index in the run, its rows, whether they came from the cache."""

    index: int
    rows: list[Row]
    cached: bool


@dataclass
class LibraryRun:
    """What a run produced: rows in file order, how many files came from the cache, whether
    it was interrupted (then `rows` holds only the files that finished), its wall time, the
    worker count and the workers' peak memory (bytes, resident, per worker) when measured."""

    rows: list[Row] = field(default_factory=list)
    files: int = 0
    cached: int = 0
    computed: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    workers: int = 0
    worker_memory: list[int] = field(default_factory=list)


def default_workers() -> int:
    """One single-threaded worker process per core: the codec is numpy/numba, CPU-bound."""
    return max(1, os.cpu_count() or 1)


def _peak_rss() -> int:
    """The process's peak resident memory in bytes (Linux reports ru_maxrss in KiB)."""
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


class DaskCluster:
    """A Dask client on the embedded LocalCluster (`workers` processes) or on `scheduler`.
    One may serve several runs (a sweep); `close` ends the embedded cluster."""

    def __init__(self, scheduler: str | None, workers: int) -> None:
        try:
            import dask
            from distributed import Client, LocalCluster
        except ImportError as e:  # pragma: no cover - a broken install
            raise LibraryError(f"the library runs on Dask, which is not installed ({e})") from e
        self.cluster = None
        if scheduler:
            try:
                self.client = Client(scheduler, timeout="10s", set_as_default=False)
            except (OSError, TimeoutError) as e:
                raise LibraryError(f"--scheduler {scheduler}: cannot connect ({e})") from None
            return
        # one clip per worker at a time, none queued behind it (Dask's default saturation
        # of 1.1 gives a one-thread worker two): a clip whose worker dies then takes no
        # innocent clip with it, which the one allowed failure would report as died too
        with dask.config.set(
            {
                "distributed.scheduler.allowed-failures": 1,
                "distributed.scheduler.worker-saturation": 1.0,
            }
        ):
            self.cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",  # any free port: never fight over 8787
                host="127.0.0.1",
                silence_logs=logging.CRITICAL,
                scheduler_kwargs={"allowed_failures": 1},
                preload=["codec.library.worker_setup"],  # workers leave Ctrl+C to us
            )
            self.client = Client(self.cluster, set_as_default=False)

    def worker_count(self) -> int:
        return len(self.client.scheduler_info(n_workers=-1).get("workers", {}))

    def peak_memory(self) -> list[int]:
        try:
            return sorted(self.client.run(_peak_rss).values())
        except Exception:
            return []

    def __enter__(self) -> DaskCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.client.close(timeout=10)
        finally:
            if self.cluster is not None:
                self.cluster.close(timeout=10)


def _failure_message(job: FileJob, exc: BaseException) -> str:
    name = type(exc).__name__
    if name == "KilledWorker":
        return f"{job.path}: the worker compressing it died (crashed, killed or out of memory)"
    if name == "CancelledError":
        return f"{job.path}: cancelled (the scheduler dropped the task)"
    text = " / ".join(p.strip() for p in str(exc).splitlines() if p.strip())
    return f"{job.path}: task failed ({name}: {text})"


def run_library(
    files: Sequence[tuple[str, str]],
    settings: LibrarySettings,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    timeout: float | None = None,
    cache: RowCache | None = None,
    on_file: Callable[[FileDone], None] | None = None,
    stop: threading.Event | None = None,
    job: Callable[[FileJob, float | None], JobResult] = run_job,
    measure_memory: bool = False,
    cluster: DaskCluster | None = None,
) -> LibraryRun:
    """Compress every (path, name) of `files` on Dask; rows in file order.

    `workers`: processes of the embedded cluster (default one per core; ignored with
    `scheduler`). `timeout`: seconds per file. `on_file` is called in this thread as each
    file finishes (cached files first). `stop` set, or Ctrl+C, ends the run early with what
    finished. `job` is what the workers run (the library's own by default)."""
    t0 = time.perf_counter()
    run = LibraryRun(files=len(files))
    done: dict[int, list[Row]] = {}
    todo: list[tuple[int, FileJob, str | None]] = []

    def finish(index: int, rows: list[Row], cached: bool) -> None:
        done[index] = rows
        if on_file is not None:
            on_file(FileDone(index, rows, cached))

    try:
        for i, (path, name) in enumerate(files):
            fjob = FileJob(str(path), str(name), settings)
            key = None
            if cache is not None:
                try:
                    key = cache.key(content_hash(path), settings.fingerprint(path))
                except OSError as e:
                    finish(i, [error_row(name, "", f"{path}: cannot read: {e.strerror}")], False)
                    continue
                rows = cache.get(key)
                if rows is not None:
                    for row in rows:  # another file with the same bytes may have made them
                        row["path"] = str(name)
                    run.cached += 1
                    finish(i, rows, True)
                    continue
            todo.append((i, fjob, key))
        if todo:
            if cluster is None:
                n = min(workers or default_workers(), len(todo))
                with DaskCluster(scheduler, n) as own:
                    _compute(todo, run, own, timeout, cache, finish, stop, job, measure_memory)
            else:
                _compute(todo, run, cluster, timeout, cache, finish, stop, job, measure_memory)
    except KeyboardInterrupt:
        run.interrupted = True
    run.rows = [row for i in sorted(done) for row in done[i]]
    run.seconds = time.perf_counter() - t0
    return run


def _compute(
    todo: list[tuple[int, FileJob, str | None]],
    run: LibraryRun,
    cluster: DaskCluster,
    timeout: float | None,
    cache: RowCache | None,
    finish: Callable[[int, list[Row], bool], None],
    stop: threading.Event | None,
    job: Callable[[FileJob, float | None], JobResult],
    measure_memory: bool,
) -> None:
    """Submit every file still to do, then collect them as they finish (a poll, so that a
    stop request or Ctrl+C is seen within POLL seconds); cancel the rest on a stop."""
    from distributed import as_completed

    run.workers = cluster.worker_count()
    futures: dict[Any, tuple[int, FileJob, str | None]] = {}
    for index, fjob, key in todo:
        task = f"clip-{index}-{os.urandom(6).hex()}"  # unique: a re-run is a new task
        futures[cluster.client.submit(job, fjob, timeout, pure=False, key=task)] = (
            index,
            fjob,
            key,
        )
    pending = as_completed(list(futures), loop=cluster.client.loop)
    try:
        while not pending.is_empty():
            if stop is not None and stop.is_set():
                run.interrupted = True
                break
            batch = pending.next_batch(block=False)
            if not batch:
                time.sleep(POLL)
                continue
            for fut in batch:
                index, fjob, key = futures.pop(fut)
                _collect(fut, index, fjob, key, run, cache, finish)
    except KeyboardInterrupt:
        run.interrupted = True
    if futures:
        cluster.client.cancel(list(futures), force=True)
    if measure_memory:
        run.worker_memory = cluster.peak_memory()


def _collect(
    fut: Any,
    index: int,
    fjob: FileJob,
    key: str | None,
    run: LibraryRun,
    cache: RowCache | None,
    finish: Callable[[int, list[Row], bool], None],
) -> None:
    """Turn one finished task into rows (its failure too) and cache them when they hold."""
    try:
        result: JobResult = fut.result()
    except Exception as e:
        result = JobResult([error_row(fjob.name, "", _failure_message(fjob, e))], cacheable=False)
    run.computed += 1
    if cache is not None and key is not None and result.cacheable:
        try:
            cache.put(key, result.rows)
        except OSError:
            pass  # a full or read-only cache folder costs a re-run, not this run
    finish(index, result.rows, False)


def library_files(root: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """(path, name relative to `root`) of every clip under `root`."""
    from codec.library.discover import find_clips

    base = Path(root)
    paths = find_clips(base)
    if base.is_file():
        return [(str(p), p.name) for p in paths]
    return [(str(p), p.relative_to(base).as_posix()) for p in paths]
