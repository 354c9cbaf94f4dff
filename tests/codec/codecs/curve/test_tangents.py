"""The tangent rules: the compiled loop gives, bit for bit, the rules as numpy states them."""

from __future__ import annotations

import numpy as np

from codec.codecs.curve.tangents import (
    AUTO,
    CATMULL_ROM,
    CLAMPED,
    FLAT,
    STEP,
    evaluate_track,
    hermite_rows,
    locate,
    rule_tangents,
)


def _numpy_rule(rule: int, t: np.ndarray, v: np.ndarray, first: np.ndarray, last: np.ndarray):
    """The rules over whole arrays (the module docstring's words, as numpy writes them)."""
    idx = np.arange(len(t))
    prev = np.where(first, idx, idx - 1)
    nxt = np.where(last, idx, np.minimum(idx + 1, len(t) - 1))
    tp, tn, vp, vn = t[prev], t[nxt], v[prev], v[nxt]
    if rule == FLAT:
        return np.zeros_like(v)
    with np.errstate(divide="ignore", invalid="ignore"):
        if rule == CATMULL_ROM:
            m = (vn - vp) / np.where(tn > tp, tn - tp, 1.0)[:, None]
            return np.where((first & last)[:, None], 0.0, m)
        da, db = (t - tp)[:, None], (tn - t)[:, None]
        va, vb = v - vp, vn - v
        la, lb = np.hypot(da, va), np.hypot(db, vb)
        ok = ~(first | last)[:, None] & (la > 0) & (lb > 0)
        wa, wb = np.where(ok, la, 1.0), np.where(ok, lb, 1.0)
        m = (va / wa + vb / wb) / np.where(ok, da / wa + db / wb, 1.0)
        if rule == CLAMPED:
            sa, sb = va / np.where(ok, da, 1.0), vb / np.where(ok, db, 1.0)
            limit = 3.0 * np.minimum(np.abs(sa), np.abs(sb))
            m = np.where(sa * sb <= 0.0, 0.0, np.clip(m, -limit, limit))
    return np.where(ok, m, 0.0)


def test_the_compiled_rules_are_numpys_bit_for_bit() -> None:
    rng = np.random.default_rng(33)
    for trial in range(300):
        rows = int(rng.integers(1, 14))
        t = np.sort(rng.choice(100, rows, replace=False)).astype(np.float64)
        v = rng.standard_normal((rows, int(rng.integers(1, 5)))) * 10.0 ** rng.integers(-5, 3)
        v[rng.integers(0, rows)] = v[rng.integers(0, rows)]  # a hold now and then
        first, last = np.zeros(rows, bool), np.zeros(rows, bool)
        cuts = sorted({0, rows, *rng.integers(1, rows + 1, 2).tolist()})  # tracks in the rows
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            first[a], last[b - 1] = True, True
        for rule in (FLAT, CATMULL_ROM, AUTO, CLAMPED):
            want = _numpy_rule(rule, t, v, first, last)
            got = rule_tangents(rule, t, v, first, last)
            assert np.array_equal(got.view(np.int64), want.view(np.int64)), (trial, rule)


def test_the_rules_on_hand_made_knots() -> None:
    t = np.array([0.0, 2.0, 4.0, 10.0])
    v = np.array([[0.0], [2.0], [0.0], [3.0]])
    first, last = np.arange(4) == 0, np.arange(4) == 3
    cr = rule_tangents(CATMULL_ROM, t, v, first, last)[:, 0]
    assert cr.tolist() == [1.0, 0.0, 1.0 / 8.0, 0.5]  # one-sided at the ends
    auto = rule_tangents(AUTO, t, v, first, last)[:, 0]
    assert auto[0] == auto[3] == 0.0 and auto[1] == 0.0  # flat ends; a symmetric peak
    a, b = np.hypot(2.0, 2.0), np.hypot(6.0, 3.0)  # to the unit vectors' halfway direction
    assert np.isclose(auto[2], (-2.0 / a + 3.0 / b) / (2.0 / a + 6.0 / b))
    assert -1.0 < auto[2] < 0.5  # between the secants
    clamped = rule_tangents(CLAMPED, t, v, first, last)[:, 0]
    assert clamped[2] == 0.0  # a local extreme stays flat
    rise = np.array([[0.0], [1.0], [10.0], [10.5]])
    c = rule_tangents(CLAMPED, t, rise, first, last)[:, 0]
    assert 0.0 < c[1] <= 3.0 * 0.5  # within 3x the smaller secant: AUTO's own
    assert c[2] == 3.0 * (0.5 / 6.0) < rule_tangents(AUTO, t, rise, first, last)[2, 0]  # limited


def test_a_track_evaluates_as_the_decoders_rows_bit_for_bit() -> None:
    """The encoder's compiled evaluation of one track is the decoder's numpy blend."""
    rng = np.random.default_rng(34)
    pos = np.arange(90, dtype=np.float64)
    for mode in range(3):
        for knots in (1, 2, 7):
            keys = np.sort(rng.choice(80, knots, replace=False)).astype(np.int64)
            v, out_t, in_t = (rng.standard_normal((knots, 4)) for _ in range(3))
            left, right, u = locate(keys, pos)
            u = np.floor(u) if mode == STEP else u
            want = hermite_rows(keys.astype(np.float64), v, out_t, in_t, left, right, u)
            got = evaluate_track(mode, keys, v, out_t, in_t, pos)
            assert np.array_equal(got.view(np.int64), want.view(np.int64)), (mode, knots)
