"""Choosing bit rates: the cheapest set that keeps every joint within its precision.

Works one segment at a time (segments share nothing but the clip ranges), in compiled
kernels. The search has three passes:

1. Local lower bound: each animated sub-track alone gets the cheapest rate whose
   local-space error on the joint's dominant shell is within the dominant precision, then
   each joint's sub-tracks are raised together until their combination meets it too.
2. Object-space repair, parents first: a joint whose error on its own shell exceeds its
   bound gets one step more on the sub-track of its chain that buys the most error
   reduction per added bit (ACL raises greedily along the chain; we price every step).
   A joint that not even raw floats on its whole chain can bring within its bound (an
   absurd budget) keeps the closest result: its chain rises only while a step reduces its
   error, and its bound becomes that closest error.
3. Slack removal (what ACL lacks): every sub-track, most expensive first, drops to the
   cheapest rate at which its whole subtree still meets its bounds, checked exactly.

Levels: medium runs one slack round, high two, highest three and also weighs two-step
raises in the repair pass.

Every error check decodes candidates through `quantize.decode_value`, the decoder's
own float32 arithmetic, and composes object space in float64 at every sample of the
segment (and the wrapped-in last sample of a looping clip, which decodes as sample 0).

Strict in float64: a decoded rotation means the unit quaternion of its float32 components
(renormalised in float64, as codec.model.clip.Clip stores every rotation), so the candidates are
renormalised the same way. An independent float64 evaluation differs only by rounding in
another order; each joint's bound is its precision less a margin for that (FLOAT64_SLACK of
the distances along its chain), so such a checker never sees more than the precision.

The kernels take one named bundle for the segment, `Search`: a NamedTuple of its inputs and
of the state the passes share (rates, bounds, poses, decoded candidates), which numba passes
as one tuple, as ACL's passes share one `quantization_context`; each kernel takes besides
only the scalars it varies. Each pass reads the fields it needs into locals at its top and
allocates its own scratch; the helpers it inlines (`_candidate`, `_set_local`, `_set_rate`)
take the bundle too, which inlined costs nothing. `Search.of` takes the encoder's arrays as
they are and copies nothing: a segment solves in about 0.5 ms, so Python's microseconds per
copy and per `np.require` count (a first bundle built with them ran 6 % slower than the
positional calls, two thirds of it before the kernel ran; this one as fast). One kernel call
solves a segment (`_solve`: the three passes and the quantised samples), and the affine
helpers are inlined into the passes: at NUMBA_OPT=1 a call per matrix costs more than the
matrix (the passes ran 1.5-1.8x slower through calls).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from codec.codecs.acl_style import quantize
from codec.codecs.acl_style.bit_rates import NUM_BIT_RATES, RAW_BIT_RATE
from codec.codecs.base import TrackKind
from codec.jit import helper, inlined, kernel
from codec.model import affine, topology

Array = np.ndarray
_ANIMATED = int(TrackKind.ANIMATED)

LEVELS = {"medium": 0, "high": 1, "highest": 2}
SLACK_ROUNDS = (1, 2, 3)
REPAIR_SWEEPS = 50
FLOAT64_SLACK = 2.0**-40  # relative float64 rounding a differently ordered evaluation may see
MAX_RAISES = 400  # per joint and repair sweep
REACH_CHECK_AFTER = 8  # raises before asking whether raw floats could meet the bound

# the helpers every pass calls per sample and candidate, compiled into each pass
decode_value = inlined(quantize.decode_value)
qvv_matrix = inlined(affine.qvv_matrix)
compose = inlined(affine.compose)
shell_error = inlined(affine.shell_error)


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """Joint topology as flat arrays for the kernels (built once per skeleton).

    parents (J,); every joint's subtree (joint first, parents before children) and chain
    (root first, joint last), concatenated into `subtree` and `chain` (L,), joint j's at
    [sub_ptr[j], sub_ptr[j + 1]) and [chain_ptr[j], chain_ptr[j + 1]) (J + 1,); all int64.
    """

    parents: Array
    subtree: Array
    chain: Array
    sub_ptr: Array
    chain_ptr: Array
    max_depth: int

    @classmethod
    def of(cls, parents: Array) -> Hierarchy:
        return _hierarchy(np.asarray(parents, dtype=np.int64).tobytes())

    @classmethod
    def build(cls, parents: Array) -> Hierarchy:
        """The skeleton's chains and subtrees (codec.model.topology) flattened for the kernels."""
        parents = np.array(parents, dtype=np.int64)  # a writable copy: kernels take one type
        chains = topology.chains(parents)
        subs = topology.subtrees(parents)
        return cls(
            parents=parents,
            subtree=np.array([j for s in subs for j in s], dtype=np.int64),
            chain=np.array([j for c in chains for j in c], dtype=np.int64),
            sub_ptr=np.cumsum([0] + [len(s) for s in subs], dtype=np.int64),
            chain_ptr=np.cumsum([0] + [len(c) for c in chains], dtype=np.int64),
            max_depth=max((len(c) for c in chains), default=1),
        )


@functools.lru_cache(maxsize=64)
def _hierarchy(parents: bytes) -> Hierarchy:
    """Hierarchies by topology: one per skeleton shape, shared by every compression."""
    return Hierarchy.build(np.frombuffer(parents, dtype=np.int64))


@dataclass(frozen=True, eq=False)
class TrackTable:
    """The animated tracks (T) in the optimiser's order (rotations, then translations, then
    scales), the same for every segment of a compression: each one's joint and kind (T,),
    joint j's tracks at joint_tracks[track_ptr[j]:track_ptr[j + 1]] (J + 1,); inv (T,)
    the optimiser's position of the track stored at each position (the payload's
    joint-major order); counts (3,) the animated rotations, translations and scales. All
    int64."""

    joint: Array
    kind: Array
    joint_tracks: Array
    track_ptr: Array
    inv: Array
    counts: Array

    @classmethod
    def of(cls, kinds: Array) -> TrackTable:
        """The table of sub-track kinds (J, 3) (codec.codecs.base.TrackKind)."""
        kinds = np.ascontiguousarray(kinds, dtype=np.uint8)
        num_joints = kinds.shape[0]
        rows = np.empty((4, 3 * num_joints), dtype=np.int64)  # room for every sub-track
        track_ptr = np.empty(num_joints + 1, dtype=np.int64)
        counts = np.empty(3, dtype=np.int64)
        t = _track_table(kinds, _ANIMATED, *rows, counts, track_ptr)
        inv, joint, kind, joint_tracks = rows[:, :t]  # contiguous: each a row's start
        return cls(joint, kind, joint_tracks, track_ptr, inv, counts)


@kernel
def _track_table(kinds, animated, inv, joint, kind, joint_tracks, counts, track_ptr):
    """TrackTable.of's arrays of kinds (J, 3): the stable sorts numpy's argsort and
    searchsorted made, as the counting they are. Returns how many tracks (T) it wrote at
    the start of the (J * 3,) arrays."""
    num_joints = kinds.shape[0]
    stored = np.empty((num_joints, 3), dtype=np.int64)
    at = np.empty((num_joints, 3), dtype=np.int64)
    p = 0
    for j in range(num_joints):
        for k in range(3):
            if kinds[j, k] == animated:
                stored[j, k] = p
                p += 1
    t = 0
    for k in range(3):
        counts[k] = 0
        for j in range(num_joints):
            if kinds[j, k] == animated:
                inv[stored[j, k]] = t
                joint[t] = j
                kind[t] = k
                at[j, k] = t
                counts[k] += 1
                t += 1
    i = 0
    for j in range(num_joints):
        track_ptr[j] = i
        for k in range(3):
            if kinds[j, k] == animated:
                joint_tracks[i] = at[j, k]
                i += 1
    track_ptr[num_joints] = i
    return i


@dataclass(eq=False)
class SegmentProblem:
    """One segment's inputs.

    m rows are compared; `rows (m,)` maps them to the segment's stored samples (n).
    raw (m, J, 10) raw QVV rows at the compared samples; base (J, 10) the fixed values of
    default and constant sub-tracks; `tracks` the animated tracks. Decoding: unit (n, T, 3)
    float32 segment-space values, raw_values (n, T, 3) float32 stored components, lay
    (T, 4) and dec (T, 17) (quantize.decode_params). cost (25,) bits per rate;
    shell, precision, dom_dist, dom_prec (J,).
    """

    rows: Array
    raw: Array
    base: Array
    tracks: TrackTable
    unit: Array
    raw_values: Array
    lay: Array
    dec: Array
    cost: Array
    shell: Array
    precision: Array
    dom_dist: Array
    dom_prec: Array


def bounds(h: Hierarchy, dom_dist: Array, precision: Array) -> Array:
    """(J,) each joint's precision less what float64 rounding in another evaluation order may
    move it: FLOAT64_SLACK times the distances from its chain joints' origins to its shell
    points, each at most that chain joint's dominant shell distance."""
    total = np.add.reduceat(dom_dist[h.chain], h.chain_ptr[:-1])
    return precision - FLOAT64_SLACK * total


class Search(NamedTuple):
    """One segment's search: the arrays its kernels share, by name (numba passes it as one
    tuple). m compared rows of the segment's n stored samples, T animated tracks, J joints,
    R bit rates. Built per segment by `Search.of`; every array C-contiguous, so the kernels
    compile once. The kernels write only the state, fresh per segment (segments run in
    threads at once); scratch is not here: each pass allocates its own."""

    # the samples: rows (m,) the stored sample of each compared row; unit (n, T, 3) float32
    # segment-space values in [0, 1]; raw_values (n, T, 3) float32 raw stored components and
    # raw_bits their bits; lay (T, 4), dec (T, 17) (quantize.decode_params); cost (R,) bits
    rows: Array
    unit: Array
    raw_values: Array
    raw_bits: Array
    lay: Array
    dec: Array
    cost: Array
    # the tracks (T,) (TrackTable) and the joints (Hierarchy)
    track_joint: Array
    track_kind: Array
    joint_tracks: Array
    track_ptr: Array
    parent: Array
    subtree: Array
    sub_ptr: Array
    chain: Array
    chain_ptr: Array
    # (J,) the shell distance, the bound (the precision less FLOAT64_SLACK: bounds; the
    # repair lowers a stuck joint's to its closest error), the dominant shell's distance and
    # precision
    shell: Array
    bound: Array
    dom_dist: Array
    dom_prec: Array
    # the state: rate (T,) the rates chosen; stuck (J,) bool the joints that cannot meet
    # their precision; the poses in float64, QVV rows (m, J, 10) and matrices (m, J, 12), raw
    # and the current lossy ones; decoded candidates cand (T, R, m, 4), have (T, R) filled
    rate: Array
    stuck: Array
    raw_qvv: Array
    qvv: Array
    raw_local: Array
    raw_obj: Array
    local: Array
    obj: Array
    cand: Array
    have: Array

    @classmethod
    def of(cls, p: SegmentProblem, h: Hierarchy) -> Search:
        """The segment's arrays as they are (the encoder hands C-contiguous ones; `_f64`
        copies only one that is not) and fresh state, the four matrix stacks in one block."""
        m, num_joints = p.raw.shape[:2]
        t = len(p.tracks.joint)
        tt = p.tracks
        qvv = np.empty((m, num_joints, 10))
        qvv[:] = p.base
        raw_local, raw_obj, local, obj = np.empty((4, m, num_joints, 12))
        return cls(
            p.rows,
            p.unit,
            p.raw_values,
            p.raw_values.view(np.uint32),
            p.lay,
            p.dec,
            p.cost,
            tt.joint,
            tt.kind,
            tt.joint_tracks,
            tt.track_ptr,
            h.parents,
            h.subtree,
            h.sub_ptr,
            h.chain,
            h.chain_ptr,
            _f64(p.shell),
            bounds(h, p.dom_dist, p.precision),
            _f64(p.dom_dist),
            _f64(p.dom_prec),
            np.zeros(t, dtype=np.int64),
            np.zeros(num_joints, dtype=np.bool_),
            _f64(p.raw),
            qvv,
            raw_local,
            raw_obj,
            local,
            obj,
            np.empty((t, NUM_BIT_RATES, m, 4)),
            np.zeros((t, NUM_BIT_RATES), dtype=np.bool_),
        )


def _f64(a: Array) -> Array:
    """a as C-contiguous float64, itself when it is already (the kernels take one type)."""
    return np.ascontiguousarray(a, dtype=np.float64)


def optimize_segment(p: SegmentProblem, h: Hierarchy, level: str) -> tuple[Array, Array, Array]:
    """Bit rates (T,), the joints (J,) bool that cannot meet their precision, and the
    quantised samples (n, T, 3) uint32 at those rates (raw rate: float32 bits)."""
    code = LEVELS[level]
    steps = 2 if code == 2 else 1
    s = Search.of(p, h)
    q = _solve(s, SLACK_ROUNDS[code], steps, h.max_depth)
    return s.rate, s.stuck, q


@kernel
def _solve(s, slack_rounds, steps, max_depth):
    """The three passes on one segment (optimize_segment); returns its samples quantised at
    the chosen rates (n, T, 3)."""
    _lower_bound(s)
    _repair_sweep(s, steps, max_depth)
    _slack_round(s, slack_rounds)
    unit, raw_bits, rate = s.unit, s.raw_bits, s.rate
    q = np.empty(unit.shape, dtype=np.uint32)
    for n in range(q.shape[0]):  # each track at its rate, rounded half up
        for k in range(rate.shape[0]):
            r = rate[k]
            scale = float((1 << r) - 1)
            for c in range(3):
                if r == RAW_BIT_RATE:
                    q[n, k, c] = raw_bits[n, k, c]
                elif r > 0:
                    q[n, k, c] = np.uint32(np.floor(np.float64(unit[n, k, c]) * scale + 0.5))
                else:
                    q[n, k, c] = 0
    return q


# --- shared helpers -----------------------------------------------------------------------
# cand (T, R, m, 4) decoded candidates, have (T, R) which are filled; qi (3,) uint32 and
# out4 (4,) float32 one value's decode (the caller's scratch).


@inlined
def _candidate(s, t, r, qi, out4):
    """Decode track t at rate r for every row into s.cand[t, r] (once)."""
    rows, unit, raw_values, lay, dec, cand = s.rows, s.unit, s.raw_values, s.lay, s.dec, s.cand
    have = s.have
    if have[t, r]:
        return
    scale = float((1 << r) - 1)
    for i in range(rows.shape[0]):
        n = rows[i]
        if i > 0 and n == rows[0]:  # the wrapped-in row repeats the first sample
            for c in range(4):
                cand[t, r, i, c] = cand[t, r, 0, c]
            continue
        if 0 < r < RAW_BIT_RATE:
            for k in range(3):  # rounded half up, as _solve quantises
                qi[k] = np.uint32(np.floor(np.float64(unit[n, t, k]) * scale + 0.5))
        out4[3] = 0.0
        decode_value(qi, raw_values[n, t], r, lay[t], dec[t], out4)
        norm = 0.0
        for c in range(4):
            cand[t, r, i, c] = np.float64(out4[c])
            norm += cand[t, r, i, c] * cand[t, r, i, c]
        if lay[t, 3] >= 0:  # a rotation means the unit quaternion (codec.model.clip.Clip)
            norm = np.sqrt(norm)
            for c in range(4):
                cand[t, r, i, c] = cand[t, r, i, c] / norm
    have[t, r] = True


@inlined
def _set_local(s, t, r):
    """Put track t at rate r; rebuild its joint's local matrices (not its subtree's objects:
    the first pass, which reads none, builds them all once at its end)."""
    cand, rate, track_joint, track_kind, qvv = s.cand, s.rate, s.track_joint, s.track_kind, s.qvv
    local = s.local
    rate[t] = r
    j = track_joint[t]
    kind = track_kind[t]
    off = 0 if kind == 0 else (4 if kind == 1 else 7)
    for i in range(qvv.shape[0]):
        for c in range(4 if kind == 0 else 3):
            qvv[i, j, off + c] = cand[t, r, i, c]
        qvv_matrix(qvv[i, j], local[i, j])


@inlined
def _set_rate(s, t, r):
    """Put track t at rate r; rebuild its joint's local matrices and its subtree's objects."""
    _set_local(s, t, r)
    parent, subtree, sub_ptr, qvv, local = s.parent, s.subtree, s.sub_ptr, s.qvv, s.local
    obj = s.obj
    j = s.track_joint[t]
    for a in range(sub_ptr[j], sub_ptr[j + 1]):
        d = subtree[a]
        p = parent[d]
        for i in range(qvv.shape[0]):
            if p < 0:
                for x in range(12):
                    obj[i, d, x] = local[i, d, x]
            else:
                compose(obj[i, p], local[i, d], obj[i, d])


@inlined
def _local_with(src, kind, vals, v10, out):
    """Local matrix of a QVV row `src (10,)` with sub-track `kind` replaced by vals."""
    for c in range(10):
        v10[c] = src[c]
    off = 0 if kind == 0 else (4 if kind == 1 else 7)
    for c in range(4 if kind == 0 else 3):
        v10[off + c] = vals[c]
    qvv_matrix(v10, out)


# --- pass 1: local lower bound ------------------------------------------------------------


@helper
def _lower_bound(s):
    rows, cand, rate, parent = s.rows, s.cand, s.rate, s.parent
    track_joint, track_kind, joint_tracks = s.track_joint, s.track_kind, s.joint_tracks
    track_ptr = s.track_ptr
    dom_dist, dom_prec = s.dom_dist, s.dom_prec
    raw_qvv, qvv, raw_local, raw_obj, local = s.raw_qvv, s.qvv, s.raw_local, s.raw_obj, s.local
    obj = s.obj
    m = rows.shape[0]
    num_joints = qvv.shape[1]
    num_tracks = rate.shape[0]
    qi = np.zeros(3, dtype=np.uint32)
    out4 = np.zeros(4, dtype=np.float32)
    v10 = np.empty(10)
    m4 = np.empty(12)
    bad = np.zeros(num_joints, dtype=np.bool_)
    for i in range(m):  # raw local and object, starting lossy local matrices
        for j in range(num_joints):
            qvv_matrix(raw_qvv[i, j], raw_local[i, j])
            qvv_matrix(qvv[i, j], local[i, j])
            p = parent[j]
            if p < 0:
                for x in range(12):
                    raw_obj[i, j, x] = raw_local[i, j, x]
            else:
                compose(raw_obj[i, p], raw_local[i, j], raw_obj[i, j])
    for t in range(num_tracks):
        j = track_joint[t]
        chosen = RAW_BIT_RATE + t * 0  # a variable, so numba does not specialise on it
        for r in range(NUM_BIT_RATES):
            _candidate(s, t, r, qi, out4)
            ok = True
            for i in range(m):
                _local_with(raw_qvv[i, j], track_kind[t], cand[t, r, i], v10, m4)
                if shell_error(raw_local[i, j], m4, dom_dist[j]) > dom_prec[j]:
                    ok = False
                    break
            if ok:
                chosen = r
                break
        _candidate(s, t, chosen, qi, out4)
        _set_local(s, t, chosen)
    # the combination of a joint's sub-tracks must meet the bound as well
    for _ in range(3 * NUM_BIT_RATES):
        for j in range(num_joints):
            worst = 0.0
            for i in range(m):
                e = shell_error(raw_local[i, j], local[i, j], dom_dist[j])
                worst = max(worst, e)
            bad[j] = worst > dom_prec[j]
        progressed = False
        for j in range(num_joints):
            if not bad[j]:
                continue
            best = num_tracks
            best_own = -1.0
            for a in range(track_ptr[j], track_ptr[j + 1]):
                t = joint_tracks[a]
                r = rate[t]
                if r >= RAW_BIT_RATE:
                    continue
                own = 0.0
                for i in range(m):  # the sub-track's own error, the others raw
                    _local_with(raw_qvv[i, j], track_kind[t], cand[t, r, i], v10, m4)
                    own = max(own, shell_error(raw_local[i, j], m4, dom_dist[j]))
                if own > best_own:
                    best_own = own
                    best = t
            if best < num_tracks:
                r = rate[best] + 1
                _candidate(s, best, r, qi, out4)
                _set_local(s, best, r)
                progressed = True
        if not progressed:
            break
    for i in range(m):  # the lossy object matrices of the rates chosen
        for j in range(num_joints):
            p = parent[j]
            if p < 0:
                for x in range(12):
                    obj[i, j, x] = local[i, j, x]
            else:
                compose(obj[i, p], local[i, j], obj[i, j])


# --- pass 2: object-space repair ----------------------------------------------------------


@helper
def _repair_sweep(s, steps, max_depth):
    """One parents-first walk raising rates until every joint meets its bound. Returns True
    when the walk is over: every joint within its bound, or some joint that cannot be."""
    rows, cost, parent, chain, chain_ptr = s.rows, s.cost, s.parent, s.chain, s.chain_ptr
    track_kind, joint_tracks, track_ptr = s.track_kind, s.joint_tracks, s.track_ptr
    shells, bounds_, rate, stuck = s.shell, s.bound, s.rate, s.stuck
    qvv, raw_obj, local, obj, cand = s.qvv, s.raw_obj, s.local, s.obj, s.cand
    m = rows.shape[0]
    num_joints = qvv.shape[1]
    qi = np.zeros(3, dtype=np.uint32)
    out4 = np.zeros(4, dtype=np.float32)
    v10 = np.empty(10)
    m4 = np.empty(12)
    m5 = np.empty(12)
    rel = np.empty((max_depth, m, 12))  # from each chain joint's space to the repaired joint's
    pick_track = np.empty(rate.shape[0] * steps, dtype=np.int64)  # the candidate raises
    pick_rate = np.empty(rate.shape[0] * steps, dtype=np.int64)
    errs = np.empty(rate.shape[0] * steps)
    for _ in range(REPAIR_SWEEPS):
        top = RAW_BIT_RATE + m * 0  # a variable, so numba does not specialise on it
        any_stuck = False
        for j in range(num_joints):
            shell = shells[j]
            bound = bounds_[j]
            err = 0.0
            for i in range(m):
                err = max(err, shell_error(raw_obj[i, j], obj[i, j], shell))
            guard = 0
            unreachable = False
            c0 = chain_ptr[j]
            depth = chain_ptr[j + 1] - c0
            while err > bound and guard < MAX_RAISES:
                guard += 1
                if guard == REACH_CHECK_AFTER:  # would raw floats on the whole chain do?
                    reach = 0.0
                    for i in range(m):
                        for z in range(c0, c0 + depth):
                            a = chain[z]
                            for c in range(10):
                                v10[c] = qvv[i, a, c]
                            for y in range(track_ptr[a], track_ptr[a + 1]):
                                t = joint_tracks[y]
                                _candidate(s, t, top, qi, out4)
                                kind = track_kind[t]
                                off = 0 if kind == 0 else (4 if kind == 1 else 7)
                                for c in range(4 if kind == 0 else 3):
                                    v10[off + c] = cand[t, top, i, c]
                            if z == c0:
                                qvv_matrix(v10, m5)
                            else:
                                qvv_matrix(v10, m4)
                                compose(m5, m4, m5)
                        reach = max(reach, shell_error(raw_obj[i, j], m5, shell))
                    unreachable = reach > bound
                # rel[k]: from chain joint k's space to j's (identity for j itself)
                for i in range(m):
                    for x in range(12):
                        rel[depth - 1, i, x] = 1.0 if x == 0 or x == 5 or x == 10 else 0.0
                for k in range(depth - 2, -1, -1):
                    b = chain[c0 + k + 1]
                    for i in range(m):
                        compose(local[i, b], rel[k + 1, i], rel[k, i])
                nc = 0
                for k in range(depth):
                    a = chain[c0 + k]
                    par = parent[a]
                    for z in range(track_ptr[a], track_ptr[a + 1]):
                        t = joint_tracks[z]
                        for st in range(1, steps + 1):
                            rr = rate[t] + st
                            if rr > RAW_BIT_RATE:
                                continue
                            _candidate(s, t, rr, qi, out4)
                            worst = 0.0
                            for i in range(m):
                                _local_with(qvv[i, a], track_kind[t], cand[t, rr, i], v10, m4)
                                if par >= 0:
                                    compose(obj[i, par], m4, m4)
                                compose(m4, rel[k, i], m5)
                                worst = max(worst, shell_error(raw_obj[i, j], m5, shell))
                            pick_track[nc] = t
                            pick_rate[nc] = rr
                            errs[nc] = worst
                            nc += 1
                pick = -1
                best_added = 0
                best_e = 0.0
                for c in range(nc):  # a raise that meets the bound: cheapest, then smallest error
                    if errs[c] <= bound:
                        added = cost[pick_rate[c]] - cost[rate[pick_track[c]]]
                        if (
                            pick < 0
                            or added < best_added
                            or (added == best_added and errs[c] < best_e)
                        ):
                            pick, best_added, best_e = c, added, errs[c]
                if pick < 0:  # else the most error removed per added bit
                    best_gain = 0.0
                    for c in range(nc):
                        gain = err - errs[c]
                        if gain > 0.0:
                            g = gain / max(cost[pick_rate[c]] - cost[rate[pick_track[c]]], 1)
                            if pick < 0 or g > best_gain:
                                pick, best_gain = c, g
                if pick < 0:
                    if unreachable or nc == 0:  # nothing brings it closer: keep the closest
                        break
                    for c in range(nc):  # nothing helps on its own: raise the lowest rate (ACL)
                        added = cost[pick_rate[c]] - cost[rate[pick_track[c]]]
                        rc = rate[pick_track[c]]
                        if (
                            pick < 0
                            or rc < rate[pick_track[pick]]
                            or (rc == rate[pick_track[pick]] and added < best_added)
                        ):
                            pick, best_added = c, added
                _set_rate(s, pick_track[pick], pick_rate[pick])
                err = 0.0
                for i in range(m):
                    err = max(err, shell_error(raw_obj[i, j], obj[i, j], shell))
            if err > bound:
                stuck[j] = True
                any_stuck = True
                bounds_[j] = err  # the closest result is what slack removal must keep
        if any_stuck:
            break
        met = True
        for j in range(num_joints):
            for i in range(m):
                if shell_error(raw_obj[i, j], obj[i, j], shells[j]) > bounds_[j]:
                    met = False
                    break
            if not met:
                break
        if met:
            break


# --- pass 3: slack removal ----------------------------------------------------------------


@helper
def _slack_round(s, rounds):
    """Lower every track, most expensive first, as far as its subtree allows; returns
    whether anything changed."""
    rows, cost, parent, subtree, sub_ptr = s.rows, s.cost, s.parent, s.subtree, s.sub_ptr
    track_joint, track_kind = s.track_joint, s.track_kind
    shell, bound, rate = s.shell, s.bound, s.rate
    qvv, raw_obj, local, obj, cand = s.qvv, s.raw_obj, s.local, s.obj, s.cand
    m = rows.shape[0]
    num_tracks = rate.shape[0]
    qi = np.zeros(3, dtype=np.uint32)
    out4 = np.zeros(4, dtype=np.float32)
    v10 = np.empty(10)
    m4 = np.empty(12)
    sub = np.empty((qvv.shape[1], 12))  # the subtree's object matrices at a lower rate
    order = np.empty(num_tracks, dtype=np.int64)
    for _ in range(rounds):
        for t in range(num_tracks):  # stable order by cost, highest first (insertion sort)
            k = t
            while k > 0 and cost[rate[order[k - 1]]] < cost[rate[t]]:
                order[k] = order[k - 1]
                k -= 1
            order[k] = t
        changed = False
        for oi in range(num_tracks):
            t = order[oi]
            j = track_joint[t]
            kind = track_kind[t]
            par = parent[j]
            for lower in range(rate[t]):
                _candidate(s, t, lower, qi, out4)
                ok = True
                for i in range(m):  # the joint itself first: it fails most often
                    _local_with(qvv[i, j], kind, cand[t, lower, i], v10, m4)
                    if par >= 0:
                        compose(obj[i, par], m4, m4)
                    if shell_error(raw_obj[i, j], m4, shell[j]) > bound[j]:
                        ok = False
                        break
                i = 0
                while ok and i < m:
                    _local_with(qvv[i, j], kind, cand[t, lower, i], v10, sub[j])
                    if par >= 0:
                        compose(obj[i, par], sub[j], sub[j])
                    for a in range(sub_ptr[j] + 1, sub_ptr[j + 1]):
                        d = subtree[a]
                        compose(sub[parent[d]], local[i, d], sub[d])
                        if shell_error(raw_obj[i, d], sub[d], shell[d]) > bound[d]:
                            ok = False
                            break
                    i += 1
                if ok:
                    _set_rate(s, t, lower)
                    changed = True
                    break
        if not changed:
            break
