"""authored: a glTF clip's own keys (CUBICSPLINE, LINEAR, STEP at irregular times), stored
quantised and read as the glTF spec reads them; strict from the bytes; between samples the
error is against the file's curve; auto keeps it when it is the smallest; real clips."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import codec
from codec.codecs.authored import AuthoredCodec
from codec.compression import compress
from codec.formats.gltf import read_gltf
from codec.model import quat
from codec.settings import CompressionSettings
from tests.codec.codecs import survey_checks as checks
from tests.codec.formats.test_gltf import hand_gltf, save_gltf
from tests.codec.helpers import DATA

CODEC = AuthoredCodec()
TIMES = np.cumsum([0.0, 0.3, 0.55, 0.35, 0.8, 0.65, 0.35, 0.9, 0.45, 0.6, 0.5, 0.7])
TIMES = TIMES.astype(np.float32)  # irregular: the reader resamples at 30 Hz
ARM = 4  # joints turning with CUBICSPLINE keys


def cubic_glb(tmp_path: Path) -> Path:
    """root -> arm1 .. arm4 -> tip. root's translation LINEAR, each arm's rotation
    CUBICSPLINE (about its own axis, seeded angles; tangents the quaternions' central
    differences per second, in and out unequal), tip's translation STEP; keys at TIMES."""
    f = np.float32
    rng = np.random.default_rng(33)
    t = TIMES.astype(np.float64)
    parts = [(TIMES, "SCALAR")]
    root = np.stack((np.sin(t) * 0.2, np.zeros_like(t), np.cos(t) * 0.1), axis=1)
    parts.append((root, "VEC3"))
    for a in range(ARM):
        half = np.radians(rng.uniform(-60.0, 60.0, len(t))) / 2
        axis = np.eye(3)[a % 3]
        q = np.concatenate((axis[None] * np.sin(half)[:, None], np.cos(half)[:, None]), axis=1)
        m = np.gradient(q, t, axis=0)
        parts.append((np.stack((m * 0.8, q, m * 1.1), axis=1).reshape(-1, 4), "VEC4"))
    tip = np.stack((np.full_like(t, 0.3), (np.arange(len(t)) % 3) * 0.05, np.zeros_like(t)), 1)
    parts.append((tip, "VEC3"))
    views, accessors, blob = [], [], b""
    for arr, kind in parts:
        arr = np.asarray(arr, f)
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": arr.nbytes})
        accessors.append(
            {"bufferView": len(views) - 1, "componentType": 5126, "count": len(arr), "type": kind}
        )
        blob += arr.tobytes()
    names = ["root", *(f"arm{a + 1}" for a in range(ARM)), "tip"]
    nodes = [
        {"name": n, "translation": [0, 0.3 if i else 0, 0], "children": [i + 1]}
        for i, n in enumerate(names)
    ]
    del nodes[-1]["children"]
    samplers = [{"input": 0, "output": 1, "interpolation": "LINEAR"}]
    channels = [{"sampler": 0, "target": {"node": 0, "path": "translation"}}]
    for a in range(ARM):
        samplers.append({"input": 0, "output": 2 + a, "interpolation": "CUBICSPLINE"})
        channels.append({"sampler": 1 + a, "target": {"node": 1 + a, "path": "rotation"}})
    samplers.append({"input": 0, "output": 2 + ARM, "interpolation": "STEP"})
    channels.append({"sampler": 1 + ARM, "target": {"node": 1 + ARM, "path": "translation"}})
    doc = {
        "asset": {"version": "2.0"},
        "nodes": nodes,
        "skins": [{"joints": list(range(len(names)))}],
        "animations": [{"name": "keyed", "samplers": samplers, "channels": channels}],
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [{"byteLength": len(blob)}],
    }
    return save_gltf(tmp_path, doc, blob, "glb")


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> codec.Clip:
    return read_gltf(cubic_glb(tmp_path_factory.mktemp("authored")))


def test_identity() -> None:
    checks.check_identity(CODEC)


def test_a_cubicspline_clip_compresses_through_its_own_curves(keyed: codec.Clip) -> None:
    """Sparse irregular keys, resampled at 30 Hz: auto keeps the file's own curves, the
    smallest strict encoding; between samples the error is measured against the file's
    curve and stays near the precision, where a codec that fits the samples jumps with the
    STEP track between two samples."""
    settings = CompressionSettings(codec="auto", skin_error=False)
    result = compress(keyed, settings)
    assert result.codec_name == "authored"
    tried = result.details["auto"]["codecs"]
    assert all(
        tried["authored"]["compressed_size"] < v["compressed_size"]
        for n, v in tried.items()
        if n != "authored"
    )
    lossy = codec.decode(result.data).decode_source()
    assert np.all(checks.outsider_errors(keyed, lossy) <= keyed.skeleton.precision)
    assert result.details["file_curve_tracks"] == 1 + ARM + 1
    assert result.details["interpolations"] == {"step": 1, "linear": 1, "slerp": 0, "cubic": ARM}
    between = result.stats["max_error_between_samples"]
    assert between <= 1.5 * keyed.skeleton.precision.max()
    other = compress(keyed, CompressionSettings(codec="curve", skin_error=False))
    assert other.stats["max_error_between_samples"] > 100 * between


def test_keys_read_as_the_gltf_spec_reads_them(tmp_path: Path) -> None:
    """tests/codec/formats/test_gltf.hand_gltf's keys, decoded between samples at a fine
    precision and checked against the spec by hand: CUBICSPLINE A's x over [0, 2] s (0 -> 1,
    out tangent 3 /s, in tangent 1 /s, times the 2 s interval) at 0.5 s is 0.90625 and at
    1.5 s 0.84375, plus the folded Armature's 1 (x 100 cm); STEP B's x is 0 until 1 s;
    LINEAR B's rotation is slerp: 45 degrees about z at 0.5 s."""
    clip = read_gltf(save_gltf(tmp_path, *hand_gltf(), "glb"))
    enc = CODEC.encode(clip, CompressionSettings(precision=1e-4))
    assert enc.details["strict"] and enc.details["sampled_tracks"] == 0
    rot, tr, _ = enc.decoder.sample_times(np.array([0.5, 0.999, 1.5]))
    np.testing.assert_allclose(tr[[0, 2], 0, 0], [190.625, 184.375], atol=1e-3)
    np.testing.assert_allclose(tr[:2, 1, 0], [0.0, 0.0], atol=1e-3)
    angle = np.degrees(2 * np.arctan2(rot[0, 1, 2], rot[0, 1, 3]))
    assert angle == pytest.approx(45.0, abs=1e-3)
    nlerp = quat.nlerp(quat.identity(()), np.array([0, 0, math.sqrt(0.5), math.sqrt(0.5)]), 0.5)
    assert abs(np.degrees(2 * np.arctan2(nlerp[2], nlerp[3])) - 45.0) < 1e-9  # same midway
    quarter = enc.decoder.sample_times(np.array([0.25]))[0][0, 1]
    assert np.degrees(2 * np.arctan2(quarter[2], quarter[3])) == pytest.approx(22.5, abs=1e-3)


def test_round_trip_rounding_and_corrupt_payloads(keyed: codec.Clip) -> None:
    checks.check_round_trip(CODEC, keyed)
    checks.check_rounding(CODEC, keyed)
    checks.check_corrupt(CODEC, keyed)


def test_a_clip_without_curves_is_its_samples_read_linearly() -> None:
    clip = checks.chain_clip(np.sin(np.linspace(0.0, 4.0, 40)))
    enc = CODEC.encode(clip, checks.SETTINGS)
    assert enc.details["strict"] and enc.details["file_curve_tracks"] == 0
    assert enc.details["sampled_tracks"] == enc.details["num_animated_tracks"] > 0
    assert not CODEC.suits(clip) and CODEC.suits(read_gltf(DATA / "gltf" / "RiggedSimple.glb"))


@pytest.mark.parametrize(
    "path, animation",
    [("gltf/Fox.glb", "Run"), ("gltf/CesiumMan.glb", None), ("usd/CesiumMan.usdz", None)],
)
def test_real_clips_keep_their_own_curves_strictly(path: str, animation: str | None) -> None:
    """Fox Run's keys lie on no uniform grid (read at 30 Hz): between samples its own curves
    stay within the precision where acl-style's blend of the samples is metres off. CesiumMan's
    root is folded under a non-joint node (a rotation): its keys are folded and kept."""
    clip = codec.load_clip(DATA / path, **({"animation": animation} if animation else {}))
    settings = CompressionSettings(codec="authored", skin_error=False)
    result = compress(clip, settings)
    lossy = codec.decode(result.data).decode_source()
    assert np.all(checks.outsider_errors(clip, lossy) <= clip.skeleton.precision)
    assert result.details["sampled_tracks"] == 0
    slerped = [t for t in result.decoder.tracks if t.interpolation == "slerp"]
    dropped = [t for t in slerped if t.drop < 4]  # unless a component nears 0 at some key
    assert dropped and all(t.ints.shape[1] == 3 for t in dropped)
    # fitted at the settings' supersampling: within the precision between samples too, as
    # auto measures it (Fox Run fitted at the samples alone was 0.0104 cm off at 0.01 cm)
    assert result.details["fitted_between_samples"]
    bound = clip.skeleton.precision.max() * (1.0 + 1e-6)
    assert result.stats["max_error_between_samples"] <= bound
    if animation == "Run":
        acl = compress(clip, CompressionSettings(skin_error=False))
        assert acl.stats["max_error_between_samples"] > 100.0


def test_a_layout_1_payload_decodes_as_it_did(keyed: codec.Clip) -> None:
    """tests/data/golden/authored-v1: the payload this codec wrote for `keyed` and the poses
    its decoder gave, at the samples and between them."""
    folder = DATA / "golden" / "authored-v1"
    payload = (folder / "keyed.authored").read_bytes()
    assert payload[0] == 1
    dec = CODEC.decode(payload, keyed.skeleton)
    expected = np.load(folder / "keyed_decoded.npz")
    got = dec.sample_times(expected["times"])
    for name, a in zip(("rotations", "translations", "scales"), got, strict=True):
        np.testing.assert_allclose(a, expected[name], rtol=0, atol=1e-12)
    assert np.all(checks.outsider_errors(keyed, dec.decode_source()) <= keyed.skeleton.precision)


def test_auto_keeps_a_clip_with_curves_within_its_precision_between_samples() -> None:
    """Fox Walk: the curve codec's encoding is the smallest strict at the samples, but a
    stepped track of it is metres off the file's curve between them; auto keeps the
    smallest that also follows the file's curves between samples (authored's)."""
    clip = codec.load_clip(DATA / "gltf" / "Fox.glb", animation="Walk")
    result = compress(clip, CompressionSettings(codec="auto", skin_error=False))
    tried = result.details["auto"]["codecs"]
    assert tried["curve"]["strict"] and not tried["curve"]["strict_between_samples"]
    assert tried["curve"]["compressed_size"] < tried["authored"]["compressed_size"]
    assert result.details["auto"]["chosen"] == "authored"
    assert result.stats["max_error_between_samples"] <= clip.skeleton.precision.max()
