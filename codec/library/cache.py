"""Rows already computed, keyed by (content hash, settings, codec version).

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
import re
import stat
import urllib.parse
from functools import lru_cache
from pathlib import Path

from codec.formats import atomic
from codec.formats.input_paths import InputRefused, load_json, outside_problem, read_capped
from codec.library.rows import Row, row_problem

_CHUNK = 1 << 20
_MAX_GLTF_JSON = 64 << 20  # bytes of a glTF's JSON read to find its buffer files
_SCHEME = re.compile(r"[A-Za-z][\w+.-]*:")  # data:, http: ...: no file beside the clip
MAX_ENTRY = 4 << 20  # the rows of one file: a few hundred bytes per animation


def file_hash(path: str | os.PathLike[str]) -> str:
    """sha256 of a file's bytes (OSError when it cannot be read)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def content_hash(path: str | os.PathLike[str]) -> str:
    """sha256 of everything the clip's reader reads: the file's bytes and, for a glTF, the
    bytes of every buffer file it names beside it (a .bin changed under an unchanged .gltf
    is another clip). A buffer that is missing or no regular file counts as such; the reader
    says what is wrong with it. OSError when the file itself cannot be read."""
    own = file_hash(path)
    buffers = _gltf_buffer_files(path)
    if not buffers:
        return own
    h = hashlib.sha256(own.encode())
    for name, file in buffers:
        h.update(b"\0" + name.encode() + b"\0")
        if outside_problem(Path(path).parent, file):  # the reader refuses it; never read
            h.update(b"outside")
            continue
        try:
            regular = stat.S_ISREG(os.stat(file).st_mode)  # never a FIFO's endless read
            h.update(file_hash(file).encode() if regular else b"not a regular file")
        except OSError:
            h.update(b"missing")
    return h.hexdigest()


def _gltf_buffer_files(path: str | os.PathLike[str]) -> list[tuple[str, Path]]:
    """(uri, file) of each buffer a .gltf or .glb (plain or compressed) names by a relative
    path; [] for any other file or one whose JSON cannot be read (its row says why)."""
    from codec.errors import ShellscopeError
    from codec.formats.compressed import compression_of, inner_name, read_decompressed

    packed = compression_of(path)
    kind = Path(inner_name(path)).suffix.lower()
    if kind not in (".gltf", ".glb") or (packed and kind == ".glb"):
        return []  # a compressed .glb is read whole by its worker alone
    try:
        if packed:
            data = read_decompressed(path)
        else:
            with open(path, "rb") as f:
                if kind == ".glb":  # header (12 bytes), then the JSON chunk's length, type
                    head = f.read(20)
                    size = int.from_bytes(head[12:16], "little") if head[:4] == b"glTF" else 0
                    data = f.read(min(size, _MAX_GLTF_JSON))
                elif os.fstat(f.fileno()).st_size <= _MAX_GLTF_JSON:
                    data = f.read()
                else:
                    return []
        doc = json.loads(data)
    except (OSError, ValueError, ShellscopeError):
        return []
    buffers = doc.get("buffers") if isinstance(doc, dict) else None
    out = []
    for b in buffers if isinstance(buffers, list) else []:
        uri = b.get("uri") if isinstance(b, dict) else None
        if isinstance(uri, str) and uri and not _SCHEME.match(uri):
            out.append((uri, Path(path).parent / urllib.parse.unquote(uri)))
    return out


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
