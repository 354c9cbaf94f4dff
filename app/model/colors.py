"""The 3D view's palette. Qt-free so the mesh code and tests use the very numbers drawn.

Error colours are not here: every view takes them from `app.model.error_scale`, the one scale.
"""

from __future__ import annotations

import numpy as np

from app.model.error_scale import error_colors

Array = np.ndarray

RAW = (0.35, 0.62, 1.00, 0.30)  # translucent blue sleeve around each lossy bone
RAW_JOINT = (0.50, 0.74, 1.00, 1.0)
ROOT = (0.72, 0.86, 1.00, 0.95)  # a root joint: a pale disc under the raw joint's dot
SELECTED = (1.00, 0.25, 0.95, 1.0)  # magenta: never on the error scale
DOMINANT_SHELL = (1.00, 0.62, 0.15, 0.16)
DOMINANT_SHELL_OUTLINE = (1.00, 0.70, 0.30, 0.85)
OWN_SHELL = (0.25, 0.95, 0.95, 0.9)
BACKGROUND = (52, 55, 61)  # a mid-dark studio grey: shells, ghosts and greys all read on it
GRID = (150, 155, 165, 70)
LOSSY_SWATCH = tuple(float(c) for c in error_colors(0.0)[:3]) + (1.0,)

__all__ = ["error_colors"]
