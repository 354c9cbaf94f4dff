"""Where ACL 2.1's `acl_compressor` is: the one outside program a codec runs (acl-2.1).

It is a setting of the process, not of a codec: the command line (`--acl-compressor PATH`),
the window's Compression menu and the library set it here, and the acl-2.1 codec
(codec.codecs.acl21.compressor) reads it when it runs. It lives in the environment
(SHELLSCOPE_ACL_COMPRESSOR), so the workers a process starts inherit it; the app sets it
without importing a codec package.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV = "SHELLSCOPE_ACL_COMPRESSOR"
FLAG = "--acl-compressor"


def configured() -> str | None:
    """The acl_compressor path given to this process (SHELLSCOPE_ACL_COMPRESSOR), or None."""
    value = os.environ.get(ENV, "").strip()
    return value or None


def configure(path: str | None) -> None:
    """Use `path` for acl_compressor in this process and the processes it starts (None or
    empty: forget it). A relative path is made absolute: workers may run elsewhere."""
    if path:
        os.environ[ENV] = str(Path(path).expanduser().absolute())
    else:
        os.environ.pop(ENV, None)


def problem(path: str | None) -> str | None:
    """None when `path` is an acl_compressor Shellscope can run, else why not."""
    if not path:
        return f"no acl_compressor given ({FLAG} PATH, the window's ACL setting, or {ENV})"
    p = Path(path)
    if not p.is_file():
        return f"acl_compressor {path}: no such file"
    if not os.access(p, os.X_OK):
        return f"acl_compressor {path}: not executable"
    return None
