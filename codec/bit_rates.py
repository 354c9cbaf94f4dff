"""Bit rates: bits per component of each rate index, how a sub-track is stored, what it costs.

ACL 2.1's table: index 0 is "constant within the segment" (one 16-bit value per component
in the segment-range slot), 1..23 are that many bits per component, and the top index is a
raw float32 with no range reduction. Every size the optimiser weighs and every size the
stats report comes from `segment_cost_bits`, so the two cannot disagree.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

Array = np.ndarray

SUB_TRACKS = ("rotation", "translation", "scale")
BIT_RATE_BITS = np.array([0, *range(1, 24), 32], dtype=np.int64)
NUM_BIT_RATES = len(BIT_RATE_BITS)
RAW_BIT_RATE = NUM_BIT_RATES - 1
STORED_COMPONENTS = 3  # per sub-track and sample (rotations drop one component)
CONSTANT_BITS = 16  # rate 0: one clip-normalised value per component for the segment
CONSTANT_MAX = (1 << CONSTANT_BITS) - 1
SEGMENT_RANGE_BITS = 8  # per component, min and extent, when a clip has several segments
SEGMENT_RANGE_MAX = (1 << SEGMENT_RANGE_BITS) - 1
RATE_BYTE_BITS = 8  # each animated sub-track's rate index, per segment


class TrackKind(IntEnum):
    """How a sub-track is stored: nothing (bind value), one value, or per sample."""

    DEFAULT = 0
    CONSTANT = 1
    ANIMATED = 2


def segment_cost_bits(num_samples: int, multi_segment: bool) -> Array:
    """(NUM_BIT_RATES,) bits one animated sub-track costs in a segment at each rate index.

    Samples plus what the rate needs beside them: the 16-bit constant (rate 0) or the 8-bit
    segment range (1..23, only with several segments); a raw float needs neither. The rate
    byte itself is the same at every rate and left out.
    """
    cost = BIT_RATE_BITS * STORED_COMPONENTS * num_samples
    if multi_segment:
        cost = cost + 2 * SEGMENT_RANGE_BITS * STORED_COMPONENTS
    cost[0] = CONSTANT_BITS * STORED_COMPONENTS
    cost[RAW_BIT_RATE] = BIT_RATE_BITS[RAW_BIT_RATE] * STORED_COMPONENTS * num_samples
    return cost.astype(np.int64)
