"""What a clip format declares about itself: one `FormatSpec` in each reader module.

codec.formats builds its extension table, the options each reader takes, which formats
hold several animations and how to read, list and write from these declarations; the app's
file dialogs and the command line's checks derive from them too. Adding a format is one
module with a FORMAT and one line in codec.formats._MODULES.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from codec.model.limits import MAX_CLIP_BYTES
from codec.model.units import Units


@dataclass(frozen=True)
class FormatSpec:
    """One clip format.

    name         short name ("bvh"); label the file dialog's name ("BVH")
    extensions   name endings, longest first where one ends another (".acl.sjson", ".sjson")
    read_options the options `load_clip` passes its reader (others are not given to it)
    multi_animation whether one file holds several animations (`list_animations` asks it)
    read         read(path, data=bytes|None, **options) -> Clip (data: decompressed bytes)
    list         list(path, data=bytes|None) -> names, for multi-animation formats
    write        write(clip, path, **options) -> warnings, when the format can be written
    write_options the options `save_clip` passes its writer
    units        what a format that declares no units is taken to be in (None: it declares
                 them, and its reader takes the `units` option itself)
    compressible whether a .gz / .xz / .zst around it is read
    max_bytes    the largest file its reader opens (on disk, and decompressed): checked
                 before a byte is read (codec.model.limits)
    read_imports the modules its reader imports only when it reads (in the parent process;
                 codec.formats.READER_MODULES gathers them for a caller that must import
                 every reader before another thread imports numba)
    """

    name: str
    label: str
    extensions: tuple[str, ...]
    read: Callable[..., Any]
    read_options: tuple[str, ...] = ()
    multi_animation: bool = False
    list: Callable[..., list[str]] | None = None
    write: Callable[..., list[str] | None] | None = None
    write_options: tuple[str, ...] = ()
    units: Units | None = None
    compressible: bool = True
    max_bytes: int = MAX_CLIP_BYTES
    read_imports: tuple[str, ...] = ()
