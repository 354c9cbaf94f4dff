import numpy as np
import pytest

from codec.codecs.acl_style.bitstream import unpack


def _packed(values: np.ndarray, widths: np.ndarray) -> bytes:
    """LSB-first packing with Python's integers: an oracle that shares nothing with the
    writer's kernel."""
    acc, pos = 0, 0
    for v, w in zip(values.tolist(), widths.tolist(), strict=True):
        acc |= int(v) << pos
        pos += int(w)
    return acc.to_bytes((pos + 7) // 8, "little")


@pytest.mark.parametrize("width", range(33))
def test_every_width_reads_back(width):
    rng = np.random.default_rng(width)
    top = (1 << width) - 1
    values = rng.integers(0, top + 1, 57, dtype=np.uint64) if width else np.zeros(57, np.uint64)
    values[:2] = [0, top]
    widths = np.full(57, width)
    data = _packed(values, widths)
    offsets = np.arange(57) * width
    np.testing.assert_array_equal(unpack(data, offsets, widths), values.astype(np.uint32))


def test_mixed_widths_and_lsb_first_layout():
    # bits LSB first: 1 | 1 0 1 | 1 1  -> 0b111011 = 59
    assert unpack(bytes([59]), np.array([0, 1, 4]), np.array([1, 3, 2])).tolist() == [1, 5, 3]


def test_a_short_stream_is_an_error():
    with pytest.raises(ValueError, match="too short"):
        unpack(b"\x00", np.array([4]), np.array([8]))
