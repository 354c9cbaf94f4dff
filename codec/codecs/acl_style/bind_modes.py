"""Bind pose modes: what acl-style's default sub-tracks stand for, tried per clip.

    strip     default sub-tracks hold the bind pose (ACL 2.1's bind pose stripping)
    none      default sub-tracks hold the identity (ACL without default values)
    additive  the clip is stored as an additive0 on the bind pose (codec.model.additive):
              smaller ranges, defaults the identity; the decoder applies the bind pose
    best      each of the three, keeping the smallest strict one (seed 003: stripping makes
              most clips smaller and a few much larger, so try both and keep the best)
    auto      the default: best's search at one mode's cost, where the others cannot matter
              (below)

`best` encodes with strip first, then tries none and additive unless a cheap screen (no
compressor run) shows they cannot be smaller (details["bind_modes"]["screened"] says why):
- none stores the same samples as strip, its defaults the identity: it can only be smaller
  where some sub-track is within reach of the identity (twice the joint's precision on its
  dominant shell) or where it holds one of strip's defaults closer to the raw clip (the
  first sample, the identity) while that default strays more than NEGLIGIBLE of the
  precision (seed 003's compounding errors). Else it stores strip's defaults as constants.
- additive differs from strip only by the bind pose's rotations and scales (its translations
  are offsets: the same ranges): with an identity bind rotation and unit bind scale on every
  sub-track strip stores, it stores strip's values and can only lose.
- beside a strict strip, additive gets BEST_ADDITIVE_ROUNDS: its optimiser measures the additive's
  hierarchy (bones the length of the offsets from the bind pose), so a first round that
  misses the precision is far off, and on the bench's clips no tightened round beat strip.
  Only a strict round can win there, so the round stops at the first solved segment with
  a keyframe it keeps whatever stripping does that is, applied to the bind pose, over a
  joint's precision (details["bind_modes"]["screened"] says where): the round could not be
  strict. Kept: a segment's first and last keyframe (keyframe_stripping never strips them),
  and all of them where (non-destructive stripping) every first removal, each keyframe
  rebuilt from its two neighbours, is over a joint's precision in the round's own measure:
  that segment strips nothing. On Fox and the CMU mocap clips an early segment already is.
Measured on the 45 clips (animations) of tests/data and ../shared/data, default and bench
settings: best's choice and size are those of trying every mode to its end without a screen.

`auto` runs strip and, beside a strict strip, only what wins big at little cost: none where
its screen finds a sub-track strip stores within reach of the identity (none may store it as
nothing); additive and none's "holds a default closer" case, whose wins are a few bytes and
whose tries cost one to two encodings of their own, are best's. Where strip is not strict,
auto tries every mode as best does. Measured on the 45 clips at the bench's settings: auto
keeps best's mode and size on 44 and is 6 B larger on cmu_81_16_two_samples (1,321 against
additive's 1,315), at strip's time (best: 1.5-2.5x it on short and mid-length clips).

A clip with an additive base of its own (ACL SJSON `base_tracks`) is always stored as its
additive (the file's format) on that base: the bind modes do not apply to it.

Every mode is measured against the clip's own poses: strip and none are strict by the
optimiser's own measure (their samples are the clip's); an additive's optimiser measures the
additive's hierarchy, so its result is measured on the applied pose and, where a joint is
over its precision, encoded again with that joint's precision tightened (ADDITIVE_ROUNDS).

In-place error compensation (`settings.compensate`, seed 001): after an encoding, every
animated rotation and translation of a joint below a lossy parent is replaced by the local
transform that puts the joint where the raw clip has it in object space, given the parent as
that encoding decodes it, and the clip is encoded again. The optimiser re-solves the parents
too, so their errors move: each round compensates against the parents of the round before
and tightens the precision of the joints still over it (COMPENSATED_ROUNDS), measured on the
raw clip. It is kept only where it ends smaller and strict.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from codec.codecs.acl_style.decoder import CompressedClip, unit_decoded
from codec.codecs.acl_style.encoder import Compressor, Judge, row_errors
from codec.codecs.acl_style.keyframe_stripping import StripSettings, rebuild
from codec.codecs.acl_style.layout import BIND_CODES
from codec.codecs.base import Encoded, Progress, TrackKind, sample_keys_of
from codec.codecs.container import HEADER_SIZE
from codec.errors import Cancelled
from codec.measure.error_metric import array_errors, clip_errors
from codec.measure.shells import ancestor_scale, identity_within
from codec.model import additive
from codec.model.additive import AdditiveBase
from codec.model.clip import Clip, Skeleton, exactly_unit
from codec.model.sampling import Pose, blend, sample_keys_batch
from codec.model.transforms import decompose, object_space
from codec.settings import CompressionSettings

Array = np.ndarray
# the kinds as plain ints: an array compared with an IntEnum member converts it slowly
_DEFAULT, _ANIMATED = int(TrackKind.DEFAULT), int(TrackKind.ANIMATED)
Rows = tuple[Array, Array, Array]
MODES = ("none", "strip", "additive")
ADDITIVE_ROUNDS = 5  # encodings of an additive clip at most
BEST_ADDITIVE_ROUNDS = 1  # encodings of `additive` at most when best tries it beside strip
COMPENSATED_ROUNDS = 10  # compensated encodings at most (each against the last one's parents)
SINGULAR = 1e-12  # |det| of a parent's object transform below which it is not inverted
NEGLIGIBLE = 0.01  # a default straying this share of its precision changes no bit rate
TIGHTEN_FLOOR = 0.25  # a round tightens a joint's precision by at most this factor
OVER_MARGIN = 1e-6  # relative: a keyframe stops a round only when over by more than rounding


class AppliedDecoder:
    """A decoder of additive values whose poses are applied to a base (codec.model.additive):
    what a game sees, and what every error is measured on. `inner` decodes the additive."""

    def __init__(self, inner: CompressedClip, base: AdditiveBase, skeleton: Skeleton) -> None:
        self.inner = inner
        self.base = base
        self.codec_name = inner.codec_name
        self.skeleton = skeleton
        self.sample_rate = inner.sample_rate
        self.num_samples = inner.num_samples
        self.wrap = inner.wrap
        self.duration = inner.duration

    def _base_at(self, keys: Array) -> tuple[Array, Array, Array]:
        """The base pose (N, J, ...) at stored samples `keys` (N,)."""
        return self.base.at_times(np.asarray(keys) / self.sample_rate, self.duration)

    def _applied(self, add: tuple[Array, Array, Array], base: Any) -> tuple[Array, Array, Array]:
        return additive.apply(self.base.format, base, add)

    def sample(
        self,
        t: float,
        rounding: str = "nearest",
        looping: str | None = None,
        per_track: Array | list[str] | None = None,
        interpolation: str = "nlerp",
    ) -> Pose:
        pose = self.inner.sample(t, rounding, looping, per_track, interpolation)
        k = sample_keys_of(self, t, rounding, looping, per_track, interpolation)
        b = self._base_at(np.array([k.first, k.second]))
        base = blend(Pose(*(a[0] for a in b)), Pose(*(a[1] for a in b)), k.alpha, interpolation)
        return Pose(*self._applied(tuple(pose), tuple(base)))

    def sample_times(self, times: Array, rounding: str = "none") -> tuple[Array, Array, Array]:
        add = self.inner.sample_times(times, rounding)
        first, second, alpha = sample_keys_batch(
            times, self.sample_rate, self.num_samples, rounding, self.wrap, self.duration
        )
        b0, b1 = self._base_at(first), self._base_at(second)
        a = alpha[:, None, None]
        r1 = np.where(np.sum(b0[0] * b1[0], axis=-1, keepdims=True) < 0.0, -b1[0], b1[0])
        rot = b0[0] + (r1 - b0[0]) * a
        rot = rot / np.linalg.norm(rot, axis=-1, keepdims=True)
        base = (rot, b0[1] + (b1[1] - b0[1]) * a, b0[2] + (b1[2] - b0[2]) * a)
        return self._applied(add, base)

    def _clip(self, c: Clip, name: str) -> Clip:
        base = self._base_at(np.arange(c.num_samples))
        rot, tr, sc = self._applied((c.rotations, c.translations, c.scales), base)
        return Clip(self.skeleton, c.sample_rate, rot, tr, sc, looping=c.looping, name=name)

    def decode_all(self) -> Clip:
        return self._clip(self.inner.decode_all(), "")

    def decode_source(self, name: str = "") -> Clip:
        return self._clip(self.inner.decode_source(name), name)


def identity_skeleton(sk: Skeleton, fmt: str = "additive0") -> Skeleton:
    """`sk` with the identity (of an additive format) as its bind pose. Not validated
    again, as `Skeleton.with_settings` is not: the joints are `sk`'s, and the identity is an
    exact unit rotation and finite (validating every mode of every encode cost more than a
    single-sample clip's whole optimisation)."""
    out = copy.copy(sk)
    names = ("bind_rotations", "bind_translations", "bind_scales")
    for name, value in zip(names, additive.identity(fmt, sk.num_joints), strict=True):
        value = np.asarray(value, dtype=np.float64)
        value.setflags(write=False)
        object.__setattr__(out, name, value)
    return out


class BindModes:
    """acl-style's encoder of one clip under every bind mode, each mode's `Compressor` kept
    between runs (the window's re-tuning loop)."""

    def __init__(self, clip: Clip) -> None:
        self.clip = clip
        self._compressors: dict[tuple[Any, ...], Compressor] = {}
        self._identity: dict[str, Skeleton] = {}
        self.segments_solved = 0

    def _compressor(self, key: tuple[Any, ...], make: Callable[[], Compressor]) -> Compressor:
        if key not in self._compressors:
            if len(self._compressors) > 8:
                self._compressors.clear()
            self._compressors[key] = make()
        return self._compressors[key]

    def run(
        self,
        settings: CompressionSettings | None = None,
        progress: Progress | None = None,
        cancel: Callable[[], bool] | None = None,
        skeleton: Skeleton | None = None,
    ) -> Encoded:
        settings = settings or CompressionSettings()
        clip = self.clip if skeleton is None else self.clip.with_skeleton(skeleton)
        clip = settings.apply(clip)
        inner = settings.skeleton_values()
        self.segments_solved = 0
        if clip.additive is not None:
            modes: tuple[str, ...] = ("base-" + clip.additive.format,)
        elif settings.bind in ("best", "auto"):
            modes = ("strip", "none", "additive")
        else:
            modes = (settings.bind,)
        tried: dict[str, dict[str, Any]] = {}
        screened: dict[str, str] = {}
        best: tuple[tuple[bool, int], str, Encoded] | None = None
        for i, mode in enumerate(modes):
            # beside a strict strip a mode is screened and cut short; else every mode may be
            # the one kept (the least over): a first additive round is far over (Fox Walk:
            # 0.74 cm at 0.001) and must not win as the smallest
            strict_strip = best is not None and best[1] == "strip" and best[0][0] is False
            if strict_strip:
                why = _cannot_win(mode, clip, best[2], thorough=settings.bind != "auto")
                if why is not None:
                    screened[mode] = why
                    continue
            told = _part(progress, i, len(modes), mode)
            started = time.perf_counter()
            beat = None if best is None else len(best[2].payload)
            try:
                encoded, strict = self._mode(
                    clip, mode, inner, told, cancel, None, beat, strict_strip
                )
            except _CannotBeStrict as stopped:
                screened[mode] = str(stopped)
                continue
            tried[mode] = _tried(encoded, strict, time.perf_counter() - started)
            rank = (not strict, len(encoded.payload))
            if best is None or rank < best[0]:
                best = (rank, mode, encoded)
        assert best is not None
        _, chosen, encoded = best
        compensation: dict[str, Any] = {"on": bool(settings.compensate)}
        if settings.compensate:
            started = time.perf_counter()
            told = _part(progress, len(modes) - 1, len(modes), f"{chosen}, compensated")
            comp, strict = self._mode(
                clip, chosen, inner, told, cancel, encoded, len(encoded.payload)
            )
            compensation.update(_tried(comp, strict, time.perf_counter() - started))
            compensation["plain_size"] = _tried(encoded, True, 0.0)["compressed_size"]
            compensation["kept"] = bool(strict and len(comp.payload) < len(encoded.payload))
            if compensation["kept"]:
                encoded = comp
        details = {
            **encoded.details,
            "bind_mode": chosen,
            "bind_modes": {"asked": settings.bind, "tried": tried, "screened": screened},
            "error_compensation": compensation,
        }
        if clip.additive is not None:
            base = clip.additive
            details["additive_base"] = {
                "format": base.format,
                "name": base.name,
                "num_samples": base.num_samples,
            }
        if not tried[chosen]["strict"]:
            details["strict"] = False
        if progress is not None:  # modes screened out never reported their share
            progress(1.0, "done")
        return dataclasses.replace(encoded, details=details)

    def _mode(
        self,
        clip: Clip,
        mode: str,
        settings: CompressionSettings,
        progress: Progress | None,
        cancel: Callable[[], bool] | None,
        compensate: Encoded | None,
        beat: int | None = None,
        short: bool = False,
    ) -> tuple[Encoded, bool]:
        """One mode's encoding of `clip` (settings applied) and whether it is strict;
        `compensate`: a plain encoding of this mode whose decoded parents the stored
        samples compensate (module docstring). `beat`: the payload size to beat; rounds stop
        (not strict) once an encoding that is not yet strict is no smaller, as tightening
        only adds bits. `short`: an additive gets BEST_ADDITIVE_ROUNDS (best, beside a strict
        strip: only a strict encoding can win there) and raises _CannotBeStrict from the
        first segment whose kept ends are over a joint's precision (module docstring)."""
        sk = clip.skeleton
        base = _base_of(clip, mode)
        stored_sk = self.clip.skeleton
        if mode != "strip":
            fmt = "additive0" if base is None else base.format
            if fmt not in self._identity:
                self._identity[fmt] = identity_skeleton(stored_sk, fmt)
            stored_sk = self._identity[fmt]

        def as_stored(poses: tuple[Array, Array, Array]) -> Clip:
            own = (self.clip.rotations, self.clip.translations, self.clip.scales)
            if base is None and all(a is b for a, b in zip(poses, own, strict=True)):
                return _under(self.clip, stored_sk)  # `none`: the clip's own, valid samples
            if base is not None:
                at = base.at_samples(clip.num_samples, clip.sample_rate)
                poses = additive.extract(base.format, at, poses)
            return self.clip.replace(
                skeleton=stored_sk,
                rotations=poses[0],
                translations=poses[1],
                scales=poses[2],
                additive=None,
                meshes=(),
            )

        raw = (clip.rotations, clip.translations, clip.scales)
        code = BIND_CODES.index(mode)
        if compensate is None and mode == "strip":
            compressor = self._compressor((mode,), lambda: Compressor(self.clip, 0))
        elif compensate is None:
            compressor = self._compressor((mode,), lambda: Compressor(as_stored(raw), code))
        else:
            compressor = Compressor(as_stored(_compensated(clip, compensate)), code)
        target = stored_sk.with_settings_of(sk)
        # strip and none: the optimiser measures the clip's own poses, one round says all
        rounds = 1 if base is None and compensate is None else ADDITIVE_ROUNDS
        if compensate is not None:
            rounds = COMPENSATED_ROUNDS
        elif base is not None and short:
            rounds = BEST_ADDITIVE_ROUNDS  # beside a strict strip (best): module docstring
        precision = sk.precision.copy()
        judge = None
        if base is not None and short:
            judge = _strict_judge(clip, compressor.clip, base, settings)
        rounded = target  # the first round's precisions are the clip's own
        for _ in range(rounds):
            encoded = compressor.run(settings, progress, cancel, rounded, judge)
            self.segments_solved += compressor.segments_solved
            inner = encoded.decoder.on_skeleton(sk)
            decoder = inner if base is None else AppliedDecoder(inner, base, sk)
            worst = _worst_errors(clip, decoder)
            over = ~(worst <= sk.precision)  # NaN: over
            if not np.any(over):
                return dataclasses.replace(encoded, decoder=decoder), True
            if beat is not None and len(encoded.payload) >= beat:
                break
            if cancel is not None and cancel():
                raise Cancelled("compression cancelled")
            scale = np.clip(0.9 * sk.precision[over] / worst[over], TIGHTEN_FLOOR, 1.0)
            precision[over] = precision[over] * scale
            rounded = target.with_settings(precision)
            if compensate is not None:  # compensate the parents this round decoded
                compensate = dataclasses.replace(encoded, decoder=decoder)
                compressor = Compressor(as_stored(_compensated(clip, compensate)), code)
        return dataclasses.replace(encoded, decoder=decoder), False


def _worst_errors(clip: Clip, decoder: CompressedClip | AppliedDecoder) -> Array:
    """(J,) each joint's worst error at the clip's samples as `decoder` decodes them:
    `clip_errors(clip, decoder.decode_source())`, bit for bit. A CompressedClip's rows are
    measured as the decoded Clip would hold them (decoded_clip: unit in float64, then
    exactly_unit) without making that Clip: its checks were a sixth of a two-sample
    clip's encode, and the measurement after the encode makes it anyway."""
    if not isinstance(decoder, CompressedClip):
        return clip_errors(clip, decoder.decode_source(clip.name)).max(axis=0)
    samples = np.arange(clip.num_samples)
    rows = samples.copy()
    rows[decoder.num_samples :] = 0  # a wrapping clip's dropped last sample: the first
    return row_errors(clip, clip.rotations, None, decoder.decode_rows(rows)).max(axis=0)


class _CannotBeStrict(Exception):
    """A mode's round stopped where it already misses a joint's precision (the reason)."""


def _strict_judge(
    clip: Clip, stored: Clip, base: AdditiveBase, settings: CompressionSettings
) -> Judge:
    """The encoder's Judge of a round storing `clip` (settings applied) as the additive
    `stored` on `base`, at `clip`'s precisions: raises _CannotBeStrict at a solved segment
    with a keyframe the round keeps (module docstring) that, applied to the base and measured
    as `BindModes._mode` measures the decoded clip, is over a joint's precision. The stripping
    side is measured as the encoder's stripping measures it (on `stored`). Both ask for
    OVER_MARGIN more than the precision, so rounding in another order cannot turn them. A
    later segment leaving a joint stuck would make the encoder try other kinds: the encoder
    stops judging at the first one."""
    sk = clip.skeleton
    limit = sk.precision * (1.0 + OVER_MARGIN)
    duration = (clip.num_samples - 1) / clip.sample_rate
    strip = StripSettings(
        settings.strip_trivial, settings.strip_proportion, settings.strip_threshold
    )

    def over(raw: Rows, lossy: Rows) -> Array:
        """(n, J) whether each joint of the n lossy poses is over its precision."""
        ks = np.arange(len(lossy[0]))
        err = array_errors(raw, lossy, ks, np.zeros(len(ks)), sk.parents, sk.shell_distance)
        return err > limit

    def as_decoded(rows: Rows) -> Rows:
        """Decoded rows as a decoded clip holds them (decoder.decoded_clip, then Clip)."""
        return unit_decoded(rows[0]), rows[1], rows[2]

    def strips_nothing(rows: Array, decoded: Rows) -> bool:
        """Whether stripping leaves every keyframe of the segment, whatever it does: none
        enabled, or (trivial stripping) every first removal is over (module docstring)."""
        if not strip.enabled:
            return True
        if strip.destructive:
            return False
        inner = rows[1:-1]
        a = tuple(v[:-2] for v in decoded)
        b = tuple(v[2:] for v in decoded)
        rebuilt = as_decoded(rebuild(a, b, np.full(len(inner), 0.5)))
        raw = (stored.rotations[inner], stored.translations[inner], stored.scales[inner])
        return bool(np.all(np.any(over(raw, rebuilt), axis=1)))

    def judge(rows: Array, decoded: Rows) -> None:
        add = as_decoded((decoded[0].copy(), decoded[1], decoded[2]))
        at = base.at_times(rows / clip.sample_rate, duration)
        rot, tr, sc = additive.apply(base.format, at, add)
        raw = (clip.rotations[rows], clip.translations[rows], clip.scales[rows])
        bad = over(raw, (exactly_unit(rot), tr, sc))
        kept = np.zeros(len(rows), dtype=bool)
        kept[[0, -1]] = True  # never stripped
        if np.any(bad[1:-1]) and strips_nothing(rows, decoded):
            kept[:] = True
        found = np.argwhere(bad & kept[:, None])
        if len(found):
            (s, j), *_ = found
            raise _CannotBeStrict(
                f"its round stopped at sample {int(rows[s])}, a keyframe it keeps over "
                f"joint {int(j)}'s precision"
            )

    return judge


def _cannot_win(mode: str, clip: Clip, strip: Encoded, thorough: bool = True) -> str | None:
    """Why `mode` cannot be smaller than `strip` (a strict encoding of `clip`, settings
    applied, with `--bind strip`), or None when it might be and must be tried. Cheap: no
    compressor run, only how far the clip's sub-tracks stray from what each mode would hold
    them to (module docstring, "best"). Not `thorough` (auto): additive and none's closer
    defaults are left to best (module docstring, "auto")."""
    if not thorough and mode == "additive":
        return "auto tries it only where strip misses a precision (--bind best: always)"
    if strip.costs is None or strip.costs.dominant_shells is None:
        return None
    sk = clip.skeleton
    stored = np.asarray(strip.costs.kinds) != _DEFAULT
    if mode == "additive":
        turned = np.any(sk.bind_rotations[:, :3] != 0.0, axis=-1)
        scaled = np.any(sk.bind_scales != 1.0, axis=-1)
        if np.any(turned[stored[:, 0]]) or np.any(scaled[stored[:, 2]]):
            return None
        return "the bind pose neither rotates nor scales what strip stores"
    if mode != "none":
        return None
    shells = strip.costs.dominant_shells
    if not thorough:  # auto: only the identity's reach (what _deviations finds, alone)
        bound = 2.0 * shells.precision
        some, strays, scale = identity_within(clip, shells.distance, bound, stored)
        if some < 0:  # a rotation within rounding of its bound: numpy's arccos decides
            reach = _identity_reach(strays, scale, shells.distance)
            some = int(np.any((reach <= bound[:, None]) & stored))
        if some:
            return None  # none might store as nothing what strip stores
        return "none stores strip's samples; whether its defaults are closer is --bind best's"
    first = (clip.rotations[0], clip.translations[0], clip.scales[0])
    poses = ((sk.bind_rotations, sk.bind_translations, sk.bind_scales), first)
    budget = np.broadcast_to(shells.precision[:, None], stored.shape)
    low, high = _deviations(
        clip, (*poses, additive.identity("additive0", sk.num_joints)), shells.distance
    )
    if np.any(low[2][stored] <= 2.0 * budget[stored]):
        return None  # none might store as nothing what strip stores
    closer = np.minimum(low[1], low[2]) < high[0]
    if np.any(~stored & closer & (high[0] > NEGLIGIBLE * budget)):
        return None  # none might hold closer a default of strip's that matters
    return "none stores strip's samples, and its defaults no closer"


def _deviations(
    clip: Clip, poses: tuple[tuple[Array, Array, Array], ...], distance: Array
) -> tuple[Array, Array]:
    """Lower and upper bounds (P, J, 3) of how far each sub-track's samples stray at worst
    from each of the P `poses` (J, ...), as a distance on the joint's dominant shell
    (`distance` (J,)) times its ancestors' scale: a rotation's angle times the distance, a
    translation's length, a scale's largest component times the distance. Rotations exactly,
    translations from their per-component bounds (one pass over the samples for all poses)."""
    rot = np.stack([p[0] for p in poses])  # (P, J, 4)
    cos = np.abs(np.einsum("sjc,pjc->psj", clip.rotations, rot)).min(axis=1)
    angle = 2.0 * np.arccos(np.minimum(cos, 1.0)) * distance
    out = [angle, angle]
    for k, samples in ((1, clip.translations), (2, clip.scales)):
        at = np.stack([p[k] for p in poses])  # (P, J, 3)
        lo, hi = samples.min(axis=0), samples.max(axis=0)
        comp = np.maximum(np.abs(hi - at), np.abs(at - lo))  # per component, exact
        if k == 1:
            out += [comp.max(axis=-1), np.linalg.norm(comp, axis=-1)]
        else:
            out += [comp.max(axis=-1) * distance] * 2
    scale = ancestor_scale(clip)[None, :, None]
    low = np.stack(out[0::2], axis=-1) * scale
    high = np.stack(out[1::2], axis=-1) * scale
    return low, high


def _identity_reach(strays: Array, scale: Array, distance: Array) -> Array:
    """(J, 3) `_deviations`' lower bound for the identity pose alone, from the clip's
    identity_strays (J, 3) (|w| at least, |t| and |s - 1| at most) and ancestor_scale
    (J,): auto screens every clip with it (shells.identity_within, where it is clear)."""
    low = np.empty((len(scale), 3))
    low[:, 0] = 2.0 * np.arccos(np.minimum(strays[:, 0], 1.0)) * distance
    low[:, 1] = strays[:, 1]
    low[:, 2] = strays[:, 2] * distance
    return low * scale[:, None]


def _under(clip: Clip, skeleton: Skeleton) -> Clip:
    """`clip`'s samples as they are under `skeleton` (the same joints, another bind pose),
    as a stored clip has them (no additive base, meshes or curves), without validating the
    samples again: they are the clip's own."""
    out = copy.copy(clip)
    out.skeleton, out.additive, out.meshes, out.curves = skeleton, None, (), None
    return out


def compensated(
    clip: Clip, settings: CompressionSettings, mode: str = "strip"
) -> tuple[Encoded, bool]:
    """`mode`'s in-place compensated encoding of `clip` (after its plain one, whose decoded
    parents it compensates) and whether it is strict: what `compensate` tries, alone."""
    modes = BindModes(clip)
    clip = settings.apply(clip)
    inner = settings.skeleton_values()
    plain, _ = modes._mode(clip, mode, inner, None, None, None)  # no size to beat: to the end
    return modes._mode(clip, mode, inner, None, None, plain)


def _base_of(clip: Clip, mode: str) -> AdditiveBase | None:
    """The base a mode's stored values are applied to (None: they are the pose itself)."""
    if mode == "additive":
        sk = clip.skeleton
        return additive.bind_base((sk.bind_rotations, sk.bind_translations, sk.bind_scales))
    if mode.startswith("base-"):
        assert clip.additive is not None
        return clip.additive
    return None


def _compensated(clip: Clip, encoded: Encoded) -> tuple[Array, Array, Array]:
    """The clip's poses with in-place compensation: each joint whose rotation or translation
    `encoded` animates takes the local transform that, under its parent as `encoded` decodes
    it, reproduces the raw object transform (those sub-tracks only; roots, constant and
    default sub-tracks, scales and joints under a zero-scaled parent keep the raw values).
    Poses as the game sees them (an additive's applied pose): the caller takes them back to
    what it stores."""
    sk = clip.skeleton
    parents = sk.parents
    lossy = encoded.decoder.decode_source(clip.name)
    raw_obj = object_space(clip.rotations, clip.translations, clip.scales, parents)
    lossy_obj = object_space(lossy.rotations, lossy.translations, lossy.scales, parents)
    rot, tr = clip.rotations.copy(), clip.translations.copy()
    if encoded.costs is None:
        return rot, tr, clip.scales
    kinds = np.asarray(encoded.costs.kinds)
    for j in np.flatnonzero(parents >= 0):
        animated = kinds[j, :2] == _ANIMATED
        if not np.any(animated):
            continue
        parent = lossy_obj[:, parents[j]]
        if np.any(np.abs(np.linalg.det(parent[..., :3])) < SINGULAR):
            continue  # a zero-scaled parent: no local value can correct its children
        local = np.linalg.solve(_affine(parent), _affine(raw_obj[:, j]))
        r, t, _ = decompose(local[:, :3, :])
        if animated[0]:
            r = np.where(np.sum(r * rot[:, j], axis=-1, keepdims=True) < 0.0, -r, r)
            rot[:, j] = r / np.linalg.norm(r, axis=-1, keepdims=True)
        if animated[1]:
            tr[:, j] = t
    return rot, tr, clip.scales


def _affine(m: Array) -> Array:
    """(S, 3, 4) -> (S, 4, 4)."""
    out = np.zeros((*m.shape[:-2], 4, 4))
    out[..., :3, :] = m
    out[..., 3, 3] = 1.0
    return out


def _tried(encoded: Encoded, strict: bool, seconds: float) -> dict[str, Any]:
    return {
        "compressed_size": HEADER_SIZE + len(encoded.payload),
        "strict": bool(strict),
        "compression_time": seconds,
    }


def _part(progress: Progress | None, i: int, n: int, mode: str) -> Progress | None:
    if progress is None:
        return None
    report = progress

    def told(fraction: float, message: str) -> None:
        report((i + fraction) / n, message if n == 1 else f"{message} (bind {mode})")

    return told


def decode(payload: bytes, skeleton: Skeleton) -> CompressedClip | AppliedDecoder:
    """A payload's decoder: CompressedClip, applied to the bind pose when the payload stores
    an additive on it (bind code `additive`)."""
    from codec.codecs.acl_style.decoder import decode as decode_payload

    inner = decode_payload(payload, skeleton)
    if BIND_CODES[inner.encoded.bind] != "additive":
        return inner
    bind = (skeleton.bind_rotations, skeleton.bind_translations, skeleton.bind_scales)
    return AppliedDecoder(inner, additive.bind_base(bind), skeleton)
