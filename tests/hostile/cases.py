"""Hostile folders, sidecars and flags (issue 37): one builder per attack, shared by the tests
of this folder and `bench/hostile_inputs.py`.

Each `Case` builds its files in a folder of its own (the library or clip under `lib/`, what
lies outside it under `outside/`, outputs under `out/`) and returns the command line to run
(`python -m codec ...` or `shellscope ...`, from that folder). `judge` says what is wrong with
a run: the exit code and one stderr line, no traceback, SECRET nowhere in what it printed or
wrote, no input changed, no folder made, and the case's own check. The big files are sparse
(their size costs no disk), so every case is quick to build.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.codec.formats import hostile_files as hf

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
CLIP = DATA / "acl" / "cmu_09_02.acl.sjson"
SECRET = "Zq9xKw:$6$hostile37SECRET$r8/x:19000:0:99999:7:::"  # an /etc/shadow line
QUOTED = ("Zq9x", "hostile37SECRET", "99999:7")  # any of them printed: the file was quoted
FORMULA = ("=", "+", "-", "@", "\t", "\r")
GB = 1 << 30

Check = Callable[[Path, str, str], str | None]


@dataclass(frozen=True)
class Case:
    """One hostile run: `build(folder)` makes the files and returns the arguments after the
    program (`module`: "codec" for `python -m codec`, "app" for `shellscope`); the run must
    exit `code` with at most `lines` stderr lines (exactly one for a refusal), each word of
    `words` in its stderr, and pass `check(folder, stdout, stderr)`."""

    finding: int
    what: str
    build: Callable[[Path], list[str]]
    module: str = "codec"
    code: int = 2
    lines: int = 1
    words: tuple[str, ...] = ()
    check: Check | None = None


# ------------------------------------------------------------------ files


def lib(folder: Path) -> Path:
    out = folder / "lib"
    out.mkdir(exist_ok=True)
    (folder / "out").mkdir(exist_ok=True)
    return out


def secret(folder: Path) -> Path:
    """A file outside the library holding SECRET (what a link must never disclose)."""
    (folder / "outside").mkdir(exist_ok=True)
    path = folder / "outside" / "secret.txt"
    path.write_text(SECRET + "\nsecond line\n")
    return path


def clip(folder: Path, name: str = "c.acl.sjson", precision: float | None = None) -> Path:
    """A copy of cmu_09_02 in lib/ (with a sidecar setting its precision when asked)."""
    path = lib(folder) / name
    shutil.copy(CLIP, path)
    if precision is not None:
        side = path.with_name(path.name + ".shellscope.json")
        side.write_text(json.dumps({"settings": {"precision": precision}}))
    return path


def sparse(path: Path, size: int, head: bytes = b"") -> Path:
    """A file of `size` bytes that costs no disk: `head`, then a hole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)
    return path


def bvh(names: tuple[str, str] = ("Hips", "Chest"), frames: int = 3) -> str:
    """A small valid BVH: a root with 6 channels and one joint, both named as asked."""
    rows = "\n".join(" ".join(["0"] * 6 + [str(5 * k), "0", "0"]) for k in range(frames))
    return (
        f"HIERARCHY\nROOT {names[0]}\n{{\n  OFFSET 0 0 0\n"
        "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
        f"  JOINT {names[1]}\n  {{\n    OFFSET 0 30 0\n    CHANNELS 3 Zrotation Xrotation "
        "Yrotation\n    End Site\n    {\n      OFFSET 0 30 0\n    }\n  }\n}\n"
        f"MOTION\nFrames: {frames}\nFrame Time: 0.0333333\n{rows}\n"
    )


CONTROL_NAMES = ("\x1b]0;pwned\x07Hips", "\x1b[2J\x1b[HChest")
FORMULA_NAMES = ("=1+1", "@SUM(A1)")


def library_run(folder: Path, *extra: str) -> list[str]:
    """`library lib/` on one worker with every output in out/ (no shared cache)."""
    return [
        "library", str(folder / "lib"), "--workers", "1", "--no-cache",
        "--json", str(folder / "out" / "l.json"), "--csv", str(folder / "out" / "l.csv"),
        "--report", str(folder / "out" / "l.html"), *extra,
    ]  # fmt: skip


def csv_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def cached_entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*/*.json"))


def recrc(data: bytearray) -> bytes:
    """A .ssc with its container CRC made right again after an edit of its payload."""
    struct.pack_into("<I", data, 8, zlib.crc32(bytes(data[12:])))
    return bytes(data)


BUILD_ROOT = "SHELLSCOPE_CASES_ROOT"  # set: cases are built by that checkout's codec


def _cli(*argv: str) -> None:
    """Run `python -m codec` while building a case (its output dropped): in this process,
    or, when $SHELLSCOPE_CASES_ROOT names a checkout, with that checkout's codec (so that a
    cache filled by it has its keys: bench/hostile_inputs.py --root)."""
    root = os.environ.get(BUILD_ROOT)
    if root:
        env = {**os.environ, "PYTHONPATH": root}
        cmd = [sys.executable, "-m", "codec", *argv]
        done = subprocess.run(cmd, env=env, cwd=root, capture_output=True)
        assert done.returncode == 0, (argv, done.stderr[-500:])
        return
    from codec.cli import main

    code = main(list(argv), io.StringIO(), io.StringIO())
    assert code == 0, argv


# ------------------------------------------------------------------ checks


def _rows_say(*words: str, path: str = "out/l.csv") -> Check:
    def check(folder: Path, out: str, err: str) -> str | None:
        text = (folder / path).read_text(encoding="utf-8") if (folder / path).exists() else ""
        missing = [w for w in words if w not in text]
        return f"{path} lacks {missing}" if missing else None

    return check


def _no_formula(path: str, columns: tuple[str, ...]) -> Check:
    def check(folder: Path, out: str, err: str) -> str | None:
        rows = csv_rows(folder / path)
        bad = [r[c] for r in rows for c in columns if (r.get(c) or "").startswith(FORMULA)]
        return f"{path}: formula cells {bad[:3]}" if bad else None

    return check


def _no_control(where: str = "stdout") -> Check:
    def check(folder: Path, out: str, err: str) -> str | None:
        text = out if where == "stdout" else (folder / where).read_text("utf-8", "replace")
        bad = sorted({c for c in text if ord(c) < 32 and c not in "\n\t" or c == "\x7f"})
        return f"{where} holds control characters {bad}" if bad else None

    return check


def _all(*checks: Check) -> Check:
    def check(folder: Path, out: str, err: str) -> str | None:
        for c in checks:
            problem = c(folder, out, err)
            if problem:
                return problem
        return None

    return check


# ------------------------------------------------------------------ 1: read outside, quoted


def lib_symlink_outside(folder: Path) -> list[str]:
    clip(folder)
    os.symlink(secret(folder), folder / "lib" / "shadow.bvh")
    return library_run(folder)


def lib_sidecar_outside(folder: Path) -> list[str]:
    path = clip(folder)
    os.symlink(secret(folder), path.with_name(path.name + ".shellscope.json"))
    return library_run(folder)


def stats_symlink_outside(folder: Path) -> list[str]:
    clip(folder)
    os.symlink(secret(folder), folder / "lib" / "shadow.bvh")
    return ["stats", str(folder / "lib"), "--jobs", "1"]


def _secret_as(name: str) -> Callable[[Path], list[str]]:
    def build(folder: Path) -> list[str]:
        path = lib(folder) / name
        shutil.copy(secret(folder), path)
        return ["compress", str(path)]

    return build


# ------------------------------------------------------------------ 2: buffers, images, layers


def gltf_buffer_dotdot(folder: Path) -> list[str]:
    doc, blob = hf.gltf_doc(uri="../outside/data.bin")
    secret(folder)
    (folder / "outside" / "data.bin").write_bytes(blob)
    return ["compress", str(hf._write_json(lib(folder), "a.gltf", doc))]


def gltf_buffer_link_out(folder: Path) -> list[str]:
    doc, blob = hf.gltf_doc(uri="data.bin")
    secret(folder)
    (folder / "outside" / "data.bin").write_bytes(blob)
    os.symlink(folder / "outside" / "data.bin", lib(folder) / "data.bin")
    return ["compress", str(hf._write_json(folder / "lib", "a.gltf", doc))]


def gltf_image_outside(folder: Path) -> list[str]:
    doc, _ = hf.gltf_doc()
    doc["images"] = [{"uri": "../outside/secret.txt"}]
    secret(folder)
    source = hf._write_json(lib(folder), "a.gltf", doc)
    _cli("compress", str(source), "-o", str(folder / "lib" / "a.ssc"))
    return ["decompress", str(folder / "lib" / "a.ssc"), "-o", str(folder / "out" / "a.gltf")]


def usd_sibling_prefix(folder: Path) -> list[str]:
    """A sublayer in `clip-other/` beside the clip's folder `clip/`: outside by components,
    inside by string prefix."""
    base = lib(folder)
    (base / "clip").mkdir()
    (base / "clip-other").mkdir()
    hf.usda_text(base / "clip-other", "outside.usda")
    path = hf.usda_text(
        base / "clip", "clip.usda", sublayers="subLayers = [@../clip-other/outside.usda@]"
    )
    return ["compress", str(path)]


# ------------------------------------------------------------------ 4, 5: outputs


def _shot(target: Callable[[Path], str], flag: str = "--screenshot") -> Callable[[Path], list[str]]:
    def build(folder: Path) -> list[str]:
        path = clip(folder, precision=0.02)
        return [str(path), flag, target(folder)]

    return build


def _fifo(folder: Path) -> str:
    os.mkfifo(folder / "out" / "view.png")
    return str(folder / "out" / "view.png")


def _long_name(folder: Path) -> list[str]:
    return ["compress", str(clip(folder)), "-o", str(folder / "out" / ("x" * 252 + ".ssc"))]


def lib_json_over_sidecar(folder: Path) -> list[str]:
    path = clip(folder, precision=0.005)
    return ["library", str(folder / "lib"), "--no-cache", "--json", f"{path}.shellscope.json"]


def lib_json_as_a_sidecar(folder: Path) -> list[str]:
    clip(folder)
    out = folder / "out" / "other.bvh.shellscope.json"
    return ["library", str(folder / "lib"), "--no-cache", "--json", str(out)]


def json_over_overrides(folder: Path) -> list[str]:
    rules = lib(folder) / "rules.json"
    rules.write_text('[{"pattern": "*Hand*", "precision": 0.002}]')
    return ["compress", str(clip(folder)), "--overrides", str(rules), "--json", str(rules)]


# ------------------------------------------------------------------ 6: patterns


def _rules_file(folder: Path, rules: list[dict]) -> Path:
    path = lib(folder) / "rules.json"
    path.write_text(json.dumps(rules))
    return path


def sidecar_brackets(folder: Path) -> list[str]:
    path = clip(folder)
    side = path.with_name(path.name + ".shellscope.json")
    side.write_text(json.dumps({"overrides": [{"pattern": "[" * 100_000, "precision": 0.5}]}))
    return ["compress", str(path)]


def _stars(stars: int, rules: int = 120_000) -> Callable[[Path], list[str]]:
    def build(folder: Path) -> list[str]:
        flood = [{"pattern": "*a" * stars + f"*b{i}", "precision": 0.5} for i in range(rules)]
        return ["compress", str(clip(folder)), "--overrides", str(_rules_file(folder, flood))]

    return build


def lib_sidecar_brackets(folder: Path) -> list[str]:
    sidecar_brackets(folder)
    return library_run(folder)


# ------------------------------------------------------------------ 7, 8: cache, --compare


def _damage(entry: Path, how: str) -> None:
    """Replace one cache entry by something that is not an entry we wrote."""
    entry.unlink()
    good = {"path": "x", "animation": "", "error": ""}
    if how == "fifo":
        os.mkfifo(entry)
    elif how == "dev_zero":
        os.symlink("/dev/zero", entry)
    elif how == "nested":
        entry.write_text('{"rows": ' + "[" * 200_000 + "]" * 200_000 + "}")
    else:
        rows = {
            "list_of_numbers": [1, 2],
            "missing_keys": [good],
            "string_numbers": [{**good, "joints": "44", "compressed_size": "3375"}],
            "nan": [{"path": "x", "animation": "", "error": "", "max_error": float("nan")}],
        }[how]
        entry.write_text(json.dumps({"rows": rows}))


DAMAGES = ("list_of_numbers", "missing_keys", "string_numbers", "nan", "nested", "fifo", "dev_zero")


def lib_cache_damaged(folder: Path) -> list[str]:
    """Seven clips run once to fill the cache, then each entry replaced by a different kind
    of damage: every one must read as a miss and be computed again."""
    for k, _ in enumerate(DAMAGES):
        clip(folder, f"c{k}.acl.sjson", precision=0.01 + 0.001 * k)
    cache = folder / "out" / "cache"
    _cli("library", str(folder / "lib"), "--workers", "1", "--cache", str(cache))
    entries = cached_entries(cache)
    assert len(entries) == len(DAMAGES), entries
    for entry, how in zip(entries, DAMAGES, strict=True):
        _damage(entry, how)
    return [
        "library", str(folder / "lib"), "--workers", "1", "--cache", str(cache),
        "--csv", str(folder / "out" / "l.csv"),
    ]  # fmt: skip


def _all_computed(folder: Path, out: str, err: str) -> str | None:
    rows = csv_rows(folder / "out" / "l.csv")
    failed = [r["error"] for r in rows if r["error"]]
    if len(rows) != len(DAMAGES) or failed:
        return f"{len(rows)} rows, errors {failed[:2]}"
    return None if "0 from the cache" in err else "a damaged entry was used"


def _compare(make: Callable[[Path], Path]) -> Callable[[Path], list[str]]:
    def build(folder: Path) -> list[str]:
        clip(folder)
        return ["library", str(folder / "lib"), "--no-cache", "--compare", str(make(folder))]

    return build


def _compare_fifo(folder: Path) -> Path:
    os.mkfifo(folder / "out" / "old.json")
    return folder / "out" / "old.json"


def _compare_dev_zero(folder: Path) -> Path:
    os.symlink("/dev/zero", folder / "out" / "old.json")
    return folder / "out" / "old.json"


def _compare_nested(folder: Path) -> Path:
    path = folder / "out" / "old.json"
    path.write_text('{"format": "shellscope-library", "rows": ' + "[" * 200_000 + "]" * 200_000)
    return path


def _compare_huge(folder: Path) -> Path:
    return sparse(folder / "out" / "old.json", 124 << 20, b'{"format": "shellscope-library"')


def _compare_shape(folder: Path) -> Path:
    path = folder / "out" / "old.json"
    row = {"path": "c.acl.sjson", "animation": "09_02", "error": "", "compressed_size": "9"}
    path.write_text(json.dumps({"format": "shellscope-library", "rows": [row]}))
    return path


def library_json_rows(count: int) -> str:
    """A library JSON of `count` plausible rows (what `--compare` must still read)."""
    row = {
        "path": "clips/some_folder/a_clip_name_0000.acl.sjson", "animation": "Take 001",
        "joints": 44, "samples": 1200, "duration": 39.96, "raw_size": 2112000,
        "compressed_size": 152345, "compression_ratio": 13.86, "max_error": 0.00998,
        "precision": 0.01, "precision_met": True, "worst_joint": "LeftHandIndex2",
        "worst_time": 12.375, "codec": "acl-style", "compression_time": 0.812, "error": "",
    }  # fmt: skip
    rows = [
        dict(row, path=f"clips/some_folder/a_clip_name_{i:06d}.acl.sjson") for i in range(count)
    ]
    return json.dumps({"format": "shellscope-library", "version": 1, "rows": rows}, indent=1)


def _compare_at_cap(folder: Path) -> Path:
    from codec.library.outputs import MAX_LIBRARY_JSON

    path = folder / "out" / "old.json"
    text = library_json_rows(1000)
    per_row = len(text) / 1000
    path.write_text(library_json_rows(int(MAX_LIBRARY_JSON * 0.97 / per_row)))
    return path


# ------------------------------------------------------------------ 9: sizes


def _sparse_clip(name: str, size: int, head: bytes) -> Callable[[Path], list[str]]:
    def build(folder: Path) -> list[str]:
        return ["compress", str(sparse(lib(folder) / name, size, head))]

    return build


def bvh_gz_bomb(folder: Path) -> list[str]:
    """A 20 MB .bvh.gz of many gzip members that decompresses to 800 MiB of motion rows:
    past the BVH cap (the old reader kept 512 MiB of it before refusing)."""
    head = bvh().encode()
    block = b"".join(b"0 0 0 0 0 0 %d 0 0\n" % (k % 977) for k in range(200_000))[: 4 << 20]
    member = gzip.compress(block, compresslevel=1)
    path = lib(folder) / "bomb.bvh.gz"
    with open(path, "wb") as f:
        f.write(gzip.compress(head))
        for _ in range(200):
            f.write(member)
    return ["compress", str(path)]


def lib_huge_clip(folder: Path) -> list[str]:
    clip(folder)
    sparse(folder / "lib" / "big.bvh", 20 * GB, b"HIERARCHY\n")
    return [*library_run(folder), "--timeout", "5"]


def lib_huge_sidecar(folder: Path) -> list[str]:
    path = clip(folder)
    sparse(path.with_name(path.name + ".shellscope.json"), 3 * GB // 2, b'{"settings": {}}')
    return library_run(folder)


# ------------------------------------------------------------------ 11: numbers in sidecars


def _sidecar_text(text: str) -> Callable[[Path], list[str]]:
    def build(folder: Path) -> list[str]:
        path = clip(folder)
        path.with_name(path.name + ".shellscope.json").write_text(text)
        return ["compress", str(path)]

    return build


def window_sidecar_digits(folder: Path) -> list[str]:
    path = clip(folder)
    side = path.with_name(path.name + ".shellscope.json")
    side.write_text('{"settings": {"precision": ' + "1" * 4000 + "}}")
    return [str(path), "--screenshot-view", str(folder / "out" / "v.png"), "--size", "640x480"]


# ------------------------------------------------------------------ 12: names not UTF-8


def lib_non_utf8_name(folder: Path) -> list[str]:
    shutil.copy(CLIP, os.path.join(os.fsencode(lib(folder)), b"clip\xff\xfe.acl.sjson"))
    return library_run(folder)


def _non_utf8_written(folder: Path, out: str, err: str) -> str | None:
    for name in ("l.csv", "l.json", "l.html"):
        path = folder / "out" / name
        if not path.exists():
            return f"out/{name} not written"
        if "clip\\xff\\xfe" not in path.read_text(encoding="utf-8").replace("\\\\", "\\"):
            return f"out/{name} lacks the name clip\\xff\\xfe"
    return None


# ------------------------------------------------------------------ 13, 14: flags


def _scheduler(address: str) -> Callable[[Path], list[str]]:
    def build(folder: Path) -> list[str]:
        clip(folder)
        return ["library", str(folder / "lib"), "--no-cache", "--scheduler", address]

    return build


def _ssc_body_flipped(codec: str) -> Callable[[Path], list[str]]:
    """A .ssc of `codec` whose first payload byte is flipped, its CRC made right again: the
    container reads, the codec's body does not."""

    def build(folder: Path) -> list[str]:
        path = lib(folder) / f"{codec}.ssc"
        _cli("compress", str(clip(folder)), "--codec", codec, "-o", str(path))
        data = bytearray(path.read_bytes())
        data[20] ^= 0xFF
        path.write_bytes(recrc(data))
        return ["info", str(path)]

    return build


# ------------------------------------------------------------------ 15, 16: names are data


def _bvh_clip(folder: Path, names: tuple[str, str], name: str = "n.bvh") -> Path:
    path = lib(folder) / name
    path.write_text(bvh(names), encoding="utf-8")
    return path


def compress_control_names(folder: Path) -> list[str]:
    return ["compress", str(_bvh_clip(folder, CONTROL_NAMES))]


def decompress_control_names(folder: Path) -> list[str]:
    doc, _ = hf.gltf_doc(num_joints=3)
    for node, name in zip(doc["nodes"], ("a\u0000b", "\u001b[2Jc", "d\u007fe"), strict=True):
        node["name"] = name
    source = hf._write_json(lib(folder), "n.gltf", doc)
    _cli("compress", str(source), "-o", str(folder / "out" / "n.ssc"))
    return ["decompress", str(folder / "out" / "n.ssc"), "-o", str(folder / "out" / "n.bvh")]


def lib_control_names(folder: Path) -> list[str]:
    _bvh_clip(folder, CONTROL_NAMES)
    return library_run(folder)


def lib_formula_names(folder: Path) -> list[str]:
    _bvh_clip(folder, FORMULA_NAMES, "=HYPERLINK(1).bvh")
    _bvh_clip(folder, ("Hips", "Chest"), "-walk.bvh")
    return library_run(folder)


def stats_formula_names(folder: Path) -> list[str]:
    _bvh_clip(folder, FORMULA_NAMES, "@x.bvh")
    return ["stats", str(folder / "lib"), "--jobs", "1", "--csv", str(folder / "out" / "s.csv")]


def export_formula_names(folder: Path) -> list[str]:
    path = _bvh_clip(folder, FORMULA_NAMES)
    return [str(path), "--export-csv", str(folder / "out" / "j.csv")]


# ------------------------------------------------------------------ 17: crash reports


def usd_abort(folder: Path) -> list[str]:
    path = lib(folder) / "invalid_spec.usdc"
    shutil.copy(DATA / "hostile" / "usd_crate_invalid_spec.usdc", path)
    return ["compress", str(path)]


LIBRARY_LINES = 6  # a library run that completes: progress lines and its closing line

CASES: dict[str, Case] = {
    # 1: nothing read outside the folder, nothing of a file quoted
    "lib_symlink_outside": Case(
        1,
        "library: shadow.bvh -> a secret outside the folder",
        lib_symlink_outside,
        code=0,
        lines=LIBRARY_LINES,
        check=_rows_say("shadow.bvh", "outside the library folder"),
    ),
    "lib_sidecar_outside": Case(
        1,
        "library: a sidecar linking out of the folder",
        lib_sidecar_outside,
        code=0,
        lines=LIBRARY_LINES,
        check=_rows_say("its sidecar", "outside the library folder"),
    ),
    "stats_symlink_outside": Case(
        1,
        "stats: shadow.bvh -> a secret outside the folder",
        stats_symlink_outside,
        code=0,
        lines=4,
    ),
    "compress_secret_named_bvh": Case(
        1, "a secret named .bvh: not quoted", _secret_as("s.bvh"), words=("'HIERARCHY'",)
    ),
    "compress_secret_named_sjson": Case(1, "a secret named .acl.sjson", _secret_as("s.acl.sjson")),
    "compress_secret_named_gltf": Case(1, "a secret named .gltf", _secret_as("s.gltf")),
    "compress_secret_named_ssc": Case(1, "a secret named .ssc", _secret_as("s.ssc")),
    "compress_secret_named_usda": Case(1, "a secret named .usda", _secret_as("s.usda")),
    # 3: a glTF's buffers and images, USD's layers, in their folder
    "gltf_buffer_dotdot": Case(
        3, "glTF buffer ../outside/data.bin", gltf_buffer_dotdot, words=("outside",)
    ),
    "gltf_buffer_link_out": Case(
        3, "glTF buffer: a link beside it to outside", gltf_buffer_link_out, words=("link",)
    ),
    "gltf_image_outside": Case(
        3,
        "lossy glTF copy of a source whose image is ../outside",
        gltf_image_outside,
        words=("images[0].uri",),
    ),
    "usd_sibling_prefix": Case(
        3, "USD sublayer in clip-other/ beside clip/", usd_sibling_prefix, words=("outside",)
    ),
    # 4, 5: nothing overwritten
    "shot_over_clip": Case(
        4,
        "--screenshot CLIP",
        _shot(lambda d: str(d / "lib" / "c.acl.sjson")),
        "app",
        words=("is the input file",),
    ),
    "shot_over_sidecar": Case(
        4,
        "--screenshot CLIP.shellscope.json",
        _shot(lambda d: str(d / "lib" / "c.acl.sjson.shellscope.json")),
        "app",
        words=("refusing to overwrite",),
    ),
    "shot_view_fifo": Case(
        4,
        "--screenshot-view FIFO",
        _shot(_fifo, "--screenshot-view"),
        "app",
        words=("not a regular file",),
    ),
    "shot_folder": Case(
        4, "--screenshot FOLDER", _shot(lambda d: str(d / "out")), "app", words=("folder",)
    ),
    "shot_missing_folder": Case(
        4,
        "--screenshot NEW/x.png",
        _shot(lambda d: str(d / "out" / "new" / "x.png")),
        "app",
        words=("no such folder",),
    ),
    "shot_dev_null": Case(4, "--screenshot /dev/null", _shot(lambda d: "/dev/null"), "app"),
    "lib_json_over_sidecar": Case(
        5,
        "library --json CLIP.shellscope.json",
        lib_json_over_sidecar,
        words=("refusing to overwrite",),
    ),
    "lib_json_as_a_sidecar": Case(
        5, "library --json X.shellscope.json", lib_json_as_a_sidecar, words=("sidecar",)
    ),
    "compress_json_over_overrides": Case(
        5,
        "compress --json over its --overrides",
        json_over_overrides,
        words=("is the input file",),
    ),
    # 6: patterns
    "sidecar_100k_brackets": Case(
        6, "a sidecar rule of 100,000 '['", sidecar_brackets, words=("at most 1,024",)
    ),
    "overrides_120k_rules_41_stars": Case(
        6, "120,000 rules *a*a...*bN, 41 stars (14.6 MB)", _stars(40), words=("wildcards",)
    ),
    "overrides_120k_rules_32_stars": Case(
        6, "120,000 rules *a*a...*bN, 32 stars (12.5 MB)", _stars(31), code=0, lines=3
    ),
    "lib_sidecar_100k_brackets": Case(
        6,
        "library: a sidecar of 100,000 '['",
        lib_sidecar_brackets,
        code=0,
        lines=LIBRARY_LINES,
        check=_rows_say("at most 1,024"),
    ),
    # 7, 8: the cache and --compare
    "lib_cache_damaged": Case(
        7,
        "library: 7 cache entries damaged 7 ways",
        lib_cache_damaged,
        code=0,
        lines=LIBRARY_LINES,
        check=_all_computed,
    ),
    "compare_fifo": Case(8, "--compare FIFO", _compare(_compare_fifo), words=("regular file",)),
    "compare_dev_zero": Case(
        8, "--compare -> /dev/zero", _compare(_compare_dev_zero), words=("regular file",)
    ),
    "compare_nested": Case(
        8, "--compare 200,000 nested lists", _compare(_compare_nested), words=("nested",)
    ),
    "compare_124_mb": Case(
        8, "--compare a 124 MB file", _compare(_compare_huge), words=("larger than any",)
    ),
    "compare_wrong_shape": Case(
        8,
        "--compare rows of string numbers",
        _compare(_compare_shape),
        words=("rows[0].",),
    ),
    "compare_at_the_cap": Case(
        8,
        "--compare a valid 62 MB library JSON (legal)",
        _compare(_compare_at_cap),
        code=0,
        lines=LIBRARY_LINES,
    ),
    # 9, 10: sizes before work
    "bvh_2gb": Case(9, "a 2 GB .bvh", _sparse_clip("a.bvh", 2 * GB, b"HIERARCHY\n")),
    "sjson_2gb": Case(9, "a 2 GB .acl.sjson", _sparse_clip("a.acl.sjson", 2 * GB, b"version=5\n")),
    "gltf_2gb": Case(9, "a 2 GB .gltf", _sparse_clip("a.gltf", 2 * GB, b'{"asset": {')),
    "fbx_2gb": Case(9, "a 2 GB .fbx", _sparse_clip("a.fbx", 2 * GB, b"Kaydara FBX Binary  \0")),
    "ssc_2gb": Case(9, "a 2 GB .ssc", _sparse_clip("a.ssc", 2 * GB, b"SSCF\x03")),
    "bvh_20gb": Case(9, "a 20 GB .bvh", _sparse_clip("a.bvh", 20 * GB, b"HIERARCHY\n")),
    "bvh_gz_bomb": Case(9, "a 20 MB .bvh.gz of 800 MiB", bvh_gz_bomb, words=("MiB",)),
    "lib_20gb_clip": Case(
        9,
        "library: a 20 GB .bvh, --timeout 5",
        lib_huge_clip,
        code=0,
        lines=LIBRARY_LINES,
        check=_rows_say("larger than any BVH file"),
    ),
    "lib_1.5gb_sidecar": Case(
        9,
        "library: a 1.5 GB sidecar",
        lib_huge_sidecar,
        code=0,
        lines=LIBRARY_LINES,
        check=_rows_say("its sidecar", "larger than any sidecar"),
    ),
    "shot_size_20000": Case(
        10,
        "--size 20000x20000 --screenshot",
        lambda d: [str(clip(d)), "--size", "20000x20000", "--screenshot", str(d / "out" / "s.png")],
        "app",
        words=("--size",),
    ),
    # 11: numbers in a sidecar
    "sidecar_4000_digits": Case(
        11,
        "precision of 4,000 digits",
        _sidecar_text('{"settings": {"precision": ' + "1" * 4000 + "}}"),
        words=("digits",),
    ),
    "sidecar_5000_digits": Case(
        11,
        "precision of 5,000 digits",
        _sidecar_text('{"settings": {"precision": ' + "1" * 5000 + "}}"),
        words=("digits",),
    ),
    "sidecar_nan": Case(
        11, "precision NaN", _sidecar_text('{"settings": {"precision": NaN}}'), words=("nan",)
    ),
    "sidecar_1e999": Case(
        11,
        "a rule's precision 1e999",
        _sidecar_text('{"overrides": [{"pattern": "*", "precision": 1e999}]}'),
        words=("overrides[0]",),
    ),
    "sidecar_5e-324": Case(
        11,
        "precision 5e-324",
        _sidecar_text('{"settings": {"precision": 5e-324}}'),
        words=("too small",),
    ),
    "window_sidecar_4000_digits": Case(
        11,
        "the window: a sidecar of 4,000 digits (the clip opens without it)",
        window_sidecar_digits,
        "app",
        code=0,
        lines=2,
    ),
    # 12: names that are not UTF-8
    "lib_non_utf8_name": Case(
        12,
        "library: clip\\xff\\xfe.acl.sjson, --csv --json --report",
        lib_non_utf8_name,
        code=0,
        lines=LIBRARY_LINES,
        check=_non_utf8_written,
    ),
    # 13: --scheduler
    "scheduler_file": Case(
        13, "--scheduler file://x", _scheduler("file://x"), words=("--scheduler",)
    ),
    "scheduler_inproc": Case(
        13, "--scheduler inproc://x", _scheduler("inproc://x"), words=("--scheduler",)
    ),
    "scheduler_malformed": Case(
        13, "--scheduler tcp://[::1", _scheduler("tcp://[::1"), words=("--scheduler",)
    ),
    # 14: flags
    "shot_precision_5e-324": Case(
        14,
        "--precision 5e-324 --screenshot-view",
        lambda d: [
            str(clip(d)),
            "--precision",
            "5e-324",
            "--screenshot-view",
            str(d / "out" / "v.png"),
        ],
        "app",
        words=("--precision",),
    ),
    "compress_precision_5e-324": Case(
        14,
        "compress --precision 5e-324",
        lambda d: ["compress", str(clip(d)), "--precision", "5e-324"],
        words=("--precision",),
    ),
    "compress_o_256_chars": Case(
        14, "compress -o with a 256-character name", _long_name, words=("file name",)
    ),
    "shot_time_nan": Case(
        14,
        "--time nan --screenshot",
        lambda d: [str(clip(d)), "--time", "nan", "--screenshot", str(d / "out" / "s.png")],
        "app",
        words=("--time",),
    ),
    "lib_timeout_nan": Case(
        14,
        "library --timeout nan",
        lambda d: ["library", str(d / "lib"), "--no-cache", "--timeout", "nan"] if clip(d) else [],
        words=("--timeout",),
    ),
    "lib_sweep_1e-320": Case(
        14,
        "library --sweep 0.01,1e-320",
        lambda d: (
            ["library", str(d / "lib"), "--no-cache", "--sweep", "0.01,1e-320"] if clip(d) else []
        ),
        words=("--sweep",),
    ),
    "bench_repeat_1e20": Case(
        14,
        "bench --repeat 10^20",
        lambda d: ["bench", "--repeat", "1" + "0" * 20, "--no-processes", "--clips", str(clip(d))],
        words=("--repeat",),
    ),
    "info_corrupt_acl_style": Case(
        14,
        "info: a corrupt acl-style body",
        _ssc_body_flipped("acl-style"),
        words=("acl-style.ssc",),
    ),
    "info_corrupt_subsample": Case(
        14,
        "info: a corrupt subsample body",
        _ssc_body_flipped("subsample"),
        words=("subsample.ssc",),
    ),
    # 15, 16: names are data
    "compress_control_names": Case(
        15,
        "compress: joints named ESC]0;..BEL and ESC[2J",
        compress_control_names,
        code=0,
        lines=0,
        check=_no_control(),
    ),
    "decompress_control_names": Case(
        15,
        "decompress to BVH: joints named with NUL, ESC, DEL",
        decompress_control_names,
        code=0,
        lines=1,
        check=_no_control("out/n.bvh"),
    ),
    "lib_control_names": Case(
        15,
        "library summary: joints named with ESC",
        lib_control_names,
        code=0,
        lines=LIBRARY_LINES,
        check=_no_control(),
    ),
    "lib_formula_names": Case(
        16,
        "library CSV: =HYPERLINK(1).bvh, -walk.bvh, joints =1+1 and @SUM(A1)",
        lib_formula_names,
        code=0,
        lines=LIBRARY_LINES,
        check=_no_formula("out/l.csv", ("path", "animation", "worst_joint", "error")),
    ),
    "stats_formula_names": Case(
        16,
        "stats CSV: @x.bvh, joints =1+1 and @SUM(A1)",
        stats_formula_names,
        code=0,
        lines=2,
        check=_no_formula("out/s.csv", ("name", "worst_track_name")),
    ),
    "export_csv_formula_names": Case(
        16,
        "shellscope --export-csv: joints =1+1 and @SUM(A1)",
        export_formula_names,
        "app",
        code=0,
        lines=0,
        check=_no_formula("out/j.csv", ("name",)),
    ),
    # 17: crash reports
    "usd_abort_crash_report": Case(
        17,
        "usd-core aborts in the reader process (its crash report)",
        usd_abort,
        words=("SIGABRT",),
    ),
}


# ------------------------------------------------------------------ judging a run


def snapshot(folder: Path) -> dict[str, str]:
    """Every regular file under `folder` but out/ and outside/ (a hash each), and every
    folder (''), so that a run can be checked to change none and make none."""
    seen: dict[str, str] = {}
    for dirpath, _, files in os.walk(folder):
        rel = os.path.relpath(dirpath, folder)
        if rel.split(os.sep)[0] in ("outside",):
            continue
        seen[rel] = ""
        if rel.split(os.sep)[0] == "out":
            continue
        for name in files:
            path = os.path.join(dirpath, name)
            if (
                os.path.isfile(path)
                and not os.path.islink(path)
                and os.path.getsize(path) < 64 << 20
            ):
                with open(path, "rb") as f:
                    seen[os.path.join(rel, name)] = hashlib.sha256(f.read()).hexdigest()
    return seen


def _secret_in_outputs(folder: Path) -> str | None:
    for dirpath, _, files in os.walk(folder / "out"):
        for name in files:
            path = os.path.join(dirpath, name)
            if os.path.isfile(path) and os.path.getsize(path) < 256 << 20:
                with open(path, "rb") as f:
                    data = f.read()
                    if any(q.encode() in data for q in QUOTED):
                        return f"{os.path.relpath(path, folder)} holds the secret"
    return None


def judge(
    case: Case, folder: Path, before: dict[str, str], code: int | None, out: str, err: str
) -> list[str]:
    """What is wrong with a run of `case` (empty: nothing)."""
    problems = []
    lines = err.strip().splitlines()
    if code != case.code:
        problems.append(f"exit {code}, expected {case.code}")
    if case.code == 2 and len(lines) != 1 or len(lines) > max(case.lines, 1):
        problems.append(f"{len(lines)} stderr lines")
    for bad in ("Traceback", "internal error", "Exception ignored", "leaked"):
        if bad in err or bad in out:
            problems.append(f"{bad!r} printed")
    if any(q in out + err for q in QUOTED):
        problems.append("the secret was printed")
    problems += [w for w in [_secret_in_outputs(folder)] if w]
    missing = [w for w in case.words if w not in err]
    if missing:
        problems.append(f"stderr lacks {missing}")
    after = snapshot(folder)
    changed = [k for k, v in before.items() if after.get(k) != v]
    made = [k for k in after if k not in before and after[k] == ""]  # a folder made
    if changed:
        problems.append(f"changed {changed[:3]}")
    if made:
        problems.append(f"made folders {made[:3]}")
    if case.check is not None:
        try:
            extra = case.check(folder, out, err)
        except OSError as e:  # an output the check reads was not written
            extra = f"{os.path.relpath(e.filename or '?', folder)} not written"
        if extra:
            problems.append(extra)
    return problems
