"""Files in and out of a command: outputs checked before any work and written all or none
(formats.atomic.all_or_none), '-' for stdout, and .ssc inputs read with errors that name them."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from codec.cli.failures import CliError
from codec.errors import CompressedFormatError
from codec.formats import atomic
from codec.measure.stats import json_safe

if TYPE_CHECKING:
    from codec.codecs.container import Container


def dumps_json(value: Any) -> str:
    """Strict, indented JSON text of `value` (made JSON-safe first), ending in a newline."""
    return json.dumps(json_safe(value), indent=2, allow_nan=False) + "\n"


def check_outputs(
    outputs: Sequence[str | None], inputs: Sequence[str | os.PathLike | None]
) -> None:
    """CliError (exit 2) before any work when an output cannot be written: its folder is
    missing or read-only, it is a folder, it is one of the inputs, or two outputs are one
    file. '-' (stdout) and None (not asked for) are skipped."""
    files = [o for o in outputs if o and o != "-"]
    ins = [Path(i) for i in inputs if i]
    seen: dict[str, str] = {}
    for out in files:
        path = Path(out)
        real = os.path.realpath(path)
        if real in seen:
            raise CliError(f"{out}: given twice as an output (also as {seen[real]})")
        seen[real] = out
        for i in ins:
            if real == os.path.realpath(i) or (path.exists() and _same_file(path, i)):
                raise CliError(f"{out}: is the input file {i}; refusing to overwrite it")
        folder = path.parent
        problem = atomic.target_problem(path)
        if problem:
            raise CliError(f"{out}: {problem}")
        if not folder.is_dir():
            raise CliError(f"{out}: cannot write: no such folder {str(folder)!r}")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise CliError(f"{out}: cannot write: the folder is not writable")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def write_outputs(files: Sequence[tuple[str | None, str | bytes]], stdout: TextIO) -> None:
    """Write the (path, text or bytes) outputs of a run all or none; '-' goes to stdout after
    the files are in place, None is skipped."""
    try:
        with atomic.all_or_none():
            for path, data in files:
                if not path or path == "-":
                    continue
                if isinstance(data, bytes):
                    atomic.write_bytes(path, data)
                else:
                    atomic.write_text(path, data)
    except OSError as e:
        raise CliError(f"{e.filename or 'output'}: cannot write: {e.strerror or e}") from None
    for path, data in files:
        if path == "-":
            stdout.write(data if isinstance(data, str) else data.decode())


def write_text_output(path: str, text: str, stdout: TextIO) -> None:
    """Write `text` to `path` whole or not at all, or to stdout when `path` is '-'."""
    write_outputs([(path, text)], stdout)


def read_ssc(path: str) -> Container:
    """Read a .ssc file's container (any codec's); errors name the file."""
    from codec.codecs import container
    from codec.formats import check_regular_file

    check_regular_file(path)  # a FIFO would block, a device never end
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise CliError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        return container.read(data)
    except CompressedFormatError as e:
        raise CliError(f"{path}: {e}") from None
