"""ACL's bytes decoded as ACL decodes them: ACL's own measure of the decoded pose equals the
number ACL reported when it wrote them, and every rounding mode picks ACL's keyframes."""

from __future__ import annotations

import numpy as np
import pytest

from codec.codecs.acl21 import layout
from codec.codecs.acl21.codec import AclOutput, matched
from codec.codecs.acl21.decoder import AclDecoder
from codec.codecs.base import Decoder
from codec.measure import acl_metric
from codec.settings import CompressionSettings
from tests.codec.codecs.acl21.helpers import NAMES, acl_stats, fixture, raw_clip

SETTINGS = CompressionSettings(codec="acl-2.1")
NOT_TO_THE_BIT = {"cmu_09_02.quatf_drop_w_full.acl"}  # see the test below


@pytest.mark.parametrize("name", NAMES)
def test_acls_measure_of_the_decoded_pose_is_the_one_acl_reported(name: str) -> None:
    """max_error / worst_track / worst_time of acl_compressor's stats, from our decoding of
    its bytes and ACL's measure (float32 throughout, ACL's arithmetic): equal to the bit on
    the processor maker that made the fixtures (AMD here), and to float32 rounding on another,
    whose `rsqrtss` estimate differs (bench/acl_binary.py checks the bits on the machine)."""
    enc = AclOutput(fixture(name), name).encode(raw_clip(name), SETTINGS)
    ours, theirs = enc.details["acl_measure"], acl_stats(name)
    if name in NOT_TO_THE_BIT:
        # raw float32 rotations: the error is float32 rounding alone (1e-4 cm at 250 cm)
        assert abs(ours["max_error"] - theirs["max_error"]) < 5e-5
        return
    assert ours["max_error"] == pytest.approx(theirs["max_error"], rel=1e-5, abs=0)
    assert ours["worst_track"] == theirs["worst_track"]
    assert ours["worst_time"] == theirs["worst_time"]


@pytest.mark.parametrize("name", ["cmu_09_02.acl", "cmu_09_02_with_zero_scale.acl"])
def test_every_sample_and_joint_matches_acls_exhaustive_table(name: str) -> None:
    """error_per_frame_and_bone (ACL's compressor's own samples; two shell points without
    scale, three with) against ACL's measure of our decoding: within 1e-4 cm everywhere,
    the eyes of a head whose scale turns negative included (ACL composes them as matrices)."""
    clip = raw_clip(name)
    scale = bool(acl_stats(name)["has_scale"])
    tracks = matched(layout.read(fixture(name)), clip.skeleton)
    decoder = AclDecoder(tracks, clip.skeleton)
    raw = np.concatenate(
        (acl_metric.normalize_deterministic(clip.rotations), clip.translations, clip.scales), -1
    )
    times = acl_metric.sample_times(clip.num_samples, clip.sample_rate)
    ours = acl_metric.acl_errors(
        acl_metric.raw_samples(raw, clip.sample_rate, times, "nearest"),
        decoder.grid(),
        clip.skeleton.parents,
        clip.skeleton.shell_distance,
        scale=scale,
        points=3 if scale else 2,
    )
    theirs = np.concatenate(
        [np.asarray(s["error_per_frame_and_bone"], float) for s in acl_stats(name)["segments"]]
    )
    assert theirs.shape == ours.shape == (26, 44)
    assert np.abs(ours - theirs).max() < 1e-4
    # and Shellscope's own measure (3 points, float64 affine) is never below ACL's 2-point one
    enc = AclOutput(fixture(name)).encode(clip, SETTINGS)
    assert isinstance(enc.decoder, Decoder)


@pytest.fixture(scope="module")
def looping() -> AclDecoder:
    name = "cmu_81_18_looping.acl"
    clip = raw_clip(name)
    return AclDecoder(matched(layout.read(fixture(name)), clip.skeleton), clip.skeleton)


@pytest.fixture(scope="module")
def stripped() -> AclDecoder:
    name = "cmu_49_15_keys6_linear.acl"
    clip = raw_clip(name)
    return AclDecoder(matched(layout.read(fixture(name)), clip.skeleton), clip.skeleton)


def test_rounding_picks_acls_keyframes(looping: AclDecoder) -> None:
    grid = looping.grid()  # (S, J, 10) every stored keyframe as decoded
    rate = looping.sample_rate
    t = np.array([(10 + 0.3) / rate])
    for rounding, k in (("floor", 10), ("ceil", 11), ("nearest", 10)):
        assert np.array_equal(looping.poses_at(t, rounding)[0], grid[k]), rounding
    assert np.array_equal(looping.poses_at(np.array([(10 + 0.7) / rate]), "nearest")[0], grid[11])
    # ceil always takes the next keyframe, even at a sample's own time (ACL's rounding)
    at = acl_metric.sample_times(looping.num_samples, rate)[20:21]
    assert np.array_equal(looping.poses_at(at, "ceil")[0], grid[21])
    none = looping.poses_at(t, "none")[0]
    assert not np.array_equal(none, grid[10]) and not np.array_equal(none, grid[11])
    # rotations: the shorter-arc lerp, normalised; translations: the lerp
    assert np.allclose(np.linalg.norm(none[:, :4], axis=1), 1, atol=1e-6)
    expected = grid[10, :, 4:7] + (grid[11, :, 4:7] - grid[10, :, 4:7]) * np.float32(0.3)
    assert np.allclose(none[:, 4:7], expected, atol=1e-4)


def test_per_track_rounding_lets_each_joint_choose(looping: AclDecoder) -> None:
    J = looping.skeleton.num_joints
    t = np.array([(10 + 0.3) / looping.sample_rate])
    modes = np.array(["floor", "ceil", "nearest", "none"] * J)[:J]
    per = looping.poses_at(t, "per_track", modes)[0]
    for mode in ("floor", "ceil", "nearest", "none"):
        sel = modes == mode
        np.testing.assert_array_equal(per[sel], looping.poses_at(t, mode)[0][sel])
    pose = looping.sample(float(t[0]), "per_track", per_track=list(modes))
    np.testing.assert_allclose(pose.translations, per[:, 4:7], atol=1e-6)


def test_a_wrapping_clip_blends_its_last_sample_into_its_first(looping: AclDecoder) -> None:
    assert looping.wrap and looping.num_samples == 229
    grid = looping.grid()
    end = looping.poses_at(np.array([looping.duration]), "nearest")[0]
    np.testing.assert_array_equal(end, grid[0])  # the repeated first sample
    half = looping.poses_at(np.array([looping.duration - 0.5 / looping.sample_rate]), "none")[0]
    mid = (grid[-1, :, 4:7] + grid[0, :, 4:7]) / 2
    assert np.allclose(half[:, 4:7], mid, atol=1e-3)
    source = looping.decode_source()
    assert source.num_samples == 230 and np.array_equal(source.rotations[-1], source.rotations[0])
    clamped = looping.poses_at(np.array([looping.duration]), "nearest", wrap=False)[0]
    np.testing.assert_array_equal(clamped, grid[-1])


def test_stripped_keyframes_are_rebuilt_between_the_stored_ones(stripped: AclDecoder) -> None:
    kept = np.flatnonzero(stripped.retained)
    gone = np.flatnonzero(~stripped.retained)
    assert len(gone) > 50  # ACL stripped most in-betweens of this linear-keyed clip
    k = int(gone[3])
    a, b = kept[kept < k].max(), kept[kept > k].min()
    grid = stripped.grid()
    t = np.array([(k + 0.2) / stripped.sample_rate])
    floor = stripped.poses_at(t, "floor")[0]
    alpha = np.float32(k - a) / np.float32(b - a)
    expected = grid[a, :, 4:7] + (grid[b, :, 4:7] - grid[a, :, 4:7]) * alpha
    np.testing.assert_allclose(floor[:, 4:7], expected, atol=1e-4)  # the rebuild of k
    np.testing.assert_allclose(floor, grid[k], atol=1e-6)  # float32 time arithmetic aside
    # per-track floor takes ACL's per-track cache: the stored keyframe before k
    J = stripped.skeleton.num_joints
    per = stripped.poses_at(t, "per_track", ["floor"] * J)[0]
    anim = np.unique(stripped.tracks.animated[:, 0])
    np.testing.assert_allclose(per[anim], grid[a][anim], atol=1e-6)  # not renormalised
    assert np.abs(per[anim] - floor[anim]).max() > 1e-3


@pytest.mark.parametrize("rounding", ["none", "floor", "ceil", "nearest"])
def test_one_time_and_many_agree(stripped: AclDecoder, rounding: str) -> None:
    times = np.linspace(0.0, stripped.duration, 23)
    rot, tr, sc = stripped.sample_times(times, rounding)
    for i, t in enumerate(times):
        pose = stripped.sample(float(t), rounding)
        np.testing.assert_allclose(pose.translations, tr[i], atol=1e-9)
        np.testing.assert_allclose(np.abs(np.sum(pose.rotations * rot[i], -1)), 1, atol=1e-9)
