"""The subsample payload: every animated sub-track at one lower uniform rate.

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
| 4 per component | every constant sub-track's value, float32 |
| 4 | stored sample count M (u32, 1 <= M <= S; M = 1 only when S = 1) |
| per animated track, joint-major: its head | |
| 1 | bits 0-4: bits per component N (0..24); bit 6: float32 range (else float16) |
| 2C x (2 or 4) | range: lo[C], then hi[C] (C = 4 rotation x y z w, 3 otherwise) |
| 4 | then: byte length L of the value stream (u32) |
| L | the M stored values q = round((v - lo) / (hi - lo) (2^N - 1)), see below |

The value stream: per track (joint-major) and component, q[i] - q[i-1] (q[-1] = 0) as
zigzag LEB128 varints: successive values of smooth motion differ by little.

Choices: the M stored samples sit evenly from the first source sample to the last, at
positions i (S - 1) / (M - 1) in source samples, so the stored rate is
rate (M - 1) / (S - 1), whatever it divides: where a stored sample falls between two source
samples its value is the raw clip interpolated there (nlerp for rotations). Between stored
samples the decoder interpolates linearly (rotations component-wise on one hemisphere, then
normalised, or slerp when asked). Values are range-reduced per track (float16 range rounded
outward) and quantised at the fewest bits within the track's budget.
"""

from __future__ import annotations

import numpy as np

from codec.codecs.survey.byte_io import seal
from codec.codecs.survey.decoder import TrackDecoder, clip_of
from codec.codecs.survey.frame import (
    WIDTHS,
    animated_order,
    read_frame,
    write_frame,
)
from codec.codecs.survey.grid import GridTable
from codec.codecs.survey.streams import (
    MAX_BITS,
    Quantised,
    read_deltas,
    read_range,
    write_deltas,
    write_range,
)
from codec.model import quat
from codec.model.clip import Clip, Skeleton

Array = np.ndarray
LAYOUT_VERSION = 1
NAME = "subsample"


def stored_positions(num_samples: int, stored: int) -> Array:
    """(M,) positions in source samples of the stored samples."""
    if stored == 1:
        return np.zeros(1)
    return np.arange(stored) * ((num_samples - 1) / (stored - 1))


def interpolate(values: Array, num_samples: int, pos: Array, slerp: bool = False) -> Array:
    """Values (N, C) at positions (N,) in source samples from M stored samples (M, C)."""
    m = len(values)
    if m == 1:
        return np.repeat(values, len(pos), axis=0)
    x = np.clip(pos * ((m - 1) / (num_samples - 1)), 0.0, m - 1.0)
    i = np.minimum(np.floor(x).astype(np.int64), m - 2)
    a = (x - i)[:, None]
    if slerp:
        return quat.slerp(values[i], values[i + 1], a)
    return values[i] + (values[i + 1] - values[i]) * a


class SubsampleDecoder(TrackDecoder):
    codec_name = NAME

    def __init__(
        self,
        skeleton: Skeleton,
        rate: float,
        S: int,
        looping: bool,
        fixed: list[Array],
        stored: int,
        tracks: list[tuple[int, int, Quantised]],
    ) -> None:
        super().__init__(skeleton, rate, S, looping, fixed)
        self.stored = stored
        self.tracks = [(j, k, q.values()) for j, k, q in tracks]
        self.table = GridTable(self.tracks, stored)

    def _fill(self, pos: Array, parts: list[Array], interpolation: str) -> None:
        """Every track at once: the stored samples around each position, blended."""
        m = self.stored
        x = pos * ((m - 1) / (self.num_samples - 1)) if m > 1 else np.zeros_like(pos)
        self.table.scatter(self.table.lerp(x, interpolation == "slerp"), parts)

    def decode_all(self) -> Clip:
        """The M stored samples as a clip at the stored rate."""
        pos = stored_positions(self.num_samples, self.stored)
        rate = (
            self.sample_rate * (self.stored - 1) / (self.num_samples - 1)
            if self.stored > 1
            else self.sample_rate
        )
        rot, tr, sc = self.evaluate(pos)
        return clip_of(self.skeleton, rate, [rot, tr, sc], self.looping, "")


def write(
    clip: Clip, kinds: Array, fixed: tuple[Array, Array, Array], reps: dict, stored: int
) -> bytes:
    w = write_frame(clip, kinds, fixed)
    w.u32(stored)
    for jk in animated_order(kinds):
        q: Quantised = reps[jk]
        w.u8(q.bits | (0x40 if q.wide else 0))
        write_range(w, q)
    write_deltas(w, [reps[jk].ints for jk in animated_order(kinds)])
    return seal(LAYOUT_VERSION, bytes(w.buf))


def read(payload: bytes, skeleton: Skeleton) -> SubsampleDecoder:
    r, (S, rate, looping, kinds, fixed, order) = read_frame(payload, skeleton, LAYOUT_VERSION, NAME)
    stored = r.u32("stored sample count")
    if not (1 <= stored <= S) or (stored == 1 and S > 1):
        raise r.fail(f"stored sample count {stored} for {S} source samples")
    heads = []
    for n, (_, k) in enumerate(order):
        flags = r.u8(f"flags of track {n}")
        bits = flags & 0x1F
        if bits > MAX_BITS or flags & 0xA0:
            raise r.fail(f"track {n} has flags {flags:#x}")
        lo, hi = read_range(r, WIDTHS[k], bool(flags & 0x40), f"range of track {n}")
        heads.append((lo, hi, bool(flags & 0x40), bits))
    values = read_deltas(r, [(stored, WIDTHS[k]) for _, k in order], [h[3] for h in heads])
    tracks = [
        (j, k, Quantised(lo, hi, wide, bits, v))
        for (j, k), (lo, hi, wide, bits), v in zip(order, heads, values, strict=True)
    ]
    r.done()
    return SubsampleDecoder(skeleton, rate, S, looping, fixed, stored, tracks)
