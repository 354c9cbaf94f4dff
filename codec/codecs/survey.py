"""What the survey's codecs (subsample, keyreduce, curve, wavelet) share; no codec itself.

Each of those codecs stores every sub-track (rotation, translation, scale of a joint) on its
own, so they share one frame: the kinds of the sub-tracks (default, constant, animated), the
local error of a sub-track on its joint's dominant shell (what a track fitter measures), the
loop that drives every fit by the object-space shell error of the whole clip, the byte
helpers that check every length, and a decoder base that turns the source sample grid's
rounding modes into positions at which a codec evaluates its own representation.

Positions: a position `u` is a time in source samples (`t * sample_rate`); the source sample
`i` sits at `u = i`. Rounding (floor, ceil, nearest, per joint) snaps `u` to a source sample
first, exactly as `codec.model.sampling.sample_keys` does for the raw clip, so stepped playback
means the same for every codec; `none` evaluates the codec's representation at `u`.
"""

from __future__ import annotations

import lzma
import struct
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from codec.codecs.base import Encoded
from codec.errors import Cancelled, ClipValidationError, CompressedFormatError
from codec.measure.error_metric import clip_errors
from codec.measure.shells import ancestor_scale, dominant_shells, local_precision
from codec.model import quat
from codec.model.clip import Clip, Skeleton
from codec.model.sampling import (
    BASE_ROUNDING,
    INTERPOLATIONS,
    Pose,
    blend,
    duration_of,
    round_alpha,
    sample_keys,
)

Array = np.ndarray

ROT, TR, SC = 0, 1, 2
WIDTHS = (4, 3, 3)  # components per sub-track kind
SUB_NAMES = ("rotation", "translation", "scale")
DEFAULT, CONSTANT, ANIMATED = 0, 1, 2
LOOPING = ("clamp", "wrap")
MAX_BITS = 24  # widest quantisation of one component
MAX_BODY = 1 << 26  # bytes a packed body may unpack to (a hostile payload stops there)
START_BUDGET = 1.0  # first local budgets, times the joint's local precision over its share
MAX_ROUNDS = 10  # budget tightenings before the failing chains are stored at full precision
STRICT_MARGIN = 1.0 - 1e-9  # the loop aims just under the precision (float64 reorderings)


# --- bytes ------------------------------------------------------------------------------


class ByteWriter:
    """Little-endian writer of a payload's fields."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def u8(self, v: int) -> None:
        self.buf += struct.pack("<B", v)

    def u16(self, v: int) -> None:
        self.buf += struct.pack("<H", v)

    def u32(self, v: int) -> None:
        self.buf += struct.pack("<I", v)

    def f64(self, v: float) -> None:
        self.buf += struct.pack("<d", v)

    def raw(self, b: bytes) -> None:
        self.buf += b


class ByteReader:
    """Reads fields after checking that they are there; CompressedFormatError names the
    byte offset and the field otherwise."""

    def __init__(self, data: bytes, codec: str) -> None:
        self.data = data
        self.pos = 0
        self.codec = codec

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > len(self.data):
            raise CompressedFormatError(
                f"{self.codec} payload truncated at byte {self.pos}: {what} needs {n} bytes, "
                f"{len(self.data) - self.pos} left"
            )

    def take(self, n: int, what: str) -> bytes:
        self.need(n, what)
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def u8(self, what: str) -> int:
        return self.take(1, what)[0]

    def u16(self, what: str) -> int:
        return struct.unpack("<H", self.take(2, what))[0]

    def u32(self, what: str) -> int:
        return struct.unpack("<I", self.take(4, what))[0]

    def f64(self, what: str) -> float:
        return struct.unpack("<d", self.take(8, what))[0]

    def array(self, dtype: str, n: int, what: str) -> Array:
        size = np.dtype(dtype).itemsize * n
        return np.frombuffer(self.take(size, what), dtype=dtype).astype(np.float64)

    def done(self) -> None:
        if self.pos != len(self.data):
            raise CompressedFormatError(
                f"{self.codec} payload has {len(self.data) - self.pos} bytes after its end "
                f"(byte {self.pos})"
            )

    def fail(self, message: str) -> CompressedFormatError:
        return CompressedFormatError(f"{self.codec} payload, byte {self.pos}: {message}")


def pack_uint(values: Array, width: int) -> bytes:
    """Unsigned integers (n,) at `width` bits each, most significant bit first, padded to
    a whole byte."""
    v = np.asarray(values, dtype=np.uint64).reshape(-1)
    if width == 0 or v.size == 0:
        return b""
    shifts = np.arange(width - 1, -1, -1, dtype=np.uint64)
    bits = ((v[:, None] >> shifts) & np.uint64(1)).astype(np.uint8)
    return np.packbits(bits.reshape(-1)).tobytes()


def packed_size(n: int, width: int) -> int:
    return (n * width + 7) // 8


def unpack_uint(data: bytes, n: int, width: int) -> Array:
    """(n,) uint64 of `pack_uint` bytes."""
    if width == 0 or n == 0:
        return np.zeros(n, dtype=np.uint64)
    bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8))[: n * width]
    bits = bits.reshape(n, width).astype(np.uint64)
    shifts = np.arange(width - 1, -1, -1, dtype=np.uint64)
    return np.sum(bits << shifts, axis=1, dtype=np.uint64)


LZMA_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME, "dict_size": 1 << 20}]
RAW, DEFLATE, LZMA = 0, 1, 2  # how a body is stored


def seal(layout_version: int, body: bytes) -> bytes:
    """Payload = version (u8), CRC32 of the body (u32), how the body is stored (u8: 0 as it
    is, 1 zlib-deflated, 2 raw LZMA2 with a 1 MiB dictionary), the stored body: whichever
    of the three is smallest (the entropy coding of every survey codec)."""
    options = [
        (RAW, body),
        (DEFLATE, zlib.compress(body, 9)),
        (LZMA, lzma.compress(body, format=lzma.FORMAT_RAW, filters=LZMA_FILTERS)),
    ]
    flag, stored = min(options, key=lambda o: (len(o[1]), o[0]))
    return struct.pack("<BIB", layout_version, zlib.crc32(body), flag) + stored


def unseal(payload: bytes, layout_version: int, codec: str) -> bytes:
    """The body of a sealed payload, checked (CompressedFormatError otherwise)."""
    if len(payload) < 6:
        raise CompressedFormatError(f"{codec} payload of {len(payload)} bytes: too short")
    version, crc, flag = struct.unpack_from("<BIB", payload)
    if version != layout_version:
        raise CompressedFormatError(
            f"{codec} payload has layout version {version}, this decoder reads "
            f"{layout_version}: compress the clip again"
        )
    body = payload[6:]
    if flag == DEFLATE:
        d = zlib.decompressobj()
        try:
            body = d.decompress(body, MAX_BODY)
        except zlib.error as e:
            raise CompressedFormatError(
                f"{codec} payload: deflated body is corrupt ({e})"
            ) from None
        if d.unconsumed_tail:
            raise CompressedFormatError(f"{codec} payload: body unpacks to over {MAX_BODY} bytes")
        if not d.eof or d.unused_data:
            raise CompressedFormatError(
                f"{codec} payload: deflated body is cut or has bytes after it"
            )
    elif flag == LZMA:
        x = lzma.LZMADecompressor(format=lzma.FORMAT_RAW, filters=LZMA_FILTERS)
        try:
            body = x.decompress(body, MAX_BODY)
        except lzma.LZMAError as e:
            raise CompressedFormatError(f"{codec} payload: LZMA body is corrupt ({e})") from None
        if not x.eof and not x.needs_input:
            raise CompressedFormatError(f"{codec} payload: body unpacks to over {MAX_BODY} bytes")
        if not x.eof or x.unused_data:
            raise CompressedFormatError(f"{codec} payload: LZMA body is cut or has bytes after it")
    elif flag != RAW:
        raise CompressedFormatError(f"{codec} payload: unknown body flag {flag}")
    if zlib.crc32(body) != crc:
        raise CompressedFormatError(f"{codec} payload: CRC mismatch (the data is cut or corrupt)")
    return body


# --- integer streams ----------------------------------------------------------------------


def zigzag(v: Array) -> Array:
    v = np.asarray(v, np.int64)
    return ((v << 1) ^ (v >> 63)).astype(np.uint64)


def unzigzag(z: Array) -> Array:
    z = np.asarray(z, np.uint64)
    return ((z >> np.uint64(1)).astype(np.int64)) ^ (-(z & np.uint64(1)).astype(np.int64))


def varints(z: Array) -> bytes:
    """LEB128 bytes of unsigned integers (n,)."""
    z = np.asarray(z, np.uint64)
    if z.size == 0:
        return b""
    length = np.ones(z.shape, np.int64)
    for b in range(1, 10):
        length += (z >> np.uint64(7 * b)) > 0
    width = int(length.max())
    out = np.zeros((z.size, width), np.uint8)
    for b in range(width):
        chunk = ((z >> np.uint64(7 * b)) & np.uint64(127)).astype(np.uint8)
        out[:, b] = chunk | np.where(b < length - 1, 128, 0).astype(np.uint8)
    return out[np.arange(width)[None, :] < length[:, None]].tobytes()


def read_varints(r: ByteReader, data: bytes, count: int) -> Array:
    """(count,) unsigned integers of exactly `data` (CompressedFormatError otherwise)."""
    if count == 0:
        if data:
            raise r.fail("coefficient bytes without coefficients")
        return np.zeros(0, np.uint64)
    b = np.frombuffer(data, np.uint8)
    ends = np.flatnonzero(b < 128)
    if len(ends) != count or (len(b) and ends[-1] != len(b) - 1):
        raise r.fail(f"the coefficient stream holds {len(ends)} values, the tracks need {count}")
    starts = np.concatenate(([0], ends[:-1] + 1))
    lengths = ends - starts + 1
    if lengths.max() > 9:
        raise r.fail("a coefficient is longer than 63 bits")
    group = np.repeat(np.arange(count), lengths)
    shift = (np.arange(len(b)) - starts[group]) * 7
    parts = (b & 127).astype(np.uint64) << shift.astype(np.uint64)
    return np.add.reduceat(parts, starts)


def stream_cost(ints: Array) -> float:
    """Estimated bits of quantised values (K, C) in a `write_deltas` stream after entropy
    coding: about log2 of each zigzag difference, plus a little per value. Fitters compare
    their options with it (the bits per value alone miss that fine steps of smooth motion
    make small differences)."""
    z = zigzag(np.diff(np.asarray(ints, np.int64), axis=0, prepend=0)).astype(np.float64)
    return float(np.sum(np.log2(z + 1.0)) + 1.5 * z.size)


def write_deltas(w: ByteWriter, tracks: list[Array]) -> None:
    """Quantised tracks (K, C) each, as one stream: per track and component the differences
    between successive values (the first against 0), zigzag, LEB128; its byte length (u32)
    first. Neighbouring keys of smooth motion differ by little, so most take one byte."""
    parts = [np.diff(t.astype(np.int64), axis=0, prepend=0).T.reshape(-1) for t in tracks]
    data = varints(zigzag(np.concatenate(parts))) if parts else b""
    w.u32(len(data))
    w.raw(data)


def read_deltas(r: ByteReader, shapes: list[tuple[int, int]], bits: list[int]) -> list[Array]:
    """The tracks `write_deltas` wrote, of shapes (K, C), each value within `bits` bits."""
    length = r.u32("value stream length")
    count = sum(k * c for k, c in shapes)
    flat = unzigzag(read_varints(r, r.take(length, "value stream"), count))
    out = []
    at = 0
    for (k, c), b in zip(shapes, bits, strict=True):
        v = np.cumsum(flat[at : at + k * c].reshape(c, k), axis=1).T
        at += k * c
        if np.any(v < 0) or np.any(v > (1 << b) - 1):
            raise r.fail(f"a quantised value is outside {b} bits")
        out.append(v.astype(np.uint64))
    return out


# --- value ranges and quantisation ----------------------------------------------------


@dataclass(frozen=True)
class Quantised:
    """A track's values quantised in its own range: lo, hi (C,) as stored (float16 when it
    holds them, else float32), `bits` per component, ints (K, C)."""

    lo: Array
    hi: Array
    wide: bool
    bits: int
    ints: Array

    def values(self) -> Array:
        return dequantise(self.lo, self.hi, self.bits, self.ints)


def stored_range(lo: Array, hi: Array) -> tuple[Array, Array, bool]:
    """Range (C,) each widened outward to float16 values (float32 when float16 cannot hold
    them): the stored range always covers the values."""
    lo = np.asarray(lo, np.float64)
    hi = np.asarray(hi, np.float64)
    for dtype, wide in ((np.float16, False), (np.float32, True)):
        with np.errstate(over="ignore"):
            a = lo.astype(dtype)
            b = hi.astype(dtype)
        a = np.where(a.astype(np.float64) > lo, np.nextafter(a, dtype(-np.inf)), a)
        b = np.where(b.astype(np.float64) < hi, np.nextafter(b, dtype(np.inf)), b)
        if np.all(np.isfinite(a)) and np.all(np.isfinite(b)):
            return a.astype(np.float64), b.astype(np.float64), wide
    raise ValueError("value range beyond float32")  # Clip's limits keep values far below


def dequantise(lo: Array, hi: Array, bits: int, ints: Array) -> Array:
    """float64 values (K, C) of quantised ints (K, C): lo + (hi - lo) * q / (2^bits - 1)."""
    if bits == 0:
        return np.broadcast_to(lo, np.shape(ints)).astype(np.float64)
    return lo + (hi - lo) * (np.asarray(ints, np.float64) / float((1 << bits) - 1))


def quantise(values: Array, lo: Array, hi: Array, bits: int) -> Array:
    """ints (K, C) nearest to values (K, C) in the range, at `bits` bits."""
    if bits == 0:
        return np.zeros(np.shape(values), dtype=np.uint64)
    ext = hi - lo
    scale = float((1 << bits) - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(ext > 0, (values - lo) / np.where(ext > 0, ext, 1.0), 0.0)
    return np.clip(np.rint(u * scale), 0, scale).astype(np.uint64)


def write_range(w: ByteWriter, q: Quantised) -> None:
    dtype = "<f4" if q.wide else "<f2"
    w.raw(np.stack((q.lo, q.hi)).astype(dtype).tobytes())


def read_range(r: ByteReader, width: int, wide: bool, what: str) -> tuple[Array, Array]:
    v = r.array("<f4" if wide else "<f2", 2 * width, what).reshape(2, width)
    if not np.all(np.isfinite(v)) or np.any(v[1] < v[0]):
        raise r.fail(f"{what} is not a range")
    return v[0], v[1]


# --- local error on a joint's dominant shell ------------------------------------------


def track_error(sub: int, raw: Array, approx: Array, dist: float, smag: Array) -> Array:
    """Local error (..., S) of a sub-track: how far the approximation `approx (..., S, C)`
    moves the joint's dominant shell points (distance `dist`) from where the raw values
    `raw (S, C)` put them, in the parent's space. `smag (S, 3)` is |raw scale|: a rotation
    error moves a shell point scaled by it.

    Rotation: with r = conj(raw) * normalise(approx) (vector part v), the point d e_i moves
    by 2 d |s_i| |v x e_i| = 2 d |s_i| sqrt(|v|^2 - v_i^2) (exact, whatever the sign of r).
    Translation: |delta|. Scale: d * max_i |delta_i|.
    """
    if sub == ROT:
        p = approx / np.linalg.norm(approx, axis=-1, keepdims=True)
        v = quat.mul(quat.conjugate(raw), p)[..., :3]
        v2 = v * v
        perp = np.maximum(np.sum(v2, axis=-1, keepdims=True) - v2, 0.0)
        return 2.0 * dist * np.max(np.sqrt(perp) * smag, axis=-1)
    d = approx - raw
    if sub == TR:
        return np.sqrt(np.sum(d * d, axis=-1))
    return dist * np.max(np.abs(d), axis=-1)


def choose_bits(
    sub: int, raw: Array, dist: float, smag: Array, budget: float
) -> tuple[Quantised, float]:
    """The fewest bits whose quantisation of every sample of a track stays within
    `budget`, and the error it leaves (MAX_BITS when none does). Returns the quantised
    samples (S, C)."""
    lo, hi, wide = stored_range(raw.min(axis=0), raw.max(axis=0))
    best = None
    for bits in range(1, MAX_BITS + 1):
        ints = quantise(raw, lo, hi, bits)
        err = float(track_error(sub, raw, dequantise(lo, hi, bits, ints), dist, smag).max())
        best = (Quantised(lo, hi, wide, bits, ints), err)
        if err <= budget:
            break
    assert best is not None
    return best


# --- the fitting loop -------------------------------------------------------------------


class TrackFitter(Protocol):
    """A codec's per-track approximation: fit within a local budget, evaluate anywhere."""

    def fit(
        self, sub: int, raw: Array, budget: float, dist: float, smag: Array, previous: Any = None
    ) -> Any:
        """A representation of `raw (S, C)` whose `track_error` stays within `budget`
        (or the most accurate one it has when the budget is below reach). `previous` is the
        track's fit at a looser budget of an earlier round, to start from (or None)."""
        ...

    def evaluate(self, rep: Any, pos: Array, interpolation: str = "nlerp") -> Array:
        """Values (N, C) at positions `pos (N,)` in source samples (rotations unnormalised)."""
        ...


@dataclass
class Fitted:
    """The outcome of `fit_clip`: kinds (J, 3), fixed values (rotation (J, 4), translation
    and scale (J, 3): bind or constant), reps {(joint, sub): rep} of the animated
    sub-tracks, object-space errors (J,) at the source samples and whether all are within
    their precision, and the rounds the budgets took."""

    kinds: Array
    fixed: tuple[Array, Array, Array]
    reps: dict[tuple[int, int], Any]
    errors: Array
    strict: bool
    rounds: int


def continuous_rotations(clip: Clip) -> Array:
    """(S, J, 4) rotations with each sample on the previous one's hemisphere."""
    return quat.ensure_continuity(clip.rotations, axis=0)


def _constant_value(sub: int, raw: Array) -> Array:
    """The value a constant sub-track stores (float32-rounded, as it is written): the
    middle of the range for translations and scales, the normalised mean rotation."""
    if sub == ROT:
        v = quat.normalize(raw.mean(axis=0))
    else:
        v = 0.5 * (raw.min(axis=0) + raw.max(axis=0))
    return v.astype(np.float32).astype(np.float64)


def fit_clip(
    clip: Clip,
    fitter: TrackFitter,
    progress: Callable[[float, str], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Fitted:
    """Fit every sub-track of `clip` so that every joint stays within its precision on its
    own shell, in object space, at every source sample.

    Each sub-track gets a local budget on its joint's dominant shell (the joint's dominant
    precision over its ancestors' scale, shared by the joint's non-exact sub-tracks). After
    each fit the whole clip is rebuilt and measured in object space
    (`codec.measure.error_metric.clip_errors`); every joint over its precision tightens the budgets
    of its chain (itself and its ancestors) in proportion to how far over it is. After
    MAX_ROUNDS such rounds the chains still failing are fitted with a zero budget (the most
    accurate representation the codec has).
    """
    sk = clip.skeleton
    S, J = clip.num_samples, clip.num_joints
    dist, dprec = dominant_shells(clip)
    lp = local_precision(dprec, ancestor_scale(clip))
    raws = (continuous_rotations(clip), clip.translations, clip.scales)
    binds = (sk.bind_rotations, sk.bind_translations, sk.bind_scales)
    smag = np.abs(clip.scales)
    exact = np.zeros((J, 3), dtype=np.int64) + ANIMATED
    for k in range(3):
        a = raws[k]
        same0 = np.all(a == a[:1], axis=-1)
        same_bind = np.all(a == binds[k][None], axis=-1)
        if k == ROT:
            same0 |= np.all(a == -a[:1], axis=-1)
            same_bind |= np.all(a == -binds[k][None], axis=-1)
        exact[np.all(same0, axis=0), k] = CONSTANT
        exact[np.all(same_bind, axis=0), k] = DEFAULT
    share = np.maximum(np.sum(exact == ANIMATED, axis=1), 1)
    budgets = np.repeat((START_BUDGET * lp / share)[:, None], 3, axis=1)
    # a sub-track that a fixed value holds within its share leaves the rest of the share to
    # the joint's animated ones (an FBX joint's float-noise translation and scale would
    # otherwise take two thirds of its rotation's budget)
    held = np.zeros((J, 3))
    for j, k in np.argwhere(exact == ANIMATED):
        raw = raws[k][:, j]
        held[j, k] = min(
            float(track_error(k, raw, np.broadcast_to(v, raw.shape), dist[j], smag[:, j]).max())
            for v in (binds[k][j], _constant_value(k, raw))
        )
    fixed_ok = (exact == ANIMATED) & (held <= budgets)
    moving = (exact == ANIMATED) & ~fixed_ok
    left = START_BUDGET * lp - np.sum(np.where(fixed_ok, held, 0.0), axis=1)
    budgets = np.where(moving, (left / np.maximum(np.sum(moving, axis=1), 1))[:, None], budgets)
    kinds = exact.copy()
    fixed = [b.copy() for b in binds]
    reps: dict[tuple[int, int], Any] = {}
    chains = sk.chains()
    raw_clip = clip
    todo = np.ones((J, 3), dtype=bool)
    errors = np.zeros(J)
    strict = False
    rounds = 0
    final = False
    while True:
        rounds += 1
        jobs = np.argwhere(todo)
        for n, (j, k) in enumerate(jobs):
            if cancelled is not None and cancelled():
                raise Cancelled("compression cancelled")
            if progress is not None and n % 16 == 0:
                progress(min(0.95, 0.1 * rounds + 0.1 * n / max(len(jobs), 1)), "fitting tracks")
            _fit_one(
                fitter, int(j), int(k), raws, binds, exact, budgets, dist, smag, kinds, fixed, reps
            )
        lossy = _rebuild(clip, fitter, kinds, fixed, reps)
        errors = clip_errors(raw_clip, lossy).max(axis=0) if S else np.zeros(J)
        over = errors > sk.precision * STRICT_MARGIN
        strict = not np.any(over)
        if strict or final:
            break
        todo[:] = False
        if rounds >= MAX_ROUNDS:
            final = True
            for j in np.flatnonzero(over):
                for a in chains[j]:
                    budgets[a] = 0.0
                    todo[a] = exact[a] == ANIMATED
            continue
        factor = np.ones(J)
        for j in np.flatnonzero(over):
            f = float(np.clip(0.9 * sk.precision[j] / errors[j], 0.25, 0.9))
            for a in chains[j]:
                factor[a] = min(factor[a], f)
        budgets *= factor[:, None]
        todo[:] = (factor < 1.0)[:, None] & (exact == ANIMATED)
    return Fitted(kinds, (fixed[0], fixed[1], fixed[2]), reps, errors, strict, rounds)


def _fit_one(fitter, j, k, raws, binds, exact, budgets, dist, smag, kinds, fixed, reps) -> None:
    previous = reps.pop((j, k), None)
    if exact[j, k] != ANIMATED:
        kinds[j, k] = exact[j, k]
        fixed[k][j] = binds[k][j] if exact[j, k] == DEFAULT else _constant_value(k, raws[k][:, j])
        return
    raw = raws[k][:, j]
    sm = smag[:, j]
    b = budgets[j, k]
    for kind, value in ((DEFAULT, binds[k][j]), (CONSTANT, _constant_value(k, raw))):
        if track_error(k, raw, np.broadcast_to(value, raw.shape), dist[j], sm).max() <= b:
            kinds[j, k] = kind
            fixed[k][j] = value
            return
    kinds[j, k] = ANIMATED
    fit_joint = getattr(fitter, "fit_joint", None)  # a fitter whose tracks are the joint's own
    if fit_joint is not None:
        reps[(j, k)] = fit_joint(j, k, raw, b, float(dist[j]), sm, previous)
    else:
        reps[(j, k)] = fitter.fit(k, raw, b, float(dist[j]), sm, previous)


def _rebuild(clip: Clip, fitter: TrackFitter, kinds: Array, fixed, reps) -> Clip:
    S = clip.num_samples
    parts = [np.repeat(f[None], S, axis=0) for f in fixed]
    pos = np.arange(S, dtype=np.float64)
    for (j, k), rep in reps.items():
        parts[k][:, j] = fitter.evaluate(rep, pos)
    return _clip_of(clip.skeleton, clip.sample_rate, parts, clip.looping, clip.name)


def _clip_of(skeleton: Skeleton, rate: float, parts: list[Array], looping: bool, name: str) -> Clip:
    rot = parts[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        rot = rot / np.linalg.norm(rot, axis=-1, keepdims=True)
    try:
        return Clip(skeleton, rate, rot, parts[1], parts[2], looping=looping, name=name)
    except ClipValidationError as e:
        raise CompressedFormatError(f"the data decodes to an invalid clip: {e}") from None


# --- kinds and fixed values in bytes --------------------------------------------------


def write_kinds(w: ByteWriter, kinds: Array, fixed: tuple[Array, Array, Array]) -> None:
    """Kinds (J, 3) at 2 bits each, then the constant values as float32, joint-major
    (rotation x y z w, translation, scale)."""
    w.raw(pack_uint(kinds.reshape(-1), 2))
    vals = []
    for j in range(kinds.shape[0]):
        for k in range(3):
            if kinds[j, k] == CONSTANT:
                vals.append(np.asarray(fixed[k][j], np.float32))
    if vals:
        w.raw(np.concatenate(vals).astype("<f4").tobytes())


def read_kinds(r: ByteReader, skeleton: Skeleton) -> tuple[Array, list[Array]]:
    J = skeleton.num_joints
    kinds = unpack_uint(r.take(packed_size(3 * J, 2), "sub-track kinds"), 3 * J, 2)
    kinds = kinds.astype(np.int64).reshape(J, 3)
    if np.any(kinds > ANIMATED):
        raise r.fail("a sub-track kind is not default, constant or animated")
    fixed = [
        skeleton.bind_rotations.copy(),
        skeleton.bind_translations.copy(),
        skeleton.bind_scales.copy(),
    ]
    for j, k in np.argwhere(kinds == CONSTANT):
        v = r.array("<f4", WIDTHS[k], f"constant {SUB_NAMES[k]} of joint {j}")
        if not np.all(np.isfinite(v)):
            raise r.fail(f"constant {SUB_NAMES[k]} of joint {j} is not finite")
        if k == ROT:
            n = np.linalg.norm(v)
            if not n > 0:
                raise r.fail(f"constant rotation of joint {j} is zero")
            v = v / n
        fixed[k][j] = v
    return kinds, fixed


def write_header(w: ByteWriter, clip: Clip) -> None:
    """Joint count (u32), source sample count (u32), source rate (f64), looping (u8)."""
    w.u32(clip.num_joints)
    w.u32(clip.num_samples)
    w.f64(clip.sample_rate)
    w.u8(1 if clip.looping else 0)


def read_header(r: ByteReader, skeleton: Skeleton) -> tuple[int, float, bool]:
    J = r.u32("joint count")
    if J != skeleton.num_joints:
        raise r.fail(f"the data has {J} joints, the skeleton {skeleton.num_joints}")
    S = r.u32("sample count")
    rate = r.f64("sample rate")
    looping = r.u8("looping flag")
    if S < 1 or S > 10_000_000:
        raise r.fail(f"sample count {S} is out of range")
    if not (np.isfinite(rate) and rate > 0):
        raise r.fail(f"sample rate {rate} is not a positive number")
    if looping > 1:
        raise r.fail(f"looping flag {looping} is not 0 or 1")
    return S, rate, bool(looping)


# --- decoding ---------------------------------------------------------------------------


class TrackDecoder:
    """Decoder base of the survey codecs: default and constant sub-tracks from `fixed`,
    animated ones from the codec's representation (`_evaluate`); the source sample grid
    gives every rounding mode its meaning (module docstring)."""

    codec_name = ""

    def __init__(
        self,
        skeleton: Skeleton,
        sample_rate: float,
        num_samples: int,
        looping: bool,
        fixed: list[Array],
    ) -> None:
        self.skeleton = skeleton
        self.sample_rate = float(sample_rate)
        self.num_samples = int(num_samples)
        self.looping = looping
        self.wrap = False  # the survey codecs keep every source sample's time
        self.duration = duration_of(self.num_samples, self.sample_rate, self.wrap)
        self._fixed = fixed

    # codecs implement: the animated sub-tracks at positions (N,) -> fill parts in place
    def _fill(self, pos: Array, parts: list[Array], interpolation: str) -> None:
        raise NotImplementedError

    def evaluate(self, pos: Array, interpolation: str = "nlerp") -> tuple[Array, Array, Array]:
        """Rotations (N, J, 4) unit, translations and scales (N, J, 3) at positions (N,)."""
        pos = np.clip(np.asarray(pos, np.float64).reshape(-1), 0.0, self.num_samples - 1.0)
        parts = [np.repeat(f[None], len(pos), axis=0) for f in self._fixed]
        self._fill(pos, parts, interpolation)
        rot = parts[0]
        with np.errstate(invalid="ignore", divide="ignore"):
            rot = rot / np.linalg.norm(rot, axis=-1, keepdims=True)
        return rot, parts[1], parts[2]

    def snapped(self, times: Array, rounding: str) -> Array:
        """Positions (N,) of times (N,) under one base rounding mode on the source grid."""
        if rounding not in BASE_ROUNDING:
            raise ValueError(f"unknown rounding mode {rounding!r}; expected one of {BASE_ROUNDING}")
        last = self.num_samples - 1.0
        pos = np.clip(np.asarray(times, np.float64) * self.sample_rate, 0.0, last)
        if rounding == "none":
            return pos
        k = np.floor(pos)
        return np.minimum(k + round_alpha(pos - k, rounding), last)

    def sample_times(self, times: Array, rounding: str = "none") -> tuple[Array, Array, Array]:
        return self.evaluate(self.snapped(times, rounding))

    def sample(
        self,
        t: float,
        rounding: str = "nearest",
        looping: str | None = None,
        per_track: Array | list[str] | None = None,
        interpolation: str = "nlerp",
    ) -> Pose:
        """Pose at time `t` (seconds). looping 'wrap' blends the last sample into the
        first over one more sample interval; per_track gives each joint a base mode.
        interpolation 'slerp' blends rotations on the sphere where a codec blends two stored
        values (subsample, keyreduce, wavelet); curve follows its spline either way."""
        if looping is not None and looping not in LOOPING:
            raise ValueError(f"unknown looping {looping!r}; use one of {LOOPING}")
        if interpolation not in INTERPOLATIONS:
            raise ValueError(f"unknown interpolation {interpolation!r}")
        wrap = looping == "wrap"
        S = self.num_samples
        keys = sample_keys(t, self.sample_rate, S, rounding, wrap, per_track)
        J = self.skeleton.num_joints
        alphas = np.broadcast_to(np.asarray(keys.alpha, np.float64), (J,))
        if keys.second == keys.first + 1 or keys.second == keys.first:
            uniq = np.unique(alphas)
            step = 1.0 if keys.second == keys.first + 1 else 0.0
            rot, tr, sc = self.evaluate(keys.first + uniq * step, interpolation)
            pick = np.searchsorted(uniq, alphas)
            cols = np.arange(J)
            return Pose(rot[pick, cols], tr[pick, cols], sc[pick, cols])
        rot, tr, sc = self.evaluate(np.array([keys.first, keys.second], np.float64))
        a = Pose(rot[0], tr[0], sc[0])
        b = Pose(rot[1], tr[1], sc[1])
        return blend(a, b, alphas, interpolation)

    def decode_source(self, name: str = "") -> Clip:
        rot, tr, sc = self.evaluate(np.arange(self.num_samples, dtype=np.float64))
        return _clip_of(self.skeleton, self.sample_rate, [rot, tr, sc], self.looping, name)

    def decode_all(self) -> Clip:
        """Every source sample: these codecs store no grid of their own that a Clip of
        the source's rate could hold (subsample overrides this with its stored grid)."""
        return self.decode_source()


def strict_check(clip: Clip, decoder: TrackDecoder) -> tuple[Array, bool]:
    """Object-space errors (J,) of what the bytes decode to, and whether all are within
    the joints' precisions (the float64 check every codec ends with)."""
    err = clip_errors(clip, decoder.decode_source()).max(axis=0)
    return err, bool(np.all(err <= clip.skeleton.precision))


def base_details(
    clip: Clip, payload: bytes, fitted_errors: Array, strict: bool, **extra: Any
) -> dict[str, Any]:
    """JSON-safe details every survey codec reports."""
    worst = int(np.argmax(fitted_errors)) if len(fitted_errors) else 0
    return {
        "strict": bool(strict),
        "max_error": float(fitted_errors.max()) if len(fitted_errors) else 0.0,
        "worst_track": clip.skeleton.names[worst],
        "compressed_size": len(payload),
        **extra,
    }


def checked_encoding(
    clip: Clip,
    payload: bytes,
    read: Callable[[bytes, Skeleton], TrackDecoder],
    fitted: Fitted,
    started: float,
    **extra: Any,
) -> Encoded:
    """How every survey codec's encode ends: decode the bytes just written, check them in
    float64 (`strict_check`) and report `base_details` with the codec's `extra` between the
    track count and the rounds; `started` is the encode's time.perf_counter() start."""
    decoder = read(payload, clip.skeleton)
    errors, strict = strict_check(clip, decoder)
    details = base_details(
        clip,
        payload,
        errors,
        strict,
        num_animated_tracks=len(fitted.reps),
        **extra,
        rounds=fitted.rounds,
        encode_time=time.perf_counter() - started,
    )
    return Encoded(payload, decoder, details)


# --- keyed tracks (keyreduce, curve): time markers and quantised key values -------------


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


def animated_order(kinds: Array) -> list[tuple[int, int]]:
    """(joint, sub) of every animated sub-track, joint-major: the order tracks are written."""
    return [(int(j), int(k)) for j, k in np.argwhere(kinds == ANIMATED)]


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
        for k in range(3):
            sel = self.sub == k
            if np.any(sel):
                parts[k][:, self.joint[sel]] = out[:, sel, : WIDTHS[k]]


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


class GridTable:
    """Tracks that share one grid of M values (subsample's stored samples, the wavelet's
    rebuilt source samples), stacked: values (M, T, 4), three-component tracks padded."""

    def __init__(self, tracks: list[tuple[int, int, Array]], length: int) -> None:
        self.joint = np.array([j for j, _, _ in tracks], dtype=np.int64)
        self.sub = np.array([k for _, k, _ in tracks], dtype=np.int64)
        self.values = np.zeros((length, len(tracks), 4))
        for n, (_, k, v) in enumerate(tracks):
            self.values[:, n, : WIDTHS[k]] = v

    def lerp(self, x: Array, slerp: bool = False) -> Array:
        """(N, T, 4) at grid coordinates x (N,) (0 .. M - 1): the two grid values around each
        blended linearly, rotations by slerp when asked."""
        m = len(self.values)
        x = np.clip(np.asarray(x, np.float64), 0.0, m - 1.0)
        i = np.minimum(np.floor(x).astype(np.int64), max(m - 2, 0))
        i1 = np.minimum(i + 1, m - 1)
        a = (x - i)[:, None, None]
        lo, hi = self.values[i], self.values[i1]
        out = lo + (hi - lo) * a
        if slerp:
            rot = self.sub == 0
            out[:, rot] = quat.slerp(lo[:, rot], hi[:, rot], a)
        return out

    def scatter(self, out: Array, parts: list[Array]) -> None:
        """Write track values (N, T, 4) into the pose arrays (N, J, C) of each kind."""
        for k in range(3):
            sel = self.sub == k
            if np.any(sel):
                parts[k][:, self.joint[sel]] = out[:, sel, : WIDTHS[k]]


def write_keyed_payload(
    clip: Clip, kinds: Array, fixed: tuple[Array, Array, Array], reps: dict, version: int
) -> bytes:
    """The payload of a codec that keeps each animated sub-track as a KeyedTrack (keyreduce's
    keys, curve's knots): header, sub-track kinds, the tracks in stored order, sealed."""
    w = ByteWriter()
    write_header(w, clip)
    write_kinds(w, kinds, fixed)
    write_keyed(w, clip.num_samples, [reps[jk] for jk in animated_order(kinds)])
    return seal(version, bytes(w.buf))


def read_keyed_payload(
    payload: bytes, skeleton: Skeleton, version: int, codec: str
) -> tuple[float, int, bool, tuple[Array, Array, Array], list[tuple[int, int, KeyedTrack]]]:
    """What `write_keyed_payload` wrote: rate, sample count, looping, the fixed sub-tracks
    and every animated one as (joint, sub-track, track)."""
    r = ByteReader(unseal(payload, version, codec), codec)
    S, rate, looping = read_header(r, skeleton)
    kinds, fixed = read_kinds(r, skeleton)
    order = animated_order(kinds)
    tracks = read_keyed(r, S, [k for _, k in order])
    r.done()
    assert all(kinds[j, k] == ANIMATED for j, k in order)
    keyed = [(j, k, t) for (j, k), t in zip(order, tracks, strict=True)]
    return rate, S, looping, fixed, keyed
