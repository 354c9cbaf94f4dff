"""Where an input may come from, and how much of it is read: one rule for every input path.

A library folder, a glTF's buffers or a USD stage's layers name files on behalf of whoever
wrote them. A symbolic link `shadow.bvh -> /etc/shadow` in a shared folder, or a buffer
`"uri": "../../secret.bin"`, would have us read a file the folder's author cannot and quote
or publish what we found. So every such path is taken relative to the folder it was given
in and must stay inside that folder once links are resolved (`outside_problem`), compared by
path components, never as strings (`/lib/clips-old` is not inside `/lib/clips`). The
messages name the path as given and what is wrong, never what the file holds.

Reading: only a regular file is read, and never more than a cap chosen for what it must be
(`read_capped`): a FIFO would block, a device never ends, and a 1.5 GB "sidecar" is no
sidecar. The file is opened non-blocking and checked again on its descriptor, so a path that
turns into a FIFO between the check and the open still cannot hang us. `load_json` parses such
bytes with the same care: not UTF-8, nested too deeply, or a number longer than any value a
setting can hold, each one line naming the place.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

MAX_DIGITS = 308  # an integer of more digits is beyond float64 (and every limit of ours)


class InputRefused(Exception):
    """An input that is not read (or not used): `place` in it and `reason`, one line, never
    its contents; str() is "place: reason" (or the reason alone without a place)."""

    def __init__(self, reason: str, place: str | None = None) -> None:
        self.reason, self.place = reason, place
        super().__init__(f"{place}: {reason}" if place else reason)


def real_folder(folder: str | os.PathLike[str]) -> Path:
    """The folder with every link resolved (what `outside_problem` compares against)."""
    return Path(os.path.realpath(os.path.abspath(os.fspath(folder))))


def inside(folder: str | os.PathLike[str], path: str | os.PathLike[str]) -> bool:
    """Whether `path` (links resolved) lies in `folder` (links resolved), by components."""
    real = Path(os.path.realpath(os.path.abspath(os.fspath(path))))
    return real.is_relative_to(real_folder(folder))


def outside_problem(
    folder: str | os.PathLike[str],
    path: str | os.PathLike[str],
    folder_name: str = "the folder it was given in",
) -> str | None:
    """None when `path` stays inside `folder` once links are resolved, else why not
    ("is outside FOLDER_NAME; not read", or "is a symbolic link to a file outside ...")."""
    if inside(folder, path):
        return None
    lexical = Path(os.path.normpath(os.path.abspath(os.fspath(path))))
    if lexical.is_relative_to(Path(os.path.normpath(os.path.abspath(os.fspath(folder))))):
        return f"is a symbolic link to a file outside {folder_name}; not read"
    return f"is outside {folder_name}; not read"


def regular_size(path: str | os.PathLike[str]) -> int:
    """The size of the regular file `path` names (links followed); InputRefused otherwise."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise InputRefused("no such file") from None
    except OSError as e:
        raise InputRefused(f"cannot read: {e.strerror or e}") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputRefused("is a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise InputRefused("is not a regular file (a device, FIFO or socket); not read")
    return info.st_size


def size_problem(size: int, cap: int, what: str) -> str | None:
    """None when `size` bytes fit `cap`, else the sentence saying so."""
    if size <= cap:
        return None
    return f"{size:,} bytes is larger than any {what} ({cap >> 20:,} MiB at most); not read"


def read_capped(path: str | os.PathLike[str], cap: int, what: str = "file") -> bytes:
    """The bytes of the regular file `path`, at most `cap` of them, else InputRefused:
    not a regular file (checked before the open and on the open descriptor), or larger
    than `cap` (checked before reading, and while reading a file that grows)."""
    problem = size_problem(regular_size(path), cap, what)
    if problem:
        raise InputRefused(problem)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        raise InputRefused(f"cannot read: {e.strerror or e}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputRefused("is not a regular file (a device, FIFO or socket); not read")
        problem = size_problem(info.st_size, cap, what)
        if problem:
            raise InputRefused(problem)
        chunks, total = [], 0
        while chunk := os.read(fd, min(1 << 20, cap + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > cap:
                raise InputRefused(f"grew past {cap >> 20:,} MiB while being read; not read")
        return b"".join(chunks)
    except OSError as e:
        raise InputRefused(f"cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)


class _HugeNumber(Exception):
    pass


def _bounded_int(text: str) -> int:
    if len(text) - text.startswith("-") > MAX_DIGITS:
        raise _HugeNumber
    return int(text)


_DIGITS = re.compile(rf"\d{{{MAX_DIGITS + 1},}}")


def load_json(data: bytes) -> Any:
    """JSON from bytes read with `read_capped`; InputRefused naming the place for text that
    is not UTF-8 or not JSON, an integer of more than MAX_DIGITS digits (beyond any number
    a setting holds, and Python's int parsing is quadratic in them) or nesting too deep to
    parse. NaN and Infinity parse as floats: checking values is the reader's job."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputRefused("not UTF-8 text", f"byte {e.start}") from None
    try:
        return json.loads(text, parse_int=_bounded_int)
    except json.JSONDecodeError as e:
        raise InputRefused(e.msg, f"line {e.lineno} column {e.colno}") from None
    except _HugeNumber:
        m = _DIGITS.search(text)
        start = m.start() if m else 0
        line = text.count("\n", 0, start) + 1
        column = start - (text.rfind("\n", 0, start) + 1) + 1
        digits = len(m[0]) if m else MAX_DIGITS + 1
        raise InputRefused(
            f"a number of {digits:,} digits: no value here can hold it",
            f"line {line} column {column}",
        ) from None
    except RecursionError:
        raise InputRefused("nested too deeply to read", "top level") from None


def described(token: str, vocabulary: tuple[str, ...] | frozenset[str] = ()) -> str:
    """What a parse error may say it found: a word of the format's own vocabulary by name,
    anything else (which may be any file's bytes: a secret behind a link) by kind only."""
    if token in vocabulary:
        return repr(token)
    if not token:
        return "nothing"
    try:
        float(token)
    except ValueError:
        pass
    else:
        return "a number"
    return f"other text ({len(token)} characters)"
