"""The curve codec's slack pass: grids coarsened only while every joint holds its precision,
strict in float64 from the bytes, the knots untouched."""

from __future__ import annotations

import numpy as np

from codec.codecs.curve import layout
from codec.codecs.curve.allocation import spend_slack
from codec.codecs.curve.fitter import CurveFitter, cost
from codec.codecs.curve.keys import clip_keys
from codec.codecs.survey.fitting import STRICT_MARGIN, continuous_rotations, fit_clip
from codec.measure.error_metric import clip_errors
from tests.codec.codecs import survey_checks as checks


def _fit(clip):
    clip = checks.SETTINGS.apply(clip)
    fitted = fit_clip(clip, CurveFitter(clip_keys(clip, 0.5)))
    raws = (continuous_rotations(clip), clip.translations, clip.scales)
    return clip, fitted, raws


def test_a_keyed_clip_spends_its_slack_and_stays_strict_from_the_bytes() -> None:
    clip, fitted, raws = _fit(checks.window("keyed/cmu_13_07_keys6_linear.acl.sjson.xz"))
    limit = clip.skeleton.precision * STRICT_MARGIN
    spent = spend_slack(clip, raws, fitted.fixed, fitted.reps, limit)
    coarser = 0
    for jk, rep in fitted.reps.items():
        new = spent[jk]
        assert np.array_equal(new.keys, rep.keys) and new.mode == rep.mode
        assert new.grid.step >= rep.grid.step and cost(new) <= cost(rep)
        coarser += new.grid.step > rep.grid.step
    assert coarser >= len(fitted.reps) // 2  # most tracks had slack
    before = layout.write(clip, fitted.kinds, fitted.fixed, fitted.reps)
    after = layout.write(clip, fitted.kinds, fitted.fixed, spent)
    assert len(after) < len(before)
    decoded = layout.read(after, clip.skeleton).decode_source()
    assert np.all(clip_errors(clip, decoded).max(axis=0) <= clip.skeleton.precision)


def test_no_slack_no_change() -> None:
    """A limit the fit does not hold leaves no coarsening that holds it: every track as it was."""
    clip, fitted, raws = _fit(checks.chain_clip(np.sin(np.linspace(0.0, 4.0, 40))))
    spent = spend_slack(clip, raws, fitted.fixed, fitted.reps, np.zeros(clip.num_joints))
    assert fitted.reps and all(spent[jk] is rep for jk, rep in fitted.reps.items())
