"""`bench`: our codec against ACL 2.1, clip by clip (bench/codec_vs_acl.py of a checkout).

The benchmark is a measuring instrument, not part of the shipped codec: it lives in the
repository's bench/ folder, and this command loads it from there, so `python -m codec bench`
works from a source checkout (an installed codec without one says so, exit 2).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

from codec.cli.failures import EXIT_FAIL, EXIT_OK, PROG, CliError
from codec.cli.files import check_outputs, dumps_json, write_text_output
from codec.settings import BIND_MODES

BENCH = Path(__file__).resolve().parents[2] / "bench" / "codec_vs_acl.py"
MODULE = "codec_vs_acl"


MAX_REPEAT = 1000  # fresh compressions per clip: beyond it a run never ends


def load_bench() -> ModuleType:
    """The benchmark module of the checkout this codec runs from (loaded once)."""
    if MODULE in sys.modules:
        return sys.modules[MODULE]
    path = BENCH
    if not path.is_file():
        raise CliError(f"{PROG} bench runs from a source checkout: {path} is not there")
    spec = importlib.util.spec_from_file_location(MODULE, path)
    if spec is None or spec.loader is None:
        raise CliError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[MODULE]
        raise
    return module


def _load(path: Path, name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    if not path.is_file():
        raise CliError(f"{PROG} bench runs from a source checkout: {path} is not there")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CliError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _every_codec(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`bench --codecs all`: the survey benchmark (every registered codec beside ACL)."""
    survey = _load(BENCH.parent / "survey_codecs.py", "survey_codecs")
    check_outputs([args.json], [])
    peer = Path(args.peer) if args.peer else None
    specs = load_bench().clips_from(args.clips) if args.clips else survey.default_specs(args.hard)
    report = survey.run(specs, peer, say=lambda m: (err.write(m + "\n"), err.flush()))
    out.write(survey.format_report(report) + "\n")
    if args.json:
        write_text_output(args.json, dumps_json(report), out)
    return EXIT_OK


def add_parser(sub: Any) -> None:
    p = sub.add_parser("bench", help="our codec against ACL: sizes, errors, speed, memory")
    p.add_argument(
        "--clips",
        nargs="+",
        metavar="FILE[:ANIMATION]",
        help="clips to bench (default: ACL's reference clips, the run, the jumps, boxing and "
        "Fox Walk/Run/Survey from tests/data)",
    )
    p.add_argument("--shared", action="store_true", help="the default clips from ../shared/data")
    p.add_argument(
        "--peer",
        metavar="PATH",
        help="ACL's acl_compressor: run it on every clip in the same run (see its README)",
    )
    p.add_argument("--reference", metavar="FILE", help="ACL reference JSON (without --peer)")
    p.add_argument(
        "--repeat",
        type=int,
        default=5,
        metavar="N",
        help="compressions per clip, median reported (default 5)",
    )
    p.add_argument(
        "--no-processes",
        action="store_true",
        help="skip the two fresh-process measurements (cold JIT start, peak memory)",
    )
    p.add_argument("--json", metavar="FILE|-", help="also dump the numbers as JSON")
    p.add_argument(
        "--bind",
        choices=BIND_MODES,
        default="auto",
        help="acl-style's bind mode (default auto, the codec's own default; best races "
        "best's search of every mode)",
    )
    p.add_argument(
        "--codecs",
        choices=("all",),
        help="every codec instead (bench/survey_codecs.py): size at strict error, strict, "
        "compression time and time to sample a pose per codec, beside ACL's size, on the "
        "reference and keyed clips (--hard adds the hard ones)",
    )
    p.add_argument("--hard", action="store_true", help="with --codecs: add the hard clips")
    p.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Our codec against ACL, clip by clip; speed, size, error and memory targets."""
    if args.codecs:
        return _every_codec(args, out, err)
    bench = load_bench()
    if not 1 <= args.repeat <= MAX_REPEAT:
        raise CliError(f"--repeat must be 1 to {MAX_REPEAT}, got {args.repeat}")
    check_outputs([args.json], [args.reference])
    clips = bench.clips_from(args.clips) if args.clips else bench.default_clips(args.shared)
    report = bench.run(
        clips,
        repeat=args.repeat,
        peer=args.peer,
        reference=args.reference,
        processes=not args.no_processes,
        progress=lambda m: (err.write(m + "\n"), err.flush()),
        bind=args.bind,
    )
    out.write(bench.format_report(report))
    if args.json:
        write_text_output(args.json, dumps_json(report), out)
    return EXIT_OK if report["all_pass"] else EXIT_FAIL
