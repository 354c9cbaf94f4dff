"""The `python -m codec` command line: compress, decompress, info, stats and bench.

Every command is a function `(args) -> exit code`; `main(argv)` parses, dispatches and turns
every failure into one line on stderr, never a traceback. Exit codes: 0 ok; 1 a run failed
on valid input (an internal error, out of memory, a compression whose error is not a finite
number, a benchmark target missed); 2 bad input or usage (an unreadable or hostile file,
bad settings, an output that cannot be written or would overwrite an input).

Outputs: every output path is checked before any work (its folder exists and is writable,
it is not an input, no two are the same), and the files of one run are written together at
its end, all or none (codec.atomic.all_or_none): a failed run changes no file. SIGTERM and
SIGHUP unwind like an interruption, so no temporary file is left behind.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from codec import atomic
from codec.clip import Clip, Skeleton
from codec.errors import CompressedFormatError, ShellscopeError
from codec.limits import distance_problem, rate_problem
from codec.settings import LEVELS, CompressionSettings

if TYPE_CHECKING:
    from codec.ssc_format import ParsedFile

PROG = "python -m codec"
EXIT_OK, EXIT_FAIL, EXIT_ERROR = 0, 1, 2
UNITS = ("auto", "mm", "cm", "dm", "m", "inch", "ft", "cmu")
MESH = "mesh"  # --shell-distance mesh
STATS_COLUMNS = (
    "name",
    "joints",
    "samples",
    "raw_size",
    "compressed_size",
    "compression_ratio",
    "max_error",
    "worst_track_name",
    "compression_time",
    "precision_met",
    "level",
)


class CliError(Exception):
    """A user-facing failure: its message is printed as is and the exit code is 2."""


class RunFailed(Exception):
    """A run that failed on valid input: its message is printed and the exit code is 1."""


# --- small helpers --------------------------------------------------------------------------


def json_safe(value: Any) -> Any:
    """`value` with numpy scalars / arrays, tuples and paths turned into JSON types.

    Non-finite floats become None, so the output is strict JSON.
    """
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, np.generic):
        return json_safe(value.item())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def dumps_json(value: Any) -> str:
    """Strict, indented JSON text of `value` (made JSON-safe first), ending in a newline."""
    return json.dumps(json_safe(value), indent=2, allow_nan=False) + "\n"


def check_outputs(
    outputs: Sequence[str | None], inputs: Sequence[str | os.PathLike | None]
) -> None:
    """CliError (exit 2) before any work when an output cannot be written: its folder is
    missing or read-only, it is a folder, it is one of the inputs, or two outputs are one
    file. '-' (stdout) and None (not asked for) are skipped."""
    files = [o for o in outputs if o and o != "-"]
    ins = [Path(i) for i in inputs if i]
    seen: dict[str, str] = {}
    for out in files:
        path = Path(out)
        real = os.path.realpath(path)
        if real in seen:
            raise CliError(f"{out}: given twice as an output (also as {seen[real]})")
        seen[real] = out
        for i in ins:
            if real == os.path.realpath(i) or (path.exists() and _same_file(path, i)):
                raise CliError(f"{out}: is the input file {i}; refusing to overwrite it")
        folder = path.parent
        if path.is_dir():
            raise CliError(f"{out}: cannot write: is a folder")
        if not folder.is_dir():
            raise CliError(f"{out}: cannot write: no such folder {str(folder)!r}")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise CliError(f"{out}: cannot write: the folder is not writable")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def write_outputs(files: Sequence[tuple[str | None, str | bytes]], stdout: TextIO) -> None:
    """Write the (path, text or bytes) outputs of a run all or none; '-' goes to stdout after
    the files are in place, None is skipped."""
    try:
        with atomic.all_or_none():
            for path, data in files:
                if not path or path == "-":
                    continue
                if isinstance(data, bytes):
                    atomic.write_bytes(path, data)
                else:
                    atomic.write_text(path, data)
    except OSError as e:
        raise CliError(f"{e.filename or 'output'}: cannot write: {e.strerror or e}") from None
    for path, data in files:
        if path == "-":
            stdout.write(data if isinstance(data, str) else data.decode())


def write_text_output(path: str, text: str, stdout: TextIO) -> None:
    """Write `text` to `path` whole or not at all, or to stdout when `path` is '-'."""
    write_outputs([(path, text)], stdout)


def check_finite_error(path: str, stats: dict[str, Any]) -> None:
    """RunFailed (exit 1) when a compression's max error is not a finite number: such a run
    must never look like a success (nothing is written)."""
    value = stats.get("max_error")
    if not (isinstance(value, int | float) and math.isfinite(value)):
        raise RunFailed(
            f"{path}: the compression's max error is {value!r}, not a finite number: "
            "nothing written (please report it)"
        )


def fmt_bytes(n: int) -> str:
    return f"{n:,} B"


def table(rows: Sequence[Sequence[str]], right: Iterable[int] = ()) -> str:
    """Rows of cells as an aligned text table; columns in `right` are right-aligned."""
    right = set(right)
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = []
    for r in rows:
        cells = [
            cell.rjust(w) if c in right else cell.ljust(w)
            for c, (cell, w) in enumerate(zip(r, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def settings_from(args: argparse.Namespace) -> CompressionSettings:
    """CompressionSettings from the shared compression flags (SettingsError when bad);
    `--shell-distance mesh` is per joint, applied to the clip by `apply_shell_source`."""
    for flag in ("precision", "shell_distance"):
        value = getattr(args, flag, None)
        if value is None or value == MESH:
            continue
        problem = distance_problem(value)
        if problem and value > 0:  # non-positive values get CompressionSettings' message
            raise CliError(f"--{flag.replace('_', '-')}: {problem}")
    return CompressionSettings(
        level=args.level,
        precision=args.precision,
        shell_distance=None if args.shell_distance == MESH else args.shell_distance,
        loop_optimization=not args.no_loop,
        include_metadata=not getattr(args, "no_metadata", False),
    )


def apply_shell_source(clip: Clip, shell_distance: float | str | None, path: str) -> Clip:
    """`--shell-distance mesh`: every joint's shell distance measured on the clip's skinned
    mesh (codec.mesh_shells; CliError naming the file when it has none)."""
    if shell_distance != MESH:
        return clip
    from codec.mesh_shells import with_mesh_shells

    try:
        return with_mesh_shells(clip)
    except ShellscopeError as e:
        raise CliError(f"{path}: {e}") from None


def load_options(args: argparse.Namespace) -> dict[str, Any]:
    """Reader options given on the command line (only those set)."""
    opts: dict[str, Any] = {}
    if getattr(args, "units", None):
        opts["units"] = args.units
    if getattr(args, "animation", None) is not None:
        opts["animation"] = args.animation
    if getattr(args, "sample_rate", None) is not None:
        problem = rate_problem(args.sample_rate)
        if problem:
            raise CliError(f"--sample-rate: {problem}")
        opts["sample_rate"] = args.sample_rate
    return opts


def warn_unused_reader_flags(args: argparse.Namespace, err: TextIO) -> None:
    """Say so when a flag given does not apply to the file's format (rather than ignore it)."""
    from codec.formats import format_of

    fmt = format_of(args.clip)
    if getattr(args, "sample_rate", None) is not None and fmt not in ("gltf", "fbx", "usd"):
        err.write(f"warning: {args.clip}: --sample-rate applies to glTF, FBX and USD; ignored\n")
    if getattr(args, "animation", None) is not None and fmt not in ("gltf", "fbx", "usd"):
        err.write(f"warning: {args.clip}: --animation applies to glTF, FBX and USD; ignored\n")


def units_line(clip: Clip) -> str:
    """The units / up-axis statement of a loaded clip, as the summary prints it."""
    if clip.units is None:
        return "units: not stated by the reader; taken as cm"
    return clip.units.statement()


def read_ssc(path: str) -> ParsedFile:
    """Read and parse a .ssc file; errors name the file."""
    from codec import ssc_format
    from codec.formats import check_regular_file

    check_regular_file(path)  # a FIFO would block, a device never end
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise CliError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        return ssc_format.read(data)
    except CompressedFormatError as e:
        raise CliError(f"{path}: {e}") from None


# --- compress -------------------------------------------------------------------------------


def cmd_compress(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Compress one clip; print a summary or JSON stats; write the .ssc when -o is given."""
    from codec.compressor import compress
    from codec.formats import load_clip

    settings = settings_from(args)
    if args.output and not args.output.lower().endswith(".ssc"):
        raise CliError(f"{args.output}: the output of compress must end in .ssc")
    check_outputs([args.output, args.json], [args.clip])
    clip = load_clip(args.clip, **load_options(args))
    if not clip.name:
        clip.name = Path(args.clip).name
    warn_unused_reader_flags(args, err)
    clip = apply_shell_source(clip, args.shell_distance, args.clip)
    result = compress(clip, settings)
    check_finite_error(args.clip, result.stats)
    write_outputs(
        [(args.output, result.data), (args.json, dumps_json(result.stats) if args.json else "")],
        out,
    )
    if args.json != "-":
        out.write(compress_summary(args.clip, result.stats, result.clip.skeleton))
        out.write(f"  {units_line(clip)}\n")
        if args.output:
            out.write(f"  wrote            {args.output} ({fmt_bytes(len(result.data))})\n")
    else:  # stdout is the JSON alone: the units statement still reaches the user
        err.write(f"{args.clip}: {units_line(clip)}\n")
    for w in clip.warnings:
        err.write(f"warning: {args.clip}: {w}\n")
    return EXIT_OK


def compress_summary(path: str, s: dict[str, Any], skeleton: Skeleton) -> str:
    """The short human summary of one compression's stats."""
    precision = skeleton.precision
    prec = float(np.min(precision))
    prec_text = f"{prec:g}" if np.all(precision == prec) else f"{prec:g} (smallest)"
    over = s.get("joints_over_precision", [])
    met = "yes" if s["precision_met"] else f"NO ({len(over)} joints over: {', '.join(over[:5])})"
    lines = [
        f"{path}: {s['num_bones']} joints, {s['num_samples']} samples at {s['sample_rate']:g} Hz "
        f"({s['duration']:.3f} s), level {s['level']} ({s['requested_level']})"
        + (", looping" if s["looping"] else ""),
        f"  raw size         {fmt_bytes(s['raw_size'])}",
        f"  compressed size  {fmt_bytes(s['compressed_size'])}  "
        f"(ratio {s['compression_ratio']:.2f}:1)",
        f"  metadata size    {fmt_bytes(s['metadata_size'])}  (file {fmt_bytes(s['file_size'])})",
        f"  max error        {s['max_error']:.6g} cm at {s['worst_track_name']} "
        f"(joint {s['worst_track']}), t = {s['worst_time']:.4g} s",
        f"  error p99        {s['error_p99']:.6g} cm",
        f"  between samples  {s['max_error_between_samples']:.6g} cm at "
        f"{skeleton.names[s['worst_track_between_samples']]} "
        f"(joint {s['worst_track_between_samples']}), t = {s['worst_time_between_samples']:.4g} s",
        f"  precision        {prec_text} cm, met: {met}",
        f"  segments         {s['num_segments']}",
        f"  compression time {s['compression_time']:.3f} s",
    ]
    if "vertex_max_error" in s:
        lines += skin_summary(s, skeleton)
    return "\n".join(lines) + "\n"


def skin_summary(s: dict[str, Any], skeleton: Skeleton) -> list[str]:
    """The summary lines of the true skin error (codec.vertex_error)."""
    under = s["shell_underestimating_joints"]
    ratio = s["shell_to_vertex_ratio_min"]
    low = s["shell_to_vertex_ratio_min_joint"]
    worst = "" if ratio is None else f"; lowest ratio {ratio:.3g} at {low}"
    shells = skeleton.shell_distance
    over = s["vertices_over_precision"]
    budget = f"NO ({over:,} vertices over their strongest joint's precision)"
    if s["vertex_precision_met"]:
        budget = "yes"
    honesty = f"{len(under)} joint(s) under-estimate the skin's error"
    honesty += (f": {', '.join(under[:5])}" if under else "") + worst
    return [
        f"  skin             {s['num_meshes']} mesh(es), {s['num_vertices']:,} vertices, "
        f"{s['num_triangles']:,} triangles; shell distance {np.min(shells):.4g}.."
        f"{np.max(shells):.4g} cm",
        f"  vertex error     {s['vertex_max_error']:.6g} cm at vertex {s['vertex_worst_vertex']} "
        f"of {s['vertex_worst_mesh']} ({s['vertex_worst_joint_name']}), "
        f"t = {s['vertex_worst_time']:.4g} s; p99 {s['vertex_error_p99']:.6g} cm",
        f"  vertex between   {s['vertex_max_error_between_samples']:.6g} cm at "
        f"t = {s['vertex_worst_time_between_samples']:.4g} s",
        f"  skin in budget   {budget}",
        f"  shell honesty    {honesty}",
    ]


# --- decompress -----------------------------------------------------------------------------


def cmd_decompress(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Decode a .ssc (with metadata) and write the lossy clip: ACL SJSON, BVH, or a copy of
    the source glTF with its animation replaced (.glb / .gltf)."""
    from codec.clip import Clip
    from codec.decoder import CompressedClip
    from codec.formats import format_of, save_clip

    fmt = format_of(args.output)
    if fmt not in ("sjson", "bvh", "gltf") or args.output.lower().endswith((".gz", ".xz", ".zst")):
        raise CliError(f"{args.output}: decompress writes .acl.sjson, .bvh, .glb or .gltf files")
    check_outputs([args.output], [args.input, args.source, find_gltf_source(args.input)])
    parsed = read_ssc(args.input)
    if parsed.skeleton is None:
        raise CliError(
            f"{args.input}: has no metadata block (compressed with --no-metadata), "
            "so it cannot be decoded on its own"
        )
    compressed = CompressedClip(parsed)
    decoded = compressed.decode_all()
    arrays = (decoded.rotations, decoded.translations, decoded.scales)
    if compressed.wrap:  # the dropped last sample of a wrapping clip is the first one again
        arrays = tuple(np.concatenate((a, a[:1]), axis=0) for a in arrays)
    name = Path(args.input).name.removesuffix(".ssc")
    clip = Clip(decoded.skeleton, decoded.sample_rate, *arrays, looping=compressed.wrap, name=name)
    if fmt == "gltf":
        warnings = write_lossy_gltf_output(args, clip, out)
    else:
        if args.source:
            raise CliError("--source is for .glb / .gltf outputs (a copy of the source glTF)")
        try:
            warnings = save_clip(clip, args.output)
        except OSError as e:
            raise CliError(f"{args.output}: cannot write: {e.strerror or e}") from None
        except ValueError as e:  # e.g. names SJSON cannot hold
            raise RunFailed(f"{args.output}: {e}") from None
    for w in warnings:
        err.write(f"warning: {args.output}: {w}\n")
    out.write(
        f"wrote {args.output}: {clip.num_joints} joints, {clip.num_samples} samples "
        f"at {clip.sample_rate:g} Hz\n"
    )
    return EXIT_OK


def find_gltf_source(ssc_path: str) -> Path | None:
    """The glTF a .ssc was most likely made from: same name, .glb or .gltf, same folder."""
    stem = Path(ssc_path).name.removesuffix(".ssc")
    for ext in (".glb", ".gltf", ".glb.gz", ".gltf.gz", ".glb.xz", ".gltf.xz"):
        cand = Path(ssc_path).with_name(stem + ext)
        if cand.is_file():
            return cand
    return None


def write_lossy_gltf_output(args: argparse.Namespace, clip: Clip, out: TextIO) -> list[str]:
    """`decompress X.ssc -o lossy.glb`: the source glTF with the lossy animation in it."""
    from codec.formats import format_of
    from codec.formats.gltf_lossy import pick_animation, write_lossy_gltf

    source = Path(args.source) if args.source else find_gltf_source(args.input)
    if source is None:
        raise CliError(
            f"{args.output}: a lossy glTF is a copy of the source glTF, and none was found "
            f"beside {args.input}: give it with --source CLIP.glb"
        )
    if format_of(source) != "gltf" or not source.is_file():
        raise CliError(f"{source}: --source must be an existing .glb or .gltf file")
    if str(source).lower().endswith((".gz", ".xz", ".zst")):
        raise CliError(f"{source}: decompress the source glTF first")
    animation = pick_animation(source, clip, args.animation)
    if not args.source:
        out.write(f"source: {source} (found beside {args.input}; --source to choose)\n")
    out.write(f"replacing animation {animation!r} of {source}\n")
    try:
        return write_lossy_gltf(source, clip, args.output, animation=animation, units=args.units)
    except OSError as e:
        raise CliError(f"{args.output}: cannot write: {e.strerror or e}") from None


# --- info -----------------------------------------------------------------------------------


def ssc_info(parsed: ParsedFile) -> dict[str, Any]:
    """Header fields, sizes, segments, sub-track kinds and bit-rate histogram of a parsed .ssc."""
    from codec import ssc_format
    from codec.result import BIT_RATE_BITS, SUB_TRACKS, TrackKind

    data = parsed.data
    magic, version, flags, crc, total, nj, ns, rate, ng, anim = ssc_format.HEADER.unpack_from(data)
    enc = parsed.encoded
    offsets = parsed.segment_offsets
    ends = np.append(offsets[1:], anim)
    kinds = {
        name: {kind.name.lower(): int(np.sum(enc.kinds[:, k] == kind)) for kind in TrackKind}
        for k, name in enumerate(SUB_TRACKS)
    }
    bits = BIT_RATE_BITS[enc.bit_rates.astype(np.int64).reshape(-1)]
    values, counts = np.unique(bits, return_counts=True)
    return {
        "magic": magic.decode("ascii", "replace"),
        "version": version,
        "flags": flags,
        "looping": bool(flags & ssc_format.FLAG_WRAP),
        "has_metadata": bool(flags & ssc_format.FLAG_METADATA),
        "crc32": f"{crc:08x}",
        "file_size": total,
        "num_joints": nj,
        "num_stored_samples": ns,
        "sample_rate": rate,
        "num_segments": ng,
        "compressed_size": parsed.compressed_size,
        "metadata_size": parsed.metadata_size,
        "segments": [
            {"num_samples": int(n), "segment_size": int(e - o)}
            for n, o, e in zip(enc.segment_sizes, offsets, ends, strict=True)
        ],
        "sub_tracks": kinds,
        "rotation_layouts": rotation_layouts(enc),
        "bit_rate_histogram": {str(int(b)): int(c) for b, c in zip(values, counts, strict=True)},
    }


def rotation_layouts(enc: Any) -> dict[str, int]:
    """How many stored rotations drop each component, and how many vary by segment."""
    from codec.rotation_layout import PER_SEGMENT

    codes = np.concatenate((enc.const_dropped, enc.clip_layout))
    names = {0: "drop_x", 1: "drop_y", 2: "drop_z", 3: "drop_w", PER_SEGMENT: "per_segment"}
    return {name: int(np.sum(codes == code)) for code, name in names.items()}


def cmd_info(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Print what a .ssc file holds (or its JSON with --json)."""
    check_outputs([args.json], [args.input])
    info = ssc_info(read_ssc(args.input))
    if args.json:
        write_text_output(args.json, dumps_json(info), out)
        if args.json == "-":
            return EXIT_OK
    flags = [
        f for f, on in (("looping", info["looping"]), ("metadata", info["has_metadata"])) if on
    ]
    segs = info["segments"]
    seg_sizes = [s["segment_size"] for s in segs]
    lines = [
        f"{args.input}: Shellscope compressed clip, format version {info['version']}",
        f"  magic            {info['magic']}",
        f"  flags            {info['flags']:#06x} ({', '.join(flags) or 'none'})",
        f"  crc32            {info['crc32']}",
        f"  joints           {info['num_joints']}",
        f"  stored samples   {info['num_stored_samples']} at {info['sample_rate']:g} Hz",
        f"  file size        {fmt_bytes(info['file_size'])}",
        f"  compressed size  {fmt_bytes(info['compressed_size'])}",
        f"  metadata size    {fmt_bytes(info['metadata_size'])}",
        f"  segments         {info['num_segments']}: samples "
        f"{' '.join(str(s['num_samples']) for s in segs)}",
        f"  segment sizes    {' '.join(map(str, seg_sizes))} B "
        f"(min {min(seg_sizes)}, max {max(seg_sizes)}, sum {sum(seg_sizes):,})",
        "  sub-tracks       default  constant  animated",
    ]
    for name, counts in info["sub_tracks"].items():
        lines.append(
            f"    {name:<14} {counts['default']:>7}  {counts['constant']:>8}  "
            f"{counts['animated']:>8}"
        )
    hist = info["bit_rate_histogram"]
    lines.append("  bit rates        bits per component: count (segments x animated sub-tracks)")
    lines.append(
        "    " + ("  ".join(f"{b}: {c}" for b, c in hist.items()) if hist else "(none animated)")
    )
    out.write("\n".join(lines) + "\n")
    return EXIT_OK


# --- stats ----------------------------------------------------------------------------------


def clip_extensions() -> tuple[str, ...]:
    """What `stats` looks for in folders: every readable clip, plain or compressed, but not
    .ssc (already compressed)."""
    from codec.formats import clip_extensions as every

    return tuple(e for e in every() if not e.startswith(".ssc"))


def is_clip_file(path: Path) -> bool:
    name = path.name.lower()
    return path.is_file() and any(name.endswith(ext) for ext in clip_extensions())


def collect_clips(paths: Sequence[str]) -> list[tuple[str, str]]:
    """(path, display name) of every clip: files as given, folders searched recursively."""
    found: list[tuple[str, str]] = []
    for p in paths:
        root = Path(p)
        if root.is_dir():
            files = sorted(f for f in root.rglob("*") if is_clip_file(f))
            found += [(str(f), str(f.relative_to(root))) for f in files]
        elif root.exists():
            found.append((str(root), root.name))
        else:
            raise CliError(f"{p}: no such file or folder")
    return found


def stats_job(
    path: str,
    name: str,
    settings: CompressionSettings,
    options: dict,
    shell_distance: float | str | None = None,
) -> dict:
    """Compress one clip in a worker: a row (STATS_COLUMNS) or {'name', 'error'}.
    `shell_distance` MESH takes every joint's shell from the clip's mesh."""
    from codec.compressor import compress
    from codec.formats import load_clip

    try:
        clip = apply_shell_source(load_clip(path, **options), shell_distance, path)
        s = compress(clip, settings).stats
    except (ShellscopeError, CliError) as e:
        return {"name": name, "error": str(e)}
    except Exception as e:  # one broken clip must not stop a batch
        return {"name": name, "error": f"{path}: internal error ({type(e).__name__}: {e})"}
    return {
        "name": name,
        "joints": s["num_bones"],
        "samples": s["num_samples"],
        "raw_size": s["raw_size"],
        "compressed_size": s["compressed_size"],
        "compression_ratio": s["compression_ratio"],
        "max_error": s["max_error"],
        "worst_track_name": s["worst_track_name"],
        "compression_time": s["compression_time"],
        "precision_met": s["precision_met"],
        "level": s["level"],
    }


class ProgressBar:
    """A text progress bar on a stream: redrawn in place on a terminal, a line per step
    otherwise. `note` prints a message without breaking the bar."""

    def __init__(self, stream: TextIO, total: int, width: int = 30) -> None:
        self.stream, self.total, self.width = stream, total, width
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.done = 0
        self._drawn = False

    def _clear(self) -> None:
        if self.tty and self._drawn:
            self.stream.write("\r\x1b[K")
            self._drawn = False

    def note(self, message: str) -> None:
        self._clear()
        self.stream.write(message + "\n")
        self.stream.flush()

    def step(self, label: str) -> None:
        self.done += 1
        filled = self.width * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        text = f"[{bar}] {self.done}/{self.total} {label}"
        if self.tty:
            self._clear()
            self.stream.write(text)
            self._drawn = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        self._clear()


def run_jobs(
    jobs: list[tuple[str, str]],
    settings: CompressionSettings,
    options: dict,
    workers: int,
    on_done: Callable[[dict], None],
    shell_distance: float | str | None = None,
) -> list[dict]:
    """Run stats_job over `jobs` on `workers` processes (in-process for one); results in
    input order, `on_done` called as each finishes."""
    results: list[dict | None] = [None] * len(jobs)
    if workers <= 1:
        for i, (path, name) in enumerate(jobs):
            results[i] = stats_job(path, name, settings, options, shell_distance)
            on_done(results[i])
        return [r for r in results if r is not None]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pending: dict[Future, int] = {
            pool.submit(stats_job, path, name, settings, options, shell_distance): i
            for i, (path, name) in enumerate(jobs)
        }
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    i = pending.pop(fut)
                    results[i] = fut.result()
                    on_done(results[i])
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise
    return [r for r in results if r is not None]


def percentiles(values: Sequence[float]) -> dict[str, float]:
    a = np.asarray(values, dtype=np.float64)
    return {
        "p50": float(np.percentile(a, 50)),
        "p90": float(np.percentile(a, 90)),
        "p99": float(np.percentile(a, 99)),
        "max": float(a.max()),
    }


def stats_report(rows: list[dict], skipped: int) -> str:
    """The per-clip table and the summary (totals, total ratio, percentiles)."""
    head = [
        "clip",
        "joints",
        "samples",
        "raw B",
        "compressed B",
        "ratio",
        "max error",
        "worst joint",
        "time s",
    ]
    cells = [head] + [
        [
            r["name"],
            str(r["joints"]),
            str(r["samples"]),
            f"{r['raw_size']:,}",
            f"{r['compressed_size']:,}",
            f"{r['compression_ratio']:.2f}",
            f"{r['max_error']:.6f}" + ("" if r["precision_met"] else " !"),
            r["worst_track_name"],
            f"{r['compression_time']:.3f}",
        ]
        for r in rows
    ]
    raw = sum(r["raw_size"] for r in rows)
    comp = sum(r["compressed_size"] for r in rows)
    err = percentiles([r["max_error"] for r in rows])
    ratio = percentiles([r["compression_ratio"] for r in rows])
    missed = sum(not r["precision_met"] for r in rows)
    summary = [
        f"{len(rows)} clips compressed, {skipped} skipped; precision missed on {missed}"
        + (" (marked !)" if missed else ""),
        f"total raw {fmt_bytes(raw)}, compressed {fmt_bytes(comp)}, ratio {raw / comp:.2f}:1",
        "max error  " + "  ".join(f"{k} {v:.6f}" for k, v in err.items()),
        "ratio      " + "  ".join(f"{k} {v:.2f}" for k, v in ratio.items()),
    ]
    return table(cells, right=(1, 2, 3, 4, 5, 6, 8)) + "\n" + "\n".join(summary) + "\n"


def cmd_stats(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Compress many clips in parallel; one row per clip, a summary, optionally a CSV."""
    settings = settings_from(args)
    if args.jobs is not None and args.jobs < 1:
        raise CliError(f"--jobs must be at least 1, got {args.jobs}")
    jobs = collect_clips(args.paths)
    if not jobs:
        raise CliError(f"no clips ({', '.join(clip_extensions())}) in {' '.join(args.paths)}")
    check_outputs([args.csv], [path for path, _ in jobs])
    workers = min(args.jobs or os.cpu_count() or 1, len(jobs))
    bar = ProgressBar(err, len(jobs))
    skipped = 0

    def on_done(r: dict) -> None:
        nonlocal skipped
        if "error" in r:
            skipped += 1
            bar.note(f"skipped: {r['error']}")
        bar.step(r["name"])

    try:
        results = run_jobs(
            jobs, settings, load_options(args), workers, on_done, args.shell_distance
        )
    finally:
        bar.close()
    rows = [r for r in results if "error" not in r]
    if not rows:
        raise CliError(f"none of the {len(jobs)} files could be compressed")
    if args.csv:
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=STATS_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        write_text_output(args.csv, buf.getvalue(), out)
    if args.csv != "-":
        out.write(stats_report(rows, skipped))
    return EXIT_OK


# --- bench ----------------------------------------------------------------------------------


def cmd_bench(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Our codec against ACL, clip by clip; speed, size, error and memory targets."""
    from codec import bench

    if args.repeat < 1:
        raise CliError(f"--repeat must be at least 1, got {args.repeat}")
    check_outputs([args.json], [args.reference])
    clips = bench.clips_from(args.clips) if args.clips else bench.default_clips(args.shared)
    report = bench.run(
        clips,
        repeat=args.repeat,
        peer=args.peer,
        reference=args.reference,
        processes=not args.no_processes,
        progress=lambda m: (err.write(m + "\n"), err.flush()),
    )
    out.write(bench.format_report(report))
    if args.json:
        write_text_output(args.json, dumps_json(report), out)
    return EXIT_OK if report["all_pass"] else EXIT_FAIL


# --- parser and main ------------------------------------------------------------------------


def positive_float(text: str) -> float:
    """A float from the command line (its sign is checked by CompressionSettings)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def shell_distance_arg(text: str) -> float | str:
    """`--shell-distance`: a number, or `mesh` for per-joint shells measured on the skin."""
    if text.strip().lower() == MESH:
        return MESH
    return positive_float(text)


def add_settings_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--precision",
        type=positive_float,
        metavar="P",
        help="error bound for every joint, in clip units (default: the clip's, 0.01 cm)",
    )
    p.add_argument(
        "--shell-distance",
        type=shell_distance_arg,
        metavar="D|mesh",
        help="shell distance for every joint (default: the clip's, 3 cm); 'mesh': each "
        "joint's own, the farthest vertex it moves with weight over 0.1 in its bind space "
        "(joints without vertices: their children's; without skinned children: 3 cm)",
    )
    p.add_argument(
        "--level",
        choices=LEVELS,
        default="automatic",
        help="compression level (default: automatic)",
    )
    p.add_argument(
        "--no-loop", action="store_true", help="keep the last sample even when it matches the first"
    )
    add_reader_flags(p)


def add_reader_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--units",
        choices=UNITS,
        help="what one unit of the file is (default auto: what FBX/USD/glTF declare; for BVH "
        "the unit in which the skeleton is human-sized); cmu = CMU mocap units",
    )
    p.add_argument(
        "--sample-rate",
        type=positive_float,
        metavar="HZ",
        help="resample glTF/FBX/USD at this rate (default: glTF's own keys when uniform, "
        "else 30 Hz; FBX's frame rate; USD's time codes)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Shellscope's ACL-style animation codec on the command line.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("compress", help="compress one clip, report its stats, write .ssc")
    p.add_argument(
        "clip",
        metavar="CLIP",
        help=".bvh, .gltf/.glb, .fbx, .usd/.usda/.usdc/.usdz, .acl.sjson (each also as "
        ".gz/.xz/.zst) or .ssc",
    )
    p.add_argument("-o", "--output", metavar="OUT.ssc", help="write the compressed file")
    add_settings_flags(p)
    p.add_argument("--json", metavar="FILE|-", help="write the stats as JSON ('-': stdout only)")
    p.add_argument(
        "--no-metadata",
        action="store_true",
        help="leave out names, parents and bind pose (smaller, not self-decoding)",
    )
    p.add_argument(
        "--animation",
        metavar="NAME",
        help="glTF animation, FBX animation stack or USD skeleton to read (default: first)",
    )
    p.set_defaults(func=cmd_compress)

    p = sub.add_parser(
        "decompress", help="decode a .ssc into the lossy clip (SJSON, BVH or a glTF copy)"
    )
    p.add_argument("input", metavar="IN.ssc")
    p.add_argument("-o", "--output", required=True, metavar="OUT.acl.sjson|OUT.bvh|OUT.glb")
    p.add_argument(
        "--source",
        metavar="CLIP.glb",
        help="for .glb/.gltf outputs: the glTF the clip came from (default: IN's name with "
        ".glb or .gltf, beside it)",
    )
    p.add_argument(
        "--animation",
        metavar="NAME",
        help="for .glb/.gltf outputs: the source animation to replace (default: the one "
        "named like the clip, the only one, or the only one of the clip's length)",
    )
    p.add_argument("--units", choices=UNITS, help="for .glb/.gltf: --units used at compress")
    p.set_defaults(func=cmd_decompress)

    p = sub.add_parser("info", help="header, sizes, segments and bit rates of a .ssc")
    p.add_argument("input", metavar="IN.ssc")
    p.add_argument("--json", metavar="FILE|-", help="also write the fields as JSON")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("stats", help="compress clips and folders in parallel, summarise")
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="clips, or folders searched recursively for .bvh, .glb, .gltf, .fbx, .usd, .usda, "
        ".usdc, .usdz and .acl.sjson files (also .gz/.xz/.zst)",
    )
    p.add_argument("--csv", metavar="FILE|-", help="write one row per clip as CSV")
    p.add_argument(
        "--jobs", "-j", type=int, metavar="N", help="worker processes (default: CPU count)"
    )
    add_settings_flags(p)
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("bench", help="our codec against ACL: sizes, errors, speed, memory")
    p.add_argument(
        "--clips",
        nargs="+",
        metavar="FILE[:ANIMATION]",
        help="clips to bench (default: ACL's reference clips, the run, the jumps, boxing and "
        "Fox Walk/Run/Survey from tests/data)",
    )
    p.add_argument("--shared", action="store_true", help="the default clips from ../shared/data")
    p.add_argument(
        "--peer",
        metavar="PATH",
        help="ACL's acl_compressor: run it on every clip in the same run (see its README)",
    )
    p.add_argument("--reference", metavar="FILE", help="ACL reference JSON (without --peer)")
    p.add_argument(
        "--repeat",
        type=int,
        default=5,
        metavar="N",
        help="compressions per clip, median reported (default 5)",
    )
    p.add_argument(
        "--no-processes",
        action="store_true",
        help="skip the two fresh-process measurements (cold JIT start, peak memory)",
    )
    p.add_argument("--json", metavar="FILE|-", help="also dump the numbers as JSON")
    p.set_defaults(func=cmd_bench)
    return parser


@dataclass
class _Streams:
    out: TextIO
    err: TextIO


def main(
    argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    """Run the CLI on `argv` (default sys.argv[1:]); returns the exit code."""
    io_ = _Streams(stdout or sys.stdout, stderr or sys.stderr)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse already printed usage and the error (or --help)
        return int(e.code or 0) if not isinstance(e.code, str) else EXIT_ERROR
    try:
        with atomic.exit_cleanly_on_signals():
            return int(args.func(args, io_.out, io_.err))
    except (CliError, ShellscopeError) as e:
        io_.err.write(f"{PROG} {args.command}: error: {one_line(e)}\n")
    except RunFailed as e:
        io_.err.write(f"{PROG} {args.command}: failed: {one_line(e)}\n")
        return EXIT_FAIL
    except KeyboardInterrupt:
        io_.err.write(f"{PROG} {args.command}: interrupted\n")
        return 130
    except atomic.Terminated as e:
        io_.err.write(f"{PROG} {args.command}: terminated\n")
        return int(e.code or 1)
    except BrokenPipeError:  # e.g. piped into `head`
        return EXIT_OK
    except MemoryError:
        io_.err.write(f"{PROG} {args.command}: failed: out of memory\n")
        return EXIT_FAIL
    except Exception as e:  # a codec bug: still one line, never a traceback
        io_.err.write(
            f"{PROG} {args.command}: internal error ({type(e).__name__}: {one_line(e)}); "
            "please report it\n"
        )
        return EXIT_FAIL
    return EXIT_ERROR


def one_line(error: BaseException) -> str:
    """An error's message on one line (a message holding newlines is joined with ' / ')."""
    return " / ".join(part.strip() for part in str(error).splitlines() if part.strip())
