"""ACL 2.1's compressed tracks (`.acl`, what `acl_compressor -out=FILE.acl` writes), read as
a clip of their own: the decoded (lossy) clip at every sample, its skeleton from ACL's
metadata (track names, parents, default values as the bind pose, each track's precision
and shell distance).

This opens a file alone. To see ACL's error, open it against the raw clip it was made from
(`shellscope RAW --acl-output FILE.acl`, File > Open ACL output..., `python -m codec stats
RAW --acl-output FILE.acl`): codec.codecs.acl21 matches its tracks to the clip's joints by
name and measures ACL's pose against the raw one. The layout is in codec.codecs.acl21.layout.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np

from codec.errors import ClipFormatError, CompressedFormatError
from codec.formats.spec import FormatSpec
from codec.model.clip import DEFAULT_PRECISION, DEFAULT_SHELL_DISTANCE, Clip, Skeleton
from codec.model.units import Units

MAX_BYTES = 1 << 28  # 256 MiB: far more than the largest clip Shellscope holds compresses to


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of an ACL file, checked to be a regular file of a size ACL could write
    (ClipFormatError naming the file otherwise)."""
    try:  # a regular file only: a FIFO would block, a device never end
        st = os.stat(path)
    except OSError as e:
        raise ClipFormatError(path, f"cannot read: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ClipFormatError(path, "is not a regular file")
    size = st.st_size
    if size > MAX_BYTES:
        raise ClipFormatError(path, f"{size} bytes is larger than any ACL output Shellscope reads")
    try:
        with open(path, "rb") as f:
            return f.read(MAX_BYTES + 1)
    except OSError as e:
        raise ClipFormatError(path, f"cannot read: {e.strerror or e}") from None


def read_output(path: str | os.PathLike[str]) -> object:
    """The ACL output file at `path` as the `acl-2.1` codec with those bytes fixed
    (codec.codecs.acl21.AclOutput; ClipFormatError naming the file when they do not parse)."""
    from codec.codecs.acl21.codec import AclOutput

    data = read_bytes(path)
    try:
        return AclOutput(data, str(path))
    except CompressedFormatError as e:
        raise ClipFormatError(path, str(e)) from None


def skeleton_of(path: object, tracks: object) -> Skeleton:
    """The skeleton ACL's metadata describes (ClipFormatError when it holds no names and
    parents: such a file only opens against its raw clip)."""
    from codec.codecs.acl21.decoder import default_values

    m = tracks.metadata  # type: ignore[attr-defined]
    if m.track_names is None or m.parents is None:
        raise ClipFormatError(
            path,
            "holds no track names and parents: open it against its raw clip "
            "(shellscope RAW --acl-output FILE.acl)",
        )
    J = len(m.track_names)
    if np.any(m.parents >= np.arange(J)):
        j = int(np.flatnonzero(m.parents >= np.arange(J))[0])
        raise ClipFormatError(path, f"track {j} ({m.track_names[j]!r}) comes before its parent")
    skeleton = Skeleton.create(m.track_names, m.parents)
    bind = default_values(tracks, skeleton).astype(np.float64)  # type: ignore[arg-type]
    rot = bind[:, :4] / np.linalg.norm(bind[:, :4], axis=1, keepdims=True)
    return Skeleton(
        names=m.track_names,
        parents=m.parents,
        bind_rotations=rot,
        bind_translations=bind[:, 4:7],
        bind_scales=bind[:, 7:],
        precision=m.precision if m.precision is not None else np.full(J, DEFAULT_PRECISION),
        shell_distance=(
            m.shell_distance if m.shell_distance is not None else np.full(J, DEFAULT_SHELL_DISTANCE)
        ),
    )


def read_acl(path: str | os.PathLike[str], data: bytes | None = None) -> Clip:
    """The clip an ACL file decodes to, every sample (a wrapping clip's dropped last sample
    back as a copy of the first)."""
    from codec.codecs.acl21 import layout
    from codec.codecs.acl21.decoder import AclDecoder

    raw = read_bytes(path) if data is None else data
    try:
        tracks = layout.read(raw)
        skeleton = skeleton_of(path, tracks)
        name = tracks.metadata.name or Path(os.fspath(path)).name.removesuffix(".acl")
        return AclDecoder(tracks, skeleton).decode_source(name)
    except CompressedFormatError as e:
        raise ClipFormatError(path, str(e)) from None


FORMAT = FormatSpec(
    name="acl",
    label="ACL 2.1 compressed",
    extensions=(".acl",),
    read=read_acl,
    units=Units("cm", 1.0, "assumed", reason="ACL's compressed tracks declare no units"),
    compressible=False,
)
