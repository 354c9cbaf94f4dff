"""The flags several commands share: compression settings and reader options, and what they
mean for the clip (`--shell-distance mesh`)."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from codec.cli.failures import CliError
from codec.errors import ShellscopeError
from codec.model.clip import Clip
from codec.model.limits import distance_problem, rate_problem
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
        "--codec",
        metavar="NAME",
        default="acl-style",
        help="the codec to compress with (default: acl-style; `codecs` lists them)",
    )
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
    from codec.codecs import registry

    codec = getattr(args, "codec", registry.DEFAULT)
    try:
        registry.get(codec)
    except ShellscopeError as e:
        raise CliError(f"--codec: {e}") from None
    return CompressionSettings(
        codec=codec,
        level=args.level,
        precision=args.precision,
        shell_distance=None if args.shell_distance == MESH else args.shell_distance,
        loop_optimization=not args.no_loop,
        include_metadata=not getattr(args, "no_metadata", False),
    )


def apply_shell_source(clip: Clip, shell_distance: float | str | None, path: str) -> Clip:
    """`--shell-distance mesh`: every joint's shell distance measured on the clip's skinned
    mesh (codec.measure.mesh_shells; CliError naming the file when it has none)."""
    if shell_distance != MESH:
        return clip
    from codec.measure.mesh_shells import with_mesh_shells

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
    from codec.formats import SPECS, format_of

    fmt = format_of(args.clip)
    for flag, option in (("--sample-rate", "sample_rate"), ("--animation", "animation")):
        if getattr(args, option, None) is None:
            continue
        takers = [s.label for s in SPECS.values() if option in s.read_options]
        if fmt is None or option not in SPECS[fmt].read_options:
            named = ", ".join(takers[:-1]) + f" and {takers[-1]}"
            err.write(f"warning: {args.clip}: {flag} applies to {named}; ignored\n")
