"""The clip files of a library: every format we read, found recursively, in a stable order."""

from __future__ import annotations

import os
from pathlib import Path


def clip_extensions() -> tuple[str, ...]:
    """Every readable clip ending, plain or compressed (.gz/.xz/.zst), except .ssc (already
    compressed: it has no raw motion to measure against)."""
    from codec.formats import clip_extensions as every

    return tuple(e for e in every() if not e.startswith(".ssc"))


def find_clips(root: str | os.PathLike[str]) -> list[Path]:
    """Clip files under `root` (a folder, searched recursively, or one file), sorted by path.
    Sidecars and other files are skipped; FileNotFoundError when `root` does not exist."""
    root = Path(root)
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such file or folder")
    exts = clip_extensions()
    found = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for name in files:
            if name.lower().endswith(exts):
                found.append(Path(folder) / name)
    return sorted(found)
