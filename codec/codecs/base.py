"""What every codec is to the rest of Shellscope: a name, `encode`, and a decoder to sample.

A codec turns a clip into its own bytes (the payload; codec.codecs.container wraps them with
the codec's id, the clip's shape and the optional skeleton) and gives a `Decoder` over
exactly those bytes. Measurement (codec.measure.measure) takes any decoder and the raw clip,
so errors, stats and the skin error mean the same for every codec. A codec never imports
another codec; what it knows of the others is this module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from codec.model.sampling import INTERPOLATIONS, SampleKeys, sample_keys

if TYPE_CHECKING:
    from codec.measure.shells import DominantShells
    from codec.model.clip import Clip, Skeleton
    from codec.model.sampling import Pose
    from codec.settings import CompressionSettings

Array = np.ndarray
Progress = Callable[[float, str], None]

# The words of per-track costs, the same for every codec that reports them and for every view
# that draws them: a joint's three sub-tracks, in this order (the last axis of `TrackCosts`).
SUB_TRACKS = ("rotation", "translation", "scale")
STORED_COMPONENTS = 3  # per sub-track and sample (a rotation drops one of its four)
CONSTANT_BITS = 16  # bits per component of a sub-track constant within a segment (0 bits)


class TrackKind(IntEnum):
    """How a sub-track is stored: nothing (bind value), one value, or per sample."""

    DEFAULT = 0
    CONSTANT = 1
    ANIMATED = 2


@runtime_checkable
class Decoder(Protocol):
    """Samples the lossy clip a codec's bytes describe, under every rounding mode.

    Rounding acts on the source sample grid (codec.model.sampling.sample_keys): floor, ceil,
    nearest and per_track first snap a time to a source sample, then the codec evaluates its
    own representation there; none evaluates at the time itself.
    """

    codec_name: str
    skeleton: Skeleton  # bind pose supplies default sub-tracks
    sample_rate: float  # the source clip's sample rate (the rounding grid)
    num_samples: int  # samples on the grid `sample` rounds to (S, or S - 1 when wrapping)
    wrap: bool  # looping: the last sample blends back into the first
    duration: float  # codec.model.sampling.duration_of(num_samples, sample_rate, wrap)

    def sample(
        self,
        t: float,
        rounding: str = "nearest",
        looping: str | None = None,
        per_track: Array | list[str] | None = None,
        interpolation: str = "nlerp",
    ) -> Pose: ...

    def sample_times(self, times: Array, rounding: str = "none") -> tuple[Array, Array, Array]:
        """Rotations (N, J, 4), translations and scales (N, J, 3) float64 at times (N,)
        seconds: what measurement reads for the error between samples."""
        ...

    def decode_source(self, name: str = "") -> Clip:
        """The lossy clip at every source sample time: S samples aligned with the source."""
        ...

    def decode_all(self) -> Clip:
        """Every stored sample."""
        ...


LOOPING = ("clamp", "wrap")  # what `Decoder.sample` may set looping to (None: the clip's own)


def check_sample_options(looping: str | None, interpolation: str) -> None:
    """ValueError unless `Decoder.sample` takes this looping and interpolation."""
    if looping is not None and looping not in LOOPING:
        raise ValueError(f"unknown looping {looping!r}; use one of {LOOPING}")
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"unknown interpolation {interpolation!r}")


def sample_keys_of(
    decoder: Decoder,
    t: float,
    rounding: str,
    looping: str | None,
    per_track: Array | list[str] | None,
    interpolation: str = "nlerp",
) -> SampleKeys:
    """What every `Decoder.sample` starts with: the options checked, then the two source
    samples around time `t` and the alphas between them (codec.model.sampling.sample_keys)
    on the decoder's grid. looping None keeps the decoder's own; an override changes how
    long the clip runs (wrapping adds the last interval)."""
    check_sample_options(looping, interpolation)
    wrap = decoder.wrap if looping is None else looping == "wrap"
    duration = decoder.duration if wrap == decoder.wrap else None
    return sample_keys(
        t, decoder.sample_rate, decoder.num_samples, rounding, wrap, per_track, duration
    )


@dataclass(frozen=True, eq=False)
class TrackCosts:
    """Per-track costs of a codec that stores each sub-track at a chosen width per segment
    (acl-style's bit rates); views show them, and show "not a bit-rate codec" without them.

    kinds (J, 3) `TrackKind` per joint and sub-track (SUB_TRACKS); segments (G, 2) first
    stored sample and count; bit_rates (G, J, 3) the codec's rate index and
    bits_per_component (G, J, 3) its bits (0: constant within the segment, one CONSTANT_BITS
    value per component), both -1 where not animated; segment_bytes (G,) bytes of each
    segment as written; dominant_shells those the codec budgeted with (clip and segment),
    when it has them; retained (S stored,) bool which keyframes the payload stores (None:
    every one; the others are rebuilt by interpolation, acl-style's keyframe stripping).
    """

    kinds: Array
    segments: Array
    bit_rates: Array
    bits_per_component: Array
    segment_bytes: Array
    dominant_shells: DominantShells | None = None
    retained: Array | None = None

    @property
    def stored_per_segment(self) -> Array:
        """(G,) keyframes each segment stores (its sample count less what was stripped)."""
        counts = np.asarray(self.segments, dtype=np.int64).reshape(-1, 2)[:, 1]
        if self.retained is None:
            return counts
        starts = np.asarray(self.segments, dtype=np.int64).reshape(-1, 2)[:, 0]
        return np.add.reduceat(np.asarray(self.retained, dtype=np.int64), starts)

    def sample_bits(self) -> Array:
        """(G, J, 3) bits of packed samples per segment, joint and sub-track (0 where not
        animated): every stored sample's components at their width, or one CONSTANT_BITS
        value per component where the width is 0 (constant within the segment). Segment
        ranges and rate bytes are not counted."""
        bits = np.asarray(self.bits_per_component, dtype=np.int64)
        stored = self.stored_per_segment[:, None, None]
        constant = np.where(bits == 0, CONSTANT_BITS * STORED_COMPONENTS, 0)
        return np.where(bits > 0, bits * STORED_COMPONENTS * stored, constant)


@dataclass(frozen=True, eq=False)
class Encoded:
    """What `Codec.encode` gives: the codec's own bytes, a decoder over exactly those bytes
    (`decode(payload)` gives the same poses), JSON-safe `details` merged into the stats
    (e.g. {"num_keys": 74}), and optional typed per-track `costs` for the views."""

    payload: bytes
    decoder: Decoder
    details: dict[str, Any] = field(default_factory=dict)
    costs: TrackCosts | None = None


@runtime_checkable
class Codec(Protocol):
    """A codec: error-driven by the object-space shell metric, strict (every joint within
    its precision at every sample, checked on what `decode(payload)` returns)."""

    name: str  # "acl-style", "subsample", ...
    description: str  # one line
    codec_id: int  # the byte the container stores

    def encode(
        self,
        clip: Clip,
        settings: CompressionSettings,
        progress: Progress | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> Encoded: ...

    def decode(self, payload: bytes, skeleton: Skeleton) -> Decoder:
        """CompressedFormatError on anything wrong: every length checked before reading."""
        ...
