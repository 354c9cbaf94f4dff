"""tools/make_keyed_clips.py: the keyed clips of tests/data/keyed are what the tool makes,
and what it makes is keyed: the samples between keys are the in-betweens it promises."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import codec
from codec.model import quat

ROOT = Path(__file__).resolve().parents[2]
KEYED = ROOT / "tests" / "data" / "keyed"


def _tool():
    spec = importlib.util.spec_from_file_location(
        "make_keyed_clips", ROOT / "tools" / "make_keyed_clips.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_keyed_clips"] = module
    spec.loader.exec_module(module)
    return module


TOOL = _tool()


def test_every_recipe_has_its_clip_and_nothing_else_is_there() -> None:
    names = {f"{s}_keys{k}_{kind}.acl.sjson.xz" for s, k, kind in TOOL.RECIPES}
    assert names == {p.name for p in KEYED.iterdir()}


@pytest.mark.parametrize("recipe", TOOL.RECIPES, ids=lambda r: f"{r[0]}_{r[1]}_{r[2]}")
def test_the_stored_clip_is_the_tool_output(recipe) -> None:
    source, spacing, kind = recipe
    path = ROOT / "tests" / "data" / "acl" / f"{source}.acl.sjson"
    src = codec.load_clip(path if path.is_file() else path.with_name(path.name + ".xz"))
    made = TOOL.keyed(src, spacing, kind)
    stored = codec.load_clip(KEYED / f"{source}_keys{spacing}_{kind}.acl.sjson.xz")
    np.testing.assert_array_equal(stored.translations, made.translations)
    np.testing.assert_array_equal(stored.rotations, made.rotations)
    keys = TOOL.key_indices(src.num_samples, spacing)
    # the keys are the source's samples (rotations up to sign), the rest are in-betweens
    np.testing.assert_allclose(stored.translations[keys], src.translations[keys], atol=1e-12)
    d = np.abs(np.sum(stored.rotations[keys] * src.rotations[keys], axis=-1))
    np.testing.assert_allclose(d, 1.0, atol=1e-12)
    mid = keys[:-1] + spacing // 2
    mid = mid[mid < keys[1:]]
    assert not np.allclose(stored.translations[mid], src.translations[mid])


def test_linear_in_betweens_are_nlerps_of_the_keys() -> None:
    rng = np.random.default_rng(2)
    keys = np.array([0, 3, 6, 7])
    q = quat.normalize(rng.normal(size=(4, 2, 4)))
    out = TOOL.linear(keys, TOOL.continuous(q), 8)
    out /= np.linalg.norm(out, axis=-1, keepdims=True)
    expect = quat.nlerp(q[1], q[2], np.full((2, 1), 2.0 / 3.0))
    d = np.abs(np.sum(out[5] * expect, axis=-1))
    np.testing.assert_allclose(d, 1.0, atol=1e-12)
