import numpy as np

from codec.model import quat
from codec.model.transforms import (
    compose,
    decompose,
    local_to_object,
    qvv_to_matrix,
    transform_points,
)


def test_chain_object_space_by_hand():
    # root at (1,0,0) turned 90 deg about z; child 2 along x; grandchild 3 along x
    rot = np.stack(
        [quat.from_axis_angle(np.array([0, 0, 1.0]), np.pi / 2), quat.identity(), quat.identity()]
    )
    tr = np.array([[1.0, 0, 0], [2.0, 0, 0], [3.0, 0, 0]])
    obj = local_to_object(qvv_to_matrix(rot, tr, np.ones((3, 3))), np.array([-1, 0, 1]))
    np.testing.assert_allclose(obj[:, :, 3], [[1, 0, 0], [1, 2, 0], [1, 5, 0]], atol=1e-12)


def test_negative_and_non_uniform_scale_stay_exact():
    rng = np.random.default_rng(3)
    rot = quat.normalize(rng.normal(size=(2, 4)))
    scale = np.array([[-1.3, 0.5, 2.0], [1.0, -0.25, 1.0]])
    tr = rng.normal(size=(2, 3))
    m = qvv_to_matrix(rot, tr, scale)
    p = rng.normal(size=3)
    # child first, then parent, applied point-wise
    step = quat.rotate(rot[1], scale[1] * p) + tr[1]
    expected = quat.rotate(rot[0], scale[0] * step) + tr[0]
    np.testing.assert_allclose(transform_points(compose(m[0], m[1]), p), expected, atol=1e-12)


def test_decompose_round_trip_with_reflection():
    rng = np.random.default_rng(4)
    rot = quat.normalize(rng.normal(size=(5, 4)))
    scale = rng.uniform(0.5, 2, (5, 3)) * np.array([-1, 1, 1])
    m = qvv_to_matrix(rot, rng.normal(size=(5, 3)), scale)
    r, t, s = decompose(m)
    np.testing.assert_allclose(qvv_to_matrix(r, t, s), m, atol=1e-12)
