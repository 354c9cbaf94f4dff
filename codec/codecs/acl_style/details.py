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
from codec.jit import kernel
from codec.measure.shells import DominantShells

Array = np.ndarray
_KIND_NAMES = tuple((kind.name.lower(), int(kind)) for kind in TrackKind)
_BITS_OR_NONE = np.append(BIT_RATE_BITS, -1)  # by rate index; -1 (not animated) gives -1
_ANIMATED = int(TrackKind.ANIMATED)
_NUM_WIDTHS = int(BIT_RATE_BITS.max()) + 1  # 0..32 bits per component


def track_costs(
    enc: EncodedClip, shells: DominantShells | None = None, sizes: Array | None = None
) -> TrackCosts:
    """The per-track costs of an encoding: kinds (J, 3), segments (G, 2), bit rates and bits
    per component (G, J, 3) (-1 where not animated), bytes per segment (G,): `sizes` when
    the caller has them from the written payload (layout.ParsedPayload.segment_sizes), else
    counted again."""
    kinds = np.ascontiguousarray(enc.kinds, dtype=np.uint8)
    rates, bits, table = _per_track(
        kinds,
        np.ascontiguousarray(enc.bit_rates, dtype=np.uint8),
        np.ascontiguousarray(enc.segment_sizes, dtype=np.int64),
        _BITS_OR_NONE,
    )
    sizes = np.asarray(enc.segment_bytes() if sizes is None else sizes, dtype=np.int64)
    retained = None if enc.retained is None else np.asarray(enc.retained, dtype=bool)
    return TrackCosts(np.asarray(enc.kinds), table, rates, bits, sizes, shells, retained)


@kernel
def _per_track(kinds, bit_rates, sizes, bits_of):
    """track_costs' tables in one pass: rates (G, J, 3) int16 and their bits (-1 where not
    animated: bits_of[-1]), and the segments' first sample and count (G, 2). bit_rates
    (G, Ka) are the animated sub-tracks' in stored (joint-major) order."""
    g_count, nj = sizes.shape[0], kinds.shape[0]
    rates = np.full((g_count, nj, 3), -1, np.int16)
    bits = np.full((g_count, nj, 3), bits_of[-1], np.int64)
    a = 0
    for j in range(nj):
        for k in range(3):
            if kinds[j, k] == _ANIMATED:
                for g in range(g_count):
                    rates[g, j, k] = bit_rates[g, a]
                    bits[g, j, k] = bits_of[bit_rates[g, a]]
                a += 1
    table = np.empty((g_count, 2), np.int64)
    first = 0
    for g in range(g_count):
        table[g, 0], table[g, 1] = first, sizes[g]
        first += sizes[g]
    return rates, bits, table


@kernel
def _counts(bits, kinds, num_kinds):
    """How many animated sub-track segments store each width (_NUM_WIDTHS,) (bits (G, J, 3),
    -1 not animated), and how many sub-tracks of each row (rotation, translation, scale) are
    of each kind (3, num_kinds)."""
    widths = np.zeros(_NUM_WIDTHS, np.int64)
    for b in bits.ravel():
        if b >= 0:
            widths[b] += 1
    per_kind = np.zeros((3, num_kinds), np.int64)
    for j in range(kinds.shape[0]):
        for k in range(3):
            per_kind[k, kinds[j, k]] += 1
    return widths, per_kind


def stats_details(
    enc: EncodedClip,
    costs: TrackCosts,
    level: str,
    stripping: Stripping,
    strip: StripSettings,
) -> dict[str, Any]:
    """The stats keys only acl-style has (ACL's names)."""
    segs = costs.segments
    widths, per_kind = _counts(
        np.ascontiguousarray(costs.bits_per_component, dtype=np.int64),
        np.ascontiguousarray(costs.kinds, dtype=np.uint8),
        len(TrackKind),
    )
    histogram, counts = widths.tolist(), per_kind.tolist()
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
