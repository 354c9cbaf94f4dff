"""The curve payload: bytes of a clip kept as per-track curves through knots, and its decoder.

Little-endian, sealed (codec.codecs.survey.byte_io.seal): the body follows the seal, stored as it
is, deflated or LZMA2-packed, whichever is smallest (the entropy coding).

| bytes | field |
|---|---|
| 1 | layout version (2; version 1 is still read, below) |
| 4 | CRC32 of the body |
| 1 | how the body is stored: 0 as it is, 1 zlib-deflated, 2 raw LZMA2 (1 MiB dictionary) |
| 4 | joint count J (u32, must match the skeleton) |
| 4 | source sample count S (u32) |
| 8 | source sample rate (f64) |
| 1 | source clip looping (0 or 1) |
| ceil(6J / 8) | sub-track kinds, 2 bits each (0 default, 1 constant, 2 animated), by joint: R T S |
| 4 per component | every constant sub-track's value, float32 (rotation x y z w, else x y z) |
| ceil(S / 8) | knot markers: one bit per source sample, set where any animated track has a knot |
| per animated track, joint-major: its head | |
| 1 | bits 0-1 mode (0 step, 1 linear, 2 cubic); bits 2-3 tangent rule (0 flat, |
| | 1 Catmull-Rom, 2 auto, 3 clamped); bit 4 tangent corrections; bit 7 knots = all markers |
| 1 | (rotations) the component rebuilt from the others (0-3: x y z w), 4: all four stored |
| ceil(U / 8) | (bit 7 clear) one bit per marker: the track's knots; U = markers set |
| 4 | value step (f32) |
| 4 | (bit 4) tangent correction step (f32) |
| 4 | then: byte length L of the value stream (u32) |
| L | per track and stored component, q[i] - q[i-1] (q[-1] = 0) as zigzag LEB128 varints |
| 4 | byte length M of the correction stream (u32) |
| M | per track with corrections and component (all four of a rotation): corrections, |
| | zigzag LEB128 |

A track's knot values are v = q * step (a rotation's rebuilt component is
sqrt(1 - the others' squares), positive); between knots the mode says the curve
(codec.codecs.curve.tangents): step holds a knot's value until the next knot, linear blends
the two, cubic follows the Hermite segment whose tangents (per sample) are the rule's plus
the correction times its step. Before the first knot and after the last the end knot holds.
Rotations are normalised after the components are blended.

Version 1 (before issue 33): the same header, kinds and markers, then per track a byte
(bits 0-4 bits per component, bit 6 float32 range, bit 7 knots = all markers), [its marker
bits], its range (lo[C], hi[C] as float16 or float32), then the value stream of integers
quantised in that range; every track cubic with Catmull-Rom tangents. It reads as such.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from codec.codecs.curve.fitter import SplineTrack
from codec.codecs.curve.tangents import (
    CATMULL_ROM,
    CUBIC,
    MODES,
    STEP,
    hermite_rows,
    knot_tangents,
)
from codec.codecs.curve.values import ALL, MAX_INT, Grid
from codec.codecs.survey.byte_io import (
    ByteReader,
    pack_uint,
    packed_size,
    seal,
    unpack_uint,
)
from codec.codecs.survey.decoder import TrackDecoder
from codec.codecs.survey.frame import (
    ROT,
    WIDTHS,
    animated_order,
    read_frame,
    write_frame,
)
from codec.codecs.survey.keyed import KeyedTable, read_keyed_payload
from codec.codecs.survey.streams import read_stream, write_stream
from codec.model.clip import Clip, Skeleton
from codec.model.limits import MAX_VALUE

Array = np.ndarray
LAYOUT_VERSION = 2
CATMULL_ROM_ONLY = 1  # the first layout: Catmull-Rom knots, values quantised in a range
NAME = "curve"
FULL, CORRECTIONS = 0x80, 0x10


def write(clip: Clip, kinds: Array, fixed: tuple[Array, Array, Array], reps: dict) -> bytes:
    """The payload of a clip whose animated sub-tracks are `reps` {(joint, sub): SplineTrack}."""
    w = write_frame(clip, kinds, fixed)
    order = animated_order(kinds)
    tracks: list[SplineTrack] = [reps[jk] for jk in order]
    union = np.zeros(clip.num_samples, dtype=np.uint64)
    for t in tracks:
        union[t.keys] = 1
    w.raw(pack_uint(union, 1))
    where = np.flatnonzero(union)
    for (_, sub), t in zip(order, tracks, strict=True):
        full = len(t.keys) == len(where)
        corrected = t.extra is not None
        w.u8(t.mode | t.rule << 2 | (CORRECTIONS if corrected else 0) | (FULL if full else 0))
        if sub == ROT:
            w.u8(t.grid.drop)
        if not full:
            w.raw(pack_uint(np.isin(where, t.keys).astype(np.uint64), 1))
        w.raw(np.float32(t.grid.step).astype("<f4").tobytes())
        if corrected:
            w.raw(np.float32(t.tangent_step).astype("<f4").tobytes())
    values = [np.diff(t.ints, axis=0, prepend=0).T.reshape(-1) for t in tracks]
    write_stream(w, values)
    write_stream(w, [t.extra.T.reshape(-1) for t in tracks if t.extra is not None])
    return seal(LAYOUT_VERSION, bytes(w.buf))


def read(payload: bytes, skeleton: Skeleton) -> CurveDecoder:
    """The decoder of a curve payload of either layout (CompressedFormatError on anything
    wrong: every length and number checked before it is used)."""
    if payload[:1] == bytes([CATMULL_ROM_ONLY]):
        return _read_v1(payload, skeleton)
    r, (S, rate, looping, kinds, fixed, order) = read_frame(payload, skeleton, LAYOUT_VERSION, NAME)
    union = unpack_uint(r.take(packed_size(S, 1), "knot markers"), S, 1)
    where = np.flatnonzero(union)
    if order and len(where) == 0:
        raise r.fail("animated tracks without a single knot")
    heads = []
    for n, (_, sub) in enumerate(order):
        flags = r.u8(f"flags of track {n}")
        mode, rule = flags & 3, (flags >> 2) & 3
        if mode >= len(MODES) or flags & 0x60:
            raise r.fail(f"track {n} has flags {flags:#04x}: mode {mode} is not one of {MODES}")
        drop = r.u8(f"rotation layout of track {n}") if sub == ROT else ALL
        if drop > ALL:
            raise r.fail(f"track {n} rebuilds component {drop} (0-3, or 4: none)")
        keys = where
        if not flags & FULL:
            size = packed_size(len(where), 1)
            mask = unpack_uint(r.take(size, f"knots of track {n}"), len(where), 1)
            keys = where[mask.astype(bool)]
            if len(keys) == 0:
                raise r.fail(f"track {n} has no knot")
        step = _step(r, f"value step of track {n}")
        tstep = _step(r, f"tangent step of track {n}") if flags & CORRECTIONS else 0.0
        width = WIDTHS[sub] - (0 if drop == ALL else 1)
        heads.append((keys.astype(np.int64), mode, rule, Grid(step, drop), width, tstep))
    flat = read_stream(r, sum(len(h[0]) * h[4] for h in heads), "value")
    widths = [WIDTHS[sub] for _, sub in order]
    corrections = sum(len(h[0]) * c for h, c in zip(heads, widths, strict=True) if h[5] > 0)
    extras = read_stream(r, corrections, "correction")
    r.done()
    tracks = []
    at = at_x = 0
    for (j, sub), (keys, mode, rule, grid, width, tstep) in zip(order, heads, strict=True):
        k = len(keys)
        ints = np.cumsum(flat[at : at + k * width].reshape(width, k), axis=1).T
        at += k * width
        extra = None
        if tstep > 0:
            c = WIDTHS[sub]
            extra = extras[at_x : at_x + k * c].reshape(c, k).T
            at_x += k * c
        big = np.abs(ints).max() if k else 0
        if extra is not None:
            big = max(big, np.abs(extra).max())
        if big > MAX_INT:
            raise r.fail(f"an integer of track {len(tracks)} is beyond {MAX_INT}")
        tracks.append(_rows(j, sub, SplineTrack(keys, mode, rule, grid, ints, extra, tstep)))
    return CurveDecoder(skeleton, rate, S, looping, fixed, tracks)


def _step(r: ByteReader, what: str) -> float:
    v = float(np.frombuffer(r.take(4, what), "<f4")[0])
    if not (np.isfinite(v) and 0.0 < v <= MAX_VALUE / MAX_INT):
        raise r.fail(f"{what} {v} is not a positive number the codec holds")
    return v


class Rows(NamedTuple):
    """A decoded track: its joint, sub-track, mode, knots (K,), knot values (K, C) and out /
    in tangents (K, C) per sample."""

    joint: int
    sub: int
    mode: int
    keys: Array
    values: Array
    out: Array
    inn: Array


def _rows(j: int, sub: int, t: SplineTrack) -> Rows:
    v, out, inn = t.rows
    return Rows(j, sub, t.mode, t.keys, v, out, inn)


def _read_v1(payload: bytes, skeleton: Skeleton) -> CurveDecoder:
    """A layout 1 payload: every track cubic, Catmull-Rom tangents of its range-quantised
    knot values."""
    rate, S, looping, fixed, keyed = read_keyed_payload(payload, skeleton, CATMULL_ROM_ONLY, NAME)
    rows = []
    for j, sub, t in keyed:
        v = t.values()
        k = len(t.keys)
        first, last = np.arange(k) == 0, np.arange(k) == k - 1
        out, inn = knot_tangents(
            CUBIC, CATMULL_ROM, t.keys.astype(np.float64), v, first, last, None
        )
        rows.append(Rows(j, sub, CUBIC, t.keys, v, out, inn))
    return CurveDecoder(skeleton, rate, S, looping, fixed, rows)


class _Knots:
    """A track's knots and values, as codec.codecs.survey.keyed.KeyedTable reads them."""

    def __init__(self, keys: Array, values: Array) -> None:
        self.keys = keys
        self._values = values

    def values(self) -> Array:
        return self._values


class CurveDecoder(TrackDecoder):
    """Every track's knots in one table; a pose of every track is one search and one
    Hermite evaluation (step tracks take the left knot until the next one)."""

    codec_name = NAME

    def __init__(
        self,
        skeleton: Skeleton,
        rate: float,
        S: int,
        looping: bool,
        fixed: list[Array],
        rows: list[Rows],
    ) -> None:
        super().__init__(skeleton, rate, S, looping, fixed)
        self.tracks = rows
        self.table = KeyedTable([(r.joint, r.sub, _Knots(r.keys, r.values)) for r in rows], S)
        self.out_t = np.zeros_like(self.table.values)
        self.in_t = np.zeros_like(self.table.values)
        for r, s in zip(rows, self.table.start, strict=True):
            self.out_t[s : s + len(r.keys), : r.out.shape[1]] = r.out
            self.in_t[s : s + len(r.keys), : r.inn.shape[1]] = r.inn
        self.stepped = np.array([r.mode == STEP for r in rows], dtype=bool)

    def _fill(self, pos: Array, parts: list[Array], interpolation: str) -> None:
        """Every track at once: the Hermite segment around each position."""
        tab = self.table
        left, right, u = tab.locate(pos)
        if np.any(self.stepped):
            u = np.where(self.stepped[None, :], np.floor(u), u)
        out = hermite_rows(tab.keys, tab.values, self.out_t, self.in_t, left, right, u)
        tab.scatter(out, parts)
