"""Choosing bit rates: the cheapest set that keeps every joint within its precision.

Works one segment at a time (segments share nothing but the clip ranges). The search
has three passes:

1. Local lower bound: each animated sub-track alone gets the cheapest rate whose
   local-space error on the joint's dominant shell is within the dominant precision, then
   each joint's sub-tracks are raised together until their combination meets it too.
2. Object-space repair, parents first: a joint whose error on its own shell exceeds its
   precision gets one step more on the sub-track of its chain that buys the most error
   reduction per added bit (ACL raises greedily along the chain; we price every step).
3. Slack removal (what ACL lacks): every sub-track, most expensive first, drops to the
   cheapest rate at which its whole subtree still meets precision, checked exactly.

Levels: medium runs one slack round, high two, highest three and also weighs two-step
raises in the repair pass.

All error checks go through the same float32 dequantisation as the decoder, on object
space 3x4 matrices, at every sample of the segment (and the wrapped-in last sample of a
looping clip, which the decoder rebuilds from sample 0).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from codec.error_metric import shell_error
from codec.result import BIT_RATE_BITS, NUM_BIT_RATES, RAW_BIT_RATE
from codec.transforms import compose, qvv_to_matrix

Array = np.ndarray

SLACK_ROUNDS = {"medium": 1, "high": 2, "highest": 3}


def rate_cost_bits(num_samples: int, multi_segment: bool) -> Array:
    """(25,) bits one animated sub-track costs in a segment at each rate index."""
    bits = BIT_RATE_BITS * 3 * num_samples
    rng = 48 if multi_segment else 0
    cost = bits + rng
    cost[0] = 48  # one 16-bit value per component
    cost[RAW_BIT_RATE] = 96 * num_samples  # raw floats carry no range
    return cost.astype(np.int64)


@dataclass(eq=False)
class SegmentProblem:
    """One segment's inputs. m rows are compared; `rows (m,)` maps them to stored samples.

    raw_local / raw_obj (m, J, 3, 4); candidates: per kind (rotation, translation, scale)
    an array (25, n, K_kind, 4|3) float64 of decoded values at every rate, with
    `cand_joint[kind] (K_kind,)` the joints they belong to and `cand_index[kind]` their
    position in the clip's animated sub-track list; base_* (J, 4|3) the fixed values of
    default and constant sub-tracks; raw_rot / raw_tr / raw_sc (m, J, 4|3) the raw values.
    """

    raw_local: Array
    raw_obj: Array
    raw_rot: Array
    raw_tr: Array
    raw_sc: Array
    rows: Array
    num_samples: int
    candidates: list[Array]
    cand_joint: list[Array]
    cand_index: list[Array]
    base_rot: Array
    base_tr: Array
    base_sc: Array
    parents: Array
    levels: list[Array]
    shell: Array
    precision: Array
    dom_dist: Array
    dom_prec: Array
    multi_segment: bool


class SegmentOptimizer:
    """Holds the current lossy state of one segment and searches its bit rates."""

    def __init__(self, p: SegmentProblem, level: str, cancel: Callable[[], None]) -> None:
        self.p = p
        self.level = level
        self.cancel = cancel
        self.cost = rate_cost_bits(p.num_samples, p.multi_segment)
        self.num_joints = len(p.parents)
        # sub-tracks of every joint: list of (kind, position in that kind's candidates)
        self.tracks: list[tuple[int, int]] = []
        for kind in range(3):
            for pos in range(len(p.cand_joint[kind])):
                self.tracks.append((kind, pos))
        self.track_joint = np.array(
            [p.cand_joint[k][i] for k, i in self.tracks], dtype=np.int64
        ).reshape(-1)
        self.rates = np.zeros(len(self.tracks), dtype=np.int64)
        m = len(p.rows)
        self.rot = np.repeat(p.base_rot[None], m, axis=0)
        self.tr = np.repeat(p.base_tr[None], m, axis=0)
        self.sc = np.repeat(p.base_sc[None], m, axis=0)
        self._local = qvv_to_matrix(self.rot, self.tr, self.sc)
        self._obj: Array | None = None
        self._rel: dict[int, Array] = {}
        self.children = [np.flatnonzero(p.parents == j) for j in range(self.num_joints)]
        self.chain = [self._chain(j) for j in range(self.num_joints)]
        self.subtree = [self._subtree(j) for j in range(self.num_joints)]
        self.joint_tracks = [np.flatnonzero(self.track_joint == j) for j in range(self.num_joints)]

    # --- structure --------------------------------------------------------------------
    def _chain(self, j: int) -> Array:
        out = []
        while j >= 0:
            out.append(j)
            j = int(self.p.parents[j])
        return np.array(out[::-1], dtype=np.int64)

    def _subtree(self, j: int) -> Array:
        out = [j]
        i = 0
        while i < len(out):
            out.extend(int(c) for c in self.children[out[i]])
            i += 1
        return np.array(out, dtype=np.int64)

    # --- state ------------------------------------------------------------------------
    def set_rate(self, t: int, rate: int) -> None:
        self.rates[t] = rate
        kind, pos = self.tracks[t]
        j = self.track_joint[t]
        target = (self.rot, self.tr, self.sc)[kind]
        target[:, j] = self.p.candidates[kind][rate, :, pos][self.p.rows]
        self._local[:, j] = qvv_to_matrix(self.rot[:, j], self.tr[:, j], self.sc[:, j])
        self._obj = None
        for a in self.chain[j][:-1]:  # a joint's relative subtree holds its descendants' locals
            self._rel.pop(int(a), None)

    def local(self) -> Array:
        """Current lossy local matrices (m, J, 3, 4), kept up to date by set_rate."""
        return self._local

    def object(self) -> Array:
        """Current lossy object-space matrices (m, J, 3, 4), cached until a rate changes."""
        if self._obj is None:
            m = self._local.copy()
            par = self.p.parents
            for level in self.p.levels[1:]:
                m[:, level] = compose(m[:, par[level]], m[:, level])
            self._obj = m
        return self._obj

    def errors(self) -> Array:
        """(J,) worst object-space error of each joint over the segment's rows."""
        return shell_error(self.p.raw_obj, self.object(), self.p.shell).max(axis=0)

    def _joint_local_with(self, t: int, rates: Array) -> Array:
        """Local matrices (C, m, 3, 4) of track t's joint with track t at each rate."""
        kind, pos = self.tracks[t]
        j = self.track_joint[t]
        vals = self.p.candidates[kind][rates, :, pos][:, self.p.rows]  # (C, m, 4|3)
        parts = [
            np.broadcast_to(a[:, j], (len(rates), *a[:, j].shape))
            for a in (self.rot, self.tr, self.sc)
        ]
        parts[kind] = vals
        return qvv_to_matrix(*parts)

    # --- pass 1 -----------------------------------------------------------------------
    def local_lower_bound(self) -> None:
        p = self.p
        rates_all = np.arange(NUM_BIT_RATES)
        for t in range(len(self.tracks)):
            j = self.track_joint[t]
            err = shell_error(
                p.raw_local[:, j], self._raw_joint_local_with(t, rates_all), p.dom_dist[j]
            ).max(axis=1)
            ok = np.flatnonzero(err <= p.dom_prec[j])
            self.set_rate(t, int(ok[0]) if len(ok) else RAW_BIT_RATE)
        # the combination of a joint's sub-tracks must meet the bound as well
        for _ in range(3 * NUM_BIT_RATES):
            err = shell_error(p.raw_local, self.local(), p.dom_dist).max(axis=0)
            bad = np.flatnonzero(err > p.dom_prec)
            progressed = False
            for j in bad:
                tracks = [t for t in self.joint_tracks[j] if self.rates[t] < RAW_BIT_RATE]
                if not tracks:
                    continue
                # raise the sub-track whose own error is largest at its current rate
                own = [
                    shell_error(
                        p.raw_local[:, j],
                        self._raw_joint_local_with(t, np.array([self.rates[t]]))[0],
                        p.dom_dist[j],
                    ).max()
                    for t in tracks
                ]
                t = tracks[int(np.argmax(own))]
                self.set_rate(t, int(self.rates[t]) + 1)
                progressed = True
            if not progressed:
                break

    def _raw_joint_local_with(self, t: int, rates: Array) -> Array:
        """Local matrices (C, m, 3, 4) of track t's joint: raw, but track t at `rates`."""
        kind, pos = self.tracks[t]
        j = self.track_joint[t]
        vals = self.p.candidates[kind][rates, :, pos][:, self.p.rows]
        raw = (self.p.raw_rot[:, j], self.p.raw_tr[:, j], self.p.raw_sc[:, j])
        parts = [np.broadcast_to(a, (len(rates), *a.shape)) for a in raw]
        parts[kind] = vals
        return qvv_to_matrix(*parts)

    # --- pass 2 -----------------------------------------------------------------------
    def repair(self) -> Array:
        """Raise rates until every joint meets its precision; returns joints that cannot."""
        p = self.p
        stuck = []
        obj = self.object()
        for j in range(self.num_joints):
            self.cancel()
            err = shell_error(p.raw_obj[:, j], obj[:, j], p.shell[j]).max()
            guard = 0
            while err > p.precision[j] and guard < 400:
                guard += 1
                if guard == 8 and not self._reachable(j):
                    # not even raw floats on the whole chain meet it: keep the closest result
                    for i in self.chain[j]:
                        for t in self.joint_tracks[i]:
                            self.set_rate(int(t), RAW_BIT_RATE)
                    obj = self.object()
                    stuck.append(j)
                    break
                chosen = self._best_raise(j, obj, err)
                if chosen is None:
                    stuck.append(j)
                    break
                t, rate = chosen
                self.set_rate(t, rate)
                obj = self.object()
                err = shell_error(p.raw_obj[:, j], obj[:, j], p.shell[j]).max()
        return np.array(stuck, dtype=np.int64)

    def _reachable(self, j: int) -> bool:
        """Whether raw rates on every animated sub-track of j's chain meet j's precision."""
        saved = self.rates.copy()
        tracks = [int(t) for i in self.chain[j] for t in self.joint_tracks[i]]
        for t in tracks:
            self.set_rate(t, RAW_BIT_RATE)
        p = self.p
        ok = bool(
            shell_error(p.raw_obj[:, j], self.object()[:, j], p.shell[j]).max() <= p.precision[j]
        )
        for t in tracks:
            self.set_rate(t, int(saved[t]))
        return ok

    def _best_raise(self, j: int, obj: Array, err: float) -> tuple[int, int] | None:
        p = self.p
        chain = self.chain[j]
        local = self.local()
        # relative transform from each chain joint's space to j's: suffix products
        rel = {int(chain[-1]): None}
        acc = None
        for a, b in zip(chain[::-1][:-1], chain[::-1][1:], strict=True):
            acc = local[:, a] if acc is None else compose(local[:, a], acc)
            rel[int(b)] = acc
        steps = (1, 2) if self.level == "highest" else (1,)
        cands: list[tuple[int, int]] = []
        mats = []
        for i in chain:
            for t in self.joint_tracks[i]:
                r = int(self.rates[t])
                new = [r + s for s in steps if r + s <= RAW_BIT_RATE]
                if not new:
                    continue
                m_i = self._joint_local_with(t, np.array(new))  # (C, m, 3, 4)
                par = p.parents[i]
                if par >= 0:
                    m_i = compose(obj[:, par], m_i)
                if rel[int(i)] is not None:
                    m_i = compose(m_i, rel[int(i)])
                mats.append(m_i)
                cands.extend((int(t), rr) for rr in new)
        if not cands:
            return None
        errs = shell_error(p.raw_obj[:, j], np.concatenate(mats), p.shell[j]).max(axis=1)
        added = np.array([self.cost[r] - self.cost[self.rates[t]] for t, r in cands], float)
        ok = np.flatnonzero(errs <= p.precision[j])
        if len(ok):
            best = ok[np.lexsort((errs[ok], added[ok]))[0]]
            return cands[best]
        gain = err - errs
        if np.any(gain > 0):
            return cands[int(np.argmax(gain / np.maximum(added, 1.0)))]
        # nothing helps on its own: raise the lowest rate on the chain (ACL's fallback)
        lowest = min(range(len(cands)), key=lambda c: (self.rates[cands[c][0]], added[c]))
        return cands[lowest]

    # --- pass 3 -----------------------------------------------------------------------
    def remove_slack(self, rounds: int) -> None:
        p = self.p
        for _ in range(rounds):
            changed = False
            order = np.argsort(-self.cost[self.rates], kind="stable")
            for t in order:
                self.cancel()
                r = int(self.rates[t])
                if r == 0:
                    continue
                j = int(self.track_joint[t])
                sub = self.subtree[j]
                lower = np.arange(r)
                obj = self.object()
                rel = self._relative_subtree(j)
                m_j = self._joint_local_with(int(t), lower)  # (C, m, 3, 4)
                par = p.parents[j]
                if par >= 0:
                    m_j = compose(obj[:, par], m_j)
                objs = compose(m_j[:, :, None], rel[None])  # (C, m, D, 3, 4)
                errs = shell_error(p.raw_obj[:, sub], objs, p.shell[sub]).max(axis=1)
                ok = np.flatnonzero(np.all(errs <= p.precision[sub], axis=1))
                if len(ok):
                    self.set_rate(int(t), int(lower[ok[0]]))
                    changed = True
            if not changed:
                break

    def _relative_subtree(self, j: int) -> Array:
        """(m, D, 3, 4) transform of every joint of j's subtree relative to j's space."""
        if j not in self._rel:
            self._rel[j] = self._compute_relative_subtree(j)
        return self._rel[j]

    def _compute_relative_subtree(self, j: int) -> Array:
        sub = self.subtree[j]
        local = self.local()
        pos = {int(d): i for i, d in enumerate(sub)}
        rel = np.empty((local.shape[0], len(sub), 3, 4))
        rel[:, 0] = np.eye(3, 4)
        # subtree is in breadth-first order: parents are always filled before children
        depth = np.zeros(len(sub), dtype=np.int64)
        for i, d in enumerate(sub[1:], start=1):
            depth[i] = depth[pos[int(self.p.parents[d])]] + 1
        for dep in range(1, int(depth.max(initial=0)) + 1):
            idx = np.flatnonzero(depth == dep)
            parent_pos = np.array([pos[int(self.p.parents[sub[i]])] for i in idx])
            rel[:, idx] = compose(rel[:, parent_pos], local[:, sub[idx]])
        return rel

    def run(self) -> Array:
        """Returns the joints that cannot meet their precision (empty when all do)."""
        self.local_lower_bound()
        # raising one chain can, rarely, undo an error that cancelled on a sibling: re-walk
        for _ in range(6):
            stuck = self.repair()
            if len(stuck) or np.all(self.errors() <= self.p.precision):
                break
        self.remove_slack(SLACK_ROUNDS.get(self.level, 1))
        return stuck
