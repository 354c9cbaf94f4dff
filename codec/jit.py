"""The compiled core's switchboard: one decorator for every kernel, a disk cache that follows
the source, and a warm-up that pays the compile (or the cache load) before a user waits.

numba keys its on-disk cache on the caller's own file only, so a kernel whose callee (or a
constant it reads) changed in another module would load stale machine code.
`drop_stale_caches` fingerprints every module that defines kernels and every codec module
those import, and clears the cache when any of them changed.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

os.environ.setdefault("NUMBA_OPT", "1")  # runs as fast as 3 on these kernels, compiles faster
import numba

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
        names = re.findall(r"^from codec\.([\w.]+) import", text, re.MULTILINE)
        for group in re.findall(r"^from codec import ([\w, ]+)$", text, re.MULTILINE):
            names += [n.strip() for n in group.split(",")]
        for name in names:
            dep = package.joinpath(*name.split(".")).with_suffix(".py")
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


def kernel(fn: F) -> F:
    """Compile `fn` with numba: no GIL (segments run in threads), cached on disk, numpy's
    error model (no Python exceptions on division by zero)."""
    return numba.njit(cache=CACHE, nogil=True, error_model="numpy")(fn)  # type: ignore[return-value]


def helper(fn: F) -> F:
    """A kernel called only from other kernels: no Python entry point is compiled for it."""
    return numba.njit(cache=CACHE, nogil=True, error_model="numpy", no_cpython_wrapper=True)(fn)  # type: ignore[return-value]


_warm_lock = threading.Lock()
_warm = False


def is_warm() -> bool:
    """Whether `warm_up` has run in this process."""
    return _warm


def warm_up() -> None:
    """Compile (or load from the cache) every kernel a compression uses, on a tiny clip.

    Idempotent and thread-safe; the window calls it on a background thread at start.
    """
    global _warm
    with _warm_lock:
        if _warm:
            return
        from codec.compressor import compress
        from codec.settings import CompressionSettings

        result = compress(_warm_up_clip(), CompressionSettings(level="highest"))
        result.compressed.sample(0.01, "none")
        _warm = True


def _warm_up_clip():
    """A tiny clip that takes every path of the kernels: two segments, a joint turning
    through 180 degrees (per-segment rotation layouts), scale, constant and default tracks."""
    import numpy as np

    from codec import quat
    from codec.clip import Clip, Skeleton

    s = 40
    t = np.linspace(0.0, 1.0, s)
    angle = np.stack((np.pi * t, 0.3 * np.sin(6 * t), np.zeros(s)), axis=1)
    axes = np.broadcast_to(np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), (s, 3, 3))
    rot = quat.from_axis_angle(axes, angle)
    tr = np.zeros((s, 3, 3))
    tr[:, 1:, 1] = 10.0
    tr[:, 0, 0] = 5.0 * t
    sc = np.ones((s, 3, 3))
    sc[:, 2, 0] = 1.0 + 0.2 * t
    sk = Skeleton.create(["a", "b", "c"], [-1, 0, 1], bind_translations=tr[0])
    return Clip(sk, 30.0, rot, tr, sc, name="warm-up")
