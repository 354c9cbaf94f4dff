"""The authored codec's payload: the file's own keys, quantised, and how to read them back.

Layout version 1, sealed (codec.codecs.survey.byte_io.seal: raw, deflated or LZMA2, the smallest):
- header and sub-track kinds with constant values (survey.frame.write_frame);
- timelines: count (u32), then per timeline a byte (0: on the sample grid, 1: float64
  seconds, 2: float32 seconds), its key count K (u32), then on the grid the byte length (u32)
  and LEB128 zigzag differences of its sample indices (times index / rate), else K seconds
  (float32 when each key time is a float32, as a glTF file's are);
- per animated sub-track (joint-major, rotation, translation, scale): its interpolation
  (u8: 0 step, 1 linear, 2 slerp, 3 cubic), for a rotation the component rebuilt from the
  others (u8: 0-3, positive, sqrt(1 - the others' squares); 4 none), its timeline (u32), its
  value step (float32) and, for cubic, its tangent step (float32);
- the value stream: byte length (u32), then per track and stored component the differences
  of successive key integers (the first against 0), zigzag, LEB128; a value is integer x
  step;
- the tangent stream, the same for every cubic track's in tangents then its out tangents
  (per second).
A track reads as the file reads it (codec.model.authored_curves.CurveGroup.evaluate): step
holds a key until the next, linear blends (rotations nlerp), slerp on the shorter arc, cubic
Hermite with the tangents times the key interval, rotations normalised; before the first key
and after the last the end key holds.
"""

from __future__ import annotations

import numpy as np

from codec.codecs.authored.fitter import DROP_NONE, MAX_INT, KeyTrack
from codec.codecs.authored.sources import INTERPOLATIONS, KIND_OF_SUB, on_grid
from codec.codecs.survey.byte_io import ByteReader, seal
from codec.codecs.survey.decoder import TrackDecoder
from codec.codecs.survey.frame import (
    ROT,
    WIDTHS,
    animated_order,
    read_frame,
    write_frame,
)
from codec.codecs.survey.streams import read_stream, write_stream
from codec.errors import ClipValidationError
from codec.model.authored_curves import CurveGroup
from codec.model.clip import Clip, Skeleton
from codec.model.limits import MAX_VALUE

Array = np.ndarray
LAYOUT_VERSION = 1
NAME = "authored"
GRID, SECONDS, SECONDS32 = 0, 1, 2
MAX_KEYS = 10_000_000


def write(
    clip: Clip,
    kinds: Array,
    fixed: tuple[Array, Array, Array],
    reps: dict[tuple[int, int], KeyTrack],
    timelines: list[Array],
) -> bytes:
    """The payload of a clip whose animated sub-tracks are `reps` on `timelines`."""
    w = write_frame(clip, kinds, fixed)
    tracks = [reps[jk] for jk in animated_order(kinds)]
    used = sorted({t.timeline for t in tracks})
    index = {u: n for n, u in enumerate(used)}
    w.u32(len(used))
    for u in used:
        times = timelines[u]
        grid = on_grid(times, clip.sample_rate)
        narrow = np.array_equal(np.asarray(times, np.float32).astype(np.float64), times)
        w.u8(GRID if grid is not None else SECONDS32 if narrow else SECONDS)
        w.u32(len(times))
        if grid is not None:
            write_stream(w, [np.diff(grid, prepend=0)])
        else:
            w.raw(np.asarray(times, "<f4" if narrow else "<f8").tobytes())
    for t in tracks:
        w.u8(INTERPOLATIONS.index(t.interpolation))
        if t.sub == ROT:
            w.u8(t.drop)
        w.u32(index[t.timeline])
        w.raw(np.float32(t.step).astype("<f4").tobytes())
        if t.tangent_ints is not None:
            w.raw(np.float32(t.tangent_step).astype("<f4").tobytes())
    write_stream(w, [np.diff(t.ints, axis=0, prepend=0).T.reshape(-1) for t in tracks])
    tangents = [
        np.diff(t.tangent_ints, axis=1, prepend=0) for t in tracks if t.tangent_ints is not None
    ]
    write_stream(w, [d.transpose(0, 2, 1).reshape(-1) for d in tangents])
    return seal(LAYOUT_VERSION, bytes(w.buf))


def _step(r: ByteReader, what: str) -> float:
    v = float(np.frombuffer(r.take(4, what), "<f4")[0])
    if not (np.isfinite(v) and 0.0 < v <= MAX_VALUE / MAX_INT):
        raise r.fail(f"{what} {v} is not a positive number the codec holds")
    return v


def _timeline(r: ByteReader, n: int, rate: float) -> Array:
    how = r.u8(f"kind of timeline {n}")
    count = r.u32(f"key count of timeline {n}")
    if how not in (GRID, SECONDS, SECONDS32) or not 0 < count <= MAX_KEYS:
        raise r.fail(f"timeline {n}: kind {how} with {count} keys")
    if how == GRID:
        idx = np.cumsum(read_stream(r, count, f"timeline {n}"))
        if np.any(idx < 0) or np.any(np.diff(idx) < 0) or idx[-1] > MAX_KEYS:
            raise r.fail(f"timeline {n}: sample indices not increasing from 0")
        return idx / rate
    times = r.array("<f4" if how == SECONDS32 else "<f8", count, f"key times of timeline {n}")
    if not np.all(np.isfinite(times)) or np.any(np.diff(times) < 0):
        raise r.fail(f"timeline {n}: key times not finite and increasing")
    return times


def read(payload: bytes, skeleton: Skeleton) -> AuthoredDecoder:
    """The decoder of an authored payload (CompressedFormatError on anything wrong: every
    length and number checked before it is used)."""
    r, (S, rate, looping, kinds, fixed, order) = read_frame(payload, skeleton, LAYOUT_VERSION, NAME)
    count = r.u32("timeline count")
    if count > len(order):
        raise r.fail(f"{count} timelines for {len(order)} animated tracks")
    timelines = [_timeline(r, n, rate) for n in range(count)]
    heads = []
    for n, (_, sub) in enumerate(order):
        code = r.u8(f"interpolation of track {n}")
        if code >= len(INTERPOLATIONS):
            raise r.fail(f"track {n}: interpolation {code}")
        interp = INTERPOLATIONS[code]
        if interp == "slerp" and sub != ROT:
            raise r.fail(f"track {n}: slerp is for rotations")
        drop = r.u8(f"rotation layout of track {n}") if sub == ROT else DROP_NONE
        if drop > DROP_NONE or (drop != DROP_NONE and interp == "cubic"):
            raise r.fail(f"track {n}: {interp} rotation rebuilds component {drop}")
        line = r.u32(f"timeline of track {n}")
        if line >= count:
            raise r.fail(f"track {n}: timeline {line} of {count}")
        step = _step(r, f"value step of track {n}")
        tstep = _step(r, f"tangent step of track {n}") if interp == "cubic" else 0.0
        heads.append((sub, interp, line, step, tstep, drop))
    stored = [WIDTHS[h[0]] - (h[5] != DROP_NONE) for h in heads]
    keys = [len(timelines[h[2]]) * c for h, c in zip(heads, stored, strict=True)]
    values = read_stream(r, sum(keys), "value")
    cubic = [len(timelines[h[2]]) * WIDTHS[h[0]] for h in heads if h[1] == "cubic"]
    tangents = read_stream(r, 2 * sum(cubic), "tangent")
    r.done()
    tracks = []
    at = at_t = 0
    for (sub, interp, line, step, tstep, drop), n, c in zip(heads, keys, stored, strict=True):
        k = len(timelines[line])
        ints = np.cumsum(values[at : at + n].reshape(c, k), axis=1).T
        at += n
        tints = None
        if interp == "cubic":
            tints = np.cumsum(tangents[at_t : at_t + 2 * n].reshape(2, c, k), axis=2)
            tints = tints.transpose(0, 2, 1)
            at_t += 2 * n
        big = max(np.abs(ints).max(), 0 if tints is None else np.abs(tints).max())
        if big > MAX_INT:
            raise r.fail(f"an integer of track {len(tracks)} is beyond {MAX_INT}")
        tracks.append(KeyTrack(sub, interp, line, step, ints, tstep, tints, drop))
    try:
        return AuthoredDecoder(skeleton, rate, S, looping, fixed, order, tracks, timelines)
    except ClipValidationError as e:
        raise r.fail(f"the keys are not curves: {e}") from None


class AuthoredDecoder(TrackDecoder):
    """The tracks grouped by timeline, interpolation and kind, each group one curve of many
    tracks: a pose of every track is one search and one evaluation per group."""

    codec_name = NAME

    def __init__(
        self,
        skeleton: Skeleton,
        rate: float,
        S: int,
        looping: bool,
        fixed: list[Array],
        order: list[tuple[int, int]],
        tracks: list[KeyTrack],
        timelines: list[Array],
    ) -> None:
        super().__init__(skeleton, rate, S, looping, fixed)
        self.tracks = tracks
        self.timelines = timelines
        buckets: dict[tuple[int, str, int], list[tuple[int, KeyTrack]]] = {}
        for (j, _), t in zip(order, tracks, strict=True):
            buckets.setdefault((t.timeline, t.interpolation, t.sub), []).append((j, t))
        self.groups: list[tuple[int, CurveGroup]] = []
        for (line, interp, sub), members in buckets.items():
            stack = [t.tangents() for _, t in members]
            cubic = interp == "cubic"
            self.groups.append(
                (
                    sub,
                    CurveGroup(
                        KIND_OF_SUB[sub],
                        interp,
                        np.array([j for j, _ in members]),
                        timelines[line],
                        np.stack([t.values() for _, t in members], axis=1),
                        np.stack([a for a, _ in stack], axis=1) if cubic else None,
                        np.stack([b for _, b in stack], axis=1) if cubic else None,
                    ),
                )
            )

    def _fill(self, pos: Array, parts: list[Array], interpolation: str) -> None:
        """Every group at the clip times of positions (N,)."""
        t = np.asarray(pos, np.float64) / self.sample_rate
        for sub, g in self.groups:
            parts[sub][:, g.joints] = g.evaluate(t)
