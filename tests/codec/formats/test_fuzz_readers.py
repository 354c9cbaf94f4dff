"""Fuzz every reader through `load_clip`: mutated real files must give a Clip or ClipFormatError.

Mutations are deterministic (seeded by base file, kind and index): truncation, byte flips,
token deletion, garbage insertion, line duplication and swaps, absurd counts in headers
(`Frames: 999999999`, `num_samples = 999999999`, glTF `count`/`byteLength`, GLB chunk lengths)
and odd numbers (nan, inf, 1e309). Each case also runs under a lowered address-space limit and
is checked for resident-memory growth, so a reader that trusts a lying header fails the test
instead of the machine; the absurd-count cases also run under tracemalloc (numpy reports its
buffers to it), so even an allocation that is never touched is seen. Wrapped reader bugs
("internal error") and out-of-memory refusals count as failures too: they mean the reader did
not check something it should have.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import resource
import struct
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from codec.errors import ClipFormatError
from codec.formats import load_clip
from codec.formats.acl_sjson import write_acl_sjson
from codec.model.clip import Clip, Skeleton
from tests.traced import traced_calls

DATA = Path(__file__).resolve().parents[2] / "data"
MEMORY_LIMIT_MB = 200  # resident growth allowed for one case
SLOW_CASE_S = 2.0  # CPU seconds of one case: a loaded machine stretches its wall time
ABSURD = ("999999999", "4294967295", "18446744073709551615", "0", "-1", "1e308", "nan", "2.5")

# ------------------------------------------------------------------ base files


def _bvh_prefix(path: Path, rows: int) -> bytes:
    """A real BVH cut to its first `rows` frames (Frames: fixed up), to keep each load fast."""
    text = path.read_text()
    head, motion = text.split("MOTION", 1)
    lines = motion.strip().splitlines()
    frame_time = next(ln for ln in lines if ln.startswith("Frame Time"))
    data = [ln for ln in lines[2:] if ln.strip()][:rows]
    return (head + f"MOTION\nFrames: {len(data)}\n{frame_time}\n" + "\n".join(data) + "\n").encode()


TINY_BVH = b"""HIERARCHY
ROOT hips
{
\tOFFSET 0 0 0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT spine
\t{
\t\tOFFSET 0 10 0
\t\tCHANNELS 3 Yrotation Xrotation Zrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 5 0
\t\t}
\t}
}
MOTION
Frames: 3
Frame Time: 0.0333333
0 90 0 0 0 0 10 0 0
1 90 0 5 0 0 20 0 5
2 90 0 10 0 0 30 0 10
"""


def _glb_parts(data: bytes) -> tuple[bytes, bytes]:
    n_json = struct.unpack_from("<I", data, 12)[0]
    start = 20 + n_json
    n_bin = struct.unpack_from("<I", data, start)[0]
    return data[20 : 20 + n_json], data[start + 8 : start + 8 + n_bin]


def _glb(json_bytes: bytes, bin_bytes: bytes) -> bytes:
    json_bytes += b" " * (-len(json_bytes) % 4)
    bin_bytes += b"\0" * (-len(bin_bytes) % 4)
    chunks = struct.pack("<I4s", len(json_bytes), b"JSON") + json_bytes
    chunks += struct.pack("<I4s", len(bin_bytes), b"BIN\0") + bin_bytes
    return struct.pack("<4sII", b"glTF", 2, 12 + len(chunks)) + chunks


def _embedded_gltf(glb: bytes) -> bytes:
    """The same asset as a .gltf with its buffer as a base64 data URI."""
    j, b = _glb_parts(glb)
    doc = json.loads(j)
    doc["buffers"] = [
        {
            "byteLength": len(b),
            "uri": "data:application/octet-stream;base64," + base64.b64encode(b).decode(),
        }
    ]
    return json.dumps(doc, indent=1).encode()


def _tiny_clip() -> Clip:
    rng = np.random.default_rng(0)
    q = rng.normal(size=(3, 3, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    sk = Skeleton.create(["a", "b", "c"], [-1, 0, 1], bind_translations=np.ones((3, 3)))
    return Clip(sk, 30.0, q, rng.normal(size=(3, 3, 3)), np.ones((3, 3, 3)), name="tiny")


TINY_SJSON_V1 = b"""version = 1
clip = { name = "t" num_samples = 2 sample_rate = 30 error_threshold = 0.01 }
bones =
[
\t{ name = "r" parent = "" vertex_distance = 3.0 bind_translation = [ 0.0, 1.0, 0.0 ] }
\t{ name = "c" parent = "r" vertex_distance = 3.0 }
]
tracks =
[
\t{ name = "r" rotations = [ [ 0.0, 0.0, 0.0, 1.0 ] [ 0.0, 0.0, 0.0, 1.0 ] ] }
\t{ name = "c" translations = [ [ 1.0, 0.0, 0.0 ], [ 2.0, 0.0, 0.0 ] ] /* c */ }
]
"""

TINY_QVVF = b"""version = 5
track_list = { num_samples = 2 sample_rate = 30 }
tracks =
[
\t{ name = "r" type = "qvvf" precision = 0.01 shell_distance = 3.0
\t  data = [ [ [ 0.0, 0.0, 0.0, 1.0 ], [ 0.0, 0.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
\t           [ [ 0.0, 0.0, 0.0, 1.0 ], [ 1.0, 0.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ] ] }
\t{ name = "c" type = "qvvf" parent_index = 0
\t  data = [ [ [ 0.0, 0.0, 0.0, 1.0 ], [ 0.0, 2.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ]
\t           [ [ 0.0, 0.0, 0.0, 1.0 ], [ 0.0, 2.0, 0.0 ], [ 1.0, 1.0, 1.0 ] ] ] }
]
"""


def _base_files(tmp: Path) -> dict[str, list[tuple[str, bytes]]]:
    """format -> [(file name, bytes)]; real files where the other readers' copies exist."""
    bases: dict[str, list[tuple[str, bytes]]] = {"bvh": [], "gltf": [], "sjson": []}
    bvh = DATA / "bvh"
    bases["bvh"].append(("tiny.bvh", TINY_BVH))
    if (bvh / "cmu_02_03_run_ccrig.bvh").exists():
        bases["bvh"].append(("ccrig.bvh", _bvh_prefix(bvh / "cmu_02_03_run_ccrig.bvh", 4)))
    if (bvh / "makehuman_tpose.bvh").exists():
        bases["bvh"].append(("tpose.bvh", (bvh / "makehuman_tpose.bvh").read_bytes()))
    if (bvh / "cmu_02_02_walk_daz.bvh").exists():
        bases["bvh"].append(("daz.bvh", _bvh_prefix(bvh / "cmu_02_02_walk_daz.bvh", 6)))
    gltf = DATA / "gltf"
    if (gltf / "RiggedSimple.glb").exists():
        rs = (gltf / "RiggedSimple.glb").read_bytes()
        bases["gltf"] += [("rigged.glb", rs), ("rigged.gltf", _embedded_gltf(rs))]
    if (gltf / "Fox.glb").exists():
        bases["gltf"].append(("fox.glb", (gltf / "Fox.glb").read_bytes()))
    acl = DATA / "acl"
    bases["sjson"] += [("v1.acl.sjson", TINY_SJSON_V1), ("qvvf.acl.sjson", TINY_QVVF)]
    written = tmp / "written.acl.sjson"
    write_acl_sjson(_tiny_clip(), written)
    bases["sjson"].append(("hex.acl.sjson", written.read_bytes()))
    for stem in ("cmu_81_16_two_samples", "track_list_float3f"):
        if (acl / f"{stem}.acl.sjson").exists():
            bases["sjson"].append((f"{stem}.acl.sjson", (acl / f"{stem}.acl.sjson").read_bytes()))
    return bases


# ------------------------------------------------------------------ mutations

Mutation = Callable[[random.Random, bytes], bytes]


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data))]


def flip_bytes(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        i = rng.randrange(len(out))
        out[i] ^= 1 << rng.randrange(8) if rng.random() < 0.7 else rng.randrange(1, 256)
    return bytes(out)


def delete_token(rng: random.Random, data: bytes) -> bytes:
    spans = [m.span() for m in re.finditer(rb"[^\s]+", data[:200_000])]
    if not spans:
        return data
    for _ in range(rng.randint(1, 3)):
        a, b = spans[rng.randrange(len(spans))]
        if b <= len(data):
            data = data[:a] + data[b:]
    return data


GARBAGE = [
    b"[",
    b"]",
    b"{",
    b"}",
    b'"',
    b"/*",
    b"//",
    b"=",
    b",",
    b"\0",
    b"\xff\xfe",
    b"-",
    b"1e999",
    b"nan",
    b"End Site",
    b"JOINT x",
    b"CHANNELS 3",
    b'{"a":',
    b"\n",
    b"\t\t\t",
    "é".encode(),
    b"\x80\x81",
]


def insert_garbage(rng: random.Random, data: bytes) -> bytes:
    i = rng.randrange(len(data) + 1)
    if rng.random() < 0.5:
        junk = b"".join(rng.choice(GARBAGE) for _ in range(rng.randint(1, 4)))
    else:
        junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    return data[:i] + junk + data[i:]


def duplicate_line(rng: random.Random, data: bytes) -> bytes:
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[i])
    return b"\n".join(lines)


def swap_lines(rng: random.Random, data: bytes) -> bytes:
    lines = data.split(b"\n")
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


COUNT_KEYS = re.compile(
    rb"(Frames:\s*|CHANNELS\s+|num_samples\s*=\s*|sample_rate\s*=\s*|Frame Time:\s*"
    rb"|\"count\"\s*:\s*|\"byteLength\"\s*:\s*|\"byteOffset\"\s*:\s*|\"byteStride\"\s*:\s*"
    rb"|output_index\s*=\s*|parent_index\s*=\s*|\"(?:input|output|sampler|node|bufferView"
    rb"|accessor|buffer|skin|inverseBindMatrices)\"\s*:\s*)(-?[\d.]+(?:e\d+)?)"
)


def absurd_count(rng: random.Random, data: bytes) -> bytes:
    hits = list(COUNT_KEYS.finditer(data))
    if not hits:
        return insert_garbage(rng, data)
    m = rng.choice(hits)
    return data[: m.start(2)] + rng.choice(ABSURD).encode() + data[m.end(2) :]


NUMBER = re.compile(rb"-?\d+\.\d+(?:e-?\d+)?")


def odd_number(rng: random.Random, data: bytes) -> bytes:
    spans = [m.span() for m in NUMBER.finditer(data[:200_000])]
    if not spans:
        return flip_bytes(rng, data)
    a, b = spans[rng.randrange(len(spans))]
    odd = rng.choice([b"nan", b"inf", b"-inf", b"1e309", b"-0.0", b"1e-320", b"123456789e30"])
    return data[:a] + odd + data[b:]


def glb_json_mutation(inner: Mutation) -> Mutation:
    """Mutate the JSON chunk of a GLB and repack it, so the mutation reaches the JSON reader."""

    def mutate(rng: random.Random, data: bytes) -> bytes:
        if data[:4] != b"glTF":
            return inner(rng, data)
        j, b = _glb_parts(data)
        return _glb(inner(rng, j), b)

    return mutate


def glb_lying_lengths(rng: random.Random, data: bytes) -> bytes:
    if data[:4] != b"glTF":
        return absurd_count(rng, data)
    out = bytearray(data)
    n_json = struct.unpack_from("<I", data, 12)[0]
    field = rng.choice([8, 12, 20 + n_json])  # total length, JSON chunk, BIN chunk
    value = rng.choice([0, 1, 0x7FFFFFFF, 0xFFFFFFF0, 0xFFFFFFFF, len(data) * 2])
    if field + 4 <= len(out):
        struct.pack_into("<I", out, field, value)
    return bytes(out)


MUTATIONS: dict[str, Mutation] = {
    "truncate": truncate,
    "flip": flip_bytes,
    "delete_token": delete_token,
    "garbage": insert_garbage,
    "dup_line": duplicate_line,
    "swap_lines": swap_lines,
    "absurd_count": absurd_count,
    "odd_number": odd_number,
}
GLTF_MUTATIONS: dict[str, Mutation] = {
    **{f"json_{k}": glb_json_mutation(v) for k, v in MUTATIONS.items() if k != "truncate"},
    "truncate": truncate,
    "flip": flip_bytes,
    "garbage": insert_garbage,
    "lying_lengths": glb_lying_lengths,
}

# cases per (base file, mutation kind); sized so the whole module runs in well under a minute
CASES_PER_KIND = {"bvh": 55, "gltf": 45, "sjson": 50}


def _cases(fmt: str, bases: list[tuple[str, bytes]]) -> Iterator[tuple[str, str, str, bytes]]:
    """Each distinct mutated file once: a mutation that gives bytes an earlier case of the same
    base already gave (an absurd count of a tiny file with two counts, a line swap of a GLB's
    one-line JSON) is the same input to the same reader, so it is not read again. About one
    case in eight is such a repeat."""
    kinds = GLTF_MUTATIONS if fmt == "gltf" else MUTATIONS
    for name, data in bases:
        per_kind = CASES_PER_KIND[fmt] // (2 if name == "fox.glb" else 1)
        seen: set[bytes] = set()
        for kind, mutate in kinds.items():
            for i in range(per_kind):
                rng = random.Random(f"{name}:{kind}:{i}")
                mutated = mutate(rng, data)
                digest = hashlib.blake2b(mutated).digest()
                if digest not in seen:
                    seen.add(digest)
                    yield name, kind, f"{name} {kind} #{i}", mutated


# ------------------------------------------------------------------ the harness


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def _vm_size_bytes() -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


class _AddressSpaceCap:
    """Lower RLIMIT_AS to current use + headroom for the duration; restore afterwards."""

    def __init__(self, headroom: int = 1 << 30) -> None:
        self.headroom = headroom
        self.saved: tuple[int, int] | None = None

    def __enter__(self) -> None:
        vm = _vm_size_bytes()
        if vm is None:
            return
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = vm + self.headroom
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        if soft == resource.RLIM_INFINITY or soft > cap:
            self.saved = (soft, hard)
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))

    def __exit__(self, *exc: object) -> None:
        if self.saved is not None:
            resource.setrlimit(resource.RLIMIT_AS, self.saved)


_THIS = "tests.codec.formats.test_fuzz_readers"


def _outcome(path: str) -> str:
    """A traced child's target: the refusal's message, or "" when the file loads."""
    try:
        assert isinstance(load_clip(path), Clip)
    except ClipFormatError as exc:
        return str(exc)
    return ""


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[str, bytes]]]:
    return _base_files(tmp_path_factory.mktemp("fuzz_bases"))


@pytest.mark.parametrize("fmt", ["sjson", "bvh", "gltf"])
def test_mutated_files_only_raise_clip_format_error(
    fmt: str, bases: dict[str, list[tuple[str, bytes]]], tmp_path: Path
) -> None:
    files = bases[fmt]
    assert files, f"no {fmt} base files in tests/data"
    # the unmutated bases must load (or be refused on purpose) so mutations start from sense
    for name, data in files:
        p = tmp_path / name
        p.write_bytes(data)
        try:
            load_clip(p)
        except ClipFormatError as exc:
            assert "scalar track list" in str(exc), f"base {name} does not load: {exc}"

    failures: list[str] = []
    traced: list[tuple[str, Path]] = []
    total = 0
    start_rss = _rss_mb()
    started = time.perf_counter()
    with _AddressSpaceCap():
        for name, kind, label, data in _cases(fmt, files):
            total += 1
            path = tmp_path / f"case_{name}"
            path.write_bytes(data)
            if "absurd" in kind or "lying" in kind:  # lying headers: measured exactly, below
                traced.append((label, path))
                continue
            before = _rss_mb()
            t0 = time.process_time()
            try:
                result = load_clip(path)
                assert isinstance(result, Clip)
            except ClipFormatError as exc:
                text = str(exc)
                if "internal error" in text or "too large to read" in text:
                    failures.append(f"{label}: {text[:300]}")
            except Exception as exc:  # the point is to catch anything else
                failures.append(f"{label}: {type(exc).__name__}: {exc}"[:300])
            elapsed = time.process_time() - t0
            grown = _rss_mb() - before
            if grown > MEMORY_LIMIT_MB:
                failures.append(f"{label}: resident memory grew by {grown:.0f} MB")
            if elapsed > SLOW_CASE_S:
                failures.append(f"{label}: took {elapsed:.1f} s of CPU")
    # under tracemalloc in a child of their own: it cannot crash there (tests/traced.py)
    cases = traced_calls(f"{_THIS}:_outcome", [[path] for _, path in traced])
    for (label, _), case in zip(traced, cases, strict=True):
        if case.error_type is not None:
            failures.append(f"{label}: {case.error_type}: {case.message}"[:300])
        elif "internal error" in case.value or "too large to read" in case.value:
            failures.append(f"{label}: {case.value[:300]}")
        if case.peak / 2**20 > MEMORY_LIMIT_MB:
            failures.append(f"{label}: allocated {case.peak / 2**20:.0f} MB at peak")
        if case.cpu > SLOW_CASE_S:
            failures.append(f"{label}: took {case.cpu:.1f} s of CPU")
    duration = time.perf_counter() - started
    print(
        f"\n{fmt}: {total} mutations in {duration:.1f} s, peak RSS +{_rss_mb() - start_rss:.0f} MB"
    )
    assert total >= 500
    assert not failures, f"{len(failures)} of {total} cases failed:\n" + "\n".join(failures[:25])


# ------------------------------------------------------------------ native readers (child process)

# usd-core and ufbx run in a child process (codec.formats.reader_process): a mutation may
# crash, abort or balloon it, and must still come back as one ClipFormatError line naming
# the file, the child's peak resident memory under 500 MB. Each case starts a child
# (~0.7 s), so there are fewer of them; every one runs however loaded the machine (a time
# budget made the number of cases, and `total`, depend on the load).
NATIVE_PER_KIND = 3
CHILD_RSS_LIMIT_MB = 500.0
NATIVE_CASE_S = 60.0


def lying_word(rng: random.Random, data: bytes) -> bytes:
    """An absurd u32 or u64 at a random aligned offset: a length, count or offset that lies."""
    out = bytearray(data)
    width = rng.choice([4, 8])
    at = width * rng.randrange(len(out) // width)
    value = rng.choice([0xFFFFFFFF, 1 << 31, 700_000_000, 1 << 40, (1 << 64) - 1, 0])
    out[at : at + width] = (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
    return bytes(out)


BINARY_MUTATIONS: dict[str, Mutation] = {
    "truncate": truncate,
    "flip": flip_bytes,
    "garbage": insert_garbage,
    "lying": lying_word,
}
TEXT_MUTATIONS: dict[str, Mutation] = {
    "truncate": truncate,
    "flip": flip_bytes,
    "delete": delete_token,
    "garbage": insert_garbage,
    "duplicate": duplicate_line,
    "odd": odd_number,
}


def _native_bases() -> list[tuple[str, bytes, dict[str, Mutation]]]:
    """(file name, bytes, mutations): a USD crate (CesiumMan's, out of its .usdz), a USDA
    skeleton, a binary FBX (CMU 07_01) and an ASCII FBX."""
    import io
    import lzma
    import zipfile

    from tests.codec.formats import hostile_files as hf

    with zipfile.ZipFile(DATA / "usd" / "CesiumMan.usdz") as z:
        crate = z.read(next(n for n in z.namelist() if n.endswith(".usdc")))
    ascii_fbx = (DATA / "hostile" / "fbx_unit_scale_zero.fbx").read_bytes()
    ascii_fbx = ascii_fbx.replace(b'"Number", "",0', b'"Number", "",1')
    binary_fbx = lzma.decompress((DATA / "fbx" / "cmu_07_01_blender.fbx.xz").read_bytes())
    usda = hf.USDA.format(last=2, sublayers="").encode()
    assert io.BytesIO(crate).read(8) == b"PXR-USDC"
    return [
        ("crate.usdc", crate, BINARY_MUTATIONS),
        ("skel.usda", usda, TEXT_MUTATIONS),
        ("cmu.fbx", binary_fbx, BINARY_MUTATIONS),
        ("ascii.fbx", ascii_fbx, TEXT_MUTATIONS),
    ]


@pytest.mark.timeout(600)  # a hang guard: ~45 s on a quiet machine, each case held to 60 s
def test_native_reader_mutations_are_one_line_and_small(tmp_path: Path) -> None:
    """Seeded mutations of USD (crate, usda) and FBX (binary, ASCII) files: a Clip, or one
    ClipFormatError line naming the file (a crash included, never "internal error"), the
    reader's child under 500 MB resident and its time limit."""
    failures: list[str] = []
    outcomes = {"clip": 0, "refused": 0, "crashed": 0}
    started = time.perf_counter()
    total = 0
    for name, base, mutations in _native_bases():
        load_clip(_write(tmp_path / "base", name, base))  # the unmutated base loads
        for kind, mutate in mutations.items():
            for i in range(NATIVE_PER_KIND):
                total += 1
                label = f"{name} {kind} #{i}"
                data = mutate(random.Random(f"native:{name}:{kind}:{i}"), base)
                path = _write(tmp_path / f"{total}", name, data)
                before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
                t0 = time.perf_counter()
                try:
                    load_clip(path)
                    outcomes["clip"] += 1
                except ClipFormatError as exc:
                    text = str(exc)
                    outcomes["crashed" if "crashed" in text else "refused"] += 1
                    if "\n" in text or not text.startswith(str(path)) or "internal error" in text:
                        failures.append(f"{label}: {text[:300]!r}")
                except Exception as exc:  # the point is to catch anything else
                    failures.append(f"{label}: {type(exc).__name__}: {exc}"[:300])
                if time.perf_counter() - t0 > NATIVE_CASE_S:
                    failures.append(f"{label}: took {time.perf_counter() - t0:.0f} s")
                after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
                if after > before and after / 1024 > CHILD_RSS_LIMIT_MB:
                    failures.append(f"{label}: a child peaked at {after / 1024:.0f} MB")
    print(
        f"\nnative readers: {total} mutations in {time.perf_counter() - started:.1f} s, {outcomes}"
    )
    assert total == 60  # 20 kinds of mutation over the 4 bases, 3 each
    assert not failures, f"{len(failures)} of {total} cases failed:\n" + "\n".join(failures[:25])
    assert outcomes["refused"] > 0 and outcomes["clip"] > 0, outcomes


def _write(folder: Path, name: str, data: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(data)
    return path
