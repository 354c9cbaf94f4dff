"""Every readout quotes one number, the error of the pose on screen, under every rounding mode."""

from __future__ import annotations

import numpy as np
import pytest

from app.model.error_scale import format_cm, format_percent
from codec.measure.error_metric import shell_error
from codec.model.sampling import ROUNDING_MODES, sample_dense
from codec.model.transforms import object_space
from codec.tuning import JointOverride


def independent_error(doc, t: float, mode: str) -> np.ndarray:
    """Raw and lossy object space at `t` worked out here, from the clip and the decoder."""
    clip, r = doc.clip, doc.result
    modes = doc.per_track_rounding() if mode == "per_track" else None
    raw = sample_dense(
        clip.rotations, clip.translations, clip.scales, clip.sample_rate, t, mode, False, modes
    )
    lossy = r.decoder.sample(t, mode, per_track=modes)
    parents = clip.skeleton.parents
    a = object_space(raw.rotations[None], raw.translations[None], raw.scales[None], parents)[0]
    b = object_space(lossy.rotations[None], lossy.translations[None], lossy.scales[None], parents)[
        0
    ]
    return shell_error(a, b, r.clip.skeleton.shell_distance)


@pytest.mark.parametrize("mode", ROUNDING_MODES)
def test_the_3d_view_and_the_error_panel_agree_at_random_times(loaded, ui, mode) -> None:
    window = loaded
    doc, vp = window.document, window.viewport
    panel = window.panels["ErrorPlotPanel"]
    if mode == "per_track":  # some joints snap one way, some another
        doc.set_overrides(
            [JointOverride("*Hand*", rounding="ceil"), JointOverride("*Foot*", rounding="floor")]
        )
    window.timeline.rounding_box.setCurrentText(mode)
    assert doc.rounding == mode
    hand = doc.clip.skeleton.index("lHand")
    doc.set_selection(hand)
    rng = np.random.default_rng(ROUNDING_MODES.index(mode))
    for t in rng.uniform(0.0, doc.duration, 8):
        doc.set_time(float(t))
        ui.draw(vp)
        shown = doc.shown_pose()
        want = independent_error(doc, doc.time, mode)
        np.testing.assert_allclose(shown.error, want, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(vp.current_error, want, rtol=1e-9, atol=1e-12)
        text = format_cm(want[hand])
        assert text in vp.info.text(), (vp.info.text(), text)
        assert f"lHand {text} ({format_percent(want[hand] / 0.01)})" in panel.readout.text()
        if mode in ("floor", "ceil", "nearest"):  # a sample is shown: the codec's own table
            k = shown.keys.first if float(np.max(shown.keys.alpha)) == 0 else shown.keys.second
            # the codec keeps its table in float32: 3e-5 cm is 0.3 % of a 0.01 cm budget
            np.testing.assert_allclose(shown.error, doc.result.error[k], atol=3e-5)
            assert f"sample {k}" in panel.readout.text()


def test_the_readouts_quote_the_shown_sample_not_the_nearest(loaded, ui) -> None:
    """Under ceil, between samples the readouts show the next sample's error."""
    doc, vp = loaded.document, loaded.viewport
    panel = loaded.panels["ErrorPlotPanel"]
    rate = doc.clip.sample_rate
    doc.set_rounding("ceil")
    hand = doc.clip.skeleton.index("lHand")
    doc.set_selection(hand)
    errors = doc.result.error[:, hand]
    k = int(np.argmax(np.abs(np.diff(errors))))  # where neighbours differ most
    doc.set_time((k + 0.3) / rate)  # nearest would say k, ceil shows k + 1
    ui.draw(vp)
    assert vp.current_error[hand] == pytest.approx(errors[k + 1], abs=3e-5)
    assert format_cm(vp.current_error[hand]) in panel.readout.text()
    assert f"sample {k + 1}" in panel.readout.text()
