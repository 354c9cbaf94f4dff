import numpy as np
import pytest

from codec.codecs.acl_style.bitstream import pack, pack_runs, unpack


@pytest.mark.parametrize("width", range(33))
def test_round_trip_at_every_width(width):
    rng = np.random.default_rng(width)
    top = (1 << width) - 1
    values = rng.integers(0, top + 1, 57, dtype=np.uint64) if width else np.zeros(57, np.uint64)
    values[:2] = [0, top]
    widths = np.full(57, width)
    data = pack(values, widths)
    assert len(data) == (57 * width + 7) // 8
    offsets = np.arange(57) * width
    np.testing.assert_array_equal(unpack(data, offsets, widths), values.astype(np.uint32))


def test_mixed_widths_and_lsb_first_layout():
    data = pack(np.array([1, 0b101, 3]), np.array([1, 3, 2]))
    # bits LSB first: 1 | 1 0 1 | 1 1  -> 0b111011 = 59
    assert data == bytes([59])
    assert unpack(data, np.array([0, 1, 4]), np.array([1, 3, 2])).tolist() == [1, 5, 3]


def test_value_too_wide_and_short_stream_are_errors():
    with pytest.raises(ValueError, match="does not fit"):
        pack(np.array([4]), np.array([2]))
    with pytest.raises(ValueError, match="too short"):
        unpack(b"\x00", np.array([4]), np.array([8]))


def test_runs_pack_each_to_its_own_bytes():
    """What the writer packs segment by segment in one pass: each run as `pack` packs it."""
    rng = np.random.default_rng(4)
    counts = np.array([5, 0, 13, 1, 40])
    widths = rng.integers(0, 33, counts.sum())
    values = rng.integers(0, 1 << 32, counts.sum(), dtype=np.uint64) & ((1 << widths) - 1).astype(
        np.uint64
    )
    data, offsets = pack_runs(values, widths, counts)
    starts = np.cumsum(counts) - counts
    runs = [pack(values[a : a + n], widths[a : a + n]) for a, n in zip(starts, counts, strict=True)]
    assert [data[a:b] for a, b in zip(offsets[:-1], offsets[1:], strict=True)] == runs
    assert offsets[-1] == len(data) == sum(len(r) for r in runs)
    with pytest.raises(ValueError, match="does not fit"):
        pack_runs(np.array([4]), np.array([2]), np.array([1]))
