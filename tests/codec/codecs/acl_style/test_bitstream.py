import numpy as np
import pytest

from codec.codecs.acl_style.bitstream import pack, unpack


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
