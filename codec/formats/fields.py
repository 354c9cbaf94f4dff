"""Typed fields of a parsed document, as the ACL SJSON and glTF readers look them up.

Both readers ask the same questions of an object: is the key there (or has it a default),
is the value of the kinds expected (true and false are never numbers), and does an array
hold only numbers the codec can hold (codec.model.limits). Each reader words the answer its own
way, naming a line (SJSON) or a JSON path (glTF); `FieldProblem` carries what was wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from codec.model.limits import first_out_of_range, value_problem


class _Required:
    def __repr__(self) -> str:
        return "<required>"


REQUIRED: Any = _Required()  # the default of a field that must be there
KIND_NAMES = {int: "a whole number", float: "a number", str: "a string", bool: "true or false"}


class FieldProblem(Exception):
    """A field that is missing (`value` is REQUIRED) or holds a value of the wrong kind."""

    def __init__(self, key: str, value: Any = REQUIRED) -> None:
        super().__init__(key)
        self.key = key
        self.value = value

    @property
    def missing(self) -> bool:
        return self.value is REQUIRED


def is_kind(value: Any, kinds: type | tuple[type, ...]) -> bool:
    """`isinstance` where true and false count as booleans only, never as numbers."""
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    return isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)


def field(
    obj: Mapping[str, Any],
    key: str,
    kinds: type | tuple[type, ...],
    default: Any = REQUIRED,
    *,
    whole_floats: bool = False,
) -> Any:
    """obj[key] when it is one of `kinds`; `default` when the key is absent. `whole_floats`:
    a float with no fraction is taken as an int (JSON writers differ on `1` and `1.0`).
    Raises FieldProblem."""
    if key not in obj:
        if default is REQUIRED:
            raise FieldProblem(key)
        return default
    value = obj[key]
    if whole_floats and isinstance(value, float) and value.is_integer():
        value = int(value)
    if not is_kind(value, kinds):
        raise FieldProblem(key, value)
    return value


def kind_names(kinds: tuple[type, ...]) -> str:
    """'a number or a string': the kinds in words (an int is a number when floats are too)."""
    return " or ".join(
        KIND_NAMES.get(k, k.__name__) for k in kinds if not (k is int and float in kinds)
    )


def describe(value: Any) -> str:
    """A short description of a value for an error message."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return f"an array of {len(value)}"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):  # never quoted: a file that is not the format may hold anything
        return f"a string of {len(value)} characters"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def out_of_range(values: np.ndarray) -> tuple[tuple[int, ...], str] | None:
    """Where a finite array holds a number the codec cannot hold, and why; None if none."""
    bad = first_out_of_range(values)
    if bad is None:
        return None
    return bad, value_problem(float(values[bad]))
