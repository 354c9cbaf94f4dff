"""Tables of one result (codec.result_tables): bytes per cell, error per segment, rows per joint."""

from __future__ import annotations

import math

import numpy as np

import codec
from codec import result_tables
from codec.codecs.acl_style.bit_rates import SLOT_BYTES, has_segment_range
from codec.formats import load_clip
from tests.app.panel_helpers import make_result
from tests.codec.helpers import data_clip


def test_cell_bytes_count_bits_per_segment_sample() -> None:
    r = make_result()
    b = result_tables.cell_bytes(r)
    bits = r.costs.bits_per_component
    assert b[0, 2, 0] == bits[0, 2, 0] * 3 * 16 / 8
    assert b[2, 0, 0] == 16 * 3 / 8  # constant within the segment: one 16-bit value
    assert b[0, 4, 0] == 0  # a constant sub-track stores nothing per segment
    seg = result_tables.segment_errors(r)
    assert seg[1, 3] == r.error[16:28, 3].max()


def test_cells_add_up_to_the_segments_written() -> None:
    r = codec.compress(load_clip(data_clip("cmu_13_07.acl.sjson")))
    cells = result_tables.cell_bytes(r)  # (G, J, 3)
    rates = r.costs.bit_rates  # (G, J, 3), -1 where not animated
    multi = len(r.costs.segments) > 1
    for g, seg in enumerate(r.stats["segments"]):
        animated = rates[g][rates[g] >= 0]
        ranges = SLOT_BYTES * int(has_segment_range(animated, multi).sum())
        rate_bytes = len(animated)
        assert seg["segment_size"] == rate_bytes + ranges + math.ceil(cells[g].sum())
    rows = result_tables.joint_rows(r)
    assert [row["name"] for row in rows] == list(r.clip.skeleton.names)
    assert sum(row["sample_bytes"] for row in rows) == cells.sum()
    np.testing.assert_array_equal([row["max_error"] for row in rows], r.error.max(axis=0))
    assert tuple(rows[0]) == result_tables.joint_columns(r) == result_tables.JOINT_COLUMNS
