"""Typed fields shared by the SJSON and glTF readers, and the errors each words from them."""

from __future__ import annotations

import numpy as np
import pytest

from codec.errors import ClipFormatError
from codec.formats.acl_sjson import read_acl_sjson
from codec.formats.fields import (
    REQUIRED,
    FieldProblem,
    describe,
    field,
    is_kind,
    kind_names,
    out_of_range,
)
from codec.formats.gltf import read_gltf


def test_a_field_of_the_right_kind_or_its_default() -> None:
    obj = {"n": 3, "flag": True, "x": 2.0, "s": "a"}
    assert field(obj, "n", int) == 3 and field(obj, "s", (str,)) == "a"
    assert field(obj, "gone", int, 7) == 7
    assert field(obj, "x", int, whole_floats=True) == 2 and isinstance(
        field(obj, "x", int, whole_floats=True), int
    )
    with pytest.raises(FieldProblem) as missing:
        field(obj, "gone", int, REQUIRED)
    assert missing.value.missing and missing.value.key == "gone"
    with pytest.raises(FieldProblem) as wrong:
        field(obj, "flag", (int, float))  # true is not a number
    assert not wrong.value.missing and wrong.value.value is True
    with pytest.raises(FieldProblem):
        field(obj, "x", int)  # 2.0 is an int only when asked for
    assert is_kind(True, bool) and not is_kind(True, int) and is_kind(1, (int, float))


def test_words_for_kinds_values_and_ranges() -> None:
    assert kind_names((int, float)) == "a number"
    assert kind_names((int, str)) == "a whole number or a string"
    assert describe({}) == "an object" and describe([1, 2]) == "an array of 2"
    assert describe(False) == "false" and describe(None) == "null"
    # a string is told by its length, never quoted (a file that is not the format may hold
    # anything, issue 37); other long values are cut
    assert describe("root:secret") == "a string of 11 characters"
    assert describe(10**100).endswith("...") and len(describe(10**100)) == 40
    assert out_of_range(np.array([1.0, 2.0])) is None
    where, why = out_of_range(np.array([[1.0, 2.0], [3e38, 4.0]]))
    assert where == (1, 0) and "3e+38" in why


def test_each_reader_names_its_own_place(tmp_path) -> None:
    sjson = tmp_path / "a.acl.sjson"
    sjson.write_text('version = 5\nclip = { name = "a"\nnum_samples = true\nsample_rate = 30 }\n')
    with pytest.raises(ClipFormatError) as e:
        read_acl_sjson(sjson)
    assert str(e.value).endswith(
        "a.acl.sjson:3: 'clip': 'num_samples' must be a number, found true"
    )
    gltf = tmp_path / "a.gltf"
    gltf.write_text('{"asset": {"version": "2.0"}, "nodes": [{}], "skins": [{"joints": 5}]}')
    with pytest.raises(ClipFormatError) as e:
        read_gltf(gltf)
    assert "skins[0].joints has the wrong type (int)" in str(e.value)
