import warnings

import numpy as np

from codec.measure.shells import (
    ancestor_scale,
    dominant_shells,
    local_precision,
    segment_dominant_shells,
)
from codec.model import quat
from codec.model.clip import Clip, Skeleton


def clip_of(tr: np.ndarray, shell: list[float], precision: list[float]) -> Clip:
    """Identity rotations, the given translations (S, J, 3), a chain or pair hierarchy."""
    s, j = tr.shape[:2]
    sk = Skeleton.create(
        [f"j{i}" for i in range(j)],
        list(range(-1, j - 1)),
        precision=np.array(precision),
        shell_distance=np.array(shell),
    )
    return Clip(sk, 30.0, quat.identity((s, j)), tr, np.ones((s, j, 3)))


def test_dominance_on_a_straight_chain_by_hand():
    # root -> a (10 cm along x) -> b (10 cm along x); identity rotations; shells 3, precision 0.01
    tr = np.array([[[0.0, 0, 0], [10.0, 0, 0], [10.0, 0, 0]]])
    dist, prec = dominant_shells(clip_of(tr, [3.0] * 3, [0.01] * 3))
    # b's shell point (3,0,0) lands at (13,0,0) in a's space: 13 + 0.01 beats a's own 3
    # then a's shell 13.01 pushed through a's offset reaches 23.01 in the root, + 0.01
    np.testing.assert_allclose(dist, [23.02, 13.01, 3.0])
    np.testing.assert_allclose(prec, [0.01, 0.01, 0.01])


def test_largest_reach_over_samples_and_child_precision_is_taken():
    tr = np.zeros((2, 2, 3))
    tr[1, 1] = [0, 0, 5.0]  # at sample 1 the child sits 5 cm out: (0,0,1) lands at 6
    dist, prec = dominant_shells(clip_of(tr, [3.0, 1.0], [0.5, 0.02]))
    assert dist[0] == 6.0 + 0.02
    assert prec[0] == 0.02  # the dominant child's precision


def test_a_loose_child_does_not_loosen_its_parent():
    tr = np.array([[[0.0, 0, 0], [0.0, 0, 20.0]]])
    dist, prec = dominant_shells(clip_of(tr, [3.0, 3.0], [0.01, 1.0]))
    assert dist[0] == 23.0 + 1.0  # the child dominates the distance
    assert prec[0] == 0.01  # but not the precision


def test_a_short_child_does_not_dominate():
    dist, prec = dominant_shells(clip_of(np.zeros((1, 2, 3)), [3.0, 1.0], [0.01, 0.5]))
    np.testing.assert_allclose(dist, [3.0, 1.0])
    np.testing.assert_allclose(prec, [0.01, 0.5])  # a looser child leaves the parent's alone


def test_segments_see_only_their_samples_and_the_wrapped_one():
    tr = np.zeros((6, 2, 3))
    tr[1, 1] = [0, 0, 5.0]  # only in segment 0
    tr[5, 1] = [0, 0, 9.0]  # the last sample: segment 1's, or segment 0's when wrapping
    clip = clip_of(tr, [3.0, 1.0], [0.01, 0.01])
    table = np.array([[0, 3], [3, 3]])
    dist, _ = segment_dominant_shells(clip, table, wrap=False)
    np.testing.assert_allclose(dist[:, 0], [6.01, 10.01])
    wrapped = clip.replace(rotations=clip.rotations, translations=tr)
    dist, _ = segment_dominant_shells(wrapped, np.array([[0, 3], [3, 2]]), wrap=True)
    np.testing.assert_allclose(dist[:, 0], [10.01, 3.0])


def test_ancestor_scale_is_the_product_of_the_ancestors_largest_scales() -> None:
    tr = np.zeros((3, 4, 3))
    tr[:, 1:, 1] = 1.0
    clip = clip_of(tr, [3.0] * 4, [0.01] * 4)
    sc = np.ones((3, 4, 3))
    sc[:, 0] = [100.0, 100.0, 100.0]  # an armature in centimetres
    sc[1, 1] = [1.0, -3.0, 0.5]  # a mirrored, stretched joint on one sample only
    sc[:, 2] = [0.0, 0.0, 0.0]  # scaled to nothing
    clip = Clip(clip.skeleton, 30.0, clip.rotations, tr, sc)
    bound = ancestor_scale(clip)
    np.testing.assert_allclose(bound, [1.0, 100.0, 300.0, 0.0])
    local = local_precision(np.full(4, 0.01), bound)
    np.testing.assert_allclose(local[:3], [0.01, 1e-4, 0.01 / 300])
    assert local[3] == np.inf  # under a zero scale no local error reaches object space


def test_local_precision_divides_by_the_scale_per_joint_for_every_segment() -> None:
    """(G, J) precisions against one (J,) scale: each row divided as numpy divides, and
    infinity (no warning) under a scale of zero or NaN."""
    precision = np.array([[0.01, 0.02, 0.03, 0.04], [0.1, 0.2, 0.3, 0.4]])
    scale = np.array([2.0, 0.0, np.nan, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = local_precision(precision, scale)
    assert out.shape == (2, 4) and out.dtype == np.float64
    assert out[:, 0].tolist() == [0.01 / 2.0, 0.1 / 2.0]
    assert out[:, 3].tolist() == [0.04 / 3.0, 0.4 / 3.0]
    assert np.all(np.isinf(out[:, 1:3]))


def test_identity_within_decides_as_numpys_reach_does() -> None:
    """identity_within (one kernel) against identity_strays, ancestor_scale and numpy's
    arccos: bounds far off, at each sub-track's reach (clear or, for rotations, within
    rounding: -1) and just around it, random stored masks."""
    from codec.measure.shells import identity_strays, identity_within

    rng = np.random.default_rng(9)
    seen = {-1: 0, 0: 0, 1: 0}
    for trial in range(300):
        s, j = int(rng.integers(1, 4)), int(rng.integers(1, 8))
        rot = rng.normal(size=(s, j, 4)) * [0.1, 0.1, 0.1, 1.0]
        rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
        tr = rng.normal(size=(s, j, 3))
        sc = 1.0 + 0.1 * rng.normal(size=(s, j, 3))
        clip = clip_of(np.zeros((s, j, 3)), [1.0] * j, [0.01] * j)
        clip = Clip(clip.skeleton, 30.0, rot, tr, sc)
        distance = rng.uniform(0.5, 5.0, j)
        strays, scale = identity_strays(clip)
        reach = (
            np.stack(
                (
                    2.0 * np.arccos(np.minimum(strays[:, 0], 1.0)) * distance,
                    strays[:, 1],
                    strays[:, 2] * distance,
                ),
                axis=-1,
            )
            * scale[:, None]
        )
        stored = rng.random((j, 3)) < 0.5
        pick = reach[np.arange(j), rng.integers(0, 3, j)]
        bound = [pick, pick * (1 + 1e-14), pick * 0.5, pick * 2.0][trial % 4]
        want = bool(np.any((reach <= bound[:, None]) & stored))
        got, got_strays, got_scale = identity_within(clip, distance, bound, stored)
        np.testing.assert_array_equal(got_strays, strays)
        np.testing.assert_array_equal(got_scale, scale)
        seen[got] += 1
        if got >= 0:
            assert bool(got) == want, trial
        else:  # unclear only where a stored rotation's reach is within rounding
            near = np.abs(reach[:, 0] - bound) <= 1e-11 * bound
            assert np.any(near & stored[:, 0]), trial
    assert min(seen.values()) > 0, seen
