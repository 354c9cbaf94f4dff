"""Bit accounting: the sizes the optimiser weighs are the bytes the writer lays out."""

from __future__ import annotations

import numpy as np

import codec
from codec.codecs import container
from codec.codecs.acl_style import layout as ssc_format
from codec.codecs.acl_style.bit_rates import (
    CONSTANT_BITS,
    RAW_BIT_RATE,
    SLOT_BYTES,
    STORED_COMPONENTS,
    has_segment_range,
    segment_bytes,
    segment_cost_bits,
)
from codec.formats import load_clip
from codec.settings import CompressionSettings
from tests.codec.helpers import chain_clip, data_clip


def test_the_cost_of_each_rate() -> None:
    one = segment_cost_bits(10, multi_segment=False)
    many = segment_cost_bits(10, multi_segment=True)
    assert one[0] == many[0] == CONSTANT_BITS * STORED_COMPONENTS == 48  # one value, no range
    assert one[5] == 5 * 3 * 10 and many[5] == 5 * 3 * 10 + 48  # samples, plus the range
    assert one[RAW_BIT_RATE] == many[RAW_BIT_RATE] == 32 * 3 * 10  # floats need no range
    assert SLOT_BYTES * 8 == CONSTANT_BITS * STORED_COMPONENTS
    rates = np.array([0, 1, 23, RAW_BIT_RATE])
    assert has_segment_range(rates, True).tolist() == [False, True, True, False]
    assert not has_segment_range(rates, False).any()


def test_segment_sizes_are_the_bytes_written() -> None:
    """The optimiser's `segment_bytes`, the stripping's `EncodedClip.segment_bytes` (keyframe
    masks included) and the stats (taken from the written offsets) all agree with the file."""
    seen_rates, seen_segments, seen_masks = set(), set(), set()
    stripped = CompressionSettings(strip_proportion=0.4, skin_error=False)
    for source, settings in (
        (load_clip(data_clip("cmu_09_02.acl.sjson")), None),  # one segment
        (load_clip(data_clip("cmu_09_02.acl.sjson")), stripped),  # keyframe masks
        (load_clip(data_clip("cmu_13_07.acl.sjson")), None),  # 18 segments
        (chain_clip(num_samples=70, num_joints=5, scale=True), None),  # animated scale
    ):
        result = codec.compress(source, settings)
        parsed = ssc_format.read(container.read(result.data).payload)
        anim_end = len(parsed.data) - ssc_format.HEADER_SIZE
        written = np.diff(np.append(parsed.segment_offsets, anim_end)).tolist()
        enc = parsed.encoded
        masks = 0 if enc.retained is None else (enc.segment_sizes + 7) // 8
        costed = [
            segment_bytes(rates, int(n), enc.num_segments > 1)
            for rates, n in zip(enc.bit_rates, enc.retained_counts(), strict=True)
        ]
        assert (np.array(costed) + masks).tolist() == written
        assert enc.segment_bytes().tolist() == written
        assert [s["segment_size"] for s in result.stats["segments"]] == written
        seen_rates |= set(np.unique(enc.bit_rates).tolist())
        seen_segments.add(enc.num_segments > 1)
        seen_masks.add(enc.retained is not None)
    assert seen_segments == {False, True} and 0 in seen_rates  # ranges and constants both met
    assert seen_masks == {False, True}
