"""The generic SJSON parser and writer: syntax, fast tables, line numbers in errors."""

from __future__ import annotations

import time

import numpy as np
import pytest

from codec.errors import ClipFormatError
from codec.formats import sjson


def test_keys_separators_commas_and_comments() -> None:
    doc = sjson.parse(
        """
        // line comment
        a = 1
        b: -2.5e1, "quoted key" = "x"   /* block
        comment */ c = true d = false e = null
        f = float4f
        """
    )
    assert doc == {
        "a": 1,
        "b": -25.0,
        "quoted key": "x",
        "c": True,
        "d": False,
        "e": None,
        "f": "float4f",
    }
    assert isinstance(doc["a"], int) and isinstance(doc["b"], float)
    assert doc.lines == {"a": 3, "b": 4, "quoted key": 4, "c": 5, "d": 5, "e": 5, "f": 6}


def test_nested_objects_and_arrays_keep_lines() -> None:
    doc = sjson.parse("outer =\n{\n\tinner = [\n\t\t{ x = 1 }\n\t\t{ x = 2 }\n\t]\n}\n")
    inner = doc["outer"]["inner"]
    assert isinstance(inner, sjson.SArray)
    assert [o["x"] for o in inner] == [1, 2]
    assert inner.lines == [4, 5]
    assert doc["outer"].line == 2 and doc["outer"].lines["inner"] == 3


def test_numeric_tables_come_back_as_float64_arrays() -> None:
    doc = sjson.parse(
        "flat = [ 1.0, 2, -3e-2 ]\n"
        "rows =\n[\n  [ 0.0, 1.0 ]\n  // a comment between rows\n  [ 2.0 3.0 ],\n]\n"
        "empty = []\n"
    )
    assert doc["flat"].dtype == np.float64
    np.testing.assert_array_equal(doc["flat"], [1.0, 2.0, -0.03])
    np.testing.assert_array_equal(doc["rows"], [[0.0, 1.0], [2.0, 3.0]])
    assert doc["rows"].shape == (2, 2)
    assert len(doc["empty"]) == 0


def test_ragged_and_mixed_arrays_fall_back_to_lists() -> None:
    doc = sjson.parse('r = [ [1 2] [3] ]\nm = [ 1, "a" ]\ns = [ ["A" "B"] ["C" "D"] ]\n')
    assert isinstance(doc["r"], sjson.SArray) and [len(x) for x in doc["r"]] == [2, 1]
    assert doc["m"] == [1, "a"]
    assert doc["s"].tolist() == [["A", "B"], ["C", "D"]]


def test_decimal_reading_is_correctly_rounded() -> None:
    values = [0.1, 1 / 3, -0.7071067811865475, 5e-324, 1.7976931348623157e308]
    doc = sjson.parse("v = [ " + ", ".join(repr(v) for v in values) + " ]")
    assert doc["v"].tolist() == values


def test_string_escapes() -> None:
    doc = sjson.parse(r'a = "q\"uote\\ \n\u00e9"')
    assert doc["a"] == 'q"uote\\ \n\u00e9'


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("a = 1\nb = \n", 3, "expected a value after a key ="),
        ("a = 1\nb 2\n", 2, "expected '=' or ':' after a key, found a number"),
        ("a = [ 1, 2\n\n", 3, "expected ']' to close the array opened on line 1"),
        ("a =\n{\n  b = 1\n", 4, "expected '}' to close the object opened on line 2"),
        ("a = 1\n\n/* never closed\n", 3, "unterminated /* comment"),
        ('a = "abc\n', 1, "unterminated string"),
        ("a = 1\na = 2\n", 2, "duplicate key 'a' (first on line 1)"),
        ("a = 1\n}\n", 2, "expected a key"),
        ("a = @\n", 1, "unexpected character"),
        ("{ a = 1 }\nb = 2\n", 2, "expected the end of the file"),
        ("a = 1.2.3\n", 1, "unexpected character"),
        ('a = "\\q"\n', 1, "unknown escape"),
    ],
)
def test_errors_name_file_line_and_expectation(text: str, line: int, fragment: str) -> None:
    with pytest.raises(sjson.SJSONError) as info:
        sjson.parse(text, "clip.acl.sjson")
    err = info.value
    assert isinstance(err, ClipFormatError)
    assert err.line == line, str(err)
    assert fragment in str(err)
    assert str(err).startswith(f"clip.acl.sjson:{line}: ")


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    with pytest.raises(sjson.SJSONError, match="nesting deeper"):
        sjson.parse("a = " + "[ { b = " * 200)


def test_pathological_tables_do_not_backtrack() -> None:
    # a long digit run followed by something that breaks the table must stay linear
    text = "a = [ [ " + "1 " * 20_000 + "12345678901234567890" * 500 + " @ ] ]"
    start = time.process_time()  # CPU seconds: a loaded machine stretches wall time
    with pytest.raises(sjson.SJSONError, match="unexpected character"):
        sjson.parse(text)
    assert time.process_time() - start < 1.0


def test_braced_top_level_is_accepted() -> None:
    assert sjson.parse("{ a = 1, b = [2] }")["a"] == 1


def test_hex_double_matches_acl_bit_patterns() -> None:
    assert sjson.hex_double(1.0) == "3FF0000000000000"
    assert sjson.hex_double(0.0) == "0"
    assert sjson.hex_double(-0.0) == "8000000000000000"
    assert sjson.hex_doubles(np.array([[1.0, -2.0]])) == ["3FF0000000000000", "C000000000000000"]


def test_dumps_parses_back() -> None:
    doc = {
        "version": 5,
        "clip": {"name": 'a "b"', "rate": 30.5, "flag": True},
        "rows": np.array([[1.0, 0.1], [2.0, 1 / 3]]),
        "list": [{"k": [1.0, 2.0]}, {"k": "x"}],
    }
    text = sjson.dumps(doc)
    back = sjson.parse(text)
    assert back["clip"] == doc["clip"]
    np.testing.assert_array_equal(back["rows"], doc["rows"])
    assert back["list"][1] == {"k": "x"}
    assert text.startswith("version = 5\n\nclip =\n{\n\tname = ")


def test_format_float_round_trips_and_refuses_non_finite() -> None:
    for v in (0.1, 1e-300, 123456789.123456789, -0.0, 3.0):
        assert float(sjson.format_float(v)) == v
    assert sjson.format_float(3.0) == "3.0"
    with pytest.raises(ValueError):
        sjson.format_float(float("nan"))
