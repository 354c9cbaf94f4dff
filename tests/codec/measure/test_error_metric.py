"""The error measure's compiled shortcuts against the reference arithmetic they stand in for."""

from __future__ import annotations

import numpy as np

from codec.formats import load_clip
from codec.measure.error_metric import (
    ends_within,
    errors_against,
    object_matrices,
    rounding_margin,
    shell_error,
)
from codec.model.transforms import object_space
from tests.codec.helpers import data_clip


def _reference(poses, parents, shell, precision) -> tuple[int, bool, np.ndarray]:
    """What loop detection decided before ends_within: object_matrices + errors_against
    + rounding_margin (1, 0, -1 for unclear), numpy's exact answer, and the errors."""
    ends = tuple(a[[0, -1]] for a in poses)
    mats = object_matrices(ends, parents)
    approx = errors_against(mats[:1], tuple(a[1:] for a in ends), parents, shell)[0]
    margin = rounding_margin(precision, shell, float(np.abs(mats).max()))
    exact = object_space(*ends, parents)
    within = bool(np.all(shell_error(exact[0], exact[1], shell) <= precision))
    if np.any(approx > precision + margin):
        return 0, within, approx
    if np.all(approx <= precision - margin):
        return 1, within, approx
    return -1, within, approx


def test_the_ends_test_decides_as_the_matrices_and_margin_did() -> None:
    """Random chains, first and last poses near a loop or not, precisions at the errors
    (within the margin: unclear), around them and far off, a NaN: the same decision every
    time, and a clear one is numpy's exact answer."""
    rng = np.random.default_rng(11)
    seen = {0: 0, 1: 0, -1: 0}
    for trial in range(600):
        nj, ns = int(rng.integers(1, 10)), int(rng.integers(1, 4))
        parents = np.array([-1] + [int(rng.integers(0, j)) for j in range(1, nj)])
        rot = rng.normal(size=(ns, nj, 4))
        rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
        tr, sc = rng.normal(size=(ns, nj, 3)) * 10, 1 + 0.1 * rng.normal(size=(ns, nj, 3))
        if trial % 3 == 0:
            rot[-1] = rot[0] + rng.normal(size=(nj, 4)) * 1e-6
            tr[-1], sc[-1] = tr[0] + 1e-5 * rng.normal(size=(nj, 3)), sc[0]
        if trial % 50 == 7:
            rot[-1, 0, 0] = np.nan
        shell = rng.uniform(0.5, 10, nj)
        errors = _reference((rot, tr, sc), parents, shell, np.ones(nj))[2]
        errors = np.where(np.isfinite(errors), errors, 1.0)
        scale = (1 + rng.uniform(-1e-7, 1e-7, nj), rng.uniform(0.5, 2, nj), 1 + 3e-6)[trial % 3]
        precision = np.maximum(errors * scale, 1e-9)
        want, within, _ = _reference((rot, tr, sc), parents, shell, precision)
        got = ends_within((rot, tr, sc), parents, shell, precision)
        assert got == want, trial
        if got >= 0:
            assert bool(got) == within, trial
        seen[got] += 1
    assert min(seen.values()) > 20, seen


def test_a_real_clip_is_within_its_own_error_and_not_below_it() -> None:
    """A clip whose last pose is far from its first (cmu_09_02): within a precision above
    each joint's error, clearly; not within one below its worst joint's."""
    clip = load_clip(data_clip("cmu_09_02.acl.sjson"))
    sk = clip.skeleton
    poses = (clip.rotations, clip.translations, clip.scales)
    errors = _reference(poses, sk.parents, sk.shell_distance, sk.precision)[2]
    worst = int(np.argmax(errors))
    assert errors[worst] > 1.0
    loose = errors * 1.01 + 1e-6
    assert ends_within(poses, sk.parents, sk.shell_distance, loose) == 1
    loose[worst] = errors[worst] / 2
    assert ends_within(poses, sk.parents, sk.shell_distance, loose) == 0
