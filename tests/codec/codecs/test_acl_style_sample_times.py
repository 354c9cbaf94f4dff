"""acl-style's batched sampling decodes each stored sample a batch needs once; every pose is
still the one `sample` gives at that time, bit for bit (stripped keyframes and looping too)."""

from __future__ import annotations

import numpy as np
import pytest

import codec
from codec.measure.error_metric import between_keys
from codec.settings import CompressionSettings
from tests.codec.helpers import chain_clip, data_clip


@pytest.mark.parametrize(
    ("source", "looping", "strip"),
    [("chain", False, 0.0), ("chain", True, 0.0), ("cmu", False, 0.3), ("cmu", True, 0.0)],
)
def test_sample_times_are_the_poses_sample_gives(source: str, looping: bool, strip: float) -> None:
    clip = (
        chain_clip(num_samples=40)
        if source == "chain"
        else codec.load_clip(data_clip("cmu_09_02.acl.sjson"))
    ).replace(looping=looping)
    r = codec.compress(clip, CompressionSettings(strip_proportion=strip, skin_error=False))
    dec = r.decoder
    ks, alphas = between_keys(clip.num_samples, 4)
    times = np.concatenate(((ks + alphas) / clip.sample_rate, [0.37 * dec.duration, 0.0]))
    rot, tr, sc = dec.sample_times(times, "none")
    for i, t in enumerate(times):
        pose = dec.sample(float(t), "none")
        np.testing.assert_array_equal(rot[i], pose.rotations)
        np.testing.assert_array_equal(tr[i], pose.translations)
        np.testing.assert_array_equal(sc[i], pose.scales)
