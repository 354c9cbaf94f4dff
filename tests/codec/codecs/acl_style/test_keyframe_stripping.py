"""Keyframe stripping (ACL 2.1): keyed clips lose their in-betweens, mocap keeps every
keyframe, every rounding mode works on the source grid, and everything stays strict in
float64 from the written bytes."""

from __future__ import annotations

import dataclasses
import io
import json
import struct
import zlib

import numpy as np
import pytest

import codec
from codec.codecs import container
from codec.codecs.acl_style import layout as ssc_format
from codec.codecs.acl_style.keyframe_stripping import neighbours, rebuild
from codec.compression import compress
from codec.errors import CompressedFormatError, SettingsError
from codec.settings import CompressionSettings
from tests.codec.codecs.acl_style.test_strict import independent_max_error
from tests.codec.helpers import chain_clip, data_clip, keyed_clip

STRICT = CompressionSettings(precision=0.01, shell_distance=3.0, skin_error=False)
OFF = CompressionSettings(precision=0.01, shell_distance=3.0, skin_error=False, strip_trivial=False)


@pytest.fixture(scope="module")
def keyed_13_07() -> codec.Clip:
    return keyed_clip(codec.load_clip(data_clip("cmu_13_07.acl.sjson")), 6)


def test_the_keyed_clip_helper_keeps_its_keys_and_rebuilds_linearly() -> None:
    src = chain_clip(num_samples=20)
    k = keyed_clip(src, 6)
    assert k.num_samples == 20
    for s in (0, 6, 12, 18, 19):
        assert np.allclose(k.translations[s], src.translations[s])
        assert np.allclose(np.abs(np.sum(k.rotations[s] * src.rotations[s], -1)), 1.0)
    assert np.allclose(k.translations[3], (src.translations[0] + src.translations[6]) / 2)
    assert not np.allclose(k.translations[3], src.translations[3])


@pytest.mark.parametrize("name", ["cmu_13_07.acl.sjson", "cmu_49_15.acl.sjson"])
def test_keyed_clips_strip_their_in_betweens_and_stay_strict(name: str) -> None:
    clip = keyed_clip(codec.load_clip(data_clip(name)), 6)
    r = compress(clip, STRICT)
    s = r.stats
    full = compress(clip, OFF).stats
    # keys every 6 samples and two kept ends per segment of ~17: about 5 of 17 stay
    assert s["num_stripped_keyframes"] > 0.6 * clip.num_samples
    assert s["num_trivial_keyframes"] >= s["num_stripped_keyframes"]
    assert full["num_stripped_keyframes"] == 0
    assert s["compressed_size"] < 0.65 * full["compressed_size"]
    assert not s["keyframe_stripping"]["destructive"]
    assert sum(g["num_stripped_keyframes"] for g in s["segments"]) == s["num_stripped_keyframes"]
    err = independent_max_error(r.clip, r.data)
    assert np.all(err <= r.clip.skeleton.precision), err.max()
    assert s["precision_met"] and err.max() == pytest.approx(s["max_error"], rel=1e-9)
    # the first and last keyframe of every segment are stored
    retained = codec.decode(r.data).encoded.retained
    first, count = r.costs.segments[:, 0], r.costs.segments[:, 1]
    assert np.all(retained[first]) and np.all(retained[first + count - 1])


def test_mocap_strips_nothing_and_writes_the_same_bytes() -> None:
    clip = codec.load_clip(data_clip("cmu_49_15.acl.sjson"))
    on, off = compress(clip, STRICT), compress(clip, OFF)
    assert on.stats["num_stripped_keyframes"] == 0
    assert on.data == off.data
    word = ssc_format.HEADER.unpack_from(container.read(on.data).payload)[3]
    assert not word & ssc_format.STRIPPED_BIT


def test_a_hand_made_linear_clip_strips_to_its_keys() -> None:
    """A 5-joint chain swinging 0.9 rad, keyed every 5 samples with nlerp in-betweens: the
    midpoint of two in-betweens is not the in-between midway, so ACL's one-at-a-time order
    strips only 2 of its 24 in-betweens at 0.01 cm; the fewest-keyframes search finds the
    keys again, strictly."""
    clip = keyed_clip(chain_clip(num_samples=31, num_joints=5, amplitude=0.9), 5)
    for precision in (0.1, 0.01):
        r = compress(clip, CompressionSettings(precision=precision, skin_error=False))
        retained = codec.decode(r.data).encoded.retained
        assert retained is not None  # one segment of 31 samples, keys 0, 5, ..., 30
        assert np.flatnonzero(retained).tolist() == list(range(0, 31, 5))
        assert r.stats["num_stripped_keyframes"] == 24
        assert independent_max_error(r.clip, r.data).max() <= precision


def test_every_rounding_mode_steps_the_source_frames_through_rebuilt_keyframes(
    keyed_13_07: codec.Clip,
) -> None:
    r = compress(keyed_13_07, STRICT)
    d = codec.decode(r.data)
    lossy = r.lossy
    rate = keyed_13_07.sample_rate
    stripped = np.flatnonzero(~d.encoded.retained)
    assert len(stripped) > 100
    for k in stripped[:40]:
        t = (k + 0.3) / rate
        floor, ceil = d.sample(t, "floor"), d.sample(t, "ceil")
        near, none = d.sample(t, "nearest"), d.sample(t, "none")
        assert np.allclose(floor.translations, lossy.translations[k], atol=1e-12)
        assert np.allclose(ceil.translations, lossy.translations[k + 1], atol=1e-12)
        assert np.allclose(near.translations, lossy.translations[k], atol=1e-12)
        blend = 0.7 * lossy.translations[k] + 0.3 * lossy.translations[k + 1]
        assert np.allclose(none.translations, blend, atol=1e-9)
        dots = np.abs(np.sum(floor.rotations * lossy.rotations[k], axis=-1))
        assert np.allclose(dots, 1.0, atol=1e-12)
        per = d.sample(t, "per_track", per_track=["ceil"] * keyed_13_07.num_joints)
        assert np.allclose(per.translations, lossy.translations[k + 1], atol=1e-12)
    # the rebuilt keyframe lies between its stored neighbours, not on either
    k = int(stripped[0])
    a, b, alpha = neighbours(d.retained, np.array([k]))
    assert a[0] < k < b[0] and 0 < alpha[0] < 1


def test_rebuild_keeps_a_stored_keyframe_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    rot = rng.normal(size=(2, 3, 4)).astype(np.float32).astype(np.float64)
    tr = rng.normal(size=(2, 3, 3))
    sc = np.ones((2, 3, 3))
    a = (rot[:1], tr[:1], sc[:1])
    b = (rot[1:], tr[1:], sc[1:])
    out = rebuild(a, b, np.array([0.0]))
    assert all(np.array_equal(x, y) for x, y in zip(out, a, strict=True))
    half = rebuild(a, b, np.array([0.5]))
    assert np.allclose(half[1], (tr[0] + tr[1]) / 2)
    assert np.allclose(np.linalg.norm(half[0], axis=-1), 1.0)


def test_neighbours_on_a_hand_made_mask() -> None:
    retained = np.array([1, 0, 0, 1, 1, 0, 1], dtype=bool)
    a, b, alpha = neighbours(retained, np.arange(7))
    assert a.tolist() == [0, 0, 0, 3, 4, 4, 6]
    assert b.tolist() == [0, 3, 3, 3, 4, 6, 6]
    assert np.allclose(alpha, [0, 1 / 3, 2 / 3, 0, 0, 0.5, 0])


def test_destructive_settings_strip_more_and_say_so() -> None:
    clip = codec.load_clip(data_clip("cmu_49_15.acl.sjson"))
    half = compress(
        clip, CompressionSettings(precision=0.01, skin_error=False, strip_proportion=0.5)
    )
    s = half.stats
    g = len(half.costs.segments)
    assert s["num_stripped_keyframes"] >= min(int(0.5 * clip.num_samples), clip.num_samples - 2 * g)
    assert s["keyframe_stripping"]["destructive"]
    loose = compress(
        clip, CompressionSettings(precision=0.01, skin_error=False, strip_threshold=0.5)
    )
    assert 0 < loose.stats["num_stripped_keyframes"]
    assert loose.stats["max_error"] > 0.01  # destructive: past the precision, as asked
    assert loose.stats["compressed_size"] < compress(clip, STRICT).stats["compressed_size"]
    with pytest.raises(SettingsError, match="strip proportion"):
        CompressionSettings(strip_proportion=1.5)
    with pytest.raises(SettingsError, match="strip threshold"):
        CompressionSettings(strip_threshold=-1.0)


def test_a_bad_keyframe_mask_is_refused_in_one_line(keyed_13_07: codec.Clip) -> None:
    r = compress(keyed_13_07, STRICT)
    frame = container.read(r.data)
    parsed = ssc_format.read(frame.payload)
    assert parsed.encoded.retained is not None
    assert ssc_format.write(parsed.encoded).data == frame.payload  # round trip
    at = container.HEADER_SIZE + ssc_format.HEADER_SIZE + int(parsed.segment_offsets[0])
    data = bytearray(r.data)
    data[at] &= 0xFE  # the segment's first keyframe marked stripped
    struct.pack_into("<I", data, 8, zlib.crc32(bytes(data[12:])))
    with pytest.raises(CompressedFormatError) as info:
        codec.decode(bytes(data))
    assert "keyframe mask" in str(info.value) and "\n" not in str(info.value)


def test_an_unknown_container_version_is_refused_in_one_line() -> None:
    data = bytearray(compress(codec.load_clip(data_clip("cmu_09_02.acl.sjson"))).data)
    data[4] = 1
    struct.pack_into("<I", data, 8, zlib.crc32(bytes(data[12:])))
    with pytest.raises(CompressedFormatError) as info:
        codec.decode(bytes(data))
    message = str(info.value)
    assert "version 1" in message and "compress the clip again" in message
    assert "\n" not in message


def test_the_tables_charge_only_the_stored_keyframes(keyed_13_07: codec.Clip) -> None:
    from codec.result_tables import cell_bytes, segment_sample_counts

    on, off = compress(keyed_13_07, STRICT), compress(keyed_13_07, OFF)
    counts = segment_sample_counts(on)
    assert counts.tolist() == codec.decode(on.data).encoded.retained_counts().tolist()
    assert counts.sum() == keyed_13_07.num_samples - on.stats["num_stripped_keyframes"]
    assert cell_bytes(on).sum() < 0.6 * cell_bytes(off).sum()


def test_the_command_line_flags_reach_the_codec_and_the_summary(tmp_path) -> None:
    from codec.cli import main
    from codec.formats.acl_sjson import write_acl_sjson

    clip = keyed_clip(chain_clip(num_samples=31, num_joints=5, amplitude=0.9), 5)
    src = tmp_path / "keyed.acl.sjson"
    write_acl_sjson(clip, src)

    def run(*flags: str) -> tuple[int, str, dict]:
        out, err = io.StringIO(), io.StringIO()
        stats = tmp_path / "stats.json"
        argv = ["compress", str(src), "--precision", "0.1", "--json", str(stats), *flags]
        code = main(argv, stdout=out, stderr=err)
        return code, out.getvalue(), json.loads(stats.read_text()) if code == 0 else {}

    code, text, s = run()
    assert code == 0 and s["num_stripped_keyframes"] == 24 and "24 stripped" in text
    code, text, s = run("--no-strip-trivial")
    assert s["num_stripped_keyframes"] == 0 and "stripping off" in text
    code, text, s = run("--strip-proportion", "0.9")
    assert s["keyframe_stripping"]["destructive"] and "DESTRUCTIVE" in text
    assert s["num_stripped_keyframes"] == int(0.9 * 31)  # at least that share (of 29 movable)
    code, text, s = run("--strip-threshold", "-1")
    assert code == 2


@pytest.mark.parametrize("source", ["mocap", "keyed"])
def test_the_screen_names_only_removals_over_a_precision(source: str, keyed_13_07) -> None:
    """The compiled screen stops a segment's stripping before measuring it only where every
    removal is over some joint's precision: it names no removal the exact measure finds
    within (never a trivial one), and every removal clearly over."""
    from codec.codecs.acl_style.decoder import decoded_clip
    from codec.codecs.acl_style.keyframe_stripping import surely_over
    from codec.measure.error_metric import clip_errors

    clip = codec.load_clip(data_clip("cmu_13_07.acl.sjson")) if source == "mocap" else keyed_13_07
    r = compress(clip, OFF)
    sk = clip.skeleton
    frames = np.arange(1, clip.num_samples - 1)
    decoded = r.decoder.decode_rows(np.arange(clip.num_samples))
    a = tuple(v[frames - 1] for v in decoded)
    b = tuple(v[frames + 1] for v in decoded)
    lossy = decoded_clip(sk, clip.sample_rate, rebuild(a, b, np.full(len(frames), 0.5)), False)
    raw = codec.Clip(
        sk, clip.sample_rate, clip.rotations[frames], clip.translations[frames], clip.scales[frames]
    )
    ratio = np.max(clip_errors(raw, lossy) / sk.precision, axis=1)
    raw_rows = (clip.rotations, clip.translations, clip.scales)
    over = surely_over(
        decoded, raw_rows, sk.parents, sk.shell_distance, sk.precision,
        frames - 1, frames + 1, frames, np.full(len(frames), 0.5),
    )  # fmt: skip
    assert np.all(ratio[over] > 1.0)
    assert np.all(over[ratio > 1.0 + 1e-5])
    assert np.any(ratio <= 1.0) == (source == "keyed")


@pytest.mark.parametrize("source", ["keyed", "chain"])
def test_the_compiled_span_bounds_find_the_same_spans(source: str, keyed_13_07) -> None:
    """`spans` with the compiled bounds measures exactly only where they straddle a limit,
    and finds the very spans it finds measuring every one; the bounds bracket every span's
    exact worst ratio. Planting an error in the bounds' arithmetic (a rebuild at the wrong
    alpha, a dropped margin) breaks the bracket on these keyed clips."""
    from codec.codecs.acl_style.decoder import normalise
    from codec.codecs.acl_style.keyframe_stripping import SPAN_GIVE_UP, span_bounds, spans
    from codec.measure.error_metric import array_errors
    from codec.model.clip import exactly_unit

    clip = keyed_13_07 if source == "keyed" else keyed_clip(chain_clip(62, 6, seed=3), 5)
    sk = clip.skeleton
    r = compress(clip, dataclasses.replace(OFF, bind="strip"))
    n = r.decoder.num_samples
    decoded = r.decoder.decode_rows(np.arange(n))
    raw = (clip.rotations, clip.translations, clip.scales)
    table = np.stack((r.decoder.encoded.segment_starts, r.decoder.encoded.segment_sizes), 1)
    measured: list[int] = []

    def errors_of(first, second, rows, alpha):  # as the encoder measures a rebuild
        measured.append(len(rows))
        rot, tr, sc = rebuild(
            tuple(v[first] for v in decoded), tuple(v[second] for v in decoded), alpha
        )
        normalise(rot)
        at = np.arange(len(rows))
        raw_rows = (exactly_unit(clip.rotations[rows]), clip.translations[rows], clip.scales[rows])
        return array_errors(
            raw_rows, (exactly_unit(rot), tr, sc), at, np.zeros(len(rows)), sk.parents,
            sk.shell_distance,
        )  # fmt: skip

    def bounds(starts, ends):
        return span_bounds(decoded, raw, sk.parents, sk.shell_distance, sk.precision, starts, ends)

    every = np.arange(len(table))
    exact = spans(table, sk.precision, errors_of, every)
    all_rows = sum(measured)
    measured.clear()
    fast = spans(table, sk.precision, errors_of, every, bounds)
    assert len(exact[0]) > 0
    assert np.array_equal(exact[0], fast[0]) and np.array_equal(exact[1], fast[1])
    assert sum(measured) < all_rows / 10  # the bounds decide almost every span alone

    # the bracket, on every span the bounds reached
    seg_end = np.repeat(table[:, 0] + table[:, 1] - 1, table[:, 1])
    starts = np.flatnonzero(np.arange(n) + 2 <= seg_end)
    lo, hi = bounds(starts, seg_end[starts])
    i, k = np.nonzero(np.isfinite(lo))
    first = np.repeat(starts[i], k - 1)
    rows = first + np.concatenate([np.arange(1, kk) for kk in k])
    width = np.repeat(k, k - 1)
    err = errors_of(first, first + width, rows, (rows - first) / width)
    ratio = np.max(err / sk.precision, axis=1)
    worst = np.maximum.reduceat(ratio, np.cumsum(k - 1) - (k - 1))
    assert np.all(lo[i, k] <= worst) and np.all(worst <= hi[i, k])
    assert np.all(hi[i, k] - lo[i, k] < 1e-3 * np.maximum(worst, 1.0))  # tight: few unsure
    assert np.any(worst <= 1.0) and np.any(worst > SPAN_GIVE_UP)
