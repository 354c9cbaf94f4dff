"""The view's palette and the error colour map, shared by the 3D view and its colour bar.

Qt-free so the mesh code and tests use the very same numbers the legend shows.
"""

from __future__ import annotations

import numpy as np

Array = np.ndarray

RAW = (0.30, 0.55, 1.00, 0.5)  # translucent blue sleeve around each lossy bone
RAW_JOINT = (0.45, 0.70, 1.00, 1.0)
SELECTED = (1.00, 0.25, 0.95, 1.0)  # magenta: never on the error map
DOMINANT_SHELL = (1.00, 0.62, 0.15, 0.16)
DOMINANT_SHELL_MANY_ALPHA = 0.035
OWN_SHELL = (0.25, 0.95, 0.95, 0.9)
BACKGROUND = (22, 24, 30)
GRID = (90, 95, 105, 140)

# error / precision -> colour: green at 0, yellow at 0.5, red from 1 on
ERROR_STOPS = np.array([0.0, 0.5, 1.0])
ERROR_COLORS = np.array([[0.20, 0.85, 0.30], [1.00, 0.85, 0.10], [0.95, 0.15, 0.10]])


def error_colors(ratio: Array, alpha: float = 1.0) -> Array:
    """(N, 4) RGBA for error / precision ratios (N,); red saturates at 1 (= precision)."""
    r = np.clip(np.nan_to_num(np.asarray(ratio, dtype=np.float64), nan=0.0), 0.0, 1.0)
    rgb = np.stack([np.interp(r, ERROR_STOPS, ERROR_COLORS[:, k]) for k in range(3)], axis=-1)
    return np.concatenate([rgb, np.full((*r.shape, 1), alpha)], axis=-1)
