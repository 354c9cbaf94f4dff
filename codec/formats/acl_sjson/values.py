"""Values of an ACL SJSON document, checked as they are read: typed fields, counts, numbers
the codec can hold, and numeric or binary-exact hex tables; every error names the line."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from codec.errors import ClipFormatError
from codec.formats.fields import REQUIRED, FieldProblem, describe, field, kind_names, out_of_range
from codec.formats.sjson import SArray, SObject
from codec.model.limits import distance_problem, rate_problem, value_problem

Array = np.ndarray

_HEX_RE = re.compile(r"[0-9A-Fa-f]*")
_BRACKET_RE = re.compile(r'//[^\n]*|/\*.*?\*/|"[^"\n]*"|\[', re.S)


class SjsonValues:
    """What a reader of one document needs to read its values (see the module docstring).

    `binary_exact` (the header says hex bit patterns may stand for numbers) and `hex_bits`
    (64 in clips, 32 in track lists) follow the part of the file being read; `warnings`
    collects what was tolerated.
    """

    def __init__(self, path: str | Path, text: str) -> None:
        self.path = path
        self.text = text
        self.warnings: list[str] = []
        self.binary_exact = False
        self.hex_bits = 64

    def fail(self, message: str, line: int | None = None) -> ClipFormatError:
        return ClipFormatError(self.path, message, line=line)

    def get(self, obj: SObject, key: str, kinds: tuple[type, ...], what: str, default=None):
        """obj[key] checked against `kinds` (bool is never a number); `default` when absent
        (REQUIRED: it must be there)."""
        try:
            return field(obj, key, kinds, default)
        except FieldProblem as e:
            if e.missing:
                raise self.fail(f"{what}: expected '{key}'", obj.line) from None
            found = describe(e.value)
            raise self.fail(
                f"{what}: '{key}' must be {kind_names(kinds)}, found {found}", obj.lines[key]
            ) from None

    def number(
        self,
        obj: SObject,
        key: str,
        what: str,
        default=None,
        positive: bool = False,
        hex_ok: bool = False,
        rate: bool = False,
    ) -> float | None:
        kinds: tuple[type, ...] = (
            (int, float, str) if hex_ok and self.binary_exact else (int, float)
        )
        v = self.get(obj, key, kinds, what, default)
        if v is None or v is default:
            return v
        if isinstance(v, str):
            v = float(self.hex(np.array([v]), what, obj.lines[key])[0])
        v = float(v)
        if not math.isfinite(v) or (positive and v <= 0):
            need = "a positive number" if positive else "a finite number"
            raise self.fail(f"{what}: '{key}' must be {need}, found {v}", obj.lines[key])
        check = rate_problem if rate else distance_problem if positive else value_problem
        problem = check(v)
        if problem:
            raise self.fail(f"{what}: '{key}' {problem}", obj.lines[key])
        return v

    def count(self, obj: SObject, key: str, what: str, minimum: int) -> int:
        v = self.get(obj, key, (int, float), what, REQUIRED)
        if not (isinstance(v, int) or (math.isfinite(v) and v == int(v))) or v < minimum:
            raise self.fail(
                f"{what}: '{key}' must be a whole number >= {minimum}, found {v}", obj.lines[key]
            )
        return int(v)

    def obj(self, value: object, what: str, line: int | None) -> SObject:
        if not isinstance(value, SObject):
            raise self.fail(
                f"expected {what} to be an object {{ ... }}, found {describe(value)}", line
            )
        return value

    def items(self, obj: SObject, key: str, what: str) -> list[tuple[SObject, int]]:
        """The objects of array obj[key] with their lines (an empty array is allowed)."""
        value = obj.get(key)
        line = obj.lines.get(key, obj.line)
        if isinstance(value, np.ndarray) and value.size == 0:
            return []
        if not isinstance(value, SArray):
            raise self.fail(f"'{key}' must be an array of objects, found {describe(value)}", line)
        return [
            (self.obj(v, f"{what} {i}", ln), ln)
            for i, (v, ln) in enumerate(zip(value, value.lines, strict=True))
        ]

    def hex(self, strings: Array, what: str, line: int | None) -> Array:
        """Decode ACL binary-exact hex bit patterns (float64 or float32) to float64."""
        digits = self.hex_bits // 4
        flat = np.asarray(strings, dtype=str).ravel()
        prefixed = np.strings.startswith(flat, "0x") | np.strings.startswith(flat, "0X")
        if np.any(prefixed):
            flat = np.array(
                [x[2:] if p else x for x, p in zip(flat.tolist(), prefixed, strict=True)]
            )
        lengths = np.strings.str_len(flat)
        joined = "".join(np.strings.zfill(flat, digits).tolist()) if flat.size else ""
        if flat.size and (
            lengths.min() == 0 or lengths.max() > digits or not _HEX_RE.fullmatch(joined)
        ):
            bad = next(
                x for x in flat.tolist() if not re.fullmatch(f"[0-9A-Fa-f]{{1,{digits}}}", x)
            )
            raise self.fail(
                f"{what}: expected a binary-exact hex float ({digits} hex digits at most), "
                f"found {bad!r}",
                line,
            )
        raw = bytes.fromhex(joined)
        dtype = ">f8" if self.hex_bits == 64 else ">f4"
        return np.frombuffer(raw, dtype=dtype).astype(np.float64).reshape(strings.shape)

    def floats(self, value: object, shape: tuple[int, ...], what: str, line: int | None) -> Array:
        """A float64 array of exactly `shape` from a parsed numeric/hex table."""
        arr = self._as_array(value, what, line, shape[1:])
        if arr.shape != shape:
            if arr.ndim == len(shape) and arr.ndim == 2 and arr.shape[1] == shape[1]:
                raise self.fail(
                    f"{what}: {arr.shape[0]} samples, expected {shape[0]} (num_samples)", line
                )
            raise self.fail(f"{what}: expected {shape_text(shape)}, found {describe(value)}", line)
        if not np.all(np.isfinite(arr)):
            raise self.fail(f"{what}: values must be finite", line)
        bad = out_of_range(arr)
        if bad is not None:
            row = bad[0][0] if arr.ndim == 2 else None
            where = f" row {row + 1}" if row is not None else ""
            raise self.fail(f"{what}{where}: {bad[1]}", self._row_line(value, line, row))
        return arr

    def _row_line(self, value: object, line: int | None, row: int | None) -> int | None:
        """The line of row `row` of the table that starts on `line` (error messages only).

        Parsed rows of a list know their lines; a numeric table does not, so its opening
        brackets are counted in the text (comments and strings skipped)."""
        if row is None or line is None:
            return line
        if isinstance(value, SArray):
            return value.lines[row]
        start = 0
        for _ in range(line - 1):
            start = self.text.find("\n", start) + 1
        seen = -1  # the table's own bracket comes first
        for m in _BRACKET_RE.finditer(self.text, start):
            if m.group() == "[":
                seen += 1
                if seen == row + 1:
                    return line + self.text.count("\n", start, m.start())
        return line

    def _as_array(
        self, value: object, what: str, line: int | None, row: tuple[int, ...] | None = None
    ) -> Array:
        if isinstance(value, np.ndarray):
            if value.dtype.kind == "f":
                return value
            if value.dtype.kind == "U":
                return self._hex_table(value, what, line)
        if isinstance(value, SArray):
            rows = []
            for item, ln in zip(value, value.lines, strict=True):
                if isinstance(item, (SArray, np.ndarray)):
                    rows.append(self._as_array(item, what, ln))
                elif isinstance(item, (int, float)) and not isinstance(item, bool):
                    rows.append(np.array(float(item)))
                elif isinstance(item, str):
                    rows.append(self._hex_table(np.array(item), what, ln))
                else:
                    raise self.fail(f"{what}: expected numbers, found {describe(item)}", ln)
            want = rows[0].shape if row is None and rows else row
            bad = [i for i, r in enumerate(rows) if r.shape != want]
            if bad and (row is not None or len({r.shape for r in rows}) > 1):
                i = bad[0]
                raise self.fail(
                    f"{what}: entry {i} has {shape_text(rows[i].shape)}, expected "
                    f"{shape_text(want)}",
                    value.lines[i],
                )
            return np.stack(rows) if rows else np.zeros((0,))
        raise self.fail(f"{what}: expected an array of numbers, found {describe(value)}", line)

    def _hex_table(self, value: Array, what: str, line: int | None) -> Array:
        if not self.binary_exact:
            raise self.fail(
                f"{what}: expected numbers, found strings (is_binary_exact is not true)", line
            )
        return self.hex(value, what, line)

    def check_keys(self, obj: SObject, allowed: tuple[str, ...], what: str) -> None:
        for key in obj:
            if key not in allowed:
                self.warnings.append(f"line {obj.lines[key]}: ignored unknown {what} key {key!r}")


def shape_text(shape: tuple[int, ...]) -> str:
    """What a table of `shape` holds, in words."""
    if len(shape) == 0:
        return "a single number"
    if len(shape) == 1:
        return f"[ {shape[0]} numbers ]"
    return f"{shape[0]} rows of {shape[1]} numbers"
