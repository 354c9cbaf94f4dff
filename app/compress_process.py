"""Compression and measurement in a persistent child process, out of the UI's interpreter.

A compression thread in the window's process shares Python's interpreter lock with the UI
thread: every edit's run took the lock from the UI mid-frame (bench/ui_blocks.py). Here the
codec runs in a child process of its own (`python -m app.compress_process`), kept for the
window's life: the clip is sent once per open, the settings once per run; the child answers
with the run's bytes and measurements (the Result without its decoder) and the parent
decodes the bytes again for drawing (codec.codecs.registry.decode_file).

- superseded runs: a newer run (or a cancel) raises the cancel flag of the one in flight,
  which the codec polls; nothing in the parent ever waits for the child (messages go out
  through a sender thread, answers come back on a reader thread);
- progress: the child reports like the window's thread did (`ProgressGate`);
- errors of a run come back as their message and traceback;
- the child dying (killed, a crash in a kernel) is noticed by the reader thread as the
  pipe's end: `died(reason)` is reported and the next run starts a new child;
- the parent ending (closed, killed) closes the pipe: the child exits at once;
- warm-up: the child compiles (or loads) the codec's kernels itself on start, and says so;
  the parent loads the ones it draws with (the decoder's, the skin's) from the cache after.

Protocol (multiprocessing.connection frames of pickles over the child's stdin / stdout; the
child's own stdout is its stderr): parent -> child ("open", clip, fixed), ("run",
generation, precision, shell_distance, settings, environment), ("cancel", generation);
child -> parent ("progress", generation, fraction, message), ("done", generation, the
pickled result without its decoder), ("cancelled", generation), ("failed", generation,
message, traceback), ("warming", text) while the kernels compile ("" once they have),
("warmed", codec setting) once they are loaded.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from codec.codecs.acl_compressor_path import ENV as ACL_COMPRESSOR_ENV
from codec.errors import Cancelled
from codec.model.clip import Clip
from codec.result import Result
from codec.settings import CompressionSettings

Array = np.ndarray
Listener = Callable[[tuple], None]  # gets every answer of the child, on the reader thread

ENV = "SHELLSCOPE_COMPRESS_IN"  # "process" or "thread": where the window compresses
PROCESS, THREAD = "process", "thread"
DEFAULT_MODE = THREAD
PROGRESS_INTERVAL = 0.05  # s between progress messages of one run
# a run says how far it is only once it has taken this long: an edit's run (tens of ms) would
# otherwise repaint the status bar's progress for each step
PROGRESS_DELAY = 0.3  # s
# the child's niceness: on two cores the codec's threads took the CPU from the UI thread
# mid-frame (bench/ui_blocks.py); the UI's process keeps the higher priority
CHILD_NICE = 3
WARM_REST_AFTER_S = 5.0  # the other codecs' warm-up waits this long for the first result
_ROOT = Path(__file__).resolve().parents[1]
# what the window may set in its environment after the child started (Compression > ACL 2.1
# compressor): sent with every run
RUN_ENV = (ACL_COMPRESSOR_ENV,)


def mode(choice: str | None = None) -> str:
    """Where the window compresses: `choice`, else $SHELLSCOPE_COMPRESS_IN, else the default
    (ValueError for anything but "process" or "thread")."""
    value = (choice or os.environ.get(ENV) or DEFAULT_MODE).strip().lower()
    if value not in (PROCESS, THREAD):
        raise ValueError(f"{ENV}={value!r}: expected {PROCESS!r} or {THREAD!r}")
    return value


class ProgressGate:
    """A run's progress callback that passes a report on only once the run has taken
    PROGRESS_DELAY, and then at most once per PROGRESS_INTERVAL."""

    def __init__(self, send: Callable[[float, str], None]) -> None:
        self.send = send
        self.started = time.monotonic()
        self.last = 0.0

    def __call__(self, fraction: float, message: str = "") -> None:
        now = time.monotonic()
        if now - self.started < PROGRESS_DELAY or now - self.last < PROGRESS_INTERVAL:
            return
        self.last = now
        self.send(float(fraction), str(message))


def rebuilt(answer: bytes) -> Result:
    """The result of a ("done", generation, answer): unpickled, its decoder read from its
    bytes (what every .ssc reader does; CompressedFormatError on bytes that do not read)."""
    from codec.codecs.registry import decode_file

    result = pickle.loads(answer)
    _, decoder = decode_file(result.data, result.clip.skeleton)
    return dataclasses.replace(result, decoder=decoder)


# --- the parent's side ------------------------------------------------------------------
class CompressProcess:
    """The window's compression child: `run` sends a run (starting the child, and sending it
    the clip, when needed), `cancel` stops the one in flight, `close` ends the child.
    Answers go to `listener` on a reader thread (("died", reason) when the child ended
    without being told to). No method waits for the child."""

    def __init__(self, listener: Listener, nice: int = CHILD_NICE) -> None:
        self._listener = listener
        self._nice = nice
        self._lock = threading.Lock()
        self._child: _Child | None = None
        self._sent: tuple[Clip, Any] | None = None  # the clip (and fixed codec) it holds
        self.restarts = 0  # children started after the first one died
        self.closed = False

    @property
    def pid(self) -> int | None:
        child = self._child
        return None if child is None else child.proc.pid

    def start(self) -> None:
        """Start the child now (it warms its kernels up while the window opens)."""
        with self._lock:
            self._ensure()

    def run(
        self, generation: int, source: Clip, fixed: Any, joints: Any, settings: CompressionSettings
    ) -> None:
        """Compress `source` with `joints`' per-joint precision and shell distance under
        `settings`; a run in flight is superseded (its answer is "cancelled")."""
        with self._lock:
            child = self._ensure()
            if self._sent is None or self._sent[0] is not source or self._sent[1] is not fixed:
                child.send(("open", source, fixed))
                self._sent = (source, fixed)
            env = {k: os.environ.get(k) for k in RUN_ENV}
            child.send(("run", generation, joints.precision, joints.shell_distance, settings, env))

    def cancel(self, generation: int) -> None:
        """Stop run `generation` if it is in flight (its answer is "cancelled")."""
        with self._lock:
            if self._child is not None:
                self._child.send(("cancel", generation))

    def close(self, timeout: float = 1.0) -> None:
        """End the child: told to, then killed after `timeout`."""
        with self._lock:
            self.closed = True
            child, self._child = self._child, None
        if child is not None:
            child.close(timeout)

    def _ensure(self) -> _Child:
        if self.closed:
            raise RuntimeError("the compression process was closed")
        if self._child is None or not self._child.alive:
            if self._child is not None:
                self.restarts += 1
            self._sent = None
            self._child = _Child(self._answer, self._nice)
        return self._child

    def _answer(self, child: _Child, message: tuple) -> None:
        if child is not self._child:  # an old child's last words
            return
        if message[0] == "died" and self.closed:
            return
        self._listener(message)


class _Child:
    """One child process, its sender and reader threads. Killed when garbage-collected or at
    the interpreter's exit (weakref.finalize), whichever comes first."""

    def __init__(self, answer: Callable[[_Child, tuple], None], nice: int) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), env.get("PYTHONPATH")) if p)
        env["SHELLSCOPE_CHILD_NICE"] = str(nice)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app.compress_process"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._out = Connection(os.dup(self.proc.stdin.fileno()), readable=False)
        self._in = Connection(os.dup(self.proc.stdout.fileno()), writable=False)
        self.proc.stdin.close()
        self.proc.stdout.close()
        self.alive = True
        self._ending = threading.Event()  # we end it (close, exit): the end is not a death
        self._queue: queue.SimpleQueue[tuple | None] = queue.SimpleQueue()
        self._answer = answer
        self._finalizer = weakref.finalize(self, _kill, self.proc, self._ending)
        threading.Thread(target=self._send_loop, name="compress-send", daemon=True).start()
        threading.Thread(target=self._read_loop, name="compress-read", daemon=True).start()

    def send(self, message: tuple) -> None:
        self._queue.put(message)

    def close(self, timeout: float) -> None:
        self._ending.set()
        self._queue.put(None)  # the sender closes the pipe: the child reads its end and exits
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._finalizer.detach()

    def _send_loop(self) -> None:
        while (message := self._queue.get()) is not None:
            try:
                self._out.send(message)
            except OSError:  # the child is gone: the reader says so
                break
        with contextlib.suppress(OSError):
            self._out.close()

    def _read_loop(self) -> None:
        while True:
            try:
                message = self._in.recv()
            except (EOFError, OSError):
                break
            except Exception:  # a frame that does not unpickle: the protocol broke, and
                # the run it answered would wait for ever; end the child (a death: restarted)
                traceback.print_exc()
                _kill(self.proc, threading.Event())
                break
            self._answer(self, message)
        self.alive = False
        self._queue.put(None)  # the sender ends too (it waited for ever behind a dead child)
        with contextlib.suppress(OSError):
            self._in.close()
        if self._ending.is_set():
            return
        try:
            code = self.proc.wait(5.0)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._finalizer.detach()
        self._answer(self, ("died", _ending(code)))


def _kill(proc: subprocess.Popen, ending: threading.Event) -> None:
    ending.set()
    with contextlib.suppress(OSError):
        proc.kill()
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        proc.wait(1.0)


def _ending(code: int) -> str:
    """How a child ended, in words: 'SIGKILL', 'exit code 1'."""
    if code < 0:
        with contextlib.suppress(ValueError):
            return signal.Signals(-code).name
        return f"signal {-code}"
    return f"exit code {code}"


# --- the child's side -------------------------------------------------------------------
class _Job:
    def __init__(self, message: tuple) -> None:
        self.message = message
        self.cancel = threading.Event()


def child_main() -> None:
    """The child: a reader thread takes messages (a newer run cancels the one in flight),
    the main thread runs them in order; the pipe's end (the parent closed it or died) ends
    the process at once."""
    out = Connection(os.dup(1), readable=False)
    os.dup2(2, 1)  # print() and native libraries' stdout must not corrupt the answers
    inbox = Connection(0, writable=False)
    nice = int(os.environ.get("SHELLSCOPE_CHILD_NICE", CHILD_NICE))
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    sending = threading.Lock()

    def send(message: tuple) -> None:
        with sending:
            out.send(message)

    jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
    runs: dict[int, _Job] = {}  # runs not yet answered, by generation
    first_result = threading.Event()

    def read() -> None:
        while True:
            try:
                message = inbox.recv()
            except (EOFError, OSError):
                os._exit(0)  # the window is gone: nothing here is worth finishing
            job = _Job(message)
            if message[0] in ("run", "open"):
                for older in list(runs.values()):  # superseded
                    older.cancel.set()
            if message[0] == "cancel":
                stale = runs.get(message[1])
                if stale is not None:
                    stale.cancel.set()
                continue
            if message[0] == "run":
                runs[message[1]] = job
            jobs.put(job)

    threading.Thread(target=read, name="compress-inbox", daemon=True).start()
    threading.Thread(
        target=_warm, args=(send, first_result), name="jit-warm-up", daemon=True
    ).start()
    cache: dict[str, Any] = {}
    while True:
        job = jobs.get()
        if job.message[0] == "open":
            _, source, fixed = job.message
            from codec.compression import Compression

            cache["compression"] = Compression(source, fixed=fixed)
            continue
        generation = job.message[1]
        try:
            send(_run(cache["compression"], job, send))
        finally:
            runs.pop(generation, None)
            first_result.set()


def _run(compression: Any, job: _Job, send: Callable[[tuple], None]) -> tuple:
    """One run's answer: ("done", generation, result without its decoder), ("cancelled",
    generation) or ("failed", generation, message, traceback)."""
    _, generation, precision, shell_distance, settings, env = job.message
    if job.cancel.is_set():  # superseded while it waited
        return ("cancelled", generation)
    for key, value in env.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    gate = ProgressGate(lambda f, m: send(("progress", generation, f, m)))
    try:
        clip = compression.clip.with_skeleton_settings(precision, shell_distance)
        result = compression.run(
            settings, progress=gate, cancel=job.cancel.is_set, skeleton=clip.skeleton
        )
    except Cancelled:
        return ("cancelled", generation)
    except Exception as exc:  # any failure is shown, the child lives on
        return ("failed", generation, f"{type(exc).__name__}: {exc}", traceback.format_exc())
    # pickled apart, so that an answer the parent cannot read is still that run's failure
    return ("done", generation, pickle.dumps(dataclasses.replace(result, decoder=None), 5))


def _warm(send: Callable[[tuple], None], first_result: threading.Event) -> None:
    """Compile (or load) the kernels: the default codec's first, then, once the first result
    is out (or after WARM_REST_AFTER_S), every other codec's; says when the compiler runs,
    and ("warmed", codec setting) after each (the parent then loads the default codec's
    kernels it draws with from the cache, without compiling them a second time)."""
    from codec import warm_up
    from codec.codecs.registry import AUTO, DEFAULT

    for codec_setting in (DEFAULT, AUTO):
        if codec_setting == AUTO:
            first_result.wait(WARM_REST_AFTER_S)
        report = warm_up.warm_up(lambda: send(("warming", warm_up.COMPILING)), codec_setting)
        if report.compiled:
            send(("warming", ""))
        send(("warmed", codec_setting))


if __name__ == "__main__":
    child_main()
