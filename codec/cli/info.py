"""`info`: what a .ssc file holds: the codec, header, sizes, and what the codec tells of its
payload (acl-style: segments, sub-track kinds and bit rates)."""

from __future__ import annotations

import argparse
import json
import re
from typing import TYPE_CHECKING, Any, TextIO

from codec.cli.failures import EXIT_OK, CliError
from codec.cli.files import check_outputs, dumps_json, read_ssc, write_text_output
from codec.cli.report_text import fmt_bytes

if TYPE_CHECKING:
    from codec.codecs.container import Container


def add_parser(sub: Any) -> None:
    p = sub.add_parser("info", help="header, sizes, segments and bit rates of a .ssc")
    p.add_argument("input", metavar="IN.ssc")
    p.add_argument("--json", metavar="FILE|-", help="also write the fields as JSON")
    p.set_defaults(func=cmd_info)


def ssc_info(frame: Container, path: str = "") -> dict[str, Any]:
    """The container's fields and sizes, and what the codec that wrote it tells of its
    payload (`describe`, when the codec has one). A file with its metadata is decoded
    whole first, as `decompress` decodes it, so `info` never vouches for a body that cannot
    be decoded (CliError naming `path`)."""
    from codec.codecs import registry
    from codec.errors import CompressedFormatError

    try:
        codec = registry.by_id(frame.codec_id)
        if frame.skeleton is not None:
            codec.decode(frame.payload, frame.skeleton)
        describe = getattr(codec, "describe", None)
        payload = describe(frame.payload) if describe is not None else {}
    except CompressedFormatError as e:
        raise CliError(f"{path}: {e}" if path else str(e)) from None
    return {
        "magic": frame.data[:4].decode("ascii", "replace"),
        "version": frame.version,
        "codec": codec.name,
        "codec_id": frame.codec_id,
        "flags": frame.flags,
        "has_metadata": frame.skeleton is not None,
        "crc32": f"{frame.crc:08x}",
        "file_size": len(frame.data) - _settings_size(frame),
        "compressed_size": frame.compressed_size,
        "metadata_size": frame.metadata_size,
        **payload,
        **_settings(frame),
    }


def _settings_size(frame: Container) -> int:
    """Bytes the settings block adds to the file (with its length field; 0 without one)."""
    return len(frame.settings) + 4 if frame.flags & 4 else 0


def _settings(frame: Container) -> dict[str, Any]:
    """The settings block the file carries (the run that made it), and its size."""
    if not frame.settings:
        return {}
    try:
        block = json.loads(frame.settings.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CliError(f"the settings block is not JSON ({e})") from None
    return {"settings_size": _settings_size(frame), "settings": block}


def settings_lines(block: Any) -> list[str]:
    """The settings a file was made with: the clip-wide ones, how the clip was read and
    stripped, then every rule as the block lists it (`--json` has the block as is). Names
    from the file are shown JSON-quoted, so no byte of theirs reaches the terminal raw."""
    if not isinstance(block, dict):
        return [f"  settings         not a settings block: {_shown(json.dumps(block))[:200]}"]
    keys = ("codec", "level", "precision", "shell_distance")
    own = "the clip's own"
    parts = [
        f"{k.replace('_', ' ')} {own if block.get(k) is None else _shown(block[k])}" for k in keys
    ]
    if block.get("shell_from_mesh"):
        parts.append("shells from the mesh")
    if block.get("skin_strict"):
        parts.append("skin-strict")
    if block.get("animation"):
        parts.append(f"animation {json.dumps(block['animation'])}")
    head = ", ".join(parts) + f" (Shellscope {_shown(block.get('shellscope', '?'))})"
    strip = block.get("keyframe_stripping")
    strip = strip if isinstance(strip, dict) else {}
    rate = block.get("sample_rate")
    rate_text = "the file's" if rate is None else f"{_shown(rate)} Hz"
    read = (
        f"keyframes: strip trivial {'on' if strip.get('strip_trivial') else 'off'}, "
        f"proportion {_shown(strip.get('proportion'))}, "
        f"threshold {_shown(strip.get('threshold'))}; "
        f"units {_shown(block.get('units'))}, sample rate {rate_text}"
    )
    rules = [r if isinstance(r, dict) else {"pattern": r} for r in _listed(block.get("rules"))]
    lines = [f"  settings         {head}", f"                   {read}"]
    if not rules:
        return [*lines, "  rules            none"]
    for i, rule in enumerate(rules, 1):
        fields = ", ".join(
            f"{k.replace('_', ' ')} {_shown(rule[k])}"
            for k in ("precision", "shell_distance", "rounding")
            if k in rule
        )
        label = f"rule {i}"
        lines.append(f"  {label:<17}{json.dumps(rule.get('pattern'))}" + (fields and f": {fields}"))
    return lines


def _listed(value: object) -> list[Any]:
    """`value` when it is a list (a crafted block's rules may not be), else none."""
    return value if isinstance(value, list) else []


def _shown(value: object) -> str:
    """A value of the block as text: a plain word or number as is, anything else JSON-quoted
    (a crafted file's control characters never reach the terminal)."""
    text = str(value)
    return text if re.fullmatch(r"[\w.+-]+", text, re.ASCII) else json.dumps(text)


def cmd_info(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Print what a .ssc file holds (or its JSON with --json)."""
    check_outputs([args.json], [args.input])
    info = ssc_info(read_ssc(args.input), args.input)
    if args.json:
        write_text_output(args.json, dumps_json(info), out)
        if args.json == "-":
            return EXIT_OK
    flags = [
        f
        for f, on in (
            ("looping", info.get("looping")),
            ("metadata", info["has_metadata"]),
            ("settings", "settings" in info),
        )
        if on
    ]
    lines = [
        f"{args.input}: Shellscope compressed clip, format version {info['version']}",
        f"  magic            {info['magic']}",
        f"  codec            {info['codec']} (id {info['codec_id']})",
        f"  flags            {', '.join(flags) or 'none'}",
        f"  crc32            {info['crc32']}",
    ]
    if "num_joints" in info:
        lines += [
            f"  joints           {info['num_joints']}",
            f"  stored samples   {info['num_stored_samples']} at {info['sample_rate']:g} Hz"
            + (
                f" ({info['num_stripped_keyframes']} keyframes stripped)"
                if "num_stripped_keyframes" in info
                else ""
            ),
        ]
    lines += [
        f"  file size        {fmt_bytes(info['file_size'])}"
        + (f" (+ {fmt_bytes(info['settings_size'])} settings)" if "settings" in info else ""),
        f"  compressed size  {fmt_bytes(info['compressed_size'])}",
        f"  metadata size    {fmt_bytes(info['metadata_size'])}",
    ]
    if "settings" in info:
        lines += settings_lines(info["settings"])
    if "segments" not in info:  # a codec that tells nothing more of its payload
        out.write("\n".join(lines) + "\n")
        return EXIT_OK
    segs = info["segments"]
    seg_sizes = [s["segment_size"] for s in segs]
    lines += [
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
