"""Clip files wrapped in .gz, .xz or .zst: recognised by name, checked by magic, read capped.

Long text clips (BVH, ACL SJSON, glTF JSON, ASCII FBX, USDA) shrink 5-20x, so they are often
stored compressed; `tests/data/acl/*.acl.sjson.xz` are. The reader of the inner format gets
the decompressed bytes. Decompression stops at `decompressed_limit(size)` bytes so that a
small malicious or broken file cannot fill the memory (a "zip bomb"): at most MAX_RATIO
times the compressed size (real clips shrink 1-33x with xz -9: the shared BVH, glTF, FBX
and ACL files), at least FREE_DECOMPRESSED, never more than MAX_DECOMPRESSED. The readers
then parse at up to ~30 bytes of memory per byte of text, so a 7 KB .xz of 48 MB of SJSON
rows (1.5 GB to parse) is refused after 8 MiB instead.
"""

from __future__ import annotations

import gzip
import lzma
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from codec.errors import ClipFormatError

COMPRESSIONS = {".gz": "gzip", ".xz": "xz", ".zst": "zstd"}
_MAGIC = {"gzip": b"\x1f\x8b", "xz": b"\xfd7zXZ\x00", "zstd": b"\x28\xb5\x2f\xfd"}
MAX_DECOMPRESSED = 512 * 1024 * 1024
FREE_DECOMPRESSED = 8 * 1024 * 1024
MAX_RATIO = 32
_CHUNK = 1 << 20


def compression_of(path: str | os.PathLike[str]) -> str | None:
    """'gzip', 'xz' or 'zstd' when the name ends in .gz, .xz or .zst (any case), else None."""
    return COMPRESSIONS.get(Path(path).suffix.lower())


def inner_name(path: str | os.PathLike[str]) -> str:
    """The file name without its compression suffix ('walk.bvh.gz' -> 'walk.bvh')."""
    name = Path(path).name
    return name[: -len(Path(name).suffix)] if compression_of(name) else name


class _ZstdReader:
    """Frames of zstd data one after another, read in small steps.

    zstandard's own stream reader ends quietly on a truncated frame; here a frame that has
    not reached its end when the input does is an EOFError, like gzip's and lzma's. Input
    goes in 1 KiB at a time, so one step cannot expand past the cap by much."""

    def __init__(self, f: BinaryIO) -> None:
        import zstandard

        self._new = zstandard.ZstdDecompressor().decompressobj
        self._f = f
        self._obj = self._new()
        self._fed = False  # the current frame has had input

    def read(self, _size: int) -> bytes:
        while True:
            chunk = self._f.read(1024)
            if not chunk:
                if self._fed:
                    raise EOFError("the last zstd frame is cut short")
                return b""
            out = bytearray()
            while chunk:
                out += self._obj.decompress(chunk)
                self._fed = True
                chunk = b""
                if self._obj.eof:
                    chunk = self._obj.unused_data
                    self._obj, self._fed = self._new(), False
            if out:
                return bytes(out)

    def __enter__(self) -> _ZstdReader:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def _opener(kind: str) -> Callable[[BinaryIO], BinaryIO]:
    if kind == "gzip":
        return lambda f: gzip.GzipFile(fileobj=f, mode="rb")  # type: ignore[return-value]
    if kind == "xz":
        return lambda f: lzma.LZMAFile(f, mode="rb")  # type: ignore[return-value]
    return _ZstdReader  # type: ignore[return-value]


def decompressed_limit(compressed_size: int) -> int:
    """How many bytes a compressed file of `compressed_size` bytes may decompress to."""
    return min(MAX_DECOMPRESSED, max(FREE_DECOMPRESSED, MAX_RATIO * compressed_size))


def read_decompressed(path: str | os.PathLike[str], max_size: int | None = None) -> bytes:
    """The decompressed contents of a .gz / .xz / .zst file, at most `max_size` bytes
    (default: `decompressed_limit` of the file's size; a caller's smaller cap, such as the
    inner format's largest file, wins).

    The data is decompressed twice: once to count it, keeping nothing, and again to keep it
    only when it fits. A bomb is refused with no more memory than a chunk, instead of
    after `max_size` bytes of it have been kept (a 47 MB .bvh.gz used 631 MB that way).

    Raises ClipFormatError naming the file when the data is not what the name says, is
    corrupt or truncated, or decompresses to more than `max_size` bytes.
    """
    kind = compression_of(path)
    if kind is None:
        raise ClipFormatError(path, f"not a compressed file (expected {', '.join(COMPRESSIONS)})")
    suffix = Path(path).suffix
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            limit = decompressed_limit(size)
            max_size = limit if max_size is None else min(max_size, limit)
            head = f.read(len(_MAGIC[kind]))
            if head != _MAGIC[kind]:
                raise ClipFormatError(
                    path, f"the name ends in {suffix} but the data is not {kind} data", offset=0
                )
            total = _decompress(f, kind, max_size, None)
            if total > max_size:
                raise ClipFormatError(
                    path,
                    f"decompresses to more than {max_size / 2**20:g} MiB, the limit for a "
                    f"{kind} file of {size} bytes ({MAX_RATIO} times its size, at least "
                    f"{FREE_DECOMPRESSED / 2**20:g} MiB, at most the largest file of its "
                    "format; is it really a clip? Decompress it first to read it anyway)",
                )
            parts: list[bytes] = []
            _decompress(f, kind, max_size, parts)
    except ClipFormatError:
        raise
    except FileNotFoundError:
        raise ClipFormatError(path, "no such file") from None
    except (EOFError, lzma.LZMAError, zlib.error, gzip.BadGzipFile) as e:
        raise ClipFormatError(path, f"corrupt or truncated {kind} data ({e})") from None
    except OSError as e:
        raise ClipFormatError(path, f"cannot read: {e.strerror or e}") from None
    except Exception as e:  # zstandard.ZstdError and friends
        if type(e).__module__.startswith("zstandard"):
            raise ClipFormatError(path, f"corrupt or truncated {kind} data ({e})") from None
        raise
    if total == 0:
        raise ClipFormatError(path, f"the {kind} data decompresses to nothing")
    return b"".join(parts)


def _decompress(f: BinaryIO, kind: str, max_size: int, keep: list[bytes] | None) -> int:
    """Decompress `f` from its start; bytes counted (stopping past `max_size`), kept in
    `keep` when it is a list."""
    f.seek(0)
    total = 0
    with _opener(kind)(f) as stream:
        while chunk := stream.read(_CHUNK):
            total += len(chunk)
            if total > max_size:
                break
            if keep is not None:
                keep.append(chunk)
    return total
