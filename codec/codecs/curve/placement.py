"""Where a track's knots go, and the C1 tangents that fit them best (compiled kernels; numba).

Knots, one pass along the track: from knot a, segments to b = a + 1, a + 2, ... are tried
and the longest that holds every sample between within the budget is kept (a longer one can
hold where a shorter failed, so the search goes on past failures until as many lengths have
failed in a row as the longest success is long, or MAX_SPAN); then again from b:
- STEP: knot a's value held; the first sample it misses is the next knot.
- LINEAR: the line between the two knot values.
- CUBIC: the Hermite segment between the two knot values with both tangents fitted to the
  samples between by least squares (a closed form per component). Each segment is judged on
  its own, so one badly determined tangent cannot shorten every segment after it.
Knot values are what the caller passes (the exact samples, or the quantised ones); the error
is `codec.codecs.survey.local_error.track_error`'s on the joint's dominant shell, recomputed here.
On keyed data the longest segments that hold are the key intervals (a longer one would cross
a key's kink), so the knots come out as the keys.

Tangents (`c1_tangents`): one tangent per knot, shared by its two segments (C1), the least
squares fit of every sample (a tridiagonal system per component), pulled slightly towards
finite differences where samples say nothing (knots one sample apart).

Rotations: a rotation's curve is four components normalised after blending, so what must
vanish is the curve's part perpendicular to each sample; that is linear in the tangents too
(all four components together: 4x4 blocks), and a curve a tool blended in components and
normalised is found exactly. The componentwise fit comes first and the perpendicular one is
pulled slightly towards it (ROT_RIDGE): that fixes what perpendicular parts cannot see.

Cost: O(L^2) point evaluations per knot for segments of L samples; the tangents O(S).
"""

from __future__ import annotations

import numpy as np

from codec.jit import helper, inlined, kernel

Array = np.ndarray

STEP, LINEAR, CUBIC = 0, 1, 2
ROT, TR, SC = 0, 1, 2
MAX_SPAN = 1024
WINDOW = 5  # knots on each side of one being judged, whose C1 curve judges it
DP_SPAN = 48  # longest segment fewest_knots tries (a hold longer than that takes knots)
PATIENCE = 4  # failed lengths in a row (at least) before a knot's search gives up
NLERP_PATIENCE = 12  # the same for a linear rotation (keys up to 14 samples apart found)
SNAP_PASSES = 4  # passes of snap_knots over the knots, at most
RIDGE = 1e-9  # pulls an underdetermined segment's tangents towards finite differences
ROT_RIDGE = 1e-10  # a rotation fit's pull towards its componentwise fit


@inlined
def _error(sub: int, raw: Array, fit: Array, s: int, dist: float, smag: Array) -> float:
    """The local error of `fit (C,)` against sample s of `raw (S, C)` (survey.track_error)."""
    if sub == ROT:
        n = np.sqrt(fit[0] * fit[0] + fit[1] * fit[1] + fit[2] * fit[2] + fit[3] * fit[3])
        if not n > 0.0:
            return np.inf
        px, py, pz, pw = fit[0] / n, fit[1] / n, fit[2] / n, fit[3] / n
        ax, ay, az, aw = -raw[s, 0], -raw[s, 1], -raw[s, 2], raw[s, 3]
        vx = aw * px + ax * pw + ay * pz - az * py
        vy = aw * py - ax * pz + ay * pw + az * px
        vz = aw * pz + ax * py - ay * px + az * pw
        v2 = vx * vx + vy * vy + vz * vz
        e = np.sqrt(max(v2 - vx * vx, 0.0)) * smag[s, 0]
        e = max(e, np.sqrt(max(v2 - vy * vy, 0.0)) * smag[s, 1])
        e = max(e, np.sqrt(max(v2 - vz * vz, 0.0)) * smag[s, 2])
        return 2.0 * dist * e
    if sub == TR:
        acc = 0.0
        for c in range(fit.shape[0]):
            d = fit[c] - raw[s, c]
            acc += d * d
        return np.sqrt(acc)
    worst = 0.0
    for c in range(fit.shape[0]):
        worst = max(worst, abs(fit[c] - raw[s, c]))
    return dist * worst


@inlined
def _component_fit(
    raw: Array, vals: Array, a: int, b: int, ma: Array, free: bool, out_ma: Array, out_mb: Array
) -> None:
    """Least-squares tangents of the Hermite segment a -> b, each component on its own."""
    C = raw.shape[1]
    h = float(b - a)
    for c in range(C):
        va, vb = vals[a, c], vals[b, c]
        s11 = s12 = s22 = r1 = r2 = 0.0
        for s in range(a + 1, b):
            u = (s - a) / h
            u2 = u * u
            u3 = u2 * u
            g1 = (u3 - 2.0 * u2 + u) * h
            g2 = (u3 - u2) * h
            r = raw[s, c] - (2.0 * u3 - 3.0 * u2 + 1.0) * va - (-2.0 * u3 + 3.0 * u2) * vb
            if not free:
                r -= g1 * ma[c]
            s11 += g1 * g1
            s12 += g1 * g2
            s22 += g2 * g2
            r1 += g1 * r
            r2 += g2 * r
        if free:
            sec = (vb - va) / h
            eps = RIDGE * (s11 + s22) + 1e-300
            a11, a22 = s11 + eps, s22 + eps
            r1 += eps * sec
            r2 += eps * sec
            det = a11 * a22 - s12 * s12
            out_ma[c] = (r1 * a22 - r2 * s12) / det
            out_mb[c] = (a11 * r2 - s12 * r1) / det
        else:
            out_ma[c] = ma[c]
            out_mb[c] = r2 / s22


@inlined
def _solve(m: Array, rhs: Array, n: int) -> None:
    """rhs[:n] <- the solution of m[:n, :n] x = rhs[:n] (m is overwritten)."""
    _eliminate(m, rhs.reshape((rhs.shape[0], 1)), n, 1)


@inlined
def _eliminate(m: Array, v: Array, w: int, n: int) -> None:
    """v[:w, :n] <- m[:w, :w]^-1 v[:w, :n] (Gaussian elimination, partial pivoting; m is
    overwritten): one elimination for the n right-hand sides, each column taking the very
    operations it would take alone (so the same bits)."""
    for col in range(w):
        piv = col
        for r in range(col + 1, w):
            if abs(m[r, col]) > abs(m[piv, col]):
                piv = r
        if piv != col:
            for k in range(w):
                m[col, k], m[piv, k] = m[piv, k], m[col, k]
            for c in range(n):
                v[col, c], v[piv, c] = v[piv, c], v[col, c]
        d = m[col, col]
        if d == 0.0:
            d = 1e-300
        for r in range(col + 1, w):
            f = m[r, col] / d
            for k in range(col, w):
                m[r, k] -= f * m[col, k]
            for c in range(n):
                v[r, c] -= f * v[col, c]
    for col in range(w - 1, -1, -1):
        d = m[col, col]
        for c in range(n):
            acc = v[col, c]
            for k in range(col + 1, w):
                acc -= m[col, k] * v[k, c]
            v[col, c] = acc / (d if d != 0.0 else 1e-300)


@inlined
def _rotation_fit(
    raw: Array,
    vals: Array,
    a: int,
    b: int,
    ma: Array,
    free: bool,
    normal: Array,
    rhs: Array,
    out_ma: Array,
    out_mb: Array,
) -> None:
    """Tangents (4,) of a rotation's Hermite segment a -> b whose curve points along the
    samples: least squares of the curve's part perpendicular to each sample (linear in the
    tangents), pulled slightly (ROT_RIDGE) towards the componentwise fit already in
    out_ma, out_mb, which fixes what the perpendicular parts cannot see (the tangents' part
    along the curve)."""
    h = float(b - a)
    n = 8 if free else 4
    f = np.empty(4)
    for i in range(n):
        rhs[i] = 0.0
        for k in range(n):
            normal[i, k] = 0.0
    for s in range(a + 1, b):
        u = (s - a) / h
        u2 = u * u
        u3 = u2 * u
        g1 = (u3 - 2.0 * u2 + u) * h
        g2 = (u3 - u2) * h
        for c in range(4):
            f[c] = (2.0 * u3 - 3.0 * u2 + 1.0) * vals[a, c] + (-2.0 * u3 + 3.0 * u2) * vals[b, c]
            if not free:
                f[c] += g1 * ma[c]
        qf = raw[s, 0] * f[0] + raw[s, 1] * f[1] + raw[s, 2] * f[2] + raw[s, 3] * f[3]
        for i in range(4):
            pf = f[i] - raw[s, i] * qf  # P f, P = I - q q^T
            for k in range(4):
                p = (1.0 if i == k else 0.0) - raw[s, i] * raw[s, k]
                if free:
                    normal[i, k] += g1 * g1 * p
                    normal[i, 4 + k] += g1 * g2 * p
                    normal[4 + i, k] += g1 * g2 * p
                    normal[4 + i, 4 + k] += g2 * g2 * p
                else:
                    normal[i, k] += g2 * g2 * p
            if free:
                rhs[i] -= g1 * pf
                rhs[4 + i] -= g2 * pf
            else:
                rhs[i] -= g2 * pf
    trace = 0.0
    for i in range(n):
        trace += normal[i, i]
    eps = ROT_RIDGE * trace / n + 1e-300
    for i in range(n):
        normal[i, i] += eps
        if free:
            rhs[i] += eps * (out_ma[i] if i < 4 else out_mb[i - 4])
        else:
            rhs[i] += eps * out_mb[i]
    _solve(normal, rhs, n)
    for c in range(4):
        if free:
            out_ma[c] = rhs[c]
            out_mb[c] = rhs[4 + c]
        else:
            out_ma[c] = ma[c]
            out_mb[c] = rhs[c]


@inlined
def _holds(
    mode: int,
    sub: int,
    raw: Array,
    vals: Array,
    a: int,
    b: int,
    ma: Array,
    mb: Array,
    budget: float,
    dist: float,
    smag: Array,
    fit: Array,
) -> bool:
    """Whether every sample strictly between knots a and b is within the budget."""
    C = raw.shape[1]
    h = float(b - a)
    for s in range(a + 1, b):
        u = (s - a) / h
        if mode == STEP:
            for c in range(C):
                fit[c] = vals[a, c]
        elif mode == LINEAR:
            for c in range(C):
                fit[c] = vals[a, c] + (vals[b, c] - vals[a, c]) * u
        else:
            u2 = u * u
            u3 = u2 * u
            for c in range(C):
                f = (2.0 * u3 - 3.0 * u2 + 1.0) * vals[a, c] + (u3 - 2.0 * u2 + u) * h * ma[c]
                fit[c] = f + (-2.0 * u3 + 3.0 * u2) * vals[b, c] + (u3 - u2) * h * mb[c]
        if _error(sub, raw, fit, s, dist, smag) > budget:
            return False
    return True


@kernel
def place_knots(
    mode: int, sub: int, raw: Array, vals: Array, budget: float, dist: float, smag: Array
) -> Array:
    """Knots (K,) int64 of a track, the first sample always one (and the last, but for STEP
    when holding reaches it): raw (S, C) the track, vals (S, C) the knot values to place
    through, smag (S, 3) |scale|; the module docstring says how."""
    S, C = raw.shape
    knots = np.zeros(S, np.int64)
    if S == 1:
        return knots[:1]
    fit = np.zeros(C)
    ta = np.zeros(C)
    tb = np.zeros(C)
    zero = np.zeros(C)
    work = np.zeros((8, 8))
    rhs = np.zeros(8)
    rot = sub == ROT
    count = 1
    a = 0
    while a < S - 1:
        best = 1
        length = 2
        while a + length <= S - 1 and length <= MAX_SPAN:
            b = a + length
            if mode == CUBIC:
                _component_fit(raw, vals, a, b, zero, True, ta, tb)
                if rot:
                    _rotation_fit(raw, vals, a, b, zero, True, work, rhs, ta, tb)
            if _holds(mode, sub, raw, vals, a, b, ta, tb, budget, dist, smag, fit):
                best = length
            elif mode == STEP or length - best > max(PATIENCE, best):
                break
            length += 1
        if mode == STEP and a + best == S - 1:
            if _holds(mode, sub, raw, vals, a, S, ta, tb, budget, dist, smag, fit):
                break  # the last sample held too: no knot there
        knots[count] = a + best
        count += 1
        a += best
    return knots[:count]


@inlined
def _solve_with(d: Array, v: Array, w: int, inv: Array, out: Array) -> None:
    """out (w,) <- d (w, w)^-1 v (w,), d left as it was (inv is scratch)."""
    for r in range(w):
        out[r] = v[r]
        for k in range(w):
            inv[r, k] = d[r, k]
    _solve(inv, out, w)


@inlined
def _solve_columns(d: Array, v: Array, w: int, n: int, inv: Array) -> None:
    """v[:w, :n] <- d (w, w)^-1 v[:w, :n], d left as it was (inv is scratch)."""
    for r in range(w):
        for k in range(w):
            inv[r, k] = d[r, k]
    _eliminate(inv, v, w, n)


@inlined
def _block_solve(diag: Array, upper: Array, rhs: Array, n: int, w: int) -> None:
    """rhs (n, w) <- the solution of the symmetric block tridiagonal system whose diagonal
    blocks are diag (n, w, w) and upper blocks upper (n - 1, w, w): block Thomas, forward
    D'[i] = D[i] - U[i-1]^T D'[i-1]^-1 U[i-1], r'[i] = r[i] - U[i-1]^T D'[i-1]^-1 r'[i-1],
    then back substitution (diag and rhs are overwritten)."""
    inv = np.zeros((w, w))
    x = np.zeros((w, w + 1))  # D'[i-1]^-1 [U[i-1] | r'[i-1]], one elimination for all
    col = np.zeros(w)
    y = np.zeros(w)
    for i in range(1, n):
        for r in range(w):
            for c in range(w):
                x[r, c] = upper[i - 1, r, c]
            x[r, w] = rhs[i - 1, r]
        _solve_columns(diag[i - 1], x, w, w + 1, inv)
        for r in range(w):
            for c in range(w):
                acc = 0.0
                for k in range(w):
                    acc += upper[i - 1, k, r] * x[k, c]
                diag[i, r, c] -= acc
            acc = 0.0
            for k in range(w):
                acc += upper[i - 1, k, r] * x[k, w]
            rhs[i, r] -= acc
    for i in range(n - 1, -1, -1):
        for r in range(w):
            acc = rhs[i, r]
            if i < n - 1:
                for k in range(w):
                    acc -= upper[i, r, k] * rhs[i + 1, k]
            col[r] = acc
        _solve_with(diag[i], col, w, inv, y)
        for r in range(w):
            rhs[i, r] = y[r]


@helper
def _c1_fit(sub: int, raw: Array, vals: Array, knots: Array) -> Array:
    """(K, C) tangents per sample at the knots (K,) of a track raw (S, C) whose curve takes
    vals (S, C) at its knots: the C1 Hermite curve's least-squares fit of the samples from
    the first knot to the last."""
    S, C = raw.shape
    K = knots.shape[0]
    m = np.zeros((K, C))
    if K < 2:
        return m
    # finite differences: where the samples say nothing, the tangents lean on these
    ref = np.zeros((K, C))
    for i in range(K):
        lo, hi = knots[max(i - 1, 0)], knots[min(i + 1, K - 1)]
        for c in range(C):
            ref[i, c] = (vals[hi, c] - vals[lo, c]) / (hi - lo)
    diag = np.zeros((K, 1, 1))
    upper = np.zeros((K, 1, 1))
    rhs = np.zeros((K, 1))
    for c in range(C):  # componentwise: one tridiagonal system per component
        diag[:] = 0.0
        upper[:] = 0.0
        rhs[:] = 0.0
        for i in range(K - 1):
            a, b = knots[i], knots[i + 1]
            h = float(b - a)
            for s in range(a + 1, b):
                u = (s - a) / h
                u2 = u * u
                u3 = u2 * u
                g1 = (u3 - 2.0 * u2 + u) * h
                g2 = (u3 - u2) * h
                r = raw[s, c] - (2.0 * u3 - 3.0 * u2 + 1.0) * vals[a, c]
                r -= (-2.0 * u3 + 3.0 * u2) * vals[b, c]
                diag[i, 0, 0] += g1 * g1
                upper[i, 0, 0] += g1 * g2
                diag[i + 1, 0, 0] += g2 * g2
                rhs[i, 0] += g1 * r
                rhs[i + 1, 0] += g2 * r
        scale = 0.0
        for i in range(K):
            scale += diag[i, 0, 0]
        eps = RIDGE * scale / K + 1e-300
        for i in range(K):
            diag[i, 0, 0] += eps
            rhs[i, 0] += eps * ref[i, c]
        _block_solve(diag, upper, rhs, K, 1)
        for i in range(K):
            m[i, c] = rhs[i, 0]
    if sub != ROT:
        return m
    diag4 = np.zeros((K, 4, 4))
    upper4 = np.zeros((K, 4, 4))
    rhs4 = np.zeros((K, 4))
    f = np.zeros(4)
    for i in range(K - 1):
        a, b = knots[i], knots[i + 1]
        h = float(b - a)
        for s in range(a + 1, b):
            u = (s - a) / h
            u2 = u * u
            u3 = u2 * u
            g1 = (u3 - 2.0 * u2 + u) * h
            g2 = (u3 - u2) * h
            qf = 0.0
            for c in range(4):
                f[c] = (2.0 * u3 - 3.0 * u2 + 1.0) * vals[a, c] + (-2.0 * u3 + 3.0 * u2) * vals[
                    b, c
                ]
                qf += raw[s, c] * f[c]
            for r in range(4):
                pf = f[r] - raw[s, r] * qf
                for k in range(4):
                    p = (1.0 if r == k else 0.0) - raw[s, r] * raw[s, k]
                    diag4[i, r, k] += g1 * g1 * p
                    upper4[i, r, k] += g1 * g2 * p
                    diag4[i + 1, r, k] += g2 * g2 * p
                rhs4[i, r] -= g1 * pf
                rhs4[i + 1, r] -= g2 * pf
    scale = 0.0
    for i in range(K):
        for r in range(4):
            scale += diag4[i, r, r]
    eps = ROT_RIDGE * scale / (4 * K) + 1e-300
    for i in range(K):
        for r in range(4):
            diag4[i, r, r] += eps
            rhs4[i, r] += eps * m[i, r]
    _block_solve(diag4, upper4, rhs4, K, 4)
    return rhs4


@kernel
def c1_tangents(sub: int, raw: Array, vals: Array, knots: Array) -> Array:
    """(K, C) tangents per sample at the knots (K,) of a track raw (S, C) whose curve takes
    vals (S, C) at its knots: the C1 Hermite curve's least-squares fit of every sample."""
    return _c1_fit(sub, raw, vals, knots)


@helper
def _window_fit(
    mode: int, sub: int, raw: Array, vals: Array, knots: Array, dist: float, smag: Array
) -> tuple[float, float]:
    """The sum of squared errors of the samples between the first and the last of a few
    knots (n,) on the curve a track in `mode` takes through them (CUBIC: C1 tangents fitted
    to those samples), and the largest error: what a knot's position is judged by, with
    WINDOW knots on each side of it, whose shared tangents pin the curve down (a segment of
    a few samples alone fits anything, a few segments with free ends nearly so)."""
    C = raw.shape[1]
    n = knots.shape[0]
    m = _c1_fit(sub, raw, vals, knots) if mode == CUBIC else np.zeros((n, C))
    fit = np.zeros(C)
    sse = 0.0
    worst = 0.0
    for i in range(n - 1):
        a, b = knots[i], knots[i + 1]
        h = float(b - a)
        for s in range(a + 1, b):
            u = (s - a) / h
            if mode == LINEAR:
                for c in range(C):
                    fit[c] = vals[a, c] + (vals[b, c] - vals[a, c]) * u
            else:
                u2 = u * u
                u3 = u2 * u
                for c in range(C):
                    f = (2.0 * u3 - 3.0 * u2 + 1.0) * vals[a, c] + (u3 - 2.0 * u2 + u) * h * m[i, c]
                    fit[c] = f + (-2.0 * u3 + 3.0 * u2) * vals[b, c] + (u3 - u2) * h * m[i + 1, c]
            e = _error(sub, raw, fit, s, dist, smag)
            sse += e * e
            worst = max(worst, e)
    return sse, worst


@kernel
def snap_knots(
    mode: int,
    sub: int,
    raw: Array,
    vals: Array,
    knots: Array,
    dist: float,
    smag: Array,
    radius: int,
    exact: float,
    todo: Array,
) -> Array:
    """The knots (K,) of `place_knots`, each inner one marked in `todo` (K,) moved by up to
    `radius` samples to where the curve through it and WINDOW neighbours on each side fits
    the samples best
    (least squared error), in passes until none moves (SNAP_PASSES at most); a knot whose
    curve already fits within `exact` stays. A longest segment can end a sample past a key
    of a keyed clip where the curve barely bends there (a flat tangent), and keys a few
    samples apart fit anywhere near; the best fit is the keys themselves."""
    out = knots.copy()
    K = out.shape[0]
    if mode == STEP or K < 3:
        return out
    for _ in range(SNAP_PASSES):
        moved = False
        for i in range(1, K - 1):
            if not todo[i]:
                continue
            lo, hi = max(i - WINDOW, 0), min(i + WINDOW + 1, K)
            local = out[lo:hi].copy()
            best = out[i]
            best_sse, worst = _window_fit(mode, sub, raw, vals, local, dist, smag)
            if worst <= exact:
                continue
            for p in range(
                max(out[i] - radius, out[i - 1] + 1), min(out[i] + radius, out[i + 1] - 1) + 1
            ):
                if p == out[i]:
                    continue
                local[i - lo] = p
                e, _ = _window_fit(mode, sub, raw, vals, local, dist, smag)
                if e < best_sse:
                    best_sse = e
                    best = p
            if best != out[i]:
                out[i] = best
                moved = True
        if not moved:
            break
    return out


@kernel
def best_splits(
    mode: int,
    sub: int,
    raw: Array,
    vals: Array,
    knots: Array,
    spans: Array,
    dist: float,
    smag: Array,
) -> Array:
    """For each knot interval `spans` (N,) (index of its left knot), the sample strictly
    inside it where a new knot makes the curve through it and the knots around fit the
    samples best (least squared error): where a knot is missing (a key the placement passed
    over), the missing key."""
    K = knots.shape[0]
    out = np.empty(spans.shape[0], np.int64)
    for n in range(spans.shape[0]):
        i = spans[n]
        lo, hi = max(i - WINDOW + 1, 0), min(i + WINDOW + 1, K)
        local = np.empty(hi - lo + 1, np.int64)
        local[: i + 1 - lo] = knots[lo : i + 1]
        local[i + 2 - lo :] = knots[i + 1 : hi]
        a, b = knots[i], knots[i + 1]
        best = (a + b) // 2
        best_sse = np.inf
        for p in range(a + 1, b):
            local[i + 1 - lo] = p
            e, _ = _window_fit(mode, sub, raw, vals, local, dist, smag)
            if e < best_sse:
                best_sse = e
                best = p
        out[n] = best
    return out


@kernel
def remove_knots(
    mode: int,
    sub: int,
    raw: Array,
    vals: Array,
    knots: Array,
    budget: float,
    dist: float,
    smag: Array,
) -> Array:
    """The knots (K,) without those the curve does not need: an inner knot goes when the
    curve through WINDOW neighbours on each side still holds every sample between within
    the budget (one pass, left to right, the first and last knot kept)."""
    K = knots.shape[0]
    if mode == STEP or K < 3:
        return knots.copy()
    kept = knots.copy()
    n = K
    i = 1
    while i < n - 1:
        lo, hi = max(i - WINDOW, 0), min(i + WINDOW + 1, n)
        local = np.empty(hi - lo - 1, np.int64)
        local[: i - lo] = kept[lo:i]
        local[i - lo :] = kept[i + 1 : hi]
        _, worst = _window_fit(mode, sub, raw, vals, local, dist, smag)
        if worst <= budget:
            kept[i : n - 1] = kept[i + 1 : n]
            n -= 1
        else:
            i += 1
    return kept[:n].copy()


@kernel
def curve_errors(
    mode: int,
    sub: int,
    raw: Array,
    keys: Array,
    values: Array,
    out_t: Array,
    in_t: Array,
    dist: float,
    smag: Array,
) -> Array:
    """(S,) the local error at every sample of a track raw (S, C) of the curve through knots
    keys (K,) with values (K, C) and out / in tangents (K, C) per sample (the arithmetic of
    codec.codecs.curve.tangents.evaluate_track; held before the first knot and after the
    last)."""
    S, C = raw.shape
    K = keys.shape[0]
    err = np.zeros(S)
    fit = np.zeros(C)
    i = 0
    for s in range(S):
        if K == 1:
            for c in range(C):
                fit[c] = values[0, c]
        else:
            while i < K - 2 and keys[i + 1] <= s:
                i += 1
            a, b = keys[i], keys[i + 1]
            h = float(b - a)
            u = min(max((s - a) / h, 0.0), 1.0)
            if mode == STEP:
                u = np.floor(u)
            u2 = u * u
            u3 = u2 * u
            for c in range(C):
                f = (2.0 * u3 - 3.0 * u2 + 1.0) * values[i, c] + (u3 - 2.0 * u2 + u) * h * out_t[
                    i, c
                ]
                fit[c] = (
                    f + (-2.0 * u3 + 3.0 * u2) * values[i + 1, c] + (u3 - u2) * h * in_t[i + 1, c]
                )
        err[s] = _error(sub, raw, fit, s, dist, smag)
    return err


@kernel
def sample_errors(sub: int, raw: Array, approx: Array, dist: float, smag: Array) -> Array:
    """(S,) the local error of approx (S, C) against raw (S, C) at every sample."""
    err = np.zeros(raw.shape[0])
    for s in range(raw.shape[0]):
        err[s] = _error(sub, raw, approx[s], s, dist, smag)
    return err


@helper
def _free_segment(
    mode: int,
    sub: int,
    raw: Array,
    vals: Array,
    a: int,
    b: int,
    dist: float,
    smag: Array,
    scratch: Array,
    work: Array,
    rhs: Array,
) -> tuple[float, float]:
    """The sum of squared errors and the largest error of the samples strictly between
    knots a and b on the segment `place_knots` fits there (scratch (4, C): its buffers)."""
    C = raw.shape[1]
    fit, ta, tb, zero = scratch[0], scratch[1], scratch[2], scratch[3]
    h = float(b - a)
    if mode == CUBIC and b - a >= 2:
        _component_fit(raw, vals, a, b, zero, True, ta, tb)
        if sub == ROT:
            _rotation_fit(raw, vals, a, b, zero, True, work, rhs, ta, tb)
    sse = 0.0
    worst = 0.0
    for s in range(a + 1, b):
        u = (s - a) / h
        if mode == STEP:
            for c in range(C):
                fit[c] = vals[a, c]
        elif mode == LINEAR:
            for c in range(C):
                fit[c] = vals[a, c] + (vals[b, c] - vals[a, c]) * u
        else:
            u2 = u * u
            u3 = u2 * u
            for c in range(C):
                f = (2.0 * u3 - 3.0 * u2 + 1.0) * vals[a, c] + (u3 - 2.0 * u2 + u) * h * ta[c]
                fit[c] = f + (-2.0 * u3 + 3.0 * u2) * vals[b, c] + (u3 - u2) * h * tb[c]
        e = _error(sub, raw, fit, s, dist, smag)
        sse += e * e
        worst = max(worst, e)
    return sse, worst


@kernel
def fewest_knots(
    mode: int,
    sub: int,
    raw: Array,
    vals: Array,
    budget: float,
    dist: float,
    smag: Array,
    allowed: Array,
) -> Array:
    """Knots (K,) int64 of a track among the samples `allowed` (S,) bool: the fewest from
    the first sample to the last whose segments (as `place_knots` fits them) each hold
    within the budget, and of those the set with the least squared error (a shortest path
    over the samples); empty when there is none. On a keyed clip fit tightly that is the
    keys: segments of a few samples fit anything, so a greedy pass may end one anywhere near
    a key, while the keys' segments alone fit exactly. Segments from each sample are tried
    as in `place_knots` (until as many lengths have failed in a row as the longest success
    is long, at least PATIENCE, NLERP_PATIENCE on a LINEAR rotation; lengths ending where no
    knot is allowed not counting), up to DP_SPAN samples:
    O(S DP_SPAN^2) point evaluations at most."""
    S, C = raw.shape
    if S == 1:
        return np.zeros(1, np.int64)
    count = np.full(S, S + 1, np.int64)
    sse = np.full(S, np.inf)
    prev = np.zeros(S, np.int64)
    count[0] = 0
    sse[0] = 0.0
    # a part of a nlerp arc is not the nlerp of its ends (normalising bends the timing), so
    # on a rotation keyed linearly every segment shorter than a key interval may miss: the
    # next key is looked for NLERP_PATIENCE further
    patience = NLERP_PATIENCE if mode == LINEAR and sub == ROT else PATIENCE
    scratch = np.zeros((4, C))
    work = np.zeros((8, 8))
    rhs = np.zeros(8)
    for a in range(S - 1):
        if count[a] > S:
            continue  # no knot here
        best = 0
        tried = 0
        length = 1
        while a + length <= S - 1 and length <= DP_SPAN:
            b = a + length
            if not allowed[b] and b != S - 1:
                length += 1
                continue
            e, worst = _free_segment(mode, sub, raw, vals, a, b, dist, smag, scratch, work, rhs)
            tried = length
            if worst <= budget:
                best = length
                n, t = count[a] + 1, sse[a] + e
                if n < count[b] or (n == count[b] and t < sse[b]):
                    count[b] = n
                    sse[b] = t
                    prev[b] = a
            elif mode == STEP or tried - best > max(patience, best):
                break
            length += 1
    if count[S - 1] > S:
        return np.zeros(0, np.int64)
    knots = np.zeros(count[S - 1] + 1, np.int64)
    b = S - 1
    for i in range(count[S - 1], -1, -1):
        knots[i] = b
        b = prev[b]
    return knots
