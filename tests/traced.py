"""Peak memory a call allocates (tracemalloc: numpy reports its buffers), measured in a
child process that runs nothing else.

Why a child: CPython 3.11's `tracemalloc.stop()` races with a thread that allocates through
numpy with the GIL released (python/cpython#128679, fixed in 3.12 and 3.13 only). In a
pytest worker, threads an earlier test left behind (the window's kernel warm-up, a
compression still finishing, the segment pool) may be doing exactly that, and the worker
died with SIGSEGV in CI. The child has no thread but its main one, and says so for every
call (`alone`), so the measure cannot crash and cannot go wrong unnoticed.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codec.formats import READER_MODULES  # imported before the first traced call: a reader's

# first use imports its format's modules, and that import's megabytes are no call's own

ROOT = Path(__file__).resolve().parents[1]
ADDRESS_CAP = 6 << 30  # the child's address space (numba and numpy alone take about 1.5 GiB)

_CHILD = """
import importlib, json, os, sys, threading, time, tracemalloc, warnings
spec = json.load(open(sys.argv[1]))
if spec["runtime_warnings_are_errors"]:
    warnings.simplefilter("error", RuntimeWarning)
module, _, name = spec["target"].partition(":")
fn = getattr(importlib.import_module(module), name)
for first in spec["imports"]:  # a call's peak is its own, not the first import's
    importlib.import_module(first)
out = open(sys.argv[2], "w")
out.write("ready\\n")  # imports done: from here on the parent's guard is per call
out.flush()
from codec.formats.reader_zygote import readers_usage
def cpu():  # this process's threads, the children it waited for and the readers it forked
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system + readers_usage()[0]
for args in spec["calls"]:
    tracemalloc.start()
    start, cpu_start = time.perf_counter(), cpu()
    try:
        value, error = fn(*args), None
    except Exception as e:
        value, error = None, {"type": type(e).__name__, "message": str(e)}
    seconds, cpu_seconds = time.perf_counter() - start, cpu() - cpu_start
    peak = tracemalloc.get_traced_memory()[1]
    alone = threading.active_count() == 1
    if alone:
        tracemalloc.stop()
    out.write(json.dumps({"value": value, "error": error, "peak": peak, "seconds": seconds,
                          "cpu": cpu_seconds, "alone": alone}) + "\\n")
    out.flush()  # one line per call as it ends: the parent sees the child progress
    if not alone:
        break
"""


@dataclass(frozen=True)
class Traced:
    """One call's outcome: what it returned (JSON), or the exception it raised (its type's
    name and message), the peak bytes traced while it ran, its seconds, and its CPU seconds
    (the child's threads and the children it waited for): what a limit on a call's work
    compares, since a loaded machine stretches its seconds several times over."""

    value: Any
    error_type: str | None
    message: str
    peak: int
    seconds: float
    cpu: float


def traced_calls(
    target: str,
    calls: Sequence[Sequence[Any]],
    runtime_warnings_are_errors: bool = False,
    timeout: float = 240.0,
) -> list[Traced]:
    """`target(*args)` for each of `calls` ("package.module:function"; JSON arguments and
    return value), one after another in one fresh child process, each under tracemalloc.

    `timeout` is a hang guard on each call, not on the whole child: one for all 46 of the
    hostile files ran out on a machine at load 16 while every call was progressing."""
    with tempfile.TemporaryDirectory() as folder:
        spec, result = Path(folder, "spec.json"), Path(folder, "out.json")
        spec.write_text(
            json.dumps(
                {
                    "target": target,
                    "calls": [list(map(_jsonable, args)) for args in calls],
                    "runtime_warnings_are_errors": runtime_warnings_are_errors,
                    "imports": list(READER_MODULES),
                }
            )
        )
        path = [str(ROOT), os.environ.get("PYTHONPATH", "")]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, path))}
        with open(Path(folder, "stderr"), "w+") as err:
            child = subprocess.Popen(
                [sys.executable, "-c", _CHILD, str(spec), str(result)],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=err,
                preexec_fn=_cap_address_space,
            )
            code = _wait_progressing(child, result, timeout)
            err.seek(0)
            assert code == 0, f"traced child exited {code}:\n{err.read()[-3000:]}"
        outcomes = [json.loads(line) for line in result.read_text().splitlines()[1:]]
    for i, outcome in enumerate(outcomes):
        assert outcome["alone"], f"call {i} of {target} left a thread running: not measurable"
    assert len(outcomes) == len(calls)
    return [
        Traced(
            o["value"],
            o["error"] and o["error"]["type"],
            o["error"]["message"] if o["error"] else "",
            o["peak"],
            o["seconds"],
            o["cpu"],
        )
        for o in outcomes
    ]


START_S = 240.0  # the child's imports, before its first call (a loaded machine)


def _wait_progressing(child: subprocess.Popen, lines: Path, timeout: float) -> int:
    """The child's exit code once it ends; it is stopped when its start takes START_S or a
    call takes `timeout` s (each line it writes is a step: "ready", then one per call)."""
    done, since = 0, time.monotonic()
    while True:
        try:
            return child.wait(0.2)
        except subprocess.TimeoutExpired:
            pass
        now = lines.read_bytes().count(b"\n") if lines.exists() else 0
        if now > done:
            done, since = now, time.monotonic()
        elif time.monotonic() - since > (limit := timeout if done else max(timeout, START_S)):
            child.kill()
            child.wait()
            step = f"call {done - 1}" if done else "start"
            raise AssertionError(f"traced {step} took over {limit:g} s: stopped")


def _cap_address_space() -> None:
    """A reader that trusts a lying header fails with MemoryError, not a dead machine."""
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    cap = ADDRESS_CAP if hard == resource.RLIM_INFINITY else min(ADDRESS_CAP, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _jsonable(value: Any) -> Any:
    return str(value) if isinstance(value, Path) else value


def clip_samples(path: str) -> int:
    """A child target: the clip's sample count (a Clip does not cross as JSON)."""
    from codec.formats import load_clip

    return load_clip(path).num_samples


def refusal(path: str) -> str:
    """A child target: load_clip's ClipFormatError message; anything else is raised (the
    parent sees its type), and a clip that loads is an AssertionError."""
    from codec.errors import ClipFormatError
    from codec.formats import load_clip

    try:
        load_clip(path)
    except ClipFormatError as e:
        return str(e)
    raise AssertionError(f"{path} loaded: it should have been refused")
