"""The curve codec's slack pass: grids coarsened only while every joint holds its precision,
strict in float64 from the bytes, the knots untouched."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from codec.codecs.curve import layout
from codec.codecs.curve.allocation import ROUNDINGS, Slack, rounded_constants, spend_slack
from codec.codecs.curve.fitter import CurveFitter, cost
from codec.codecs.curve.keys import clip_keys
from codec.codecs.survey.fitting import STRICT_MARGIN, continuous_rotations, fit_clip
from codec.codecs.survey.frame import CONSTANT, ROT, SC
from codec.measure.error_metric import clip_errors, object_matrices
from codec.model import quat
from codec.model.clip import Clip, Skeleton
from tests.codec.codecs import survey_checks as checks


def _fit(clip):
    clip = checks.SETTINGS.apply(clip)
    fitted = fit_clip(clip, CurveFitter(clip_keys(clip, 0.5)))
    raws = (continuous_rotations(clip), clip.translations, clip.scales)
    return clip, fitted, raws


@functools.cache
def _keyed():
    return _fit(checks.window("keyed/cmu_13_07_keys6_linear.acl.sjson.xz"))


@pytest.mark.parametrize("compensate", [True, False])
def test_a_keyed_clip_spends_its_slack_and_stays_strict_from_the_bytes(compensate: bool) -> None:
    clip, fitted, raws = _keyed()
    limit = clip.skeleton.precision * STRICT_MARGIN
    spent = spend_slack(clip, raws, fitted.fixed, fitted.reps, limit, compensate)
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


def _four_joint_chain() -> Clip:
    """root -> a -> b -> c, bones 20 cm along y, a, b and c turning about different axes."""
    S = 24
    t = np.linspace(0.0, 1.5, S)
    rot = np.tile(quat.identity((1, 4)), (S, 1, 1))
    for j, axis in ((1, (0.0, 0.0, 1.0)), (2, (1.0, 0.0, 0.0)), (3, (0.0, 1.0, 0.0))):
        rot[:, j] = quat.from_axis_angle(np.array(axis), 0.4 * np.sin(t * j))
    tr = np.zeros((S, 4, 3))
    tr[:, 1:, 1] = 20.0
    sk = Skeleton.create(["root", "a", "b", "c"], [-1, 0, 1, 2], bind_translations=tr[0])
    return checks.SETTINGS.apply(Clip(sk, 30.0, rot, tr, np.ones((S, 4, 3)), name="four"))


def _lossy(clip: Clip, turning: frozenset[int] = frozenset()) -> tuple[Slack, list[np.ndarray]]:
    """The clip's Slack with joint a's rotation off by 0.01 rad about x at every sample
    (`turning`: the joints whose rotations are animated)."""
    parts = [clip.rotations.copy(), clip.translations.copy(), clip.scales.copy()]
    off = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.array([0.01]))
    parts[0][:, 1] = quat.mul(parts[0][:, 1], off)
    return Slack(clip, parts, clip.skeleton.precision, turning), parts


def _object(parts: list[np.ndarray], clip: Clip) -> np.ndarray:
    return object_matrices(tuple(parts), clip.skeleton.parents).reshape(*parts[0].shape[:2], 3, 4)


def test_a_leaf_aims_at_its_source_orientation_under_its_lossy_parent() -> None:
    clip = _four_joint_chain()
    slack, parts = _lossy(clip)
    keys = np.arange(clip.num_samples)
    aimed = parts[0].copy()
    aimed[:, 3] = slack.aim(3, ROT, keys, clip.rotations[:, 3])
    as_is, compensated = _object(parts, clip), _object([aimed, *parts[1:]], clip)
    raw = _object([clip.rotations, *parts[1:]], clip)
    turn = np.abs(compensated[:, 3, :, :3] - raw[:, 3, :, :3]).max()
    assert turn < 1e-9 < np.abs(as_is[:, 3, :, :3] - raw[:, 3, :, :3]).max()


def test_a_bone_takes_back_its_parents_position_error() -> None:
    """b's rotation aimed with c turning with it (c's own rotation not animated) puts c
    nearer its source position than b's source rotation does under the lossy a."""
    clip = _four_joint_chain()
    slack, parts = _lossy(clip, frozenset({1, 2}))
    assert list(slack.rigid[2]) == [3] and list(slack.rigid[1]) == [2]
    keys = np.arange(clip.num_samples)
    aimed = parts[0].copy()
    aimed[:, 2] = slack.aim(2, ROT, keys, clip.rotations[:, 2])
    raw = _object([clip.rotations, *parts[1:]], clip)[:, 3, :, 3]
    before = np.linalg.norm(_object(parts, clip)[:, 3, :, 3] - raw, axis=-1)
    after = np.linalg.norm(_object([aimed, *parts[1:]], clip)[:, 3, :, 3] - raw, axis=-1)
    assert np.all(after < 0.2 * before)


def test_constants_are_rounded_to_short_fractions_and_the_clip_stays_strict() -> None:
    clip, fitted, raws = _keyed()
    limit = clip.skeleton.precision * STRICT_MARGIN
    fixed = rounded_constants(clip, fitted.kinds, fitted.fixed, fitted.reps, limit)
    const = np.argwhere(fitted.kinds == CONSTANT)
    assert fixed is not fitted.fixed and np.any(const[:, 1] == ROT)
    step = ROUNDINGS[-1]
    for j, k in const:
        if k != SC:  # every constant on the finest rounding's grid at least
            v = np.asarray(fixed[k][j]) / step[k]
            assert np.array_equal(v, np.rint(v)), (j, k)
            assert np.abs(fixed[k][j] - fitted.fixed[k][j]).max() <= ROUNDINGS[0][k] / 2
    before = layout.write(clip, fitted.kinds, fitted.fixed, fitted.reps)
    after = layout.write(clip, fitted.kinds, fixed, fitted.reps)
    assert len(after) < 0.97 * len(before)
    decoded = layout.read(after, clip.skeleton).decode_source()
    assert np.all(clip_errors(clip, decoded).max(axis=0) <= clip.skeleton.precision)


def test_constants_stay_as_they_are_when_no_rounding_holds() -> None:
    clip, fitted, _ = _keyed()
    none = np.zeros(clip.num_joints)
    assert rounded_constants(clip, fitted.kinds, fitted.fixed, fitted.reps, none) is fitted.fixed
