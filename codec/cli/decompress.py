"""`decompress`: a .ssc back to a lossy clip (ACL SJSON, BVH, USD, or a copy of its glTF),
measured in the file it writes."""

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
        "decompress",
        help="decode a .ssc into the lossy clip (ACL SJSON, BVH, USD, or a glTF copy), "
        "measured in the file",
    )
    p.add_argument("input", metavar="IN.ssc")
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="the lossy clip: .acl.sjson (each joint's precision and shell distance, as "
        "ACL 2.1 reads them), .bvh, .usda/.usdc/.usdz (a copy of a USD source with its "
        "SkelAnimation replaced, else a new stage), .glb/.gltf (a copy of the glTF source "
        "with its animation replaced)",
    )
    p.add_argument(
        "--source",
        metavar="CLIP",
        help="the clip the .ssc was compressed from (default: IN's name with a clip's "
        "extension, beside it): the raw clip the file's error is measured against, and the "
        "file a .glb/.gltf (required) or USD output copies",
    )
    p.add_argument(
        "--animation",
        metavar="NAME",
        help="the source's animation (glTF: the one to replace; default: the one named like "
        "the clip, the only one, or the only one of the clip's length)",
    )
    p.add_argument("--units", choices=UNITS, help="the source's --units, as given at compress")
    p.set_defaults(func=cmd_decompress)


def cmd_decompress(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Decode a .ssc (with metadata) and write the lossy clip, measured from the file's own
    values against the raw source clip when it is found (else against the decoding)."""
    from codec.codecs import registry
    from codec.errors import ClipFormatError, CompressedFormatError
    from codec.lossy_export import EXTENSIONS, Source, export_format, lossy_file

    fmt = export_format(args.output)
    if fmt is None:
        raise CliError(f"{args.output}: decompress writes {EXTENSIONS} files")
    source = Path(args.source) if args.source else find_source(args.input)
    check_outputs([args.output], [args.input, source])
    if args.source and not source.is_file():  # type: ignore[union-attr]
        raise CliError(f"{source}: --source must be an existing clip file")
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
        source = _gltf_source(args, source, clip, out)
    if source is not None and not args.source:
        out.write(f"source: {source} (found beside {args.input}; --source to choose)\n")
    raw = _raw_clip(source, clip, args, err)
    try:
        written = lossy_file(
            args.output,
            clip,
            Source(source, args.animation or (clip.name if fmt == "gltf" else None), args.units),
            reference=raw,
        )
        written.write()
    except OSError as e:
        raise CliError(f"{args.output}: cannot write: {e.strerror or e}") from None
    except ClipFormatError as e:  # the source holds what cannot be copied: bad input
        raise CliError(str(e)) from None
    except ValueError as e:  # e.g. names SJSON cannot hold
        raise RunFailed(f"{args.output}: {e}") from None
    for w in written.notes:
        err.write(f"warning: {args.output}: {w}\n")
    out.write(
        f"wrote {args.output}: {clip.num_joints} joints, {clip.num_samples} samples "
        f"at {clip.sample_rate:g} Hz\n"
    )
    for line in written.summary():
        out.write(f"  {line}\n")
    if not written.measured.met:
        err.write(f"warning: {args.output}: {written.measured.line()}\n")
    return EXIT_OK


def find_source(ssc_path: str) -> Path | None:
    """The clip a .ssc was most likely made from: the same name with a clip's extension
    (plain or compressed), in the same folder; glTF first, USD last (a USD file beside it is
    as likely an earlier export as the source)."""
    from codec.formats import clip_extensions, format_of

    stem = Path(ssc_path).name.removesuffix(".ssc")
    exts = sorted(
        (e for e in clip_extensions() if e != ".ssc"),
        key=lambda e: {"gltf": 0, "usd": 2}.get(format_of("x" + e) or "", 1),
    )
    for ext in exts:
        cand = Path(ssc_path).with_name(stem + ext)
        if cand.is_file():
            return cand
    return None


def _gltf_source(args: argparse.Namespace, source: Path | None, clip: Clip, out: TextIO) -> Path:
    """The glTF a .glb/.gltf output copies (CliError when there is none)."""
    from codec.formats import format_of
    from codec.formats.gltf_lossy import pick_animation

    if source is None or format_of(source) != "gltf":
        raise CliError(
            f"{args.output}: a lossy glTF is a copy of the source glTF, and none was found "
            f"beside {args.input}: give it with --source CLIP.glb"
        )
    if str(source).lower().endswith((".gz", ".xz", ".zst")):
        raise CliError(f"{source}: decompress the source glTF first")
    args.animation = pick_animation(source, clip, args.animation)
    out.write(f"replacing animation {args.animation!r} of {source}\n")
    return source


def _raw_clip(
    source: Path | None, clip: Clip, args: argparse.Namespace, err: TextIO
) -> Clip | None:
    """The raw clip of `source` as it was compressed (the .ssc's joints and samples), or None
    (with a warning when a source was there but is not the clip's). Of a file with several
    animations: --animation, else the one named like the clip, else the one that fits."""
    from codec.errors import ShellscopeError
    from codec.formats import format_of, list_animations, load_clip, multi_animation

    if source is None:
        return None
    options: dict[str, Any] = {"units": args.units} if args.units else {}
    try:
        names: list[str | None] = [None]
        if multi_animation(format_of(source)):
            found = list_animations(source)
            names = [args.animation] if args.animation else found
            if not args.animation and clip.name in found:
                names = [clip.name]
        for name in names:
            raw = load_clip(source, **options, **({"animation": name} if name else {}))
            if (raw.skeleton.names, raw.num_samples) == (clip.skeleton.names, clip.num_samples):
                if len(names) > 1:
                    args.animation = name
                return raw
    except ShellscopeError as e:
        err.write(f"warning: {source}: not measured against it ({e})\n")
        return None
    err.write(
        f"warning: {source}: is not the clip of {args.input} (its joints or samples differ): "
        "the file is measured against the decoding instead\n"
    )
    return None
