"""`compress`: a clip through the chosen codec, then measured the same way for every codec.

registry codec -> encode (payload, decoder, details) -> the .ssc container -> measurement
of the decoder against the raw clip -> Result. A `Compression` keeps one clip's encoder
between calls when the codec offers one (acl-style reuses its solved segments), which is
what the window's re-tuning loop runs on.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from codec.codecs import container, registry
from codec.codecs.base import Encoded, Progress
from codec.measure.measure import RawPoses, measure
from codec.model.clip import Clip, Skeleton
from codec.result import Result
from codec.settings import CompressionSettings

__all__ = ["Compression", "compress"]


def compress(
    clip: Clip,
    settings: CompressionSettings | None = None,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
) -> Result:
    """Compress `clip` with `settings.codec` (`auto`: the smallest strict encoding of every
    codec) and measure it. Raises Cancelled when `cancel()` is True."""
    return Compression(clip).run(settings, progress, cancel)


class Compression:
    """Compresses one clip under changing settings (and per-joint skeletons)."""

    def __init__(self, clip: Clip) -> None:
        self.clip = clip
        self._sessions: dict[str, Any] = {}
        self._raw_poses = RawPoses()  # every run measures against the same raw clip

    @property
    def segments_solved(self) -> int:
        """How many segments acl-style's last run optimised (not reused); 0 otherwise."""
        return sum(getattr(s, "segments_solved", 0) for s in self._sessions.values())

    def run(
        self,
        settings: CompressionSettings | None = None,
        progress: Progress | None = None,
        cancel: Callable[[], bool] | None = None,
        skeleton: Skeleton | None = None,
    ) -> Result:
        """Encode and measure; `skeleton` gives other per-joint precisions and shell
        distances (the same joints, parents and bind pose)."""
        settings = settings or CompressionSettings()
        codecs = registry.chosen(settings.codec)
        clip = self.clip if skeleton is None else _with_skeleton(self.clip, skeleton)
        clip = settings.apply(clip)
        start = time.perf_counter()
        best: tuple[tuple[bool, int], Any, Encoded] | None = None
        tried: dict[str, dict[str, Any]] = {}
        for codec in codecs:  # one, or every codec under `auto`
            session = self._session(codec)
            if session is not None:
                encoded = session.run(settings, progress, cancel, skeleton)
            else:
                encoded = codec.encode(clip, settings, progress, cancel)
            strict = bool(encoded.details.get("strict", True))
            size = container.HEADER_SIZE + len(encoded.payload)
            tried[codec.name] = {"compressed_size": size, "strict": strict}
            rank = (not strict, len(encoded.payload))
            if best is None or rank < best[0]:
                best = (rank, codec, encoded)
        assert best is not None
        _, codec, encoded = best
        if len(codecs) > 1:  # auto: say which codec won and what the others cost
            auto = {"chosen": codec.name, "codecs": tried}
            encoded = dataclasses.replace(encoded, details={**encoded.details, "auto": auto})
        seconds = time.perf_counter() - start
        frame = container.write(
            codec.codec_id, encoded.payload, clip.skeleton if settings.include_metadata else None
        )
        sizes = (frame.compressed_size, len(frame.data))
        measured = measure(
            clip, encoded.decoder, settings, sizes, seconds, encoded.details, self._raw_poses
        )
        return Result(
            clip=clip,
            settings=settings,
            codec_name=codec.name,
            data=frame.data,
            decoder=encoded.decoder,
            measurements=measured,
            costs=encoded.costs,
            details=encoded.details,
        )

    def _session(self, codec: Any) -> Any:
        """The codec's encoder of this clip, kept between runs, when it has one."""
        make = getattr(codec, "session", None)
        if make is None:
            return None
        if codec.name not in self._sessions:
            self._sessions[codec.name] = make(self.clip)
        return self._sessions[codec.name]


def _with_skeleton(clip: Clip, skeleton: Skeleton) -> Clip:
    old = clip.skeleton
    same = skeleton.names == old.names and all(
        np.array_equal(getattr(skeleton, a), getattr(old, a))
        for a in ("parents", "bind_rotations", "bind_translations", "bind_scales")
    )
    if not same:
        raise ValueError("the skeleton must have the clip's joints, parents and bind pose")
    return clip.replace(skeleton=skeleton)
