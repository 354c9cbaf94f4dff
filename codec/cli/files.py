"""Files in and out of a command: outputs checked before any work and written all or none
(formats.atomic.all_or_none), '-' for stdout, and .ssc inputs read with errors that name them."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from codec.cli.failures import CliError
from codec.errors import CompressedFormatError
from codec.formats import atomic
from codec.formats.output_paths import outputs_problem
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
    missing or read-only, it is a folder, device or FIFO, it is one of the inputs or a
    sidecar, its name is too long, or two outputs are one file (the one check every
    output passes: codec.formats.output_paths). '-' (stdout) and None are skipped."""
    problem = outputs_problem(outputs, inputs)
    if problem:
        raise CliError(problem)


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
    from codec.formats.input_paths import InputRefused, read_capped
    from codec.model.limits import MAX_SSC_BYTES

    check_regular_file(path)  # a FIFO would block, a device never end
    try:
        data = read_capped(path, MAX_SSC_BYTES, ".ssc file")
    except InputRefused as e:
        raise CliError(f"{path}: {e}") from None
    try:
        return container.read(data)
    except CompressedFormatError as e:
        raise CliError(f"{path}: {e}") from None
