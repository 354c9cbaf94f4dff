"""The flags several commands share: compression settings and reader options, and what they
mean for the clip (`--shell-distance mesh`)."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from codec.cli.failures import CliError
from codec.errors import ShellscopeError
from codec.model.clip import Clip
from codec.model.limits import distance_problem, rate_problem
from codec.run_settings import MESH, Flags, RunSettings
from codec.settings import BIND_MODES, LEVELS, CompressionSettings

UNITS = ("auto", "mm", "cm", "dm", "m", "inch", "ft", "cmu")


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


def _has(p: Any, flag: str) -> bool:
    return any(flag in a.option_strings for a in p._actions)


def add_tuning_flags(p: Any) -> None:
    """The tuning flags `python -m codec compress` and `shellscope` share (each added
    unless the parser has it already): codec, precision, shell distance, level, skin-strict,
    overrides, settings. Their order of precedence is codec.run_settings' (a flag wins over
    the clip's sidecar, which wins over the clip's own values)."""
    flags: list[tuple[str, dict[str, Any]]] = [
        (
            "--codec",
            {
                "metavar": "NAME",
                "help": "the codec to compress with (default: the sidecar's, else acl-style; "
                "`python -m codec codecs` lists them)",
            },
        ),
        (
            "--precision",
            {
                "type": positive_float,
                "metavar": "P",
                "help": "error bound for every joint, in clip units (default: the sidecar's, "
                "else the clip's, 0.01 cm)",
            },
        ),
        (
            "--shell-distance",
            {
                "type": shell_distance_arg,
                "metavar": "D|mesh",
                "help": "shell distance for every joint (default: the sidecar's, else the "
                "clip's, 3 cm); 'mesh': each joint's own, the farthest vertex it moves with "
                "weight over 0.1 in its bind space (joints without vertices: their "
                "children's; without skinned children: 3 cm)",
            },
        ),
        (
            "--level",
            {
                "choices": LEVELS,
                "help": "compression level (default: the sidecar's, else automatic)",
            },
        ),
        (
            "--skin-strict",
            {
                "action": "store_true",
                "default": None,
                "help": "keep every vertex of the clip's skinned meshes within the precision of "
                "its strongest joint at every sample (the true skin error, not the shells): "
                "shells from the mesh, then precisions tightened where the skin is over; "
                "needs a skinned mesh (`stats`: clips without one compress as usual) "
                "(default: the sidecar's, else off)",
            },
        ),
        (
            "--bind",
            {
                "choices": BIND_MODES,
                "help": "acl-style: what default sub-tracks hold; best tries strip (the bind "
                "pose, ACL's stripping), none (the identity) and additive (the clip stored as "
                "an additive0 on the bind pose) and keeps the smallest strict one; auto "
                "(default) runs strip and tries the others only where they may win big, at "
                "strip's cost (README: Bind modes)",
            },
        ),
        (
            "--compensate",
            {
                "action": "store_true",
                "default": None,
                "help": "acl-style: try in-place error compensation (each animated child "
                "corrects its decoded parent's error in object space) and keep it where it is "
                "smaller and strict (default: off)",
            },
        ),
        (
            "--clean-defaults",
            {
                "type": float,
                "metavar": "D",
                "help": "DESTRUCTIVE: snap every sub-track that stays within D (clip units, "
                "on its joint's shell, local space) of its bind value exactly to it before "
                "compressing; the clip measured is the cleaned one and the stats list what "
                "changed (default: 0, off)",
            },
        ),
        (
            "--overrides",
            {
                "metavar": "FILE",
                "help": "tuning (a sidecar or a JSON list of rules) over the clip's "
                "CLIP.shellscope.json: its settings win over the sidecar's, its rules come "
                "after the sidecar's",
            },
        ),
        (
            "--settings",
            {
                "metavar": "FILE",
                "help": "the complete settings of an earlier run, in place of the clip's "
                "sidecar and defaults: a stats JSON (the window's, --export-stats, compress "
                "--json), a library JSON/CSV (this clip's row) or row, a .ssc that carries "
                "them, or a sidecar; flags given as well still win",
            },
        ),
        (
            "--acl-compressor",
            {
                "metavar": "PATH",
                "help": "ACL 2.1's acl_compressor, which --codec acl-2.1 runs (default: "
                "$SHELLSCOPE_ACL_COMPRESSOR)",
            },
        ),
    ]
    for flag, kwargs in flags:
        if not _has(p, flag):
            p.add_argument(flag, **kwargs)


def add_settings_flags(p: argparse.ArgumentParser) -> None:
    add_tuning_flags(p)
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
        metavar="F",
        help="DESTRUCTIVE: strip at least this share (0..1) of the keyframes, those whose "
        "removal adds the least error first, even past the precision (default 0)",
    )
    p.add_argument(
        "--strip-threshold",
        type=positive_float,
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
    add_bvh_positions_flag(p)


BVH_POSITIONS_HELP = (
    "how a BVH reads position channels of non-root joints: add (to OFFSET, as MakeHuman "
    "writes them), replace (OFFSET: the joint's local translation, as Blender reads them) or "
    "auto (default: decided from the first frame, and said in the clip's warnings)"
)


def add_bvh_positions_flag(p: argparse.ArgumentParser | Any) -> None:
    """`--bvh-positions auto|add|replace` (codec.formats.bvh.POSITIONS)."""
    p.add_argument("--bvh-positions", choices=("auto", "add", "replace"), help=BVH_POSITIONS_HELP)


def run_flags(args: argparse.Namespace) -> Flags:
    """The resolver's flags from the command line (codec.run_settings), after the flags'
    own checks (CliError naming the flag)."""
    for flag in ("precision", "shell_distance"):
        value = getattr(args, flag, None)
        if value is None or value == MESH:
            continue
        problem = distance_problem(value)
        if problem and value > 0:  # non-positive values get CompressionSettings' message
            raise CliError(f"--{flag.replace('_', '-')}: {problem}")
    # the same checks and messages as the clip-wide settings (the values reach the clip
    # through codec.tuning, per joint)
    shell = getattr(args, "shell_distance", None)
    CompressionSettings(
        precision=getattr(args, "precision", None),
        shell_distance=None if shell == MESH else shell,
        strip_proportion=getattr(args, "strip_proportion", None) or 0.0,
        strip_threshold=getattr(args, "strip_threshold", None) or 0.0,
    )
    from codec.codecs import registry

    codec = getattr(args, "codec", None)
    if codec is not None:
        try:
            registry.chosen(codec)
        except ShellscopeError as e:
            raise CliError(f"--codec: {e}") from None
    check_codec_available(args, codec or registry.DEFAULT)
    rate = getattr(args, "sample_rate", None)
    if rate is not None and rate_problem(rate):
        raise CliError(f"--sample-rate: {rate_problem(rate)}")
    return Flags(
        codec=codec,
        precision=getattr(args, "precision", None),
        shell_distance=shell,
        level=getattr(args, "level", None),
        skin_strict=True if getattr(args, "skin_strict", None) else None,
        strip_trivial=False if getattr(args, "no_strip_trivial", False) else None,
        strip_proportion=getattr(args, "strip_proportion", None),
        strip_threshold=getattr(args, "strip_threshold", None),
        bind=getattr(args, "bind", None),
        compensate=True if getattr(args, "compensate", None) else None,
        clean_defaults=getattr(args, "clean_defaults", None),
        loop_optimization=False if getattr(args, "no_loop", False) else None,
        include_metadata=False if getattr(args, "no_metadata", False) else None,
        animation=getattr(args, "animation", None),
        units=getattr(args, "units", None),
        sample_rate=rate,
        bvh_positions=getattr(args, "bvh_positions", None),
        overrides=getattr(args, "overrides", None),
        settings=getattr(args, "settings", None),
    )


def check_codec_available(args: argparse.Namespace, codec: str) -> None:
    """Take `--acl-compressor` (this process and the workers it starts), then CliError when
    the chosen codec cannot run here (acl-2.1 without acl_compressor)."""
    from codec.codecs import acl_compressor_path, registry

    path = getattr(args, "acl_compressor", None)
    if path:
        acl_compressor_path.configure(path)
    if codec == "acl-2.1" and getattr(args, "acl_output", None):
        return  # ACL's output file is measured as acl-2.1: nothing runs acl_compressor
    if codec != registry.AUTO:
        why = registry.unavailable(codec)
        if why:
            raise CliError(f"--codec {codec} is unavailable: {why}")


SHOWN_UNMATCHED = 2  # rules named one by one before the rest are counted


def reader_options(path: str, flags: Flags) -> dict[str, Any]:
    """How the clip is read: the flags', else the --settings file's (CliError naming it)."""
    from codec.run_settings import resolve_reader

    try:
        return resolve_reader(path, flags)
    except ShellscopeError as e:
        raise CliError(str(e)) from None


def resolved_run(
    clip: Clip, path: str, flags: Flags, err: TextIO, strict_mesh: bool = True
) -> RunSettings:
    """The run's complete settings (codec.run_settings.resolve_run, as the window takes
    them); warns on `err` of rules that match no joint. CliError naming the file for an
    unusable tuning file, and (`strict_mesh`) for shells from the mesh or skin-strict on a
    clip without a skinned mesh."""
    from codec.run_settings import resolve_run

    try:
        run = resolve_run(path, clip.name, flags)
    except ShellscopeError as e:
        raise CliError(str(e)) from None
    problem = run.mesh_problem(clip)
    if problem and strict_mesh:
        raise CliError(f"{path}: {problem}")
    unmatched = [r.pattern for r in run.rules if not r.matches(clip.skeleton.names).any()]
    for pattern in unmatched[:SHOWN_UNMATCHED]:
        err.write(f"warning: {path}: rule {pattern!r} matches no joint\n")
    if len(unmatched) > SHOWN_UNMATCHED:  # a file of 20,000 rules: three lines, not 20,000
        err.write(
            f"warning: {path}: {len(unmatched) - SHOWN_UNMATCHED:,} more rules match no joint\n"
        )
    return run


def tuning_note(run: RunSettings) -> str | None:
    """The one line saying which tuning files a run applied (None: none)."""
    if not run.sources:
        return None
    n = len(run.rules)
    return f"tuning           {' + '.join(run.sources)} ({n} rule{'s' if n != 1 else ''})"


def warn_unused_reader_flags(args: argparse.Namespace, err: TextIO) -> None:
    """Say so when a flag given does not apply to the file's format (rather than ignore it)."""
    from codec.formats import SPECS, format_of

    fmt = format_of(args.clip)
    for flag, option in (
        ("--sample-rate", "sample_rate"),
        ("--animation", "animation"),
        ("--bvh-positions", "bvh_positions"),
    ):
        if getattr(args, option, None) is None:
            continue
        takers = [s.label for s in SPECS.values() if option in s.read_options]
        if fmt is None or option not in SPECS[fmt].read_options:
            named = ", ".join(takers[:-1]) + f" and {takers[-1]}" if len(takers) > 1 else takers[0]
            err.write(f"warning: {args.clip}: {flag} applies to {named}; ignored\n")
