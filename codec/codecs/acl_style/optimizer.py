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

The kernels take few, stacked arguments (numba's compile time grows with every argument):
the row constants below name the slices of each stack. One kernel call solves a segment
(`_solve`: the three passes and the quantised samples), and the affine helpers are inlined
into the passes: at NUMBA_OPT=1 a call per matrix costs more than the matrix (the passes
ran 1.5-1.8x slower through calls).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

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

# tracks (5, T) int64
TRACK_JOINT, TRACK_KIND, JOINT_TRACKS, RATE, ORDER = range(5)
# joints (4, J + 1) int64: parent (last unused), then the pointers into lists and tracks
PARENT, SUB_PTR, CHAIN_PTR, TRACK_PTR = range(4)
# lists (2, L) int64: every joint's subtree (joint first, parents before children) and
# chain (root first, joint last), concatenated
SUBTREE, CHAIN = range(2)
# per_joint (4, J) float64
SHELL, BOUND, DOM_DIST, DOM_PREC = range(4)
# qvv (2, m, J, 10) float64: raw and current lossy QVV rows
RAW, CUR = range(2)
# mats (4, m, J, 12) float64: raw local and object, current lossy local and object
RAW_LOCAL, RAW_OBJ, LOCAL, OBJ = range(4)
# stored (2, n, T, 3) float32: segment-space values in [0, 1], raw stored components
UNIT, RAW_VALUES = range(2)
# flags (2, J) bool
STUCK, BAD = range(2)

# the helpers every pass calls per sample and candidate, compiled into each pass
decode_value = inlined(quantize.decode_value)
qvv_matrix = inlined(affine.qvv_matrix)
compose = inlined(affine.compose)
shell_error = inlined(affine.shell_error)


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """Joint topology as flat arrays for the kernels (built once per skeleton).

    parents (J,); joints (4, J + 1) and lists (2, L) as the kernels take them (see above).
    """

    parents: Array
    joints: Array
    lists: Array
    max_depth: int

    @classmethod
    def of(cls, parents: Array) -> Hierarchy:
        return _hierarchy(np.asarray(parents, dtype=np.int64).tobytes())

    @classmethod
    def build(cls, parents: Array) -> Hierarchy:
        """The skeleton's chains and subtrees (codec.model.topology) flattened for the kernels."""
        parents = np.array(parents, dtype=np.int64)  # a writable copy: kernels take one type
        n = len(parents)
        chains = topology.chains(parents)
        subs = topology.subtrees(parents)
        joints = np.zeros((4, n + 1), dtype=np.int64)
        joints[PARENT, :n] = parents
        joints[SUB_PTR] = np.cumsum([0] + [len(s) for s in subs])
        joints[CHAIN_PTR] = np.cumsum([0] + [len(c) for c in chains])
        lists = np.array(
            [[j for s in subs for j in s], [j for c in chains for j in c]], dtype=np.int64
        ).reshape(2, -1)
        depth = int(np.max(np.diff(joints[CHAIN_PTR]), initial=1))
        return cls(parents=parents, joints=joints, lists=lists, max_depth=depth)


@functools.lru_cache(maxsize=64)
def _hierarchy(parents: bytes) -> Hierarchy:
    """Hierarchies by topology: one per skeleton shape, shared by every compression."""
    return Hierarchy.build(np.frombuffer(parents, dtype=np.int64))


@dataclass(frozen=True, eq=False)
class TrackTable:
    """The animated tracks (T) in the optimiser's order (rotations, then translations, then
    scales) as the kernels take them, the same for every segment of a compression:
    tracks (5, T) (rates and order still to fill) and joints (4, J + 1) with every joint's
    tracks (TRACK_PTR into tracks[JOINT_TRACKS])."""

    tracks: Array
    joints: Array

    @classmethod
    def of(cls, track_joint: Array, track_kind: Array, h: Hierarchy) -> TrackTable:
        tracks = np.zeros((5, len(track_joint)), dtype=np.int64)
        tracks[TRACK_JOINT] = track_joint
        tracks[TRACK_KIND] = track_kind
        tracks[JOINT_TRACKS] = np.argsort(track_joint, kind="stable")
        joints = h.joints.copy()
        joints[TRACK_PTR] = np.searchsorted(
            track_joint[tracks[JOINT_TRACKS]], np.arange(len(h.parents) + 1)
        )
        return cls(tracks, joints)


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
    chain = h.lists[CHAIN]
    total = np.add.reduceat(dom_dist[chain], h.joints[CHAIN_PTR, :-1])
    return precision - FLOAT64_SLACK * total


def optimize_segment(p: SegmentProblem, h: Hierarchy, level: str) -> tuple[Array, Array, Array]:
    """Bit rates (T,), the joints (J,) bool that cannot meet their precision, and the
    quantised samples (n, T, 3) uint32 at those rates (raw rate: float32 bits)."""
    code = LEVELS[level]
    m, num_joints = p.raw.shape[:2]
    steps = 2 if code == 2 else 1
    qvv = np.empty((2, m, num_joints, 10))
    qvv[RAW] = p.raw
    qvv[CUR] = p.base
    per_joint = np.stack((p.shell, bounds(h, p.dom_dist, p.precision), p.dom_dist, p.dom_prec))
    tracks = p.tracks.tracks.copy()  # the kernel fills in rates and order
    stored = np.stack((p.unit, p.raw_values))
    flags = np.zeros((2, num_joints), dtype=np.bool_)
    q = np.empty(p.unit.shape, dtype=np.uint32)
    raw_bits = np.ascontiguousarray(p.raw_values).view(np.uint32)
    _solve(
        p.rows,
        stored,
        raw_bits,
        p.lay,
        p.dec,
        tracks,
        p.tracks.joints,
        h.lists,
        qvv,
        per_joint,
        flags,
        p.cost,
        SLACK_ROUNDS[code],
        steps,
        h.max_depth,
        q,
    )
    return tracks[RATE].copy(), flags[STUCK].copy(), q


@kernel
def _solve(
    rows,
    stored,
    raw_bits,
    lay,
    dec,
    tracks,
    joints,
    lists,
    qvv,
    per_joint,
    flags,
    cost,
    slack_rounds,
    steps,
    max_depth,
    q,
):
    """The three passes on one segment (optimize_segment), then its samples quantised at the
    chosen rates into q (n, T, 3)."""
    m = qvv.shape[1]
    num_joints = qvv.shape[2]
    t = tracks.shape[1]
    mats = np.empty((4, m, num_joints, 12))
    cand = np.empty((t, NUM_BIT_RATES, m, 4))
    have = np.zeros((t, NUM_BIT_RATES), dtype=np.bool_)
    scratch = np.empty((3, 12))
    qi = np.zeros(3, dtype=np.uint32)
    out4 = np.zeros(4, dtype=np.float32)
    rel = np.empty((max_depth, m, 12))
    picks = np.empty((2, t * steps), dtype=np.int64)
    errs = np.empty(t * steps)
    sub = np.empty((num_joints, 12))
    _lower_bound(
        rows,
        stored,
        lay,
        dec,
        cand,
        have,
        qi,
        out4,
        tracks,
        joints,
        lists,
        qvv,
        mats,
        per_joint,
        scratch,
        flags,
    )
    for _ in range(REPAIR_SWEEPS):
        if _repair_sweep(
            rows,
            stored,
            lay,
            dec,
            cand,
            have,
            qi,
            out4,
            tracks,
            joints,
            lists,
            qvv,
            mats,
            per_joint,
            scratch,
            flags,
            cost,
            steps,
            rel,
            picks,
            errs,
        ):
            break
    for _ in range(slack_rounds):
        if not _slack_round(
            rows,
            stored,
            lay,
            dec,
            cand,
            have,
            qi,
            out4,
            tracks,
            joints,
            lists,
            qvv,
            mats,
            per_joint,
            scratch,
            cost,
            sub,
        ):
            break
    unit = stored[UNIT]
    for s in range(q.shape[0]):  # _quantized: quantize.quantize at each track's rate
        for k in range(t):
            r = tracks[RATE, k]
            scale = float((1 << r) - 1)
            for c in range(3):
                if r == RAW_BIT_RATE:
                    q[s, k, c] = raw_bits[s, k, c]
                elif r > 0:
                    q[s, k, c] = np.uint32(np.floor(np.float64(unit[s, k, c]) * scale + 0.5))
                else:
                    q[s, k, c] = 0


# --- shared helpers -----------------------------------------------------------------------
# cand (T, R, m, 4) decoded candidates, have (T, R) which are filled.


@inlined
def _candidate(t, r, rows, stored, lay, dec, cand, have, qi, out4):
    """Decode track t at rate r for every row into cand[t, r] (once)."""
    if have[t, r]:
        return
    scale = float((1 << r) - 1)
    for i in range(rows.shape[0]):
        s = rows[i]
        if i > 0 and s == rows[0]:  # the wrapped-in row repeats the first sample
            for c in range(4):
                cand[t, r, i, c] = cand[t, r, 0, c]
            continue
        if 0 < r < RAW_BIT_RATE:
            for k in range(3):  # codec.codecs.acl_style.quantize.quantize, one value at a time
                qi[k] = np.uint32(np.floor(np.float64(stored[UNIT, s, t, k]) * scale + 0.5))
        out4[3] = 0.0
        decode_value(qi, stored[RAW_VALUES, s, t], r, lay[t], dec[t], out4)
        n = 0.0
        for c in range(4):
            cand[t, r, i, c] = np.float64(out4[c])
            n += cand[t, r, i, c] * cand[t, r, i, c]
        if lay[t, 3] >= 0:  # a rotation means the unit quaternion (codec.model.clip.Clip)
            n = np.sqrt(n)
            for c in range(4):
                cand[t, r, i, c] = cand[t, r, i, c] / n
    have[t, r] = True


@inlined
def _set_local(t, r, cand, tracks, qvv, mats):
    """Put track t at rate r; rebuild its joint's local matrices (not its subtree's objects:
    the first pass, which reads none, builds them all once at its end)."""
    tracks[RATE, t] = r
    j = tracks[TRACK_JOINT, t]
    kind = tracks[TRACK_KIND, t]
    m = qvv.shape[1]
    off = 0 if kind == 0 else (4 if kind == 1 else 7)
    for i in range(m):
        for c in range(4 if kind == 0 else 3):
            qvv[CUR, i, j, off + c] = cand[t, r, i, c]
        qvv_matrix(qvv[CUR, i, j], mats[LOCAL, i, j])


@inlined
def _set_rate(t, r, cand, tracks, joints, lists, qvv, mats):
    """Put track t at rate r; rebuild its joint's local matrices and its subtree's objects."""
    _set_local(t, r, cand, tracks, qvv, mats)
    j = tracks[TRACK_JOINT, t]
    m = qvv.shape[1]
    for a in range(joints[SUB_PTR, j], joints[SUB_PTR, j + 1]):
        d = lists[SUBTREE, a]
        p = joints[PARENT, d]
        for i in range(m):
            if p < 0:
                for x in range(12):
                    mats[OBJ, i, d, x] = mats[LOCAL, i, d, x]
            else:
                compose(mats[OBJ, i, p], mats[LOCAL, i, d], mats[OBJ, i, d])


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
def _lower_bound(
    rows,
    stored,
    lay,
    dec,
    cand,
    have,
    qi,
    out4,
    tracks,
    joints,
    lists,
    qvv,
    mats,
    per_joint,
    scratch,
    flags,
):
    for i in range(qvv.shape[1]):  # raw local and object, starting lossy local matrices
        for j in range(qvv.shape[2]):
            qvv_matrix(qvv[RAW, i, j], mats[RAW_LOCAL, i, j])
            qvv_matrix(qvv[CUR, i, j], mats[LOCAL, i, j])
            p = joints[PARENT, j]
            if p < 0:
                for x in range(12):
                    mats[RAW_OBJ, i, j, x] = mats[RAW_LOCAL, i, j, x]
            else:
                compose(mats[RAW_OBJ, i, p], mats[RAW_LOCAL, i, j], mats[RAW_OBJ, i, j])
    m = rows.shape[0]
    num_joints = qvv.shape[2]
    v10, m4 = scratch[0], scratch[1]
    for t in range(tracks.shape[1]):
        j = tracks[TRACK_JOINT, t]
        chosen = RAW_BIT_RATE + t * 0  # a variable, so numba does not specialise on it
        for r in range(NUM_BIT_RATES):
            _candidate(t, r, rows, stored, lay, dec, cand, have, qi, out4)
            ok = True
            for i in range(m):
                _local_with(qvv[RAW, i, j], tracks[TRACK_KIND, t], cand[t, r, i], v10, m4)
                if (
                    shell_error(mats[RAW_LOCAL, i, j], m4, per_joint[DOM_DIST, j])
                    > per_joint[DOM_PREC, j]
                ):
                    ok = False
                    break
            if ok:
                chosen = r
                break
        _candidate(t, chosen, rows, stored, lay, dec, cand, have, qi, out4)
        _set_local(t, chosen, cand, tracks, qvv, mats)
    # the combination of a joint's sub-tracks must meet the bound as well
    for _ in range(3 * NUM_BIT_RATES):
        for j in range(num_joints):
            worst = 0.0
            for i in range(m):
                e = shell_error(mats[RAW_LOCAL, i, j], mats[LOCAL, i, j], per_joint[DOM_DIST, j])
                worst = max(worst, e)
            flags[BAD, j] = worst > per_joint[DOM_PREC, j]
        progressed = False
        for j in range(num_joints):
            if not flags[BAD, j]:
                continue
            best = tracks.shape[1]
            best_own = -1.0
            for a in range(joints[TRACK_PTR, j], joints[TRACK_PTR, j + 1]):
                t = tracks[JOINT_TRACKS, a]
                r = tracks[RATE, t]
                if r >= RAW_BIT_RATE:
                    continue
                own = 0.0
                for i in range(m):  # the sub-track's own error, the others raw
                    _local_with(qvv[RAW, i, j], tracks[TRACK_KIND, t], cand[t, r, i], v10, m4)
                    own = max(own, shell_error(mats[RAW_LOCAL, i, j], m4, per_joint[DOM_DIST, j]))
                if own > best_own:
                    best_own = own
                    best = t
            if best < tracks.shape[1]:
                r = tracks[RATE, best] + 1
                _candidate(best, r, rows, stored, lay, dec, cand, have, qi, out4)
                _set_local(best, r, cand, tracks, qvv, mats)
                progressed = True
        if not progressed:
            break
    for i in range(m):  # the lossy object matrices of the rates chosen
        for j in range(num_joints):
            p = joints[PARENT, j]
            if p < 0:
                for x in range(12):
                    mats[OBJ, i, j, x] = mats[LOCAL, i, j, x]
            else:
                compose(mats[OBJ, i, p], mats[LOCAL, i, j], mats[OBJ, i, j])


# --- pass 2: object-space repair ----------------------------------------------------------


@helper
def _repair_sweep(
    rows,
    stored,
    lay,
    dec,
    cand,
    have,
    qi,
    out4,
    tracks,
    joints,
    lists,
    qvv,
    mats,
    per_joint,
    scratch,
    flags,
    cost,
    steps,
    rel,
    picks,
    errs,
):
    """One parents-first walk raising rates until every joint meets its bound. Returns True
    when the walk is over: every joint within its bound, or some joint that cannot be."""
    m = rows.shape[0]
    num_joints = qvv.shape[2]
    v10, m4, m5 = scratch[0], scratch[1], scratch[2]
    top = RAW_BIT_RATE + m * 0  # a variable, so numba does not specialise on it
    any_stuck = False
    for j in range(num_joints):
        shell = per_joint[SHELL, j]
        bound = per_joint[BOUND, j]
        err = 0.0
        for i in range(m):
            err = max(err, shell_error(mats[RAW_OBJ, i, j], mats[OBJ, i, j], shell))
        guard = 0
        unreachable = False
        c0 = joints[CHAIN_PTR, j]
        depth = joints[CHAIN_PTR, j + 1] - c0
        while err > bound and guard < MAX_RAISES:
            guard += 1
            if guard == REACH_CHECK_AFTER:  # would raw floats on the whole chain do?
                reach = 0.0
                for i in range(m):
                    for z in range(c0, c0 + depth):
                        a = lists[CHAIN, z]
                        for c in range(10):
                            v10[c] = qvv[CUR, i, a, c]
                        for y in range(joints[TRACK_PTR, a], joints[TRACK_PTR, a + 1]):
                            t = tracks[JOINT_TRACKS, y]
                            _candidate(t, top, rows, stored, lay, dec, cand, have, qi, out4)
                            kind = tracks[TRACK_KIND, t]
                            off = 0 if kind == 0 else (4 if kind == 1 else 7)
                            for c in range(4 if kind == 0 else 3):
                                v10[off + c] = cand[t, top, i, c]
                        if z == c0:
                            qvv_matrix(v10, m5)
                        else:
                            qvv_matrix(v10, m4)
                            compose(m5, m4, m5)
                    reach = max(reach, shell_error(mats[RAW_OBJ, i, j], m5, shell))
                unreachable = reach > bound
            # rel[k]: from chain joint k's space to j's (identity for j itself)
            for i in range(m):
                for x in range(12):
                    rel[depth - 1, i, x] = 1.0 if x == 0 or x == 5 or x == 10 else 0.0
            for k in range(depth - 2, -1, -1):
                b = lists[CHAIN, c0 + k + 1]
                for i in range(m):
                    compose(mats[LOCAL, i, b], rel[k + 1, i], rel[k, i])
            nc = 0
            for k in range(depth):
                a = lists[CHAIN, c0 + k]
                par = joints[PARENT, a]
                for z in range(joints[TRACK_PTR, a], joints[TRACK_PTR, a + 1]):
                    t = tracks[JOINT_TRACKS, z]
                    for s in range(1, steps + 1):
                        rr = tracks[RATE, t] + s
                        if rr > RAW_BIT_RATE:
                            continue
                        _candidate(t, rr, rows, stored, lay, dec, cand, have, qi, out4)
                        worst = 0.0
                        for i in range(m):
                            _local_with(
                                qvv[CUR, i, a], tracks[TRACK_KIND, t], cand[t, rr, i], v10, m4
                            )
                            if par >= 0:
                                compose(mats[OBJ, i, par], m4, m4)
                            compose(m4, rel[k, i], m5)
                            worst = max(worst, shell_error(mats[RAW_OBJ, i, j], m5, shell))
                        picks[0, nc] = t
                        picks[1, nc] = rr
                        errs[nc] = worst
                        nc += 1
            pick = -1
            best_added = 0
            best_e = 0.0
            for c in range(nc):  # a raise that meets the bound: cheapest, then smallest error
                if errs[c] <= bound:
                    added = cost[picks[1, c]] - cost[tracks[RATE, picks[0, c]]]
                    if pick < 0 or added < best_added or (added == best_added and errs[c] < best_e):
                        pick, best_added, best_e = c, added, errs[c]
            if pick < 0:  # else the most error removed per added bit
                best_gain = 0.0
                for c in range(nc):
                    gain = err - errs[c]
                    if gain > 0.0:
                        g = gain / max(cost[picks[1, c]] - cost[tracks[RATE, picks[0, c]]], 1)
                        if pick < 0 or g > best_gain:
                            pick, best_gain = c, g
            if pick < 0:
                if unreachable or nc == 0:  # nothing brings it closer: keep the closest
                    break
                for c in range(nc):  # nothing helps on its own: raise the lowest rate (ACL)
                    added = cost[picks[1, c]] - cost[tracks[RATE, picks[0, c]]]
                    rc = tracks[RATE, picks[0, c]]
                    if (
                        pick < 0
                        or rc < tracks[RATE, picks[0, pick]]
                        or (rc == tracks[RATE, picks[0, pick]] and added < best_added)
                    ):
                        pick, best_added = c, added
            _set_rate(picks[0, pick], picks[1, pick], cand, tracks, joints, lists, qvv, mats)
            err = 0.0
            for i in range(m):
                err = max(err, shell_error(mats[RAW_OBJ, i, j], mats[OBJ, i, j], shell))
        if err > bound:
            flags[STUCK, j] = True
            any_stuck = True
            per_joint[BOUND, j] = err  # the closest result is what slack removal must keep
    if any_stuck:
        return True
    for j in range(num_joints):
        for i in range(m):
            if (
                shell_error(mats[RAW_OBJ, i, j], mats[OBJ, i, j], per_joint[SHELL, j])
                > per_joint[BOUND, j]
            ):
                return False
    return True


# --- pass 3: slack removal ----------------------------------------------------------------


@helper
def _slack_round(
    rows,
    stored,
    lay,
    dec,
    cand,
    have,
    qi,
    out4,
    tracks,
    joints,
    lists,
    qvv,
    mats,
    per_joint,
    scratch,
    cost,
    sub,
):
    """Lower every track, most expensive first, as far as its subtree allows; returns
    whether anything changed."""
    m = rows.shape[0]
    num_tracks = tracks.shape[1]
    v10, m4 = scratch[0], scratch[1]
    for t in range(num_tracks):  # stable order by cost, highest first (insertion sort)
        k = t
        while k > 0 and cost[tracks[RATE, tracks[ORDER, k - 1]]] < cost[tracks[RATE, t]]:
            tracks[ORDER, k] = tracks[ORDER, k - 1]
            k -= 1
        tracks[ORDER, k] = t
    changed = False
    for oi in range(num_tracks):
        t = tracks[ORDER, oi]
        j = tracks[TRACK_JOINT, t]
        kind = tracks[TRACK_KIND, t]
        par = joints[PARENT, j]
        for lower in range(tracks[RATE, t]):
            _candidate(t, lower, rows, stored, lay, dec, cand, have, qi, out4)
            ok = True
            for i in range(m):  # the joint itself first: it fails most often
                _local_with(qvv[CUR, i, j], kind, cand[t, lower, i], v10, m4)
                if par >= 0:
                    compose(mats[OBJ, i, par], m4, m4)
                if shell_error(mats[RAW_OBJ, i, j], m4, per_joint[SHELL, j]) > per_joint[BOUND, j]:
                    ok = False
                    break
            i = 0
            while ok and i < m:
                _local_with(qvv[CUR, i, j], kind, cand[t, lower, i], v10, sub[j])
                if par >= 0:
                    compose(mats[OBJ, i, par], sub[j], sub[j])
                for a in range(joints[SUB_PTR, j] + 1, joints[SUB_PTR, j + 1]):
                    d = lists[SUBTREE, a]
                    compose(sub[joints[PARENT, d]], mats[LOCAL, i, d], sub[d])
                    if (
                        shell_error(mats[RAW_OBJ, i, d], sub[d], per_joint[SHELL, d])
                        > per_joint[BOUND, d]
                    ):
                        ok = False
                        break
                i += 1
            if ok:
                _set_rate(t, lower, cand, tracks, joints, lists, qvv, mats)
                changed = True
                break
    return changed
