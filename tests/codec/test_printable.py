"""Names are data (codec.printable): control characters, bidi overrides and bytes that are
not UTF-8 written as escapes; CSV cells that would be formulas neutralised."""

from __future__ import annotations

import io
import os

import pytest

from codec.printable import PrintableStream, csv_cell, escaped, terminal_text, write_control


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("LeftHand", "LeftHand"),
        ("\x1b]0;pwned\x07Hips", "\\x1b]0;pwned\\x07Hips"),
        ("a\x00b\x7fc\x9bd", "a\\x00b\\x7fc\\x9bd"),
        ("two\nlines\tand\rCR", "two\\x0alines\\x09and\\x0dCR"),
        ("abc\u202egnp.exe", "abc\\u202egnp.exe"),
        (os.fsdecode(b"clip\xff\xfe.bvh"), "clip\\xff\\xfe.bvh"),
        ("Bärbel_Ünïcödé", "Bärbel_Ünïcödé"),
    ],
)
def test_escaped_keeps_names_readable_and_inert(text: str, shown: str) -> None:
    assert escaped(text) == shown
    assert escaped(shown) == shown  # escaping twice changes nothing
    shown.encode("utf-8")  # always encodable


def test_a_terminal_line_keeps_its_own_layout() -> None:
    assert terminal_text("a\tb\nc\x1b[2J") == "a\tb\nc\\x1b[2J"


@pytest.mark.parametrize(
    ("name", "cell"),
    [
        ("=1+1", "'=1+1"),
        ("+SUM(A1)", "'+SUM(A1)"),
        ("-walk.bvh", "'-walk.bvh"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "\\x09x"),
        ("\r=x", "\\x0d=x"),
        ("Hips", "Hips"),
        ("a=b", "a=b"),
    ],
)
def test_csv_cells_are_never_formulas(name: str, cell: str) -> None:
    assert csv_cell(name) == cell


def test_a_printable_stream_escapes_every_write_but_its_own_control() -> None:
    raw = io.StringIO()
    stream = PrintableStream(raw)
    stream.write("joint \x1b[2J\n")
    write_control(stream, "\r\x1b[K")
    stream.write("done\n")
    assert raw.getvalue() == "joint \\x1b[2J\n\r\x1b[Kdone\n"
    assert stream.getvalue() == raw.getvalue()  # everything else is the stream's own
