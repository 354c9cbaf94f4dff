import numpy as np
import pytest

from codec.model import quat


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def test_rotate_matches_matrix_and_product_composes(rng):
    a = quat.normalize(rng.normal(size=(50, 4)))
    b = quat.normalize(rng.normal(size=(50, 4)))
    v = rng.normal(size=(50, 3))
    np.testing.assert_allclose(quat.rotate(a, v), (quat.to_matrix(a) @ v[..., None])[..., 0])
    # (a * b) rotates by b first, then a
    np.testing.assert_allclose(quat.rotate(quat.mul(a, b), v), quat.rotate(a, quat.rotate(b, v)))


def test_quarter_turn_about_z_by_hand():
    q = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), np.pi / 2)
    np.testing.assert_allclose(quat.rotate(q, np.array([1.0, 0, 0])), [0, 1, 0], atol=1e-15)


def test_inverse_and_from_matrix(rng):
    q = quat.normalize(rng.normal(size=(30, 4)))
    ident = quat.mul(q, quat.inverse(q))
    np.testing.assert_allclose(ident, np.broadcast_to([0, 0, 0, 1.0], ident.shape), atol=1e-12)
    back = quat.from_matrix(quat.to_matrix(q))
    np.testing.assert_allclose(np.abs(quat.dot(back, q)), 1.0, atol=1e-12)


def test_normalize_zero_gives_identity():
    np.testing.assert_array_equal(quat.normalize(np.zeros(4)), [0, 0, 0, 1])


def test_nlerp_takes_the_shorter_arc():
    a = quat.from_axis_angle(np.array([0, 0, 1.0]), 0.2)
    b = -quat.from_axis_angle(np.array([0, 0, 1.0]), 0.4)  # same rotation, other hemisphere
    mid = quat.nlerp(a, b, 0.5)
    expected = quat.from_axis_angle(np.array([0, 0, 1.0]), 0.3)
    np.testing.assert_allclose(mid, expected, atol=1e-12)


def test_slerp_is_constant_speed_and_nlerp_is_not():
    a = quat.identity()
    b = quat.from_axis_angle(np.array([1.0, 0, 0]), 2.0)
    s = quat.slerp(a, b, 0.25)
    np.testing.assert_allclose(s, quat.from_axis_angle(np.array([1.0, 0, 0]), 0.5), atol=1e-12)
    n = quat.nlerp(a, b, 0.25)
    assert abs(2 * np.arccos(n[3]) - 0.5) > 1e-3  # nlerp bends toward the middle


def test_ensure_continuity_flips_hemisphere_jumps():
    q = quat.from_axis_angle(np.array([0, 1.0, 0]), np.linspace(0, 1, 6))
    q[2:4] *= -1
    fixed = quat.ensure_continuity(q)
    assert np.all(quat.dot(fixed[1:], fixed[:-1]) > 0)
    np.testing.assert_allclose(np.abs(fixed), np.abs(q))


@pytest.mark.parametrize("order", ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"])
def test_to_euler_inverts_intrinsic_angles_in_every_order(order: str) -> None:
    rng = np.random.default_rng(7)
    ang = rng.uniform(-3.0, 3.0, (200, 3))
    ang[:, 1] = rng.uniform(-1.5, 1.5, 200)
    axes = {"X": np.array([1.0, 0, 0]), "Y": np.array([0, 1.0, 0]), "Z": np.array([0, 0, 1.0])}
    q = quat.from_axis_angle(axes[order[0]], ang[:, 0])
    for k in (1, 2):
        q = quat.mul(q, quat.from_axis_angle(axes[order[k]], ang[:, k]))
    np.testing.assert_allclose(quat.to_euler(q, order), ang, atol=1e-9)
    if order != "XYZ":  # another order reads other angles from the same rotation
        assert not np.allclose(quat.to_euler(q, "XYZ"), ang, atol=1e-3)


def test_to_euler_refuses_an_order_that_is_not_a_permutation() -> None:
    with pytest.raises(ValueError, match="'XXY'"):
        quat.to_euler(np.array([0.0, 0, 0, 1]), "XXY")
