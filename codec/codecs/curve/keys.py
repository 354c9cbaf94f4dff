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
and no candidates.
"""

from __future__ import annotations

import numpy as np

from codec.codecs.curve.placement import CUBIC, fewest_knots, sample_errors
from codec.codecs.survey import continuous_rotations
from codec.measure.shells import ancestor_scale, dominant_shells, local_precision
from codec.model.clip import Clip

Array = np.ndarray


VOTES = 2  # keyed tracks that must have a knot at a sample for it to be a key candidate
SHARES = (1e-6, 1e-4, 1e-3)  # of a joint's local precision: keys in float64, float32 data


def clip_keys(clip: Clip, keyed_share: float) -> Array | None:
    """(S,) bool: the samples at least VOTES keyed tracks have a knot at (first and last
    included), or None when there are none. A track is keyed when the knots its exact
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
    votes = np.zeros(S, dtype=np.int64)
    for j in range(J):
        sm = np.ascontiguousarray(smag[:, j])
        for k, a in enumerate(raws):
            raw = np.ascontiguousarray(a[:, j])
            held = np.ascontiguousarray(np.broadcast_to(raw[0], raw.shape))
            if sample_errors(k, raw, held, dist[j], sm).max() <= lp[j]:
                continue  # a constant holds it: it votes for nothing
            for share in SHARES:
                knots = fewest_knots(CUBIC, k, raw, raw, share * lp[j], dist[j], sm, anywhere)
                if 0 < len(knots) <= keyed_share * S:
                    votes[knots] += 1
                    break
    found = votes >= VOTES
    if not np.any(found[1:-1]):
        return None
    found[[0, -1]] = True
    return found
