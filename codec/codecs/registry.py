"""The codecs by name and by the id the container stores: one registration line each."""

from __future__ import annotations

from codec.codecs import container
from codec.codecs.acl21.codec import CODEC as ACL_21
from codec.codecs.acl_style.codec import CODEC as ACL_STYLE
from codec.codecs.authored import AuthoredCodec
from codec.codecs.base import Codec, Decoder
from codec.codecs.container import Container
from codec.codecs.curve import CurveCodec
from codec.codecs.keyreduce import KeyReduceCodec
from codec.codecs.subsample import SubsampleCodec
from codec.codecs.wavelet import WaveletCodec
from codec.errors import CompressedFormatError, SettingsError
from codec.model.clip import Clip, Skeleton

DEFAULT = "acl-style"
AUTO = "auto"  # every codec tries; the smallest strict encoding wins (codec.compression)
AUTO_DESCRIPTION = "every codec tries; the smallest strict encoding wins"
CODECS: dict[str, Codec] = {
    c.name: c
    for c in (
        ACL_STYLE,
        SubsampleCodec(),
        KeyReduceCodec(),
        CurveCodec(),
        WaveletCodec(),
        ACL_21,
        AuthoredCodec(),
    )
}


def names() -> tuple[str, ...]:
    """Every codec's name, the default first."""
    return tuple(CODECS)


def chosen(name: str, clip: Clip | None = None) -> tuple[Codec, ...]:
    """The codecs a settings' `codec` names: one, or every codec for AUTO (not those that
    say `in_auto = False`: acl-2.1 runs an outside program; for a `clip`, not those whose
    `suits(clip)` says they have nothing to work on: authored without the file's curves)."""
    if name == AUTO:
        return tuple(
            c
            for c in CODECS.values()
            if getattr(c, "in_auto", True)
            and (clip is None or getattr(c, "suits", lambda _: True)(clip))
        )
    return (get(name),)


def unavailable(name: str) -> str | None:
    """Why the codec called `name` cannot run here (acl-2.1 without acl_compressor), or
    None: listed either way, never an error until it is chosen."""
    check = getattr(get(name), "unavailable", None)
    return None if check is None else check()


def get(name: str) -> Codec:
    """The codec called `name` (SettingsError naming the known ones otherwise)."""
    try:
        return CODECS[name]
    except KeyError:
        raise SettingsError(
            f"unknown codec {name!r}; expected one of {', '.join(CODECS)} or {AUTO}"
        ) from None


def by_id(codec_id: int) -> Codec:
    """The codec a container's id byte names (CompressedFormatError otherwise)."""
    for c in CODECS.values():
        if c.codec_id == codec_id:
            return c
    raise CompressedFormatError(
        f"codec id {codec_id} at byte 5 is not one this Shellscope knows "
        f"({', '.join(f'{c.codec_id} {c.name}' for c in CODECS.values())})"
    )


def decode_file(data: bytes, skeleton: Skeleton | None = None) -> tuple[Container, Decoder]:
    """A .ssc file's container and the decoder of the codec that wrote it; `skeleton` for
    a file without a metadata block (CompressedFormatError on anything wrong)."""
    frame = container.read(data)
    codec = by_id(frame.codec_id)
    sk = skeleton if skeleton is not None else frame.skeleton
    if sk is None:
        raise CompressedFormatError("the file has no metadata block: pass the skeleton")
    return frame, codec.decode(frame.payload, sk)
