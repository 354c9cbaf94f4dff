"""`codecs`: the codecs this Shellscope has, by name, with their one-line descriptions."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from codec.cli.failures import EXIT_OK


def add_parser(sub: Any) -> None:
    p = sub.add_parser("codecs", help="list the codecs (compress --codec NAME)")
    p.add_argument(
        "--acl-compressor",
        metavar="PATH",
        help="ACL 2.1's acl_compressor (default: $SHELLSCOPE_ACL_COMPRESSOR)",
    )
    p.set_defaults(func=cmd_codecs)


def cmd_codecs(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """One line per codec: its name (the default marked) and its description."""
    from codec.codecs import acl_compressor_path, registry

    if args.acl_compressor:
        acl_compressor_path.configure(args.acl_compressor)
    width = max(len(name) for name in (*registry.names(), registry.AUTO))
    for name in registry.names():
        codec = registry.get(name)
        mark = " (default)" if name == registry.DEFAULT else ""
        why = registry.unavailable(name)
        if why:
            mark += f" [unavailable: {why}]"
        out.write(f"{name:<{width}}  {codec.description}{mark}\n")
    out.write(f"{registry.AUTO:<{width}}  {registry.AUTO_DESCRIPTION}\n")
    return EXIT_OK
