"""`shellscope CLIP --export-stats S.json --export-csv J.csv --export-lossy L.acl.sjson`: no window.

Build machines and scripts need the same numbers the inspector shows without a display, so this
path is Qt-free: it loads the clip, applies the clip's sidecar (or `--overrides FILE`) and the
command-line settings exactly as the document does, compresses once with the settings the
controller would use, and writes the requested exports together at the end, all or none
(codec.formats.atomic.all_or_none): a failed run changes no file. Before any work, every export path
is checked (a known file type, a writable folder, not the clip, its sidecar or the overrides
file, no two alike). Exit codes, as `python -m codec`'s: 0 ok; 1 the run failed on valid
input (compression or an export could not be made, a non-finite error); 2 bad input or usage
(an unreadable clip or overrides file, bad settings, an export path that cannot be written);
every failure is one line on stderr naming the file.

app/__main__.py adds the --export-* flags with `add_export_arguments` (and --precision /
--shell-distance / --level / --overrides where its parser lacks them) and, before any
QApplication exists, hands a run that asks for exports to `run_headless`.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from app.model.comparison import Variant, exported_pair, parse_variant
from app.model.exports import (
    export_joint_csv,
    export_lossy,
    export_stats,
    stats_dict,
    view_facts,
    write_json,
)
from codec.cli.flags import add_tuning_flags
from codec.errors import ShellscopeError
from codec.formats import atomic
from codec.formats.output_paths import outputs_problem
from codec.lossy_export import LossyFile
from codec.model.clip import Clip
from codec.result import Result
from codec.run_settings import RunSettings
from codec.sidecar import sidecar_path
from codec.tuning import JointOverride

EXPORT_FLAGS = ("export_stats", "export_csv", "export_lossy")
SCREENSHOT_FLAGS = ("screenshot", "screenshot_view")


def _has(parser: argparse.ArgumentParser, flag: str) -> bool:
    return any(flag in a.option_strings for a in parser._actions)


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the headless export flags (and the tuning flags the parser does not have yet)."""
    g = parser.add_argument_group("export without a window")
    g.add_argument("--export-stats", metavar="JSON", help="write stats (ACL key names) and exit")
    g.add_argument("--export-csv", metavar="CSV", help="write per-joint stats and exit")
    g.add_argument(
        "--export-lossy",
        metavar="CLIP",
        help="write the decoded clip and exit: .acl.sjson (each joint's precision), .bvh, "
        ".usda/.usdc/.usdz (a copy of a USD source, else a new stage), or .glb/.gltf (a copy "
        "of the glTF source with its animation replaced); measured from the file's own values "
        "and kept within precision",
    )
    # the tuning flags of `python -m codec compress`, the same definitions (codec.cli.flags)
    add_tuning_flags(g)
    c = parser.add_argument_group("compare (A/B)")
    c.add_argument(
        "--a",
        metavar="SPEC",
        help="A of a comparison: 'KEY=VALUE ...' over the clip's tuning (keys: codec, "
        "precision, shell, level, rounding); with --export-stats the JSON holds 'a' and 'b'",
    )
    c.add_argument("--b", metavar="SPEC", help="B of a comparison, as --a")


def shell_distance_arg(text: str) -> float | str:
    """`--shell-distance`: a number, or `mesh` (each joint's shell from the skinned mesh)."""
    if text.strip().lower() == "mesh":
        return "mesh"
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number or 'mesh': {text!r}") from None


def variants_from(args: argparse.Namespace) -> tuple[Variant, Variant] | None:
    """The parsed --a / --b (either alone compares against the clip's own tuning); None
    without them. ValueError names the flag and what was wrong."""
    a, b = getattr(args, "a", None), getattr(args, "b", None)
    if a is None and b is None:
        return None
    return parse_variant(a or "", "--a"), parse_variant(b or "", "--b")


def wants_headless(args: argparse.Namespace) -> bool:
    """True when any --export-* flag was given."""
    return any(getattr(args, name, None) for name in EXPORT_FLAGS)


class _BadUse(Exception):
    """Exit 2: an export path that cannot be written or would overwrite an input."""


def run_inputs(args: argparse.Namespace, clip_path: str) -> list[Path]:
    """The files a run of `shellscope` reads: the clip, its sidecar, the overrides file."""
    inputs = [Path(clip_path), sidecar_path(clip_path)]
    if getattr(args, "overrides", None):
        inputs.append(Path(args.overrides))
    return inputs


def outputs_of_run(args: argparse.Namespace, clip_path: str) -> str | None:
    """Why an export or screenshot of this run may not be written ("PATH: why"), or None."""
    try:
        _check_exports(args, clip_path)
    except _BadUse as e:
        return str(e)
    return None


def _check_exports(args: argparse.Namespace, clip_path: str) -> None:
    """Refuse, before any work, an export or screenshot that cannot be written or would
    overwrite an input (the clip, its sidecar, the overrides file), a sidecar or another
    output: the one check of every output (codec.formats.output_paths)."""
    from codec.formats import format_of
    from codec.lossy_export import EXTENSIONS, export_format

    for flag in EXPORT_FLAGS:
        value = getattr(args, flag, None)
        if flag != "export_lossy" or not value:
            continue
        if export_format(Path(value)) is None:
            raise _BadUse(f"{value}: --export-lossy writes {EXTENSIONS} files")
        if export_format(Path(value)) == "gltf" and format_of(clip_path) != "gltf":
            raise _BadUse(
                f"{value}: a lossy glTF is a copy of the source glTF, and {clip_path} is not one"
            )
    outputs = [getattr(args, f, None) for f in (*EXPORT_FLAGS, *SCREENSHOT_FLAGS)]
    problem = outputs_problem(outputs, run_inputs(args, clip_path), "an output")
    if problem:
        raise _BadUse(problem)


SHOWN_UNMATCHED = 2  # rules named one by one before the rest are counted


def _warn_unmatched(rules: Sequence[JointOverride], names: tuple[str, ...], err: TextIO) -> None:
    """A warning per rule that matches no joint, the first SHOWN_UNMATCHED of them by name
    and the rest counted on one line: a 20,000-rule file makes three lines, not 20,000."""
    unmatched = [r.pattern for r in rules if not r.matches(names).any()]
    for pattern in unmatched[:SHOWN_UNMATCHED]:
        print(f"shellscope: warning: rule {pattern!r} matches no joint", file=err)
    rest = len(unmatched) - SHOWN_UNMATCHED
    if rest > 0:
        print(f"shellscope: warning: {rest:,} more rules match no joint", file=err)


def _one_line(error: BaseException) -> str:
    return " / ".join(part.strip() for part in str(error).splitlines() if part.strip())


def run_headless(
    args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Compress `args.clip` once and write the requested exports. 0 ok, 1 failed, 2 bad input."""
    out = out or sys.stdout
    err = err or sys.stderr
    clip_path = getattr(args, "clip", None)
    if not clip_path:
        print("shellscope: the --export-* flags need a CLIP", file=err)
        return 2
    try:
        with atomic.exit_cleanly_on_signals():
            return _run(args, clip_path, out, err)
    except KeyboardInterrupt:
        print("shellscope: interrupted", file=err)
        return 130
    except atomic.Terminated as e:
        print("shellscope: terminated", file=err)
        return int(e.code or 1)


def _run(args: argparse.Namespace, clip_path: str, out: TextIO, err: TextIO) -> int:
    import codec  # the codec is heavy; keep `--help` fast
    from codec.cli.failures import CliError
    from codec.cli.flags import run_flags
    from codec.run_settings import resolve_reader, resolve_run

    try:
        _check_exports(args, clip_path)
        flags = run_flags(args)
        clip = codec.load_clip(clip_path, **resolve_reader(clip_path, flags))
        run = resolve_run(clip_path, clip.name, flags)
        for source in run.sources:
            if source != str(getattr(args, "overrides", None)):
                print(f"using {source}", file=out)
        variants = variants_from(args)
        if variants is not None:
            sides = [_side(run, v) for v in variants]
    except (_BadUse, ShellscopeError, CliError, OSError, ValueError, TypeError) as e:
        print(f"shellscope: {_one_line(e)}", file=err)
        return 2

    if variants is not None:
        return _run_pair(args, clip, clip_path, variants, sides, out, err)
    if getattr(args, "shell_distance", None) == "mesh" and not clip.meshes:
        print(
            f"shellscope: {clip_path}: --shell-distance mesh: the clip has no skinned mesh",
            file=err,
        )
        return 2
    if getattr(args, "skin_strict", None) and not clip.meshes:
        print(f"shellscope: {clip_path}: --skin-strict: the clip has no skinned mesh", file=err)
        return 2
    _warn_unmatched(run.rules, clip.skeleton.names, err)
    try:
        result = run.compress(clip)
        s = result.stats
        if not math.isfinite(s["max_error"]):
            print(
                f"shellscope: {clip_path}: the compression's max error is {s['max_error']!r}, "
                "not a finite number: nothing written",
                file=err,
            )
            return 1
        written = []
        inputs = [clip_path, sidecar_path(clip_path), getattr(args, "overrides", None)]
        block = run.block(clip, _view(args, clip, clip_path))
        with atomic.all_or_none():
            if args.export_stats:
                written.append(export_stats(args.export_stats, result, block, inputs=inputs))
            if args.export_csv:
                written.append(export_joint_csv(args.export_csv, result, inputs=inputs))
            if args.export_lossy:
                written.append(
                    export_lossy(args.export_lossy, result, source=clip_path, inputs=inputs)
                )
    except OSError as e:
        print(f"shellscope: {e.filename or 'export'}: cannot write: {e.strerror or e}", file=err)
        return 2
    except ShellscopeError as e:  # names its file
        print(f"shellscope: {_one_line(e)}", file=err)
        return 1
    except Exception as e:  # still one line, never a traceback
        print(f"shellscope: {clip_path}: failed ({type(e).__name__}: {_one_line(e)})", file=err)
        return 1
    print(
        f"{clip_path}: {s['compressed_size']} B (ratio {s['compression_ratio']:.2f}), "
        f"max error {s['max_error']:.6g} at {s['worst_track_name']} {s['worst_time']:.4f} s",
        file=out,
    )
    _print_written(written, out, err)
    return 0


def _print_written(written: list, out: TextIO, err: TextIO) -> None:
    """`wrote PATH` for each file; a lossy export adds its measured figure and notes."""
    for item in written:
        if isinstance(item, LossyFile):
            print(f"wrote {item.path}", file=out)
            for line in item.summary():
                print(f"  {line}", file=out)
            for note in item.notes:
                print(f"shellscope: warning: {item.path}: {note}", file=err)
            if not item.measured.met:
                print(f"shellscope: warning: {item.path}: {item.measured.line()}", file=err)
        else:
            print(f"wrote {item}", file=out)


def _side(run: RunSettings, variant: Variant) -> RunSettings:
    """One side of --a / --b: the variant's keys over the run's settings."""
    changes = variant.tuning()
    if variant.codec is not None:
        changes["codec"] = variant.codec
    return replace(run, tuning=replace(run.tuning, **changes))


def _view(args: argparse.Namespace, clip: Clip, clip_path: str, rounding: str | None = None):
    """What the window would show the result with (the settings block's `view`)."""
    up = getattr(args, "up_axis", None)
    return view_facts(clip, clip_path, up, rounding or getattr(args, "rounding", None) or "none")


def _run_pair(
    args: argparse.Namespace,
    clip: Clip,
    clip_path: str,
    variants: tuple[Variant, Variant],
    sides: list[RunSettings],
    out: TextIO,
    err: TextIO,
) -> int:
    """--a / --b: compress A and B as the window would and write the stats JSON with both
    ('a', 'b', their 'change', and the variants). --export-csv / --export-lossy write B's."""
    results = []
    try:
        for run in sides:
            if run.tuning.shell_from_mesh and not clip.meshes:
                print(f"shellscope: {clip_path}: shell=mesh: the clip has no skin", file=err)
                return 2
            result = run.compress(clip)
            if not math.isfinite(result.stats["max_error"]):
                print(f"shellscope: {clip_path}: a non-finite max error: nothing written", file=err)
                return 1
            results.append(result)
        inputs = [clip_path, sidecar_path(clip_path), getattr(args, "overrides", None)]
        written = []
        a, b = results
        with atomic.all_or_none():
            if args.export_stats:
                pair = [
                    _stats_of(r, run, v, clip, _view(args, clip, clip_path, v.rounding))
                    for r, run, v in zip(results, sides, variants, strict=True)
                ]
                written.append(
                    write_json(args.export_stats, exported_pair(*pair, variants), inputs=inputs)
                )
            if args.export_csv:
                written.append(export_joint_csv(args.export_csv, b, inputs=inputs))
            if args.export_lossy:
                written.append(export_lossy(args.export_lossy, b, source=clip_path, inputs=inputs))
    except OSError as e:
        print(f"shellscope: {e.filename or 'export'}: cannot write: {e.strerror or e}", file=err)
        return 2
    except ShellscopeError as e:
        print(f"shellscope: {_one_line(e)}", file=err)
        return 1
    except Exception as e:  # still one line, never a traceback
        print(f"shellscope: {clip_path}: failed ({type(e).__name__}: {_one_line(e)})", file=err)
        return 1
    for side, r in zip("AB", results, strict=True):
        s = r.stats
        print(
            f"{clip_path} {side}: {s['compressed_size']} B (ratio {s['compression_ratio']:.2f}), "
            f"max error {s['max_error']:.6g} at {s['worst_track_name']} {s['worst_time']:.4f} s",
            file=out,
        )
    _print_written(written, out, err)
    return 0


def _stats_of(
    result: Result, run: RunSettings, variant: Variant, clip: Clip, view: dict
) -> dict[str, Any]:
    d = stats_dict(result, run.block(clip, view))
    d.setdefault("codec", run.tuning.codec)
    return d
