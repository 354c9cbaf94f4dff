"""Shellscope's own compressed clips (.ssc), read as the lossy clip at every source sample.

The container names the codec that wrote the file (codec.codecs.container), and that
codec's decoder gives the clip, so a .ssc of any codec opens like any other clip.
"""

from __future__ import annotations

import os

from codec.formats.compressed import inner_name
from codec.formats.spec import FormatSpec
from codec.model.clip import Clip, Skeleton
from codec.model.limits import MAX_SSC_BYTES
from codec.model.units import Units


def read_ssc(
    path: str | os.PathLike[str], data: bytes | None = None, skeleton: Skeleton | None = None
) -> Clip:
    """The decoded clip of a .ssc file (`skeleton` for a file without its metadata)."""
    from codec.codecs.registry import decode_file

    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    name = inner_name(path).removesuffix(".ssc")
    return decode_file(data, skeleton)[1].decode_source(name)


FORMAT = FormatSpec(
    name="ssc",
    label="Shellscope compressed",
    extensions=(".ssc",),
    read=read_ssc,
    read_options=("skeleton",),
    units=Units("cm", 1.0, "assumed", reason=".ssc keeps the units of the clip it was made from"),
    compressible=False,
    max_bytes=MAX_SSC_BYTES,
)
