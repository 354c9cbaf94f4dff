"""What a USD crate (.usdc, a binary .usd, or one inside a .usdz) declares, checked before
usd-core reads it.

usd-core trusts a crate's table of contents and the counts at the head of its sections: a
2 KB file whose TOKENS section claims 600 MB of uncompressed tokens makes it allocate that
before it finds the data missing. This reads the table of contents and the counts only
(nothing is inflated) and refuses, naming the section and the byte, a section outside the
file or a count larger than codec.model.limits.declared_bytes_budget of the file's size.

Layout (little-endian): "PXR-USDC", 8 version bytes, the u64 offset of the table of
contents; the table is a u64 section count and per section a 16-byte name, u64 start and
u64 size. TOKENS starts with u64 token count, u64 uncompressed bytes, u64 compressed bytes;
STRINGS, FIELDS, FIELDSETS, PATHS and SPECS start with a u64 element count.
"""

from __future__ import annotations

import os
import struct
import zipfile

from codec.errors import ClipFormatError
from codec.model.limits import declared_bytes_budget, file_bytes

MAGIC = b"PXR-USDC"
MAX_SECTIONS = 64
_COUNTED = ("STRINGS", "FIELDS", "FIELDSETS", "PATHS", "SPECS")


def check_crate(path: object, data: bytes | None, file: str | None = None) -> None:
    """ClipFormatError naming `path` when the crate in `data` (or in the file `file`, by
    default `path`; each crate of a .usdz) declares more than it holds or than its budget
    allows."""
    if data is None:
        with open(file or os.fspath(path), "rb") as f:  # type: ignore[arg-type]
            if f.read(8)[:4] not in (MAGIC[:4], b"PK\x03\x04"):
                return  # text: usd-core's parser says what is wrong
            f.seek(0)
            data = f.read()
    budget = declared_bytes_budget(file_bytes(file or path, data))
    if data[:8] == MAGIC:
        _crate(path, data, 0, len(data), budget)
    elif data[:4] == b"PK\x03\x04":
        for start, end, inner in _stored_entries(data):
            if data[start : start + 8] == MAGIC:
                _crate(path, data, start, end, budget, inner)


def _stored_entries(data: bytes) -> list[tuple[int, int, str]]:
    """(start, end, name) of every uncompressed entry of a zip (usdz stores its files)."""
    import io

    out = []
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            for info in z.infolist():
                at = info.header_offset
                if info.compress_type != zipfile.ZIP_STORED or at + 30 > len(data):
                    continue
                name_len, extra_len = struct.unpack_from("<HH", data, at + 26)
                start = at + 30 + name_len + extra_len
                out.append((start, min(len(data), start + info.file_size), info.filename))
    except (zipfile.BadZipFile, ValueError, OSError, EOFError):
        return []  # usd-core says what is wrong with the package
    return out


def _crate(path: object, data: bytes, base: int, end: int, budget: int, inner: str = "") -> None:
    size = end - base
    where = f"{inner}: " if inner else ""
    if size < 24:
        raise ClipFormatError(path, f"{where}a crate of {size} bytes is truncated", offset=base)
    toc = struct.unpack_from("<Q", data, base + 16)[0]
    if toc + 8 > size:
        raise ClipFormatError(
            path,
            f"{where}the crate's table of contents at {toc:,} is past its end",
            offset=base + 16,
        )
    count = struct.unpack_from("<Q", data, base + toc)[0]
    if count > MAX_SECTIONS or toc + 8 + count * 32 > size:
        raise ClipFormatError(
            path, f"{where}the crate declares {count:,} sections", offset=base + toc
        )
    for i in range(count):
        at = base + toc + 8 + i * 32
        raw, start, length = struct.unpack_from("<16sQQ", data, at)
        name = raw.split(b"\0", 1)[0].decode("latin-1")
        if start > size or length > size - start:
            raise ClipFormatError(
                path,
                f"{where}crate section {name} claims bytes {start:,} to {start + length:,} "
                f"of a {size:,}-byte crate",
                offset=at,
            )
        _section(path, data, base + start, length, name, budget, where)


def _section(
    path: object, data: bytes, at: int, length: int, name: str, budget: int, where: str
) -> None:
    if name == "TOKENS" and length >= 24:
        tokens, raw, packed = struct.unpack_from("<QQQ", data, at)
        if raw > budget or tokens > raw + 1:
            raise ClipFormatError(
                path,
                f"{where}crate section TOKENS declares {tokens:,} tokens in {raw:,} bytes, "
                f"over the limit of {budget:,} bytes for this file",
                offset=at,
            )
        if packed > length - 24:
            raise ClipFormatError(
                path,
                f"{where}crate section TOKENS declares {packed:,} compressed bytes in a "
                f"{length:,}-byte section",
                offset=at,
            )
    elif name in _COUNTED and length >= 8:
        count = struct.unpack_from("<Q", data, at)[0]
        if count * 4 > budget:
            raise ClipFormatError(
                path,
                f"{where}crate section {name} declares {count:,} entries, over the limit of "
                f"{budget:,} bytes for this file",
                offset=at,
            )
