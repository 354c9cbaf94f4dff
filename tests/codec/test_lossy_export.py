"""Lossy exports measured in the file: the values the file holds, read back by our readers,
kept within every joint's precision; tightened where the file's float32 rounding crosses it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import codec
from codec.formats import load_clip
from codec.lossy_export import Source, lossy_file
from codec.measure.error_metric import clip_errors

DATA = Path(__file__).resolve().parents[1] / "data"


def test_float32_rounding_that_crosses_the_precision_is_tightened(tmp_path: Path) -> None:
    """The Fox stands 65 m from the origin: float32 metres round its joints by ~5e-4 cm,
    which puts joints over a 0.001 cm budget that our float64 decoding keeps. The export
    measures that and compresses those joints again, tighter."""
    source = DATA / "gltf" / "Fox.glb"
    clip = load_clip(source, animation="Walk").with_skeleton_settings(0.001)
    result = codec.compress(clip)
    assert result.stats["max_error"] <= 0.001
    out = tmp_path / "walk.lossy.glb"
    plain = lossy_file(out, result.lossy, Source(source, "Walk"), reference=clip)
    assert not plain.measured.met and "over their precision" in plain.measured.line()
    calls = []

    def recompress(precision: np.ndarray) -> codec.Clip:
        calls.append(precision.copy())
        return codec.compress(clip.with_skeleton_settings(precision), result.settings).lossy

    strict = lossy_file(
        out, result.lossy, Source(source, "Walk"), reference=clip, recompress=recompress
    )
    assert strict.measured.met and strict.tightened and calls
    assert np.all(calls[-1] <= 0.001) and np.any(calls[-1] < 0.001)
    assert "tightened" in strict.summary()[1]
    strict.write()
    # the written file, read as a user's clip is, within 0.001 cm everywhere
    back = load_clip(out, animation="Walk").with_skeleton(clip.skeleton)
    error = clip_errors(clip, back).max(axis=0)
    assert error.max() <= 0.001
    assert np.allclose(error, strict.measured.error, rtol=0, atol=1e-12)


def test_a_format_that_cannot_hold_the_clip_is_not_tightened_in_vain(tmp_path: Path) -> None:
    """BVH has no scale: the clip with a zero scale is over its precision in the file
    however tight the codec, and the figure says so instead of compressing again."""
    clip = load_clip(DATA / "acl" / "cmu_09_02_with_zero_scale.acl.sjson")
    result = codec.compress(clip)

    def recompress(precision: np.ndarray) -> codec.Clip:
        raise AssertionError("tightening cannot help a file without scale")

    out = tmp_path / "z.bvh"
    made = lossy_file(out, result.lossy, Source(), reference=clip, recompress=recompress)
    assert not made.measured.met and made.rounds == 0
    assert any("scale" in n for n in made.notes)
    with pytest.raises(FileNotFoundError):
        out.stat()  # measured, not written: the caller decides
