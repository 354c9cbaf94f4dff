"""acl-style as a `codec.codecs.base.Codec`: ACL 2.1's pipeline (constant and default
sub-tracks, rotation layouts, per-segment bit rates) and its payload."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from codec.codecs.acl_style.bind_modes import AppliedDecoder, BindModes, decode
from codec.codecs.acl_style.decoder import CompressedClip
from codec.codecs.base import Encoded, Progress
from codec.model.clip import Clip, Skeleton
from codec.settings import CompressionSettings


class AclStyle:
    """The codec of ACL 2.1's design: quantised sub-tracks at a bit rate per segment."""

    name = "acl-style"
    description = "ACL 2.1's design: constant and default sub-tracks, a bit rate per segment"
    codec_id = 0

    def encode(
        self,
        clip: Clip,
        settings: CompressionSettings,
        progress: Progress | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> Encoded:
        return BindModes(clip).run(settings, progress, cancelled)

    def decode(self, payload: bytes, skeleton: Skeleton) -> CompressedClip | AppliedDecoder:
        """The payload's poses; one stored on the bind pose (additive) comes applied to it.
        One stored on a clip's own base decodes to the additive alone: the file does not hold
        the base (the game supplies it)."""
        return decode(payload, skeleton)

    def describe(self, payload: bytes) -> dict[str, Any]:
        """What `info` shows of a payload: shape, segments (samples, bytes), sub-track
        kinds, rotation layouts and the bit-rate histogram."""
        from codec.codecs.acl_style import layout
        from codec.codecs.acl_style.bit_rates import BIT_RATE_BITS
        from codec.codecs.acl_style.rotation_layout import PER_SEGMENT
        from codec.codecs.base import SUB_TRACKS, TrackKind

        parsed = layout.read(payload)
        enc = parsed.encoded
        ends = np.append(parsed.segment_offsets[1:], len(payload) - layout.HEADER_SIZE)
        bits = BIT_RATE_BITS[enc.bit_rates.astype(np.int64).reshape(-1)]
        values, counts = np.unique(bits, return_counts=True)
        codes = np.concatenate((enc.const_dropped, enc.clip_layout))
        names = {0: "drop_x", 1: "drop_y", 2: "drop_z", 3: "drop_w", PER_SEGMENT: "per_segment"}
        return {
            "looping": bool(enc.wrap),
            "num_joints": enc.num_joints,
            "num_stored_samples": enc.num_samples,
            "sample_rate": enc.sample_rate,
            "num_segments": enc.num_segments,
            "num_stripped_keyframes": int(enc.num_samples - enc.retained_mask().sum()),
            "segments": [
                {"num_samples": int(n), "segment_size": int(e - o)}
                for n, o, e in zip(enc.segment_sizes, parsed.segment_offsets, ends, strict=True)
            ],
            "sub_tracks": {
                name: {
                    kind.name.lower(): int(np.sum(enc.kinds[:, k] == kind)) for kind in TrackKind
                }
                for k, name in enumerate(SUB_TRACKS)
            },
            "rotation_layouts": {name: int(np.sum(codes == c)) for c, name in names.items()},
            "bit_rate_histogram": {
                str(int(b)): int(c) for b, c in zip(values, counts, strict=True)
            },
        }

    def session(self, clip: Clip) -> BindModes:
        """An encoder of one clip that keeps what changing settings leave alone (the
        window's re-tuning loop): `.run(settings, progress, cancelled, skeleton)`."""
        return BindModes(clip)


CODEC = AclStyle()
