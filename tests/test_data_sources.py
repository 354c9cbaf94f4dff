"""tests/data is the project's own copy of the real clips: every file there is listed in its
SOURCES.md with the sha256 of the unmodified original, and matches it."""

from __future__ import annotations

import hashlib
import lzma
import re
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
ROW = re.compile(r"^\| ([\w./-]+) \|.*\b([0-9a-f]{64})\b", re.MULTILINE)
NOT_CLIPS = {"SOURCES.md", "acl_reference.json"}


def test_every_data_file_is_listed_with_its_origin_and_unmodified() -> None:
    listed = dict(ROW.findall((DATA / "SOURCES.md").read_text(encoding="utf-8")))
    files = {
        p.relative_to(DATA).as_posix()
        for p in DATA.rglob("*")
        if p.is_file()
        and "licenses" not in p.parts
        and "golden" not in p.parts  # our own output, pinned by tests/codec/test_golden.py
        and p.name not in NOT_CLIPS
    }
    assert files == set(listed), (sorted(files - set(listed)), sorted(set(listed) - files))
    for name, digest in listed.items():
        data = (DATA / name).read_bytes()
        if name.endswith(".xz"):
            data = lzma.decompress(data)
        assert hashlib.sha256(data).hexdigest() == digest, name
