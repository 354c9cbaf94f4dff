"""`decompress`: a .ssc back to a lossy clip: ACL SJSON, BVH, or a copy of its glTF."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from codec.cli.failures import EXIT_OK, CliError, RunFailed
from codec.cli.files import check_outputs, read_ssc
from codec.cli.flags import UNITS
from codec.model.clip import Clip


def add_parser(sub: Any) -> None:
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


def cmd_decompress(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Decode a .ssc (with metadata) and write the lossy clip: ACL SJSON, BVH, or a copy of
    the source glTF with its animation replaced (.glb / .gltf)."""
    from codec.codecs import registry
    from codec.errors import CompressedFormatError
    from codec.formats import format_of, save_clip

    fmt = format_of(args.output)
    if fmt not in ("sjson", "bvh", "gltf") or args.output.lower().endswith((".gz", ".xz", ".zst")):
        raise CliError(f"{args.output}: decompress writes .acl.sjson, .bvh, .glb or .gltf files")
    check_outputs([args.output], [args.input, args.source, find_gltf_source(args.input)])
    frame = read_ssc(args.input)
    if frame.skeleton is None:
        raise CliError(
            f"{args.input}: has no metadata block (compressed with --no-metadata), "
            "so it cannot be decoded on its own"
        )
    try:
        decoder = registry.by_id(frame.codec_id).decode(frame.payload, frame.skeleton)
    except CompressedFormatError as e:
        raise CliError(f"{args.input}: {e}") from None
    # every source sample: a wrapping clip's dropped last sample is the first one again
    clip = decoder.decode_source(Path(args.input).name.removesuffix(".ssc"))
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
