"""Splitting samples into segments: ideally 16 samples, at most 31.

A short remainder would make a tiny segment that costs a full header and range, so it is
spread one sample at a time over the earlier segments (100 -> 17, 17, 17, 17, 16, 16).
"""

from __future__ import annotations

import numpy as np

IDEAL_SEGMENT_SIZE = 16
MAX_SEGMENT_SIZE = 31


def split_segments(
    num_samples: int, ideal: int = IDEAL_SEGMENT_SIZE, maximum: int = MAX_SEGMENT_SIZE
) -> np.ndarray:
    """Segment sizes (G,) summing to num_samples."""
    if num_samples < 1:
        raise ValueError("a clip has at least one sample")
    if num_samples <= maximum:
        return np.array([num_samples], dtype=np.int64)
    count = -(-num_samples // ideal)
    sizes = np.full(count, ideal, dtype=np.int64)
    sizes[-1] = num_samples - ideal * (count - 1)
    if sizes[-1] < ideal:
        rest = int(sizes[-1])
        kept = count - 1
        if rest <= kept * (maximum - ideal):
            sizes = np.full(kept, ideal, dtype=np.int64)
            sizes += rest // kept
            sizes[: rest % kept] += 1
    return sizes


def segment_table(num_samples: int) -> np.ndarray:
    """(G, 2) first sample and sample count of every segment."""
    if 1 <= num_samples <= MAX_SEGMENT_SIZE:  # one segment (every short clip: no arithmetic)
        return np.array([[0, num_samples]], dtype=np.int64)
    sizes = split_segments(num_samples)
    return np.stack((np.cumsum(sizes) - sizes, sizes), axis=1)
