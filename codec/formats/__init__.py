"""One entry point per direction for every clip format: `load_clip`, `save_clip`, `list_animations`.

The format is chosen by extension; a .gz, .xz or .zst ending around any of them is
decompressed first (capped, see codec.formats.compressed) and the inner name decides.
Each format is declared by its own module (a `FormatSpec` named FORMAT, codec.formats.spec);
`_MODULES` lists them, one line each. `import codec` does not import the formats, and the
readers import their heavy libraries (USD, the FBX worker) only when they read. `load_clip`
guarantees that nothing but
`ClipFormatError` comes out for any file content: callers (the app, the CLI) can show the
message and keep going. It reads regular files only (a FIFO would block, a device never
ends), and checks every clip a reader returns against what the codec can hold
(codec.model.limits): values within float32's range, a usable sample rate, positive distances and
at most MAX_TRANSFORMS samples x joints. Readers check sizes themselves, before they
allocate; this last check is what makes the promise hold for every reader.
"""

from __future__ import annotations

import os
import stat
from dataclasses import replace

import numpy as np

from codec.errors import ClipFormatError, ClipValidationError, CompressedFormatError
from codec.formats import acl_binary, acl_sjson, bvh, fbx, gltf, ssc, usd
from codec.formats.compressed import COMPRESSIONS, compression_of, inner_name, read_decompressed
from codec.formats.input_paths import size_problem
from codec.formats.spec import FormatSpec
from codec.model.clip import Clip
from codec.model.limits import (
    MAX_TRANSFORMS,
    MAX_VALUE,
    MIN_DISTANCE,
    distance_problem,
    file_bytes,
    first_out_of_range,
    over_budget,
    rate_problem,
    value_problem,
    vertex_sample_budget,
)
from codec.model.units import user_units

__all__ = [
    "COMPRESSIONS",
    "FORMATS",
    "READER_MODULES",
    "SPECS",
    "clip_extensions",
    "format_of",
    "list_animations",
    "load_clip",
    "multi_animation",
    "save_clip",
]

# one entry per format: the module whose FORMAT (codec.formats.spec.FormatSpec) declares it
_MODULES = (acl_sjson, bvh, gltf, fbx, usd, ssc, acl_binary)
SPECS: dict[str, FormatSpec] = {m.FORMAT.name: m.FORMAT for m in _MODULES}
# every module reading a clip may import: each format's own and what its reader imports only
# when it reads (FormatSpec.read_imports: the child-process runner, its hand-over, the size
# scans); the app imports them all on its UI thread before the warm-up thread imports numba
READER_MODULES: tuple[str, ...] = tuple(
    dict.fromkeys(name for m in _MODULES for name in (m.__name__, *m.FORMAT.read_imports))
)
# extension -> format name; longest match wins (.acl.sjson before .sjson)
FORMATS = {ext: spec.name for spec in SPECS.values() for ext in spec.extensions}
# the options each reader takes; load_clip passes each reader only its own ("units" is
# handled here for the formats whose reader does not take it)
_READ_OPTIONS = {name: spec.read_options for name, spec in SPECS.items()}
_GENERIC_OPTIONS = ("units",)
_WRITE_OPTIONS = {name: spec.write_options for name, spec in SPECS.items() if spec.write}


def multi_animation(fmt: str | None) -> bool:
    """Whether a file of format `fmt` may hold several animations (--animation applies)."""
    return fmt in SPECS and SPECS[fmt].multi_animation


def format_of(path: str | os.PathLike[str]) -> str | None:
    """The format name for a path's extension (case-insensitive; a .gz/.xz/.zst ending is
    looked through), or None."""
    name = inner_name(path).lower()
    for ext in sorted(FORMATS, key=len, reverse=True):
        if name.endswith(ext):
            return FORMATS[ext]
    return None


def clip_extensions(compressed: bool = True) -> tuple[str, ...]:
    """Every name ending a readable clip has (with the compressed variants when asked)."""
    plain = tuple(e for e in FORMATS if e != ".sjson")
    if not compressed:
        return plain
    packed = [e for e in plain if SPECS[FORMATS[e]].compressible]
    return plain + tuple(e + c for e in packed for c in COMPRESSIONS)


def _known(path: str | os.PathLike[str], verb: str, formats: dict[str, tuple[str, ...]]) -> str:
    fmt = format_of(path)
    if fmt is None or fmt not in formats:
        exts = ", ".join(e for e, f in FORMATS.items() if f in formats)
        if verb == "read":
            exts += f", each optionally compressed ({', '.join(COMPRESSIONS)})"
        raise ClipFormatError(path, f"cannot {verb} this file type: expected one of {exts}")
    return fmt


def _pick(fmt: str, options: dict[str, object], table: dict[str, tuple[str, ...]]) -> dict:
    """Options for `fmt`; options no format knows are a caller bug (TypeError), not ignored."""
    every = {o for opts in table.values() for o in opts} | set(
        _GENERIC_OPTIONS if table is _READ_OPTIONS else ()
    )
    unknown = sorted(set(options) - every)
    if unknown:
        raise TypeError(
            f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(every))}"
        )
    return {k: v for k, v in options.items() if k in table[fmt]}


def load_clip(path: str | os.PathLike[str], **options: object) -> Clip:
    """Read any supported clip file (plain or .gz / .xz / .zst) into a `Clip` in centimetres.

    Options are forwarded to the reader that takes them (`units` for every format: a name of
    codec.model.units.UNIT_CM or "auto"; `animation` and `sample_rate` for glTF, FBX and USD;
    `skin`, `scale_to_cm` for glTF; `skeleton` for .ssc) and ignored by the others, so one
    call shape serves every file. `clip.units` says what the file declared and what was
    chosen. Raises only `ClipFormatError`.
    """
    fmt = _known(path, "read", _READ_OPTIONS)
    kwargs = _pick(fmt, options, _READ_OPTIONS)
    check_readable(path, fmt)
    try:
        data = _decompressed(path, fmt)
        with np.errstate(all="ignore"):  # a NaN is caught by check_clip, not printed
            clip = _read(fmt, path, data, kwargs)
        if "units" not in _READ_OPTIONS[fmt]:
            clip = _apply_units(clip, fmt, options.get("units"))
        check_clip(path, clip)
        clip = _within_skin_budget(path, clip)
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


def check_regular_file(path: str | os.PathLike[str]) -> None:
    """ClipFormatError unless `path` is an existing regular file (links followed): a
    directory, FIFO, socket or device is never read."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise ClipFormatError(path, "no such file") from None
    except OSError as e:
        raise ClipFormatError(path, f"cannot read: {e.strerror or e}") from None
    if stat.S_ISDIR(mode):
        raise ClipFormatError(path, "is a directory, not a clip file")
    if not stat.S_ISREG(mode):
        raise ClipFormatError(path, "is not a regular file (a device, FIFO or socket)")


def readable_problem(path: str | os.PathLike[str]) -> str | None:
    """None when `path` is a clip file `load_clip` would open, else why not, without
    reading a byte of it: an unknown type, not a regular file, or larger than its format's
    cap (FormatSpec.max_bytes). The library asks before it hashes a file."""
    try:
        check_readable(path, _known(path, "read", _READ_OPTIONS))
    except ClipFormatError as e:
        return e.message
    return None


def check_readable(path: str | os.PathLike[str], fmt: str) -> None:
    """ClipFormatError unless `path` is a regular file within its format's size cap
    (on disk; a compressed file's contents are capped as they are decompressed)."""
    check_regular_file(path)
    spec = SPECS[fmt]
    problem = size_problem(os.stat(path).st_size, spec.max_bytes, f"{spec.label} file")
    if problem:
        raise ClipFormatError(path, problem)


def _decompressed(path: str | os.PathLike[str], fmt: str) -> bytes | None:
    """The decompressed bytes of a .gz / .xz / .zst clip (capped by its format), else None."""
    return read_decompressed(path, SPECS[fmt].max_bytes) if compression_of(path) else None


def check_clip(path: str | os.PathLike[str], clip: Clip) -> None:
    """ClipFormatError naming the joint and sample of the first thing the codec cannot hold
    (see codec.model.limits); the readers of text formats say the line before it comes to this."""
    problem = rate_problem(clip.sample_rate)
    if problem:
        raise ClipFormatError(path, f"sample rate: {problem}")
    problem = over_budget(clip.num_samples, clip.num_joints, MAX_TRANSFORMS)
    if problem:
        raise ClipFormatError(path, problem)
    sk = clip.skeleton
    names = sk.names
    for label, values in (
        ("bind translation", sk.bind_translations),
        ("bind scale", sk.bind_scales),
    ):
        bad = first_out_of_range(values)
        if bad is not None:
            j, c = bad
            raise ClipFormatError(
                path, f"{label} of joint {j} ({names[j]!r}): {_value_text(values[j, c])}"
            )
    for label, values in (("precision", sk.precision), ("shell distance", sk.shell_distance)):
        with np.errstate(invalid="ignore"):
            bad = np.flatnonzero(~((values >= MIN_DISTANCE) & (values <= MAX_VALUE)))
        if bad.size:
            j = int(bad[0])
            problem = distance_problem(float(values[j]))
            raise ClipFormatError(path, f"{label} of joint {j} ({names[j]!r}): {problem}")
    for label, values in (("translation", clip.translations), ("scale", clip.scales)):
        bad = first_out_of_range(values)
        if bad is not None:
            si, j, c = bad
            raise ClipFormatError(
                path,
                f"{label} of joint {j} ({names[j]!r}) at sample {si}: "
                f"{_value_text(values[si, j, c])}",
            )


def _within_skin_budget(path: str | os.PathLike[str], clip: Clip) -> Clip:
    """The clip without its skinned meshes (and a warning saying why) when measuring their
    true error would take more vertices x samples than the file's size allows
    (codec.model.limits.vertex_sample_budget): the animation stays readable."""
    vertices = sum(m.num_vertices for m in clip.meshes)
    budget = vertex_sample_budget(file_bytes(path))
    if vertices * clip.num_samples <= budget:
        return clip
    note = (
        f"skinned meshes left out: {vertices} vertices x {clip.num_samples} samples is over the "
        f"limit of {budget} vertex-samples for this file, so the skin's true error is not "
        "measured"
    )
    return clip.replace(meshes=(), warnings=[*clip.warnings, note])


def _value_text(value: float) -> str:
    return value_problem(float(value)) or f"{value:g}"


def _apply_units(clip: Clip, fmt: str, requested: object) -> Clip:
    """Units for the formats that declare none: cm unless --units names another unit."""
    try:
        default = SPECS[fmt].units
        assert default is not None  # a format without a units option declares its units
        units = user_units(requested if isinstance(requested, str) else None, default)
    except ValueError as exc:
        raise ClipFormatError(clip.name or fmt, str(exc)) from None
    if units.to_cm == 1.0:
        return clip.replace(units=units)
    f = units.to_cm
    sk = clip.skeleton
    skeleton = replace(sk, bind_translations=sk.bind_translations * f)
    curves = None if clip.curves is None else clip.curves.scaled(f)
    return clip.replace(
        skeleton=skeleton, translations=clip.translations * f, units=units, curves=curves
    )


def _read(fmt: str, path: str | os.PathLike[str], data: bytes | None, kwargs: dict) -> Clip:
    return SPECS[fmt].read(path, data=data, **kwargs)


def list_animations(path: str | os.PathLike[str]) -> list[str]:
    """Names of the animations a file holds: every glTF animation, FBX animation stack or
    USD skeleton animation; one entry (the file's stem) for the single-clip formats."""
    fmt = _known(path, "read", _READ_OPTIONS)
    check_readable(path, fmt)
    spec = SPECS[fmt]
    if not spec.multi_animation or spec.list is None:
        name = inner_name(path)
        for ext in sorted(FORMATS, key=len, reverse=True):
            if name.lower().endswith(ext):
                return [name[: -len(ext)]]
    try:
        data = _decompressed(path, fmt)
        return list(spec.list(path, data=data))
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
    write = SPECS[fmt].write
    assert write is not None  # _known checked it
    return list(write(clip, path, **kwargs) or [])
