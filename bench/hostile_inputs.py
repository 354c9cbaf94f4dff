"""Run every hand-made hostile file through `python -m codec compress` and print, per case,
the exit code, wall time, peak resident memory of the child and its stderr line count and
message; then time loading glTF chains of 5,000 and 20,000 joints.

Run from the repository root:

    .venv/bin/python bench/hostile_inputs.py            # every case
    .venv/bin/python bench/hostile_inputs.py gltf_far   # cases whose name contains a word

Targets: exit 2, one stderr line naming the file, peak RSS under 500 MB, under
10 s per case; a 5,000-joint glTF chain loads in under 1 s. Each child runs under an
address-space limit of 4 GiB (so a regression fails with MemoryError instead of taking the
machine) and a 60 s timeout. The peak RSS is the child's own (os.wait4), so it includes the
interpreter, numpy and the codec imports (about 60-100 MB).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ADDRESS_LIMIT = 4 << 30
TIMEOUT_S = 60.0
RSS_TARGET_MB = 500.0
TIME_TARGET_S = 10.0


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_LIMIT, ADDRESS_LIMIT))


def run_cli(args: list[str], cwd: Path) -> tuple[int | None, float, float, str]:
    """(exit code or None on timeout, seconds, peak RSS in MB, stderr) of one CLI run."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "codec", *args],
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
    # the largest RSS of any reaped child: main() runs each case in a fresh process
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    return proc.returncode, seconds, peak, err.decode(errors="replace")


def main(argv: list[str]) -> int:
    from tests.codec.formats.hostile_files import CASES, gltf_chain

    words = argv
    ok = True
    print(f"{'case':<30} {'exit':>4} {'time s':>7} {'RSS MB':>7} lines  message")
    for name, (build, _) in CASES.items():
        if words and not any(w in name for w in words):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            path = build(Path(tmp))
            # a fresh interpreter per case so RUSAGE_CHILDREN's maximum is this case's
            code = subprocess.run(
                [sys.executable, __file__, "--one", str(path)],
                capture_output=True,
                text=True,
                cwd=tmp,
            )
            print(f"{name:<30} {code.stdout.rstrip()}")
            ok &= code.returncode == 0
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


def one(path: str) -> int:
    code, seconds, peak, err = run_cli(["compress", path], Path(path).parent)
    lines = err.strip().splitlines()
    good = (
        code == 2
        and len(lines) == 1
        and path in lines[0]
        and peak < RSS_TARGET_MB
        and seconds < TIME_TARGET_S
    )
    shown = lines[0] if lines else ""
    if len(shown) > 150:
        shown = shown[:147] + "..."
    verdict = "PASS" if good else "FAIL"
    print(f"{code!s:>4} {seconds:7.2f} {peak:7.0f} {len(lines):>5}  {verdict} {shown}")
    return 0 if good else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        sys.exit(one(sys.argv[2]))
    sys.exit(main(sys.argv[1:]))
