"""The reported error against an independent float64 computation, with per-joint shells.

Every test clip gives all joints one shell distance and one precision, so a measure that
reads the wrong joint's shell (its parent's, say) reports the same numbers there. These
tests give each joint its own precision and shell distance (random, and from rules through
codec.tuning) on real clips and recompute the error the plain way: build each joint's
object-space 4x4 matrix in float64, move its three shell points (d,0,0), (0,d,0), (0,0,d)
with the raw and the lossy matrix, take the largest distance. Nothing here calls the
measure's own helpers, so the compiled path (`clip_errors`, behind `Result.error` and the
stats) and the numpy path (`pose_error`, behind the window's readouts) are both checked.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from codec.compression import compress
from codec.formats import load_clip
from codec.measure.measure import measure
from codec.measure.pose_error import pose_error
from codec.model.clip import Clip
from codec.model.sampling import Pose
from codec.settings import CompressionSettings
from codec.tuning import GlobalSettings, JointOverride, tuned_clip

DATA = Path(__file__).resolve().parents[2] / "data"


def reference_matrices(rot: np.ndarray, tr: np.ndarray, sc: np.ndarray, parents) -> np.ndarray:
    """(S, J, 4, 4) object-space matrices of local rotations (S, J, 4) xyzw, translations and
    scales (S, J, 3): M = T R S, object = parent object @ local, all in float64."""
    q = np.asarray(rot, np.float64)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    n = x * x + y * y + z * z + w * w
    s = 2.0 / n
    r = np.empty(q.shape[:-1] + (3, 3))
    r[..., 0, 0] = 1 - s * (y * y + z * z)
    r[..., 0, 1] = s * (x * y - z * w)
    r[..., 0, 2] = s * (x * z + y * w)
    r[..., 1, 0] = s * (x * y + z * w)
    r[..., 1, 1] = 1 - s * (x * x + z * z)
    r[..., 1, 2] = s * (y * z - x * w)
    r[..., 2, 0] = s * (x * z - y * w)
    r[..., 2, 1] = s * (y * z + x * w)
    r[..., 2, 2] = 1 - s * (x * x + y * y)
    local = np.zeros(q.shape[:-1] + (4, 4))
    local[..., :3, :3] = r * np.asarray(sc, np.float64)[..., None, :]
    local[..., :3, 3] = tr
    local[..., 3, 3] = 1.0
    world = np.empty_like(local)
    for j, p in enumerate(parents):  # parents come first
        world[:, j] = local[:, j] if p < 0 else world[:, p] @ local[:, j]
    return world


def reference_error(raw: np.ndarray, lossy: np.ndarray, shell: np.ndarray) -> np.ndarray:
    """(S, J) largest distance between the raw and lossy images of each joint's own shell
    points, given (S, J, 4, 4) matrices and shell distances (J,)."""
    worst = np.zeros(raw.shape[:2])
    for axis in range(3):
        point = np.zeros((len(shell), 4))
        point[:, axis] = shell
        point[:, 3] = 1.0
        a = np.einsum("sjab,jb->sja", raw, point)[..., :3]
        b = np.einsum("sjab,jb->sja", lossy, point)[..., :3]
        worst = np.maximum(worst, np.sqrt(((a - b) ** 2).sum(axis=-1)))
    return worst


def _clip_matrices(clip: Clip) -> np.ndarray:
    return reference_matrices(clip.rotations, clip.translations, clip.scales, clip.skeleton.parents)


def _random_settings(clip: Clip, seed: int) -> Clip:
    """Each joint its own shell distance (0.5-40 units) and precision (0.002-0.05)."""
    rng = np.random.default_rng(seed)
    j = clip.num_joints
    shell = np.exp(rng.uniform(np.log(0.5), np.log(40.0), j))
    prec = np.exp(rng.uniform(np.log(0.002), np.log(0.05), j))
    return clip.with_skeleton_settings(prec, shell)


def _rules_settings(clip: Clip) -> Clip:
    """Per-joint values from rules as a user writes them (sidecar / the settings panel)."""
    rules = [
        JointOverride("*hand*", precision=0.002, shell_distance=12.0),
        JointOverride("*foot*", shell_distance=25.0),
        JointOverride("*spine*", precision=0.03, shell_distance=0.7),
        JointOverride("*head*", shell_distance=8.0),
    ]
    out = tuned_clip(clip, GlobalSettings(precision=0.01, shell_distance=3.0), rules)
    assert len(np.unique(out.skeleton.shell_distance)) >= 4  # the rules reached the joints
    return out


CASES = [
    ("acl/cmu_09_02.acl.sjson", "random"),
    ("acl/cmu_09_02.acl.sjson", "rules"),
    ("acl/cmu_81_16_two_samples.acl.sjson", "random"),
    ("gltf/CesiumMan.glb", "random"),
]


@pytest.fixture(scope="module")
def compressed() -> dict[tuple[str, str], tuple[Clip, object]]:
    out = {}
    for name, how in CASES:
        clip = load_clip(DATA / name)
        clip = _random_settings(clip, 7) if how == "random" else _rules_settings(clip)
        out[name, how] = clip, compress(clip, CompressionSettings(skin_error=False))
    return out


@pytest.mark.parametrize(("name", "how"), CASES)
def test_reported_error_is_the_float64_reference(compressed, name: str, how: str) -> None:
    clip, result = compressed[name, how]
    sk = clip.skeleton
    # the shells really differ between each joint and its parent, else this tests nothing
    child = sk.parents >= 0
    assert np.any(sk.shell_distance[child] != sk.shell_distance[sk.parents[child]])
    expected = reference_error(
        _clip_matrices(clip), _clip_matrices(result.lossy), sk.shell_distance
    )
    assert expected.max() > 0
    # float64 throughout on both sides: only summation order differs
    np.testing.assert_allclose(result.error, expected, rtol=1e-9, atol=1e-12)
    stats = result.stats
    worst = np.unravel_index(np.argmax(expected), expected.shape)
    assert stats["max_error"] == pytest.approx(expected.max(), rel=1e-9)
    assert stats["worst_track"] == worst[1]
    over = expected.max(axis=0) > sk.precision
    assert stats["precision_met"] == (not over.any())
    assert stats["joints_over_precision"] == [sk.names[j] for j in np.flatnonzero(over)]


@pytest.mark.parametrize(("name", "how"), CASES)
def test_the_window_pose_error_is_the_float64_reference(compressed, name: str, how: str) -> None:
    """The numpy path (`pose_error`, what the readouts quote at the shown pose)."""
    clip, result = compressed[name, how]
    sk = clip.skeleton
    lossy = result.lossy
    expected = reference_error(_clip_matrices(clip), _clip_matrices(lossy), sk.shell_distance)
    for s in sorted({0, clip.num_samples // 2, clip.num_samples - 1}):
        raw_pose = Pose(clip.rotations[s], clip.translations[s], clip.scales[s])
        lossy_pose = Pose(lossy.rotations[s], lossy.translations[s], lossy.scales[s])
        got = pose_error(raw_pose, lossy_pose, sk.parents, sk.shell_distance).error
        np.testing.assert_allclose(got, expected[s], rtol=1e-9, atol=1e-12)


def test_precision_met_and_the_joints_over_it_per_joint() -> None:
    """Measured against precisions set around each joint's own reference error (half of
    it for some joints, twice it for the others), the stats name exactly the joints over."""
    clip = _random_settings(load_clip(DATA / "acl/cmu_09_02.acl.sjson"), 11)
    settings = CompressionSettings(skin_error=False, supersample=0)
    result = compress(clip, settings)
    sk = clip.skeleton
    expected = reference_error(
        _clip_matrices(clip), _clip_matrices(result.lossy), sk.shell_distance
    ).max(axis=0)
    moving = np.flatnonzero(expected > 1e-7)
    assert len(moving) > 10
    tight = np.zeros(clip.num_joints, bool)
    tight[moving[::3]] = True  # every third moving joint gets half its error as precision
    precision = np.where(tight, expected * 0.5, np.maximum(expected * 2.0, 1e-6))
    strict = clip.with_skeleton_settings(precision, sk.shell_distance)
    sizes = (len(result.data), len(result.data))
    stats = measure(strict, result.decoder, settings, sizes, 0.0).stats
    assert stats["precision_met"] is False
    assert stats["joints_over_precision"] == [sk.names[j] for j in np.flatnonzero(tight)]
    relaxed = clip.with_skeleton_settings(np.maximum(expected * 2.0, 1e-6), sk.shell_distance)
    stats = measure(relaxed, result.decoder, settings, sizes, 0.0).stats
    assert stats["precision_met"] is True and stats["joints_over_precision"] == []


def _blend(clip: Clip, times: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Local rotations, translations and scales at `times` (N,): samples k and k + 1 mixed by
    the fraction past k, rotations by component lerp on the shorter arc then normalised (how
    ACL interpolates), the rest by lerp; a looping clip's last interval ends on sample 0."""
    s = clip.num_samples
    pos = np.asarray(times, np.float64) * clip.sample_rate
    k = np.minimum(np.floor(pos + 1e-9).astype(int), s - 1)
    a = np.clip(pos - k, 0.0, 1.0)
    a = np.where(np.abs(a) < 1e-9, 0.0, a)[:, None, None]
    k1 = (k + 1) % s if clip.looping else np.minimum(k + 1, s - 1)
    q0, q1 = clip.rotations[k], clip.rotations[k1]
    q1 = np.where((q0 * q1).sum(-1, keepdims=True) < 0, -q1, q1)
    q = q0 + (q1 - q0) * a
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    tr = clip.translations[k] + (clip.translations[k1] - clip.translations[k]) * a
    sc = clip.scales[k] + (clip.scales[k1] - clip.scales[k]) * a
    return q, tr, sc


@pytest.mark.parametrize(("name", "how"), CASES[:2])
def test_error_between_samples_is_the_float64_reference(compressed, name: str, how: str) -> None:
    """The supersampled error (stored float32) at its own times, recomputed here."""
    clip, result = compressed[name, how]
    sk = clip.skeleton
    times = result.error_between_times
    assert len(times) > clip.num_samples  # several poses per interval
    raw = reference_matrices(*_blend(clip, times), sk.parents)
    lossy = reference_matrices(*_blend(result.lossy, times), sk.parents)
    expected = reference_error(raw, lossy, sk.shell_distance)
    np.testing.assert_allclose(result.error_between, expected, rtol=2e-6, atol=1e-9)
    assert result.stats["max_error_between_samples"] == pytest.approx(expected.max(), rel=2e-6)


def test_a_chain_with_growing_shells_by_hand() -> None:
    """Three joints on the x axis, 10 units apart; only the root turns, by 0.01 rad about z.
    A shell point at distance r from the turn moves by 2 r sin(0.005): each joint's own
    shell gives its own number, and the parent's shell would give another."""
    from codec.model.clip import Skeleton

    sk = Skeleton.create(["a", "b", "c"], [-1, 0, 1], precision=1.0, shell_distance=1.0)
    sk = sk.with_settings(shell_distance=np.array([1.0, 4.0, 9.0]))
    angle = 0.01
    rot = np.zeros((1, 3, 4))
    rot[..., 3] = 1.0
    lossy_rot = rot.copy()
    lossy_rot[0, 0] = [0, 0, np.sin(angle / 2), np.cos(angle / 2)]
    tr = np.zeros((1, 3, 3))
    tr[0, 1:, 0] = 10.0
    sc = np.ones((1, 3, 3))
    got = pose_error(
        Pose(rot[0], tr[0], sc[0]), Pose(lossy_rot[0], tr[0], sc[0]), sk.parents, sk.shell_distance
    ).error
    chord = 2 * np.sin(angle / 2)
    # joint at x0 from the pivot, shell d: farthest shell point is (x0 + d, 0) or (x0, d)
    want = [chord * max(x0 + d, np.hypot(x0, d)) for x0, d in [(0, 1.0), (10, 4.0), (20, 9.0)]]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    ref = reference_error(
        reference_matrices(rot, tr, sc, sk.parents),
        reference_matrices(lossy_rot, tr, sc, sk.parents),
        sk.shell_distance,
    )
    np.testing.assert_allclose(ref[0], want, rtol=1e-12)
