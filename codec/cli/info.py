"""`info`: what a .ssc file holds: header, sizes, segments, sub-track kinds and bit rates."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from codec.cli.failures import EXIT_OK
from codec.cli.files import check_outputs, dumps_json, read_ssc, write_text_output
from codec.report_text import fmt_bytes

if TYPE_CHECKING:
    from codec.ssc_format import ParsedFile


def add_parser(sub: Any) -> None:
    p = sub.add_parser("info", help="header, sizes, segments and bit rates of a .ssc")
    p.add_argument("input", metavar="IN.ssc")
    p.add_argument("--json", metavar="FILE|-", help="also write the fields as JSON")
    p.set_defaults(func=cmd_info)


def ssc_info(parsed: ParsedFile) -> dict[str, Any]:
    """Header fields, sizes, segments, sub-track kinds and bit-rate histogram of a parsed .ssc."""
    from codec import ssc_format
    from codec.bit_rates import BIT_RATE_BITS, SUB_TRACKS, TrackKind

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
        "num_stripped_keyframes": int(ns - enc.retained_mask().sum()),
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
        f"  stored samples   {info['num_stored_samples']} at {info['sample_rate']:g} Hz "
        f"({info['num_stripped_keyframes']} keyframes stripped)",
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
