"""What one compression produces: the bytes, the decoded clip and everything the views show."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from codec.bit_rates import BIT_RATE_BITS
from codec.clip import Clip
from codec.settings import CompressionSettings

if TYPE_CHECKING:
    from codec.decoder import CompressedClip
    from codec.keyframe_stripping import Stripping
    from codec.vertex_error import VertexError

Array = np.ndarray


@dataclass(frozen=True, eq=False)
class DominantShells:
    """Dominant shell of every joint: distance (J,) and precision (J,) for the whole clip,
    and per segment `segment_distance (G, J)`, `segment_precision (G, J)`."""

    distance: Array
    precision: Array
    segment_distance: Array
    segment_precision: Array


@dataclass(eq=False)
class CompressionResult:
    """Everything one `codec.compress` call produced.

    clip      the raw input, with the settings' precision / shell distance applied
    data      the whole .ssc file (header, metadata block, animation data)
    compressed the decoder over `data` (sample at any time, decode everything)
    lossy     the decoded clip, aligned sample for sample with `clip` (S samples, also when
              loop optimisation dropped the stored last sample)
    kinds     (J, 3) TrackKind per joint and sub-track (rotation, translation, scale)
    bit_rates (G, J, 3) bit rate index per segment, -1 where the sub-track is not animated
    segments  (G, 2) first stored sample and sample count of every segment
    error     (S, J) object-space error on each joint's own shell at every sample (nearest)
    error_between_times (N,) and error_between (N, J): the error supersampled between
              samples with rounding none (empty when settings.supersample == 0)
    stats     ACL-named statistics (see codec.stats)
    vertex_error the true skin error when the clip has meshes (codec.vertex_error), else None
    stripping which keyframes are stored and how many each segment stripped
              (codec.keyframe_stripping); None before it is attached
    """

    clip: Clip
    settings: CompressionSettings
    data: bytes
    compressed: CompressedClip
    lossy: Clip
    kinds: Array
    bit_rates: Array
    segments: Array
    dominant_shells: DominantShells
    error: Array
    error_between_times: Array
    error_between: Array
    stats: dict[str, Any] = field(default_factory=dict)
    vertex_error: VertexError | None = None
    stripping: Stripping | None = None

    @property
    def bits_per_component(self) -> Array:
        """(G, J, 3) bits per component, -1 where the sub-track is not animated."""
        return np.where(self.bit_rates >= 0, BIT_RATE_BITS[np.maximum(self.bit_rates, 0)], -1)
