"""What acl-style tells about its own encoding: stats keys (ACL's names) and per-track costs.

Measurement (codec.measure) knows nothing of bit rates or segments: these travel as the
codec's details, merged into the stats, and as the typed `TrackCosts` the views draw.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from codec.codecs.acl_style.bit_rates import BIT_RATE_BITS
from codec.codecs.acl_style.keyframe_stripping import Stripping, StripSettings
from codec.codecs.acl_style.layout import EncodedClip
from codec.codecs.acl_style.segments import IDEAL_SEGMENT_SIZE, MAX_SEGMENT_SIZE
from codec.codecs.base import SUB_TRACKS, TrackCosts, TrackKind
from codec.measure.shells import DominantShells

Array = np.ndarray
_KIND_NAMES = tuple((kind.name.lower(), int(kind)) for kind in TrackKind)
_BITS_OR_NONE = np.append(BIT_RATE_BITS, -1)  # by rate index; -1 (not animated) gives -1


def track_costs(
    enc: EncodedClip, shells: DominantShells | None = None, sizes: Array | None = None
) -> TrackCosts:
    """The per-track costs of an encoding: kinds (J, 3), segments (G, 2), bit rates and bits
    per component (G, J, 3) (-1 where not animated), bytes per segment (G,): `sizes` when
    the caller has them from the written payload (layout.ParsedPayload.segment_sizes), else
    counted again."""
    anim = enc.animated
    rates = np.full((enc.num_segments, enc.num_joints, 3), -1, dtype=np.int16)
    rates[:, anim[:, 0], anim[:, 1]] = enc.bit_rates
    bits = _BITS_OR_NONE[rates]
    table = np.empty((enc.num_segments, 2), dtype=np.int64)  # first sample, sample count
    table[:, 0], table[:, 1] = enc.segment_starts, enc.segment_sizes
    sizes = np.asarray(enc.segment_bytes() if sizes is None else sizes, dtype=np.int64)
    retained = None if enc.retained is None else np.asarray(enc.retained, dtype=bool)
    return TrackCosts(np.asarray(enc.kinds), table, rates, bits, sizes, shells, retained)


def stats_details(
    enc: EncodedClip,
    costs: TrackCosts,
    level: str,
    stripping: Stripping,
    strip: StripSettings,
) -> dict[str, Any]:
    """The stats keys only acl-style has (ACL's names)."""
    segs = costs.segments
    rates = costs.bit_rates[costs.bit_rates >= 0]
    histogram = np.bincount(BIT_RATE_BITS[rates.astype(np.int64)]).tolist()
    kinds = np.asarray(costs.kinds, dtype=np.int64)
    nk = len(TrackKind)  # every sub-track's kind counted at once: row k, column kind
    counts = np.bincount((kinds + nk * np.arange(3)).reshape(-1), minlength=3 * nk)
    counts = counts.reshape(3, nk).tolist()
    return {
        "num_stored_samples": int(enc.num_samples),
        "looping": bool(enc.wrap),
        "level": level,
        "rotation_format": "quatf_drop_one_variable",
        "translation_format": "vector3f_variable",
        "scale_format": "vector3f_variable",
        "num_segments": len(segs),
        "segmenting": {
            "num_segments": len(segs),
            "ideal_num_samples": IDEAL_SEGMENT_SIZE,
            "max_num_samples": MAX_SEGMENT_SIZE,
        },
        "num_stripped_keyframes": stripping.num_stripped,
        "num_trivial_keyframes": stripping.num_trivial,
        "keyframe_stripping": {
            "strip_trivial": strip.trivial,
            "proportion": strip.proportion,
            "threshold": strip.threshold,
            "destructive": strip.destructive,
        },
        "segments": [
            {
                "start": a,
                "num_samples": n,
                "segment_size": sz,
                "num_stripped_keyframes": ns,
                "num_trivial_keyframes": nt,
            }
            for (a, n), sz, ns, nt in zip(
                np.asarray(segs, dtype=np.int64).tolist(),
                np.asarray(costs.segment_bytes, dtype=np.int64).tolist(),
                np.asarray(stripping.stripped, dtype=np.int64).tolist(),
                np.asarray(stripping.trivial, dtype=np.int64).tolist(),
                strict=True,
            )
        ],
        "sub_tracks": {
            name: {kind: counts[k][v] for kind, v in _KIND_NAMES}
            for k, name in enumerate(SUB_TRACKS)
        },
        "bit_rate_histogram": {str(b): c for b, c in enumerate(histogram) if c},
    }
