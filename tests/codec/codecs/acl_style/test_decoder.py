"""acl-style's sample_times: the same poses, bit for bit, whether it decodes the samples it
needs or blends the rows `decode_all` kept, and as numpy's nlerp of the decoded rows."""

from __future__ import annotations

import numpy as np
import pytest

import codec
from codec.codecs.acl_style import decoder as decoder_module
from codec.codecs.acl_style.decoder import CompressedClip
from codec.codecs.registry import decode_file
from codec.model.clip import UNIT_EXACT, Clip
from codec.model.sampling import Pose, blend, sample_keys_batch
from codec.settings import CompressionSettings
from tests.codec.helpers import chain_clip, data_clip

Array = np.ndarray


def _numpy_sample_times(dec, times: Array) -> tuple[Array, Array, Array]:
    """The decoded rows a time needs, normalised and blended by sampling.blend."""
    first, second, alpha = sample_keys_batch(
        times, dec.sample_rate, dec.num_samples, "none", dec.wrap, dec.duration
    )
    rot, tr, sc = dec.decode_rows(np.arange(dec.num_samples))
    rot = rot / np.linalg.norm(rot, axis=-1, keepdims=True)
    a, b = first, second
    pose = blend(Pose(rot[a], tr[a], sc[a]), Pose(rot[b], tr[b], sc[b]), alpha[:, None])
    return pose.rotations, pose.translations, pose.scales


def _fresh_decoder(data: bytes, clip) -> CompressedClip:
    """A decoder of the written file that has decoded nothing yet."""
    _, dec = decode_file(data, clip.skeleton)
    assert isinstance(dec, CompressedClip)
    return dec


def _assert_bits(got, want) -> None:
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.tobytes() == w.tobytes()


@pytest.mark.parametrize(
    "source, settings",
    [
        ("cmu_09_02.acl.sjson", CompressionSettings(skin_error=False)),
        ("cmu_09_02.acl.sjson", CompressionSettings(strip_proportion=0.4, skin_error=False)),
        ("cmu_81_18_looping.acl.sjson", CompressionSettings(skin_error=False)),  # wraps
        ("chain", CompressionSettings(precision=0.05, skin_error=False)),
    ],
)
def test_kept_rows_blend_to_what_decoding_each_batch_gives(source, settings, monkeypatch) -> None:
    clip = (
        chain_clip(num_samples=21, scale=True)
        if source == "chain"
        else codec.load_clip(data_clip(source))
    )
    r = codec.compress(clip, settings)
    rng = np.random.default_rng(5)
    times = np.concatenate(
        (rng.uniform(-0.1, clip.duration + 0.1, 300), r.error_between_times, [clip.duration])
    )
    fresh = _fresh_decoder(r.data, r.clip)
    monkeypatch.setattr(decoder_module, "DECODE_CHUNK", 16)  # many batches
    decoded = fresh.sample_times(times)  # nothing kept yet: decodes batch by batch
    assert fresh._rows is None
    fresh.decode_all()
    assert fresh._rows is not None
    kept = fresh.sample_times(times)
    _assert_bits(kept, decoded)
    _assert_bits(kept, _numpy_sample_times(fresh, times))
    assert fresh.wrap == (source == "cmu_81_18_looping.acl.sjson")  # the loop is detected


def test_a_long_clip_keeps_nothing(monkeypatch) -> None:
    """Past KEEP_ROWS stored samples x joints the rows are decoded again each time."""
    clip = codec.load_clip(data_clip("cmu_09_02.acl.sjson"))
    r = codec.compress(clip, CompressionSettings(skin_error=False))
    monkeypatch.setattr(decoder_module, "KEEP_ROWS", clip.num_joints * 5)
    fresh = _fresh_decoder(r.data, r.clip)
    fresh.decode_all()
    assert fresh._rows is None
    times = r.error_between_times
    _assert_bits(fresh.sample_times(times), _numpy_sample_times(fresh, times))


@pytest.mark.parametrize("source", ["cmu_81_18_looping.acl.sjson", "cmu_09_02.acl.sjson"])
def test_decode_source_is_decode_all_with_the_dropped_sample_and_one_clip(
    source, monkeypatch
) -> None:
    """decode_source: decode_all's samples bit for bit, a wrapping clip's last one the first
    again, under the name asked for, made as one Clip (its checks cost a long clip's most)."""
    clip = codec.load_clip(data_clip(source))
    r = codec.compress(clip, CompressionSettings(skin_error=False))
    whole = _fresh_decoder(r.data, r.clip).decode_all()
    fresh = _fresh_decoder(r.data, r.clip)
    made = []
    checks = Clip.__post_init__
    monkeypatch.setattr(Clip, "__post_init__", lambda c: made.append(1) or checks(c))
    got = fresh.decode_source("named")
    assert len(made) == 1 and got.name == "named" and got.looping == fresh.wrap
    assert got.num_samples == clip.num_samples == whole.num_samples + fresh.wrap
    want = (whole.rotations, whole.translations, whole.scales)
    if fresh.wrap:
        want = tuple(np.concatenate((a, a[:1])) for a in want)
    _assert_bits((got.rotations, got.translations, got.scales), want)
    assert fresh._rows is not None and len(fresh._rows[0]) == whole.num_samples


def _numpy_unit(rot: np.ndarray) -> np.ndarray:
    """What a Clip of decoded rotations holds, numpy's way: normalise, then exactly_unit."""
    from codec.model.clip import exactly_unit

    rot = rot.copy()
    decoder_module.normalise(rot)
    with np.errstate(invalid="ignore", divide="ignore"):  # the corrupt rows' second division
        return exactly_unit(rot)


def test_unit_decoded_is_numpys_normalise_and_exactly_unit_to_the_bit() -> None:
    """The compiled pass against numpy's steps: random lengths, float32-decoded rows, rows
    that need the second division, zeros and NaN (corrupt data), and a real clip's decoded
    rows. On x86-64 numpy sums pairwise and the kernel runs; elsewhere numpy's own steps do
    (and this compares them with themselves)."""
    import platform

    if platform.machine() in ("x86_64", "AMD64"):
        assert decoder_module.SUMS_PAIRWISE
    rng = np.random.default_rng(5)
    q = rng.normal(size=(400, 9, 4)) * rng.uniform(1e-3, 1e3, (400, 9, 1))
    q[:100] = q[:100].astype(np.float32)
    q[100:200] /= np.linalg.norm(q[100:200], axis=-1, keepdims=True)  # nearly unit already
    q[200, 0] = 0.0
    q[201, 1, 2] = np.nan
    q[202, 2] = [1e-300, 0.0, 0.0, 1e-300]
    q[203] = rng.normal(size=(9, 4)) * 1e-160  # subnormal squares: off 1 after one division
    q[204, 0] = [1e200, 0.0, 0.0, 1.0]  # an infinite length
    encoded = codec.compress(codec.load_clip(data_clip("cmu_09_02.acl.sjson"))).decoder
    real = encoded.decode_rows(np.arange(encoded.num_samples))[0]
    for rot in (q, real):
        want = _numpy_unit(rot)
        with np.errstate(all="raise"):  # the kernel warns of nothing
            got = decoder_module.unit_decoded(rot.copy())
        assert got.dtype == np.float64 and got.shape == rot.shape
        np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))
    once = q.copy()
    decoder_module.normalise(once)
    length = np.sqrt(np.einsum("...i,...i->...", once, once))
    assert np.sum(np.abs(length - 1.0) > UNIT_EXACT) >= 5  # the second division is met
