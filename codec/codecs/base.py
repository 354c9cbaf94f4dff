"""The codec interface: what every codec gives the measurement, the container and the views.

Written exactly as the contract between the seam (issue 20) and the survey codecs (issue 21)
states it, so both branches can build against it before the other lands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from codec.clip import Clip, Skeleton
from codec.sampling import Pose
from codec.settings import CompressionSettings

Array = np.ndarray


class Decoder(Protocol):
    """Samples the lossy clip a codec's bytes describe, under every rounding mode."""

    codec_name: str
    skeleton: Skeleton  # bind pose supplies default sub-tracks
    sample_rate: float  # the SOURCE clip's sample rate (the rounding grid)
    num_samples: int  # the source clip's sample count (S)
    wrap: bool  # looping: the last sample blends back into the first
    duration: float  # codec.sampling.duration_of(num_samples, sample_rate, wrap)

    def sample(
        self,
        t: float,
        rounding: str = "nearest",
        looping: str | None = None,
        per_track: Array | list[str] | None = None,
        interpolation: str = "nlerp",
    ) -> Pose: ...

    def sample_times(self, times: Array, rounding: str = "none") -> tuple[Array, Array, Array]:
        """Batched: rotations (N, J, 4), translations (N, J, 3), scales (N, J, 3) float64
        at times (N,) seconds. Used by measurement for the error between samples."""
        ...

    def decode_source(self, name: str = "") -> Clip:
        """The lossy clip at every source sample time: S samples aligned with the source."""
        ...

    def decode_all(self) -> Clip: ...  # every stored sample


@dataclass(frozen=True)
class Encoded:
    payload: bytes  # the codec's own bytes; the container wraps them
    decoder: Decoder  # over exactly those bytes (decode(payload) must give the same poses)
    details: dict[str, Any]  # JSON-safe extras for stats and views


class Codec(Protocol):
    name: str  # "acl-style", "subsample", "keyreduce", "curve", "wavelet"
    description: str  # one line
    codec_id: int  # the byte the container stores

    def encode(
        self,
        clip: Clip,
        settings: CompressionSettings,
        progress: Callable[[float, str], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> Encoded: ...

    def decode(self, payload: bytes, skeleton: Skeleton) -> Decoder: ...
