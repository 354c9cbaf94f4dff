"""What ACL 2.1's own headers say about its encoding: the per-track costs the views draw
(sub-track kinds, segments, bits per component, bytes per segment, stored keyframes) and
the stats keys, ACL's names, all read from the bytes, none estimated.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from codec.codecs.acl21.layout import (
    ANIMATED,
    CONSTANT,
    DEFAULT,
    HEADER_SIZE,
    NO_METADATA_PADDING,
    SUB_TRACKS,
    TRANSFORM_HEADER_SIZE,
    VERSION_NAMES,
    AclTracks,
)
from codec.codecs.base import TrackCosts
from codec.measure.shells import DominantShells

Array = np.ndarray
RAW_RATE = 24  # ACL 2.1's bit rate index of a raw float32 component (32 bits)


def bit_rates(bits: Array) -> Array:
    """ACL 2.1's bit rate index of each bits-per-component value: 0..23 are themselves,
    32 (raw float32) is 24."""
    return np.where(bits == 32, RAW_RATE, bits)


def track_costs(t: AclTracks, shells: DominantShells | None = None) -> TrackCosts:
    """The views' per-track costs of an ACL encoding: kinds (J, 3) 0 default, 1 constant, 2
    animated; segments (G, 2); bit rate indices and bits per component (G, J, 3), -1 where
    not animated; bytes of each segment's data (G,); the keyframes stored (S,)."""
    G, J = t.num_segments, t.num_tracks
    rates = np.full((G, J, 3), -1, dtype=np.int16)
    bits = np.full((G, J, 3), -1, dtype=np.int64)  # as acl-style's: the views' int64
    anim = t.animated
    bits[:, anim[:, 0], anim[:, 1]] = t.bits
    rates[:, anim[:, 0], anim[:, 1]] = bit_rates(t.bits)
    retained = None if not t.has_stripped else t.retained.copy()
    return TrackCosts(
        t.kinds.astype(np.int8),
        t.segments.astype(np.int64),
        rates,
        bits,
        t.segment_bytes.astype(np.int64),
        shells,
        retained,
    )


def compressed_size(t: AclTracks) -> int:
    """The bytes of the tracks alone, without the optional metadata (names, parents,
    descriptions): ACL's `compressed_size` when it is asked for no metadata, as in its
    regression numbers (cmu_09_02: 3,523 of the 6,316 bytes `-out` writes)."""
    if t.size == t.sections["tracks_end"] + NO_METADATA_PADDING:
        return t.size
    return t.sections["tracks_end"] + NO_METADATA_PADDING


def stats_details(t: AclTracks) -> dict[str, Any]:
    """The stats keys of an ACL encoding, by ACL's names, from its headers."""
    counts = {
        name: {
            "default": int(np.sum(t.kinds[:, k] == DEFAULT)),
            "constant": int(np.sum(t.kinds[:, k] == CONSTANT)),
            "animated": int(np.sum(t.kinds[:, k] == ANIMATED)),
        }
        for k, name in enumerate(SUB_TRACKS)
    }
    stored = np.add.reduceat(t.retained.astype(np.int64), t.segments[:, 0])
    values, n = np.unique(t.bits, return_counts=True)
    histogram = {str(int(v)): int(c) for v, c in zip(values, n, strict=True)}
    m = t.metadata
    out: dict[str, Any] = {
        "acl_version": VERSION_NAMES.get(t.version, str(t.version)),
        "num_stored_samples": int(t.num_samples),
        "looping": bool(t.wrap),
        "rotation_format": t.rotation_format,
        "translation_format": t.translation_format,
        "scale_format": t.scale_format,
        "has_scale": bool(t.has_scale),
        "num_segments": int(t.num_segments),
        "segmenting": {"num_segments": int(t.num_segments)},
        "num_stripped_keyframes": int(t.num_samples - t.retained.sum()),
        "segments": [
            {
                "start": int(a),
                "num_samples": int(c),
                "segment_size": int(sz),
                "num_stripped_keyframes": int(c - s),
            }
            for (a, c), sz, s in zip(t.segments, t.segment_bytes, stored, strict=True)
        ],
        "sub_tracks": counts,
        "bit_rate_histogram": histogram,
        "acl_file_size": int(t.size),
        "acl_compressed_size": compressed_size(t),
        "acl_sections": {
            "header": HEADER_SIZE + TRANSFORM_HEADER_SIZE,
            **{k: int(v) for k, v in t.sections.items() if k != "tracks_end"},
            "metadata": int(t.size - t.sections["tracks_end"]),
        },
    }
    for name in SUB_TRACKS:  # and flat, as acl_compressor's -stat_detailed writes them
        for key in ("default", "constant", "animated"):
            out[f"num_{key}_{name}_tracks"] = counts[name][key]
    if m.name is not None:
        out["acl_clip_name"] = m.name
    if m.precision is not None and m.shell_distance is not None:
        out["acl_precision"] = [float(v) for v in m.precision]
        out["acl_shell_distance"] = [float(v) for v in m.shell_distance]
    return out
