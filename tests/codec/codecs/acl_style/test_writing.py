"""The compiled payload writer: every part of the layout round-trips through the reader,
read files write back to their own bytes, and bad encodings are refused, naming the value."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import codec
from codec.codecs import container
from codec.codecs.acl_style import layout
from codec.codecs.acl_style.bit_rates import RAW_BIT_RATE
from codec.codecs.acl_style.rotation_layout import PER_SEGMENT
from codec.compression import compress
from codec.settings import CompressionSettings
from tests.codec.helpers import DATA, data_clip, keyed_clip

_FIELDS = (
    "kinds",
    "constants",
    "const_dropped",
    "clip_layout",
    "clip_min",
    "clip_extent",
    "segment_sizes",
    "bit_rates",
    "seg_dropped",
    "seg_min",
    "seg_extent",
    "seg_constant",
)


def _payload(clip: codec.Clip, settings: CompressionSettings | None = None) -> bytes:
    return container.read(compress(clip, settings or CompressionSettings()).data).payload


def _same(a: layout.EncodedClip, b: layout.EncodedClip) -> None:
    for name in _FIELDS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert (a.num_joints, a.num_samples, a.sample_rate, a.wrap, a.bind) == (
        b.num_joints,
        b.num_samples,
        b.sample_rate,
        b.wrap,
        b.bind,
    )
    for qa, qb in zip(a.samples, b.samples, strict=True):
        np.testing.assert_array_equal(qa, qb)
    assert (a.retained is None) == (b.retained is None)
    if a.retained is not None:
        np.testing.assert_array_equal(a.retained, b.retained)


@pytest.mark.parametrize(
    "name",
    [
        "cmu_121_10_single_sample.acl.sjson",  # all constant: no animated sub-track
        "cmu_81_16_two_samples.acl.sjson",
        "cmu_09_02_multi_root.acl.sjson",
        "cmu_81_18_looping.acl.sjson",  # wraps, several segments with ranges
    ],
)
def test_real_payloads_write_back_to_their_own_bytes(name: str) -> None:
    payload = _payload(codec.load_clip(data_clip(name)))
    parsed = layout.read(payload)
    written = layout.write(parsed.encoded)
    assert written.data == payload
    np.testing.assert_array_equal(written.packed_offsets, parsed.packed_offsets)
    np.testing.assert_array_equal(written.segment_offsets, parsed.segment_offsets)


def test_stripped_keyframes_write_their_masks() -> None:
    clip = keyed_clip(codec.load_clip(data_clip("cmu_13_07.acl.sjson")), every=5)
    payload = _payload(clip, CompressionSettings(precision=0.01))
    parsed = layout.read(payload)
    assert parsed.encoded.retained is not None and not parsed.encoded.retained.all()
    assert layout.write(parsed.encoded).data == payload


def _with_every_layout_part() -> layout.EncodedClip:
    """A real multi-segment encoding changed to hold what mocap rarely does: a rotation
    whose dropped component varies by segment (4-component clip range, dropped component in
    the rate bytes), a constant and an animated rotation that drop x and z, a raw-rate
    sub-track and keyframe masks."""
    enc = layout.read(_payload(codec.load_clip(data_clip("cmu_49_15.acl.sjson")))).encoded
    g = enc.num_segments
    assert g > 2
    rot = np.flatnonzero(enc.clip_layout >= 0)
    clip_layout = enc.clip_layout.copy()
    seg_dropped = enc.seg_dropped.copy()
    clip_layout[rot[0]] = PER_SEGMENT
    seg_dropped[:, rot[0]] = np.arange(g) % 4
    clip_layout[rot[1]] = 2
    seg_dropped[:, rot[1]] = 2
    rates = enc.bit_rates.copy()
    rates[:, rot[2]] = RAW_BIT_RATE  # no segment range stored: the reader's are 0
    seg_min, seg_ext = enc.seg_min.copy(), enc.seg_extent.copy()
    seg_min[:, rot[2]] = seg_ext[:, rot[2]] = 0
    samples = [q.copy() for q in enc.samples]
    for q in samples:
        q[:, rot[2]] = np.float32(0.25).view(np.uint32)
    const_dropped = enc.const_dropped.copy()
    const_dropped[np.flatnonzero(const_dropped >= 0)[0]] = 0
    clip_min, clip_ext = enc.clip_min.copy(), enc.clip_extent.copy()
    clip_min[rot[0], 3], clip_ext[rot[0], 3] = -0.5, 0.75
    clip_min[rot[1]], clip_ext[rot[1]] = [0.125, -0.25, 0.0, 0.5], [0.25, 0.5, 0.0, 0.375]
    retained = np.ones(enc.num_samples, dtype=bool)
    starts = np.cumsum(enc.segment_sizes) - enc.segment_sizes
    inner = starts[(enc.segment_sizes > 2)] + 1
    retained[inner] = False
    samples = [q[retained[a : a + len(q)]] for q, a in zip(samples, starts, strict=True)]
    return dataclasses.replace(
        enc,
        clip_layout=clip_layout,
        seg_dropped=seg_dropped,
        bit_rates=rates,
        seg_min=seg_min,
        seg_extent=seg_ext,
        samples=samples,
        const_dropped=const_dropped,
        clip_min=clip_min,
        clip_extent=clip_ext,
        retained=retained,
    )


def test_every_part_of_the_layout_round_trips() -> None:
    enc = _with_every_layout_part()
    written = layout.write(enc)
    back = layout.read(written.data)
    _same(enc, back.encoded)
    assert layout.write(back.encoded).data == written.data
    np.testing.assert_array_equal(written.packed_offsets, back.packed_offsets)
    np.testing.assert_array_equal(written.segment_offsets, back.segment_offsets)


def test_a_hand_made_static_payload_byte_for_byte() -> None:
    """Two joints, one segment of one sample: joint 0's rotation constant (dropping x),
    the rest default. Every byte worked out by hand from the layout's docstring."""
    enc = layout.EncodedClip(
        num_joints=2,
        num_samples=1,
        sample_rate=30.0,
        wrap=False,
        kinds=np.array([[1, 0, 0], [0, 0, 0]], dtype=np.uint8),
        constants=np.array([[0.5, 0.25, 1.0]], dtype=np.float32),
        const_dropped=np.array([0]),
        clip_layout=np.zeros(0, np.int64),
        clip_min=np.zeros((0, 4), np.float32),
        clip_extent=np.zeros((0, 4), np.float32),
        segment_sizes=np.array([1]),
        bit_rates=np.zeros((1, 0), np.uint8),
        seg_dropped=np.zeros((1, 0), np.int64),
        seg_min=np.zeros((1, 0, 3), np.uint8),
        seg_extent=np.zeros((1, 0, 3), np.uint8),
        seg_constant=np.zeros((1, 0, 3), np.uint16),
        samples=[np.zeros((1, 0, 3), np.uint32)],
        bind=1,
    )
    data = layout.write(enc).data
    header = layout.HEADER.pack(2, 1, 30.0, 1 | layout.LAYOUTS_BIT | (1 << layout.BIND_SHIFT))
    kinds = bytes([0b01, 0])  # six 2-bit kinds, LSB first: only the first is 1 (constant)
    layouts = bytes([0b001])  # one rotation: bit "not w" set, then its code 0 (x)
    consts = np.array([0.5, 0.25, 1.0], "<f4").tobytes()
    table = (1).to_bytes(2, "little") + (2 + 1 + 12 + 6).to_bytes(4, "little")
    assert data == header + kinds + layouts + consts + table


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda e: e.kinds.__setitem__((0, 0), 7), "kind .7. does not fit"),
        (lambda e: e.bit_rates.__setitem__((0, 0), 40), "bit rate index 40"),
        (lambda e: e.samples[0].__setitem__((0, 0, 0), 1 << 31), "value 2147483648 does not"),
    ],
)
def test_a_bad_encoding_is_refused_naming_the_value(change, message) -> None:
    enc = layout.read(_payload(codec.load_clip(DATA / "acl" / "cmu_09_02.acl.sjson"))).encoded
    enc = dataclasses.replace(
        enc,
        kinds=enc.kinds.copy(),
        bit_rates=enc.bit_rates.copy(),
        samples=[q.copy() for q in enc.samples],
    )
    if "value" in message:
        enc.bit_rates[0, 0] = 3  # three bits: 2^31 does not fit
    change(enc)
    with pytest.raises(ValueError, match=message):
        layout.write(enc)


def test_every_bit_rate_packs_its_extremes_and_reads_back() -> None:
    """One segment, a sub-track at each rate index (every width from 0 to 32 bits), its
    samples 0, the rate's largest value and random ones: read back exactly."""
    from codec.codecs.acl_style.bit_rates import BIT_RATE_BITS

    enc = layout.read(_payload(codec.load_clip(data_clip("cmu_09_02.acl.sjson")))).encoded
    ka = len(enc.clip_layout)
    n = enc.num_samples
    rng = np.random.default_rng(7)
    for shift in range(0, len(BIT_RATE_BITS), ka):  # every rate index on some sub-track
        rates = ((np.arange(ka) + shift) % len(BIT_RATE_BITS)).astype(np.uint8)[None]
        top = (1 << BIT_RATE_BITS[rates[0]].astype(np.uint64)) - np.uint64(1)
        q = rng.integers(0, 1 << 32, (n, ka, 3), dtype=np.uint64) & top[None, :, None]
        q = q.astype(np.uint32)
        q[0], q[1] = 0, top[:, None].astype(np.uint32)
        raw = rates[0] == RAW_BIT_RATE  # 32 bits of a float: the reader wants it finite
        q[:, raw] = rng.standard_normal((n, int(raw.sum()), 3)).astype(np.float32).view(np.uint32)
        one = dataclasses.replace(
            enc,
            segment_sizes=np.array([n]),
            bit_rates=rates,
            seg_dropped=enc.seg_dropped[:1],
            seg_min=enc.seg_min[:1] * 0,
            seg_extent=enc.seg_extent[:1] * 0,
            seg_constant=enc.seg_constant[:1],
            samples=[q],
        )
        _same(one, layout.read(layout.write(one).data).encoded)


def test_the_writer_uses_the_layouts_own_numbers() -> None:
    """writing keeps copies of layout's constants (layout imports it): they must agree."""
    from codec.codecs.acl_style import writing

    assert writing._PER_SEGMENT_CODE == layout._PER_SEGMENT_CODE
    assert writing._LAYOUT_BITS == layout.LAYOUT_BITS
    assert writing._DROPPED_SHIFT == layout.DROPPED_SHIFT
    assert writing._ENTRY == layout.SEGMENT_ENTRY.size
