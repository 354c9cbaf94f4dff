"""Daubechies D4, periodic, on blocks of BLOCK samples, as one orthonormal matrix.

Three levels take a block of 16 samples to 2 scaling coefficients and 2 + 4 + 8 details; the
matrix form applies them to every block of every component in one product. `BANDS` names the
sub-band of every coefficient (0: scaling, 1: coarsest details ... 3: finest details).
"""

from __future__ import annotations

import numpy as np

Array = np.ndarray
BLOCK = 16
LEVELS = 3
_R3 = np.sqrt(3.0)
H = np.array([1 + _R3, 3 + _R3, 3 - _R3, 1 - _R3]) / (4 * np.sqrt(2.0))  # scaling filter
G = np.array([H[3], -H[2], H[1], -H[0]])  # wavelet filter


def _level(n: int) -> Array:
    """(n, n) one periodic D4 step: n/2 scaling rows, then n/2 detail rows."""
    m = np.zeros((n, n))
    for i in range(n // 2):
        for k in range(4):
            m[i, (2 * i + k) % n] += H[k]
            m[n // 2 + i, (2 * i + k) % n] += G[k]
    return m


def _matrix() -> tuple[Array, Array]:
    w = np.eye(BLOCK)
    n = BLOCK
    bands = np.full(BLOCK, LEVELS)
    for level in range(LEVELS):
        step = np.eye(BLOCK)
        step[:n, :n] = _level(n)
        w = step @ w
        bands[n // 2 : n] = LEVELS - level
        n //= 2
    bands[:n] = 0
    return w, bands


W, BANDS = _matrix()  # coefficients = W @ block; block = W.T @ coefficients


def forward(blocks: Array) -> Array:
    """Coefficients (..., BLOCK) of blocks (..., BLOCK)."""
    return blocks @ W.T


def inverse(coefficients: Array) -> Array:
    """Blocks (..., BLOCK) of coefficients (..., BLOCK)."""
    return coefficients @ W
