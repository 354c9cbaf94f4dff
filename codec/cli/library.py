"""`library`: a folder tree of clips compressed on Dask, a row per clip, and its reports.

    python -m codec library DIR [--scheduler ADDRESS | --dashboard ADDRESS] [--workers N]
        [--timeout S] [--json FILE] [--csv FILE] [--report FILE.html] [--compare OLD.json]
        [--sweep 0.005,0.01,0.02] [--overrides RULES] [--no-sidecars] [--cache DIR | --no-cache]

Exit codes: 0 the run completed (a clip that failed is a row with its error, not a failed
run); 2 bad input or usage; 130 interrupted (Ctrl+C), after writing what finished.

The embedded cluster listens on the loopback interface only and serves no dashboard unless
`--dashboard` asks for one. Every name in the outputs and on the terminal is escaped
(codec.printable), every CSV cell that would be a formula neutralised.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from codec.cli.failures import EXIT_OK, CliError
from codec.cli.files import check_outputs, write_outputs
from codec.cli.flags import add_reader_flags, positive_float
from codec.errors import SettingsError
from codec.library.rows import Row
from codec.model.limits import distance_problem
from codec.printable import escaped, write_control
from codec.settings import LEVELS

EXIT_INTERRUPTED = 130


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "library",
        help="compress every clip of a folder tree on Dask; JSON, CSV, HTML report",
        description="Compress and measure every clip under DIR (recursively, every format "
        "Shellscope reads, every animation of a multi-animation file a row) on Dask.",
    )
    p.add_argument("root", metavar="DIR", help="the library's folder (or one clip file)")
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="an existing Dask scheduler (tcp://host:8786) whose workers run the clips "
        "(default: an embedded local cluster)",
    )
    p.add_argument(
        "--dashboard",
        metavar="ADDRESS",
        help="serve the embedded cluster's Dask dashboard at PORT (on the loopback "
        "interface) or HOST:PORT (default: no dashboard; its pages need bokeh)",
    )
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="worker processes of the embedded cluster (default: one per core)",
    )
    p.add_argument(
        "--timeout",
        type=positive_float,
        metavar="S",
        help="seconds a file may take (default: none)",
    )
    p.add_argument("--json", metavar="FILE|-", help="every row, the totals and the settings")
    p.add_argument("--csv", metavar="FILE|-", help="one row per clip")
    p.add_argument("--report", metavar="FILE.html", help="a self-contained HTML report")
    p.add_argument(
        "--compare", metavar="OLD.json", help="compare with an older --json: regressions first"
    )
    p.add_argument(
        "--sweep",
        metavar="P1,P2,...",
        help="run the library at each global precision (cm) and report the totals of each",
    )
    p.add_argument("--precision", type=positive_float, metavar="P", help="global precision (cm)")
    p.add_argument(
        "--shell-distance", type=positive_float, metavar="D", help="global shell distance (cm)"
    )
    p.add_argument(
        "--level", choices=LEVELS, help="compression level (default: each clip's sidecar's)"
    )
    p.add_argument(
        "--codec",
        metavar="NAME",
        help="the codec (`python -m codec codecs` lists them; auto: the smallest strict one; "
        "default: each clip's sidecar's, else acl-style)",
    )
    p.add_argument(
        "--acl-compressor",
        metavar="PATH",
        help="ACL 2.1's acl_compressor, for --codec acl-2.1 (default: "
        "$SHELLSCOPE_ACL_COMPRESSOR; cached rows do not know which one: --no-cache after "
        "changing it)",
    )
    p.add_argument(
        "--overrides",
        metavar="RULES",
        help="a rules file (a sidecar or a JSON list of name-pattern rules) for every clip, "
        "over each clip's sidecar",
    )
    p.add_argument(
        "--skin-strict",
        action="store_true",
        default=None,
        help="clips with a skinned mesh: every vertex within its strongest joint's precision "
        "at every sample (the others compress as usual)",
    )
    p.add_argument(
        "--no-sidecars", action="store_true", help="ignore the clips' own CLIP.shellscope.json"
    )
    p.add_argument("--cache", metavar="DIR", help="the row cache (default ~/.cache/shellscope)")
    p.add_argument("--no-cache", action="store_true", help="compute every clip again")
    add_reader_flags(p)
    p.set_defaults(func=cmd_library)


MAX_TIMEOUT = 1e7  # seconds a file may take (115 days): past it a deadline is no number


def parse_sweep(text: str) -> list[float]:
    """'0.005,0.01,0.02' -> [0.005, 0.01, 0.02] (CliError naming the bad item)."""
    out = []
    for item in text.split(","):
        try:
            v = float(item)
        except ValueError:
            raise CliError(f"--sweep: {item.strip()!r} is not a number") from None
        if not (v > 0 and v < 1e6):
            raise CliError(f"--sweep: {item.strip()!r} must be a precision > 0")
        if distance_problem(v):
            raise CliError(f"--sweep: {distance_problem(v)}")
        out.append(v)
    return out


def check_numbers(args: argparse.Namespace) -> None:
    """Every number flag within the range it can hold, before any work (one line naming it)."""
    for flag, value in (("--precision", args.precision), ("--shell-distance", args.shell_distance)):
        if value is not None and distance_problem(value):
            raise CliError(f"{flag}: {distance_problem(value)}")
    t = args.timeout
    if t is not None and not (math.isfinite(t) and 0 < t <= MAX_TIMEOUT):
        raise CliError(f"--timeout: {t!r} is not a number of seconds between 0 and {MAX_TIMEOUT:g}")


class Progress:
    """A progress line on stderr: files done, clips per second computed, time left."""

    def __init__(self, stream: TextIO, total: int) -> None:
        self.stream, self.total = stream, total
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.files = self.clips = self.computed_files = 0
        self.start = time.perf_counter()
        self.last = 0.0

    def update(self, rows: int, cached: bool) -> None:
        self.files += 1
        if not cached:
            self.clips += rows
            self.computed_files += 1
        now = time.perf_counter()
        if not self.tty and now - self.last < 2.0 and self.files < self.total:
            return
        self.last = now
        elapsed = now - self.start
        rate = self.clips / elapsed if elapsed > 0 else 0.0
        per_file = elapsed / self.computed_files if self.computed_files else 0.0
        left = (self.total - self.files) * per_file
        width = 24
        fill = width * self.files // max(self.total, 1)
        text = (
            f"[{'#' * fill}{'.' * (width - fill)}] {self.files}/{self.total} files  "
            f"{rate:.1f} clips/s  ETA {int(left) // 60}:{int(left) % 60:02d}"
        )
        if self.tty:
            write_control(self.stream, "\r\x1b[K")
        self.stream.write(text if self.tty else text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _dashboard(args: argparse.Namespace) -> str | None:
    """--dashboard as LocalCluster takes it (None: no dashboard); checked with --scheduler."""
    from codec.library.engine import dashboard_address, scheduler_problem

    if args.scheduler:
        problem = scheduler_problem(args.scheduler)
        if problem:
            raise CliError(f"--scheduler {args.scheduler!r}: {problem}")
    if args.dashboard is None:
        return None
    if args.scheduler:
        raise CliError("--dashboard is for the embedded cluster; a scheduler serves its own")
    try:
        return dashboard_address(args.dashboard)
    except ValueError as e:
        raise CliError(str(e)) from None


def _say_dashboard(cluster: Any, err: TextIO) -> None:
    link = cluster.dashboard_link
    if link:
        err.write(f"dashboard: {link}\n")


def shown_rows(rows: list[Row]) -> list[Row]:
    """Rows as the outputs write them: every name escaped (codec.printable: control
    characters and bytes that are not UTF-8, so a CSV, JSON, HTML or terminal line holds
    them all and none acts on a terminal)."""
    return [{k: escaped(v) if isinstance(v, str) else v for k, v in r.items()} for r in rows]


def _settings(args: argparse.Namespace) -> Any:
    """The run's LibrarySettings from its flags (CliError naming a bad flag or rules file)."""
    import os

    from codec.cli.flags import run_flags
    from codec.library.tuning import LibrarySettings, read_rules_file

    flags = run_flags(args)
    if args.overrides:  # checked once here; the workers read it with each clip's animation
        try:
            read_rules_file(args.overrides)
        except SettingsError as e:
            raise CliError(str(e)) from None
        flags = replace(flags, overrides=os.path.abspath(args.overrides))
    return LibrarySettings(flags=flags, sidecars=not args.no_sidecars)


def cmd_library(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from codec.library.cache import RowCache, codec_version, default_folder
    from codec.library.compare import compare_rows, compare_text
    from codec.library.engine import DaskCluster, library_files, run_library
    from codec.library.outputs import (
        library_csv,
        library_json,
        read_library_json,
        summary_text,
        sweep_csv,
        sweep_points,
    )
    from codec.library.report_html import library_html

    if args.workers is not None and args.workers < 1:
        raise CliError(f"--workers must be at least 1, got {args.workers}")
    dashboard = _dashboard(args)
    check_numbers(args)
    sweep = parse_sweep(args.sweep) if args.sweep else None
    settings = _settings(args)
    try:
        files = library_files(args.root)
    except FileNotFoundError as e:
        raise CliError(str(e)) from None
    if not files:
        raise CliError(f"{args.root}: no clips in it")
    old = read_library_json(args.compare) if args.compare else None
    inputs = [*(p for p, _ in files), args.overrides, args.compare]
    check_outputs([args.json, args.csv, args.report], inputs)
    cache = None if args.no_cache else RowCache(args.cache or default_folder())
    precisions = sweep or [settings.flags.precision]
    runs = []
    interrupted = False
    cluster = None
    try:
        if sweep and len(sweep) > 1:
            n = args.workers or None
            from codec.library.engine import default_workers

            cluster = DaskCluster(
                args.scheduler, min(n or default_workers(), len(files)), dashboard
            )
            _say_dashboard(cluster, err)
        for p in precisions:
            run_settings = settings.with_precision(p) if p is not None else settings
            if sweep:
                err.write(f"precision {p:g} cm:\n")
            bar = Progress(err, len(files))
            run = run_library(
                files,
                run_settings,
                scheduler=args.scheduler,
                workers=args.workers,
                timeout=args.timeout,
                cache=cache,
                on_file=lambda d, bar=bar: bar.update(len(d.rows), d.cached),
                cluster=cluster,
                dashboard=dashboard,
                on_start=lambda c: _say_dashboard(c, err),
            )
            bar.close()
            runs.append((p, run))
            if run.interrupted:
                interrupted = True
                break
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if cluster is not None:
            cluster.close()
    if not runs:
        err.write("interrupted before any file finished; nothing written\n")
        return EXIT_INTERRUPTED
    p0, first = runs[0]
    runs = [(p, replace(r, rows=shown_rows(r.rows))) for p, r in runs]
    rows = runs[0][1].rows  # names as every output writes them (codec.printable)
    meta = {
        "root": escaped(str(Path(args.root))),
        "precision": p0,
        "level": settings.flags.level or "each clip's",
        "codec_version": codec_version(),
        "files": first.files,
        "cached": first.cached,
        "seconds": round(first.seconds, 3),
        "workers": first.workers,
        "interrupted": interrupted,
    }
    sweep_out = sweep_points([(p, r.rows) for p, r in runs]) if sweep else None
    comparison = compare_rows(old, rows) if old is not None else None
    outputs: list[tuple[str | None, str]] = []
    if args.json:
        outputs.append((args.json, library_json(rows, meta, sweep_out, comparison)))
    if args.csv:
        text = sweep_csv([(p, r.rows) for p, r in runs]) if sweep else library_csv(rows)
        outputs.append((args.csv, text))
    if args.report:
        title = f"Shellscope library: {escaped(Path(args.root).resolve().name)}"
        shown = {k: meta[k] for k in ("root", "precision", "level", "codec_version", "workers")}
        if shown["precision"] is None:
            shown["precision"] = "each clip's own"
        outputs.append((args.report, library_html(rows, title, shown, sweep_out)))
    write_outputs(outputs, out)
    if "-" not in (args.json, args.csv):
        out.write(summary_text(rows))
        if sweep_out:
            out.write("sweep:\n")
            for s in sweep_out:
                t = s["totals"]
                out.write(
                    f"  precision {s['precision']:g} cm: compressed {t['compressed_size']:,} B, "
                    f"ratio {t['compression_ratio']:.2f}, {t['precision_missed']} missed, "
                    f"{t['errors']} errors\n"
                )
        if comparison is not None:
            out.write("compared with " + str(args.compare) + ": " + compare_text(comparison))
        done = sum(r.computed for _, r in runs)
        secs = sum(r.seconds for _, r in runs)
        clips = sum(len(r.rows) for _, r in runs)
        err.write(
            f"{first.files} files, {len(rows)} rows; {first.cached} from the cache, {done} "
            f"computed on {first.workers} workers in {secs:.1f} s "
            f"({clips / secs if secs else 0:.1f} clips/s)\n"
        )
    if interrupted:
        err.write("interrupted: the outputs hold the files that finished\n")
        return EXIT_INTERRUPTED
    return EXIT_OK
