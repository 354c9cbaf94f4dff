"""Shellscope's codec: clip model, clip formats, the codecs and their measure. Never imports Qt."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codec.errors import (
    Cancelled,
    ClipFormatError,
    ClipValidationError,
    CompressedFormatError,
    SettingsError,
    ShellscopeError,
)
from codec.model.clip import Clip, Skeleton

if TYPE_CHECKING:
    from codec.codecs.base import Decoder

__all__ = [
    "Cancelled",
    "Clip",
    "ClipFormatError",
    "ClipValidationError",
    "CompressedFormatError",
    "SettingsError",
    "ShellscopeError",
    "Skeleton",
]


def __getattr__(name: str):  # lazy: keep `import codec` cheap and free of import cycles
    if name in ("load_clip", "save_clip", "list_animations"):
        from codec import formats

        return getattr(formats, name)
    if name in ("compress", "Compression"):
        from codec import compression

        return getattr(compression, name)
    if name == "Result":
        from codec.result import Result

        return Result
    if name == "CompressionSettings":
        from codec.settings import CompressionSettings

        return CompressionSettings
    if name == "Pose":
        from codec.model.sampling import Pose

        return Pose
    raise AttributeError(f"module 'codec' has no attribute {name!r}")


def decode(data: bytes, skeleton: Skeleton | None = None) -> Decoder:
    """The decoder of a .ssc file's bytes, whichever codec wrote it (`skeleton` for a file
    without a metadata block); CompressedFormatError on anything wrong."""
    from codec.codecs.registry import decode_file

    return decode_file(data, skeleton)[1]
