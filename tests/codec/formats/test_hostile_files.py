"""Every hand-made hostile file (hostile_files.CASES) is refused before it costs memory or
time: one line naming the file and the place, little memory in process (tracemalloc sees
numpy's buffers) and, through `python -m codec compress`, exit 2 and a small peak RSS.

Also: what the limits must still let through (values at the edge of float32, a long
buffer file read only as far as its byteLength), and that glTF joint resolution is linear.
"""

from __future__ import annotations

import io
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from codec.cli import main as cli_main
from codec.errors import ClipFormatError
from codec.formats import load_clip
from codec.formats.gltf import read_gltf
from codec.model import limits
from tests.codec.formats import hostile_files as hf
from tests.traced import Traced, traced_calls

ROOT = Path(__file__).resolve().parents[3]
TRACED_LIMIT = 96 << 20  # bytes traced while a hostile file is refused (xz -9: 64 MiB window)
CASE_SECONDS = 60.0  # a hostile file is refused before it costs time
RSS_LIMIT_MB = 500.0  # peak memory of `python -m codec compress FILE` on a hostile file
CHILD_ADDRESS_LIMIT = 3 << 30  # a regression fails with MemoryError, not a dead machine


@pytest.fixture(scope="module")
def refusals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Traced]]:
    """Every case's file, and how load_clip refused it, in one child process of its own
    (tests/traced.py: tracemalloc cannot crash there)."""
    cases = {**hf.CASES, **hf.SANDBOX_CASES}
    paths = {name: cases[name][0](tmp_path_factory.mktemp(name)) for name in sorted(cases)}
    outcomes = traced_calls("tests.traced:refusal", [[path] for path in paths.values()])
    return {name: (paths[name], outcome) for name, outcome in zip(paths, outcomes, strict=True)}


@pytest.mark.parametrize("name", sorted({**hf.CASES, **hf.SANDBOX_CASES}))
def test_load_clip_refuses_in_one_line_naming_file_and_place(
    name: str, refusals: dict[str, tuple[Path, Traced]]
) -> None:
    words = {**hf.CASES, **hf.SANDBOX_CASES}[name][1]
    path, refused = refusals[name]
    assert refused.error_type is None, f"{name}: {refused.error_type}: {refused.message}"
    message = refused.value
    assert "\n" not in message
    assert message.startswith(f"{path}"), message
    for word in words:
        assert word in message, (word, message)
    assert refused.peak < TRACED_LIMIT, f"{name}: {refused.peak / 2**20:.0f} MB traced"
    assert refused.seconds < CASE_SECONDS, f"{name}: refused after {refused.seconds:.1f} s"


# `python -m codec ARGS` that also writes its own peak RSS in KiB to the file $PEAK_FILE names:
# VmHWM starts afresh at exec, unlike the child's ru_maxrss, which keeps the size of the
# (large) test process it was forked from
_CLI_WITH_PEAK = """
import atexit, os, runpy, sys
def _peak():
    with open("/proc/self/status") as f:
        kib = next(int(x.split()[1]) for x in f if x.startswith("VmHWM"))
    with open(os.environ["PEAK_FILE"], "w") as out:
        out.write(str(kib))
atexit.register(_peak)
sys.argv[0] = "codec"
runpy.run_module("codec", run_name="__main__", alter_sys=True)
"""

# `python -m codec compress FILE` for many files in one process, as `codec/__main__.py` runs
# it (`main()` on the process's own stdout and stderr): the process's stderr (fd 2, so C-level
# writes too) goes to a file of each case's own, and its peak RSS starts afresh for each case
# (writing 5 to /proc/self/clear_refs resets VmHWM to the resident size now, which holds
# every module imported and everything earlier cases left behind, so a case's peak is never
# below what a fresh process would show). Each line of $RESULTS is "start NAME" as a case
# begins, then "NAME EXIT PEAK_KIB".
_CLI_MANY = """
import os, sys
sys.argv[0] = "codec"
from codec.cli import main
results = open(os.environ["RESULTS"], "a", buffering=1)
cases = sys.argv[1:]
for name, path, err_path in zip(cases[::3], cases[1::3], cases[2::3]):
    results.write(f"start {name}\\n")
    sys.stderr.flush()
    fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 2)
    os.close(fd)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    code = main(["compress", path])
    sys.stderr.flush()
    with open("/proc/self/status") as f:
        kib = next(int(x.split()[1]) for x in f if x.startswith("VmHWM"))
    results.write(f"{name} {code} {kib}\\n")
"""
# the one case run as its own `python -m codec compress` process (exit code through
# sys.exit, the peak of a whole process start-up included); the others go through _CLI_MANY
OWN_PROCESS_CASE = "gltf_far_key"
CASE_TIMEOUT_S = 60.0


def _reap(proc: subprocess.Popen, timeout: float, peak_file: Path) -> tuple[int | None, float]:
    """Exit code (None: killed after `timeout` s) and peak RSS in MB of one child, as the
    child measured itself (inf when it could not say)."""
    try:
        code = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None, 0.0
    try:
        return code, int(peak_file.read_text()) / 1024.0
    except (OSError, ValueError):
        return code, float("inf")


def _reap_many(runs: list[tuple[subprocess.Popen, Path]]) -> dict[str, tuple[int | None, float]]:
    """name -> (exit code, peak RSS in MB) of each case the _CLI_MANY children (each with its
    results file) finished; a child is killed when one case takes over CASE_TIMEOUT_S (that
    case and the rest of its share are missing)."""
    seen = {results: ("", time.monotonic()) for _, results in runs}
    while any(proc.poll() is None for proc, _ in runs):
        for proc, results in runs:
            text = results.read_text() if results.exists() else ""
            if text != seen[results][0]:
                seen[results] = (text, time.monotonic())
            elif proc.poll() is None and time.monotonic() - seen[results][1] > CASE_TIMEOUT_S:
                proc.kill()
        time.sleep(0.1)
    done: dict[str, tuple[int | None, float]] = {}
    for proc, results in runs:
        proc.wait()
        for line in results.read_text().splitlines() if results.exists() else []:
            if not line.startswith("start "):
                name, code, kib = line.split()
                done[name] = (int(code), int(kib) / 1024.0)
    return done


def _limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_ADDRESS_LIMIT, CHILD_ADDRESS_LIMIT))


@pytest.mark.timeout(420)  # a hang guard: each case is given 60 s
def test_cli_exits_2_in_one_line_with_small_peak_rss(tmp_path: Path) -> None:
    """Each file through `python -m codec compress`: one in a process of its own, the
    others one after another in two more processes (all three at once); the peak is the
    child's own, however large the test process that starts it, and starts afresh for each
    file."""
    cases = {}
    for name, (build, _) in sorted(hf.MEMORY_CASES.items()):
        (tmp_path / name).mkdir()
        cases[name] = (build(tmp_path / name), tmp_path / f"{name}.stderr")
    assert OWN_PROCESS_CASE in cases
    path, err_file = cases[OWN_PROCESS_CASE]
    with open(err_file, "wb") as err:
        own = subprocess.Popen(
            [sys.executable, "-c", _CLI_WITH_PEAK, "compress", str(path)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=err,
            preexec_fn=_limit_address_space,
            env={**os.environ, "PEAK_FILE": str(tmp_path / "own.peak")},
        )
    others = [n for n in cases if n != OWN_PROCESS_CASE]
    runs = []
    for share in (others[0::2], others[1::2]):
        results = tmp_path / f"results_{len(runs)}.txt"
        args = [str(x) for n in share for x in (n, *cases[n])]
        many = subprocess.Popen(
            [sys.executable, "-c", _CLI_MANY, *args],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_limit_address_space,
            env={**os.environ, "RESULTS": str(results)},
        )
        runs.append((many, results))
    done = _reap_many(runs)
    done[OWN_PROCESS_CASE] = _reap(own, CASE_TIMEOUT_S, tmp_path / "own.peak")
    problems = []
    for name, (path, err_file) in cases.items():
        code, rss = done.get(name, (None, 0.0))
        lines = err_file.read_text().strip().splitlines() if err_file.exists() else []
        if code != 2 or len(lines) != 1 or str(path) not in lines[0]:
            problems.append(f"{name}: exit {code}, stderr {lines[:3]}")
        if rss >= RSS_LIMIT_MB:
            problems.append(f"{name}: peak RSS {rss:.0f} MB")
    assert len(cases) >= 30
    assert not problems, problems


@pytest.mark.parametrize("name", sorted(hf.NUMBER_CASES))
def test_cli_number_cases_exit_2_with_one_line(name: str, tmp_path: Path) -> None:
    build, words = hf.NUMBER_CASES[name]
    path = build(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(["compress", str(path), "-o", str(tmp_path / "out.ssc")], out, err)
    lines = err.getvalue().splitlines()
    assert code == 2 and len(lines) == 1, err.getvalue()
    assert lines[0].startswith(f"python -m codec compress: error: {path}")
    assert words[0] in lines[0]
    assert not (tmp_path / "out.ssc").exists()


# ------------------------------------------------------------------ what still loads


def test_values_at_the_edge_of_the_range_load(tmp_path: Path) -> None:
    path = hf.bvh_text(tmp_path, "edge.bvh", value="1.7e38", offset="-1.7e38")
    clip = load_clip(path, units="cm")
    assert clip.skeleton.bind_translations[1, 1] == pytest.approx(-1.7e38)
    assert np.all(np.isfinite(clip.rotations))


def test_a_frame_time_of_a_microsecond_and_of_1000_s_load(tmp_path: Path) -> None:
    assert load_clip(hf.bvh_text(tmp_path, "a.bvh", frame_time="1e-6")).sample_rate == 1e6
    assert load_clip(hf.bvh_text(tmp_path, "b.bvh", frame_time="1000")).sample_rate == 1e-3


def test_a_buffer_file_longer_than_its_byte_length_is_read_only_that_far(tmp_path: Path) -> None:
    path = hf.gltf_uri_huge_file(tmp_path)  # a 64 MiB file behind a 60-byte buffer
    (loaded,) = traced_calls("tests.traced:clip_samples", [[path]])
    assert loaded.error_type is None, loaded.message
    assert loaded.value == 3
    assert loaded.peak < 8 << 20


def test_a_buffer_in_a_subfolder_loads_and_one_in_a_sibling_folder_is_refused(
    tmp_path: Path,
) -> None:
    """Buffers are read from the glTF's folder, subfolders included (`bin/anim%20data.bin`),
    never from beside it (`../bin/...`): the one rule of every input path (issue 37)."""
    doc, blob = hf.gltf_doc(uri="bin/anim%20data.bin")
    (tmp_path / "gltf" / "bin").mkdir(parents=True)
    (tmp_path / "gltf" / "bin" / "anim data.bin").write_bytes(blob)
    assert load_clip(hf._write_json(tmp_path / "gltf", "rel.gltf", doc)).num_joints == 2
    doc, blob = hf.gltf_doc(uri="../bin/anim%20data.bin")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "anim data.bin").write_bytes(blob)
    with pytest.raises(ClipFormatError, match="'../bin/anim%20data.bin' is outside the glTF's"):
        load_clip(hf._write_json(tmp_path / "gltf", "sibling.gltf", doc))


@pytest.mark.parametrize("uri", ["file:///etc/hostname", "http://example.com/a.bin", "C:/a.bin"])
def test_buffer_uris_with_a_scheme_are_refused(tmp_path: Path, uri: str) -> None:
    doc, _ = hf.gltf_doc(uri=uri)
    path = hf._write_json(tmp_path, "scheme.gltf", doc)
    with pytest.raises(ClipFormatError, match="is not a relative path"):
        load_clip(path)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["fifo", "device link"])
def test_a_clip_path_that_is_not_a_regular_file_is_refused(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "clip.bvh"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        os.symlink("/dev/zero", path)
    with pytest.raises(ClipFormatError, match=r"clip\.bvh: is not a regular file"):
        load_clip(path)


def test_a_long_static_usd_within_the_budget_loads(tmp_path: Path) -> None:
    clip = load_clip(hf.usda_text(tmp_path, "ok.usda", last=1000))
    assert clip.num_samples == 1001 and clip.sample_rate == 24


def test_a_big_mesh_on_a_long_clip_is_left_out_and_a_small_one_kept(tmp_path: Path) -> None:
    """20,000 vertices over 261,001 samples (a 640 KB glTF) would keep the skin error busy
    for over an hour: the clip loads without its mesh and says so. Over 31 samples the
    same mesh stays."""
    (tmp_path / "long").mkdir()
    (tmp_path / "short").mkdir()
    long = load_clip(hf.gltf_skinned_mesh(tmp_path / "long", 19_998, [0.0, 1 / 30, 8700.0]))
    assert long.meshes == () and long.num_samples == 261_001
    assert any("19998 vertices x 261001 samples is over the limit" in w for w in long.warnings)
    short = load_clip(hf.gltf_skinned_mesh(tmp_path / "short", 19_998, [0.0, 1 / 30, 1.0]))
    assert short.num_samples == 31 and sum(m.num_vertices for m in short.meshes) == 19_998


# ------------------------------------------------------------------ limits


def test_transform_budget_is_the_file_size_between_the_floor_and_the_cap() -> None:
    assert limits.transform_budget(10) == limits.FREE_TRANSFORMS
    assert limits.transform_budget(3_000_000) == 3_000_000
    assert limits.transform_budget(10**12) == limits.MAX_TRANSFORMS
    assert limits.over_budget(512, 512, limits.FREE_TRANSFORMS) is None
    assert "513 samples x 512 joints" in limits.over_budget(513, 512, limits.FREE_TRANSFORMS)


@pytest.mark.parametrize(
    ("check", "value", "ok"),
    [
        (limits.value_problem, 1.7e38, True),
        (limits.value_problem, -1.71e38, False),
        (limits.value_problem, float("nan"), False),
        (limits.distance_problem, 1e-30, True),
        (limits.distance_problem, 0.0, False),
        (limits.distance_problem, 1e308, False),
        (limits.rate_problem, 1e-3, True),
        (limits.rate_problem, 1e6, True),
        (limits.rate_problem, 9.9e-4, False),
        (limits.rate_problem, float("inf"), False),
    ],
)
def test_number_checks(check, value: float, ok: bool) -> None:
    assert (check(value) is None) == ok


# ------------------------------------------------------------------ glTF joints in linear time


def test_a_long_chain_keeps_its_parents_and_alike_names_stay_unique(tmp_path: Path) -> None:
    doc, _ = hf.gltf_doc(num_joints=3000)
    for node in doc["nodes"]:
        node["name"] = "bone"
    clip = read_gltf(hf._write_json(tmp_path, "alike.gltf", doc))
    assert clip.skeleton.parents.tolist() == [-1, *range(2999)]
    names = clip.skeleton.names
    assert len(set(names)) == 3000 and names[:3] == ("bone", "bone_2", "bone_3")
    assert clip.skeleton.bind_translations[:, 1] == pytest.approx(10.0)  # 0.1 m each


def test_chain_load_time_grows_linearly(tmp_path: Path) -> None:
    """Loading a 4x longer chain takes about 4x as long (16x when quadratic, as before):
    a ratio measured in one run, best of three each, in CPU seconds (a loaded machine
    stretches wall time by whatever else runs)."""
    small, large = hf.gltf_chain(tmp_path, 2000), hf.gltf_chain(tmp_path, 8000)

    def best(path: Path) -> float:
        out = []
        for _ in range(3):
            t = time.process_time()
            read_gltf(path)
            out.append(time.process_time() - t)
        return min(out)

    best(small)  # warm up imports and caches
    ratio = best(large) / best(small)
    assert ratio < 8.0, f"8000 joints took {ratio:.1f}x as long as 2000"
