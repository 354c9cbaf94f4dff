"""The one error number: distance between raw and lossy images of a joint's shell points.

A joint with shell distance d has shell points (d,0,0), (0,d,0), (0,0,d). Its error is the
largest distance between where the raw and the lossy transform put them. Given affine
matrices, that is max_i |d * D[:, i] + D[:, 3]| with D = raw - lossy, so no points are built.
"""

from __future__ import annotations

import numpy as np

Array = np.ndarray


def shell_error(raw: Array, lossy: Array, distance: Array) -> Array:
    """Error (...) between affine matrices raw and lossy (..., 3, 4) on shells `distance`.

    `distance` broadcasts against the leading axes (e.g. (J,) for (S, J, 3, 4) inputs).
    """
    d = raw - lossy
    lin = d[..., :3] * np.asarray(distance, dtype=d.dtype)[..., None, None]
    pts = lin + d[..., 3:4]  # (..., 3 coords, 3 points)
    return np.sqrt(np.max(np.sum(pts * pts, axis=-2), axis=-1))


def shell_reach(m: Array, distance: Array) -> Array:
    """Largest length |m (d e_i)| over the three shell points: how far a shell reaches
    in the parent's space under affine matrices m (..., 3, 4)."""
    lin = m[..., :3] * np.asarray(distance, dtype=m.dtype)[..., None, None]
    pts = lin + m[..., 3:4]
    return np.sqrt(np.max(np.sum(pts * pts, axis=-2), axis=-1))
