"""Shellscope's codec: clip model, clip formats and the ACL-style compressor. Never imports Qt."""

from codec.clip import Clip, Skeleton
from codec.errors import (
    Cancelled,
    ClipFormatError,
    ClipValidationError,
    CompressedFormatError,
    SettingsError,
    ShellscopeError,
)

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
    if name in ("compress", "CompressionResult", "CompressionSettings"):
        from codec import compressor

        return getattr(compressor, name)
    if name in ("decode", "CompressedClip", "Pose"):
        from codec import decoder

        return getattr(decoder, name)
    raise AttributeError(f"module 'codec' has no attribute {name!r}")
