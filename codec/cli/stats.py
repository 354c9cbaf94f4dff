"""`stats`: many clips and folders compressed in parallel, a row per clip and a summary."""

from __future__ import annotations

import argparse
import csv
import io
import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from codec.cli.failures import EXIT_OK, CliError
from codec.cli.files import check_outputs, dumps_json, write_outputs
from codec.cli.flags import add_settings_flags, reader_options, resolved_run, run_flags
from codec.cli.report_text import fmt_bytes, table
from codec.errors import ShellscopeError
from codec.printable import csv_cell, write_control
from codec.run_settings import Flags

STATS_COLUMNS = (
    "name",
    "joints",
    "samples",
    "raw_size",
    "compressed_size",
    "compression_ratio",
    "max_error",
    "worst_track_name",
    "compression_time",
    "precision_met",
    "level",
    "settings",
)
STATS_FORMAT = "shellscope-stats"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("stats", help="compress clips and folders in parallel, summarise")
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="clips, or folders searched recursively for .bvh, .glb, .gltf, .fbx, .usd, .usda, "
        ".usdc, .usdz and .acl.sjson files (also .gz/.xz/.zst)",
    )
    p.add_argument("--csv", metavar="FILE|-", help="write one row per clip as CSV")
    p.add_argument(
        "--acl-output",
        metavar="FILE.acl",
        help="measure ACL 2.1's compressed output (acl_compressor -out=FILE.acl) against the "
        "one raw clip given: our measure of ACL's pose, ACL's bit rates from its headers",
    )
    p.add_argument(
        "--json",
        metavar="FILE|-",
        help="write one object per clip (the CSV's columns, its settings block whole); with "
        "--acl-output, that clip's stats",
    )
    p.add_argument(
        "--jobs", "-j", type=int, metavar="N", help="worker processes (default: CPU count)"
    )
    add_settings_flags(p)
    p.set_defaults(func=cmd_stats)


def clip_extensions() -> tuple[str, ...]:
    """What `stats` looks for in folders: every readable clip, plain or compressed, but not
    .ssc nor ACL's .acl (already compressed)."""
    from codec.formats import clip_extensions as every

    return tuple(e for e in every() if not e.startswith((".ssc", ".acl")) or ".sjson" in e)


def collect_clips(paths: Sequence[str]) -> tuple[list[tuple[str, str]], list[dict]]:
    """(path, display name) of every clip: files as given, folders searched recursively;
    and the rows of folder entries that are not read at all: a file (a link) leaving the
    folder it was found in (codec.formats.input_paths), said without reading it."""
    from codec.formats.input_paths import outside_problem
    from codec.library.discover import find_clips

    found: list[tuple[str, str]] = []
    refused: list[dict] = []
    for p in paths:
        root = Path(p)
        if root.is_dir():
            for f in find_clips(root):
                name = str(f.relative_to(root))
                problem = outside_problem(root, f)
                if problem:
                    refused.append({"name": name, "error": f"{f}: {problem}"})
                else:
                    found.append((str(f), name))
        elif root.exists():
            found.append((str(root), root.name))
        else:
            raise CliError(f"{p}: no such file or folder")
    return found, refused


def stats_job(path: str, name: str, flags: Flags) -> dict:
    """Compress one clip in a worker: a row (STATS_COLUMNS) or {'name', 'error'}; the clip
    tuned as `compress` tunes it (codec.run_settings.resolve_run). Shells from the mesh skip
    a clip without a skinned mesh (with the reason); skin-strict compresses it as usual (a
    folder mixes both)."""
    import io

    from codec.compression import compress
    from codec.formats import load_clip

    try:
        clip = load_clip(path, **reader_options(path, flags))
        run = resolved_run(clip, path, flags, io.StringIO(), strict_mesh=False)
        if run.tuning.shell_from_mesh and not clip.meshes:  # asked of a clip that has none
            raise CliError(f"{path}: {run.mesh_problem(clip)}")
        s = compress(run.tuned_clip(clip), run.compression_settings(clip)).stats
    except (ShellscopeError, CliError) as e:
        return {"name": name, "error": str(e)}
    except Exception as e:  # one broken clip must not stop a batch
        return {"name": name, "error": f"{path}: internal error ({type(e).__name__}: {e})"}
    return {
        "name": name,
        "joints": s["num_bones"],
        "samples": s["num_samples"],
        "raw_size": s["raw_size"],
        "compressed_size": s["compressed_size"],
        "compression_ratio": s["compression_ratio"],
        "max_error": s["max_error"],
        "worst_track_name": s["worst_track_name"],
        "compression_time": s["compression_time"],
        "precision_met": s["precision_met"],
        "level": s.get("level", ""),  # acl-style's chosen level; other codecs have none
        "settings": run.block(clip),
    }


class ProgressBar:
    """A text progress bar on a stream: redrawn in place on a terminal, a line per step
    otherwise. `note` prints a message without breaking the bar."""

    def __init__(self, stream: TextIO, total: int, width: int = 30) -> None:
        self.stream, self.total, self.width = stream, total, width
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.done = 0
        self._drawn = False

    def _clear(self) -> None:
        if self.tty and self._drawn:
            write_control(self.stream, "\r\x1b[K")
            self._drawn = False

    def note(self, message: str) -> None:
        self._clear()
        self.stream.write(message + "\n")
        self.stream.flush()

    def step(self, label: str) -> None:
        self.done += 1
        filled = self.width * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        text = f"[{bar}] {self.done}/{self.total} {label}"
        if self.tty:
            self._clear()
            self.stream.write(text)
            self._drawn = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        self._clear()


def run_jobs(
    jobs: list[tuple[str, str]],
    flags: Flags,
    workers: int,
    on_done: Callable[[dict], None],
) -> list[dict]:
    """Run stats_job over `jobs` on `workers` processes (in-process for one); results in
    input order, `on_done` called as each finishes."""
    results: list[dict | None] = [None] * len(jobs)
    if workers <= 1:
        for i, (path, name) in enumerate(jobs):
            results[i] = stats_job(path, name, flags)
            on_done(results[i])
        return [r for r in results if r is not None]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pending: dict[Future, int] = {
            pool.submit(stats_job, path, name, flags): i for i, (path, name) in enumerate(jobs)
        }
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    i = pending.pop(fut)
                    results[i] = fut.result()
                    on_done(results[i])
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise
    return [r for r in results if r is not None]


def percentiles(values: Sequence[float]) -> dict[str, float]:
    a = np.asarray(values, dtype=np.float64)
    return {
        "p50": float(np.percentile(a, 50)),
        "p90": float(np.percentile(a, 90)),
        "p99": float(np.percentile(a, 99)),
        "max": float(a.max()),
    }


def stats_report(rows: list[dict], skipped: int) -> str:
    """The per-clip table and the summary (totals, total ratio, percentiles)."""
    head = [
        "clip",
        "joints",
        "samples",
        "raw B",
        "compressed B",
        "ratio",
        "max error",
        "worst joint",
        "time s",
    ]
    cells = [head] + [
        [
            r["name"],
            str(r["joints"]),
            str(r["samples"]),
            f"{r['raw_size']:,}",
            f"{r['compressed_size']:,}",
            f"{r['compression_ratio']:.2f}",
            f"{r['max_error']:.6f}" + ("" if r["precision_met"] else " !"),
            r["worst_track_name"],
            f"{r['compression_time']:.3f}",
        ]
        for r in rows
    ]
    raw = sum(r["raw_size"] for r in rows)
    comp = sum(r["compressed_size"] for r in rows)
    err = percentiles([r["max_error"] for r in rows])
    ratio = percentiles([r["compression_ratio"] for r in rows])
    missed = sum(not r["precision_met"] for r in rows)
    summary = [
        f"{len(rows)} clips compressed, {skipped} skipped; precision missed on {missed}"
        + (" (marked !)" if missed else ""),
        f"total raw {fmt_bytes(raw)}, compressed {fmt_bytes(comp)}, ratio {raw / comp:.2f}:1",
        "max error  " + "  ".join(f"{k} {v:.6f}" for k, v in err.items()),
        "ratio      " + "  ".join(f"{k} {v:.2f}" for k, v in ratio.items()),
    ]
    return table(cells, right=(1, 2, 3, 4, 5, 6, 8)) + "\n" + "\n".join(summary) + "\n"


def cmd_stats(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Compress many clips in parallel; one row per clip, a summary, optionally a CSV."""
    if args.acl_output:
        return cmd_acl_output(args, out, err)
    flags = run_flags(args)
    if args.jobs is not None and args.jobs < 1:
        raise CliError(f"--jobs must be at least 1, got {args.jobs}")
    jobs, refused = collect_clips(args.paths)
    if not jobs and not refused:
        raise CliError(f"no clips ({', '.join(clip_extensions())}) in {' '.join(args.paths)}")
    check_outputs(
        [args.csv, args.json],
        [*(path for path, _ in jobs), getattr(args, "overrides", None), flags.settings],
    )
    workers = max(1, min(args.jobs or os.cpu_count() or 1, len(jobs)))
    bar = ProgressBar(err, len(jobs) + len(refused))
    skipped = 0

    def on_done(r: dict) -> None:
        nonlocal skipped
        if "error" in r:
            skipped += 1
            bar.note(f"skipped: {r['error']}")
        bar.step(r["name"])

    for r in refused:
        on_done(r)
    try:
        results = run_jobs(jobs, flags, workers, on_done)
    finally:
        bar.close()
    rows = [r for r in results if "error" not in r]
    if not rows:
        raise CliError(f"none of the {len(jobs) + len(refused)} files could be compressed")
    outputs: list[tuple[str | None, str]] = []
    if args.csv:
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=STATS_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(
            {k: csv_cell(v) if isinstance(v, str) else v for k, v in _flat(r).items()} for r in rows
        )
        outputs.append((args.csv, buf.getvalue()))
    if args.json:
        data = {"format": STATS_FORMAT, "version": 1, "rows": rows}
        outputs.append((args.json, dumps_json(data)))
    write_outputs(outputs, out)
    if "-" not in (args.csv, args.json):
        out.write(stats_report(rows, skipped))
    return EXIT_OK


def cmd_acl_output(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Measure ACL's output file against its raw clip (tuned as `compress` tunes it); print
    the summary, write the stats as JSON with --json."""
    from dataclasses import replace

    from codec.cli.compress import compress_summary, stats_json, units_line
    from codec.compression import Compression
    from codec.formats import load_clip
    from codec.formats.acl_binary import read_output

    if len(args.paths) != 1:
        raise CliError("--acl-output measures one raw clip against it: give exactly one clip")
    if args.csv:
        raise CliError("--acl-output writes --json, not --csv")
    path = args.paths[0]
    flags = run_flags(args)  # the flags' own checks, before any work
    check_outputs([args.json], [path, args.acl_output, flags.overrides, flags.settings])
    fixed = read_output(args.acl_output)
    clip = load_clip(path, **reader_options(path, flags))
    if not clip.name:
        clip.name = Path(path).name
    run = resolved_run(clip, path, flags, err)
    run = replace(run, tuning=replace(run.tuning, codec=fixed.name))  # what made the bytes
    try:
        result = Compression(run.tuned_clip(clip), fixed=fixed).run(run.compression_settings(clip))
    except ShellscopeError as e:
        raise CliError(f"{args.acl_output}: {e}") from None
    stats = stats_json(result, run, clip)
    write_outputs([(args.json, dumps_json(stats) if args.json else "")], out)
    if args.json != "-":
        out.write(compress_summary(path, result.stats, result.clip.skeleton))
        out.write(f"  ACL output       {args.acl_output}\n  {units_line(clip)}\n")
    return EXIT_OK


def _flat(row: dict) -> dict:
    """A row as a CSV line holds it: the settings block as compact JSON in its cell."""
    import json

    return {**row, "settings": json.dumps(row["settings"], separators=(",", ":"), allow_nan=False)}
