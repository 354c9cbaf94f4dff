"""A small real library made from tests/data, and one embedded Dask cluster (2 processes)
shared by the tests of this folder (starting one costs seconds)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "data"


def make_library(root: Path) -> Path:
    """6 clip files, 8 clips: a 3-animation glTF, an ACL clip tuned by its sidecar (0.005 cm),
    a scalar track list and a truncated BVH (each an error row), a nested folder, and a file
    that is no clip."""
    (root / "gltf").mkdir(parents=True)
    (root / "acl").mkdir()
    (root / "nested" / "deeper").mkdir(parents=True)
    (root / "broken").mkdir()
    shutil.copy(DATA / "gltf" / "Fox.glb", root / "gltf")
    shutil.copy(DATA / "gltf" / "RiggedSimple.glb", root / "gltf")
    shutil.copy(DATA / "acl" / "cmu_09_02.acl.sjson", root / "acl")
    (root / "acl" / "cmu_09_02.acl.sjson.shellscope.json").write_text(
        '{"format": "shellscope-sidecar", "version": 1, "settings": {"precision": 0.005}}'
    )
    shutil.copy(DATA / "acl" / "track_list_float3f.acl.sjson", root / "acl")
    shutil.copy(DATA / "acl" / "cmu_81_16_two_samples.acl.sjson", root / "nested" / "deeper")
    (root / "broken" / "truncated.bvh").write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n")
    (root / "notes.txt").write_text("not a clip\n")
    return root


@pytest.fixture(scope="session")
def library_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_library(tmp_path_factory.mktemp("library"))


@pytest.fixture(scope="session")
def cluster():
    from codec.library.engine import DaskCluster

    c = DaskCluster(None, 2)
    yield c
    c.close()


@pytest.fixture(scope="session")
def row_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cache folder the `embedded` run fills: the command-line tests read it."""
    return tmp_path_factory.mktemp("row_cache")


@pytest.fixture(scope="session")
def embedded(library_dir, cluster, row_cache):
    """The library's run on the embedded cluster (computed once, compared by several tests)."""
    from codec.library.cache import RowCache
    from codec.library.engine import library_files, run_library
    from codec.library.tuning import LibrarySettings

    files = library_files(library_dir)
    return run_library(files, LibrarySettings(), cluster=cluster, cache=RowCache(row_cache))
