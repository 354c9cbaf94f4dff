"""The optimiser's bundle: `Search` takes the segment's arrays as the encoder hands them and
fresh state, and the kernels write only that state (segments run in threads at once)."""

from __future__ import annotations

import numpy as np
import pytest

from codec.codecs.acl_style import encoder, optimizer
from codec.compression import compress
from codec.formats import load_clip
from codec.settings import CompressionSettings
from tests.codec.helpers import data_clip


@pytest.fixture(scope="module")
def problems() -> list[tuple]:
    """Every (problem, hierarchy, level) the encoder hands the optimiser on a looping clip
    (its first segment compares the wrapped-in row too)."""
    got: list[tuple] = []
    real = encoder.optimize_segment

    def recorder(*args: object) -> object:
        got.append(args)
        return real(*args)

    encoder.optimize_segment = recorder
    try:
        clip = load_clip(data_clip("cmu_81_18_looping.acl.sjson"))
        compress(clip, CompressionSettings(level="highest", codec="acl-style"))
    finally:
        encoder.optimize_segment = real
    assert len(got) >= 2
    return got


def _inputs(p: optimizer.SegmentProblem, h: optimizer.Hierarchy) -> dict[str, np.ndarray]:
    """Every array the optimiser is handed, by name."""
    arrays = {k: v for k, v in vars(p).items() if isinstance(v, np.ndarray)}
    arrays |= {f"tracks.{k}": v for k, v in vars(p.tracks).items()}
    arrays |= {f"h.{k}": v for k, v in vars(h).items() if isinstance(v, np.ndarray)}
    return arrays


def test_the_bundle_copies_no_input_and_shares_no_state(problems: list[tuple]) -> None:
    p, h, _ = problems[0]
    s, again = optimizer.Search.of(p, h), optimizer.Search.of(p, h)
    for name in ("rows", "unit", "raw_values", "lay", "dec", "cost", "dom_dist", "dom_prec"):
        assert getattr(s, name) is getattr(p, name), name
    assert s.raw_qvv is p.raw and s.shell is p.shell and s.parent is h.parents
    assert s.track_joint is p.tracks.joint and s.chain is h.chain
    assert np.shares_memory(s.raw_bits, p.raw_values)
    state = ("rate", "stuck", "bound", "qvv", "raw_local", "raw_obj", "local", "obj")
    for name in state + ("cand", "have"):
        a = getattr(s, name)
        assert a.flags.c_contiguous and a.flags.writeable, name
        assert not any(np.shares_memory(a, b) for b in _inputs(p, h).values()), name
        assert not np.shares_memory(a, getattr(again, name)), name
    for i, x in enumerate(state):
        for y in state[i + 1 :]:
            assert not np.shares_memory(getattr(s, x), getattr(s, y)), (x, y)


def test_the_kernels_write_only_their_own_state(problems: list[tuple]) -> None:
    """Solving every segment twice changes none of its inputs and gives the same answer."""
    for p, h, level in problems:
        before = {k: v.copy() for k, v in _inputs(p, h).items()}
        first = optimizer.optimize_segment(p, h, level)
        second = optimizer.optimize_segment(p, h, level)
        for k, v in _inputs(p, h).items():
            np.testing.assert_array_equal(v, before[k], err_msg=k)
        for a, b in zip(first, second, strict=True):
            np.testing.assert_array_equal(a, b)
        rates, stuck, q = first
        assert rates.shape == (len(p.tracks.joint),) and stuck.shape == (p.raw.shape[1],)
        assert q.shape == p.unit.shape and q.dtype == np.uint32


def test_the_track_table_is_the_stable_sorts_of_the_kinds() -> None:
    """TrackTable.of (one kernel) against numpy's stable sorts on random kinds and a real
    clip's: the optimiser's order (rotations, translations, scales, each by joint), where
    each track is stored (joint-major) and back, and each joint's tracks."""
    from codec.codecs.acl_style.constant_tracks import exact_kinds

    rng = np.random.default_rng(7)
    real = exact_kinds(load_clip(data_clip("cmu_09_02.acl.sjson"))).astype(np.uint8)
    for kinds in [real, np.zeros((3, 3), np.uint8)] + [
        rng.integers(0, 3, (int(rng.integers(1, 30)), 3)).astype(np.uint8) for _ in range(200)
    ]:
        stored = np.argwhere(kinds == 2)  # (T, 2) joint, sub-track in stored order
        order = np.argsort(stored[:, 1], kind="stable")
        joint = stored[order, 0]
        joint_tracks = np.argsort(joint, kind="stable")
        table = optimizer.TrackTable.of(kinds)
        expected = {
            "inv": np.argsort(order),
            "joint": joint,
            "kind": stored[order, 1],
            "joint_tracks": joint_tracks,
            "track_ptr": np.searchsorted(joint[joint_tracks], np.arange(len(kinds) + 1)),
            "counts": np.bincount(stored[:, 1], minlength=3),
        }
        for name, want in expected.items():
            got = getattr(table, name)
            assert got.dtype == np.int64, name
            np.testing.assert_array_equal(got, want, err_msg=name)
