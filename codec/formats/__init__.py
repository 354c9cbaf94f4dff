"""One entry point per direction for every clip format: `load_clip`, `save_clip`, `list_animations`.

The format is chosen by extension. Readers are imported lazily so that `import codec` stays
cheap and a broken or missing reader only affects its own format. `load_clip` guarantees that
nothing but `ClipFormatError` comes out for any file content: callers (the app, the CLI) can
show the message and keep going.
"""

from __future__ import annotations

import os
from pathlib import Path

from codec.clip import Clip
from codec.errors import ClipFormatError, ClipValidationError, CompressedFormatError

__all__ = ["FORMATS", "format_of", "list_animations", "load_clip", "save_clip"]

# extension -> format name; longest match wins (.acl.sjson before .sjson)
FORMATS = {
    ".acl.sjson": "sjson",
    ".sjson": "sjson",
    ".bvh": "bvh",
    ".gltf": "gltf",
    ".glb": "gltf",
    ".ssc": "ssc",
}
# the options each reader takes; load_clip passes each reader only its own
_READ_OPTIONS = {
    "bvh": ("units",),
    "gltf": ("animation", "sample_rate", "skin", "scale_to_cm"),
    "sjson": (),
    "ssc": ("skeleton",),
}
_WRITE_OPTIONS = {"sjson": ("binary_exact",), "bvh": ("precision_digits",)}


def format_of(path: str | os.PathLike[str]) -> str | None:
    """The format name for a path's extension (case-insensitive), or None."""
    name = Path(path).name.lower()
    for ext in sorted(FORMATS, key=len, reverse=True):
        if name.endswith(ext):
            return FORMATS[ext]
    return None


def _known(path: str | os.PathLike[str], verb: str, formats: dict[str, tuple[str, ...]]) -> str:
    fmt = format_of(path)
    if fmt is None or fmt not in formats:
        exts = ", ".join(e for e, f in FORMATS.items() if f in formats)
        raise ClipFormatError(path, f"cannot {verb} this file type: expected one of {exts}")
    return fmt


def _pick(fmt: str, options: dict[str, object], table: dict[str, tuple[str, ...]]) -> dict:
    """Options for `fmt`; options no format knows are a caller bug (TypeError), not ignored."""
    every = {o for opts in table.values() for o in opts}
    unknown = sorted(set(options) - every)
    if unknown:
        raise TypeError(
            f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(every))}"
        )
    return {k: v for k, v in options.items() if k in table[fmt]}


def load_clip(path: str | os.PathLike[str], **options: object) -> Clip:
    """Read any supported clip file into a `Clip`.

    Options are forwarded to the reader that takes them (`units` for BVH; `animation`,
    `sample_rate`, `skin`, `scale_to_cm` for glTF; `skeleton` for .ssc) and ignored by the
    others, so one call shape serves every file. Raises only `ClipFormatError`.
    """
    fmt = _known(path, "read", _READ_OPTIONS)
    kwargs = _pick(fmt, options, _READ_OPTIONS)
    if not os.path.exists(path):
        raise ClipFormatError(path, "no such file")
    if os.path.isdir(path):
        raise ClipFormatError(path, "is a directory, not a clip file")
    try:
        clip = _read(fmt, path, kwargs)
    except ClipFormatError:
        raise
    except (ClipValidationError, CompressedFormatError) as exc:
        raise ClipFormatError(path, str(exc)) from exc
    except MemoryError as exc:
        raise ClipFormatError(path, "too large to read into memory") from exc
    except RecursionError as exc:
        raise ClipFormatError(path, "nested too deeply to read") from exc
    except OSError as exc:
        raise ClipFormatError(path, f"cannot read: {exc.strerror or exc}") from exc
    except Exception as exc:  # a reader bug must still not take the caller down
        raise ClipFormatError(
            path, f"internal error while reading ({type(exc).__name__}: {exc})"
        ) from exc
    return clip


def _read(fmt: str, path: str | os.PathLike[str], kwargs: dict) -> Clip:
    if fmt == "sjson":
        from codec.formats.acl_sjson import read_acl_sjson
        from codec.scalar_tracks import ScalarTrackList

        result = read_acl_sjson(path)
        if isinstance(result, ScalarTrackList):
            raise ClipFormatError(
                path,
                f"is a scalar track list ({result.track_type}), not a transform clip; "
                "Shellscope inspects transform clips",
            )
        return result
    if fmt == "bvh":
        from codec.formats.bvh import read_bvh

        return read_bvh(path, **kwargs)
    if fmt == "gltf":
        from codec.formats.gltf import read_gltf

        return read_gltf(path, **kwargs)
    from codec.decoder import decode

    with open(path, "rb") as f:
        data = f.read()
    return decode(data, **kwargs).decode_source(Path(path).name.removesuffix(".ssc"))


def list_animations(path: str | os.PathLike[str]) -> list[str]:
    """Names of the animations a file holds: every glTF animation, or one entry otherwise."""
    fmt = _known(path, "read", _READ_OPTIONS)
    if not os.path.exists(path):
        raise ClipFormatError(path, "no such file")
    if fmt != "gltf":
        name = Path(path).name
        for ext in sorted(FORMATS, key=len, reverse=True):
            if name.lower().endswith(ext):
                return [name[: -len(ext)]]
    from codec.formats.gltf import list_gltf_animations

    try:
        return list_gltf_animations(path)
    except ClipFormatError:
        raise
    except Exception as exc:
        raise ClipFormatError(
            path, f"cannot list animations ({type(exc).__name__}: {exc})"
        ) from exc


def save_clip(clip: Clip, path: str | os.PathLike[str], **options: object) -> list[str]:
    """Write `clip` by extension (.acl.sjson / .sjson, .bvh); returns the writer's warnings.

    Options: `binary_exact` (SJSON, default True), `precision_digits` (BVH). Writes are atomic.
    """
    fmt = _known(path, "write", _WRITE_OPTIONS)
    kwargs = _pick(fmt, options, _WRITE_OPTIONS)
    if fmt == "sjson":
        from codec.formats.acl_sjson import write_acl_sjson

        write_acl_sjson(clip, path, **kwargs)
        return []
    from codec.formats.bvh import write_bvh

    return list(write_bvh(clip, path, **kwargs))
