"""Compare: A pinned through edits, B recompressed in the background, swap, clear, a new clip
clears; the --a / --b specs. Real compressions of a hand-made clip and of real clips."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

import codec
from app.controller import Controller
from app.model.comparison import (
    Variant,
    bits_difference,
    check_codec,
    error_difference,
    exported_pair,
    parse_variant,
    registered_codecs,
    stat_change,
)
from app.model.document import Document
from tests.app.test_controller import small_clip

DATA = Path(__file__).resolve().parents[2] / "data"
BVH = DATA / "bvh" / "cmu_02_02_walk_daz.bvh"


def _opened(qtbot, clip=None) -> tuple[Document, Controller]:
    doc = Document()
    ctl = Controller(doc, debounce_ms=20)
    with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
        ctl.open_clip(clip if clip is not None else small_clip())
    return doc, ctl


def test_a_is_kept_while_b_recompresses_and_after(qtbot) -> None:
    doc, ctl = _opened(qtbot)
    first = doc.result
    assert ctl.pin_a()
    assert doc.comparison.a is not None and doc.comparison.a.result is first
    gate = threading.Event()
    ran = []

    def slow(clip, settings, progress, cancel):
        ran.append(float(clip.skeleton.precision[0]))
        gate.wait(10)
        return codec.compress(clip, settings)

    ctl._compress = slow
    ctl.edit_settings({"precision": 0.05})
    qtbot.waitUntil(lambda: bool(ran), timeout=5000)
    assert ctl.running
    # while B compresses, A is the pinned result and B the one on screen before the edit
    assert doc.side_result("A") is first and doc.side_result("B") is first
    ctl.swap_comparison()  # refused while B compresses: the result is not the edit's yet
    assert doc.side_result("A") is first and doc.settings.precision == 0.05
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        gate.set()
    b = doc.side_result("B")
    assert b is not first and doc.side_result("A") is first
    assert ran == [0.05]
    assert b.stats["compressed_size"] <= first.stats["compressed_size"]
    assert doc.comparison.a.settings.precision is None  # the clip's own values
    ctl.shutdown()


def test_swap_exchanges_results_and_tuning_without_recompressing(qtbot) -> None:
    doc, ctl = _opened(qtbot)
    a = doc.result
    ctl.pin_a()
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        ctl.edit_settings({"precision": 0.2})
    b = doc.result
    calls = []
    ctl._compress = lambda *args, **kw: calls.append(1)
    ctl.swap_comparison()
    # nothing scheduled: no timer that could start a run, none running
    qtbot.waitUntil(lambda: not ctl.debounce.isActive() and not ctl.throttle.isActive())
    assert not calls and not ctl.running
    assert doc.result is a and doc.comparison.a.result is b
    assert doc.settings.precision is None and doc.comparison.a.settings.precision == 0.2
    ctl.swap_comparison()
    assert doc.result is b and doc.comparison.a.result is a and doc.settings.precision == 0.2
    ctl.shutdown()


def test_clear_and_a_new_clip_end_the_comparison(qtbot) -> None:
    doc, ctl = _opened(qtbot)
    seen = []
    doc.comparison_changed.connect(lambda: seen.append(doc.comparison.active))
    ctl.pin_a()
    ctl.clear_comparison()
    assert not doc.comparison.active and doc.side_result("A") is None
    ctl.pin_a()
    assert doc.comparison.active
    with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
        ctl.open_clip(codec.load_clip(BVH))
    assert not doc.comparison.active
    assert seen == [True, False, True, False]
    ctl.shutdown()


def test_pin_before_a_result_says_why(qtbot) -> None:
    doc = Document()
    ctl = Controller(doc)
    assert not ctl.pin_a()
    assert "nothing to compare" in doc.status.message and not doc.comparison.active


def test_both_sides_are_sampled_under_the_windows_rounding_or_their_own(qtbot) -> None:
    doc, ctl = _opened(qtbot, codec.load_clip(BVH))
    ctl.pin_a()
    with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
        ctl.edit_settings({"precision": 0.5})
    t = 0.5 / doc.clip.sample_rate  # half way between two samples
    doc.set_time(t)
    pa, pb = doc.side_pose("A"), doc.side_pose("B")
    assert not np.allclose(pa.translations, pb.translations)
    doc.set_rounding("floor")
    floor_b = doc.side_pose("B")
    first = doc.side_result("B").decoder.sample(0.0, "none")
    np.testing.assert_allclose(floor_b.translations, first.translations, atol=1e-6)
    ctl.shutdown()


def test_a_codec_is_chosen_by_a_registered_name() -> None:
    assert "acl-style" in registered_codecs()
    doc = Document()
    with pytest.raises(ValueError, match="unknown codec 'nope'.*acl-style"):
        doc.set_codec("nope")
    assert check_codec("acl-style") == "acl-style"


def test_variant_specs() -> None:
    v = parse_variant("precision=0.05, level=high shell=mesh rounding=floor codec=acl-style")
    assert v == Variant("acl-style", 0.05, "mesh", "high", "floor")
    assert v.tuning() == {"precision": 0.05, "level": "high", "shell_from_mesh": True}
    assert parse_variant("shell=4").tuning() == {"shell_distance": 4.0, "shell_from_mesh": False}
    for text, why in (
        ("precision=abc", "--a: precision 'abc' is not a number"),
        ("precision=-1", "positive"),
        ("colour=red", "unknown key 'colour'"),
        ("level=max", "level 'max'"),
        ("rounding=up", "rounding 'up'"),
        ("codec=zip", "unknown codec 'zip'"),
        ("precision", "not KEY=VALUE"),
        ("precision=1 precision=2", "given twice"),
    ):
        with pytest.raises(ValueError, match=why):
            parse_variant(text)


def test_differences_and_the_exported_pair(qtbot) -> None:
    clip = codec.load_clip(BVH)
    a = codec.compress(clip, codec.CompressionSettings(precision=0.01))
    b = codec.compress(clip, codec.CompressionSettings(precision=0.2))
    d = error_difference(a, b)
    assert d is not None and d.shape == a.error.shape and d.max() > 0
    bits = bits_difference(a, b)
    assert bits is not None and bits.min() < 0  # the looser precision drops bits somewhere
    assert stat_change("compressed_size", 100, 80) == "-20 (-20.0%)"
    assert stat_change("level", "high", "high") == ""
    # a time in the clip moves by seconds and frames, never by a percentage of itself
    assert stat_change("worst_time", 0.2, 1.3, 30.0) == "+1.1000 s (+33 frames)"
    pair = exported_pair(dict(a.stats), dict(b.stats))
    assert (
        pair["change"]["compressed_size"] == b.stats["compressed_size"] - a.stats["compressed_size"]
        and pair["change"]["compressed_size"] < 0
    )
