"""Write a file whole or not at all, and the files of one run all or none.

A file is first written to a temporary file in its target's folder, flushed and fsynced,
then renamed over the target, so a reader sees the old file or the new one, never half.
The temporary file is unnamed where Linux allows it (O_TMPFILE): it only gets a (hidden)
name for the instant between linking it and renaming it over the target, so a writer killed
at any moment, even by SIGKILL, leaves nothing behind. Elsewhere it is a hidden sibling
`.NAME.PID-XXXXXXXX.tmp`, removed on every failure path (an exception, KeyboardInterrupt,
or SIGTERM / SIGHUP inside `exit_cleanly_on_signals`); one left behind by a
killed writer is removed by the next write of the same target.

`all_or_none()` makes a run's outputs one unit: every file written inside the block is
staged, and only when the block ends without an exception are they all renamed into place;
otherwise none is touched. Errors are OSError naming the user's path, never a temp file.

Only a regular file (or nothing) is ever replaced: a device, FIFO, socket or folder at the
target is refused, and a symbolic link is followed to the regular file it names (the link
stays a link); `target_problem` says why a path may not be written, for checks up front.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import errno
import hashlib
import os
import re
import secrets
import signal
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO

UNNAMED = hasattr(os, "O_TMPFILE")  # False: always a named hidden temp (tests flip it)
_AT_FDCWD = -100
_AT_EMPTY_PATH = 0x1000
_TEMP = re.compile(r"\.(?P<name>.+)\.(?P<pid>\d+)-[0-9a-f]{8}\.tmp\Z")
_LONGEST_STEM = 200  # bytes: with ".", ".PID-XXXXXXXX.tmp" a temp name stays within 255


def target_problem(path: str | os.PathLike[str]) -> str | None:
    """None when `path` may be replaced by a file we write, else why not: it is a folder, a
    device, a FIFO or a socket (a rename would swap the node for a regular file, as it once
    turned /dev/full into one), or a symbolic link to one of those or to nothing. A link to
    a regular file is fine: the file it points to is written, the link stays."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):  # a missing folder is said elsewhere
        if os.path.islink(path):
            return "is a symbolic link to a file that does not exist"
        return None
    except OSError as e:
        return f"cannot write: {e.strerror or e}"
    if stat.S_ISDIR(mode):
        return "cannot write: is a folder"
    if not stat.S_ISREG(mode):
        return "cannot write: is not a regular file (a device, FIFO or socket)"
    return None


def writable_target(path: str | os.PathLike[str]) -> Path:
    """The file to replace for `path`: `path` itself, or the regular file a symbolic link
    points to. OSError naming `path` when it may not be replaced (see `target_problem`)."""
    problem = target_problem(path)
    if problem:
        raise OSError(errno.EINVAL, problem.removeprefix("cannot write: "), os.fspath(path))
    return Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)


class _Staged:
    """One target's temporary file: an open descriptor, and its name once it has one."""

    def __init__(self, target: Path) -> None:
        target = writable_target(target)
        self.target = target
        self.folder = target.parent
        self.temp: Path | None = None
        _remove_stale(target)
        if UNNAMED:
            try:
                self.fd = os.open(self.folder, os.O_TMPFILE | os.O_RDWR | os.O_CLOEXEC, 0o666)
                return
            except OSError as e:
                if e.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                    raise
        self.temp = self._hidden_name()
        self.fd = os.open(self.temp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)

    def _hidden_name(self) -> Path:
        return self.folder / f".{_stem(self.target.name)}.{os.getpid()}-{secrets.token_hex(4)}.tmp"

    def commit(self) -> None:
        """Give the data its target's name (the data is already synced)."""
        if self.temp is None:
            name = self._hidden_name()
            if not _link(self.fd, name):
                _copy_to(self.fd, name)
            self.temp = name
        os.replace(self.temp, self.target)
        self.temp = None
        self.close()

    def discard(self) -> None:
        self.close()
        if self.temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.temp)
            self.temp = None

    def close(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1


def _link(fd: int, name: Path) -> bool:
    """Give the unnamed file `fd` the name `name`; False when this system will not."""
    with contextlib.suppress(OSError):
        os.link(f"/proc/self/fd/{fd}", name, follow_symlinks=True)
        return True
    try:  # some kernels refuse the /proc route; linkat(AT_EMPTY_PATH) needs privileges
        libc = ctypes.CDLL(None, use_errno=True)
        ok = libc.linkat(fd, b"", _AT_FDCWD, os.fsencode(name), _AT_EMPTY_PATH) == 0
    except (OSError, AttributeError):
        return False
    return ok


def _copy_to(fd: int, name: Path) -> None:
    """Last resort: a named copy of the unnamed file (the window a kill can leave it in is
    the copy itself; the next write of the target removes it)."""
    out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        size, pos = os.fstat(fd).st_size, 0
        while pos < size:
            chunk = os.pread(fd, min(1 << 20, size - pos), pos)
            os.write(out, chunk)
            pos += len(chunk)
        os.fsync(out)
    except BaseException:
        os.close(out)
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise
    os.close(out)


def _stem(name: str) -> str:
    """The target's name as its temp file holds it: whole, or for a name so long that the
    temp file's name would pass the file system's limit (255 bytes), its head and a hash."""
    if len(os.fsencode(name)) <= _LONGEST_STEM:
        return name
    digest = hashlib.sha256(os.fsencode(name)).hexdigest()[:16]
    return f"{name[:40]}~{digest}"


def _remove_stale(target: Path) -> None:
    """Remove hidden temp files of `target` whose writer process no longer exists."""
    stem = _stem(target.name)
    with contextlib.suppress(OSError):
        for entry in os.scandir(target.parent):
            m = _TEMP.match(entry.name)
            if m and m["name"] == stem and not _alive(int(m["pid"])):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Batch:
    """Files staged by `all_or_none`, renamed together at its end."""

    def __init__(self) -> None:
        self.staged: list[_Staged] = []

    def add(self, staged: _Staged) -> None:
        if any(s.target == staged.target for s in self.staged):
            staged.discard()
            raise OSError(errno.EEXIST, "written twice in one run", os.fspath(staged.target))
        self.staged.append(staged)

    def commit(self) -> None:
        todo = list(self.staged)
        try:
            while todo:
                s = todo[0]
                _named(s.target, s.commit)
                todo.pop(0)
        finally:
            for s in todo:
                s.discard()

    def discard(self) -> None:
        for s in self.staged:
            s.discard()


_BATCH: contextvars.ContextVar[_Batch | None] = contextvars.ContextVar("atomic_batch", default=None)


def _named(target: Path, fn, *args):  # type: ignore[no-untyped-def]
    """Run fn; an OSError from it names `target` (the user's path), not a temp file."""
    try:
        return fn(*args)
    except OSError as e:
        raise OSError(e.errno, e.strerror or str(e), os.fspath(target)) from None


@contextlib.contextmanager
def all_or_none() -> Iterator[None]:
    """Stage every file written inside the block; rename them all into place when it ends
    without an exception, or discard them all when it raises (nothing is touched then)."""
    batch = _Batch()
    token = _BATCH.set(batch)
    try:
        yield
    except BaseException:
        batch.discard()
        raise
    finally:
        _BATCH.reset(token)
    batch.commit()


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs: object) -> Iterator[IO]:
    """A file object whose contents replace `path` when the block ends without an exception
    (or, inside `all_or_none`, when that block does); on any exception `path` is untouched
    and no temporary file is left."""
    target = Path(path)
    staged = _named(target, _Staged, target)
    try:
        with os.fdopen(os.dup(staged.fd), mode, **kwargs) as f:  # type: ignore[call-overload]
            try:
                yield f
                f.flush()
                os.fsync(f.fileno())
            except OSError as e:
                raise OSError(e.errno, e.strerror or str(e), os.fspath(target)) from None
        batch = _BATCH.get()
        if batch is not None:
            batch.add(staged)
        else:
            _named(target, staged.commit)
    except BaseException:
        staged.discard()
        raise


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_open(path, "wb") as f:
        f.write(data)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    with atomic_open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


class Terminated(SystemExit):
    """SIGTERM or SIGHUP arrived: unwinds like an exception, so temp files are removed."""


@contextlib.contextmanager
def exit_cleanly_on_signals() -> Iterator[None]:
    """Inside the block SIGTERM and SIGHUP raise `Terminated` (exit code 128 + signal) in
    the main thread, so every `finally` and `except BaseException` runs and no temp file
    is left (SIGINT already raises KeyboardInterrupt); the old handlers come back after.
    Outside the main thread it does nothing."""

    def handler(signum: int, _frame: object) -> None:
        raise Terminated(128 + signum)

    saved = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):  # not the main thread: leave it
            saved[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old)
