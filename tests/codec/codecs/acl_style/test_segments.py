import numpy as np
import pytest

from codec.codecs.acl_style.segments import segment_table, split_segments


@pytest.mark.parametrize(
    ("samples", "sizes"),
    [
        (100, [17, 17, 17, 17, 16, 16]),
        (1, [1]),
        (31, [31]),
        (32, [16, 16]),
        (40, [20, 20]),
        (48, [16, 16, 16]),
        (49, [17, 16, 16]),
    ],
)
def test_split_sizes(samples, sizes):
    assert split_segments(samples).tolist() == sizes


@pytest.mark.parametrize(("samples", "count"), [(291, 18), (190, 11), (229, 14), (26, 1)])
def test_segment_counts_match_acl_reference(samples, count):
    # counts ACL reported for cmu_13_07, cmu_49_15, cmu_81_18 (after the loop drop), cmu_09_02
    assert len(split_segments(samples)) == count


def test_table_covers_every_sample_within_bounds():
    for n in range(1, 400):
        t = segment_table(n)
        assert t[0, 0] == 0 and int(t[:, 1].sum()) == n
        assert np.all(t[1:, 0] == np.cumsum(t[:, 1])[:-1])
        assert t[:, 1].max() <= 31
