"""The flags several commands share: compression settings and reader options, and what they
mean for the clip (`--shell-distance mesh`)."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from codec.cli.failures import CliError
from codec.clip import Clip
from codec.errors import ShellscopeError
from codec.limits import distance_problem, rate_problem
from codec.settings import LEVELS, CompressionSettings

UNITS = ("auto", "mm", "cm", "dm", "m", "inch", "ft", "cmu")
MESH = "mesh"  # --shell-distance mesh


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
    p.add_argument(
        "--no-strip-trivial",
        action="store_true",
        help="store every keyframe, also those interpolation rebuilds within every joint's "
        "precision (ACL 2.1's trivial keyframe stripping, on by default)",
    )
    p.add_argument(
        "--strip-proportion",
        type=positive_float,
        default=0.0,
        metavar="F",
        help="DESTRUCTIVE: strip at least this share (0..1) of the keyframes, those whose "
        "removal adds the least error first, even past the precision (default 0)",
    )
    p.add_argument(
        "--strip-threshold",
        type=positive_float,
        default=0.0,
        metavar="E",
        help="DESTRUCTIVE: also strip keyframes whose removal adds at most this error, in "
        "clip units, even past the precision (default 0)",
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
        strip_trivial=not getattr(args, "no_strip_trivial", False),
        strip_proportion=getattr(args, "strip_proportion", 0.0),
        strip_threshold=getattr(args, "strip_threshold", 0.0),
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
