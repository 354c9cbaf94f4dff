"""The library on a real Dask LocalCluster (2 processes) and on a real `dask scheduler` with
two `dask worker`s: every clip a row, every failure a row, the cache, a stop, a killed worker."""

from __future__ import annotations

import lzma
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import cloudpickle
import pytest

from codec.library.cache import RowCache
from codec.library.engine import DaskCluster, library_files, run_library
from codec.library.job import EXIT_GRACE, FileJob, JobResult, compress_file, run_job
from codec.library.tuning import LibrarySettings

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"


def _stable(rows: list[dict]) -> list[dict]:
    """Rows without their timing, which no two runs share."""
    return [{k: v for k, v in r.items() if k != "compression_time"} for r in rows]


def test_every_clip_and_every_failure_is_a_row(library_dir, cluster, embedded):
    files = library_files(library_dir)
    assert [n for _, n in files] == [
        "acl/cmu_09_02.acl.sjson",
        "acl/track_list_float3f.acl.sjson",
        "broken/truncated.bvh",
        "gltf/Fox.glb",
        "gltf/RiggedSimple.glb",
        "nested/deeper/cmu_81_16_two_samples.acl.sjson",
    ]
    run = embedded
    assert not run.interrupted and run.computed == 6 and run.workers == 2
    by = {(r["path"], r["animation"]): r for r in run.rows}
    assert [a for p, a in by if p == "gltf/Fox.glb"] == ["Survey", "Walk", "Run"]
    assert len(run.rows) == 8
    bad = by[("broken/truncated.bvh", "")]
    assert "truncated.bvh" in bad["error"] and bad["compressed_size"] is None
    assert "scalar track list" in by[("acl/track_list_float3f.acl.sjson", "")]["error"]
    # the worker's rows are the codec's own numbers for the clip
    here = compress_file(
        FileJob(str(library_dir / "gltf/Fox.glb"), "gltf/Fox.glb", LibrarySettings())
    )
    assert _stable(here) == _stable([r for r in run.rows if r["path"] == "gltf/Fox.glb"])
    # the sidecar beside cmu_09_02 sets its precision (0.005 there, the clip's own is 0.01)
    tuned = by[("acl/cmu_09_02.acl.sjson", "09_02")]
    assert tuned["precision"] == pytest.approx(0.005) and tuned["max_error"] <= 0.005
    untuned = run_library(files[:1], LibrarySettings(sidecars=False), cluster=cluster).rows[0]
    assert untuned["precision"] == pytest.approx(0.01)
    assert untuned["compressed_size"] < tuned["compressed_size"]


def test_cache_reruns_only_what_changed(library_dir, cluster, tmp_path):
    lib = tmp_path / "lib"
    shutil.copytree(library_dir, lib)
    cache = RowCache(tmp_path / "cache")
    files = library_files(lib)
    first = run_library(files, LibrarySettings(), cluster=cluster, cache=cache)
    again = run_library(files, LibrarySettings(), cluster=cluster, cache=cache)
    assert again.cached == len(files) and again.computed == 0
    assert again.rows == first.rows
    # a new sidecar is new settings for that clip alone
    (lib / "gltf" / "RiggedSimple.glb.shellscope.json").write_text(
        '{"settings": {"precision": 0.002}, "overrides": []}'
    )
    third = run_library(files, LibrarySettings(), cluster=cluster, cache=cache)
    assert third.computed == 1 and third.cached == len(files) - 1
    row = next(r for r in third.rows if r["path"] == "gltf/RiggedSimple.glb")
    assert row["precision"] == pytest.approx(0.002)
    # other settings for the whole library: nothing is reused
    fourth = run_library(
        files, LibrarySettings().with_precision(0.02), cluster=cluster, cache=cache
    )
    assert fourth.cached == 0


def distinct_copies(folder: Path, n: int) -> None:
    """n clips that differ in their bytes (not in their motion): c00 ... c{n-1}."""
    folder.mkdir()
    text = lzma.decompress((DATA / "acl" / "cmu_13_07.acl.sjson.xz").read_bytes()).decode()
    for i in range(n):
        (folder / f"c{i:02}.acl.sjson").write_text(text + "\n" * i)


def test_stop_keeps_what_finished(cluster, tmp_path):
    lib = tmp_path / "many"
    distinct_copies(lib, 12)
    stop = threading.Event()
    cache = RowCache(tmp_path / "cache")
    seen = []

    def on_file(done):
        seen.append(done.index)
        stop.set()

    run = run_library(
        library_files(lib),
        LibrarySettings(),
        cluster=cluster,
        cache=cache,
        stop=stop,
        on_file=on_file,
    )
    assert run.interrupted and 1 <= len(run.rows) < 12
    assert sorted(seen) == sorted(int(r["path"][1:3]) for r in run.rows)
    again = run_library(library_files(lib), LibrarySettings(), cluster=cluster, cache=cache)
    assert again.cached == len(run.rows) and len(again.rows) == 12
    assert [r["path"] for r in again.rows] == [f"c{i:02}.acl.sjson" for i in range(12)]


def test_files_with_the_same_bytes_share_rows_but_keep_their_paths(cluster, tmp_path):
    lib = tmp_path / "twins"
    lib.mkdir()
    for name in ("a.glb", "b.glb"):
        shutil.copy(DATA / "gltf" / "RiggedSimple.glb", lib / name)
    cache = RowCache(tmp_path / "cache")
    run = run_library(library_files(lib), LibrarySettings(), cluster=cluster, cache=cache)
    assert run.cached == 0 and [r["path"] for r in run.rows] == ["a.glb", "b.glb"]
    again = run_library(library_files(lib), LibrarySettings(), cluster=cluster, cache=cache)
    assert again.cached == 2 and [r["path"] for r in again.rows] == ["a.glb", "b.glb"]


def test_a_gltf_whose_buffer_file_changed_is_computed_again(cluster, tmp_path):
    from tests.codec.library.test_cache import split_glb

    lib = tmp_path / "lib"
    lib.mkdir()
    split_glb(DATA / "gltf" / "RiggedSimple.glb", lib)
    cache = RowCache(tmp_path / "cache")
    first = run_library(library_files(lib), LibrarySettings(), cluster=cluster, cache=cache)
    assert first.computed == 1 and not first.rows[0]["error"]
    data = (lib / "rig.bin").read_bytes()
    (lib / "rig.bin").write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # the .gltf unchanged
    again = run_library(library_files(lib), LibrarySettings(), cluster=cluster, cache=cache)
    assert again.cached == 0 and again.computed == 1


def test_a_worker_killed_mid_run_loses_no_clip(cluster, tmp_path):
    lib = tmp_path / "many"
    distinct_copies(lib, 6)
    pids = cluster.client.run(os.getpid)
    victim = sorted(pids.values())[0]
    killed = []

    def on_file(done):
        if not killed:
            os.kill(victim, signal.SIGKILL)
            killed.append(done.index)

    run = run_library(library_files(lib), LibrarySettings(), cluster=cluster, on_file=on_file)
    assert killed and not run.interrupted
    assert len(run.rows) == 6 and not any(r["error"] for r in run.rows)
    assert len({r["compressed_size"] for r in run.rows}) == 1
    cluster.client.wait_for_workers(2, timeout=60)  # the nanny started a new one
    assert victim not in cluster.client.run(os.getpid).values()


def test_workers_leave_ctrl_c_to_the_command(cluster):
    """Ctrl+C in a terminal reaches every process of the group: the workers must live on
    (the command cancels and closes them itself)."""
    pids = cluster.client.run(os.getpid)
    for pid in pids.values():
        os.kill(pid, signal.SIGINT)
    time.sleep(1.0)
    assert cluster.client.run(os.getpid) == pids


def _dies_on_fox(job: FileJob, timeout: float | None) -> JobResult:
    if job.name.endswith("Fox.glb"):
        os._exit(9)  # a clip that crashes the process that reads it
    return run_job(job, timeout)


def test_a_clip_that_kills_its_worker_is_an_error_row(library_dir, cluster):
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        run = run_library(
            library_files(library_dir), LibrarySettings(), cluster=cluster, job=_dies_on_fox
        )
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    fox = [r for r in run.rows if r["path"] == "gltf/Fox.glb"]
    assert len(fox) == 1 and "worker compressing it died" in fox[0]["error"]
    assert sum(1 for r in run.rows if not r["error"]) == 3  # every other clip compressed
    cluster.client.wait_for_workers(2, timeout=60)


def test_timeout_is_an_error_row_and_not_cached(tmp_path):
    with DaskCluster(None, 2) as cluster:  # its own: both its workers will be replaced
        _timeout_run(cluster, tmp_path)


def _timeout_run(cluster: DaskCluster, tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(DATA / "bvh" / "cmu_02_03_run_ccrig.bvh", lib)
    shutil.copy(DATA / "gltf" / "RiggedSimple.glb", lib)
    cache = RowCache(tmp_path / "cache")
    before = set(cluster.client.run(os.getpid).values())
    run = run_library(
        library_files(lib), LibrarySettings(), cluster=cluster, timeout=0.001, cache=cache
    )
    assert [r["error"].split(": ")[-1] for r in run.rows] == ["timed out after 0.001 s"] * 2
    assert not any((tmp_path / "cache").rglob("*.json"))
    # the workers left behind their busy threads, and their nannies replaced them; a worker
    # that dies while it is asked answers with an error (asked again next time round)
    deadline = time.monotonic() + EXIT_GRACE + 60
    while time.monotonic() < deadline:
        answers = cluster.client.run(os.getpid, on_error="return").values()
        now = {a for a in answers if isinstance(a, int)}
        if len(now) == 2 and not now & before:
            break
        time.sleep(0.5)
    assert len(now) == 2 and not now & before
    again = run_library(library_files(lib), LibrarySettings(), cluster=cluster, timeout=60)
    assert not any(r["error"] for r in again.rows)


@pytest.fixture()
def scheduler(tmp_path):
    """A real `dask scheduler` and two `dask worker` processes on localhost."""
    info = tmp_path / "scheduler.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    dask = [sys.executable, "-m", "dask"]
    procs = [
        subprocess.Popen(
            [
                *dask,
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(info),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not info.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        worker = [*dask, "worker", "--scheduler-file", str(info), "--no-nanny", "--nthreads"]
        worker += ["1", "--no-dashboard", "--host", "127.0.0.1"]
        for _ in range(2):
            procs.append(
                subprocess.Popen(
                    worker, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
            )
        import json

        from distributed import Client

        address = json.loads(info.read_text())["address"]
        with Client(address, timeout="30s") as c:
            c.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for p in procs[1:]:
            p.kill()  # the workers hold nothing to save
        procs[0].terminate()
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def test_a_real_scheduler_gives_the_embedded_clusters_rows(library_dir, embedded, scheduler):
    remote = run_library(library_files(library_dir), LibrarySettings(), scheduler=scheduler)
    assert remote.workers == 2
    assert _stable(remote.rows) == _stable(embedded.rows)
