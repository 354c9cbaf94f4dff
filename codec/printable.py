"""Names are data: text from files written where it could act as something else.

A joint, animation or file name is whatever bytes a file (or a folder listing) holds. Printed
raw, ESC sequences retitle or clear the user's terminal; written raw into a BVH, NUL and ESC
corrupt it; a CSV cell starting with `=` is a formula when the CSV is opened in a
spreadsheet; a file name that is not UTF-8 (Python keeps its bytes as lone surrogates) cannot
be encoded at all, so the output that holds it fails whole.

- `escaped(text)`: every control character (C0 and C1, DEL), Unicode's bidirectional
  overrides and a non-UTF-8 byte written as a backslash escape (`\\x1b`, `\\u202e`, `\\xff`):
  the name stays readable and unambiguous, one line, and encodable as UTF-8.
- `terminal_text(text)`: the same, keeping newlines and tabs (a terminal line's own layout).
- `csv_cell(text)`: `escaped`, and a cell that would start with `=`, `+`, `-` or `@` gets a
  leading `'` (tab and carriage return are already escaped), as OWASP advises for CSV.
- `PrintableStream`: a text stream whose every write is `terminal_text`: the command lines
  wrap stdout and stderr in one, so no line they print can carry a control sequence;
  `write_control` writes a progress bar's own `\\r` and erase-line past it.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

# C0 controls, DEL and C1 controls; bidirectional embeddings, overrides and isolates (they
# reorder what follows on screen); lone surrogates (a non-UTF-8 byte kept by surrogateescape)
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_TERMINAL_UNSAFE = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _escape(m: re.Match[str]) -> str:
    c = ord(m[0])
    if 0xDC80 <= c <= 0xDCFF:  # a byte that was not UTF-8, as os.fsdecode keeps it
        return f"\\x{c - 0xDC00:02x}"
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def escaped(text: str) -> str:
    """`text` with every control character, bidi override and non-UTF-8 byte escaped."""
    return _UNSAFE.sub(_escape, text)


def terminal_text(text: str) -> str:
    """`escaped`, but newlines and tabs stay: what a terminal line may hold."""
    return _TERMINAL_UNSAFE.sub(_escape, text)


def csv_cell(text: str) -> str:
    """A text cell for a CSV a spreadsheet may open: escaped, and never a formula."""
    out = escaped(text)
    return "'" + out if out.startswith(FORMULA_STARTS) else out


class PrintableStream:
    """A text stream that writes `terminal_text` of everything to `raw` (delegates the rest)."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        return self.raw.write(terminal_text(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def printable_stream(stream: TextIO) -> TextIO:
    """`stream` wrapped in a PrintableStream (once)."""
    if isinstance(stream, PrintableStream):
        return stream
    return PrintableStream(stream)  # type: ignore[return-value]


def write_control(stream: TextIO, sequence: str) -> None:
    """Write our own terminal control sequence (a progress bar's `\\r\\x1b[K`) as is."""
    getattr(stream, "raw", stream).write(sequence)
