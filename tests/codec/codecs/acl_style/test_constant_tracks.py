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
        spans = ((0, 4), (4, 7), (7, 10))
        for k, (lo, hi) in enumerate(spans):
            want = np.where(constant[:, k, None], first.const10[:, lo:hi], first.bind10[:, lo:hi])
            np.testing.assert_array_equal(fixed[k].view(np.uint64), want.view(np.uint64))
            assert fixed[k].flags.c_contiguous
        np.testing.assert_array_equal(dropped, np.where(constant[:, 0], first.dropped, -1))
    assert seen == {0, 1, 2}  # default, constant and animated sub-tracks all met


def test_first_samples_are_the_constants_as_stored_and_decoded():
    """FirstSamples (one kernel) against its definition: the rotations as constant_rotations
    stores and decodes them, translations and scales through float32, the bind pose."""
    from codec.codecs.acl_style.constant_tracks import FirstSamples

    clip = load_clip(DATA / "acl" / "cmu_09_02.acl.sjson")
    sk = clip.skeleton
    first = FirstSamples.of(clip)
    dropped, stored, values = constant_rotations(clip.rotations[0])
    np.testing.assert_array_equal(first.dropped, dropped)
    assert first.stored.dtype == F32
    np.testing.assert_array_equal(first.stored, stored)
    const = np.concatenate(
        (values, clip.translations[0].astype(F32), clip.scales[0].astype(F32)), axis=-1
    ).astype(np.float64)
    np.testing.assert_array_equal(first.const10.view(np.uint64), const.view(np.uint64))
    bind = np.concatenate((sk.bind_rotations, sk.bind_translations, sk.bind_scales), axis=-1)
    np.testing.assert_array_equal(first.bind10.view(np.uint64), bind.view(np.uint64))


def test_stored_constants_are_the_constant_sub_tracks_joint_major():
    """stored_constants (one kernel) against the selection it stands for, on random kinds:
    kept rotation components or float32 first samples, rotations' dropped components."""
    from codec.codecs.acl_style.constant_tracks import stored_constants

    rng = np.random.default_rng(4)
    for _ in range(50):
        n = int(rng.integers(1, 20))
        kinds = rng.integers(0, 3, (n, 3)).astype(np.uint8)
        rot = rng.normal(size=(n, 3)).astype(F32)
        tr, sc = rng.normal(size=(n, 3)) * 100, rng.normal(size=(n, 3))
        dropped = rng.integers(0, 4, n)
        values, layouts = stored_constants(kinds, rot, tr, sc, dropped)
        pairs = np.argwhere(kinds == 1)
        table = np.stack((rot, tr.astype(F32), sc.astype(F32)), axis=1)  # (J, 3, 3)
        assert values.dtype == F32 and layouts.dtype == np.int64
        np.testing.assert_array_equal(values, table[pairs[:, 0], pairs[:, 1]])
        np.testing.assert_array_equal(layouts, np.where(pairs[:, 1] == 0, dropped[pairs[:, 0]], -1))
