"""The fitting loop every survey codec runs (`fit_clip`): local budgets on the dominant
shells, tightened along the failing chains until the object-space error of the whole clip is
within every joint's precision; and how every encode ends (`checked_encoding`: the bytes
decoded and checked in float64)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from codec.codecs.base import Encoded
from codec.codecs.survey.decoder import TrackDecoder, clip_of
from codec.codecs.survey.frame import ANIMATED, CONSTANT, DEFAULT, ROT
from codec.codecs.survey.local_error import track_error
from codec.errors import Cancelled
from codec.measure.error_metric import clip_errors
from codec.measure.shells import ancestor_scale, dominant_shells, local_precision
from codec.model import quat
from codec.model.clip import Clip, Skeleton

Array = np.ndarray

START_BUDGET = 1.0  # first local budgets, times the joint's local precision over its share
MAX_ROUNDS = 10  # budget tightenings before the failing chains are stored at full precision
STRICT_MARGIN = 1.0 - 1e-9  # the loop aims just under the precision (float64 reorderings)


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
    return clip_of(clip.skeleton, clip.sample_rate, parts, clip.looping, clip.name)


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
