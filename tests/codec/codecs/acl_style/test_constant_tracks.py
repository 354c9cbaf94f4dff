import numpy as np

from codec.codecs.acl_style.constant_tracks import constant_rotations, rebuild_rotations
from codec.codecs.acl_style.rotation_layout import choose_constant, kept_components
from codec.formats import load_clip
from tests.codec.helpers import DATA

F32 = np.float32


def _rotations(seed: int) -> np.ndarray:
    """Unit rotations (n, 4) of every kind a constant meets: any, near 180 degrees (small w:
    another component is dropped), near the identity, with exact zeros and signed axes."""
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(4000, 4))
    q[1000:2000, 3] *= 1e-3
    q[2000:3000, :3] *= 1e-4
    q[3000:3500, rng.integers(0, 4)] = 0.0
    q[3500:] = np.eye(4)[rng.integers(0, 4, 500)] * rng.choice([-1.0, 1.0], (500, 1))
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def test_constant_rotations_store_and_decode_as_the_decoder_rebuilds_them():
    """The compressor's constants (one kernel) against numpy's own formulation: the dropped
    component choose_constant picks, the kept float32 components with the dropped one made
    non-negative, and decoded values equal, bit for bit, to what the decoder rebuilds from
    the stored values (constant and default tests judge exactly what a reader gets)."""
    for q in (_rotations(5), load_clip(DATA / "acl" / "cmu_09_02.acl.sjson").rotations[0]):
        dropped, stored, values = constant_rotations(q)
        np.testing.assert_array_equal(dropped, choose_constant(q))
        rows = np.arange(len(q))
        signed = np.where((q[rows, dropped] < 0)[:, None], -q, q).astype(F32)
        assert stored.dtype == F32
        np.testing.assert_array_equal(stored, signed[rows[:, None], kept_components(dropped)])
        rebuilt = rebuild_rotations(stored, dropped)
        assert values.dtype == np.float64
        np.testing.assert_array_equal(values.view(np.uint64), rebuilt.view(np.uint64))
        np.testing.assert_allclose(np.abs(np.sum(values * q, axis=-1)), 1.0, atol=1e-6)


def test_the_fixed_values_are_the_constants_where_constant_and_the_bind_elsewhere():
    """detect_kinds' fixed values and constant layouts (filled by its kernel) against the
    selection they stand for, on a real clip at a loose and a tight precision."""
    from codec.codecs.acl_style.constant_tracks import FirstSamples, detect_kinds, exact_kinds
    from codec.measure.shells import dominant_shells

    clip = load_clip(DATA / "acl" / "cmu_09_02.acl.sjson")
    first = FirstSamples.of(clip)
    exact = exact_kinds(clip)
    seen = set()
    for precision in (1.0, 0.001):
        c = clip.with_skeleton_settings(precision=precision)
        dist, prec = dominant_shells(c)
        forced = np.zeros((c.num_joints, 3), dtype=bool)
        kinds, fixed, dropped = detect_kinds(c, dist, prec, forced, exact, first)
        assert kinds.dtype == np.uint8
        constant = kinds == 1
        seen.update(kinds.ravel().tolist())
        for k in range(3):
            want = np.where(constant[:, k, None], first.values[k], first.binds[k])
            np.testing.assert_array_equal(fixed[k].view(np.uint64), want.view(np.uint64))
            assert fixed[k].flags.c_contiguous
        np.testing.assert_array_equal(dropped, np.where(constant[:, 0], first.dropped, -1))
    assert seen == {0, 1, 2}  # default, constant and animated sub-tracks all met
