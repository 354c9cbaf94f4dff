"""A session's measurement (the raw clip posed once and kept as object-space matrices, the
decoder's compiled blend) gives exactly what the plain computation gives: the raw clip
blended and posed beside the lossy one (`array_errors`), the lossy poses blended by numpy's
nlerp from the decoded rows. Float64 errors at the samples and the float32 table between
them, bit for bit, on real clips and hand-made ones, for acl-style and a survey codec."""

from __future__ import annotations

import numpy as np
import pytest

import codec
from codec.codecs.acl_style.decoder import CompressedClip
from codec.compression import Compression
from codec.measure import measure as measure_module
from codec.measure.error_metric import array_errors, between_keys, object_matrices, pose_errors
from codec.measure.measure import RawPoses, between_errors
from codec.model.clip import Clip, Skeleton
from codec.model.sampling import Pose, blend, clip_between, sample_keys_batch
from codec.settings import CompressionSettings
from tests.codec.helpers import DATA, chain_clip, data_clip, random_hierarchy_clip

Array = np.ndarray


def reference_sample_times(decoder, times: Array) -> tuple[Array, Array, Array]:
    """The lossy poses at `times` as they were computed before the compiled blend: for
    acl-style its decoded rows normalised and blended by numpy (sampling.blend); any other
    decoder's own `sample_times`."""
    if not isinstance(decoder, CompressedClip):
        return decoder.sample_times(times, "none")
    first, second, alpha = sample_keys_batch(
        times, decoder.sample_rate, decoder.num_samples, "none", decoder.wrap, decoder.duration
    )
    rows, at = np.unique(np.concatenate((first, second)), return_inverse=True)
    rot, tr, sc = decoder.decode_rows(rows)
    rot = rot / np.linalg.norm(rot, axis=-1, keepdims=True)
    a, b = at[: len(first)], at[len(first) :]
    pose = blend(Pose(rot[a], tr[a], sc[a]), Pose(rot[b], tr[b], sc[b]), alpha[:, None])
    return pose.rotations, pose.translations, pose.scales


def reference_between(clip: Clip, decoder, supersample: int) -> tuple[Array, Array]:
    """Times (N,) and float32 errors (N, J) between samples, both sides posed together."""
    ks, alphas = between_keys(clip.num_samples, supersample)
    times = (ks + alphas) / clip.sample_rate
    raw = clip_between(clip, ks, alphas)
    lossy = reference_sample_times(decoder, times)
    n, sk = len(ks), clip.skeleton
    errors = array_errors(raw, lossy, np.arange(n), np.zeros(n), sk.parents, sk.shell_distance)
    return times, errors.astype(np.float32)


def _assert_bits(got: Array, want: Array) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), f"max difference {np.max(np.abs(got - want))}"


def _clip(name: str) -> Clip:
    if name == "bvh":
        return codec.load_clip(DATA / "bvh" / "cmu_02_03_run_ccrig.bvh")
    if name == "sjson":
        return codec.load_clip(data_clip("cmu_09_02.acl.sjson"))
    if name == "gltf":
        clip = codec.load_clip(DATA / "gltf" / "CesiumMan.glb")
        assert clip.curves is not None  # between samples: the file's own curves
        return clip
    if name == "looping":
        return codec.load_clip(data_clip("cmu_81_18_looping.acl.sjson"))
    if name == "chain":
        return chain_clip(num_samples=23, num_joints=5, scale=True)
    return random_hierarchy_clip(seed=4, num_joints=9, num_samples=17)


@pytest.mark.parametrize("codec_name", ["acl-style", "subsample"])
@pytest.mark.parametrize("source", ["bvh", "sjson", "gltf", "looping", "chain", "tree"])
def test_each_run_of_a_session_measures_what_the_plain_computation_does(
    source: str, codec_name: str
) -> None:
    """Runs of one session under changing precision, per-joint shells and supersampling
    (1 and 4): the kept matrices follow what they depend on, the shells apply afresh."""
    clip = _clip(source)
    session = Compression(clip)
    shells = np.linspace(1.0, 9.0, clip.num_joints)
    runs = [
        (CompressionSettings(codec=codec_name, skin_error=False), None),
        (CompressionSettings(codec=codec_name, precision=0.03, skin_error=False), None),
        (CompressionSettings(codec=codec_name, supersample=1, skin_error=False), None),
        (
            CompressionSettings(codec=codec_name, skin_error=False),
            clip.skeleton.with_settings(shell_distance=shells),
        ),
    ]
    if codec_name == "acl-style" and source == "sjson":  # stripped keyframes are rebuilt
        runs.append((CompressionSettings(strip_proportion=0.3, skin_error=False), None))
    for settings, skeleton in runs:
        r = session.run(settings, skeleton=skeleton)
        want_error = pose_errors(
            r.clip, r.lossy, np.arange(clip.num_samples), np.zeros(clip.num_samples)
        )
        _assert_bits(r.error, want_error)
        times, want_between = reference_between(r.clip, r.decoder, settings.supersample)
        _assert_bits(r.error_between_times, times)
        _assert_bits(r.error_between, want_between)
        assert r.stats["max_error"] == float(want_error.max())


def test_clips_too_long_to_keep_are_measured_the_same_way(monkeypatch) -> None:
    """Past RAW_KEEP nothing is kept: the raw side is blended and posed at each run."""
    clip = codec.load_clip(data_clip("cmu_09_02.acl.sjson"))
    kept = RawPoses()
    assert kept.sample_matrices(clip) is not None
    monkeypatch.setattr(measure_module, "RAW_KEEP", clip.num_joints * 10)
    assert kept.sample_matrices(clip) is None
    r = codec.compress(clip, CompressionSettings(skin_error=False))
    for supersample in (1, 4):
        ks, alphas = between_keys(clip.num_samples, supersample)
        assert kept.matrices(clip, supersample, 0, ks, alphas) is None
        times, got = between_errors(r.clip, r.decoder, supersample, kept)
        _assert_bits(got, reference_between(r.clip, r.decoder, supersample)[1])


def test_kept_matrices_follow_curves_rate_and_hierarchy_of_the_same_arrays() -> None:
    """The same sample arrays under other authored curves (none), another sample rate (the
    curves' time) or another hierarchy pose differently: each gets its own matrices."""
    cesium = _clip("gltf")
    plain = cesium.replace(curves=None)
    assert plain.rotations is cesium.rotations  # only the curves differ
    slower = cesium.replace(sample_rate=cesium.sample_rate / 2, curves=cesium.curves)
    sk = cesium.skeleton
    flat = Skeleton.create(sk.names, [-1] * sk.num_joints)
    flat_clip = Clip(flat, cesium.sample_rate, cesium.rotations, cesium.translations, cesium.scales)
    assert flat_clip.rotations is cesium.rotations
    ks, alphas = between_keys(cesium.num_samples, 4)
    kept = RawPoses()
    seen = []
    for c in (cesium, plain, slower, flat_clip, cesium):
        got = kept.matrices(c, 4, 0, ks, alphas)
        want = object_matrices(clip_between(c, ks, alphas), c.skeleton.parents)
        _assert_bits(got, want)
        at_samples = kept.sample_matrices(c)
        poses = (c.rotations, c.translations, c.scales)
        _assert_bits(at_samples, object_matrices(poses, c.skeleton.parents))
        seen.append(got)
    # the cases do pose differently, so a stale entry would have been caught above
    for other in seen[1:4]:
        assert not np.array_equal(seen[0], other)


def test_errors_against_kept_matrices_are_array_errors_to_the_bit() -> None:
    """The float64 errors, and the float32 table they are rounded into, of poses measured
    against kept raw matrices are array_errors' of the two posed together."""
    from codec.measure.error_metric import errors_against

    clip = random_hierarchy_clip(seed=11, num_joints=12, num_samples=30)
    other = random_hierarchy_clip(seed=12, num_joints=12, num_samples=30)
    lossy = (other.rotations, other.translations, clip.scales * 1.01)
    raw = (clip.rotations, clip.translations, clip.scales)
    sk = clip.skeleton
    n = clip.num_samples
    want = array_errors(raw, lossy, np.arange(n), np.zeros(n), sk.parents, sk.shell_distance)
    assert want.max() > 0.0
    mats = object_matrices(raw, sk.parents)
    _assert_bits(errors_against(mats, lossy, sk.parents, sk.shell_distance), want)
    table = np.empty((n, clip.num_joints), np.float32)
    errors_against(mats, lossy, sk.parents, sk.shell_distance, table)
    _assert_bits(table, want.astype(np.float32))
    with pytest.raises(ValueError, match="raw matrices"):
        errors_against(mats[1:], lossy, sk.parents, sk.shell_distance)


def test_chunked_runs_of_other_supersampling_measure_what_the_plain_computation_does(
    monkeypatch,
) -> None:
    """Chunks of equal length under other supersamplings are other poses: a session that
    goes 4, 3, 4 (chunks of 16 poses here) measures each as the plain computation does."""
    monkeypatch.setattr(measure_module, "BETWEEN_CHUNK", 16)
    clip = codec.load_clip(data_clip("cmu_09_02.acl.sjson"))
    session = Compression(clip)
    for supersample in (4, 3, 4):
        r = session.run(CompressionSettings(supersample=supersample, skin_error=False))
        _, want = reference_between(r.clip, r.decoder, supersample)
        _assert_bits(r.error_between, want)
