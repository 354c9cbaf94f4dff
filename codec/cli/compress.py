"""`compress`: one clip to a .ssc, with a summary of its stats or the stats as JSON."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from codec.cli.failures import EXIT_OK, CliError, check_finite_error
from codec.cli.files import check_outputs, dumps_json, write_outputs
from codec.cli.flags import (
    add_settings_flags,
    reader_options,
    resolved_run,
    run_flags,
    tuning_note,
    warn_unused_reader_flags,
)
from codec.cli.report_text import fmt_bytes
from codec.model.clip import Clip, Skeleton


def add_parser(sub: Any) -> None:
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


def cmd_compress(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Compress one clip; print a summary or JSON stats; write the .ssc when -o is given."""
    from codec.compression import compress
    from codec.formats import load_clip

    flags = run_flags(args)  # the flags' own checks, before any work
    if args.output and not args.output.lower().endswith(".ssc"):
        raise CliError(f"{args.output}: the output of compress must end in .ssc")
    check_outputs([args.output, args.json], [args.clip, args.overrides, args.settings])
    clip = load_clip(args.clip, **reader_options(args.clip, flags))
    if not clip.name:
        clip.name = Path(args.clip).name
    warn_unused_reader_flags(args, err)
    run = resolved_run(clip, args.clip, flags, err)
    note = tuning_note(run)
    result = compress(run.tuned_clip(clip), run.compression_settings(clip))
    stats = stats_json(result, run, clip)
    check_finite_error(args.clip, result.stats)
    data = run.stamp(result.data, clip)  # the .ssc carries the settings it was made with
    write_outputs(
        [
            (args.output, data),
            (args.json, dumps_json(stats) if args.json else ""),
        ],
        out,
    )
    if args.json != "-":
        out.write(compress_summary(args.clip, result.stats, result.clip.skeleton))
        if note:
            out.write(f"  {note}\n")
        out.write(f"  {units_line(clip)}\n")
        if args.output:
            out.write(f"  wrote            {args.output} ({fmt_bytes(len(data))})\n")
    else:  # stdout is the JSON alone: the units statement still reaches the user
        err.write(f"{args.clip}: {units_line(clip)}\n")
        if note:
            err.write(f"{args.clip}: {' '.join(note.split())}\n")
    for w in result.stats["warnings"]:  # the reader's, and a clip no character's size
        err.write(f"warning: {args.clip}: {w}\n")
    return EXIT_OK


def stats_json(result: Any, run: Any, clip: Clip) -> dict[str, Any]:
    """The stats (ACL key names) with the run's settings block under "shellscope", as every
    stats JSON holds it (`compress --settings` reads it back)."""
    return {**result.stats, "shellscope": run.block(clip)}


def compress_summary(path: str, s: dict[str, Any], skeleton: Skeleton) -> str:
    """The short human summary of one compression's stats."""
    precision = skeleton.precision
    prec = float(np.min(precision))
    prec_text = f"{prec:g}" if np.all(precision == prec) else f"{prec:g} (smallest)"
    over = s.get("joints_over_precision", [])
    met = "yes" if s["precision_met"] else f"NO ({len(over)} joints over: {', '.join(over[:5])})"
    level = f", level {s['level']} ({s['requested_level']})" if "level" in s else ""
    lines = [
        f"{path}: {s['num_bones']} joints, {s['num_samples']} samples at {s['sample_rate']:g} Hz "
        f"({s['duration']:.3f} s), codec {s['codec']}{level}"
        + (", looping" if s.get("looping") else ""),
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
        *([f"  segments         {s['num_segments']}"] if "num_segments" in s else []),
        *([f"  keyframes        {stripping_line(s)}"] if "keyframe_stripping" in s else []),
        *([f"  auto             {auto_line(s['auto'])}"] if "auto" in s else []),
        *([f"  bind mode        {bind_line(s)}"] if "bind_mode" in s else []),
        *(
            [f"  cleaned          {cleaning_line(s['default_cleaning'])}"]
            if "default_cleaning" in s
            else []
        ),  # fmt: skip
        *acl_lines(s),
        f"  compression time {s['compression_time']:.3f} s",
    ]
    if "vertex_max_error" in s:
        lines += skin_summary(s, skeleton)
    if "skin_strict" in s:
        lines.append(f"  skin strict      {skin_strict_line(s['skin_strict'])}")
    return "\n".join(lines) + "\n"


def cleaning_line(c: dict[str, Any]) -> str:
    """What --clean-defaults changed in the clip (destructive): how many sub-tracks were
    snapped to their bind value and the largest object-space error that made."""
    if not c["num_snapped"]:
        return f"nothing within {c['tolerance']:g} of its default"
    return (
        f"{c['num_snapped']} sub-tracks snapped to their default (within {c['tolerance']:g}); "
        f"the clip moved by up to {c['max_error_vs_read']:.6g} at {c['worst_joint_vs_read']}"
    )


def bind_line(s: dict[str, Any]) -> str:
    """acl-style's bind mode: the one kept, what each tried cost, compensation's outcome."""
    tried = s["bind_modes"]["tried"]
    parts = [
        f"{m} {fmt_bytes(t['compressed_size'])}" + ("" if t["strict"] else " (not strict)")
        for m, t in tried.items()
    ]
    text = s["bind_mode"] + (f" (of {', '.join(parts)})" if len(tried) > 1 else "")
    screened = s["bind_modes"].get("screened", {})
    text += "".join(f"; {m} not tried: {why}" for m, why in screened.items())
    comp = s.get("error_compensation", {})
    if comp.get("on"):
        verdict = "kept" if comp["kept"] else "not kept"
        text += f"; compensated {fmt_bytes(comp['compressed_size'])}, {verdict}"
    return text


def acl_lines(s: dict[str, Any]) -> list[str]:
    """ACL 2.1's own numbers of an acl-2.1 result: its size, and its error by its own
    measure (what acl_compressor's stats and a game's log say)."""
    if "acl_measure" not in s:
        return []
    m = s["acl_measure"]
    return [
        f"  ACL's size       {fmt_bytes(s['acl_compressed_size'])}  (ACL's count; its file "
        f"{fmt_bytes(s['acl_file_size'])} with names and hierarchy)",
        f"  ACL's measure    {m['max_error']:.6g} cm at {m['worst_track_name']} (joint "
        f"{m['worst_track']}), t = {m['worst_time']:.4g} s",
        *(f"  note             {n}" for n in s.get("acl_notes", [])),
    ]


def skin_strict_line(k: dict[str, Any]) -> str:
    """Skin-strict's promise kept or not: the worst vertex against its budget, the rounds."""
    met = "yes" if k["met"] else "NO"
    tightened = len(k["tightened_joints"])
    return (
        f"on, met: {met}; worst vertex {k['worst_vertex_error']:.6g} cm of its budget "
        f"{k['worst_vertex_budget']:.6g} cm ({100 * k['worst_share']:.1f} %); "
        f"{k['rounds']} round(s), {tightened} joint(s) tightened"
        + (f" (down to {k['tightest_scale']:.3g}x)" if tightened else "")
    )


def auto_line(auto: dict[str, Any]) -> str:
    """Which codec `auto` kept, and what every codec it tried costs (not strict: marked)."""
    tried = ", ".join(
        f"{name} {fmt_bytes(c['compressed_size'])}{'' if c['strict'] else ' (not strict)'}"
        for name, c in auto["codecs"].items()
    )
    return f"chose {auto['chosen']} of {tried}"


def stripping_line(s: dict[str, Any]) -> str:
    """How many keyframes stripping removed, and whether its settings were destructive."""
    ks = s["keyframe_stripping"]
    line = (
        f"{s['num_stored_samples'] - s['num_stripped_keyframes']} stored, "
        f"{s['num_stripped_keyframes']} stripped ({s['num_trivial_keyframes']} trivial)"
    )
    if ks["destructive"]:
        line += (
            f"; DESTRUCTIVE stripping (proportion {ks['proportion']:g}, threshold "
            f"{ks['threshold']:g} cm): joints may exceed their precision"
        )
    elif not ks["strip_trivial"]:
        line += "; stripping off"
    return line


def skin_summary(s: dict[str, Any], skeleton: Skeleton) -> list[str]:
    """The summary lines of the true skin error (codec.measure.vertex_error)."""
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


def units_line(clip: Clip) -> str:
    """The units / up-axis statement of a loaded clip, as the summary prints it."""
    if clip.units is None:
        return "units: not stated by the reader; taken as cm"
    return clip.units.statement()
