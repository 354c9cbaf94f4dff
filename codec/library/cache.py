"""Rows already computed, keyed by (file hash, settings, codec version).

A re-run, or a run after Ctrl+C, only compresses what changed: a clip whose bytes, whose
tuning (global, rules, sidecar) and whose codec are the same as before gets its old rows.
One small JSON file per key in a folder, written whole or not at all, so a run killed
half-way never leaves a torn entry; a damaged entry (or whatever else is found under its
name: a FIFO, a link to a device, rows of the wrong shape) reads as a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path

from codec.formats import atomic
from codec.formats.input_paths import InputRefused, load_json, read_capped
from codec.library.rows import Row, row_problem

_CHUNK = 1 << 20
MAX_ENTRY = 4 << 20  # the rows of one file: a few hundred bytes per animation


def file_hash(path: str | os.PathLike[str]) -> str:
    """sha256 of a file's bytes (OSError when it cannot be read)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


@lru_cache(maxsize=1)
def codec_version() -> str:
    """A hash of the codec's own sources (models, measures, codecs, formats; not the command
    line nor this package): any change to how a clip is read, compressed or measured makes
    every cached row stale."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] in ("cli", "library"):
            continue
        h.update(str(rel).encode())
        h.update(path.read_bytes())
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
        """The rows kept under `key`, or None (a miss) when there are none or the entry is
        not one we wrote: not a regular file (a FIFO would block, /dev/zero never end),
        larger than any entry, not JSON, nested too deeply, or rows of the wrong shape
        (codec.library.rows.row_problem)."""
        try:
            data = load_json(read_capped(self._path(key), MAX_ENTRY, "cache entry"))
        except InputRefused:
            return None
        rows = data.get("rows") if isinstance(data, dict) else None
        if not isinstance(rows, list) or any(row_problem(r) for r in rows):
            return None
        return rows

    def put(self, key: str, rows: list[Row]) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(path, json.dumps({"rows": rows}, allow_nan=True))
