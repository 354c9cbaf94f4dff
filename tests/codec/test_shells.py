import numpy as np

from codec import quat
from codec.affine import pack_qvv
from codec.shells import dominant_shells


def test_dominance_on_a_straight_chain_by_hand():
    # root -> a (10 cm along x) -> b (10 cm along x); identity rotations; shells 3, precision 0.01
    rot = quat.identity((1, 3))
    tr = np.array([[[0.0, 0, 0], [10.0, 0, 0], [10.0, 0, 0]]])
    local = pack_qvv(rot, tr, np.ones((1, 3, 3)))
    dist, prec = dominant_shells(local, np.array([-1, 0, 1]), np.full(3, 3.0), np.full(3, 0.01))
    # b's shell point (3,0,0) lands at (13,0,0) in a's space: 13 + 0.01 beats a's own 3
    # then a's shell 13.01 pushed through a's offset reaches 23.01 in the root, + 0.01
    np.testing.assert_allclose(dist, [23.02, 13.01, 3.0])
    np.testing.assert_allclose(prec, [0.01, 0.01, 0.01])


def test_largest_reach_over_samples_and_child_precision_is_taken():
    rot = quat.identity((2, 2))
    tr = np.zeros((2, 2, 3))
    tr[1, 1] = [0, 0, 5.0]  # at sample 1 the child sits 5 cm out: (0,0,1) lands at 6
    local = pack_qvv(rot, tr, np.ones((2, 2, 3)))
    dist, prec = dominant_shells(
        local, np.array([-1, 0]), np.array([3.0, 1.0]), np.array([0.5, 0.02])
    )
    assert dist[0] == 6.0 + 0.02
    assert prec[0] == 0.02  # the dominant child's precision


def test_a_loose_child_does_not_loosen_its_parent():
    rot = quat.identity((1, 2))
    tr = np.array([[[0.0, 0, 0], [0.0, 0, 20.0]]])
    local = pack_qvv(rot, tr, np.ones((1, 2, 3)))
    dist, prec = dominant_shells(
        local, np.array([-1, 0]), np.array([3.0, 3.0]), np.array([0.01, 1.0])
    )
    assert dist[0] == 23.0 + 1.0  # the child dominates the distance
    assert prec[0] == 0.01  # but not the precision


def test_a_short_child_does_not_dominate():
    local = pack_qvv(quat.identity((1, 2)), np.zeros((1, 2, 3)), np.ones((1, 2, 3)))
    dist, prec = dominant_shells(
        local, np.array([-1, 0]), np.array([3.0, 1.0]), np.array([0.01, 0.5])
    )
    np.testing.assert_allclose(dist, [3.0, 1.0])
    np.testing.assert_allclose(prec, [0.01, 0.5])  # a looser child leaves the parent's alone
