"""What an FBX file declares, checked before ufbx allocates or inflates any of it.

A binary FBX node's array property declares its element count and, when zlib-compressed,
its compressed length: 650 KB of zlib can declare a PolygonVertexIndex of 20 million entries
(ufbx then needs ~1.8 GB). This walks the node records (never inflating anything) and
refuses the file, naming the node and the byte, when one array declares more than
codec.model.limits.MAX_MESH_ELEMENTS values, or all of them together more than
codec.model.limits.declared_bytes_budget of the file's size, or when a record's lengths point
past its parent or the file. An ASCII FBX declares its array counts as `*N`: the same
limits apply to them.

Binary layout (little-endian): a 27-byte header (magic, 0x1A 0x00, u32 version), then node
records: end offset, property count, property bytes (u32 each before version 7500, u64
from it), a u8 name length and the name, the properties, the child records, and a null
record (13 or 25 zero bytes) closing a list. Array properties (f d l i b) are u32 count, u32
encoding (0 raw, 1 zlib), u32 stored length and the stored bytes; S and R are u32 length and
bytes; Y C I F D L are 2, 1, 4, 4, 8, 8 bytes.
"""

from __future__ import annotations

import mmap
import os
import re
import struct

from codec.errors import ClipFormatError
from codec.model.limits import MAX_MESH_ELEMENTS, declared_bytes_budget, file_bytes

MAGIC = b"Kaydara FBX Binary  \x00"
_SCALAR = {ord("Y"): 2, ord("C"): 1, ord("I"): 4, ord("F"): 4, ord("D"): 8, ord("L"): 8}
_ARRAY = {ord("f"): 4, ord("d"): 8, ord("l"): 8, ord("i"): 4, ord("b"): 1}
_BLOB = (ord("S"), ord("R"))
_ASCII_COUNT = re.compile(rb"\*(\d{1,20})")
_MAX_NODES = 1 << 24
BROKEN = "not a readable FBX file: "


def check_declared_sizes(path: object, data: bytes | None) -> None:
    """ClipFormatError when the FBX file (`data`, or the file at `path`) declares arrays
    larger than its budget, or binary records that do not fit; nothing when it is fine."""
    if data is not None:
        _check(path, memoryview(data), len(data), file_bytes(path, data))
        return
    with open(os.fspath(path), "rb") as f:  # type: ignore[arg-type]
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return  # ufbx says what is wrong with an empty file
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            view = memoryview(m)
            try:
                _check(path, view, size, size)
            finally:
                view.release()


def _check(path: object, buf: memoryview, size: int, on_disk: int) -> None:
    budget = declared_bytes_budget(on_disk)
    if bytes(buf[: len(MAGIC)]) == MAGIC:
        _binary(path, buf, size, budget)
    else:
        _ascii(path, buf, budget)


def _ascii(path: object, buf: memoryview, budget: int) -> None:
    total = 0
    for m in _ASCII_COUNT.finditer(buf):
        count = int(m[1])
        total += count * 8
        if count > MAX_MESH_ELEMENTS or total > budget:
            line = bytes(buf[: m.start()]).count(b"\n") + 1
            raise ClipFormatError(path, _too_many(count, total, budget), line=line)


def _too_many(count: int, total: int, budget: int) -> str:
    if count > MAX_MESH_ELEMENTS:
        return f"an array of {count:,} values is over the limit of {MAX_MESH_ELEMENTS:,}"
    return (
        f"its arrays declare {total:,} bytes so far, over the limit of {budget:,} for this "
        "file (checked before anything is inflated)"
    )


def _binary(path: object, buf: memoryview, size: int, budget: int) -> None:
    if size < 27:
        return
    version = struct.unpack_from("<I", buf, 23)[0]
    wide = version >= 7500
    head = struct.Struct("<QQQB" if wide else "<IIIB")
    total = 0
    nodes = 0
    # (position, end of this list of sibling records)
    stack = [(27, size)]
    while stack:
        pos, end = stack.pop()
        if pos + head.size > end:
            continue
        node_end, nprops, _plen, name_len = head.unpack_from(buf, pos)
        if node_end == 0:
            continue  # the null record closing a list
        nodes += 1
        if nodes > _MAX_NODES:
            raise ClipFormatError(path, BROKEN + f"more than {_MAX_NODES:,} records", offset=pos)
        if node_end <= pos or node_end > end:
            raise ClipFormatError(
                path,
                BROKEN + f"a record's end offset {node_end:,} is outside its parent",
                offset=pos,
            )
        name = bytes(buf[pos + head.size : pos + head.size + name_len]).decode("latin-1")
        at = pos + head.size + name_len
        for _ in range(min(nprops, node_end)):
            if at >= node_end:
                break
            code = buf[at]
            at += 1
            if code in _SCALAR:
                at += _SCALAR[code]
            elif code in _ARRAY:
                if at + 12 > node_end:
                    raise ClipFormatError(
                        path, BROKEN + f"{name}: an array header past its record", offset=at
                    )
                count, encoding, stored = struct.unpack_from("<III", buf, at)
                total += count * _ARRAY[code]
                if count > MAX_MESH_ELEMENTS or total > budget:
                    raise ClipFormatError(
                        path, f"{name}: {_too_many(count, total, budget)}", offset=at
                    )
                if encoding == 0 and stored != count * _ARRAY[code]:
                    raise ClipFormatError(
                        path,
                        BROKEN + f"{name}: {count:,} values stored in {stored:,} bytes",
                        offset=at,
                    )
                at += 12 + stored
            elif code in _BLOB:
                if at + 4 > node_end:
                    raise ClipFormatError(
                        path, BROKEN + f"{name}: a length past its record", offset=at
                    )
                at += 4 + struct.unpack_from("<I", buf, at)[0]
            else:
                break  # an unknown property type: ufbx says what is wrong
            if at > node_end:
                raise ClipFormatError(
                    path, BROKEN + f"{name}: a property runs past the end of its record", offset=at
                )
        stack.append((node_end, end))  # the next sibling
        if at < node_end:
            stack.append((at, node_end))  # the children
