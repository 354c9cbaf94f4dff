"""The keyreduce payload: bytes of a clip kept at per-track keys, linearly interpolated.

Little-endian, sealed (codec.codecs.survey.byte_io.seal): the body follows the seal, stored as it
is, deflated or LZMA2-packed, whichever is smallest (the entropy coding).

| bytes | field |
|---|---|
| 1 | layout version (1) |
| 4 | CRC32 of the body |
| 1 | how the body is stored: 0 as it is, 1 zlib-deflated, 2 raw LZMA2 (1 MiB dictionary) |
| 4 | joint count J (u32, must match the skeleton) |
| 4 | source sample count S (u32) |
| 8 | source sample rate (f64) |
| 1 | source clip looping (0 or 1) |
| ceil(6J / 8) | sub-track kinds, 2 bits each (0 default, 1 constant, 2 animated), by joint: R T S |
| 4 per component | every constant sub-track's value, float32 (rotation x y z w, else x y z) |
| ceil(S / 8) | time markers: one bit per source sample, set where any animated track has a key |
| per animated track, joint-major: its head | |
| 1 | bits 0-4: bits N per component (0..24); bit 6: float32 range; bit 7: keys = all markers |
| ceil(U / 8) | (bit 7 clear) one bit per marker: the track's keys; U = markers set |
| 2C x (2 or 4) | range: lo[C], then hi[C] (C = 4 rotation x y z w, 3 otherwise) |
| 4 | then: byte length L of the value stream (u32) |
| L | key values q = round((v - lo) / (hi - lo) (2^N - 1)), see below |

The value stream: per track (joint-major) and component, q[i] - q[i-1] (q[-1] = 0) as
zigzag LEB128 varints: successive values of smooth motion differ by little.

Choices: a key is a source sample (its time is the marker, not stored as a number); values
are range-reduced per track (the range rounded outward to float16, so every value is inside
it) and quantised at the fewest bits that leave part of the track's budget to the key
reduction; rotations keep all four components on one hemisphere along the track (no
dropped W: a component crossing zero would need a sign per key), interpolated
component-wise and normalised (ACL's nlerp).
"""

from __future__ import annotations

import numpy as np

from codec.codecs.survey.keyed import (
    KeyedDecoder,
    KeyedTrack,
    read_keyed_payload,
    write_keyed_payload,
)
from codec.model import quat
from codec.model.clip import Clip, Skeleton

Array = np.ndarray
LAYOUT_VERSION = 1
NAME = "keyreduce"


def lerp_keys(
    track: KeyedTrack,
    values: Array,
    pos: Array,
    interpolation: str = "nlerp",
    rotation: bool = False,
) -> Array:
    """Values (N, C) at positions (N,) between the two keys around each (held past the
    ends). Rotations with `interpolation == 'slerp'` blend on the sphere."""
    keys = track.keys
    if len(keys) == 1:
        return np.repeat(values[:1], len(pos), axis=0)
    i = np.clip(np.searchsorted(keys, pos, side="right") - 1, 0, len(keys) - 2)
    a = np.clip((pos - keys[i]) / (keys[i + 1] - keys[i]), 0.0, 1.0)[:, None]
    if rotation and interpolation == "slerp":
        return quat.slerp(values[i], values[i + 1], a)
    return values[i] + (values[i + 1] - values[i]) * a


class KeyDecoder(KeyedDecoder):
    codec_name = NAME

    def _fill(self, pos: Array, parts: list[Array], interpolation: str) -> None:
        """Every track at once: the keys around each position, lerped (or slerped)."""
        tab = self.table
        left, right, alpha = tab.locate(pos)
        a, b = tab.values[left], tab.values[right]
        out = a + (b - a) * alpha[..., None]
        if interpolation == "slerp":
            rot = tab.sub == 0
            out[:, rot] = quat.slerp(a[:, rot], b[:, rot], alpha[:, rot, None])
        tab.scatter(out, parts)


def write(clip: Clip, kinds: Array, fixed: tuple[Array, Array, Array], reps: dict) -> bytes:
    return write_keyed_payload(clip, kinds, fixed, reps, LAYOUT_VERSION)


def read(payload: bytes, skeleton: Skeleton) -> KeyDecoder:
    rate, S, looping, fixed, keyed = read_keyed_payload(payload, skeleton, LAYOUT_VERSION, NAME)
    return KeyDecoder(skeleton, rate, S, looping, fixed, keyed)
