"""A warm start for native readers' children: one process per reader module imports it once
(usd-core and numpy are most of a fresh child's 0.3-0.8 s) and forks a fresh child per file.

Each file still gets a process of its own, so codec.formats.reader_process's isolation holds:
a crash, an abort, RLIMIT_AS, a kill end that child only, and it starts with usd-core's layer
registry empty (the zygote imports, it never opens a file). What changes is that the child is
a fork of an interpreter that has done its imports, not a new one.

Processes: the zygote (`python -m codec.formats.reader_zygote MODULE FD`, single-threaded)
takes requests on a SOCK_SEQPACKET socket: a JSON line and four descriptors (the reader's
stdin, stdout, stderr and a status socket). For each it forks a waiter, which forks the
reader and reports on the status socket first the reader's pid, then, once the parent holds
a pidfd of it (so a kill can never reach another process), its exit code (negative: the
signal that ended it, as Popen says), CPU seconds and peak RSS (what RUSAGE_CHILDREN would
tell of a child of one's own).
The zygote ends when its socket closes (the parent ended or let it go) or after IDLE_S without
a request (the parent starts another for the next file), and removes its
TMPDIR, the folder usd-core writes a crash report to (it reads TMPDIR once, as it loads).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import io
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO

_MESSAGE = 1 << 16
# a zygote idle this long ends (its ~100 MB resident with usd-core imported go back); the
# next read starts another, paying the imports once more
IDLE_S = 300.0
# a warm start needs fork, pidfds and descriptors over a socket (Linux); elsewhere
# codec.formats.reader_process starts a fresh interpreter per file, as it did before zygotes
WARM_START = (
    sys.platform.startswith("linux")
    and hasattr(os, "pidfd_open")
    and hasattr(signal, "pidfd_send_signal")
    and hasattr(socket, "send_fds")
)


class ReaderChild:
    """One forked reader, seen from the parent as codec.formats.reader_process uses a Popen:
    pid, stdin, stdout, stderr, wait(timeout), kill(), returncode; a context manager that
    closes its pipes and removes what it left (its TMPDIR, and a crash report usd-core wrote
    in the zygote's)."""

    def __init__(
        self, pid: int, status: socket.socket, pipes: tuple[int, int, int], scratch: str
    ) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._pidfd = os.pidfd_open(pid)  # the waiter reaps it only after this
        status.sendall(b"k")
        self._status = status
        self._scratch = Path(scratch)
        self.stdin: IO[bytes] = open(pipes[0], "wb")  # closed by __exit__
        self.stdout: io.BufferedReader = open(pipes[1], "rb")
        self.stderr: io.BufferedReader = open(pipes[2], "rb")

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self._status.settimeout(timeout)
            try:
                message = self._status.recv(_MESSAGE)
            except TimeoutError:
                raise subprocess.TimeoutExpired("reader", timeout or 0.0) from None
            # no message: the waiter itself was killed (never the case but by hand)
            code, cpu, kib = message.split() if message else (-signal.SIGKILL, 0.0, 0)
            self.returncode = int(code)
            with _LOCK:
                _USAGE[0] += float(cpu)
                _USAGE[1] = max(_USAGE[1], int(kib))
        return self.returncode

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)

    def __enter__(self) -> ReaderChild:
        return self

    def __exit__(self, *exc: object) -> None:
        for f in (self.stdin, self.stdout, self.stderr):
            with contextlib.suppress(OSError):
                f.close()
        self._status.close()
        os.close(self._pidfd)
        shutil.rmtree(self._scratch, ignore_errors=True)
        if self.returncode != 0:  # `st_python3.11.PID`: nothing the user needs
            for entry in self._scratch.parent.glob("st_*"):
                with contextlib.suppress(OSError):
                    entry.unlink()


class Zygote:
    """The parent's end of one zygote: starts it, forks readers from it, lets it go."""

    def __init__(self, module: str, env: dict[str, str], limits: object) -> None:
        self.module = module
        self.env = env
        self.owner = os.getpid()
        self.folder = Path(tempfile.mkdtemp(prefix="shellscope-reader-zygote-"))
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._socket = ours
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", __name__, module, str(theirs.fileno()), repr(IDLE_S)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env={**env, "TMPDIR": str(self.folder)},
                pass_fds=(theirs.fileno(),),
                preexec_fn=limits,  # type: ignore[arg-type]
            )
        except OSError:
            ours.close()
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        finally:
            theirs.close()

    def fork(self, address_space: int, timeout: float) -> ReaderChild:
        """A new reader under RLIMIT_AS `address_space`, its pid known; OSError when the
        zygote is gone or gives no pid within `timeout` s (its imports come first)."""
        fds = [os.pipe() for _ in range(3)]
        status, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        scratch = tempfile.mkdtemp(prefix="read-", dir=self.folder)
        # child's ends: stdin's read end, stdout's and stderr's write ends
        child = [fds[0][0], fds[1][1], fds[2][1], theirs.fileno()]
        request = {"address_space": address_space, "tmpdir": scratch}
        try:
            socket.send_fds(self._socket, [json.dumps(request).encode()], child)
        except OSError:
            status.close()
            for fd in (fds[0][1], fds[1][0], fds[2][0]):
                os.close(fd)
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        finally:
            theirs.close()
            for fd in child[:3]:
                os.close(fd)
        status.settimeout(timeout)
        pipes = (fds[0][1], fds[1][0], fds[2][0])
        try:
            message = status.recv(_MESSAGE)
            if not message:
                raise OSError(f"the {self.module} zygote ended")
            return ReaderChild(int(message), status, pipes, scratch)
        except OSError:
            status.close()
            for fd in pipes:
                os.close(fd)
            shutil.rmtree(scratch, ignore_errors=True)
            raise

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """Let the zygote go: it ends as its socket closes and removes its folder."""
        self._socket.close()
        try:
            self.proc.wait(5.0)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


_ZYGOTES: dict[str, Zygote] = {}
_LOCK = threading.Lock()
_USAGE = [0.0, 0]  # CPU seconds of the readers that ended, the largest peak RSS in KiB


def readers_usage() -> tuple[float, int]:
    """(CPU seconds summed, largest peak RSS in KiB) of the readers this process forked, as
    each ended: its zygotes' grandchildren, which os.times() and RUSAGE_CHILDREN never see."""
    with _LOCK:
        return _USAGE[0], _USAGE[1]


@atexit.register
def _close_all() -> None:
    """At exit: each zygote is let go and reaped, and its folder removed."""
    with _LOCK:
        zygotes = [z for z in _ZYGOTES.values() if z.owner == os.getpid()]
        _ZYGOTES.clear()
    for z in zygotes:
        z.close()


def zygote_for(module: str, env: dict[str, str], limits: object) -> Zygote:
    """This process's zygote for `module`, started on first use, or again when the last one
    ended or the environment a reader would get has changed (a new zygote then)."""
    with _LOCK:
        z = _ZYGOTES.get(module)
        if z is not None and z.owner == os.getpid() and z.env == env and z.alive():
            return z
        if z is not None and z.owner == os.getpid():
            z.close()
        _ZYGOTES[module] = z = Zygote(module, env, limits)
        return z


def live_zygotes() -> list[Zygote]:
    """The zygotes this process has running (their folders live as long as they do)."""
    with _LOCK:
        return [z for z in _ZYGOTES.values() if z.owner == os.getpid() and z.alive()]


def forked_reader(
    module: str, env: dict[str, str], limits: object, address_space: int, timeout: float
) -> ReaderChild:
    """A fresh reader child of `module`'s zygote (started again once if it had ended)."""
    z = zygote_for(module, env, limits)
    try:
        return z.fork(address_space, timeout)
    except OSError:
        with contextlib.suppress(subprocess.TimeoutExpired):
            z.proc.wait(1.0)  # one that ended idle as this request came is on its way out
        if z.alive():
            raise
    return zygote_for(module, env, limits).fork(address_space, timeout)


# ------------------------------------------------------------------ in the zygote


def _serve(module: str, sock: socket.socket, idle: float) -> None:
    importlib.import_module(module)
    for name in getattr(sys.modules[module], "PRELOAD", ()):
        importlib.import_module(name)
    sock.settimeout(idle)
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(sock, _MESSAGE, 4)
        except OSError:  # the parent let it go, or idle for `idle` s (TimeoutError)
            break
        if not message:
            break
        if len(fds) == 4 and os.fork() == 0:
            sock.close()
            _wait_for(module, json.loads(message), fds)
        for fd in fds:
            os.close(fd)
        _reap(os.WNOHANG)
    # waiters are reaped, never left to the kernel (SIG_IGN): so the zygote's RUSAGE_CHILDREN,
    # and its parent's once it is reaped, holds the readers' (bench/hostile_inputs.py's peak)
    _reap(0)
    shutil.rmtree(os.environ["TMPDIR"], ignore_errors=True)


def _reap(flags: int) -> None:
    """Reap the waiters that ended (flags 0: wait for all of them)."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, flags)[0]:
            pass


def _wait_for(module: str, request: dict, fds: list[int]) -> None:
    """The waiter: fork the reader, say its pid and, once the parent has a pidfd of it, reap
    it and say how it ended."""
    code = 1
    try:
        status = socket.socket(fileno=fds[3])
        pid = os.fork()
        if pid == 0:
            status.close()
            _read(module, request, fds[:3])
        for fd in fds[:3]:
            os.close(fd)
        with contextlib.suppress(OSError):
            status.sendall(str(pid).encode())
            status.recv(1)  # the parent holds a pidfd of the reader (or it has gone)
        _, how, usage = os.wait4(pid, 0)
        cpu = usage.ru_utime + usage.ru_stime
        with contextlib.suppress(OSError):
            status.sendall(f"{os.waitstatus_to_exitcode(how)} {cpu!r} {usage.ru_maxrss}".encode())
        code = 0
    finally:
        os._exit(code)


def _read(module: str, request: dict, fds: list[int]) -> None:
    """The reader: the zygote's interpreter on the request's pipes, under its limits."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.environ["TMPDIR"] = request["tmpdir"]
        tempfile.tempdir = None
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        cap = request["address_space"]
        cap = cap if hard == resource.RLIM_INFINITY else min(cap, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        sys.modules[module].main()  # ends the process itself (os._exit)
        code = 0
    except BaseException:  # the parent reads stderr; nothing else can be done
        with contextlib.suppress(Exception):
            import traceback

            traceback.print_exc()
            sys.stderr.flush()
    finally:
        os._exit(code)


if __name__ == "__main__":
    _serve(sys.argv[1], socket.socket(fileno=int(sys.argv[2])), float(sys.argv[3]))
