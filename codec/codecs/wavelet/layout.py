"""The wavelet payload: D4 coefficients of every animated sub-track, sub-band quantised.

Little-endian, sealed (codec.codecs.survey.byte_io.seal): the body follows the seal, stored as it
is, deflated or LZMA2-packed, whichever is smallest (the entropy coding: quantised
coefficients are mostly zero or near it, and their varints are runs of small bytes).

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
| per animated track, joint-major: its head | |
| 4 | quantisation step D (float32, > 0) |
| 4C | offset per component (float32), subtracted before the transform |
| 4 | byte length L of the coefficient stream (u32) |
| L | every coefficient, zigzag LEB128 varints; per track by sub-band (scaling first) |

The value stream: per track (joint-major) and component, q[i] - q[i-1] (q[-1] = 0) as
zigzag LEB128 varints: successive values of smooth motion differ by little.

Choices: a track of S samples is cut into ceil(S / 16) blocks of 16 (the last padded by
repeating the last sample); each block of each component goes through three levels of the
periodic Daubechies D4 transform (transform.py): 2 scaling coefficients, 2 + 4 + 8 details.
A coefficient of sub-band b (0 scaling .. 3 finest) is quantised with the step
D * 2^-((3 - b) / 2): lower frequencies, which move more samples, get finer steps. The
decoder rebuilds every source sample at construction (the survey's cache: a single sample
needs its whole block) and interpolates between source samples like the raw clip (nlerp,
or slerp when asked; rotations keep all four components on one hemisphere).
"""

from __future__ import annotations

import numpy as np

from codec.codecs.survey.byte_io import seal
from codec.codecs.survey.decoder import TrackDecoder
from codec.codecs.survey.frame import (
    WIDTHS,
    animated_order,
    read_frame,
    write_frame,
)
from codec.codecs.survey.grid import GridTable
from codec.codecs.survey.streams import read_stream, write_stream
from codec.codecs.wavelet.transform import BANDS, BLOCK, LEVELS, forward, inverse
from codec.model.clip import Clip, Skeleton

Array = np.ndarray
LAYOUT_VERSION = 1
NAME = "wavelet"
BAND_ORDER = np.argsort(BANDS, kind="stable")  # coefficient slots, scaling first
STEP_SCALE = 2.0 ** (-(LEVELS - BANDS) / 2.0)  # (BLOCK,) step multiplier of every slot


def num_blocks(num_samples: int) -> int:
    return -(-num_samples // BLOCK)


def to_blocks(values: Array, offset: Array) -> Array:
    """(C, B, BLOCK) blocks of a track (S, C) minus its offset (C,), edge-padded."""
    S, C = values.shape
    nb = num_blocks(S)
    pad = np.concatenate((values, np.repeat(values[-1:], nb * BLOCK - S, axis=0))) - offset
    return pad.T.reshape(C, nb, BLOCK)


def from_coefficients(ints: Array, step: float, offset: Array, num_samples: int) -> Array:
    """Track values (S, C) of quantised coefficients (C, B, BLOCK)."""
    blocks = inverse(ints.astype(np.float64) * (step * STEP_SCALE))
    C = blocks.shape[0]
    return blocks.reshape(C, -1).T[:num_samples] + offset


def coefficients(values: Array, offset: Array) -> Array:
    return forward(to_blocks(values, offset))


class WaveletDecoder(TrackDecoder):
    codec_name = NAME

    def __init__(
        self,
        skeleton: Skeleton,
        rate: float,
        S: int,
        looping: bool,
        fixed: list[Array],
        tracks: list[tuple[int, int, Array]],
    ) -> None:
        super().__init__(skeleton, rate, S, looping, fixed)
        self.tracks = tracks  # (joint, sub, every source sample (S, C))
        self.table = GridTable(tracks, S)

    def _fill(self, pos: Array, parts: list[Array], interpolation: str) -> None:
        """Every track at once from the rebuilt source samples, blended between them."""
        self.table.scatter(self.table.lerp(pos, interpolation == "slerp"), parts)


def write(clip: Clip, kinds: Array, fixed: tuple[Array, Array, Array], reps: dict) -> bytes:
    w = write_frame(clip, kinds, fixed)
    streams = []
    for jk in animated_order(kinds):
        step, offset, ints = reps[jk]
        w.raw(np.float32(step).astype("<f4").tobytes())
        w.raw(np.asarray(offset, "<f4").tobytes())
        streams.append(ints[:, :, BAND_ORDER].transpose(2, 0, 1).reshape(-1))
    write_stream(w, streams)
    return seal(LAYOUT_VERSION, bytes(w.buf))


def read(payload: bytes, skeleton: Skeleton) -> WaveletDecoder:
    r, (S, rate, looping, kinds, fixed, order) = read_frame(payload, skeleton, LAYOUT_VERSION, NAME)
    nb = num_blocks(S)
    heads = []
    for n, (_, k) in enumerate(order):
        step = float(r.array("<f4", 1, f"step of track {n}")[0])
        offset = r.array("<f4", WIDTHS[k], f"offset of track {n}")
        if not (np.isfinite(step) and step > 0) or not np.all(np.isfinite(offset)):
            raise r.fail(f"track {n} has step {step} or a non-finite offset")
        heads.append((step, offset))
    ints = read_stream(r, sum(WIDTHS[k] for _, k in order) * nb * BLOCK, "coefficient")
    r.done()
    tracks = []
    at = 0
    for (j, k), (step, offset) in zip(order, heads, strict=True):
        c = WIDTHS[k]
        n = c * nb * BLOCK
        slots = ints[at : at + n].reshape(BLOCK, c, nb).transpose(1, 2, 0)
        at += n
        coef = np.empty_like(slots)
        coef[:, :, BAND_ORDER] = slots
        with np.errstate(over="ignore", invalid="ignore"):
            values = from_coefficients(coef, step, offset, S)
        if not np.all(np.isfinite(values)):
            raise r.fail(f"track {j}/{k} decodes to non-finite values")
        tracks.append((j, k, values))
    return WaveletDecoder(skeleton, rate, S, looping, fixed, tracks)
