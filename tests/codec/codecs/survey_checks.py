"""Checks every survey codec passes, called by each codec's own test module.

The strict check is the outsider's (acl_style/test_strict.py): the payload is decoded
again from its bytes and every joint's shell points are compared in float64 with 4x4
matrices built there, never through the codec's own error arithmetic.
"""

from __future__ import annotations

import struct
from functools import cache

import numpy as np
import pytest

import codec
from codec.codecs.base import Encoded
from codec.errors import CompressedFormatError
from codec.model.clip import Clip, Skeleton
from codec.model.sampling import BASE_ROUNDING
from codec.settings import CompressionSettings
from tests.codec.codecs.acl_style.test_strict import CLIPS, _id, world_points

SETTINGS = CompressionSettings(precision=0.01, shell_distance=3.0)
STRICT_IDS = [_id(c) for c in CLIPS]


def outsider_errors(raw: Clip, lossy: Clip) -> np.ndarray:
    """(J,) worst error of every joint over every source sample, float64, 4x4 matrices."""
    sk = raw.skeleton
    a = world_points(raw.rotations, raw.translations, raw.scales, sk.parents, sk.shell_distance)
    b = world_points(
        lossy.rotations, lossy.translations, lossy.scales, sk.parents, sk.shell_distance
    )
    return np.linalg.norm(a - b, axis=-1).max(axis=(0, 2))


STRICT_SAMPLES = 300  # longer clips are checked on their first samples (runtime)
MOCAP_SAMPLES = 120  # a motion-capture take's first 4 s, for the codecs that fit every window alike


def strict_samples(item_id: str) -> int:
    """Samples of `item_id` the strict check of a key-fitting codec takes: keyed clips whole
    (their keys are found across the whole clip, up to STRICT_SAMPLES), a motion-capture take
    its first MOCAP_SAMPLES (the fit places keys the same way on every window: a longer one
    shows nothing new and costs its time; whole takes: bench/survey_codecs.py)."""
    return STRICT_SAMPLES if item_id.startswith("keyed/") else MOCAP_SAMPLES


@cache
def load(item_id: str) -> Clip:
    path, animation = CLIPS[STRICT_IDS.index(item_id)]
    return codec.load_clip(path, **({"animation": animation} if animation else {}))


def strict_window(clip: Clip, samples: int = STRICT_SAMPLES) -> Clip:
    """The clip, or its first `samples` samples: the four long mocap takes (1197 to 3070
    samples) would take most of the suite's time with nothing new to show; the benchmark
    (bench/survey_codecs.py) runs them whole."""
    if clip.num_samples <= samples:
        return clip
    n = samples
    return clip.replace(
        rotations=clip.rotations[:n], translations=clip.translations[:n], scales=clip.scales[:n]
    )


@cache
def window(item_id: str, samples: int = STRICT_SAMPLES) -> Clip:
    """The real clip `item_id` as the strict check takes it (its first `samples` samples,
    the check's settings applied), one object per clip: `encoded` then shares one encoding
    between the checks of a codec that read it."""
    return SETTINGS.apply(strict_window(load(item_id), samples))


def check_strict(c, item_id: str, samples: int = STRICT_SAMPLES) -> None:
    """Every joint within its precision at every source sample, from the bytes."""
    clip = window(item_id, samples)
    enc = encoded(c, clip)
    lossy = c.decode(enc.payload, clip.skeleton).decode_source()
    assert lossy.num_samples == clip.num_samples
    err = outsider_errors(clip, lossy)
    worst = int(np.argmax(err))
    assert np.all(err <= clip.skeleton.precision), f"{clip.skeleton.names[worst]}: {err[worst]:.9f}"
    assert enc.details["strict"] is True
    assert err.max() == pytest.approx(enc.details["max_error"], rel=1e-6, abs=1e-9)


_ENCODED: dict[tuple[str, int], tuple[Clip, Encoded]] = {}


def encoded(c, clip: Clip) -> Encoded:
    """`c.encode(clip, SETTINGS)`, made once per codec and clip object for the checks that
    only read it (round trip, rounding, corrupt payloads all take cmu_09_02: encoding a real
    clip costs seconds). The clip is kept with it so its id cannot be reused."""
    key = (c.name, id(clip))
    if key not in _ENCODED:
        _ENCODED[key] = (clip, c.encode(clip, SETTINGS))
    return _ENCODED[key][1]


def check_round_trip(c, clip: Clip) -> Encoded:
    """The bytes decode to the poses the encoder's decoder gives; encoding is repeatable
    (a fresh encoding gives the shared one's bytes)."""
    enc = encoded(c, clip)
    assert isinstance(enc.payload, bytes) and enc.details["compressed_size"] == len(enc.payload)
    again = c.decode(enc.payload, clip.skeleton)
    a, b = enc.decoder.decode_source(), again.decode_source()
    for x, y in (
        (a.rotations, b.rotations),
        (a.translations, b.translations),
        (a.scales, b.scales),
    ):
        np.testing.assert_array_equal(x, y)
    assert c.encode(clip, SETTINGS).payload == enc.payload
    assert again.codec_name == c.name and again.num_samples == clip.num_samples
    assert again.sample_rate == clip.sample_rate and again.wrap is False
    assert again.duration == pytest.approx((clip.num_samples - 1) / clip.sample_rate)
    return enc


def check_rounding(c, clip: Clip) -> None:
    """floor / ceil / nearest snap to the source grid (so they give decode_source's samples),
    none evaluates between, per_track gives each joint its own mode's pose, and the batched
    sample_times agrees with sample."""
    enc = encoded(c, clip)
    dec = c.decode(enc.payload, clip.skeleton)
    src = dec.decode_source()
    rate, S = clip.sample_rate, clip.num_samples
    rng = np.random.default_rng(7)
    times = np.concatenate((rng.uniform(0.0, dec.duration, 12), [0.0, dec.duration, 2.0 / rate]))
    expect_index = {
        "floor": lambda p: np.floor(p),
        "ceil": lambda p: np.ceil(p),
        "nearest": lambda p: np.floor(p + 0.5),
    }
    J = clip.num_joints
    for t in times:
        pos = t * rate
        poses = {m: dec.sample(float(t), m) for m in BASE_ROUNDING}
        for mode, index in expect_index.items():
            i = int(min(index(pos), S - 1))
            p = poses[mode]
            np.testing.assert_allclose(p.rotations, src.rotations[i], atol=1e-12, err_msg=mode)
            np.testing.assert_allclose(p.translations, src.translations[i], atol=1e-9, err_msg=mode)
            np.testing.assert_allclose(p.scales, src.scales[i], atol=1e-12, err_msg=mode)
        for mode in BASE_ROUNDING:
            rot, tr, sc = dec.sample_times(np.array([t]), mode)
            np.testing.assert_allclose(rot[0], poses[mode].rotations, atol=1e-12)
            np.testing.assert_allclose(tr[0], poses[mode].translations, atol=1e-9)
        modes = np.array([BASE_ROUNDING[j % 4] for j in range(J)])
        mixed = dec.sample(float(t), "per_track", per_track=modes)
        for j in range(J):
            np.testing.assert_allclose(mixed.rotations[j], poses[modes[j]].rotations[j], atol=1e-12)
            np.testing.assert_allclose(
                mixed.translations[j], poses[modes[j]].translations[j], atol=1e-9
            )
    # rounding none between two samples is the codec's own curve: within budget of the raw
    # clip's blend is not promised, but it is continuous: halfway lies near both neighbours
    half = dec.sample((S // 2 + 0.5) / rate, "none")
    assert np.all(np.isfinite(half.translations)) and np.allclose(
        np.linalg.norm(half.rotations, axis=-1), 1.0
    )
    with pytest.raises(ValueError):
        dec.sample(0.0, "sideways")
    wrapped = dec.sample(dec.duration + 0.5 / rate, "none", looping="wrap")
    first, last = dec.sample(0.0, "floor"), dec.sample(dec.duration, "floor")
    mid = codec.model.sampling.blend(last, first, 0.5)
    np.testing.assert_allclose(wrapped.translations, mid.translations, atol=1e-9)


def check_corrupt(c, clip: Clip) -> None:
    """Every truncation, a flipped byte anywhere, a wrong version, a wrong skeleton and
    trailing bytes: CompressedFormatError, one line each."""
    payload = encoded(c, clip).payload
    sk = clip.skeleton
    cuts = sorted({0, 1, 5, 6, len(payload) // 2, len(payload) - 1, *range(0, len(payload), 97)})
    for n in cuts:
        with pytest.raises(CompressedFormatError) as info:
            c.decode(payload[:n], sk)
        assert "\n" not in str(info.value)
    rng = np.random.default_rng(3)
    for at in rng.integers(6, len(payload), 12):
        bad = bytearray(payload)
        bad[at] ^= 0x5A
        with pytest.raises(CompressedFormatError):
            c.decode(bytes(bad), sk)
    with pytest.raises(CompressedFormatError, match="version"):
        c.decode(bytes([payload[0] + 1]) + payload[1:], sk)
    with pytest.raises(CompressedFormatError):
        c.decode(payload + b"\0", sk)
    other = Skeleton.create([*sk.names, "extra"], [*sk.parents.tolist(), 0])
    with pytest.raises(CompressedFormatError, match="joints"):
        c.decode(payload, other)


def check_identity(c) -> None:
    """Codec name, id and description as the contract sets them."""
    ids = {"subsample": 1, "keyreduce": 2, "curve": 3, "wavelet": 4, "authored": 5}
    assert ids[c.name] == c.codec_id
    assert c.description and "\n" not in c.description


def chain_clip(values: np.ndarray, rate: float = 30.0) -> Clip:
    """A three-joint chain whose middle joint turns about z by `values (S,)` radians and
    whose root moves along x by 10 * values (hand-made clips for the codecs' own tests)."""
    S = len(values)
    from codec.model import quat

    rot = np.tile(quat.identity((1, 3)), (S, 1, 1))
    rot[:, 1] = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), values)
    tr = np.zeros((S, 3, 3))
    tr[:, 0, 0] = 10.0 * values
    tr[:, 1:, 1] = 20.0
    sk = Skeleton.create(["root", "mid", "tip"], [-1, 0, 1], bind_translations=tr[0])
    return Clip(sk, rate, rot, tr, np.ones((S, 3, 3)), name="chain")


def struct_version(payload: bytes) -> int:
    return struct.unpack_from("<B", payload)[0]
