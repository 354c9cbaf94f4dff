"""Run every hand-made hostile file through `python -m codec compress` and print, per case,
the exit code, wall time, peak resident memory of the child (and of the reader process it
starts for USD and FBX) and its stderr line count and message; then the outputs that must be
refused (--json to /dev/null or a FIFO), a valid USD clip, 20,000 override rules that match
no joint (through the app's headless exports), and glTF chains of 5,000 and 20,000 joints.

Run from the repository root:

    .venv/bin/python bench/hostile_inputs.py            # every case
    .venv/bin/python bench/hostile_inputs.py gltf_far   # cases whose name contains a word

Targets: exit 2, one stderr line naming the file (or exit 0 with at most the lines a
valid case warns with), no traceback, peak RSS under 500 MB, under 10 s per case; a
5,000-joint glTF chain loads in under 1 s. Each child runs under an address-space limit of
4 GiB (so a regression fails with MemoryError instead of taking the machine) and a 60 s
timeout. The peak RSS is the largest of any reaped descendant (RUSAGE_CHILDREN): the CLI's
own (the interpreter, numpy and the codec imports, about 60-100 MB) or, for USD and FBX,
the reader's child process (usd-core, ufbx) that the CLI starts and waits for.
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

ADDRESS_LIMIT = 4 << 30
TIMEOUT_S = 60.0
RSS_TARGET_MB = 500.0
TIME_TARGET_S = 10.0


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_LIMIT, ADDRESS_LIMIT))


def run_cli(
    args: list[str], cwd: Path, module: str = "codec"
) -> tuple[int | None, float, float, str]:
    """(exit code or None on timeout, seconds, peak RSS in MB, stderr) of one CLI run."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_limit,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        _, err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        return None, time.perf_counter() - start, 0.0, err.decode(errors="replace")
    seconds = time.perf_counter() - start
    # the largest RSS of any reaped descendant: main() runs each case in a fresh process
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    return proc.returncode, seconds, peak, err.decode(errors="replace")


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
    from tests.codec.formats.hostile_files import CASES, gltf_chain

    words = argv
    ok = True
    print(f"{'case':<30} {'exit':>4} {'time s':>7} {'RSS MB':>7} lines  message")
    todo: list[tuple[str, list[str]]] = []
    for name in list(CASES) + list(EXTRA):
        if not words or any(w in name for w in words):
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
                [sys.executable, __file__, "--one", *spec],
                capture_output=True,
                text=True,
                cwd=tmp,
            )
            print(f"{name:<30} {done.stdout.rstrip()}")
            ok &= done.returncode == 0
    if not words or any("chain" in w for w in words):
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
    print("all targets met" if ok else "SOME TARGETS MISSED")
    return 0 if ok else 1


def one(expected: int, max_lines: int, module: str, args: list[str]) -> int:
    """Run one case; PASS when it exits `expected` with 1..max_lines stderr lines (none
    needed for exit 0), a refusal's line naming the file, no traceback, within targets."""
    path = args[1] if module == "codec" else args[0]
    code, seconds, peak, err = run_cli(args, Path.cwd(), module)
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
    if len(sys.argv) > 5 and sys.argv[1] == "--one":
        sys.exit(one(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:]))
    sys.exit(main(sys.argv[1:]))
