"""Keyed tracks (keyreduce's keys, curve's knots): a sub-track kept at some source samples,
its time markers and quantised key values in bytes, the flat table a pose of every track is
found in with one search, and the payload of a codec that stores nothing else."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codec.codecs.survey.byte_io import (
    ByteReader,
    ByteWriter,
    pack_uint,
    packed_size,
    seal,
    unpack_uint,
)
from codec.codecs.survey.decoder import TrackDecoder, scatter_tracks
from codec.codecs.survey.frame import (
    ANIMATED,
    WIDTHS,
    animated_order,
    read_frame,
    write_frame,
)
from codec.codecs.survey.streams import (
    MAX_BITS,
    Quantised,
    read_deltas,
    read_range,
    stream_cost,
    write_deltas,
    write_range,
)
from codec.model.clip import Clip, Skeleton

Array = np.ndarray


@dataclass(frozen=True)
class KeyedTrack:
    """A sub-track kept at some source samples: keys (K,) ascending sample indices, their
    values quantised (ints (K, C))."""

    keys: Array
    q: Quantised
    hint: tuple = ()  # the fitter's choices, to start from in a later round (not stored)

    def values(self) -> Array:
        return self.q.values()


def keyed_cost(q: Quantised, keys: Array) -> float:
    """Estimated bits of a track quantised whole (q.ints (S, C)) kept at keys (K,): its value
    stream and about one marker bit a key; keyreduce and curve rank their options by it."""
    return stream_cost(q.ints[keys]) + len(keys)


def keyed_track(q: Quantised, keys: Array, hint: tuple = ()) -> KeyedTrack:
    """A track quantised whole (q.ints (S, C)) kept at its keys (K,) only."""
    return KeyedTrack(keys, Quantised(q.lo, q.hi, q.wide, q.bits, q.ints[keys]), hint)


def write_keyed(w: ByteWriter, num_samples: int, tracks: list[KeyedTrack]) -> None:
    """Time markers, then every track's head, then the key values of all tracks. The
    markers are the union of all tracks' keys as a bit per source sample; a track whose keys
    are the whole union says so with a flag bit, any other carries one bit per union key.
    Per track: a byte (bits 0-4: bits per component, bit 6: float32 range, bit 7: keys ==
    union), [its union mask], the range (lo[C], hi[C]). The values: `write_deltas`."""
    union = np.zeros(num_samples, dtype=np.uint64)
    for t in tracks:
        union[t.keys] = 1
    w.raw(pack_uint(union, 1))
    where = np.flatnonzero(union)
    for t in tracks:
        full = len(t.keys) == len(where)
        w.u8(t.q.bits | (0x40 if t.q.wide else 0) | (0x80 if full else 0))
        if not full:
            w.raw(pack_uint(np.isin(where, t.keys).astype(np.uint64), 1))
        write_range(w, t.q)
    write_deltas(w, [t.q.ints for t in tracks])


def read_keyed(r: ByteReader, num_samples: int, subs: list[int]) -> list[KeyedTrack]:
    """The tracks `write_keyed` wrote, one per entry of `subs` (their kinds, in order)."""
    union = unpack_uint(r.take(packed_size(num_samples, 1), "time markers"), num_samples, 1)
    where = np.flatnonzero(union)
    if subs and len(where) == 0:
        raise r.fail("animated tracks without a single key time")
    heads = []
    for n, sub in enumerate(subs):
        flags = r.u8(f"flags of track {n}")
        bits = flags & 0x1F
        if bits > MAX_BITS or flags & 0x20:
            raise r.fail(f"track {n} has {bits} bits per component (at most {MAX_BITS})")
        if flags & 0x80:
            keys = where
        else:
            size = packed_size(len(where), 1)
            mask = unpack_uint(r.take(size, f"keys of track {n}"), len(where), 1)
            keys = where[mask.astype(bool)]
            if len(keys) == 0:
                raise r.fail(f"track {n} has no key")
        lo, hi = read_range(r, WIDTHS[sub], bool(flags & 0x40), f"range of track {n}")
        heads.append((keys.astype(np.int64), lo, hi, bool(flags & 0x40), bits))
    shapes = [(len(h[0]), WIDTHS[sub]) for h, sub in zip(heads, subs, strict=True)]
    values = read_deltas(r, shapes, [h[4] for h in heads])
    return [
        KeyedTrack(keys, Quantised(lo, hi, wide, bits, v))
        for (keys, lo, hi, wide, bits), v in zip(heads, values, strict=True)
    ]


class KeyedTable:
    """Every keyed track of a payload in flat arrays, so that a pose of all tracks is found
    with one search instead of a Python loop over the tracks.

    Track t's keys sit at flat rows start[t] .. start[t] + count[t] - 1; `values` (R, 4)
    holds their values (three-component tracks padded with a zero), `search` (R,) their
    times shifted by t * (S + 1) so one sorted array serves every track.
    """

    def __init__(self, tracks: list[tuple[int, int, KeyedTrack]], num_samples: int) -> None:
        self.joint = np.array([j for j, _, _ in tracks], dtype=np.int64)
        self.sub = np.array([k for _, k, _ in tracks], dtype=np.int64)
        counts = np.array([len(t.keys) for _, _, t in tracks], dtype=np.int64)
        self.start = (np.cumsum(counts) - counts).astype(np.int64)
        self.last = self.start + counts - 1
        self.keys = (
            np.concatenate([t.keys for _, _, t in tracks]).astype(np.float64)
            if tracks
            else np.zeros(0)
        )
        self.values = np.zeros((len(self.keys), 4))
        for (_, k, t), s in zip(tracks, self.start, strict=True):
            self.values[s : s + len(t.keys), : WIDTHS[k]] = t.values()
        self.span = float(num_samples + 1)
        owner = np.repeat(np.arange(len(tracks)), counts)
        self.search = self.keys + owner * self.span

    def locate(self, pos: Array) -> tuple[Array, Array, Array]:
        """Left and right key rows (N, T) around positions (N,) and the alpha between them
        (0 on a one-key track; held at the first and last key)."""
        t = np.arange(len(self.start))
        q = np.asarray(pos, np.float64)[:, None] + t[None, :] * self.span
        left = np.searchsorted(self.search, q, side="right") - 1
        left = np.clip(left, self.start, np.maximum(self.last - 1, self.start))
        right = np.minimum(left + 1, self.last)
        gap = self.keys[right] - self.keys[left]
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha = np.where(
                gap > 0, (pos[:, None] - self.keys[left]) / np.where(gap > 0, gap, 1.0), 0.0
            )
        return left, right, np.clip(alpha, 0.0, 1.0)

    def scatter(self, out: Array, parts: list[Array]) -> None:
        """Write track values (N, T, 4) into the pose arrays (N, J, C) of each kind."""
        scatter_tracks(self.joint, self.sub, out, parts)


class KeyedDecoder(TrackDecoder):
    """Decoder base of the keyed codecs (keyreduce, curve): the tracks as (joint, sub-track,
    track, its values (K, C)) and their KeyedTable; subclasses interpolate between keys."""

    def __init__(
        self,
        skeleton: Skeleton,
        rate: float,
        S: int,
        looping: bool,
        fixed: list[Array],
        tracks: list[tuple[int, int, KeyedTrack]],
    ) -> None:
        super().__init__(skeleton, rate, S, looping, fixed)
        self.tracks = [(j, k, t, t.values()) for j, k, t in tracks]
        self.table = KeyedTable(tracks, S)


def write_keyed_payload(
    clip: Clip, kinds: Array, fixed: tuple[Array, Array, Array], reps: dict, version: int
) -> bytes:
    """The payload of a codec that keeps each animated sub-track as a KeyedTrack (keyreduce's
    keys, curve's knots): header, sub-track kinds, the tracks in stored order, sealed."""
    w = write_frame(clip, kinds, fixed)
    write_keyed(w, clip.num_samples, [reps[jk] for jk in animated_order(kinds)])
    return seal(version, bytes(w.buf))


def read_keyed_payload(
    payload: bytes, skeleton: Skeleton, version: int, codec: str
) -> tuple[float, int, bool, tuple[Array, Array, Array], list[tuple[int, int, KeyedTrack]]]:
    """What `write_keyed_payload` wrote: rate, sample count, looping, the fixed sub-tracks
    and every animated one as (joint, sub-track, track)."""
    r, (S, rate, looping, kinds, fixed, order) = read_frame(payload, skeleton, version, codec)
    tracks = read_keyed(r, S, [k for _, k in order])
    r.done()
    assert all(kinds[j, k] == ANIMATED for j, k in order)
    keyed = [(j, k, t) for (j, k), t in zip(order, tracks, strict=True)]
    return rate, S, looping, fixed, keyed
