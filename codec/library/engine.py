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
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from codec.errors import ShellscopeError
from codec.formats.input_paths import InputRefused, outside_problem
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


SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss")  # what reaches a scheduler in another process
LOOPBACK = "127.0.0.1"


def scheduler_problem(address: str) -> str | None:
    """None for a scheduler address a Client can try (`tcp://HOST:PORT`, `HOST:PORT`, also
    tls://, ws://, wss://), else why not in one line: checked before any work, so a typo
    is not an internal error after the client's 20 s of retries."""
    text = address.strip()
    if "://" not in text:
        text = "tcp://" + text
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - parsing it is the check
    except ValueError:
        return "not an address: expected tcp://HOST:PORT"
    if parts.scheme not in SCHEDULER_SCHEMES:
        return (
            f"{parts.scheme}:// cannot reach a scheduler in another process: expected "
            "tcp://HOST:PORT (or tls://, ws://, wss://)"
        )
    if not parts.hostname or parts.path or parts.query or parts.fragment or parts.username:
        return "not an address: expected tcp://HOST:PORT"
    return None


def dashboard_address(text: str) -> str:
    """`--dashboard ADDRESS` as LocalCluster takes it: PORT or :PORT listen on the loopback
    interface only; HOST:PORT where asked. ValueError for anything else."""
    host, sep, port = text.strip().rpartition(":")
    if not sep:
        host, port = "", text.strip()
    host = host.strip("[]") or LOOPBACK
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--dashboard {text!r}: expected PORT, :PORT or HOST:PORT")
    return f"[{host}]:{int(port)}" if ":" in host else f"{host}:{int(port)}"


@cache
def _tidy_nanny() -> type:
    """A Nanny that lets go of the names of the semaphores it shares with its worker.

    Each worker process shares two multiprocessing queues (six POSIX semaphores) with its
    Nanny in this process. Under the spawn start method those keep a name in /dev/shm for
    the worker to open, and only this process's resource tracker removes them: a run killed
    with SIGKILL left "12 leaked semaphore objects" for the tracker, or, when the tracker
    was killed with it (the whole process group), in /dev/shm for good. Once the worker has
    started it holds its own handles, so the names are removed at once, as the fork start
    method does: both sides keep working and a kill leaves nothing behind."""
    from distributed import Nanny

    class TidyNanny(Nanny):
        async def instantiate(self):  # type: ignore[no-untyped-def]
            result = await super().instantiate()
            process = getattr(self, "process", None)
            _release_semaphore_names(
                getattr(process, "init_result_q", None), getattr(process, "child_stop_q", None)
            )
            return result

    return TidyNanny


def _release_semaphore_names(*queues: Any) -> None:
    """Unlink the named semaphores of multiprocessing `queues` now (their finalizers, run
    early: sem_unlink and unregistering from the resource tracker); the open handles stay."""
    from multiprocessing import util
    from multiprocessing.synchronize import SemLock

    names = set()
    for q in queues:
        for lock in (
            getattr(q, "_rlock", None),
            getattr(q, "_wlock", None),
            getattr(q, "_sem", None),
        ):
            name = getattr(getattr(lock, "_semlock", None), "name", None)
            if name:
                names.add(name)
    for finalizer in list(util._finalizer_registry.values()):  # type: ignore[attr-defined]
        args = getattr(finalizer, "_args", None) or ()
        if (
            getattr(finalizer, "_callback", None) is SemLock._cleanup
            and args[:1]
            and args[0] in names
        ):
            finalizer()


class DaskCluster:
    """A Dask client on the embedded LocalCluster (`workers` processes) or on `scheduler`.
    One may serve several runs (a sweep); `close` ends the embedded cluster.

    The embedded cluster listens on the loopback interface only (scheduler, workers, their
    nannies) and serves no dashboard unless `dashboard` (LocalCluster's `dashboard_address`,
    see `dashboard_address`) asks for one."""

    def __init__(self, scheduler: str | None, workers: int, dashboard: str | None = None) -> None:
        if scheduler:
            problem = scheduler_problem(scheduler)
            if problem:
                raise LibraryError(f"--scheduler {scheduler!r}: {problem}")
        try:
            import dask
            from distributed import Client, LocalCluster
        except ImportError as e:  # pragma: no cover - a broken install
            raise LibraryError(f"the library runs on Dask, which is not installed ({e})") from e
        self.cluster = None
        self.dashboard: str | None = None
        if scheduler:
            try:
                self.client = Client(scheduler, timeout="10s", set_as_default=False)
            except (OSError, TimeoutError) as e:
                raise LibraryError(f"--scheduler {scheduler}: cannot connect ({e})") from None
            except Exception as e:  # a scheme without its package (ucx), a refused TLS
                raise LibraryError(f"--scheduler {scheduler}: {type(e).__name__}: {e}") from None
            return
        # one clip per worker at a time, none queued behind it (Dask's default saturation
        # of 1.1 gives a one-thread worker two): a clip whose worker dies then takes no
        # innocent clip with it, which the one allowed failure would report as died too
        # Dask's scheduler and workers always run an HTTP server: without a dashboard it
        # serves nothing (no status, info or metrics pages) on a loopback port of its own
        config: dict[str, Any] = {
            "distributed.scheduler.allowed-failures": 1,
            "distributed.scheduler.worker-saturation": 1.0,
            "distributed.worker.http.routes": [],
        }
        if dashboard is None:
            config["distributed.scheduler.http.routes"] = []
        with dask.config.set(config):
            self.cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=dashboard or f"{LOOPBACK}:0",
                host=LOOPBACK,
                silence_logs=logging.CRITICAL,
                scheduler_kwargs={"allowed_failures": 1, "dashboard": dashboard is not None},
                worker_class=_tidy_nanny(),
                preload=["codec.library.worker_setup"],  # workers leave Ctrl+C to us
            )
            self.client = Client(self.cluster, set_as_default=False)
        self.dashboard = dashboard

    @property
    def dashboard_link(self) -> str | None:
        """Where the embedded cluster's dashboard is (None: it has none)."""
        if self.cluster is None or getattr(self, "dashboard", None) is None:
            return None
        return self.cluster.dashboard_link

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
    dashboard: str | None = None,
    on_start: Callable[[DaskCluster], None] | None = None,
) -> LibraryRun:
    """Compress every (path, name) of `files` on Dask; rows in file order.

    `workers`: processes of the embedded cluster (default one per core; ignored with
    `scheduler`). `timeout`: seconds per file. `on_file` is called in this thread as each
    file finishes (cached files first). `stop` set, or Ctrl+C, ends the run early with what
    finished. `job` is what the workers run (the library's own by default). `dashboard`:
    the embedded cluster's dashboard address (default none); `on_start` is given the cluster
    this call starts, once it is up.

    A file that leaves the library folder, is no regular file or is larger than its format
    reads (or whose sidecar is) is an error row before anything of it is read
    (`entry_problem`): not hashed, not sent to a worker."""
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
            problem = entry_problem(path, name, settings)
            if problem:  # nothing of it is read: not even hashed
                finish(i, [error_row(name, "", f"{path}: {problem}")], False)
                continue
            fjob = FileJob(str(path), str(name), settings)
            key = None
            if cache is not None:
                try:
                    key = cache.key(content_hash(path), settings.fingerprint(path))
                except OSError as e:
                    finish(i, [error_row(name, "", f"{path}: cannot read: {e.strerror}")], False)
                    continue
                except InputRefused as e:  # its sidecar changed since entry_problem
                    finish(i, [error_row(name, "", f"{path}: its sidecar {e}")], False)
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
                with DaskCluster(scheduler, n, dashboard) as own:
                    if on_start is not None:
                        on_start(own)
                    _compute(todo, run, own, timeout, cache, finish, stop, job, measure_memory)
            else:
                _compute(todo, run, cluster, timeout, cache, finish, stop, job, measure_memory)
    except KeyboardInterrupt:
        run.interrupted = True
    run.rows = [row for i in sorted(done) for row in done[i]]
    run.seconds = time.perf_counter() - t0
    return run


def library_root(path: str | os.PathLike[str], name: str) -> Path:
    """The library folder a (path, name) of `library_files` was found in: `path` without the
    components of its relative `name`."""
    p = Path(path)
    return p.parents[len(Path(name).parts) - 1] if Path(name).parts else p.parent


def entry_problem(path: str | os.PathLike[str], name: str, settings: LibrarySettings) -> str | None:
    """Why a library file is not read at all (None: it is), decided before a byte of it is:
    it (or its sidecar) leaves the library folder once links are resolved
    (codec.formats.input_paths), it is no regular file, or it (or its sidecar) is larger
    than anything of its kind. Said in one line that quotes nothing of the file."""
    from codec.formats import readable_problem
    from codec.sidecar import MAX_SIZE, sidecar_path

    root = library_root(path, name)
    problem = outside_problem(root, path, "the library folder") or readable_problem(path)
    if problem or not settings.sidecars:
        return problem
    side = sidecar_path(path)
    if not os.path.lexists(side):
        return None
    problem = outside_problem(root, side, "the library folder")
    if problem is None and side.is_file() and side.stat().st_size > MAX_SIZE:
        problem = (
            f"is {side.stat().st_size:,} bytes, larger than any sidecar ({MAX_SIZE >> 20} MiB)"
        )
    return f"its sidecar {side.name} {problem}" if problem else None


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
