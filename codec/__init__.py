"""Shellscope's codec: clip model, clip formats and the ACL-style compressor. Never imports Qt."""

from codec.errors import (
    Cancelled,
    ClipFormatError,
    ClipValidationError,
    CompressedFormatError,
    SettingsError,
    ShellscopeError,
)
from codec.model.clip import Clip, Skeleton

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
        from codec.codecs.acl_style import encoder as compressor

        return getattr(compressor, name)
    if name in ("decode", "CompressedClip", "Pose"):
        from codec.codecs.acl_style import decoder

        return getattr(decoder, name)
    raise AttributeError(f"module 'codec' has no attribute {name!r}")
