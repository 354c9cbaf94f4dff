"""The shape of a joint hierarchy, from its parents array alone.

`parents (J,)` holds each joint's parent, -1 for a root, and every parent comes before its
children (codec.model.clip.Skeleton checks that), so one pass in index order sees a parent before
its children. `Skeleton` exposes these as methods; the maths below the skeleton
(codec.model.transforms) and the optimiser's kernel tables take the parents array.
"""

from __future__ import annotations

import numpy as np

Array = np.ndarray


def depths(parents: Array) -> Array:
    """(J,) number of ancestors of every joint (0 for a root)."""
    depth = [0] * len(parents)
    for j, p in enumerate(np.asarray(parents).tolist()):  # parents first: one pass suffices
        if p >= 0:  # Python ints: a fresh skeleton's first level choice pays this per run
            depth[j] = depth[p] + 1
    return np.array(depth, dtype=np.int64)


def depth_levels(parents: Array) -> list[Array]:
    """Joint indices grouped by depth (roots first), so each level composes in one batch."""
    depth = depths(parents)
    return [np.flatnonzero(depth == d) for d in range(int(depth.max(initial=-1)) + 1)]


def longest_chain(parents: Array) -> int:
    """Number of joints on the longest root-to-leaf chain."""
    return int(depths(parents).max(initial=-1)) + 1


def children(parents: Array, joint: int) -> Array:
    """Indices of the joint's children, ascending."""
    return np.flatnonzero(np.asarray(parents) == joint)


def chains(parents: Array) -> list[list[int]]:
    """Every joint's chain: its root first, the joint itself last."""
    out: list[list[int]] = []
    for j, p in enumerate(np.asarray(parents).tolist()):
        out.append((out[p] if p >= 0 else []) + [j])
    return out


def subtrees(parents: Array) -> list[list[int]]:
    """Every joint's subtree: the joint first, then its descendants in index order (so
    parents before children)."""
    subs: list[list[int]] = [[] for _ in range(len(parents))]
    for j, chain in enumerate(chains(parents)):  # ascending j: parents before children
        for ancestor in chain:
            subs[ancestor].append(j)
    return subs


def hierarchy_order(parents: Array) -> Array:
    """(J,) joint indices depth first, each joint's children under it in index order: the
    order of an outline of the skeleton."""
    parents = np.asarray(parents)
    kids: list[list[int]] = [[] for _ in range(len(parents))]
    roots = []
    for j, p in enumerate(parents.tolist()):
        (roots if p < 0 else kids[p]).append(j)
    order: list[int] = []
    stack = roots[::-1]
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(kids[j][::-1])
    return np.array(order, dtype=np.int64)


def with_ancestors(parents: Array, joints: Array) -> Array:
    """(J,) bool: the given joints (indices or a (J,) mask) and every ancestor of them."""
    parents = np.asarray(parents)
    keep = np.zeros(len(parents), dtype=bool)
    chosen = np.asarray(joints)
    keep[chosen if chosen.dtype == bool else chosen.astype(np.int64)] = True
    for j in range(len(parents) - 1, -1, -1):  # children after parents: walk backwards
        if keep[j] and parents[j] >= 0:
            keep[parents[j]] = True
    return keep
