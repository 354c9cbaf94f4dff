"""Bit rates: bits per component of each rate index, how a sub-track is stored, what it costs.

ACL 2.1's table: index 0 is "constant within the segment" (one 16-bit value per component
in the segment-range slot), 1..23 are that many bits per component, and the top index is a
raw float32 with no range reduction. Every size the optimiser weighs and every size the
stats report comes from `segment_cost_bits` (and `segment_bytes`, its sum as written), so
the two cannot disagree; the .ssc writer and reader lay the same numbers out in bytes.
"""

from __future__ import annotations

import functools

import numpy as np

from codec.codecs.base import CONSTANT_BITS, STORED_COMPONENTS

Array = np.ndarray

BIT_RATE_BITS = np.array([0, *range(1, 24), 32], dtype=np.int64)
NUM_BIT_RATES = len(BIT_RATE_BITS)
RAW_BIT_RATE = NUM_BIT_RATES - 1
# rate 0 stores one clip-normalised CONSTANT_BITS value per component for the segment
CONSTANT_MAX = (1 << CONSTANT_BITS) - 1
SEGMENT_RANGE_BITS = 8  # per component, min and extent, when a clip has several segments
SEGMENT_RANGE_MAX = (1 << SEGMENT_RANGE_BITS) - 1
RATE_BYTE_BITS = 8  # each animated sub-track's rate index, per segment
# a segment stores either a sub-track's constant (rate 0) or its range, in the same room
SLOT_BYTES = STORED_COMPONENTS * CONSTANT_BITS // 8
if SLOT_BYTES * 8 != STORED_COMPONENTS * 2 * SEGMENT_RANGE_BITS:
    raise AssertionError("a segment's constant and its range must take the same bytes")


def has_segment_range(rates: Array, multi_segment: bool) -> Array:
    """Which sub-tracks at these rate indices store an 8-bit range in their segment: the
    quantised rates (1..23), and only when the clip has several segments."""
    return (rates > 0) & (rates < RAW_BIT_RATE) & multi_segment


def sample_bits(rates: Array, num_samples: int) -> int:
    """Bits of a segment's packed samples: every sub-track at its rate index (rates (K,)),
    every component of every sample (before the padding to a byte)."""
    return int(BIT_RATE_BITS[rates].sum()) * STORED_COMPONENTS * num_samples


def segment_bytes(rates: Array, num_samples: int, multi_segment: bool) -> int:
    """Bytes one segment takes in the file: a rate byte per animated sub-track (rates (K,)
    rate indices), then `segment_cost_bits` of each, padded to a byte at the end."""
    rates = np.asarray(rates, dtype=np.int64)
    bits = int(segment_cost_bits(num_samples, multi_segment)[rates].sum())
    return len(rates) * RATE_BYTE_BITS // 8 + (bits + 7) // 8


def segments_bytes(rates: Array, num_samples: Array, multi_segment: bool) -> Array:
    """`segment_bytes` of every segment at once: rates (G, K), num_samples (G,) -> (G,)."""
    rates = np.asarray(rates, dtype=np.int64)
    num_samples = np.asarray(num_samples, dtype=np.int64)
    bits = np.zeros(len(num_samples), dtype=np.int64)
    for n in np.unique(num_samples).tolist():  # a clip's segments come in two or three sizes
        sel = num_samples == n
        bits[sel] = segment_cost_bits(n, multi_segment)[rates[sel]].sum(axis=1)
    return rates.shape[1] * RATE_BYTE_BITS // 8 + (bits + 7) // 8


def segment_cost_bits(num_samples: int, multi_segment: bool) -> Array:
    """(NUM_BIT_RATES,) bits one animated sub-track costs in a segment at each rate index.

    Samples plus what the rate needs beside them: the 16-bit constant (rate 0) or the 8-bit
    segment range (1..23, only with several segments); a raw float needs neither. The rate
    byte itself is the same at every rate and left out. A fresh array (a copy of the table's
    row: every compression asks for the same few).
    """
    return _cost_bits(int(num_samples), bool(multi_segment)).copy()


@functools.lru_cache(maxsize=256)
def _cost_bits(num_samples: int, multi_segment: bool) -> Array:
    cost = BIT_RATE_BITS * STORED_COMPONENTS * num_samples
    if multi_segment:
        cost = cost + 2 * SEGMENT_RANGE_BITS * STORED_COMPONENTS
    cost[0] = CONSTANT_BITS * STORED_COMPONENTS
    cost[RAW_BIT_RATE] = BIT_RATE_BITS[RAW_BIT_RATE] * STORED_COMPONENTS * num_samples
    return cost.astype(np.int64)
