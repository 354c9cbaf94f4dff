"""The compiled aim of the slack pass: Horn's quaternion gives Kabsch's least-squares rotation,
in the parent's frame, whatever the chain above."""

from __future__ import annotations

import numpy as np

from codec.codecs.curve.aim import aimed_rotations
from codec.measure.error_metric import object_matrices
from codec.model import quat


def _chain(rng: np.random.Generator, S: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A 4-joint chain's local poses (S, 4, ...), rotations not normalised, scaled joints."""
    rot = rng.normal(size=(S, 4, 4)) * rng.uniform(0.5, 2.0, size=(S, 4, 1))
    tr = rng.normal(scale=10.0, size=(S, 4, 3))
    sc = np.ones((S, 4, 3))
    sc[:, 1] = 1.7  # a uniform scale above: the parent's axes are taken without it
    return rot, tr, sc


def _kabsch(v: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(K, 3, 3) the proper rotation R minimising sum |R v - y|^2 (SVD, reflection fixed)."""
    u, _, vt = np.linalg.svd(np.einsum("kpa,kpb->kab", v, y))
    u[..., :, 2] *= np.sign(np.linalg.det(u @ vt))[:, None]
    return np.swapaxes(u @ vt, 1, 2)


def test_the_aim_is_kabschs_rotation_in_the_parents_frame() -> None:
    rng = np.random.default_rng(7)
    S, j, P = 12, 3, 6
    rot, tr, sc = _chain(rng, S)
    keys = np.array([0, 3, 4, 11])
    v = rng.normal(size=(len(keys), P, 3))
    y = rng.normal(size=(len(keys), P, 3))
    moved = np.arange(P) >= 3
    got = aimed_rotations(rot, tr, sc, keys, np.array([0, 1, 2]), j, v, y, moved)
    unit = rot / np.linalg.norm(rot, axis=-1, keepdims=True)
    mp = object_matrices((unit, tr, sc), np.array([-1, 0, 1, 2]))[keys, 2].reshape(-1, 3, 4)
    at = np.einsum("kab,kb->ka", mp[..., :3], tr[keys, j]) + mp[..., 3]
    turn = _kabsch(v, y - np.where(moved[None, :, None], at[:, None], 0.0))
    axes = mp[..., :3] / np.linalg.norm(mp[..., :3], axis=1, keepdims=True)
    want = quat.from_matrix(np.swapaxes(axes, 1, 2) @ turn)
    assert np.abs(got - want).max() < 1e-12
    assert np.all(got[:, 3] >= 0.0) and np.allclose(np.linalg.norm(got, axis=1), 1.0)


def test_points_turned_exactly_give_the_turn_back() -> None:
    """Under a root at rest, points turned by a known rotation (a half turn too: the largest
    eigenvalue's vector, not the first found) aim at that rotation."""
    S = 3
    rot = np.tile(quat.identity((1, 2)), (S, 1, 1))
    tr = np.zeros((S, 2, 3))
    sc = np.ones((S, 2, 3))
    want = quat.from_axis_angle(
        np.array([[0.0, 0.6, 0.8], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]), np.array([0.3, np.pi, -2.0])
    )
    want = np.where(want[:, 3:] < 0.0, -want, want)
    v = np.broadcast_to(3.0 * np.eye(3), (S, 3, 3)).copy()
    y = quat.rotate(want[:, None], v)
    got = aimed_rotations(rot, tr, sc, np.arange(S), np.array([0]), 1, v, y, np.zeros(3, bool))
    assert np.abs(np.abs(np.sum(got * want, axis=1)) - 1.0).max() < 1e-12
