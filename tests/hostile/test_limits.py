"""Issue 37, limits before work: a size check before a reader reads a byte (9), a bomb
refused without keeping it (9), numbers in a sidecar (11), and a crash report that leaves
with the reader's child process (17)."""

from __future__ import annotations

import gzip
import os
import tempfile
from pathlib import Path

import pytest

from codec.errors import ClipFormatError
from codec.formats import load_clip
from codec.formats.reader_zygote import live_zygotes
from codec.sidecar import SidecarError, load_sidecar
from tests.hostile.cases import DATA, bvh, clip, sparse
from tests.traced import traced_calls


def _traced_refusal(path: Path) -> tuple[str, int]:
    """load_clip's refusal and its peak traced bytes, in a child (tests/traced.py)."""
    (refused,) = traced_calls("tests.traced:refusal", [[path]])
    assert refused.error_type is None, f"{refused.error_type}: {refused.message}"
    return refused.value, refused.peak


@pytest.mark.parametrize(
    ("name", "head", "words"),
    [
        ("a.bvh", b"HIERARCHY\n", "larger than any BVH file (256 MiB at most)"),
        ("a.acl.sjson", b"version = 5\n", "larger than any ACL SJSON file (512 MiB at most)"),
        ("a.glb", b"glTF", "larger than any glTF file"),
        ("a.ssc", b"SSCF\x03", "larger than any Shellscope compressed file (256 MiB at most)"),
        ("a.fbx", b"Kaydara FBX Binary  \0", "larger than any FBX file"),
        ("a.usdc", b"PXR-USDC", "larger than any USD file"),
    ],
)
def test_a_file_over_its_formats_cap_is_refused_before_it_is_read(tmp_path, name, head, words):
    """A 2 GB (sparse) clip: 4.3 GB at peak before, a stat now."""
    path = sparse(tmp_path / name, 2 << 30, head)
    message, peak = _traced_refusal(path)
    assert message.startswith(f"{path}: 2,147,483,648 bytes is larger than any")
    assert words in message and peak < 1 << 20


def test_a_compression_bomb_is_counted_before_it_is_kept(tmp_path: Path) -> None:
    """A 2 MB .bvh.gz of 96 MiB: past its cap (32 times its size), refused after counting,
    with a chunk in memory at a time (the old reader kept all it had read: the cap's worth)."""
    block = b"0 0 0 0 0 0 1 2 3\n" * (1 << 16)  # 1.1 MiB of rows
    member = gzip.compress(block, compresslevel=1)
    path = tmp_path / "bomb.bvh.gz"
    with open(path, "wb") as f:
        f.write(gzip.compress(bvh().encode()))
        for _ in range(85):
            f.write(member)
    size = path.stat().st_size
    message, peak = _traced_refusal(path)
    assert f"decompresses to more than {32 * size / 2**20:g} MiB" in message
    assert peak < 8 << 20, f"{peak / 2**20:.0f} MB traced"


def test_a_compressed_clip_within_its_cap_reads_whole(tmp_path: Path) -> None:
    path = tmp_path / "walk.bvh.gz"
    path.write_bytes(gzip.compress(bvh(frames=400).encode()))
    assert load_clip(path).num_samples == 400


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"settings": {"precision": ' + "1" * 4000 + "}}", "a number of 4,000 digits"),
        ('{"settings": {"precision": NaN}}', "precision: nan is not a positive number"),
        ('{"settings": {"shell_distance": 1e-40}}', "1e-40 is too small"),
        ('{"overrides": [{"pattern": "*", "precision": 1e999}]}', "precision must be > 0"),
        ('{"overrides": [{"pattern": "' + "[" * 5000 + '"}]}', "at most 1,024"),
    ],
)
def test_every_number_of_a_sidecar_is_checked_where_it_is_read(tmp_path, text, words) -> None:
    """What the window reads when a clip opens: a SidecarError (it opens the clip untuned and
    says why), never an OverflowError's traceback."""
    path = clip(tmp_path)
    path.with_name(path.name + ".shellscope.json").write_text(text)
    with pytest.raises(SidecarError) as info:
        load_sidecar(path)
    assert words in str(info.value) and "\n" not in str(info.value)


@pytest.mark.timeout(120)
def test_a_crash_report_leaves_with_the_reader_process() -> None:
    """usd-core writes `st_python3.11.PID` as it aborts, in the TMPDIR it read as it loaded:
    its zygote's folder (codec.formats.reader_zygote), which holds nothing once the reader is
    gone, neither the report nor the reader's own TMPDIR. This run's TMPDIR (the suite's
    private one) gets nothing but the folder of a zygote still running."""
    here = Path(tempfile.gettempdir())
    before = set(os.listdir(here))
    with pytest.raises(ClipFormatError, match="SIGABRT"):
        load_clip(DATA / "hostile" / "usd_crate_invalid_spec.usdc")
    zygotes = [z.folder for z in live_zygotes()]
    assert any(f.parent == here for f in zygotes)
    new = set(os.listdir(here)) - before - {f.name for f in zygotes}
    assert not [n for n in new if n.startswith(("st_", "shellscope-reader-"))], new
    assert not [e for f in zygotes for e in os.listdir(f)]
