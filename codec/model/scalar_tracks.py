"""Scalar track lists (ACL `float1f` .. `float4f`, `vector4f`): curves that are not transforms.

ACL compresses these too (blend weights, IK targets, ...). Shellscope inspects transform clips,
so it only reads them (to say clearly what a file is) and keeps them apart from `Clip`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codec.errors import ClipValidationError

Array = np.ndarray

TRACK_WIDTHS = {"float1f": 1, "float2f": 2, "float3f": 3, "float4f": 4, "vector4f": 4}
INVALID_OUTPUT_INDEX = 0xFFFFFFFF  # ACL: a track with this output index is stripped


@dataclass(eq=False)
class ScalarTrackList:
    """Tracks of one scalar type sampled together.

    values (S, T, width) float64, names (T,), precision (T,) and output_index (T,) int64 as
    ACL stores them per track.
    """

    track_type: str
    sample_rate: float
    values: Array
    names: tuple[str, ...]
    precision: Array
    output_index: Array
    name: str = ""

    def __post_init__(self) -> None:
        if self.track_type not in TRACK_WIDTHS:
            raise ClipValidationError(f"unknown scalar track type {self.track_type!r}")
        width = TRACK_WIDTHS[self.track_type]
        values = np.array(self.values, dtype=np.float64)
        if values.ndim != 3 or values.shape[2] != width or values.shape[0] < 1:
            raise ClipValidationError(
                f"values have shape {values.shape}, expected (S >= 1, T, {width})"
            )
        t = values.shape[1]
        self.names = tuple(str(n) for n in self.names)
        precision = np.array(np.broadcast_to(self.precision, (t,)), dtype=np.float64)
        output_index = np.array(np.broadcast_to(self.output_index, (t,)), dtype=np.int64)
        if len(self.names) != t:
            raise ClipValidationError(f"{len(self.names)} names for {t} tracks")
        if not np.all(np.isfinite(values)):
            raise ClipValidationError("scalar track values must be finite")
        if not np.all(np.isfinite(precision) & (precision > 0)):
            raise ClipValidationError("scalar track precision must be > 0")
        rate = float(self.sample_rate)
        if not (np.isfinite(rate) and rate > 0):
            raise ClipValidationError(f"sample rate {self.sample_rate} must be a positive number")
        self.values, self.precision, self.output_index = values, precision, output_index
        self.sample_rate = rate

    @property
    def num_samples(self) -> int:
        return int(self.values.shape[0])

    @property
    def num_tracks(self) -> int:
        return int(self.values.shape[1])

    @property
    def width(self) -> int:
        return int(self.values.shape[2])

    @property
    def duration(self) -> float:
        return (self.num_samples - 1) / self.sample_rate
