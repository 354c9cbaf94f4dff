"""The compiled core's switchboard: one decorator for every kernel and a disk cache that
follows the source (codec.warm_up pays the compile, or the cache load, before a user waits;
setup.py builds the cache into the wheel, so a `pip install` compiles nothing at first use).

numba keys its on-disk cache on the caller's own file only, so a kernel whose callee (or a
constant it reads) changed in another module would load stale machine code.
`drop_stale_caches` fingerprints every module that defines kernels and every codec module
those import, and clears the cache when any of them changed.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

os.environ.setdefault("NUMBA_OPT", "1")  # runs as fast as 3 on these kernels, compiles faster
# machine code for any CPU of the architecture, so the cache a wheel carries (built where
# the wheel is built) loads on every machine; as fast here (no fast-math: no FMA to gain)
os.environ.setdefault("NUMBA_CPU_NAME", "generic")
_NUMBA_FIRST = "numba" in sys.modules  # a script imported numba before the codec
import numba  # noqa: E402

if _NUMBA_FIRST:
    # numba read its settings as it was imported, without ours: the first kernel's cache
    # lookup then asked for this CPU's machine code, missed the generic cache and compiled
    # (1.7 s of CPU in every such process). Read again before any kernel is looked up.
    numba.core.config.reload_config()

F = TypeVar("F", bound=Callable[..., Any])
CACHE = os.environ.get("SHELLSCOPE_JIT_CACHE", "1") != "0"

PACKAGE = Path(__file__).resolve().parent
_STAMP = PACKAGE / "__pycache__" / "kernels.sha256"


def _kernel_sources(package: Path) -> list[Path]:
    """Modules that define kernels, and the package's modules they import from."""
    found: set[Path] = set()
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "from codec.jit import" not in text:
            continue
        found.add(path)
        for source, group, wrapped in re.findall(  # one line, or parenthesised over several
            r"^\s*from codec((?:\.\w+)*) import (?:([\w, ]+)$|\(([^)]*)\))", text, re.MULTILINE
        ):
            base = [p for p in source.split(".") if p]
            listed = group or re.sub(r"#[^\n]*", "", wrapped)  # a comment names nothing
            names = [n.strip().split(" as ")[0] for n in listed.split(",")]
            names = [n for n in names if n]
            for dep in [package.joinpath(*base).with_suffix(".py")] + [
                package.joinpath(*base, n).with_suffix(".py") for n in names
            ]:
                if dep.is_file():
                    found.add(dep)
    return sorted(found)


def drop_stale_caches(package: Path = PACKAGE) -> bool:
    """Delete the package's numba caches when any of its sources changed since they were
    written; returns whether it did."""
    digest = hashlib.sha256()
    for path in _kernel_sources(package):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    stamp = digest.hexdigest()
    marker = package / "__pycache__" / _STAMP.name
    try:
        if marker.read_text() == stamp:
            return False
    except OSError:
        pass
    try:
        for pattern in ("*.nbi", "*.nbc"):
            for old in package.rglob(f"__pycache__/{pattern}"):
                old.unlink(missing_ok=True)
        marker.parent.mkdir(exist_ok=True)
        tmp = marker.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(stamp)
        os.replace(tmp, marker)
    except OSError:  # a read-only install: numba then caches in the user's cache folder
        return False
    return True


drop_stale_caches()


def cache_location() -> str:
    """Where the kernels' cache is read and written: NUMBA_CACHE_DIR when set, else beside
    the sources (a wheel carries it there), else, in an install the user cannot write to,
    numba's cache folder in the user's home."""
    if numba.config.CACHE_DIR:
        return str(numba.config.CACHE_DIR)
    if os.access(_STAMP.parent if _STAMP.parent.is_dir() else PACKAGE, os.W_OK):
        return str(PACKAGE / "**" / "__pycache__")
    from numba.misc.appdirs import AppDirs

    return str(AppDirs(appname="numba", appauthor=False).user_cache_dir)


def kernel(fn: F) -> F:
    """Compile `fn` with numba: no GIL (segments run in threads), cached on disk, numpy's
    error model (no Python exceptions on division by zero)."""
    return numba.njit(cache=CACHE, nogil=True, error_model="numpy")(fn)  # type: ignore[return-value]


def helper(fn: F) -> F:
    """A kernel called only from other kernels: no Python entry point is compiled for it."""
    return numba.njit(cache=CACHE, nogil=True, error_model="numpy", no_cpython_wrapper=True)(fn)  # type: ignore[return-value]


def inlined(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A helper (or plain function) compiled into every kernel that calls it: numba inlines
    it before LLVM sees it, so the same arithmetic runs without a call. At NUMBA_OPT=1 LLVM
    leaves helper calls in place, and in the tightest loops the call costs more than the
    helper's own arithmetic (the error against kept matrices: 1.4 -> 1.0 ms at 51k poses
    x joints)."""
    return numba.njit(inline="always", nogil=True, error_model="numpy")(getattr(fn, "py_func", fn))
