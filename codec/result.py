"""What one compression produces, for any codec: the views and the CLI read this."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from codec.model.clip import Clip
from codec.settings import CompressionSettings

if TYPE_CHECKING:
    from codec.codecs.base import Decoder, TrackCosts
    from codec.measure.measure import Measurements
    from codec.measure.vertex_error import VertexError

Array = np.ndarray


@dataclass(eq=False)
class Result:
    """Everything one `codec.compress` call produced.

    clip      the raw input, with the settings' precision / shell distance applied
    settings  what it was compressed with; codec_name the codec that did it
    data      the whole .ssc file (container header, payload, metadata block)
    decoder   the codec's decoder over the payload (sample at any time, decode everything)
    measurements the errors, the decoded clip, the skin error and the stats (codec.measure)
    costs     the codec's per-track costs (acl-style's bit rates), None for other codecs
    details   the codec's own JSON-safe numbers (also merged into the stats)
    """

    clip: Clip
    settings: CompressionSettings
    codec_name: str
    data: bytes
    decoder: Decoder
    measurements: Measurements
    costs: TrackCosts | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def lossy(self) -> Clip:
        """The decoded clip, aligned sample for sample with `clip`."""
        return self.measurements.lossy

    @property
    def error(self) -> Array:
        """(S, J) error on each joint's own shell at every sample (rounding nearest)."""
        return self.measurements.error

    @property
    def error_between_times(self) -> Array:
        """(N,) times of `error_between`."""
        return self.measurements.error_between_times

    @property
    def error_between(self) -> Array:
        """(N, J) float32 error between samples, rounding none (empty when off)."""
        return self.measurements.error_between

    @property
    def stats(self) -> dict[str, Any]:
        """ACL-named statistics (codec.measure.stats), the codec's details merged in."""
        return self.measurements.stats

    @property
    def vertex_error(self) -> VertexError | None:
        """The true skin error when the clip has meshes, else None."""
        return self.measurements.vertex_error
