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

The kernels take one argument for the segment, `Search`: a NamedTuple of its arrays (the
inputs, the state the passes change, their scratch, the output), which numba passes as one
tuple and reads by name, as ACL's passes share one `quantization_context`. Each kernel then
takes only the scalars it varies (a track, a rate, the level's steps). A NamedTuple rather
than a numba StructRef: it compiles faster and its fields stay in registers in the hot loops
(a StructRef's are loads through a pointer). One kernel call solves a segment (`_solve`: the
three passes and the quantised samples), and the affine helpers are inlined into the passes:
at NUMBA_OPT=1 a call per matrix costs more than the matrix (the passes ran 1.5-1.8x slower
through calls).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from codec.codecs.acl_style import quantize
from codec.codecs.acl_style.bit_rates import NUM_BIT_RATES, RAW_BIT_RATE
from codec.jit import helper, inlined, kernel
from codec.model import affine, topology

Array = np.ndarray

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
    and joint j's tracks at joint_tracks[track_ptr[j]:track_ptr[j + 1]] (J + 1,); int64."""

    joint: Array
    kind: Array
    joint_tracks: Array
    track_ptr: Array

    @classmethod
    def of(cls, track_joint: Array, track_kind: Array, h: Hierarchy) -> TrackTable:
        joint = np.array(track_joint, dtype=np.int64)
        joint_tracks = np.argsort(joint, kind="stable").astype(np.int64)
        track_ptr = np.searchsorted(joint[joint_tracks], np.arange(len(h.parents) + 1))
        return cls(
            joint, np.array(track_kind, dtype=np.int64), joint_tracks, track_ptr.astype(np.int64)
        )


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
    """One segment's search: every array its kernels read and write, by name (numba passes
    it as one tuple). m compared rows of the segment's n stored samples, T animated tracks,
    J joints, R bit rates. Built per segment by `Search.of`; every array C-contiguous and
    writable, so the kernels compile once."""

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
    # the tracks (T,) (TrackTable), then the rates chosen and slack removal's order
    track_joint: Array
    track_kind: Array
    joint_tracks: Array
    track_ptr: Array
    rate: Array
    order: Array
    # the joints (Hierarchy), then (J,) float64 the shell distance, the bound (the precision
    # less FLOAT64_SLACK: bounds), the dominant shell's distance and precision, and bool the
    # joints that cannot meet their precision (stuck), that fail the lower bound's check (bad)
    parent: Array
    subtree: Array
    sub_ptr: Array
    chain: Array
    chain_ptr: Array
    shell: Array
    bound: Array
    dom_dist: Array
    dom_prec: Array
    stuck: Array
    bad: Array
    # the poses in float64: QVV rows (m, J, 10) and matrices (m, J, 12), raw and the current
    # lossy ones
    raw_qvv: Array
    qvv: Array
    raw_local: Array
    raw_obj: Array
    local: Array
    obj: Array
    # decoded candidates: cand (T, R, m, 4) float64, have (T, R) which are filled
    cand: Array
    have: Array
    # scratch: qi (3,) uint32 and out4 (4,) float32 one value's decode; v10 (10,) a QVV row;
    # m4, m5 (12,) matrices; rel (max_depth, m, 12) from each chain joint's space to the
    # repaired joint's; the repair's candidate raises (T * steps,) and their errors; sub
    # (J, 12) slack removal's subtree matrices
    qi: Array
    out4: Array
    v10: Array
    m4: Array
    m5: Array
    rel: Array
    pick_track: Array
    pick_rate: Array
    pick_err: Array
    sub: Array
    # the output: (n, T, 3) uint32 the samples quantised at the chosen rates
    q: Array

    @classmethod
    def of(cls, p: SegmentProblem, h: Hierarchy, steps: int) -> Search:
        m, num_joints = p.raw.shape[:2]
        tt = p.tracks
        t = len(tt.joint)

        def own(a: Array) -> Array:
            return np.require(a, requirements=["C", "W"])

        raw_values = own(p.raw_values)
        qvv = np.empty((m, num_joints, 10))
        qvv[:] = p.base
        return cls(
            rows=own(p.rows),
            unit=own(p.unit),
            raw_values=raw_values,
            raw_bits=raw_values.view(np.uint32),
            lay=own(p.lay),
            dec=own(p.dec),
            cost=own(p.cost),
            track_joint=tt.joint,
            track_kind=tt.kind,
            joint_tracks=tt.joint_tracks,
            track_ptr=tt.track_ptr,
            rate=np.zeros(t, dtype=np.int64),
            order=np.zeros(t, dtype=np.int64),
            parent=h.parents,
            subtree=h.subtree,
            sub_ptr=h.sub_ptr,
            chain=h.chain,
            chain_ptr=h.chain_ptr,
            shell=own(p.shell),
            bound=bounds(h, p.dom_dist, p.precision),
            dom_dist=own(p.dom_dist),
            dom_prec=own(p.dom_prec),
            stuck=np.zeros(num_joints, dtype=np.bool_),
            bad=np.zeros(num_joints, dtype=np.bool_),
            raw_qvv=np.array(p.raw, dtype=np.float64),
            qvv=qvv,
            raw_local=np.empty((m, num_joints, 12)),
            raw_obj=np.empty((m, num_joints, 12)),
            local=np.empty((m, num_joints, 12)),
            obj=np.empty((m, num_joints, 12)),
            cand=np.empty((t, NUM_BIT_RATES, m, 4)),
            have=np.zeros((t, NUM_BIT_RATES), dtype=np.bool_),
            qi=np.zeros(3, dtype=np.uint32),
            out4=np.zeros(4, dtype=np.float32),
            v10=np.empty(10),
            m4=np.empty(12),
            m5=np.empty(12),
            rel=np.empty((h.max_depth, m, 12)),
            pick_track=np.empty(t * steps, dtype=np.int64),
            pick_rate=np.empty(t * steps, dtype=np.int64),
            pick_err=np.empty(t * steps),
            sub=np.empty((num_joints, 12)),
            q=np.empty(p.unit.shape, dtype=np.uint32),
        )


def optimize_segment(p: SegmentProblem, h: Hierarchy, level: str) -> tuple[Array, Array, Array]:
    """Bit rates (T,), the joints (J,) bool that cannot meet their precision, and the
    quantised samples (n, T, 3) uint32 at those rates (raw rate: float32 bits)."""
    code = LEVELS[level]
    steps = 2 if code == 2 else 1
    s = Search.of(p, h, steps)
    _solve(s, SLACK_ROUNDS[code], steps)
    return s.rate, s.stuck, s.q


@kernel
def _solve(s, slack_rounds, steps):
    """The three passes on one segment (optimize_segment), then its samples quantised at the
    chosen rates into s.q."""
    _lower_bound(s)
    for _ in range(REPAIR_SWEEPS):
        if _repair_sweep(s, steps):
            break
    for _ in range(slack_rounds):
        if not _slack_round(s):
            break
    for n in range(s.q.shape[0]):  # _quantized: quantize.quantize at each track's rate
        for k in range(s.rate.shape[0]):
            r = s.rate[k]
            scale = float((1 << r) - 1)
            for c in range(3):
                if r == RAW_BIT_RATE:
                    s.q[n, k, c] = s.raw_bits[n, k, c]
                elif r > 0:
                    s.q[n, k, c] = np.uint32(np.floor(np.float64(s.unit[n, k, c]) * scale + 0.5))
                else:
                    s.q[n, k, c] = 0


# --- shared helpers -----------------------------------------------------------------------


@inlined
def _candidate(s, t, r):
    """Decode track t at rate r for every row into s.cand[t, r] (once)."""
    if s.have[t, r]:
        return
    scale = float((1 << r) - 1)
    cand = s.cand
    for i in range(s.rows.shape[0]):
        n = s.rows[i]
        if i > 0 and n == s.rows[0]:  # the wrapped-in row repeats the first sample
            for c in range(4):
                cand[t, r, i, c] = cand[t, r, 0, c]
            continue
        if 0 < r < RAW_BIT_RATE:
            for k in range(3):  # codec.codecs.acl_style.quantize.quantize, one value at a time
                s.qi[k] = np.uint32(np.floor(np.float64(s.unit[n, t, k]) * scale + 0.5))
        s.out4[3] = 0.0
        decode_value(s.qi, s.raw_values[n, t], r, s.lay[t], s.dec[t], s.out4)
        norm = 0.0
        for c in range(4):
            cand[t, r, i, c] = np.float64(s.out4[c])
            norm += cand[t, r, i, c] * cand[t, r, i, c]
        if s.lay[t, 3] >= 0:  # a rotation means the unit quaternion (codec.model.clip.Clip)
            norm = np.sqrt(norm)
            for c in range(4):
                cand[t, r, i, c] = cand[t, r, i, c] / norm
    s.have[t, r] = True


@inlined
def _set_local(s, t, r):
    """Put track t at rate r; rebuild its joint's local matrices (not its subtree's objects:
    the first pass, which reads none, builds them all once at its end)."""
    s.rate[t] = r
    j = s.track_joint[t]
    kind = s.track_kind[t]
    off = 0 if kind == 0 else (4 if kind == 1 else 7)
    for i in range(s.qvv.shape[0]):
        for c in range(4 if kind == 0 else 3):
            s.qvv[i, j, off + c] = s.cand[t, r, i, c]
        qvv_matrix(s.qvv[i, j], s.local[i, j])


@inlined
def _set_rate(s, t, r):
    """Put track t at rate r; rebuild its joint's local matrices and its subtree's objects."""
    _set_local(s, t, r)
    j = s.track_joint[t]
    for a in range(s.sub_ptr[j], s.sub_ptr[j + 1]):
        d = s.subtree[a]
        p = s.parent[d]
        for i in range(s.qvv.shape[0]):
            if p < 0:
                for x in range(12):
                    s.obj[i, d, x] = s.local[i, d, x]
            else:
                compose(s.obj[i, p], s.local[i, d], s.obj[i, d])


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
    m, num_joints = s.qvv.shape[:2]
    for i in range(m):  # raw local and object, starting lossy local matrices
        for j in range(num_joints):
            qvv_matrix(s.raw_qvv[i, j], s.raw_local[i, j])
            qvv_matrix(s.qvv[i, j], s.local[i, j])
            p = s.parent[j]
            if p < 0:
                for x in range(12):
                    s.raw_obj[i, j, x] = s.raw_local[i, j, x]
            else:
                compose(s.raw_obj[i, p], s.raw_local[i, j], s.raw_obj[i, j])
    num_tracks = s.rate.shape[0]
    for t in range(num_tracks):
        j = s.track_joint[t]
        chosen = RAW_BIT_RATE + t * 0  # a variable, so numba does not specialise on it
        for r in range(NUM_BIT_RATES):
            _candidate(s, t, r)
            ok = True
            for i in range(m):
                _local_with(s.raw_qvv[i, j], s.track_kind[t], s.cand[t, r, i], s.v10, s.m4)
                if shell_error(s.raw_local[i, j], s.m4, s.dom_dist[j]) > s.dom_prec[j]:
                    ok = False
                    break
            if ok:
                chosen = r
                break
        _candidate(s, t, chosen)
        _set_local(s, t, chosen)
    # the combination of a joint's sub-tracks must meet the bound as well
    for _ in range(3 * NUM_BIT_RATES):
        for j in range(num_joints):
            worst = 0.0
            for i in range(m):
                e = shell_error(s.raw_local[i, j], s.local[i, j], s.dom_dist[j])
                worst = max(worst, e)
            s.bad[j] = worst > s.dom_prec[j]
        progressed = False
        for j in range(num_joints):
            if not s.bad[j]:
                continue
            best = num_tracks
            best_own = -1.0
            for a in range(s.track_ptr[j], s.track_ptr[j + 1]):
                t = s.joint_tracks[a]
                r = s.rate[t]
                if r >= RAW_BIT_RATE:
                    continue
                own = 0.0
                for i in range(m):  # the sub-track's own error, the others raw
                    _local_with(s.raw_qvv[i, j], s.track_kind[t], s.cand[t, r, i], s.v10, s.m4)
                    own = max(own, shell_error(s.raw_local[i, j], s.m4, s.dom_dist[j]))
                if own > best_own:
                    best_own = own
                    best = t
            if best < num_tracks:
                r = s.rate[best] + 1
                _candidate(s, best, r)
                _set_local(s, best, r)
                progressed = True
        if not progressed:
            break
    for i in range(m):  # the lossy object matrices of the rates chosen
        for j in range(num_joints):
            p = s.parent[j]
            if p < 0:
                for x in range(12):
                    s.obj[i, j, x] = s.local[i, j, x]
            else:
                compose(s.obj[i, p], s.local[i, j], s.obj[i, j])


# --- pass 2: object-space repair ----------------------------------------------------------


@helper
def _repair_sweep(s, steps):
    """One parents-first walk raising rates until every joint meets its bound, weighing
    raises of up to `steps` rates. Returns True when the walk is over: every joint within its
    bound, or some joint that cannot be."""
    m, num_joints = s.qvv.shape[:2]
    v10, m4, m5, rel = s.v10, s.m4, s.m5, s.rel
    top = RAW_BIT_RATE + m * 0  # a variable, so numba does not specialise on it
    any_stuck = False
    for j in range(num_joints):
        shell = s.shell[j]
        bound = s.bound[j]
        err = 0.0
        for i in range(m):
            err = max(err, shell_error(s.raw_obj[i, j], s.obj[i, j], shell))
        guard = 0
        unreachable = False
        c0 = s.chain_ptr[j]
        depth = s.chain_ptr[j + 1] - c0
        while err > bound and guard < MAX_RAISES:
            guard += 1
            if guard == REACH_CHECK_AFTER:  # would raw floats on the whole chain do?
                reach = 0.0
                for i in range(m):
                    for z in range(c0, c0 + depth):
                        a = s.chain[z]
                        for c in range(10):
                            v10[c] = s.qvv[i, a, c]
                        for y in range(s.track_ptr[a], s.track_ptr[a + 1]):
                            t = s.joint_tracks[y]
                            _candidate(s, t, top)
                            kind = s.track_kind[t]
                            off = 0 if kind == 0 else (4 if kind == 1 else 7)
                            for c in range(4 if kind == 0 else 3):
                                v10[off + c] = s.cand[t, top, i, c]
                        if z == c0:
                            qvv_matrix(v10, m5)
                        else:
                            qvv_matrix(v10, m4)
                            compose(m5, m4, m5)
                    reach = max(reach, shell_error(s.raw_obj[i, j], m5, shell))
                unreachable = reach > bound
            # rel[k]: from chain joint k's space to j's (identity for j itself)
            for i in range(m):
                for x in range(12):
                    rel[depth - 1, i, x] = 1.0 if x == 0 or x == 5 or x == 10 else 0.0
            for k in range(depth - 2, -1, -1):
                b = s.chain[c0 + k + 1]
                for i in range(m):
                    compose(s.local[i, b], rel[k + 1, i], rel[k, i])
            nc = 0
            for k in range(depth):
                a = s.chain[c0 + k]
                par = s.parent[a]
                for z in range(s.track_ptr[a], s.track_ptr[a + 1]):
                    t = s.joint_tracks[z]
                    for up in range(1, steps + 1):
                        rr = s.rate[t] + up
                        if rr > RAW_BIT_RATE:
                            continue
                        _candidate(s, t, rr)
                        worst = 0.0
                        for i in range(m):
                            _local_with(s.qvv[i, a], s.track_kind[t], s.cand[t, rr, i], v10, m4)
                            if par >= 0:
                                compose(s.obj[i, par], m4, m4)
                            compose(m4, rel[k, i], m5)
                            worst = max(worst, shell_error(s.raw_obj[i, j], m5, shell))
                        s.pick_track[nc] = t
                        s.pick_rate[nc] = rr
                        s.pick_err[nc] = worst
                        nc += 1
            pick = -1
            best_added = 0
            best_e = 0.0
            for c in range(nc):  # a raise that meets the bound: cheapest, then smallest error
                if s.pick_err[c] <= bound:
                    added = s.cost[s.pick_rate[c]] - s.cost[s.rate[s.pick_track[c]]]
                    if (
                        pick < 0
                        or added < best_added
                        or (added == best_added and s.pick_err[c] < best_e)
                    ):
                        pick, best_added, best_e = c, added, s.pick_err[c]
            if pick < 0:  # else the most error removed per added bit
                best_gain = 0.0
                for c in range(nc):
                    gain = err - s.pick_err[c]
                    if gain > 0.0:
                        g = gain / max(s.cost[s.pick_rate[c]] - s.cost[s.rate[s.pick_track[c]]], 1)
                        if pick < 0 or g > best_gain:
                            pick, best_gain = c, g
            if pick < 0:
                if unreachable or nc == 0:  # nothing brings it closer: keep the closest
                    break
                for c in range(nc):  # nothing helps on its own: raise the lowest rate (ACL)
                    added = s.cost[s.pick_rate[c]] - s.cost[s.rate[s.pick_track[c]]]
                    rc = s.rate[s.pick_track[c]]
                    if (
                        pick < 0
                        or rc < s.rate[s.pick_track[pick]]
                        or (rc == s.rate[s.pick_track[pick]] and added < best_added)
                    ):
                        pick, best_added = c, added
            _set_rate(s, s.pick_track[pick], s.pick_rate[pick])
            err = 0.0
            for i in range(m):
                err = max(err, shell_error(s.raw_obj[i, j], s.obj[i, j], shell))
        if err > bound:
            s.stuck[j] = True
            any_stuck = True
            s.bound[j] = err  # the closest result is what slack removal must keep
    if any_stuck:
        return True
    for j in range(num_joints):
        for i in range(m):
            if shell_error(s.raw_obj[i, j], s.obj[i, j], s.shell[j]) > s.bound[j]:
                return False
    return True


# --- pass 3: slack removal ----------------------------------------------------------------


@helper
def _slack_round(s):
    """Lower every track, most expensive first, as far as its subtree allows; returns
    whether anything changed."""
    m = s.qvv.shape[0]
    num_tracks = s.rate.shape[0]
    order, sub = s.order, s.sub
    for t in range(num_tracks):  # stable order by cost, highest first (insertion sort)
        k = t
        while k > 0 and s.cost[s.rate[order[k - 1]]] < s.cost[s.rate[t]]:
            order[k] = order[k - 1]
            k -= 1
        order[k] = t
    changed = False
    for oi in range(num_tracks):
        t = order[oi]
        j = s.track_joint[t]
        kind = s.track_kind[t]
        par = s.parent[j]
        for lower in range(s.rate[t]):
            _candidate(s, t, lower)
            ok = True
            for i in range(m):  # the joint itself first: it fails most often
                _local_with(s.qvv[i, j], kind, s.cand[t, lower, i], s.v10, s.m4)
                if par >= 0:
                    compose(s.obj[i, par], s.m4, s.m4)
                if shell_error(s.raw_obj[i, j], s.m4, s.shell[j]) > s.bound[j]:
                    ok = False
                    break
            i = 0
            while ok and i < m:
                _local_with(s.qvv[i, j], kind, s.cand[t, lower, i], s.v10, sub[j])
                if par >= 0:
                    compose(s.obj[i, par], sub[j], sub[j])
                for a in range(s.sub_ptr[j] + 1, s.sub_ptr[j + 1]):
                    d = s.subtree[a]
                    compose(sub[s.parent[d]], s.local[i, d], sub[d])
                    if shell_error(s.raw_obj[i, d], sub[d], s.shell[d]) > s.bound[d]:
                        ok = False
                        break
                i += 1
            if ok:
                _set_rate(s, t, lower)
                changed = True
                break
    return changed
