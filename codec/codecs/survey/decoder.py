"""The decoder base of the survey codecs (`TrackDecoder`): default and constant sub-tracks
from the frame's fixed values, animated ones from the codec's representation, every rounding
mode given its meaning by the source sample grid (codec.codecs.survey)."""

from __future__ import annotations

import numpy as np

from codec.codecs.base import sample_keys_of
from codec.codecs.survey.frame import WIDTHS
from codec.errors import ClipValidationError, CompressedFormatError
from codec.model.clip import Clip, Skeleton
from codec.model.sampling import (
    BASE_ROUNDING,
    Pose,
    blend,
    duration_of,
    round_alpha,
)

Array = np.ndarray


def clip_of(skeleton: Skeleton, rate: float, parts: list[Array], looping: bool, name: str) -> Clip:
    rot = parts[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        rot = rot / np.linalg.norm(rot, axis=-1, keepdims=True)
    try:
        return Clip(skeleton, rate, rot, parts[1], parts[2], looping=looping, name=name)
    except ClipValidationError as e:
        raise CompressedFormatError(f"the data decodes to an invalid clip: {e}") from None


def scatter_tracks(joint: Array, sub: Array, out: Array, parts: list[Array]) -> None:
    """Write track values (N, T, 4) of tracks (joint (T,), sub-track (T,)) into the pose
    arrays (N, J, C) of each kind."""
    for k in range(3):
        sel = sub == k
        if np.any(sel):
            parts[k][:, joint[sel]] = out[:, sel, : WIDTHS[k]]


class TrackDecoder:
    """Decoder base of the survey codecs: default and constant sub-tracks from `fixed`,
    animated ones from the codec's representation (`_evaluate`); the source sample grid
    gives every rounding mode its meaning (module docstring)."""

    codec_name = ""

    def __init__(
        self,
        skeleton: Skeleton,
        sample_rate: float,
        num_samples: int,
        looping: bool,
        fixed: list[Array],
    ) -> None:
        self.skeleton = skeleton
        self.sample_rate = float(sample_rate)
        self.num_samples = int(num_samples)
        self.looping = looping
        self.wrap = False  # the survey codecs keep every source sample's time
        self.duration = duration_of(self.num_samples, self.sample_rate, self.wrap)
        self._fixed = fixed

    # codecs implement: the animated sub-tracks at positions (N,) -> fill parts in place
    def _fill(self, pos: Array, parts: list[Array], interpolation: str) -> None:
        raise NotImplementedError

    def evaluate(self, pos: Array, interpolation: str = "nlerp") -> tuple[Array, Array, Array]:
        """Rotations (N, J, 4) unit, translations and scales (N, J, 3) at positions (N,)."""
        pos = np.clip(np.asarray(pos, np.float64).reshape(-1), 0.0, self.num_samples - 1.0)
        parts = [np.repeat(f[None], len(pos), axis=0) for f in self._fixed]
        self._fill(pos, parts, interpolation)
        rot = parts[0]
        with np.errstate(invalid="ignore", divide="ignore"):
            rot = rot / np.linalg.norm(rot, axis=-1, keepdims=True)
        return rot, parts[1], parts[2]

    def snapped(self, times: Array, rounding: str) -> Array:
        """Positions (N,) of times (N,) under one base rounding mode on the source grid."""
        if rounding not in BASE_ROUNDING:
            raise ValueError(f"unknown rounding mode {rounding!r}; expected one of {BASE_ROUNDING}")
        last = self.num_samples - 1.0
        pos = np.clip(np.asarray(times, np.float64) * self.sample_rate, 0.0, last)
        if rounding == "none":
            return pos
        k = np.floor(pos)
        return np.minimum(k + round_alpha(pos - k, rounding), last)

    def sample_times(self, times: Array, rounding: str = "none") -> tuple[Array, Array, Array]:
        return self.evaluate(self.snapped(times, rounding))

    def sample(
        self,
        t: float,
        rounding: str = "nearest",
        looping: str | None = None,
        per_track: Array | list[str] | None = None,
        interpolation: str = "nlerp",
    ) -> Pose:
        """Pose at time `t` (seconds). looping 'wrap' blends the last sample into the
        first over one more sample interval; per_track gives each joint a base mode.
        interpolation 'slerp' blends rotations on the sphere where a codec blends two stored
        values (subsample, keyreduce, wavelet); curve follows its spline either way."""
        keys = sample_keys_of(self, t, rounding, looping, per_track, interpolation)
        J = self.skeleton.num_joints
        alphas = np.broadcast_to(np.asarray(keys.alpha, np.float64), (J,))
        if keys.second == keys.first + 1 or keys.second == keys.first:
            uniq = np.unique(alphas)
            step = 1.0 if keys.second == keys.first + 1 else 0.0
            rot, tr, sc = self.evaluate(keys.first + uniq * step, interpolation)
            pick = np.searchsorted(uniq, alphas)
            cols = np.arange(J)
            return Pose(rot[pick, cols], tr[pick, cols], sc[pick, cols])
        rot, tr, sc = self.evaluate(np.array([keys.first, keys.second], np.float64))
        a = Pose(rot[0], tr[0], sc[0])
        b = Pose(rot[1], tr[1], sc[1])
        return blend(a, b, alphas, interpolation)

    def decode_source(self, name: str = "") -> Clip:
        rot, tr, sc = self.evaluate(np.arange(self.num_samples, dtype=np.float64))
        return clip_of(self.skeleton, self.sample_rate, [rot, tr, sc], self.looping, name)

    def decode_all(self) -> Clip:
        """Every source sample: these codecs store no grid of their own that a Clip of
        the source's rate could hold (subsample overrides this with its stored grid)."""
        return self.decode_source()
