"""The times a clip was keyed at, found across all its tracks.

An animator's clip exported at the frame rate holds keys and the in-betweens its curves put
between them, and the keys of a rig's channels mostly fall on the same frames. One track
alone can leave a key in doubt (a few samples between two keys fit any cubic; a slight
motion fits across a key), but another track moving more at that key pins it. So every
moving sub-track places knots through its exact samples (placement.fewest_knots, each of
SHARES of its joint's local precision until one finds few knots); a track that finds few is
keyed, and the samples where at least VOTES keyed tracks have a knot are the clip's key
candidates (one track's doubtful knot is not). The
fitter then places each track's knots among these first (fewest and best fitting), so each
track keeps the keys it needs. A clip that is not keyed (motion capture) has no keyed track
and no candidates: a track keyed closer than MIN_GAP samples on average is not counted, as
cubic segments of two or three samples fit any motion (motion capture "keyed" every third
sample).

Keys close together (every 2 or 3 samples) leave the votes in doubt: a cubic segment of
two or three samples fits anything, so many knot sets fit as well as the keys. A clip keyed
on a regular grid (every k-th sample and the last, k in SPACINGS) is found first and
exactly: the grid's knots through the exact samples, stepped, linear or cubic with one of
the tangent rules (tangents.RULES), hold every moving track within the tightest share.
"""

from __future__ import annotations

import numpy as np

from codec.codecs.curve.placement import CUBIC, curve_errors, fewest_knots, sample_errors
from codec.codecs.curve.tangents import LINEAR, RULES, STEP, knot_tangents
from codec.codecs.survey.fitting import continuous_rotations
from codec.measure.shells import ancestor_scale, dominant_shells, local_precision
from codec.model.clip import Clip

Array = np.ndarray


VOTES = 2  # keyed tracks that must have a knot at a sample for it to be a key candidate
SHARES = (1e-6, 1e-4, 1e-3)  # of a joint's local precision: keys in float64, float32 data
SPACINGS = tuple(range(12, 1, -1))  # regular key grids tried, coarsest first
MIN_GAP = 4  # a keyed track's knots at least this far apart on average (samples)


def clip_keys(clip: Clip, keyed_share: float) -> Array | None:
    """(S,) bool: the clip's regular key grid when it has one (`regular_keys`), else the
    samples at least VOTES keyed tracks have a knot at (first and last included), or None
    when there are none. A track is keyed when the knots its exact
    samples need within a share (SHARES, the tightest that finds few) of its joint's local
    precision are at most `keyed_share` of the samples."""
    S, J = clip.num_samples, clip.num_joints
    if S < 3:
        return None
    dist, dprec = dominant_shells(clip)
    lp = local_precision(dprec, ancestor_scale(clip))
    raws = (continuous_rotations(clip), clip.translations, clip.scales)
    smag = np.abs(clip.scales)
    anywhere = np.ones(S, dtype=bool)
    moving = []  # (sub, raw (S, C), local precision, dominant shell, |scale| (S, 3))
    for j in range(J):
        sm = np.ascontiguousarray(smag[:, j])
        for k, a in enumerate(raws):
            raw = np.ascontiguousarray(a[:, j])
            held = np.ascontiguousarray(np.broadcast_to(raw[0], raw.shape))
            if sample_errors(k, raw, held, dist[j], sm).max() > lp[j]:
                moving.append((k, raw, float(lp[j]), float(dist[j]), sm))  # else: a constant
    grid = regular_keys(S, moving)
    if grid is not None:
        return grid
    votes = np.zeros(S, dtype=np.int64)
    for k, raw, prec, d, sm in moving:
        for share in SHARES:
            knots = fewest_knots(CUBIC, k, raw, raw, share * prec, d, sm, anywhere)
            if 0 < len(knots) <= keyed_share * S and S - 1 >= MIN_GAP * (len(knots) - 1):
                votes[knots] += 1
                break
    found = votes >= VOTES
    if not np.any(found[1:-1]):
        return None
    found[[0, -1]] = True
    return found


def grid_keys(num_samples: int, spacing: int) -> Array:
    """(K,) every `spacing`-th sample and the last."""
    keys = np.arange(0, num_samples, spacing)
    return keys if keys[-1] == num_samples - 1 else np.append(keys, num_samples - 1)


def regular_keys(S: int, moving: list) -> Array | None:
    """(S,) bool the coarsest regular grid (SPACINGS) every moving track is keyed on (its
    curve through the grid's exact samples, in some mode and tangent rule, within SHARES[-1]
    of its joint's local precision), or None."""
    if not moving:
        return None
    for spacing in SPACINGS:
        keys = grid_keys(S, spacing)
        if len(keys) < 3:
            continue
        if all(_keyed_on(keys, *track) for track in moving):
            out = np.zeros(S, dtype=bool)
            out[keys] = True
            return out
    return None


def _keyed_on(keys: Array, sub: int, raw: Array, prec: float, dist: float, smag: Array) -> bool:
    """Whether a stepped, linear or cubic (a tangent rule's) curve through the exact samples
    at `keys` (K,) holds the track `raw (S, C)` within SHARES[-1] of `prec`."""
    t = keys.astype(np.float64)
    v = raw[keys]
    first = np.arange(len(keys)) == 0
    last = np.arange(len(keys)) == len(keys) - 1
    within = SHARES[-1] * prec
    for mode, rule in [(STEP, 0), (LINEAR, 0)] + [(CUBIC, r) for r in range(len(RULES))]:
        out, inn = knot_tangents(mode, rule, t, v, first, last, None)
        if curve_errors(mode, sub, raw, keys, v, out, inn, dist, smag).max() <= within:
            return True
    return False
