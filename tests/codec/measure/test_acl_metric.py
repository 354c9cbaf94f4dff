"""ACL's measure (codec.measure.acl_metric) on hand-made skeletons: a mirrored joint is
composed as ACL composes it, through matrices, so its children land where an affine product
puts them."""

from __future__ import annotations

import numpy as np

from codec.measure import acl_metric


def quat(axis: tuple[float, float, float], degrees: float) -> np.ndarray:
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    h = np.radians(degrees) / 2
    return np.array([*(a * np.sin(h)), np.cos(h)])


def rotated(v: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(..., 3) float64 vectors rotated by the unit quaternion q (xyzw)."""
    u, w = q[:3], q[3]
    c = np.cross(u, v)
    return v + 2 * w * c + 2 * np.cross(u, c)


def test_a_mirrored_parent_puts_its_childrens_shells_where_the_affine_product_does() -> None:
    # root mirrored in x (scale -1, 1, 1); its child and grandchild rotated off every axis,
    # so the mirror does not commute with their rotations
    rot = [quat((0, 0, 1), 30), quat((0, 0, 1), 60), quat((1, 1, 0), 50)]
    tr = [np.array([1.0, 2.0, 3.0]), np.array([10.0, -4.0, 2.0]), np.array([0.0, 8.0, -5.0])]
    sc = [np.array([-1.0, 1.0, 1.0]), np.ones(3), np.ones(3)]
    parents = np.array([-1, 0, 1])
    shell = np.array([3.0, 3.0, 3.0])
    pose = np.concatenate([np.stack(rot), np.stack(tr), np.stack(sc)], -1)[None].astype(np.float32)

    points = acl_metric.shell_points(
        acl_metric.object_qvv(pose[..., :4], pose[..., 4:7], pose[..., 7:], parents),
        shell,
        3,
        scale=True,
    )[0]

    for j in range(3):
        p = np.eye(3) * shell[j]  # the joint's shell points, one per row
        k = j
        while k >= 0:  # local to object: scale, rotate, translate, joint by joint
            p = rotated(p * sc[k], rot[k]) + tr[k]
            k = parents[k]
        np.testing.assert_allclose(points[j], p, atol=2e-5, err_msg=f"joint {j}")


def test_the_matrix_path_reads_back_the_rotation_it_was_given() -> None:
    """A QVV with a negative scale composed with the identity: the same rotation (up to
    sign), translation and a unit rotation, as rtm's quat_from_matrix gives back."""
    q = np.stack([quat((1, 2, 3), a) for a in (0, 45, 120, 179, 181, 300)])
    local = np.concatenate(
        (q, np.tile([1.0, 2.0, 3.0], (6, 1)), np.tile([1.0, -1.0, 2.0], (6, 1))), -1
    ).astype(np.float32)
    parent = np.tile(np.array([0, 0, 0, 1, 0, 0, 0, 1, 1, 1], np.float32), (6, 1))
    rot, tr = acl_metric.mirrored(local, parent)
    same = np.abs(np.sum(rot * q, axis=-1))
    np.testing.assert_allclose(same, 1, atol=1e-6)
    np.testing.assert_array_equal(tr, local[:, 4:7])
