"""What a curve is between two knots: the track modes, the tangent rules animators' tools use,
and the Hermite evaluation of every knot row at once (encoder and decoder share it, so what the
encoder measures is what the bytes decode to).

A track is STEP (each knot's value holds until the next knot), LINEAR (straight between knots:
rotations by nlerp once normalised) or CUBIC (a cubic Hermite segment per knot interval, C1 at
the knots). A cubic track's tangents at its knots come from a rule applied to the knot values
(what a DCC tool does with its tangent types), plus, when the rule alone misses, a stored
quantised correction per knot:
- FLAT: zero (ease in / ease out; Maya's flat tangents);
- CATMULL_ROM: (p[i+1] - p[i-1]) / (t[i+1] - t[i-1]), one-sided at the ends;
- AUTO: the direction halfway between the unit vectors to the two neighbour knots in the
  (sample, value) plane (Blender's automatic handles), flat at the ends;
- CLAMPED: AUTO, flat where the knot is a local extreme and limited to three times the
  smaller neighbouring secant, so no segment overshoots its knots (Blender's auto-clamped,
  Maya's clamped); holds (equal neighbouring values) stay flat.
Tangents are per sample: knots sit on the source sample grid, a knot's time is its sample.

Rows: the knots of many tracks are kept in flat arrays (R rows), each track's rows
consecutive; `first` and `last` (R,) mark each track's first and last knot, so a rule never
reads across two tracks.
"""

from __future__ import annotations

import numpy as np

from codec.jit import kernel

Array = np.ndarray

STEP, LINEAR, CUBIC = 0, 1, 2
MODES = ("step", "linear", "cubic")
FLAT, CATMULL_ROM, AUTO, CLAMPED = 0, 1, 2, 3
RULES = ("flat", "catmull_rom", "auto", "clamped")


def neighbours(v: Array, first: Array, last: Array) -> tuple[Array, Array]:
    """Rows (R, ...) of each row's previous and next knot in its track (itself at the ends)."""
    prev, nxt = _around(first, last)
    return v[prev], v[nxt]


def _around(first: Array, last: Array) -> tuple[Array, Array]:
    """(R,) each row's previous and next row in its track (itself at the ends)."""
    idx = np.arange(len(first))
    return np.where(first, idx, idx - 1), np.where(last, idx, np.minimum(idx + 1, len(first) - 1))


def rule_tangents(rule: int, t: Array, v: Array, first: Array, last: Array) -> Array:
    """Tangents (R, C) per sample of the knot rows: times t (R,) in samples, values v (R, C),
    each track's first and last row marked (R,) bool."""
    return tangents_by_rule(t, v, first, last, (rule,))[rule]


def tangents_by_rule(
    t: Array, v: Array, first: Array, last: Array, rules: tuple[int, ...] = (0, 1, 2, 3)
) -> dict[int, Array]:
    """`rule_tangents` of each of `rules` on the same knots (the fitter tries them all)."""
    c = np.ascontiguousarray  # one compiled layout whatever the caller's strides
    m = _rule_tangents(
        np.asarray(rules, np.int64),
        c(t, np.float64),
        c(v, np.float64),
        c(first, np.bool_),
        c(last, np.bool_),
    )
    return {rule: m[n] for n, rule in enumerate(rules)}


@kernel
def _rule_tangents(rules: Array, t: Array, v: Array, first: Array, last: Array) -> Array:
    """(len(rules), R, C) the tangents of each rule, one knot row at a time (the module
    docstring says what each rule does). A loop, not numpy's arrays: the slack pass asks
    for one track's tangents hundreds of times, and numpy's calls cost more than the sums;
    each value takes numpy's own operations in numpy's order (the same bits)."""
    R, C = v.shape
    out = np.zeros((rules.shape[0], R, C))
    for i in range(R):
        p = i if first[i] else i - 1
        q = i if last[i] else min(i + 1, R - 1)
        da, db = t[i] - t[p], t[q] - t[i]
        span = t[q] - t[p] if t[q] > t[p] else 1.0
        inner = not (first[i] or last[i])
        for c in range(C):
            va, vb = v[i, c] - v[p, c], v[q, c] - v[i, c]
            la, lb = np.hypot(da, va), np.hypot(db, vb)
            ok = inner and la > 0 and lb > 0
            auto = (va / la + vb / lb) / (da / la + db / lb) if ok else 0.0
            for n in range(rules.shape[0]):
                rule = rules[n]
                if rule == CATMULL_ROM:
                    if not (first[i] and last[i]):
                        out[n, i, c] = (v[q, c] - v[p, c]) / span
                elif rule == AUTO:
                    out[n, i, c] = auto
                elif rule == CLAMPED and ok:
                    sa, sb = va / da, vb / db
                    limit = 3.0 * np.minimum(np.abs(sa), np.abs(sb))
                    if not sa * sb <= 0.0:
                        out[n, i, c] = np.minimum(np.maximum(auto, -limit), limit)
    return out


def secants(t: Array, v: Array, last: Array) -> Array:
    """(R, C) slope from each knot to the next one in its track (0 at a track's last knot)."""
    _, tn = neighbours(t, np.zeros(len(t), bool), last)
    _, vn = neighbours(v, np.zeros(len(t), bool), last)
    gap = np.where(tn > t, tn - t, 1.0)[:, None]
    return np.where(last[:, None], 0.0, (vn - v) / gap)


def knot_tangents(
    mode: int, rule: int, t: Array, v: Array, first: Array, last: Array, extra: Array | None
) -> tuple[Array, Array]:
    """Out and in tangents (R, C) of every knot row: LINEAR tracks leave each knot along
    the secant to the next and arrive along the secant from the previous one; CUBIC tracks
    take the rule's tangent plus `extra` (R, C) (None: none) both ways; STEP tracks none."""
    if mode == CUBIC:
        m = rule_tangents(rule, t, v, first, last)
        if extra is not None:
            m = m + extra
        return m, m
    if mode == LINEAR:
        out = secants(t, v, last)
        idx = np.arange(len(t))
        inn = out[np.where(first, idx, idx - 1)]
        return out, inn
    z = np.zeros_like(v)
    return z, z


def hermite_rows(
    keys: Array,
    values: Array,
    out_t: Array,
    in_t: Array,
    left: Array,
    right: Array,
    u: Array,
) -> Array:
    """Values (...,  C) of the Hermite segments from rows `left` to `right` (...) at the
    fraction u (...) of their interval: knot values (R, C), tangents per sample (R, C)."""
    h = (keys[right] - keys[left])[..., None]
    u = u[..., None]
    u2 = u * u
    u3 = u2 * u
    return (
        (2 * u3 - 3 * u2 + 1) * values[left]
        + (u3 - 2 * u2 + u) * h * out_t[left]
        + (-2 * u3 + 3 * u2) * values[right]
        + (u3 - u2) * h * in_t[right]
    )


def locate(keys: Array, pos: Array) -> tuple[Array, Array, Array]:
    """Rows (N,) of one track's knots (K,) around positions (N,) and the fraction between
    them (held before the first knot and after the last)."""
    k = len(keys)
    if k == 1:
        z = np.zeros(len(pos), np.int64)
        return z, z, np.zeros(len(pos))
    left = np.clip(np.searchsorted(keys, pos, side="right") - 1, 0, k - 2)
    right = left + 1
    gap = (keys[right] - keys[left]).astype(np.float64)
    return left, right, np.clip((pos - keys[left]) / gap, 0.0, 1.0)


def knot_search(mode: int, keys: Array, pos: Array) -> tuple[Array, Array, Array, Array]:
    """What `evaluate_track` finds of one track's knots (K,) at positions (N,) before it
    blends values: the knot times as float64 (K,), the rows around each position and the
    fraction between them (N,) (a caller evaluating many value sets on the same knots, the
    slack pass, finds them once)."""
    left, right, u = locate(keys, pos)
    if mode == STEP:
        u = np.floor(u)
    return keys.astype(np.float64), left, right, u


def evaluate_track(
    mode: int,
    keys: Array,
    values: Array,
    out_t: Array,
    in_t: Array,
    pos: Array,
    search: tuple[Array, Array, Array, Array] | None = None,
) -> Array:
    """Values (N, C) of one track at positions (N,) in samples (`search`: its knot_search
    at pos, when the caller has it)."""
    times, left, right, u = knot_search(mode, keys, pos) if search is None else search
    c = np.ascontiguousarray  # one compiled layout whatever the caller's strides
    return _hermite_track(times, c(values, np.float64), c(out_t), c(in_t), left, right, u)


@kernel
def _hermite_track(
    times: Array, values: Array, out_t: Array, in_t: Array, left: Array, right: Array, u: Array
) -> Array:
    """`hermite_rows` of one track's positions (N,): the same operations in the same order
    (the same bits), without numpy's temporaries (the slack pass evaluates a track hundreds
    of times)."""
    C = values.shape[1]
    out = np.empty((left.shape[0], C))
    for n in range(left.shape[0]):
        a, b = left[n], right[n]
        h = times[b] - times[a]
        x = u[n]
        x2 = x * x
        x3 = x2 * x
        h00 = 2.0 * x3 - 3.0 * x2 + 1.0
        h10 = (x3 - 2.0 * x2 + x) * h
        h01 = -2.0 * x3 + 3.0 * x2
        h11 = (x3 - x2) * h
        for c in range(C):
            out[n, c] = (
                h00 * values[a, c] + h10 * out_t[a, c] + h01 * values[b, c] + h11 * in_t[b, c]
            )
    return out
