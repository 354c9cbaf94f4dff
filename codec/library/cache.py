"""Rows already computed, keyed by (file hash, settings, codec version).

A re-run, or a run after Ctrl+C, only compresses what changed: a clip whose bytes, whose
tuning (global, rules, sidecar) and whose codec are the same as before gets its old rows.
One small JSON file per key in a folder, written whole or not at all, so a run killed
half-way never leaves a torn entry; a damaged entry reads as a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path

from codec.formats import atomic
from codec.library.rows import Row

_CHUNK = 1 << 20


def file_hash(path: str | os.PathLike[str]) -> str:
    """sha256 of a file's bytes (OSError when it cannot be read)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


@lru_cache(maxsize=1)
def codec_version() -> str:
    """A hash of every file of the codec package (its path and bytes; compiled caches left
    out): a row depends on the readers, the codecs, the measures and also on this package,
    which makes the rows, so any change anywhere under codec/ makes every cached row stale."""
    return source_hash(Path(__file__).resolve().parents[1])


def source_hash(root: Path) -> str:
    """16 hex digits of sha256 over every file under `root` but `__pycache__` (Python's and
    numba's compiled caches, which change without the source changing), in path order."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if "__pycache__" in rel.parts or not path.is_file():
            continue
        h.update(rel.as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()[:16]


def default_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "shellscope" / "library"


class RowCache:
    """Rows by key in `folder` (created on first write)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    @staticmethod
    def key(content_hash: str, fingerprint: str) -> str:
        text = f"{content_hash}\n{fingerprint}\n{codec_version()}"
        return hashlib.sha256(text.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> list[Row] | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        rows = data.get("rows") if isinstance(data, dict) else None
        return rows if isinstance(rows, list) else None

    def put(self, key: str, rows: list[Row]) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(path, json.dumps({"rows": rows}, allow_nan=True))
