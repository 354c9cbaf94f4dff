"""A mutation fuzzer aimed at hostile files (lying counts, huge numbers, devices), every format.

test_fuzz_readers.py breaks files at random (truncation, garbage, byte flips); this one
keeps them well-formed and swaps in what an attacker would: counts, times and sizes far past
the data (2^24, 4294967295, 333333), numbers float32 cannot hold or the codec cannot use
(1e39, 3e38, 1e308, 1e-320, 0), buffer uris to devices, FIFOs, absolute paths and other
schemes, .ssc header and metadata fields with the CRC fixed up, compressed wrappers around
all of it. Every case must end in a Clip the codec can hold (codec.model.limits: values, rate,
samples x joints within the file's budget) or in one ClipFormatError line starting with the
file's path, with a small traced peak (numpy reports its buffers to tracemalloc).
No numpy warning may escape a reader (they would be extra lines on the CLI's stderr).
Deterministic: every case is seeded by its format and index.
"""

from __future__ import annotations

import base64
import lzma
import os
import random
import re
import struct
import warnings
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from codec.errors import ClipFormatError
from codec.formats import load_clip
from codec.model import limits
from codec.model.clip import Clip
from tests.codec.formats import hostile_files as hf
from tests.traced import traced_calls

PEAK_LIMIT = 96 << 20  # bytes traced per case (an xz -9 window alone is 64 MiB)
HOSTILE_NUMBERS = [
    "1e39",
    "-1e39",
    "3e38",
    "-3.3e38",
    "1e308",
    "1e-320",
    "0",
    "-0",
    "1e-45",
    "4294967295",
    "65535",
    "16777216",
    "333333",
    "1e6",
    "-1",
    "2.5",
]
HOSTILE_URIS = [
    "/dev/zero",
    "pipe.bin",
    "zero.bin",
    "file:///dev/zero",
    "http://x/a.bin",
    "../../../../dev/zero",
    "%2Fdev%2Fzero",
    "missing.bin",
    ".",
]
CASES = {"bvh": 80, "sjson": 80, "gltf": 120, "ssc": 80, "usd": 16, "fbx": 16, "xz": 24}
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def _swap_number(rng: random.Random, data: bytes, start: int = 0) -> bytes:
    spans = [m.span() for m in _NUMBER.finditer(data, start)]
    a, b = spans[rng.randrange(len(spans))]
    return data[:a] + rng.choice(HOSTILE_NUMBERS).encode() + data[b:]


def bvh_case(rng: random.Random, folder: Path) -> Path:
    path = hf.bvh_text(folder, "c.bvh")
    data = path.read_bytes()
    for _ in range(rng.randint(1, 3)):
        data = _swap_number(rng, data, data.index(b"OFFSET"))
    path.write_bytes(data)
    return path


def sjson_case(rng: random.Random, folder: Path) -> Path:
    path = hf.sjson_text(folder, "c.acl.sjson")
    data = path.read_bytes()
    for _ in range(rng.randint(1, 3)):
        data = _swap_number(rng, data, data.index(b"num_samples") - 1)
    path.write_bytes(data)
    return path


def _set_json_number(rng: random.Random, doc: object) -> None:
    """Replace one number anywhere in a parsed JSON document by a hostile one."""
    holders = []

    def walk(node: object) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node)  # type: ignore
        for key, value in list(items):
            if isinstance(value, bool):
                continue
            if isinstance(value, int | float):
                holders.append((node, key))
            elif isinstance(value, dict | list):
                walk(value)

    walk(doc)
    node, key = rng.choice(holders)
    value = float(rng.choice(HOSTILE_NUMBERS))
    node[key] = int(value) if value.is_integer() and abs(value) < 2**53 else value  # type: ignore


def gltf_case(rng: random.Random, folder: Path) -> Path:
    num_joints = rng.choice([1, 2, 5])
    times = [0.0, 1 / 30, 2 / 30]
    kind = rng.randrange(4)
    if kind == 0:  # key times and values themselves
        times[rng.randrange(3)] = float(rng.choice(HOSTILE_NUMBERS))
        times.sort()
    doc, blob = hf.gltf_doc(num_joints=num_joints, times=times, chain=rng.random() < 0.5)
    if kind == 1:  # a buffer elsewhere
        uri = rng.choice(HOSTILE_URIS)
        doc["buffers"][0]["uri"] = uri
        if uri == "pipe.bin":
            os.mkfifo(folder / "pipe.bin")
        elif uri == "zero.bin":
            os.symlink("/dev/zero", folder / "zero.bin")
    elif kind == 2:
        for _ in range(rng.randint(1, 3)):
            _set_json_number(rng, doc)
    elif kind == 3:  # a float in the binary data
        raw = bytearray(blob)
        at = 4 * rng.randrange(len(raw) // 4)
        struct.pack_into("<f", raw, at, float(np.float32(rng.choice([3e38, -3.3e38, 1e30]))))
        doc["buffers"][0]["uri"] = (
            "data:application/octet-stream;base64," + base64.b64encode(bytes(raw)).decode()
        )
    return hf._write_json(folder, "c.gltf", doc)


_SSC_BASE: list[bytes] = []


def ssc_case(rng: random.Random, folder: Path) -> Path:
    from codec.codecs import container

    if not _SSC_BASE:
        import codec
        from tests.codec.helpers import chain_clip

        _SSC_BASE.append(codec.compress(chain_clip(num_samples=40)).data)
    data = bytearray(_SSC_BASE[0])
    meta = hf.ssc_metadata_offset(bytes(data))
    (name_length,) = struct.unpack_from("<H", data, meta)
    p = container.HEADER_SIZE  # the acl-style payload's header follows the container's
    for _ in range(rng.randint(1, 2)):
        if rng.random() < 0.5:  # a header field: payload size, joints, samples, rate, segments
            at, fmt = rng.choice(
                [(16, "<I"), (p, "<I"), (p + 4, "<I"), (p + 8, "<d"), (p + 16, "<I")]
            )
        else:  # a number of joint 0's metadata (bind pose, precision, shell distance)
            at, fmt = meta + 2 + name_length + 4 + 8 * rng.randrange(12), "<d"
        value = float(rng.choice(HOSTILE_NUMBERS))
        if fmt == "<I":
            struct.pack_into(fmt, data, at, int(abs(value)) & 0xFFFFFFFF)
        else:
            struct.pack_into(fmt, data, at, value)
    struct.pack_into("<I", data, 8, zlib.crc32(bytes(data[12:])))
    path = folder / "c.ssc"
    path.write_bytes(bytes(data))
    return path


def usd_case(rng: random.Random, folder: Path) -> Path:
    path = hf.usda_text(folder, "c.usda", last=2)
    text = path.read_bytes()
    start = text.index(b"timeSamples")
    data = (
        _swap_number(rng, text, start)
        if rng.random() < 0.7
        else text.replace(
            b"timeCodesPerSecond = 24",
            b"timeCodesPerSecond = " + rng.choice(HOSTILE_NUMBERS).encode(),
        )
    )
    path.write_bytes(data)
    return path


def fbx_case(rng: random.Random, folder: Path) -> Path:
    """An ASCII FBX skeleton with a hostile unit scale or translation (UnitScaleFactor 0 or
    1e308, a bone 1e39 away)."""
    data = (hf.HOSTILE_DATA / "fbx_unit_scale_zero.fbx").read_bytes()
    data = data.replace(b'"Number", "",0', b'"Number", "",1')
    for _ in range(rng.randint(1, 2)):
        data = _swap_number(rng, data, data.index(b"UnitScaleFactor"))
    path = folder / "c.fbx"
    path.write_bytes(data)
    return path


def xz_case(rng: random.Random, folder: Path) -> Path:
    inner = rng.choice([bvh_case, sjson_case])(rng, folder)
    packed = inner.with_name(inner.name + ".xz")
    packed.write_bytes(lzma.compress(inner.read_bytes()))
    inner.unlink()
    return packed


BUILDERS: dict[str, Callable[[random.Random, Path], Path]] = {
    "bvh": bvh_case,
    "sjson": sjson_case,
    "gltf": gltf_case,
    "ssc": ssc_case,
    "usd": usd_case,
    "fbx": fbx_case,
    "xz": xz_case,
}


def _outcome(path: str) -> dict[str, object]:
    """A traced child's target: the refusal's message, or what the loaded clip has that the
    codec could not hold."""
    try:
        clip = load_clip(path)
    except ClipFormatError as e:
        return {"refused": str(e)}
    return {"problems": _holdable(clip, Path(path))}


def _holdable(clip: Clip, path: Path) -> list[str]:
    """What about a loaded clip the codec could not hold (empty when nothing)."""
    problems = []
    if limits.rate_problem(clip.sample_rate):
        problems.append(f"rate {clip.sample_rate}")
    budget = limits.transform_budget(limits.file_bytes(path)) * (16 if path.suffix == ".ssc" else 1)
    if clip.num_samples * clip.num_joints > max(budget, 1):
        problems.append(f"{clip.num_samples} x {clip.num_joints} over {budget}")
    sk = clip.skeleton
    for name, values in (
        ("translations", clip.translations),
        ("scales", clip.scales),
        ("bind translations", sk.bind_translations),
        ("bind scales", sk.bind_scales),
    ):
        if limits.first_out_of_range(values) is not None:
            problems.append(name)
    for name, values in (("precision", sk.precision), ("shell", sk.shell_distance)):
        if any(limits.distance_problem(float(v)) for v in values):
            problems.append(name)
    return problems


@pytest.mark.timeout(120)
@pytest.mark.filterwarnings("error::RuntimeWarning")  # a reader warning is a reader bug
@pytest.mark.parametrize("fmt", sorted(CASES))
def test_hostile_mutations_load_holdable_clips_or_fail_in_one_line(
    fmt: str, tmp_path: Path
) -> None:
    paths = []
    for i in range(CASES[fmt]):
        rng = random.Random(f"{fmt}:{i}")
        folder = tmp_path / str(i)
        folder.mkdir()
        with warnings.catch_warnings():  # the builders make inf on purpose
            warnings.simplefilter("ignore")
            paths.append(BUILDERS[fmt](rng, folder))
    # loaded in a child of their own: tracemalloc cannot crash there (tests/traced.py)
    traced = traced_calls(
        "tests.codec.formats.test_fuzz_hostile:_outcome",
        [[path] for path in paths],
        runtime_warnings_are_errors=True,
    )
    failures: list[str] = []
    outcomes = {"clip": 0, "refused": 0}
    for i, (path, case) in enumerate(zip(paths, traced, strict=True)):
        if case.error_type is not None:  # neither a clip nor a ClipFormatError
            failures.append(f"#{i}: {case.error_type}: {case.message}")
        elif "refused" in case.value:
            outcomes["refused"] += 1
            message = case.value["refused"]
            if "\n" in message or not message.startswith(str(path)):
                failures.append(f"#{i}: not one line naming the file: {message!r}")
            if "internal error" in message:
                failures.append(f"#{i}: {message}")
        else:
            outcomes["clip"] += 1
            if case.value["problems"]:
                failures.append(f"#{i}: loaded a clip the codec cannot hold: {case.value}")
        if case.peak > PEAK_LIMIT:
            failures.append(f"#{i}: {case.peak / 2**20:.0f} MB traced")
    assert not failures, failures[:10]
    assert outcomes["refused"] > 0 and outcomes["clip"] > 0, outcomes  # both ways exercised
