"""The curve payload: bytes of a clip kept as per-track Catmull-Rom splines through knots.

Little-endian, sealed (codec.codecs.survey.seal): the body follows the seal, stored as it
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
| ceil(S / 8) | time markers: one bit per source sample, set where any animated track has a knot |
| per animated track, joint-major: its head | |
| 1 | bits 0-4: bits N per component (0..24); bit 6: float32 range; bit 7: keys = all markers |
| ceil(U / 8) | (bit 7 clear) one bit per marker: the track's keys; U = markers set |
| 2C x (2 or 4) | range: lo[C], then hi[C] (C = 4 rotation x y z w, 3 otherwise) |
| 4 | then: byte length L of the value stream (u32) |
| L | key values q = round((v - lo) / (hi - lo) (2^N - 1)), see below |

The value stream: per track (joint-major) and component, q[i] - q[i-1] (q[-1] = 0) as
zigzag LEB128 varints: successive values of smooth motion differ by little.

Choices: a knot is a source sample (its time is the marker, not stored as a number) and the
curve passes through its value; between knots i and i + 1 every component follows the cubic
Hermite segment with tangents m_i = (p[i+1] - p[i-1]) / (t[i+1] - t[i-1]) (Catmull-Rom for
evenly spaced knots, one-sided differences at the ends), held past the last knot. Values
are range-reduced per track (the range rounded outward to float16) and quantised at the
fewest bits that leave part of the track's budget to the knot placement; rotations keep all
four components on one hemisphere along the track, follow the curve component-wise and are
normalised.
"""

from __future__ import annotations

import numpy as np

from codec.codecs.survey import (
    KeyedDecoder,
    KeyedTrack,
    read_keyed_payload,
    write_keyed_payload,
)
from codec.model.clip import Clip, Skeleton

Array = np.ndarray
LAYOUT_VERSION = 1
NAME = "curve"


def tangents(keys: Array, values: Array) -> Array:
    """(K, C) finite-difference tangents at the knots (one-sided at the ends; 0 alone)."""
    m = np.zeros_like(values)
    if len(keys) < 2:
        return m
    t = keys.astype(np.float64)
    m[1:-1] = (values[2:] - values[:-2]) / (t[2:] - t[:-2])[:, None]
    m[0] = (values[1] - values[0]) / (t[1] - t[0])
    m[-1] = (values[-1] - values[-2]) / (t[-1] - t[-2])
    return m


def hermite(track: KeyedTrack, values: Array, pos: Array) -> Array:
    """Values (N, C) of the Catmull-Rom spline through the knots at positions (N,)."""
    keys = track.keys
    if len(keys) == 1:
        return np.repeat(values[:1], len(pos), axis=0)
    t = keys.astype(np.float64)
    m = tangents(keys, values)
    i = np.clip(np.searchsorted(keys, pos, side="right") - 1, 0, len(keys) - 2)
    h = (t[i + 1] - t[i])[:, None]
    u = np.clip((pos - t[i]) / (t[i + 1] - t[i]), 0.0, 1.0)[:, None]
    u2 = u * u
    u3 = u2 * u
    return (
        (2 * u3 - 3 * u2 + 1) * values[i]
        + (u3 - 2 * u2 + u) * h * m[i]
        + (-2 * u3 + 3 * u2) * values[i + 1]
        + (u3 - u2) * h * m[i + 1]
    )


class CurveDecoder(KeyedDecoder):
    codec_name = NAME

    def __init__(
        self,
        skeleton: Skeleton,
        rate: float,
        S: int,
        looping: bool,
        fixed: list[Array],
        tracks: list[tuple[int, int, KeyedTrack]],
    ) -> None:
        super().__init__(skeleton, rate, S, looping, fixed, tracks)
        self.tangents = np.zeros_like(self.table.values)
        for (_, _, t, v), s in zip(self.tracks, self.table.start, strict=True):
            self.tangents[s : s + len(v), : v.shape[1]] = tangents(t.keys, v)

    def _fill(self, pos: Array, parts: list[Array], interpolation: str) -> None:
        """Every track at once: the Hermite segment around each position."""
        tab = self.table
        left, right, u = tab.locate(pos)
        h = (tab.keys[right] - tab.keys[left])[..., None]
        u = u[..., None]
        u2 = u * u
        u3 = u2 * u
        out = (
            (2 * u3 - 3 * u2 + 1) * tab.values[left]
            + (u3 - 2 * u2 + u) * h * self.tangents[left]
            + (-2 * u3 + 3 * u2) * tab.values[right]
            + (u3 - u2) * h * self.tangents[right]
        )
        tab.scatter(out, parts)


def write(clip: Clip, kinds: Array, fixed: tuple[Array, Array, Array], reps: dict) -> bytes:
    return write_keyed_payload(clip, kinds, fixed, reps, LAYOUT_VERSION)


def read(payload: bytes, skeleton: Skeleton) -> CurveDecoder:
    rate, S, looping, fixed, keyed = read_keyed_payload(payload, skeleton, LAYOUT_VERSION, NAME)
    return CurveDecoder(skeleton, rate, S, looping, fixed, keyed)
