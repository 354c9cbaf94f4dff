"""Compressed inputs: .gz, .xz and .zst around the text formats, checked, capped, read
everywhere load_clip is."""

from __future__ import annotations

import gzip
import lzma
from pathlib import Path

import numpy as np
import pytest
import zstandard

from codec import ClipFormatError, load_clip
from codec.formats import list_animations
from codec.formats.compressed import inner_name, read_decompressed

DATA = Path(__file__).resolve().parents[2] / "data"
PACK = {".gz": gzip.compress, ".xz": lzma.compress, ".zst": zstandard.ZstdCompressor().compress}


@pytest.mark.parametrize("suffix", sorted(PACK))
@pytest.mark.parametrize(
    "clip", ["bvh/cmu_02_02_walk_daz.bvh", "acl/cmu_09_02.acl.sjson", "gltf/Fox.glb"]
)
def test_compressed_clips_read_like_the_plain_ones(tmp_path: Path, suffix: str, clip: str) -> None:
    plain = DATA / clip
    packed = tmp_path / (plain.name + suffix)
    packed.write_bytes(PACK[suffix](plain.read_bytes()))
    a, b = load_clip(packed), load_clip(plain)
    assert a.name == b.name and a.skeleton.names == b.skeleton.names
    assert np.array_equal(a.rotations, b.rotations)
    assert np.array_equal(a.translations, b.translations)
    assert list_animations(packed) == list_animations(plain)


def test_the_acl_clips_the_repository_carries_compressed() -> None:
    clip = load_clip(DATA / "acl" / "cmu_13_07.acl.sjson.xz")
    assert (clip.num_joints, clip.num_samples) == (44, 291)


def test_inner_name() -> None:
    assert inner_name("a/walk.acl.sjson.xz") == "walk.acl.sjson"
    assert inner_name("walk.BVH.GZ") == "walk.BVH"
    assert inner_name("walk.bvh") == "walk.bvh"


def test_data_that_is_not_what_the_name_says(tmp_path: Path) -> None:
    path = tmp_path / "walk.bvh.gz"
    path.write_bytes(lzma.compress(b"HIERARCHY"))
    with pytest.raises(ClipFormatError, match="ends in .gz but the data is not gzip") as info:
        load_clip(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("suffix", sorted(PACK))
def test_truncated_data_is_a_clear_error(tmp_path: Path, suffix: str) -> None:
    data = PACK[suffix]((DATA / "bvh" / "cmu_02_02_walk_daz.bvh").read_bytes())
    path = tmp_path / f"walk.bvh{suffix}"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ClipFormatError, match="corrupt or truncated"):
        load_clip(path)


@pytest.mark.parametrize("suffix", sorted(PACK))
def test_decompression_stops_at_the_cap(tmp_path: Path, suffix: str) -> None:
    """A tiny file that would expand enormously is refused after `max_size` bytes."""
    path = tmp_path / f"bomb.bvh{suffix}"
    path.write_bytes(PACK[suffix](b"\0" * (8 << 20)))
    assert path.stat().st_size < 20_000
    with pytest.raises(ClipFormatError, match="decompresses to more than 1 MiB"):
        read_decompressed(path, max_size=1 << 20)
    assert len(read_decompressed(path, max_size=8 << 20)) == 8 << 20


def test_several_zstd_frames_one_after_another(tmp_path: Path) -> None:
    text = (DATA / "bvh" / "cmu_02_02_walk_daz.bvh").read_bytes()
    half = len(text) // 2
    path = tmp_path / "walk.bvh.zst"
    path.write_bytes(PACK[".zst"](text[:half]) + PACK[".zst"](text[half:]))
    assert read_decompressed(path) == text


def test_empty_stream(tmp_path: Path) -> None:
    path = tmp_path / "empty.bvh.xz"
    path.write_bytes(lzma.compress(b""))
    with pytest.raises(ClipFormatError, match="decompresses to nothing"):
        load_clip(path)
