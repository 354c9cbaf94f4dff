"""The row cache's key changes with everything a row depends on: every flag of `library` that
changes a result, and every file of the codec package (codec_version)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path

import pytest

import codec
from codec.cli import build_parser
from codec.cli.library import _settings
from codec.library.cache import RowCache, codec_version, content_hash, file_hash, source_hash

DATA = Path(__file__).resolve().parents[2] / "data"

# a value for each flag of `library` that changes a row: the key must change with each
CHANGES_A_ROW: dict[str, list[str]] = {
    "--units": ["--units", "m"],
    "--sample-rate": ["--sample-rate", "24"],
    "--precision": ["--precision", "0.02"],
    "--shell-distance": ["--shell-distance", "5"],
    "--level": ["--level", "highest"],
    "--codec": ["--codec", "subsample"],
    "--overrides": ["--overrides", "RULES"],
    "--skin-strict": ["--skin-strict"],
    "--no-sidecars": ["--no-sidecars"],
    # the flags of other branches (issues 31, 32), checked where the parser has them
    "--bvh-positions": ["--bvh-positions", "add"],
    "--acl-compressor": ["--codec", "acl-2.1", "--acl-compressor", "ACL"],  # acl-2.1's rows
}
# flags that say where and how to run or what to write, never what a row holds (--sweep runs
# the library at each precision: each run's key is --precision's)
CHANGES_NO_ROW = {
    "-h", "--scheduler", "--workers", "--timeout", "--json", "--csv", "--report",
    "--compare", "--sweep", "--cache", "--no-cache", "--dashboard",
}  # fmt: skip


def _library_parser() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["library"]


def test_every_flag_that_changes_a_row_changes_the_key(tmp_path: Path) -> None:
    flags = {s for a in _library_parser()._actions for s in a.option_strings if s.startswith("--")}
    unsorted = flags - CHANGES_NO_ROW - set(CHANGES_A_ROW) - {"--help"}
    assert not unsorted, f"say whether these change a row: {sorted(unsorted)}"
    clip = tmp_path / "Fox.glb"
    shutil.copy(DATA / "gltf" / "Fox.glb", clip)
    # the clip's own sidecar (--no-sidecars leaves it out) and a rules file
    (tmp_path / "Fox.glb.shellscope.json").write_text('{"settings": {"precision": 0.005}}')
    rules = tmp_path / "rules.json"
    rules.write_text('[{"pattern": "*Head*", "precision": 0.002}]')
    acl = tmp_path / "acl_compressor"  # what runs acl-2.1 (never run here)
    acl.write_bytes(b"#!/bin/sh\nexit 1\n")
    acl.chmod(0o755)
    content = file_hash(clip)

    def key(extra: list[str]) -> str:
        named = {"RULES": str(rules), "ACL": str(acl)}
        argv = [named.get(a, a) for a in extra]
        args = build_parser().parse_args(["library", str(tmp_path), *argv])
        settings = _settings(args)
        return RowCache.key(content, settings.fingerprint(clip))

    default = key([])
    assert key([]) == default  # the same settings find the same rows
    keys = {flag: key(argv) for flag, argv in CHANGES_A_ROW.items() if flag in flags}
    same = [flag for flag, k in keys.items() if k == default]
    assert not same, f"the cache would give back the rows of a run without {same}"
    assert len(set(keys.values())) == len(keys)
    # another value of the same setting is another key too
    assert key(["--units", "cm"]) != keys["--units"]
    assert key(["--sample-rate", "30"]) != keys["--sample-rate"]
    if "--acl-compressor" in keys:  # another build of ACL at the same path makes other rows
        acl.write_bytes(acl.read_bytes() + b"# rebuilt\n")
        rebuilt = key(CHANGES_A_ROW["--acl-compressor"])
        assert rebuilt != keys["--acl-compressor"], "acl-2.1's rows outlive its compressor"


def test_the_codec_version_changes_with_every_file_of_the_codec(tmp_path: Path) -> None:
    package = Path(codec.__file__).resolve().parent
    assert codec_version() == source_hash(package)
    copy = tmp_path / "codec"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    files = sorted(p for p in copy.rglob("*") if p.is_file())
    assert len(files) > 50 and {"library", "cli", "measure"} <= {p.parts[-2] for p in files}
    base = source_hash(copy)
    stale = []
    for path in files:
        text = path.read_bytes()
        path.write_bytes(text + b"\n")
        if source_hash(copy) == base:
            stale.append(path.relative_to(copy).as_posix())
        path.write_bytes(text)
    assert not stale, f"a change to these leaves cached rows in place: {stale}"
    assert source_hash(copy) == base
    (copy / "measure" / "new_table.json").write_text("{}")  # a new file of any kind counts
    assert source_hash(copy) != base
    (copy / "measure" / "new_table.json").unlink()
    # compiled caches come and go without the source changing
    (copy / "measure" / "__pycache__").mkdir(exist_ok=True)
    (copy / "measure" / "__pycache__" / "shells.cpython-311.pyc").write_bytes(b"\0" * 16)
    assert source_hash(copy) == base


def split_glb(glb: Path, folder: Path) -> Path:
    """`glb` as a .gltf in `folder` and the rig.bin its one buffer names."""
    data = glb.read_bytes()
    n = int.from_bytes(data[12:16], "little")
    doc = json.loads(data[20 : 20 + n])
    at, size = 20 + n, int.from_bytes(data[20 + n : 24 + n], "little")  # the BIN chunk
    (folder / "rig.bin").write_bytes(data[at + 8 : at + 8 + size])
    doc["buffers"][0]["uri"] = "rig.bin"
    (folder / "rig.gltf").write_text(json.dumps(doc))
    return folder / "rig.gltf"


@pytest.mark.timeout(60)
def test_a_gltfs_buffer_file_is_part_of_its_content(tmp_path: Path) -> None:
    gltf = split_glb(DATA / "gltf" / "RiggedSimple.glb", tmp_path)
    assert codec.load_clip(gltf).num_joints == 2  # the reader reads the .bin
    base = content_hash(gltf)
    assert content_hash(gltf) == base != file_hash(gltf)
    data = (tmp_path / "rig.bin").read_bytes()
    (tmp_path / "rig.bin").write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert content_hash(gltf) != base  # the same .gltf, another clip
    (tmp_path / "rig.bin").unlink()
    os.mkfifo(tmp_path / "rig.bin")  # a FIFO is never read (its read would never end)
    assert content_hash(gltf) not in (base, file_hash(gltf))
    assert content_hash(DATA / "gltf" / "RiggedSimple.glb") == file_hash(
        DATA / "gltf" / "RiggedSimple.glb"
    )  # a .glb holding its buffer is its bytes
