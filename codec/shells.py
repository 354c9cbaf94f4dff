"""Dominant shells: how far, and how precisely, a joint's rotation must be kept.

A joint's error moves every descendant, so its rotation is judged on the farthest shell any
descendant puts in its space. Walking leaves to root, each joint pushes its current shell
through its own local transform at every sample; the largest reach, plus the joint's
precision (the error it may carry), becomes its parent's shell when it is farther. The
parent's precision becomes the tightest of its subtree's (ACL 2.1 takes the dominant
child's, which lets a loose leaf loosen its whole chain).
"""

from __future__ import annotations

import numpy as np

from codec.error_metric import shell_reach

Array = np.ndarray


def dominant_shells(
    local: Array, parents: Array, distance: Array, precision: Array
) -> tuple[Array, Array]:
    """Dominant shell distance and precision (J,) each, from local matrices (S, J, 3, 4)."""
    dist = np.array(distance, dtype=np.float64, copy=True)
    prec = np.array(precision, dtype=np.float64, copy=True)
    for j in range(len(parents) - 1, -1, -1):
        p = parents[j]
        if p < 0:
            continue
        reach = float(shell_reach(local[:, j], dist[j]).max()) + prec[j]
        if reach > dist[p]:
            dist[p] = reach
        # ACL hands the dominant child's precision up; the tightest one keeps the bound strict
        # when a child asks for less precision than its parent (ACL would loosen the parent)
        prec[p] = min(prec[p], prec[j])
    return dist, prec
