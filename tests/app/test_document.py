"""The Qt-free document model: signals fire only on real changes."""

from __future__ import annotations

import numpy as np

from app.document import Document
from codec.overrides import JointOverride
from tests.codec.helpers import chain_clip


def counters(doc: Document) -> dict[str, int]:
    seen = {"settings": 0, "rounding": 0, "time": 0}
    doc.settings_changed.connect(lambda: seen.__setitem__("settings", seen["settings"] + 1))
    doc.rounding_changed.connect(lambda: seen.__setitem__("rounding", seen["rounding"] + 1))
    doc.time_changed.connect(lambda: seen.__setitem__("time", seen["time"] + 1))
    return seen


def test_rounding_only_rules_do_not_ask_for_a_new_compression() -> None:
    doc = Document()
    doc.set_clip(chain_clip())
    seen = counters(doc)
    doc.set_overrides([JointOverride("j1", rounding="floor")])
    assert seen == {"settings": 0, "rounding": 1, "time": 0}
    assert doc.per_track_rounding().tolist() == ["none", "floor", "none", "none"]
    doc.set_overrides([JointOverride("j1", rounding="floor", precision=0.5)])
    assert seen["settings"] == 1
    np.testing.assert_allclose(doc.compression_input().skeleton.precision, [0.01, 0.5, 0.01, 0.01])


def test_time_is_clamped_and_unchanged_values_are_silent() -> None:
    doc = Document()
    doc.set_clip(chain_clip(num_samples=31))
    seen = counters(doc)
    doc.set_time(5.0)
    assert doc.time == doc.duration == 1.0 and seen["time"] == 1
    doc.set_time(5.0)
    doc.update_settings(precision=0.01)
    assert seen == {"settings": 0, "rounding": 0, "time": 1}
