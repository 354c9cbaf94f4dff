"""`warm-up`: compile (or load from the cache) the codec's kernels now, so that the first
compression of a script or a build machine does not wait for the compiler."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from codec.cli.failures import EXIT_OK


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "warm-up",
        help="compile the codec's kernels into their cache now (pip and make do it already)",
    )
    p.set_defaults(func=cmd_warm_up)


def cmd_warm_up(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Say when compiling starts (it takes a while), then what was done and where the
    cache is."""
    from codec import jit, warm_up

    def compiling() -> None:
        err.write(f"warm-up: {warm_up.COMPILING}...\n")
        err.flush()

    report = warm_up.warm_up(compiling)
    out.write(f"{report} ({jit.cache_location()})\n")
    return EXIT_OK
