"""Run an untrusted reader (usd-core, ufbx) in a child process that cannot take ours down.

Native readers are where a hostile file does its damage: a stack overflow (50,000 nested
prims), an abort inside a C++ assertion, a section length that allocates gigabytes. In a
child process each of those is one line for the user and the window keeps its clip:

- memory: the child runs under RLIMIT_AS (its address space; a C++ allocation past it fails
  as bad_alloc, a numpy one as MemoryError) and the parent watches its resident size and
  kills it past `codec.model.limits.reader_memory` of the file (usd-core reserves ~0.8 GB of
  address space it never touches, so RLIMIT_AS alone cannot hold RSS near the target);
- time: killed after `codec.model.limits.reader_seconds` of the file;
- crashes: a signal becomes "usd-core crashed while reading NAME: SIGSEGV";
- files: the child's TMPDIR is a folder of its own, removed when it ends, and the crash
  report usd-core writes as it aborts (`st_python3.11.PID`, in the TMPDIR its zygote had as
  it imported usd-core) is removed with it;
- start: the child is a fork of a process that has imported the reader once
  (codec.formats.reader_zygote), not a new interpreter: a file's read no longer pays
  usd-core's and numpy's imports, and still has a process of its own (Linux; where pidfds
  are missing, macOS, a fresh `python -m module` per file, as before);
- stderr: the child's stderr (usd-core's "Warning: in _ReportErrors ..." banners, numpy
  warnings) is captured, never shown; the reader's own message is the line it writes after
  MESSAGE_MARK, and a crash's message carries the useful part of the noise (a parse error's
  line, column and what was expected, see `useful_noise`).

Protocol: stdin holds one JSON request line and, when its "path" is null, the file's bytes.
On success the child writes an .npz to stdout and exits 0; on a file problem it writes
MESSAGE_MARK + one line to stderr and exits EXIT_BAD_FILE (the line may start with
LINE_MARK "N:" for the file's line N).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import numpy as np

from codec.errors import ClipFormatError
from codec.formats import reader_zygote
from codec.formats.reader_zygote import ReaderChild, forked_reader
from codec.model.limits import READER_ADDRESS_SPACE, file_bytes, reader_memory, reader_seconds

Array = np.ndarray
EXIT_BAD_FILE = 3
MESSAGE_MARK = "\x1eshellscope-message:"
_ROOT = Path(__file__).resolve().parents[2]
_POLL_S = 0.02
# what a child's environment gets so it stays small: one thread for usd-core and BLAS, one
# malloc arena (each arena reserves 64 MB of address space)
_CHILD_ENV = {
    "PXR_WORK_THREAD_LIMIT": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MALLOC_ARENA_MAX": "2",
    "TF_FATAL_VERIFY": "0",
    "PYTHONWARNINGS": "ignore",
}


def run_reader(
    path: object,
    data: bytes | None,
    request: dict,
    *,
    module: str,
    library: str,
    address_space: int = READER_ADDRESS_SPACE,
    seconds: float | None = None,
    doing: str = "reading",
) -> dict[str, Array]:
    """Run `module`'s main() on the file in a child of its own (forked from the module's
    zygote, as if `python -m module`); its .npz answer as a dict of arrays, or
    ClipFormatError naming the file (never another exception for anything the file does).

    `library` names the native reader in messages ("usd-core", "ufbx"); `seconds` replaces
    codec.model.limits.reader_seconds of the file's size; `doing` says what the child does
    with the file in a crash's message ("reading", or "writing" for a USD export)."""
    size = file_bytes(path, data)
    memory = reader_memory(size)
    req = dict(request, path=None if data is not None else os.fspath(path))  # type: ignore[arg-type]
    payload = json.dumps(req).encode() + b"\n" + (data or b"")
    env = dict(os.environ)
    env.update(_CHILD_ENV)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), env.get("PYTHONPATH")) if p)
    seconds = reader_seconds(size) if seconds is None else seconds
    name = os.path.basename(os.fspath(path))  # type: ignore[arg-type]
    try:
        # a fork of the module's zygote (codec.formats.reader_zygote): a process of its own,
        # with its own TMPDIR (where the zygote's imports are already done); where the
        # platform cannot fork one, a fresh interpreter
        if reader_zygote.WARM_START:
            proc: ReaderChild | _Spawned = forked_reader(
                module, env, _no_core, address_space + memory, seconds
            )
        else:
            proc = _Spawned(module, env, address_space + memory)
    except TimeoutError:
        raise ClipFormatError(path, f"{library} took over {seconds:g} s; it was stopped") from None
    except OSError as e:
        raise ClipFormatError(
            path, f"cannot start the {library} reader: {e.strerror or e}"
        ) from None
    with proc:
        out, err, killed = _wait(proc, payload, memory, seconds)
    text = err.decode("utf-8", "replace")
    if killed == "memory":
        raise ClipFormatError(
            path,
            f"{library} needed more than {memory >> 20} MB of memory for this "
            f"{size:,}-byte file (the limit for its size); it was stopped",
        )
    if killed == "time":
        raise ClipFormatError(path, f"{library} took over {seconds:g} s; it was stopped")
    if proc.returncode == EXIT_BAD_FILE:
        raise _file_error(path, text)
    if proc.returncode != 0:
        raise ClipFormatError(path, _crash_text(library, name, proc.returncode, text, doing))
    try:
        with np.load(io.BytesIO(out), allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except (ValueError, OSError, EOFError) as e:
        raise ClipFormatError(path, f"{library} gave no readable answer ({e})") from None


class _Spawned(subprocess.Popen):
    """`python -m module` under RLIMIT_AS `limit`, with a TMPDIR of its own removed as it
    ends (where usd-core writes its crash report): the start without a zygote."""

    def __init__(self, module: str, env: dict[str, str], limit: int) -> None:
        self.scratch = tempfile.TemporaryDirectory(prefix="shellscope-reader-")

        def confine() -> None:  # in the child, before exec (never above an inherited limit)
            hard = resource.getrlimit(resource.RLIMIT_AS)[1]
            cap = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            _no_core()

        try:
            super().__init__(
                [sys.executable, "-m", module],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**env, "TMPDIR": self.scratch.name},
                preexec_fn=confine,
            )
        except BaseException:
            self.scratch.cleanup()
            raise

    def __exit__(self, *exc: object) -> None:
        try:
            super().__exit__(*exc)
        finally:
            self.scratch.cleanup()


def _no_core() -> None:
    """Before the reader runs (in the zygote, or a fresh child before exec): a crash of a
    reader leaves no core file."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _wait(
    proc: ReaderChild | _Spawned, payload: bytes, memory: int, seconds: float
) -> tuple[bytes, bytes, str]:
    """(stdout, stderr, "" | "memory" | "time"): feed the child and wait, killing it past
    `memory` bytes resident or `seconds`. Pipes are served by threads, so a child that
    floods stderr or dies half-way through its input never blocks us."""
    out: list[bytes] = []
    err = _Tail()

    def feed() -> None:
        with contextlib.suppress(OSError):  # BrokenPipeError: the child died early
            proc.stdin.write(payload)  # type: ignore[union-attr]
        with contextlib.suppress(OSError):
            proc.stdin.close()  # type: ignore[union-attr]

    def drain(pipe: IO[bytes], sink: Callable[[bytes], object]) -> None:
        for chunk in iter(lambda: pipe.read1(1 << 16), b""):
            sink(chunk)

    threads = [
        threading.Thread(target=feed, daemon=True),
        threading.Thread(target=drain, args=(proc.stdout, out.append), daemon=True),
        threading.Thread(target=drain, args=(proc.stderr, err.add), daemon=True),
    ]
    for t in threads:
        t.start()
    deadline = time.monotonic() + seconds
    killed = ""
    while True:
        try:
            proc.wait(timeout=_POLL_S)
            break
        except subprocess.TimeoutExpired:
            pass
        if _resident(proc.pid) > memory:
            killed = "memory"
        elif time.monotonic() > deadline:
            killed = "time"
        if killed:
            proc.kill()
            proc.wait()
            break
    for t in threads:
        t.join(timeout=5.0)
    return b"".join(out), err.bytes(), killed


class _Tail:
    """A stream's first and last 256 KB: a child may print megabytes of warnings, and its
    message comes last."""

    KEEP = 1 << 18

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()

    def add(self, chunk: bytes) -> None:
        if len(self.head) < self.KEEP:
            self.head += chunk
            return
        self.tail += chunk
        if len(self.tail) > 2 * self.KEEP:
            del self.tail[: len(self.tail) - self.KEEP]

    def bytes(self) -> bytes:
        return bytes(self.head + b"\n" + self.tail)


def _resident(pid: int) -> int:
    """Resident bytes of a live process (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _file_error(path: object, text: str) -> ClipFormatError:
    """The child's own message (after MESSAGE_MARK), with its line when it names one."""
    message = text.rsplit(MESSAGE_MARK, 1)[-1].strip() if MESSAGE_MARK in text else ""
    message = " ".join(message.split()) or "cannot be read"
    m = re.match(r"line (\d+)(?:, column (\d+))?: (.*)", message)
    if m:
        col = f"column {m[2]}: " if m[2] else ""
        return ClipFormatError(path, col + m[3], line=int(m[1]))
    m = re.match(r"byte (\d+): (.*)", message)
    if m:
        return ClipFormatError(path, m[2], offset=int(m[1]))
    return ClipFormatError(path, message)


def _crash_text(library: str, name: str, code: int, text: str, doing: str = "reading") -> str:
    if code < 0:
        try:
            what = signal.Signals(-code).name
        except ValueError:
            what = f"signal {-code}"
    else:
        what = f"exit code {code}"
    if "bad_alloc" in text or ("MemoryError" in text and code > 0):
        what += " (out of memory)"
    hint = useful_noise(text)
    return f"{library} crashed while {doing} {name}: {what}" + (f" ({hint})" if hint else "")


_FATAL = re.compile(r"FATAL ERROR:?\s*(.+)")
_PARSE = re.compile(r":(\d+):(\d+): (parse error[^'\n]*?)(?: at '(.*?)')?(?: in <(.*?)>)?'?\s*$")
_NAMESPACE = re.compile(r"\b\w*pxrInternal\w*::(?:\w+::)*")


def useful_noise(text: str) -> str:
    """The part of a native reader's stderr worth a user's time, on one line: a FATAL
    ERROR's reason, or a parse error's line, column and what was expected; "" for noise."""
    for raw in text.splitlines():
        m = _FATAL.search(raw)
        if m:
            return without_tokens(" ".join(m[1].split()))[:200]
    for raw in text.splitlines():
        m = _PARSE.search(raw)
        if m:
            return parse_error_text(m)
    return ""


def parse_error_text(m: re.Match) -> str:
    """'line L, column C: expected X at 'tok' in <path>' from a usd-core parse error."""
    what = _NAMESPACE.sub("", m[3]).replace("parse error matching ", "expected ")
    tail = f" at {parse_token_text(m[4])}" if m[4] else ""
    where = f" in <{m[5]}>" if m[5] else ""
    return f"line {m[1]}, column {m[2]}: {what}{tail}{where}"


_QUOTED_TOKEN = re.compile(r"\bat '([^'\n]*)'")


def without_tokens(text: str) -> str:
    """usd-core's message with every `at 'TOKEN'` it quotes told by kind (parse_token_text):
    a file that does not parse as USD may hold anything."""
    return _QUOTED_TOKEN.sub(lambda m: "at " + parse_token_text(m[1]), text)


def parse_token_text(token: str) -> str:
    """The token a usd-core parse error stopped at, as a message may say it: punctuation by
    name, anything else by its kind (a file that is no USD may hold anything)."""
    from codec.formats.input_paths import described

    return described(token, _PUNCTUATION)


_PUNCTUATION = frozenset("{}[]()<>=,;:@\"'#")


def child_message(message: str) -> None:
    """In a child: report a file problem (one line) the way `run_reader` reads it."""
    sys.stderr.write("\n" + MESSAGE_MARK + " ".join(str(message).split()) + "\n")
