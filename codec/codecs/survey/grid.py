"""Tracks on one grid of M values (subsample's stored samples, the wavelet's rebuilt source
samples), stacked so that a pose of every track is one blend, not a loop over the tracks."""

from __future__ import annotations

import numpy as np

from codec.codecs.survey.decoder import scatter_tracks
from codec.codecs.survey.frame import WIDTHS
from codec.model import quat

Array = np.ndarray


class GridTable:
    """Tracks that share one grid of M values (subsample's stored samples, the wavelet's
    rebuilt source samples), stacked: values (M, T, 4), three-component tracks padded."""

    def __init__(self, tracks: list[tuple[int, int, Array]], length: int) -> None:
        self.joint = np.array([j for j, _, _ in tracks], dtype=np.int64)
        self.sub = np.array([k for _, k, _ in tracks], dtype=np.int64)
        self.values = np.zeros((length, len(tracks), 4))
        for n, (_, k, v) in enumerate(tracks):
            self.values[:, n, : WIDTHS[k]] = v

    def lerp(self, x: Array, slerp: bool = False) -> Array:
        """(N, T, 4) at grid coordinates x (N,) (0 .. M - 1): the two grid values around each
        blended linearly, rotations by slerp when asked."""
        m = len(self.values)
        x = np.clip(np.asarray(x, np.float64), 0.0, m - 1.0)
        i = np.minimum(np.floor(x).astype(np.int64), max(m - 2, 0))
        i1 = np.minimum(i + 1, m - 1)
        a = (x - i)[:, None, None]
        lo, hi = self.values[i], self.values[i1]
        out = lo + (hi - lo) * a
        if slerp:
            rot = self.sub == 0
            out[:, rot] = quat.slerp(lo[:, rot], hi[:, rot], a)
        return out

    def scatter(self, out: Array, parts: list[Array]) -> None:
        """Write track values (N, T, 4) into the pose arrays (N, J, C) of each kind."""
        scatter_tracks(self.joint, self.sub, out, parts)
