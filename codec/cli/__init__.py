"""The `python -m codec` command line: compress, decompress, info, stats, bench, codecs,
library and warm-up.

One module per command (`add_parser` registers its flags, `cmd_*` runs it and returns the
exit code); `main(argv)` parses, dispatches and turns every failure into one line on stderr,
never a traceback (codec.cli.failures has the exit codes). Everything a command prints goes
through codec.printable: a joint or file name cannot put a control character on a terminal.

Outputs: every output path is checked before any work (its folder exists and is writable,
it is not an input, no two are the same), and the files of one run are written together at
its end, all or none (codec.formats.atomic.all_or_none): a failed run changes no file. SIGTERM and
SIGHUP unwind like an interruption, so no temporary file is left behind.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from codec.cli import bench, codecs, compress, decompress, info, library, stats, warm_up
from codec.cli.failures import EXIT_ERROR, EXIT_FAIL, EXIT_OK, PROG, CliError, RunFailed, one_line
from codec.errors import ShellscopeError
from codec.formats import atomic
from codec.printable import printable_stream


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Shellscope's animation codecs on the command line.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in (compress, decompress, info, stats, bench, codecs, library, warm_up):
        command.add_parser(sub)
    return parser


@dataclass
class _Streams:
    out: TextIO
    err: TextIO


def main(
    argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    """Run the CLI on `argv` (default sys.argv[1:]); returns the exit code."""
    # every line printed is terminal-safe: names from files cannot retitle or clear it
    io_ = _Streams(printable_stream(stdout or sys.stdout), printable_stream(stderr or sys.stderr))
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse already printed usage and the error (or --help)
        return int(e.code or 0) if not isinstance(e.code, str) else EXIT_ERROR
    try:
        with atomic.exit_cleanly_on_signals():
            return int(args.func(args, io_.out, io_.err))
    except (CliError, ShellscopeError) as e:
        io_.err.write(f"{PROG} {args.command}: error: {one_line(e)}\n")
    except RunFailed as e:
        io_.err.write(f"{PROG} {args.command}: failed: {one_line(e)}\n")
        return EXIT_FAIL
    except KeyboardInterrupt:
        io_.err.write(f"{PROG} {args.command}: interrupted\n")
        return 130
    except atomic.Terminated as e:
        io_.err.write(f"{PROG} {args.command}: terminated\n")
        return int(e.code or 1)
    except BrokenPipeError:  # e.g. piped into `head`
        return EXIT_OK
    except MemoryError:
        io_.err.write(f"{PROG} {args.command}: failed: out of memory\n")
        return EXIT_FAIL
    except Exception as e:  # a codec bug: still one line, never a traceback
        io_.err.write(
            f"{PROG} {args.command}: internal error ({type(e).__name__}: {one_line(e)}); "
            "please report it\n"
        )
        return EXIT_FAIL
    return EXIT_ERROR
