"""Issue 37 on a real library run: nothing listens beyond the loopback interface (finding 2),
a killed run leaves no semaphore behind (17), a damaged cache entry is a miss (7), and the
dashboard only where asked."""

from __future__ import annotations

import ipaddress
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest

from codec.library.cache import RowCache
from codec.library.engine import (
    DaskCluster,
    dashboard_address,
    entry_problem,
    library_files,
    run_library,
    scheduler_problem,
)
from codec.library.tuning import LibrarySettings
from tests.hostile.cases import DAMAGES, _damage, cached_entries, clip, sparse

ROOT = Path(__file__).resolve().parents[2]


def listening(pid: int) -> list[tuple[str, str]]:
    """(process, address) of every listening inet socket of a process and its children."""
    found = []
    procs = [psutil.Process(pid)]
    procs += procs[0].children(recursive=True)
    for p in procs:
        try:
            for c in p.net_connections(kind="inet"):
                if c.status == psutil.CONN_LISTEN:
                    found.append((f"{p.pid} {p.name()}", c.laddr.ip))
        except psutil.Error:
            continue
    return found


def _shm_semaphores(pid: int) -> list[str]:
    """The named POSIX semaphores a process has mapped, as /proc shows them."""
    try:
        with open(f"/proc/{pid}/maps") as f:
            return sorted({ln.split(None, 5)[5].strip() for ln in f if "/dev/shm/sem." in ln})
    except OSError:
        return []


@pytest.mark.timeout(180)
def test_a_run_listens_on_loopback_only_and_a_kill_leaves_no_semaphore(tmp_path: Path) -> None:
    """`python -m codec library` as a user runs it: while its workers compress, every
    listening socket of the run (scheduler, nannies, workers) is on the loopback interface
    and there is no dashboard; the semaphores its nannies share with their workers have no
    name left (they would stay in /dev/shm, or make the resource tracker warn of "leaked
    semaphore objects"); then SIGKILL: the workers go with it, nothing is left or said."""
    # enough work that the run outlives the watching below (the workers up, the names
    # released and settled for a second; it is killed then): 40 clips were done 0.9 s after
    # the workers came up, 200 take seconds
    for k in range(200):
        clip(tmp_path, f"c{k}.acl.sjson", precision=0.01 + 0.00001 * k)
    err_file = tmp_path / "stderr"
    with open(err_file, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "codec", "library", str(tmp_path / "lib"), "--no-cache",
             "--workers", "2"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        sockets: list[tuple[str, str]] = []
        semaphores: list[str] = []
        since = None  # when the names were first all seen released
        while time.monotonic() < deadline and proc.poll() is None:
            sockets, semaphores = listening(proc.pid), _shm_semaphores(proc.pid)
            up = len({who for who, _ in sockets}) >= 3  # the run's process and 2 workers
            if up and len(semaphores) >= 12 and all(s.endswith("(deleted)") for s in semaphores):
                # a name is unlinked just before its tracker entry is dropped: the kill comes
                # once the release has settled, not between the two calls of one semaphore
                since = since or time.monotonic()
                if time.monotonic() - since >= 1.0:
                    break
            else:
                since = None
            time.sleep(0.2)
        assert len({who for who, _ in sockets}) >= 3, ("the workers never came up", sockets)
        outside = [(who, ip) for who, ip in sockets if not ipaddress.ip_address(ip).is_loopback]
        assert not outside, outside
        assert len(semaphores) >= 12, semaphores  # each nanny shares 2 queues, 3 each
        assert all(s.endswith("(deleted)") for s in semaphores), semaphores
        children = psutil.Process(proc.pid).children(recursive=True)
        os.kill(proc.pid, signal.SIGKILL)  # the run alone: its resource tracker lives on
        proc.wait(10)
        gone, alive = psutil.wait_procs(children, timeout=30)
        assert not alive, alive
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    names = [s.split()[0].removeprefix("/dev/shm/") for s in semaphores]
    assert not [n for n in names if (Path("/dev/shm") / n).exists()]
    assert "leaked" not in err_file.read_text(), err_file.read_text()


def _http_status(port: int, page: str) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{page}", timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


PAGES = ("/status", "/info/main/workers.html", "/metrics")


def test_the_embedded_cluster_serves_a_dashboard_only_when_asked(cluster) -> None:
    """The tests' cluster is made as every run's: its scheduler's HTTP server (Dask always
    starts one) serves none of the dashboard's, info or metrics pages; `--dashboard 0` serves
    them, on the loopback interface."""
    assert cluster.dashboard_link is None
    port = cluster.cluster.scheduler.http_server.port
    assert [_http_status(port, p) for p in PAGES] == [404, 404, 404]
    assert not [ip for _, ip in listening(os.getpid()) if not ipaddress.ip_address(ip).is_loopback]
    with DaskCluster(None, 1, dashboard=dashboard_address("0")) as asked:
        port = asked.cluster.scheduler.http_server.port
        assert asked.dashboard_link == f"http://127.0.0.1:{port}/status"
        assert [_http_status(port, p) for p in PAGES] == [200, 200, 200]


@pytest.mark.parametrize(
    ("text", "address"),
    [("8787", "127.0.0.1:8787"), (":0", "127.0.0.1:0"), ("0.0.0.0:8787", "0.0.0.0:8787"),
     ("[::1]:9000", "[::1]:9000")],
)  # fmt: skip
def test_dashboard_addresses_default_to_loopback(text: str, address: str) -> None:
    assert dashboard_address(text) == address


@pytest.mark.parametrize(
    ("address", "ok"),
    [("tcp://127.0.0.1:8786", True), ("10.0.0.5:8786", True), ("tls://h:1", True),
     ("tcp://[::1]:8786", True), ("file://x", False), ("inproc://x", False),
     ("tcp://[::1", False), ("tcp://h:99999", False), ("tcp://h:abc", False),
     ("tcp://:8786", False), ("tcp://h:1/path", False)],
)  # fmt: skip
def test_scheduler_addresses_are_checked_before_any_work(address: str, ok: bool) -> None:
    assert (scheduler_problem(address) is None) == ok


@pytest.mark.timeout(120)
def test_a_damaged_cache_entry_is_a_miss(cluster, tmp_path: Path) -> None:
    """Entries replaced by wrong shapes, NaN, 200,000 nested lists, a FIFO and a link to
    /dev/zero: each is a miss (computed again, rows as the first run's), none blocks."""
    for k, _ in enumerate(DAMAGES):
        clip(tmp_path, f"c{k}.acl.sjson", precision=0.01 + 0.001 * k)
    files = library_files(tmp_path / "lib")
    cache = RowCache(tmp_path / "cache")
    first = run_library(files, LibrarySettings(), cluster=cluster, cache=cache)
    entries = cached_entries(tmp_path / "cache")
    assert len(entries) == len(DAMAGES)
    for entry, how in zip(entries, DAMAGES, strict=True):
        _damage(entry, how)
        assert cache.get(entry.stem) is None, how
    again = run_library(files, LibrarySettings(), cluster=cluster, cache=cache)
    assert again.cached == 0 and again.computed == len(DAMAGES)
    strip = [{k: v for k, v in r.items() if k != "compression_time"} for r in again.rows]
    assert strip == [{k: v for k, v in r.items() if k != "compression_time"} for r in first.rows]


def test_a_huge_file_is_refused_before_a_byte_of_it_is_read(tmp_path: Path) -> None:
    """A 20 GB clip and a 1.5 GB sidecar are error rows from a stat: the library hashes
    neither (hashing 20 GB took 38 s in the main process, whatever --timeout said)."""
    big = sparse(tmp_path / "lib" / "big.bvh", 20 << 30, b"HIERARCHY\n")
    assert entry_problem(big, "big.bvh", LibrarySettings()).startswith(
        "21,474,836,480 bytes is larger than any BVH file"
    )
    path = clip(tmp_path)
    sparse(path.with_name(path.name + ".shellscope.json"), 3 << 29)
    problem = entry_problem(path, path.name, LibrarySettings())
    assert problem.startswith("its sidecar c.acl.sjson.shellscope.json is 1,610,612,736 bytes")
    assert entry_problem(path, path.name, LibrarySettings(sidecars=False)) is None
