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


def _has(p: Any, flag: str) -> bool:
    return any(flag in a.option_strings for a in p._actions)


def add_tuning_flags(p: Any) -> None:
    """The tuning flags `python -m codec compress` and `shellscope` share (each added
    unless the parser has it already): codec, precision, shell distance, level, overrides.
    A flag given wins over the clip's sidecar, which wins over the clip's own values."""
    flags: list[tuple[str, dict[str, Any]]] = [
        (
            "--codec",
            {
                "metavar": "NAME",
                "default": "acl-style",
                "help": "the codec to compress with (default: acl-style; "
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
            "--overrides",
            {
                "metavar": "FILE",
                "help": "tuning (a sidecar or a JSON list of rules) instead of the clip's "
                "CLIP.shellscope.json",
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
    add_bvh_positions_flag(p)


BVH_POSITIONS_HELP = (
    "how a BVH reads position channels of non-root joints: add (to OFFSET, as MakeHuman "
    "writes them), replace (OFFSET: the joint's local translation, as Blender reads them) or "
    "auto (default: decided from the first frame, and said in the clip's warnings)"
)


def add_bvh_positions_flag(p: argparse.ArgumentParser | Any) -> None:
    """`--bvh-positions auto|add|replace` (codec.formats.bvh.POSITIONS)."""
    p.add_argument("--bvh-positions", choices=("auto", "add", "replace"), help=BVH_POSITIONS_HELP)


def settings_from(
    args: argparse.Namespace, level: str | None = None, skin_strict: bool | None = None
) -> CompressionSettings:
    """CompressionSettings from the shared compression flags (SettingsError when bad); the
    per-joint values (precision, shell distance, rules, shells from the mesh) are the
    clip's, resolved by codec.tuning (`tuned`). `level` and `skin_strict`: the tuning's
    when no flag gives them."""
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
    )
    from codec.codecs import registry

    codec = getattr(args, "codec", registry.DEFAULT)
    try:
        registry.chosen(codec)
    except ShellscopeError as e:
        raise CliError(f"--codec: {e}") from None
    check_codec_available(args, codec)
    return CompressionSettings(
        codec=codec,
        level=args.level or level or "automatic",
        loop_optimization=not args.no_loop,
        include_metadata=not getattr(args, "no_metadata", False),
        strip_trivial=not getattr(args, "no_strip_trivial", False),
        strip_proportion=getattr(args, "strip_proportion", 0.0),
        strip_threshold=getattr(args, "strip_threshold", 0.0),
        skin_strict=bool(getattr(args, "skin_strict", None) or skin_strict),
    )


def check_codec_available(args: argparse.Namespace, codec: str) -> None:
    """Take `--acl-compressor` (this process and the workers it starts), then CliError when
    the chosen codec cannot run here (acl-2.1 without acl_compressor)."""
    from codec.codecs import registry
    from codec.codecs.acl21 import compressor

    path = getattr(args, "acl_compressor", None)
    if path:
        compressor.configure(path)
    if codec != registry.AUTO:
        why = registry.unavailable(codec)
        if why:
            raise CliError(f"--codec {codec} is unavailable: {why}")


SHOWN_UNMATCHED = 2  # rules named one by one before the rest are counted


def tune(
    clip: Clip,
    path: str,
    precision: float | None,
    shell_distance: float | str | None,
    overrides: str | None = None,
) -> tuple[Clip, str | None, list[str]]:
    """The clip as the codec gets it under the flags and the clip's sidecar (or the
    `overrides` file): codec.tuning's one path, as the window takes it. Returns the clip,
    the level the tuning file names (None: none) and the patterns that match no joint;
    CliError naming the file for an unusable tuning file or a mesh the clip lacks."""
    from codec.sidecar import load_tuning
    from codec.tuning import merged, tuned_clip

    try:
        saved, rules, _ = load_tuning(path, overrides, clip.name)
    except ShellscopeError as e:
        raise CliError(str(e)) from None
    settings = merged(saved, precision, shell_distance, None)
    if settings is not None and settings.shell_from_mesh and not clip.meshes:
        raise CliError(f"{path}: --shell-distance mesh: the clip has no skinned mesh")
    unmatched = [r.pattern for r in rules if not r.matches(clip.skeleton.names).any()]
    try:
        return tuned_clip(clip, settings, rules), saved.level if saved else None, unmatched
    except ShellscopeError as e:
        raise CliError(f"{path}: {e}") from None


def tuned(clip: Clip, args: argparse.Namespace, path: str, err: TextIO) -> tuple[Clip, str | None]:
    """`tune` with the command's flags; warns on `err` of rules that match no joint."""
    clip, level, unmatched = tune(
        clip, path, args.precision, args.shell_distance, getattr(args, "overrides", None)
    )
    for pattern in unmatched[:SHOWN_UNMATCHED]:
        err.write(f"warning: {path}: rule {pattern!r} matches no joint\n")
    if len(unmatched) > SHOWN_UNMATCHED:  # a file of 20,000 rules: three lines, not 20,000
        err.write(
            f"warning: {path}: {len(unmatched) - SHOWN_UNMATCHED:,} more rules match no joint\n"
        )
    return clip, level


def saved_skin_strict(path: str, args: argparse.Namespace, animation: str | None = None) -> bool:
    """Whether the clip's tuning file (sidecar or --overrides) turns skin-strict on."""
    from codec.sidecar import load_tuning

    saved, _, _ = load_tuning(path, getattr(args, "overrides", None), animation)
    return bool(saved is not None and saved.skin_strict)


def skin_strict_problem(clip: Clip, settings: CompressionSettings) -> str | None:
    """Why skin-strict cannot run on this clip (None: it can, or it is off)."""
    if settings.skin_strict and not clip.meshes:
        return "--skin-strict: the clip has no skinned mesh (glTF, FBX and USD skins have one)"
    return None


def tuning_note(path: str, args: argparse.Namespace, animation: str | None = None) -> str | None:
    """The one line saying which tuning file a run applied (None: none)."""
    from codec.sidecar import load_tuning

    _, rules, source = load_tuning(path, getattr(args, "overrides", None), animation)
    if source is None:
        return None
    return f"tuning           {source} ({len(rules)} rule{'s' if len(rules) != 1 else ''})"


def load_options(args: argparse.Namespace) -> dict[str, Any]:
    """Reader options given on the command line (only those set)."""
    opts: dict[str, Any] = {}
    if getattr(args, "units", None):
        opts["units"] = args.units
    if getattr(args, "bvh_positions", None):
        opts["bvh_positions"] = args.bvh_positions
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
