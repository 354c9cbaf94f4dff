"""Measurement takes any decoder: a hand-made one (not acl-style) gives the errors a reader
of its poses would compute, at the samples and between them."""

from __future__ import annotations

import numpy as np
import pytest

import codec
from codec.codecs.base import Decoder
from codec.measure.measure import between_errors, measure
from codec.model.clip import Clip, Skeleton
from codec.model.sampling import (
    Pose,
    blend,
    duration_of,
    sample_keys,
    sample_keys_batch,
)
from codec.settings import CompressionSettings
from tests.codec.helpers import chain_clip, data_clip

Array = np.ndarray


class ShiftedDecoder:
    """The raw clip itself, with joint `joint`'s local translation moved by `shift` at
    every sample: a codec whose error is known exactly."""

    codec_name = "shifted"

    def __init__(self, clip: Clip, joint: int, shift: Array) -> None:
        tr = clip.translations.copy()
        tr[:, joint] += shift
        self.clip = clip.replace(translations=tr)
        self.skeleton: Skeleton = clip.skeleton
        self.sample_rate = clip.sample_rate
        self.num_samples = clip.num_samples
        self.wrap = False
        self.duration = duration_of(self.num_samples, self.sample_rate, False)

    def sample(self, t, rounding="nearest", looping=None, per_track=None, interpolation="nlerp"):
        c = self.clip
        k = sample_keys(t, c.sample_rate, c.num_samples, rounding, False, per_track)
        a = Pose(c.rotations[k.first], c.translations[k.first], c.scales[k.first])
        b = Pose(c.rotations[k.second], c.translations[k.second], c.scales[k.second])
        return blend(a, b, k.alpha, interpolation)

    def sample_times(self, times: Array, rounding: str = "none") -> tuple[Array, Array, Array]:
        c = self.clip
        first, second, alpha = sample_keys_batch(
            times, c.sample_rate, c.num_samples, rounding, False
        )
        a = Pose(c.rotations[first], c.translations[first], c.scales[first])
        b = Pose(c.rotations[second], c.translations[second], c.scales[second])
        return tuple(blend(a, b, alpha[:, None]))  # type: ignore[return-value]

    def decode_source(self, name: str = "") -> Clip:
        return self.clip.replace(name=name)

    def decode_all(self) -> Clip:
        return self.clip


@pytest.mark.parametrize("source", ["chain", "cmu"])
def test_a_shifted_leaf_measures_its_shift_at_and_between_samples(source: str) -> None:
    clip = (
        chain_clip(num_samples=30)
        if source == "chain"
        else codec.load_clip(data_clip("cmu_09_02.acl.sjson"))
    )
    children = np.bincount(clip.skeleton.parents[1:], minlength=clip.num_joints)
    leaf = int(np.flatnonzero(children == 0)[-1])
    shift = np.array([0.0, 0.02, 0.0])
    decoder = ShiftedDecoder(clip, leaf, shift)
    assert isinstance(decoder, Decoder)
    settings = CompressionSettings(supersample=3)
    m = measure(clip, decoder, settings, (100, 150), 0.5, {"num_keys": 7})
    # a leaf's local translation moves its shell points rigidly by the shift, in its
    # parent's space: the error is the shift times the ancestors' scale (1 here)
    others = np.delete(np.arange(clip.num_joints), leaf)
    np.testing.assert_allclose(m.error[:, leaf], 0.02, rtol=1e-9)
    assert np.all(m.error[:, others] == 0.0)
    assert m.error_between.shape == ((clip.num_samples - 1) * 3 + 1, clip.num_joints)
    np.testing.assert_allclose(m.error_between[:, leaf], 0.02, rtol=1e-5)
    assert np.all(m.error_between[:, others] < 1e-12)  # the same poses, blended twice
    s = m.stats
    assert s["codec"] == "shifted" and s["num_keys"] == 7
    assert s["compressed_size"] == 100 and s["metadata_size"] == 50
    assert s["worst_track"] == leaf and s["max_error"] == pytest.approx(0.02)
    assert s["precision_met"] is False  # 0.02 cm over the default 0.01 cm


def test_between_errors_through_any_decoder_match_acl_styles_decoded_clip() -> None:
    """For acl-style the error between samples through `sample_times` is the error of its
    decoded samples blended as ACL blends them (what was measured before the seam)."""
    from codec.measure.error_metric import between_keys, pose_errors

    clip = codec.load_clip(data_clip("cmu_09_02.acl.sjson"))
    r = codec.compress(clip, CompressionSettings(supersample=4, skin_error=False))
    times, errors = between_errors(r.clip, r.decoder, 4)
    ks, alphas = between_keys(clip.num_samples, 4)
    want = pose_errors(r.clip, r.lossy, ks, alphas).astype(np.float32)
    np.testing.assert_allclose(errors, want, atol=2e-7)
    np.testing.assert_array_equal(times, r.error_between_times)


@pytest.mark.parametrize("source", ["chain", "cmu", "cesium"])
def test_a_session_measures_each_edit_as_a_fresh_compression_does(source: str) -> None:
    """A Compression keeps the raw clip's poses between samples from run to run (RawPoses):
    each run of changed settings measures exactly what a new Compression measures (CesiumMan:
    between samples the file's own slerp, codec.model.authored_curves)."""
    from codec.compression import Compression

    if source == "chain":
        clip = chain_clip(num_samples=30)
    elif source == "cmu":
        clip = codec.load_clip(data_clip("cmu_09_02.acl.sjson"))
    else:
        clip = codec.load_clip(
            data_clip("cmu_09_02.acl.sjson").parents[1] / "gltf" / "CesiumMan.glb"
        )
        assert clip.curves is not None
    session = Compression(clip)
    for precision, supersample in ((0.01, 4), (0.05, 4), (0.002, 2), (0.05, 4)):
        settings = CompressionSettings(precision=precision, supersample=supersample)
        again = session.run(settings)
        fresh = Compression(clip).run(settings)
        np.testing.assert_array_equal(again.error_between, fresh.error_between)
        _, direct = between_errors(again.clip, again.decoder, supersample)  # no RawPoses
        np.testing.assert_array_equal(again.error_between, direct)
        np.testing.assert_array_equal(again.error_between_times, fresh.error_between_times)
        assert again.error_between.shape[0] == (clip.num_samples - 1) * supersample + 1


def test_raw_poses_are_blended_again_for_other_arrays() -> None:
    """Kept matrices belong to the arrays they were posed from: another clip of the same
    shape (a moved joint) gets its own, and the first one's come back when it returns."""
    from codec.measure.error_metric import between_keys, object_matrices
    from codec.measure.measure import RawPoses
    from codec.model.sampling import clip_between

    clip = chain_clip(num_samples=12)
    tr = clip.translations.copy()
    tr[:, -1] += 0.5
    other = clip.replace(translations=tr)
    ks, alphas = between_keys(clip.num_samples, 3)
    kept = RawPoses()
    for c in (clip, other, clip):
        got = kept.matrices(c, 3, 0, ks, alphas)
        want = object_matrices(clip_between(c, ks, alphas), c.skeleton.parents)
        np.testing.assert_array_equal(got, want)
        at_samples = kept.sample_matrices(c)
        poses = (c.rotations, c.translations, c.scales)
        np.testing.assert_array_equal(at_samples, object_matrices(poses, c.skeleton.parents))
