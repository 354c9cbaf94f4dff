"""Qt-free CPU picking: which joint lies under a mouse click.

The click defines a ray from the eye; a joint is hit when the ray passes within a pixel
tolerance of it, measured on screen (the same thing as a cone around the ray, so far and
near joints are equally easy to click). The nearest hit to the eye wins ties within a pixel.
"""

from __future__ import annotations

import numpy as np

Array = np.ndarray


def project(points: Array, mvp: Array, width: float, height: float) -> tuple[Array, Array]:
    """Screen positions (N, 2) in widget pixels (y down) and clip-space w (N,) of points.

    `mvp` is the 4x4 projection @ view matrix (column-vector convention); w > 0 means the
    point is in front of the eye.
    """
    p = np.asarray(points, dtype=np.float64)
    h = np.concatenate([p, np.ones((len(p), 1))], axis=1) @ np.asarray(mvp, dtype=np.float64).T
    w = h[:, 3]
    safe = np.where(np.abs(w) > 1e-12, w, 1e-12)
    ndc = h[:, :2] / safe[:, None]
    x = (ndc[:, 0] + 1.0) * 0.5 * width
    y = (1.0 - ndc[:, 1]) * 0.5 * height
    return np.stack([x, y], axis=1), w


def ray_through(mvp: Array, x: float, y: float, width: float, height: float) -> tuple[Array, Array]:
    """Origin and unit direction of the eye ray through widget pixel (x, y)."""
    inv = np.linalg.inv(np.asarray(mvp, dtype=np.float64))
    nx, ny = 2.0 * x / width - 1.0, 1.0 - 2.0 * y / height
    near = inv @ np.array([nx, ny, -1.0, 1.0])
    far = inv @ np.array([nx, ny, 1.0, 1.0])
    a, b = near[:3] / near[3], far[:3] / far[3]
    d = b - a
    return a, d / np.linalg.norm(d)


def pick(
    points: Array,
    mvp: Array,
    x: float,
    y: float,
    width: float,
    height: float,
    tolerance: float = 10.0,
) -> int | None:
    """Index of the joint nearest the ray through (x, y) within `tolerance` pixels, or None."""
    if len(points) == 0:
        return None
    screen, w = project(points, mvp, width, height)
    dist = np.hypot(screen[:, 0] - x, screen[:, 1] - y)
    ok = (w > 0) & (dist <= tolerance)
    if not np.any(ok):
        return None
    # closest on screen first; among those within a pixel of it, the nearest to the eye
    best = dist[ok].min()
    cand = np.flatnonzero(ok & (dist <= best + 1.0))
    return int(cand[np.argmin(w[cand])])
