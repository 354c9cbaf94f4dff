"""Keyframe stripping (ACL 2.1): whole keyframes that interpolation rebuilds well enough.

A keyframe is every stored sub-track at one sample. After the bit rates are chosen, each
segment removes its keyframes one at a time, always the one whose removal contributes the
least error: the error, on every joint's own shell in object space, of the samples between
the two stored keyframes around it (itself and those removed before) when they are rebuilt
by interpolating those two decoded keyframes against the raw clip. A removal is *trivial*
when every joint stays within its precision. The first and last keyframe of a segment are
never removed, so a stripped keyframe always has two stored neighbours in its segment.

What is stripped (`CompressionSettings`):
- `strip_trivial` (default on): each segment's removals up to its first non-trivial one.
  ACL merges the segments' orders into one by error and stops at the first non-trivial
  removal of the clip; per segment strips every removal that is trivial in its own order,
  which is never fewer and still within every precision.
- `strip_threshold` (cm, destructive): also removals whose error is at most the threshold.
- `strip_proportion` (destructive): at least this share of the stored keyframes, taken in
  the merged order (the segments' next removals, lowest error first), as ACL does.
Stripping is kept only when the bytes it saves exceed the keyframe masks it adds.

Beyond ACL (`widen`, trivial stripping only): ACL's order removes one keyframe at a time
between neighbours that are often stored in-betweens themselves. Where the in-betweens were
made by nlerp (or a curve), the midpoint of two in-betweens is not the in-between midway, so
the order can stop early although the keys alone rebuild every in-between within precision
(a hand-made 31-sample chain keyed every 5 samples: 2 keyframes stripped instead of 24). So
in every segment where ACL's order strips something, the fewest stored keyframes are also
sought: every span between two samples that rebuilds every sample between them within
every joint's precision (grown from each sample until one is far off), and the shortest path
of such spans through the segment; whichever stores fewer keyframes is kept. Both are
checked the same way, so the result is as strict; mocap, where ACL's order strips nothing,
pays nothing for it.

Measuring every removal is most of stripping's cost on motion capture, where nothing strips:
with the default (trivial) stripping a compiled screen (`surely_over`) first measures each
segment's first removals in its own arithmetic, and a segment where every one is over some
joint's precision by far more than rounding can move an error stops at once, as ACL's order
would have stopped it; the others are measured exactly as above. `spans` likewise takes
compiled bounds of every span's worst error (`span_bounds`) and measures exactly only the
spans whose bounds straddle a limit: on keyed clips, measuring every span length in numpy
cost more than the rest of an encode.

Decoding (decoder.py) works on the source sample grid: rounding picks samples there as
always, and a stripped sample is `rebuild` of its stored neighbours first, so floor, ceil
and nearest still step through every source frame and land on the rebuilt keyframes.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from codec.jit import inlined, kernel
from codec.measure.error_metric import rounding_margin
from codec.model import affine

Array = np.ndarray
Rows = tuple[Array, Array, Array]  # decoded rotations (N, J, 4), translations, scales (N, J, 3)
# errors of rebuilt samples: (first, second, sample, alpha) each (P,) -> (P, J)
ErrorsOf = Callable[[Array, Array, Array, Array], Array]
# bounds of spans' worst error / precision: (starts, ends) each (A,) -> lo, hi (A, K)
SpanBounds = Callable[[Array, Array], tuple[Array, Array]]
PAIR_CHUNK = 4096  # rebuilt samples measured at once
SPAN_GIVE_UP = 16.0  # a span this many times over a precision grows no further (`spans`)


def neighbours(retained: Array, rows: Array) -> tuple[Array, Array, Array]:
    """For stored sample indices `rows (N,)`: the stored keyframe at or before each, the one
    at or after it, and the alpha between them (0 for a stored keyframe). `retained (S,)`
    must store the first and the last sample of every segment."""
    rows = np.asarray(rows, dtype=np.int64)
    kept = np.flatnonzero(retained)
    pos = np.searchsorted(kept, rows, side="right") - 1
    first = kept[pos]
    second = kept[np.minimum(pos + (first != rows), len(kept) - 1)]
    span = second - first
    alpha = np.where(span > 0, (rows - first) / np.maximum(span, 1), 0.0)
    return first, second, alpha


def rebuild(a: Rows, b: Rows, alpha: Array) -> Rows:
    """Samples rebuilt between decoded keyframes a and b (N, J, ...) at alpha (N,) the way
    sampling blends (rotations: component lerp on the shorter arc, normalised; the rest
    lerp). Where alpha is 0 the keyframe a is returned as decoded, bit for bit."""
    alpha = np.asarray(alpha, dtype=np.float64)
    al = alpha[:, None, None]
    # nlerp: the keyframes are unit quaternions and the shorter arc is taken, so the
    # blend is at least 1/sqrt(2) long and needs no guard against zero
    flip = np.einsum("...i,...i->...", a[0], b[0]) < 0.0
    far = np.where(flip[..., None], -b[0], b[0])
    rot = a[0] + (far - a[0]) * al
    rot /= np.sqrt(np.einsum("...i,...i->...", rot, rot))[..., None]
    tr = a[1] + (b[1] - a[1]) * al
    sc = a[2] + (b[2] - a[2]) * al
    keep = alpha == 0.0
    if np.any(keep):
        rot[keep], tr[keep], sc[keep] = a[0][keep], a[1][keep], a[2][keep]
    return rot, tr, sc


def assemble(retained: Array, rows: Array, decode_kept: Callable[[Array], Rows]) -> Rows:
    """Samples `rows (N,)` from stored keyframes: `decode_kept(kept (K,))` decodes stored
    ones, a stripped one is `rebuild` of its neighbours (the decoder's path, and the
    compressor's when it has the stored keyframes decoded already)."""
    rows = np.asarray(rows, dtype=np.int64)
    if np.all(retained[rows]):
        return decode_kept(rows)
    first, second, alpha = neighbours(retained, rows)
    need, at = np.unique(np.concatenate((first, second)), return_inverse=True)
    kept = decode_kept(need)
    a = (kept[0][at[: len(rows)]], kept[1][at[: len(rows)]], kept[2][at[: len(rows)]])
    b = (kept[0][at[len(rows) :]], kept[1][at[len(rows) :]], kept[2][at[len(rows) :]])
    return rebuild(a, b, alpha)


@dataclass(frozen=True)
class StripSettings:
    """ACL's `keyframe_stripping` settings; threshold in clip units (cm)."""

    trivial: bool = True
    proportion: float = 0.0
    threshold: float = 0.0

    @property
    def enabled(self) -> bool:
        return self.trivial or self.proportion > 0.0 or self.threshold > 0.0

    @property
    def destructive(self) -> bool:
        """Whether stripping may take a joint past its precision (ACL warns of lost
        momentum, missed contacts and apexes)."""
        return self.proportion > 0.0 or self.threshold > 0.0


@dataclass(frozen=True, eq=False)
class Stripping:
    """What stripping chose: retained (S,) bool over the stored samples, and per segment
    (G,) how many keyframes it stripped and how many of the removals it measured were
    trivial (ACL's `num_stripped_keyframes`, `num_trivial_keyframes`)."""

    retained: Array
    stripped: Array
    trivial: Array

    @cached_property  # asked several times per encode; the arrays are not changed after
    def num_stripped(self) -> int:
        return int(self.stripped.sum())

    @cached_property
    def num_trivial(self) -> int:
        return int(self.trivial.sum())


@dataclass(frozen=True, eq=False)
class _Removals:
    """Each segment's removals in the order found: segment, sample, error, trivial (R,)."""

    segment: Array
    sample: Array
    error: Array
    trivial: Array


def removal_order(
    table: Array,
    precision: Array,
    errors_of: ErrorsOf,
    settings: StripSettings,
    screen: ErrorsOf | None = None,
) -> _Removals:
    """Each segment's removals, least contributed error first (ACL's order).

    table (G, 2) first stored sample and count of each segment; precision (J,). All the
    segments advance together, one removal each per round. A segment stops at its first
    removal that settings would not strip, unless `proportion` needs every segment's
    whole order. A removal changes only its two neighbours' contributed errors, so only
    those are measured again. `screen` (same arguments as errors_of, (P,) bool: surely
    over some joint's precision), with trivial stripping alone: a segment whose first
    removals are all surely over stops before they are measured (the first of them by
    error would not be trivial, so it stops there anyway, having stripped nothing).
    """
    starts = table[:, 0].astype(np.int64)
    counts = table[:, 1].astype(np.int64)
    total = int(counts.sum())
    seg_of = np.repeat(np.arange(len(table)), counts)
    interior = np.ones(total, dtype=bool)
    interior[starts] = False
    interior[starts + counts - 1] = False
    retained = np.ones(total, dtype=bool)
    error = np.full(total, np.inf)
    trivial = np.zeros(total, dtype=bool)
    stale = interior.copy()
    active = counts > 2
    full = settings.proportion > 0.0
    if screen is not None and not settings.destructive:
        frames = np.flatnonzero(interior & active[seg_of])
        over = _screened(frames, screen)
        possible = np.zeros(len(table), dtype=bool)
        possible[seg_of[frames[~over]]] = True
        active &= possible
    found: list[tuple[Array, Array, Array, Array]] = []
    while np.any(active):
        cand = retained & interior & active[seg_of]
        need = np.flatnonzero(cand & stale)
        if len(need):
            error[need], trivial[need] = _contributed(retained, need, precision, errors_of)
            stale[need] = False
        e = np.where(cand, error, np.inf)
        best = np.minimum.reduceat(e, starts)
        picks = np.flatnonzero(cand & (e == best[seg_of]))
        segs, first = np.unique(seg_of[picks], return_index=True)
        chosen = picks[first]
        ok = _strips(error[chosen], trivial[chosen], settings)
        take = chosen if full else chosen[ok]
        still = np.zeros_like(active)
        still[segs if full else segs[ok]] = True
        active &= still
        if len(take) == 0:
            break
        found.append((seg_of[take], take, error[take], trivial[take]))
        retained[take] = False
        kept = np.flatnonzero(retained)
        pos = np.searchsorted(kept, take)
        stale[kept[pos - 1]] = True  # the neighbours now span a longer interval
        stale[kept[pos]] = True
    if not found:
        empty = np.zeros(0, dtype=np.int64)
        return _Removals(empty, empty, np.zeros(0), np.zeros(0, dtype=bool))
    seg, smp, err, triv = (np.concatenate(parts) for parts in zip(*found, strict=True))
    return _Removals(seg, smp, err, triv)


def _screened(frames: Array, screen: ErrorsOf) -> Array:
    """`screen` of removing each of `frames (F,)` while every keyframe is stored: every
    sample's own rebuild from its two neighbours (F,) bool."""
    over = np.empty(len(frames), dtype=bool)
    for lo in range(0, len(frames), PAIR_CHUNK):
        f = frames[lo : lo + PAIR_CHUNK]
        over[lo : lo + PAIR_CHUNK] = screen(f - 1, f + 1, f, np.full(len(f), 0.5))
    return over


_qvv_matrix = inlined(affine.qvv_matrix)
_compose = inlined(affine.compose)
_shell_error = inlined(affine.shell_error)
_rounding_margin = inlined(rounding_margin)


@inlined
def _posed(d_rot, d_tr, d_sc, r_rot, r_tr, r_sc, a, b, s, t, parents, lossy, raw, v, w):
    """Object-space matrices (J, 12) of sample s rebuilt from the decoded keyframes a and b
    at alpha t as `rebuild` does (into lossy; alpha 0 is keyframe a itself) and of the raw
    sample s (into raw); v, w (10,) scratch. Returns the largest raw coordinate (the size
    error_metric.rounding_margin scales with)."""
    size = 0.0
    for j in range(parents.shape[0]):
        if t == 0.0:
            for c in range(4):
                v[c] = d_rot[a, j, c]
        else:
            d = 0.0
            for c in range(4):
                d += d_rot[a, j, c] * d_rot[b, j, c]
            sign = -1.0 if d < 0.0 else 1.0
            n2 = 0.0
            for c in range(4):
                q = d_rot[a, j, c] + (d_rot[b, j, c] * sign - d_rot[a, j, c]) * t
                v[c] = q
                n2 += q * q
            n = np.sqrt(n2)
            for c in range(4):
                v[c] = v[c] / n
        for c in range(3):
            v[4 + c] = d_tr[a, j, c] + (d_tr[b, j, c] - d_tr[a, j, c]) * t
            v[7 + c] = d_sc[a, j, c] + (d_sc[b, j, c] - d_sc[a, j, c]) * t
        for c in range(4):
            w[c] = r_rot[s, j, c]
        for c in range(3):
            w[4 + c] = r_tr[s, j, c]
            w[7 + c] = r_sc[s, j, c]
        _qvv_matrix(v, lossy[j])
        _qvv_matrix(w, raw[j])
        up = parents[j]
        if up >= 0:
            _compose(lossy[up], lossy[j], lossy[j])
            _compose(raw[up], raw[j], raw[j])
        for x in range(12):
            size = max(size, abs(raw[j, x]))
    return size


@kernel
def _over(
    d_rot, d_tr, d_sc, r_rot, r_tr, r_sc, first, second, rows, alpha, parents, shell, precision, out
):
    """out (P,): whether sample rows[p] rebuilt from the decoded keyframes first[p] and
    second[p] (d_*: (N, J, 4|3)) at alpha[p] as `rebuild` does is over some joint's
    precision against the raw sample (r_*) by more than error_metric.rounding_margin: its
    error here is summed in another order than numpy's, but only rounding tells the two
    apart."""
    nj = parents.shape[0]
    lossy = np.empty((nj, 12))
    raw = np.empty((nj, 12))
    v = np.empty(10)
    w = np.empty(10)
    for p in range(rows.shape[0]):
        a, b, s, t = first[p], second[p], rows[p], alpha[p]
        size = _posed(d_rot, d_tr, d_sc, r_rot, r_tr, r_sc, a, b, s, t, parents, lossy, raw, v, w)
        over = False
        for j in range(nj):
            margin = _rounding_margin(precision[j], shell[j], size)
            if _shell_error(raw[j], lossy[j], shell[j]) > precision[j] + margin:
                over = True
                break
        out[p] = over


def surely_over(
    decoded: Rows,
    raw: Rows,
    parents: Array,
    shell: Array,
    precision: Array,
    first: Array,
    second: Array,
    rows: Array,
    alpha: Array,
) -> Array:
    """(P,) bool: whether the stored sample rows[p] (raw: the raw clip's rows, decoded: the
    decoded keyframes) rebuilt from keyframes first[p] and second[p] at alpha[p] is surely
    over some joint's precision (`_over`); a removal it names is never trivial."""
    c = np.ascontiguousarray
    out = np.empty(len(rows), dtype=np.bool_)
    i64 = np.int64
    poses, skeleton = _kernel_args(decoded, raw, parents, shell, precision)
    _over(
        *poses,
        c(first, dtype=i64),
        c(second, dtype=i64),
        c(rows, dtype=i64),
        c(alpha, dtype=np.float64),
        *skeleton,
        out,
    )
    return out


def _kernel_args(
    decoded: Rows, raw: Rows, parents: Array, shell: Array, precision: Array
) -> tuple[list[Array], list[Array]]:
    """The screening kernels' arrays as numba compiled them (C-contiguous float64 poses and
    shell data, int64 parents): the six pose arrays, then parents, shell and precision."""
    c = np.ascontiguousarray
    poses = [c(a, dtype=np.float64) for a in (*decoded, *raw)]
    return poses, [
        c(parents, dtype=np.int64),
        c(shell, dtype=np.float64),
        c(precision, dtype=np.float64),
    ]


@kernel
def _span_bounds(
    d_rot, d_tr, d_sc, r_rot, r_tr, r_sc, starts, ends, parents, shell, precision, give_up, lo, hi
):
    """lo, hi (A, K): for the span from starts[i] to starts[i] + k (k >= 2, up to ends[i]),
    bounds of the worst ratio error / precision over its in-between samples rebuilt from
    the decoded ends as `rebuild` does (d_*: (N, J, 4|3); r_*: the raw rows): the error here
    is summed in another order than numpy's, so each side moves it by the rounding margin
    (error_metric.rounding_margin). A span whose lower bound is over `give_up` grows no
    further; entries not reached stay as they were."""
    nj = parents.shape[0]
    lossy = np.empty((nj, 12))
    raw = np.empty((nj, 12))
    v = np.empty(10)
    w = np.empty(10)
    for i in range(starts.shape[0]):
        a = starts[i]
        for k in range(2, ends[i] - a + 1):
            b = a + k
            low = -np.inf
            high = -np.inf
            for s in range(a + 1, b):
                t = (s - a) / k
                size = _posed(
                    d_rot, d_tr, d_sc, r_rot, r_tr, r_sc, a, b, s, t, parents, lossy, raw, v, w
                )
                for j in range(nj):
                    margin = _rounding_margin(precision[j], shell[j], size)
                    e = _shell_error(raw[j], lossy[j], shell[j])
                    low = max(low, (e - margin) / precision[j])
                    high = max(high, (e + margin) / precision[j])
            lo[i, k] = low
            hi[i, k] = high
            if low > give_up:
                break


def span_bounds(
    decoded: Rows,
    raw: Rows,
    parents: Array,
    shell: Array,
    precision: Array,
    starts: Array,
    ends: Array,
) -> tuple[Array, Array]:
    """(A, K) bounds of the worst error / precision of every span from starts (A,) to
    start + k (k >= 2) up to ends (A,), a span past SPAN_GIVE_UP for sure not grown
    further (`_span_bounds`; nan where not reached): what `spans` decides with, measuring
    exactly only the spans whose bounds straddle 1 or SPAN_GIVE_UP."""
    c = np.ascontiguousarray
    width = int(np.max(ends - starts)) + 1 if len(starts) else 1
    lo = np.full((len(starts), width), np.nan)
    hi = np.full((len(starts), width), np.nan)
    poses, skeleton = _kernel_args(decoded, raw, parents, shell, precision)
    _span_bounds(
        *poses,
        c(starts, dtype=np.int64),
        c(ends, dtype=np.int64),
        *skeleton,
        SPAN_GIVE_UP,
        lo,
        hi,
    )
    return lo, hi


def _strips(error: Array, trivial: Array, settings: StripSettings) -> Array:
    """Which removals the trivial and threshold rules strip."""
    ok = trivial & settings.trivial
    if settings.threshold > 0.0:
        ok |= error <= settings.threshold
    return ok


def _contributed(
    retained: Array, frames: Array, precision: Array, errors_of: ErrorsOf
) -> tuple[Array, Array]:
    """The error removing each of `frames (F,)` (retained, interior) contributes: the worst
    error over every joint and every sample between its stored neighbours when those are
    interpolated, and whether every joint stays within its precision there."""
    kept = np.flatnonzero(retained)
    pos = np.searchsorted(kept, frames)
    a, b = kept[pos - 1], kept[pos + 1]
    width = b - a - 1
    owner = np.repeat(np.arange(len(frames)), width)
    offsets = np.cumsum(width) - width
    sample = a[owner] + 1 + np.arange(int(width.sum())) - offsets[owner]
    alpha = (sample - a[owner]) / (b - a)[owner]
    worst = np.empty(len(sample))
    within = np.empty(len(sample), dtype=bool)
    for lo in range(0, len(sample), PAIR_CHUNK):
        hi = lo + PAIR_CHUNK
        err = errors_of(a[owner[lo:hi]], b[owner[lo:hi]], sample[lo:hi], alpha[lo:hi])
        worst[lo:hi] = err.max(axis=1)
        within[lo:hi] = np.all(err <= precision, axis=1)
    return np.maximum.reduceat(worst, offsets), np.logical_and.reduceat(within, offsets)


def choose(
    table: Array, removals: _Removals, settings: StripSettings, num_stored: int
) -> Stripping:
    """The keyframes to strip from each segment's removal order (see the module docstring):
    each segment's prefix that the trivial and threshold rules strip, then, for
    `proportion`, the merged order's next removals until that share is stripped."""
    g = len(table)
    retained = np.ones(num_stored, dtype=bool)
    ok = _strips(removals.error, removals.trivial, settings)
    # each segment's removals were found in order: its prefix is what precedes its first
    # removal the rules do not strip
    order = np.argsort(removals.segment, kind="stable")
    seg = removals.segment[order]
    refused = ~ok[order]
    before = np.cumsum(refused)
    first = np.searchsorted(seg, seg, side="left")
    prefix = np.zeros(len(ok), dtype=bool)
    prefix[order] = before - before[first] + refused[first] == 0
    strip = prefix.copy()
    movable = max(num_stored - 2 * g, 0) if num_stored >= 2 else 0
    want = min(movable, int(settings.proportion * num_stored))
    if int(strip.sum()) < want:
        strip |= _merged(removals, order, prefix, want - int(strip.sum()))
    retained[removals.sample[strip]] = False
    stripped = np.bincount(removals.segment[strip], minlength=g)
    trivial = np.bincount(removals.segment[removals.trivial], minlength=g)
    return Stripping(retained, stripped, trivial)


def _merged(removals: _Removals, order: Array, taken: Array, more: int) -> Array:
    """`more` further removals from the segments' orders merged by error: each step takes
    the segment whose next removal contributes the least (ACL's sort across segments)."""
    out = np.zeros(len(taken), dtype=bool)
    queues: dict[int, list[int]] = {}
    for i in order:  # per segment, in order found
        if not taken[i]:
            queues.setdefault(int(removals.segment[i]), []).append(int(i))
    heads = [(float(removals.error[q[0]]), s, 0) for s, q in queues.items()]
    heapq.heapify(heads)
    while more > 0 and heads:
        _, s, k = heapq.heappop(heads)
        out[queues[s][k]] = True
        more -= 1
        if k + 1 < len(queues[s]):
            heapq.heappush(heads, (float(removals.error[queues[s][k + 1]]), s, k + 1))
    return out


def widen(
    table: Array,
    precision: Array,
    errors_of: ErrorsOf,
    chosen: Stripping,
    bounds: SpanBounds | None = None,
) -> Stripping:
    """`chosen` (trivial stripping in ACL's order) with each segment where it strips
    something replaced by the fewest stored keyframes whose spans rebuild every sample
    within every joint's precision, where that stores fewer (see the module docstring).
    `bounds`: as `spans` takes it."""
    segs = np.flatnonzero(chosen.stripped > 0)
    if len(segs) == 0:
        return chosen
    starts, ends = spans(table, precision, errors_of, segs, bounds)
    retained = chosen.retained.copy()
    stripped, trivial = chosen.stripped.copy(), chosen.trivial.copy()
    for g in segs:  # segments of at most 31 samples
        first, n = (int(v) for v in table[g])
        inside = (starts >= first) & (starts < first + n)
        kept = _fewest(n, starts[inside] - first, ends[inside] - first)
        if len(kept) < n - int(chosen.stripped[g]):
            retained[first : first + n] = False
            retained[first + kept] = True
            stripped[g] = n - len(kept)
            trivial[g] = max(int(trivial[g]), int(stripped[g]))
    return Stripping(retained, stripped, trivial)


def spans(
    table: Array,
    precision: Array,
    errors_of: ErrorsOf,
    segments: Array,
    bounds: SpanBounds | None = None,
) -> tuple[Array, Array]:
    """Every span (a, b), a + 1 < b, within one of the given segments whose samples between
    a and b, rebuilt from those two, keep every joint within its precision: starts and ends
    (P,). Spans from each sample grow one sample at a time, all at once, until one is over
    SPAN_GIVE_UP times a precision: a longer span ending on a key can succeed where a
    shorter one ending on an in-between fails, but not one already far off.

    `bounds(starts, ends)` (`span_bounds` of the caller's keyframes): the compiled bounds
    of every span's worst ratio, so that only spans whose bounds straddle 1 or SPAN_GIVE_UP
    are measured with `errors_of` (one numpy measure per span length cost more than the
    rest of an encode of a keyed clip); the spans found are the same."""
    starts = table[:, 0].astype(np.int64)
    counts = table[:, 1].astype(np.int64)
    total = int(counts.sum())
    seg_of = np.repeat(np.arange(len(table)), counts)
    end = (starts + counts - 1)[seg_of]
    samples = np.arange(total)
    picked = np.zeros(len(table), dtype=bool)
    picked[segments] = True
    alive = picked[seg_of] & (samples + 2 <= end)
    row_of = np.cumsum(alive) - 1  # a sample's row in the bounds
    low = high = np.zeros((0, 0))
    if bounds is not None:
        low, high = bounds(np.flatnonzero(alive), end[alive])
    found_a, found_b = [], []
    k = 2
    while np.any(alive):
        a = np.flatnonzero(alive)
        if bounds is None:
            worst = _worst_ratio(a, k, precision, errors_of)
            good, grows = worst <= 1.0, worst <= SPAN_GIVE_UP
        else:
            lo, hi = low[row_of[a], k], high[row_of[a], k]
            good, grows = hi < 1.0, hi < SPAN_GIVE_UP
            # unsure: the bounds straddle a limit (or were not reached: nan)
            unsure = ~(good | (lo > 1.0)) | ~(grows | (lo > SPAN_GIVE_UP))
            if np.any(unsure):
                worst = _worst_ratio(a[unsure], k, precision, errors_of)
                good[unsure], grows[unsure] = worst <= 1.0, worst <= SPAN_GIVE_UP
        found_a.append(a[good])
        found_b.append(a[good] + k)
        alive[a] = grows & (a + k + 1 <= end[a])
        k += 1
    if not found_a:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(found_a), np.concatenate(found_b)


def _worst_ratio(a: Array, k: int, precision: Array, errors_of: ErrorsOf) -> Array:
    """(A,) the worst error / precision of the samples between a and a + k rebuilt from
    those two, measured exactly (`errors_of`)."""
    first = np.repeat(a, k - 1)
    rows = first + np.tile(np.arange(1, k), len(a))
    ratio = np.empty(len(rows))
    for lo in range(0, len(rows), PAIR_CHUNK):
        hi = lo + PAIR_CHUNK
        f, r = first[lo:hi], rows[lo:hi]
        err = errors_of(f, f + k, r, (r - f) / k)
        ratio[lo:hi] = np.max(err / precision, axis=1)
    return ratio.reshape(len(a), k - 1).max(axis=1)


def _fewest(n: int, starts: Array, ends: Array) -> Array:
    """The fewest samples of one segment of n that store its first and last, each pair of
    consecutive stored ones a neighbour or a good span (starts, ends in segment indices):
    a shortest path."""
    cost = np.full(n, n + 1, dtype=np.int64)
    back = np.zeros(n, dtype=np.int64)
    cost[0] = 0
    nxt: list[list[int]] = [[a + 1] for a in range(n)]
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        nxt[a].append(b)
    for a in range(n - 1):  # samples in order: every edge goes forward
        for b in nxt[a]:
            if cost[a] + 1 < cost[b]:
                cost[b] = cost[a] + 1
                back[b] = a
    path = [n - 1]
    while path[-1] != 0:
        path.append(int(back[path[-1]]))
    return np.array(path[::-1], dtype=np.int64)


def no_stripping(table: Array, num_stored: int) -> Stripping:
    """Every keyframe stored."""
    g = len(table)
    out = Stripping(np.ones(num_stored, dtype=bool), np.zeros(g, np.int64), np.zeros(g, np.int64))
    out.__dict__.update(num_stripped=0, num_trivial=0)  # the cached counts, known: no sums
    return out
