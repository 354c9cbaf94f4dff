"""Run every hand-made hostile file through `python -m codec compress` and print, per case,
the exit code, wall time, peak resident memory of the child (and of the reader process it
starts for USD and FBX) and its stderr line count and message; then the outputs that must be
refused (--json to /dev/null or a FIFO), a valid USD clip, 20,000 override rules that match
no joint (through the app's headless exports), and glTF chains of 5,000 and 20,000 joints;
then the hostile folders, sidecars and flags of issue 37 (tests/hostile/cases.py: the
library over a folder with links out of it, a damaged cache, --compare files, huge and
bombed clips, sidecar numbers and patterns, screenshots over inputs, names with control
characters, formulas or bytes that are not UTF-8, --scheduler and --time values).

Run from the repository root:

    .venv/bin/python bench/hostile_inputs.py            # every case
    .venv/bin/python bench/hostile_inputs.py gltf_far   # cases whose name contains a word
    .venv/bin/python bench/hostile_inputs.py issue37 [WORD...]   # issue 37's cases only
    .venv/bin/python bench/hostile_inputs.py --root ../other-checkout lib_   # another tree's code

Targets: exit 2 with one stderr line naming the file (or exit 0 with at most the lines a
valid case warns with), no traceback, peak RSS under 500 MB, under 10 s per file case and
under 60 s per issue-37 case (those also: nothing outside the folder printed or written, no
input changed, no folder made, and the case's own check); a 5,000-joint glTF chain loads in
under 1 s. Each child runs under an address-space limit of 4 GiB (so a regression fails
with MemoryError instead of taking the machine) and a timeout. The peak RSS is the largest
of any reaped descendant (RUSAGE_CHILDREN): the CLI's own (the interpreter, numpy and the
codec imports, about 60-100 MB) or, for USD and FBX, the reader's child process (usd-core,
ufbx), for the library its Dask worker processes, for screenshots the private Xvfb.
`--root DIR` runs the commands from another checkout (its codec and app), with this tree's
cases and checks: the same table before and after a change.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RUN_ROOT = ROOT  # the checkout whose codec and app run (--root)

ADDRESS_LIMIT = 4 << 30
TIMEOUT_S = 60.0
RSS_TARGET_MB = 500.0
TIME_TARGET_S = 10.0
CASE_TIME_TARGET_S = 60.0  # an issue-37 case (a library run starts a Dask cluster)
CASE_TIMEOUT_S = 120.0


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_LIMIT, ADDRESS_LIMIT))


def run_cli(
    args: list[str], cwd: Path, module: str = "codec", timeout: float = TIMEOUT_S
) -> tuple[int | None, float, float, str, str]:
    """(exit code or None on timeout, seconds, peak RSS in MB, stderr, stdout) of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_limit,
        env={**os.environ, "PYTHONPATH": str(RUN_ROOT)},
        start_new_session=True,  # a timed-out run is killed with everything it started
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
        return None, time.perf_counter() - start, 0.0, _text(err), _text(out)
    seconds = time.perf_counter() - start
    # the largest RSS of any reaped descendant: main() runs each case in a fresh process
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    return proc.returncode, seconds, peak, _text(err), _text(out)


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


CLIP = ROOT / "tests" / "data" / "acl" / "cmu_09_02.acl.sjson"


def _fifo(folder: Path) -> str:
    os.mkfifo(folder / "out.json")
    return str(folder / "out.json")


def _rules(folder: Path) -> str:
    rules = [{"pattern": f"nope{i}*", "precision": 0.5} for i in range(20_000)]
    (folder / "rules.json").write_text(json.dumps(rules))
    return str(folder / "rules.json")


# name -> (module, argv builder given a scratch folder, expected exit code, most stderr lines)
EXTRA: dict[str, tuple[str, Callable[[Path], list[str]], int, int]] = {
    "json_to_dev_null": (
        "codec",
        lambda d: ["compress", str(CLIP), "--json", "/dev/null"],
        2,
        1,
    ),
    "json_to_fifo": ("codec", lambda d: ["compress", str(CLIP), "--json", _fifo(d)], 2, 1),
    "usd_valid_cesiumman": (
        "codec",
        lambda d: ["compress", str(ROOT / "tests" / "data" / "usd" / "CesiumMan.usdz")],
        0,
        1,
    ),
    "overrides_20000_rules": (
        "app",
        lambda d: [str(CLIP), "--overrides", _rules(d), "--export-stats", str(d / "s.json")],
        0,
        3,
    ),
}


def main(argv: list[str]) -> int:
    global RUN_ROOT
    from tests.codec.formats.hostile_files import CASES, gltf_chain
    from tests.hostile.cases import CASES as ISSUE_CASES

    if argv[:1] == ["--root"]:
        RUN_ROOT = Path(argv[1]).resolve()
        argv = argv[2:]
    only_issue = argv[:1] == ["issue37"]
    words = argv[1:] if only_issue else argv
    ok = True
    print(f"{'case':<30} {'exit':>4} {'time s':>7} {'RSS MB':>7} lines  message")
    todo: list[tuple[str, list[str]]] = []
    for name in list(CASES) + list(EXTRA):
        if not only_issue and (not words or any(w in name for w in words)):
            todo.append((name, []))
    for name, _ in todo:
        with tempfile.TemporaryDirectory() as tmp:
            if name in CASES:
                path = CASES[name][0](Path(tmp))
                spec = ["2", "1", "codec", "compress", str(path)]
            else:
                module, build, code, lines = EXTRA[name]
                spec = [str(code), str(lines), module, *build(Path(tmp))]
            # a fresh interpreter per case so RUSAGE_CHILDREN's maximum is this case's
            done = subprocess.run(
                [sys.executable, __file__, "--root", str(RUN_ROOT), "--one", *spec],
                capture_output=True,
                text=True,
                cwd=tmp,
            )
            print(f"{name:<30} {done.stdout.rstrip()}")
            ok &= done.returncode == 0
    if not only_issue and (not words or any("chain" in w for w in words)):
        from codec.formats.gltf import read_gltf

        with tempfile.TemporaryDirectory() as tmp:
            for n in (5000, 20000):
                path = gltf_chain(Path(tmp), n)
                times = []
                for _ in range(3):
                    t = time.perf_counter()
                    read_gltf(path)
                    times.append(time.perf_counter() - t)
                best = min(times)
                verdict = "PASS" if n != 5000 or best < 1.0 else "FAIL"
                ok &= verdict == "PASS"
                print(f"glTF chain of {n:>6} joints: load {best:.3f} s (best of 3) {verdict}")
    issue = [n for n in ISSUE_CASES if not words or any(w in n for w in words)]
    if issue:
        print("\n| finding | case | exit | time (s) | peak RSS (MB) | lines | verdict | message |")
        print("|---:|---|---:|---:|---:|---:|---|---|")
    for name in issue:
        ok &= run_issue_case(name, ISSUE_CASES[name])
    print("all targets met" if ok else "SOME TARGETS MISSED")
    return 0 if ok else 1


def run_issue_case(name: str, case: object) -> bool:
    """Build the case here, run it in a fresh interpreter (`--case`), print its table row."""
    from tests.hostile.cases import BUILD_ROOT

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ[BUILD_ROOT] = str(RUN_ROOT)  # what a case makes, the run's codec makes
        argv = case.build(folder)  # type: ignore[attr-defined]
        (folder / "argv.json").write_text(json.dumps(argv))
        done = subprocess.run(
            [sys.executable, __file__, "--root", str(RUN_ROOT), "--case", name, tmp],
            capture_output=True,
            text=True,
            cwd=tmp,
        )
        row = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
        print(f"| {case.finding} | {name} | {row}")  # type: ignore[attr-defined]
        return done.returncode == 0


def one_issue_case(name: str, folder: Path) -> int:
    """Run a built issue-37 case and judge it (tests/hostile/cases.judge) within targets."""
    from tests.hostile.cases import CASES as ISSUE_CASES
    from tests.hostile.cases import judge, snapshot

    case = ISSUE_CASES[name]
    argv = json.loads((folder / "argv.json").read_text())
    (folder / "argv.json").unlink()
    before = snapshot(folder)
    code, seconds, peak, err, out = run_cli(argv, folder, case.module, CASE_TIMEOUT_S)
    problems = judge(case, folder, before, code, out, err)
    if peak >= RSS_TARGET_MB:
        problems.append(f"peak RSS {peak:.0f} MB")
    if seconds >= CASE_TIME_TARGET_S:
        problems.append(f"{seconds:.0f} s")
    lines = err.strip().splitlines()
    shown = " ".join((lines[-1] if lines else "").split()).replace("|", "/")
    shown = shown if len(shown) <= 120 else shown[:117] + "..."
    verdict = "PASS" if not problems else "FAIL: " + "; ".join(problems)[:160]
    print(f"{code!s} | {seconds:.1f} | {peak:.0f} | {len(lines)} | {verdict} | {shown} |")
    return 0 if not problems else 1


def one(expected: int, max_lines: int, module: str, args: list[str]) -> int:
    """Run one case; PASS when it exits `expected` with 1..max_lines stderr lines (none
    needed for exit 0), a refusal's line naming the file, no traceback, within targets."""
    path = args[1] if module == "codec" else args[0]
    code, seconds, peak, err, _ = run_cli(args, Path.cwd(), module)
    lines = err.strip().splitlines()
    good = (
        code == expected
        and len(lines) <= max_lines
        and (expected == 0 or (len(lines) == 1 and (path in lines[0] or args[-1] in lines[0])))
        and "Traceback" not in err
        and "internal error" not in err
        and peak < RSS_TARGET_MB
        and seconds < TIME_TARGET_S
    )
    shown = lines[-1] if lines else ""
    if len(shown) > 150:
        shown = shown[:147] + "..."
    verdict = "PASS" if good else "FAIL"
    print(f"{code!s:>4} {seconds:7.2f} {peak:7.0f} {len(lines):>5}  {verdict} {shown}")
    return 0 if good else 1


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--root"]:
        RUN_ROOT = Path(args[1]).resolve()
        args = args[2:]
    if len(args) > 4 and args[0] == "--one":
        sys.exit(one(int(args[1]), int(args[2]), args[3], args[4:]))
    if len(args) == 3 and args[0] == "--case":
        sys.exit(one_issue_case(args[1], Path(args[2])))
    sys.exit(main(sys.argv[1:]))
