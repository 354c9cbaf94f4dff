"""ACL's "simplified JSON" (SJSON): a parser that keeps line numbers, and a small writer.

SJSON is JSON with unquoted keys, `=` or `:` between key and value, optional commas, `//` and
`/* */` comments, and an implicit object at the top level. ACL files are mostly long arrays of
small numeric arrays, so the parser recognises a whole array of equal-width numeric rows (or of
plain strings, the form binary-exact floats take) with one regular expression and converts it
in one go: a token-by-token Python loop over a 2 MB clip would take seconds.

What `parse` returns:
- objects: `SObject` (a dict) whose `.line` is the line of `{` and `.lines[key]` the line of
  each key, so readers built on top can say `file:line: expected ...`;
- arrays of numbers: float64 ndarrays, 1-D for `[1, 2]`, 2-D `(rows, width)` for an array of
  equal-width numeric rows; arrays of plain strings likewise come back as str ndarrays;
- any other array: `SArray` (a list) with `.line` and `.lines[i]` per item;
- numbers: int when written without `.`/exponent, else float; strings: str; `true`, `false`,
  `null`: True, False, None; any other bare word (ACL's reference writes `type = float4f`): str.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Mapping

import numpy as np

from codec.errors import ClipFormatError

MAX_DEPTH = 64  # deeper nesting is garbage, not a clip; also keeps recursion bounded

_COMMENT = r"//[^\n]*|/\*.*?\*/"
_NUM = r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_PLAIN_STR = r'"[^"\\\n]*"'
# Separators between atoms: whitespace, commas, comments. Possessive so nothing backtracks.
_SEP = rf"(?:\s|,|{_COMMENT})*+"
_ATOM = rf"(?>{_NUM}|{_PLAIN_STR})(?=[\s,\]/])"
_ROW = rf"\[{_SEP}(?:{_ATOM}{_SEP})*+\]"
_ROW_RE = re.compile(_ROW, re.S)
_MATRIX_RE = re.compile(rf"\[{_SEP}(?:{_ROW}{_SEP})++\]", re.S)
_ATOM_RE = re.compile(rf"{_NUM}|{_PLAIN_STR}")
_COMMENT_RE = re.compile(_COMMENT, re.S)
_STR_BODY_RE = re.compile(r'"([^"\\\n]*)"')
_LAYOUT_CHARS = str.maketrans("", "", " \t\r\n,[]")

_TOKEN_RE = re.compile(
    rf"""
    (?P<ws>(?:\s+|{_COMMENT})+)
    |(?P<num>{_NUM})(?![A-Za-z0-9_.])
    |(?P<str>"(?:[^"\\\n]|\\.)*")
    |(?P<word>[A-Za-z_][A-Za-z0-9_.\-]*)
    |(?P<punct>[\[\]{{}}=:,])
    |(?P<badcomment>/\*)
    |(?P<badstr>")
    """,
    re.S | re.X,
)
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_ESCAPE_RE = re.compile(r"\\(u[0-9A-Fa-f]{4}|.)", re.S)
_BARE_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class SObject(dict):
    """A parsed SJSON object: a dict that also knows where it and each of its keys were."""

    line: int
    lines: dict[str, int]


class SArray(list):
    """A parsed SJSON array that is not a plain numeric/string table; knows its items' lines."""

    line: int
    lines: list[int]


class SJSONError(ClipFormatError):
    """A syntax error in an SJSON file (always with a line)."""


def parse(text: str, path: object = "<sjson>") -> SObject:
    """Parse SJSON text; raise `SJSONError` naming `path:line` and what was expected."""
    return _Parser(text, path).document()


def read_text(path: object, data: bytes | None = None) -> str:
    """A text file's contents (UTF-8; a BOM is skipped), or ClipFormatError saying why not.

    `data`, when given, is the file's (already decompressed) bytes; `path` then only names it.
    """
    try:
        if data is None:
            with open(path, "rb") as f:  # type: ignore[arg-type]
                data = f.read()
    except FileNotFoundError:
        raise ClipFormatError(path, "no such file") from None
    except OSError as exc:
        raise ClipFormatError(path, f"cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ClipFormatError(path, "not UTF-8 text", offset=exc.start) from None


def parse_file(path: object) -> SObject:
    """Read and parse an SJSON file."""
    return parse(read_text(path), path)


def _unescape(body: str, path: object, line: int) -> str:
    def one(m: re.Match[str]) -> str:
        e = m.group(1)
        if e in _ESCAPES:
            return _ESCAPES[e]
        if e[0] == "u" and len(e) == 5:
            return chr(int(e[1:], 16))
        raise SJSONError(path, f"unknown escape '\\{e}' in string", line=line)

    return _ESCAPE_RE.sub(one, body)


class _Parser:
    def __init__(self, text: str, path: object) -> None:
        self.text = text
        self.path = path
        self.pos = 0
        self.newlines = [m.start() for m in re.finditer("\n", text)]
        self.peeked: tuple[str, str, int] | None = None

    # ------------------------------------------------------------------ tokens
    def line_at(self, pos: int) -> int:
        return bisect.bisect_left(self.newlines, pos) + 1

    def error(self, message: str, pos: int | None = None) -> SJSONError:
        return SJSONError(self.path, message, line=self.line_at(self.pos if pos is None else pos))

    def _skip_ws(self) -> None:
        m = _TOKEN_RE.match(self.text, self.pos)
        if m is not None and m.lastgroup == "ws":
            self.pos = m.end()

    def peek(self) -> tuple[str, str, int]:
        """(kind, text, start) of the next token; kind 'eof' at the end."""
        if self.peeked is not None:
            return self.peeked
        self._skip_ws()
        start = self.pos
        if start >= len(self.text):
            tok = ("eof", "", start)
        else:
            m = _TOKEN_RE.match(self.text, start)
            if m is None:
                raise self.error("unexpected character", start)
            kind = m.lastgroup or ""
            if kind == "badcomment":
                raise self.error("unterminated /* comment", start)
            if kind == "badstr":
                raise self.error("unterminated string", start)
            tok = (kind, m.group(), start)
        self.peeked = tok
        return tok

    def take(self) -> tuple[str, str, int]:
        tok = self.peek()
        self.peeked = None
        self.pos = tok[2] + len(tok[1])
        return tok

    @staticmethod
    def describe(tok: tuple[str, str, int]) -> str:
        """What a parse error says it found: punctuation by name, anything else by its
        kind (a file that is no SJSON may hold anything, a secret behind a link too)."""
        kind, text, _ = tok
        if kind == "eof":
            return "the end of the file"
        if kind == "punct":
            return repr(text)
        return {"num": "a number", "str": "a string"}.get(kind, "a word")

    # ------------------------------------------------------------------ grammar
    def document(self) -> SObject:
        tok = self.peek()
        if tok[1] == "{":
            self.take()
            obj = self.members("}", 1, tok[2])
        else:
            obj = self.members(None, 0, tok[2])
        end = self.peek()
        if end[0] != "eof":
            raise self.error(f"expected the end of the file, found {self.describe(end)}", end[2])
        return obj

    def members(self, close: str | None, depth: int, start: int) -> SObject:
        obj = SObject()
        obj.line = self.line_at(start)
        obj.lines = {}
        while True:
            tok = self.take()
            kind, text, at = tok
            if kind == "eof":
                if close is None:
                    return obj
                raise self.error(
                    f"expected '{close}' to close the object opened on line "
                    f"{obj.line}, found the end of the file",
                    at,
                )
            if close is not None and text == close:
                return obj
            if text == ",":
                continue
            if kind == "word":
                key = text
            elif kind == "str":
                key = _unescape(text[1:-1], self.path, self.line_at(at))
            else:
                raise self.error(f"expected a key, found {self.describe(tok)}", at)
            sep = self.take()
            if sep[1] not in ("=", ":"):
                raise self.error(
                    f"expected '=' or ':' after a key, found {self.describe(sep)}", sep[2]
                )
            line = self.line_at(at)
            if key in obj:
                raise self.error(f"duplicate key {key!r} (first on line {obj.lines[key]})", at)
            obj[key] = self.value(depth + 1, "after a key =")
            obj.lines[key] = line

    def value(self, depth: int, context: str) -> object:
        if depth > MAX_DEPTH:
            raise self.error(f"nesting deeper than {MAX_DEPTH} levels")
        tok = self.peek()
        kind, text, at = tok
        if text == "[":
            fast = self.table(at)
            if fast is not None:
                return fast
            self.take()
            return self.array(depth, at)
        self.take()
        if text == "{":
            return self.members("}", depth, at)
        if kind == "num":
            if "." in text or "e" in text or "E" in text or len(text) > 18:
                return float(text)  # (long digit runs: float, not a 4300-digit-limit error)
            return int(text)
        if kind == "str":
            body = text[1:-1]
            return _unescape(body, self.path, self.line_at(at)) if "\\" in body else body
        if kind == "word":
            return {"true": True, "false": False, "null": None}.get(text, text)
        raise self.error(f"expected a value {context}, found {self.describe(tok)}", at)

    def array(self, depth: int, start: int) -> SArray:
        arr = SArray()
        arr.line = self.line_at(start)
        arr.lines = []
        while True:
            tok = self.peek()
            if tok[1] == "]":
                self.take()
                return arr
            if tok[1] == ",":
                self.take()
                continue
            if tok[0] == "eof":
                raise self.error(
                    f"expected ']' to close the array opened on line {arr.line}, "
                    "found the end of the file",
                    tok[2],
                )
            arr.lines.append(self.line_at(tok[2]))
            arr.append(self.value(depth + 1, "in array"))

    def table(self, start: int) -> np.ndarray | None:
        """Fast path: a numeric/plain-string row, or an array of equal-width such rows."""
        m = _MATRIX_RE.match(self.text, start)
        if m is not None:
            out = _matrix(m.group())
        else:
            m = _ROW_RE.match(self.text, start)
            out = _row(m.group()) if m is not None else None
        if out is None or m is None:
            return None
        self.peeked = None
        self.pos = m.end()
        return out


def _row(tok: str) -> np.ndarray | None:
    body = tok[1:-1]
    if '"' not in body:
        if "/" in body:
            body = _COMMENT_RE.sub(" ", body)
        return np.array([float(x) for x in body.replace(",", " ").split()], dtype=np.float64)
    if "/" in body:
        return None  # a comment, or a '/' inside a string: not worth a fast path
    atoms = _ATOM_RE.findall(body)
    if all(a[0] == '"' for a in atoms):
        return np.array([a[1:-1] for a in atoms], dtype=str)
    return None  # mixed numbers and strings: let the general parser build a list


def _matrix(tok: str) -> np.ndarray | None:
    body = tok[1:-1]
    if '"' in body:
        if "/" in body:
            return None  # comments, or '/' inside strings: the general parser copes
        strings = _STR_BODY_RE.findall(body)
        # nothing but strings and layout: every character is accounted for by the strings,
        # their quotes and the layout characters (strings holding layout characters or
        # brackets fail the count and take the general path, which is right, only slower)
        layout = len(body) - len(body.translate(_LAYOUT_CHARS))
        if len(body) != len("".join(strings)) + 2 * len(strings) + layout:
            return None
        widths = {p.count('"') for p in body.split("]")[:-1]}
        if len(widths) != 1:
            return None
        width = widths.pop() // 2
        return np.array(strings, dtype=str).reshape(-1, width)
    if "/" in body:
        body = _COMMENT_RE.sub(" ", body)
    body = body.replace(",", " ").replace("[", " ")
    pieces = body.split("]")[:-1]
    widths = {len(p.split()) for p in pieces}
    if len(widths) != 1:
        return None  # ragged: the general parser keeps each row with its line
    width = widths.pop()
    values = np.array([float(x) for x in body.replace("]", " ").split()], dtype=np.float64)
    return values.reshape(len(pieces), width)


# ---------------------------------------------------------------------- writer


def format_float(value: float) -> str:
    """Shortest decimal that reads back as the same float64 (Python's repr), always with a '.'."""
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"SJSON cannot hold {v}")
    s = repr(v)
    return s if ("." in s or "e" in s) else s + ".0"


def hex_double(value: float) -> str:
    """The float64 bit pattern as upper-case hex digits, the way ACL writes binary-exact values."""
    return f"{int(np.float64(value).view(np.uint64)):X}"


def hex_doubles(values: np.ndarray) -> list[str]:
    """`hex_double` of every value, flattened in C order."""
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64).ravel()
    return [f"{b:X}" for b in bits.tolist()]


def quote(s: str) -> str:
    """A double-quoted SJSON string with JSON escapes."""
    out = s.replace("\\", "\\\\").replace('"', '\\"')
    out = out.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{out}"'


def format_value(value: object) -> str:
    """One scalar or flat array on one line (`[ a, b, c ]`, as ACL lays out its rows)."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return format_float(float(value))
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        items = [format_value(v) for v in value]
        return "[ " + ", ".join(items) + " ]" if items else "[ ]"
    raise TypeError(f"cannot write {type(value).__name__} as SJSON")


def dumps(document: Mapping[str, object], indent: str = "\t") -> str:
    """Write a mapping as top-level SJSON in ACL's layout.

    Objects and arrays of arrays/objects are expanded one item per line with `key =` on its
    own line; flat arrays and scalars stay inline. Top-level members are separated by a blank
    line. Key order is the mapping's order (ACL's reader expects its own order).
    """
    out: list[str] = []
    for i, (key, value) in enumerate(document.items()):
        if i:
            out.append("")
        _emit(value, f"{_key(key)} =", 0, indent, out)
    return "\n".join(out) + "\n"


def _key(key: str) -> str:
    return key if _BARE_KEY_RE.match(key) else quote(key)


def _emit(value: object, head: str, level: int, indent: str, out: list[str]) -> None:
    pad = indent * level
    if isinstance(value, Mapping):
        if head:
            out.append(pad + head)
        out.append(pad + "{")
        for key, item in value.items():
            _emit(item, f"{_key(key)} =", level + 1, indent, out)
        out.append(pad + "}")
    elif _is_nested(value):
        if head:
            out.append(pad + head)
        out.append(pad + "[")
        for item in value:  # type: ignore[attr-defined]
            _emit(item, "", level + 1, indent, out)
        out.append(pad + "]")
    else:
        out.append(pad + (head + " " if head else "") + format_value(value))


def _is_nested(value: object) -> bool:
    if isinstance(value, np.ndarray):
        return value.ndim > 1
    if isinstance(value, (list, tuple)):
        return any(isinstance(v, (Mapping, list, tuple, np.ndarray)) for v in value)
    return False
