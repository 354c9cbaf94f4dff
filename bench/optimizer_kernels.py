"""The acl-style optimiser's kernels alone: their run time and their cold compile time.

    .venv/bin/python bench/optimizer_kernels.py run [REPS]   every segment, best of REPS
    .venv/bin/python bench/optimizer_kernels.py compile      first call on an empty cache
    .venv/bin/python bench/optimizer_kernels.py vs A B [RUNS [COMPILES [REPS]]]   in turn

`run` records every segment problem the encoder hands `optimize_segment` while compressing
four CMU clips at level highest, replays them REPS times and prints the best wall and CPU
seconds and a digest of the outputs (rates, stuck joints, quantised samples): two trees
that print the same digest chose the same bits. `compile` stops the encoder at its first
segment and times the first `optimize_segment` call, less a second one: delete
codec/codecs/acl_style/__pycache__/optimizer.*.nb* first, so that only the optimiser's
kernels compile. Compare two commits by running each tree in turn (PYTHONPATH=<tree>, from
outside both) and quote CPU seconds on a loaded machine: wall time follows the load.

`vs` does that, all with this interpreter: RUNS times (default 5) `run REPS` (default 5) in
each tree, A first then B first in turn, then COMPILES times (default 3) `compile` in each on
emptied optimiser caches; it prints every figure, the digests, A/B's CPU ratio per round (both
trees in one round, so a drift of the machine's load moves both), the medians of those ratios
and each tree's best run and median compile.
"""

from __future__ import annotations

import hashlib
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import codec
from codec.codecs.acl_style import encoder
from codec.compression import compress
from codec.formats import load_clip
from codec.settings import CompressionSettings

DATA = Path(codec.__file__).resolve().parents[1] / "tests" / "data" / "acl"
CLIPS = (
    "cmu_13_07.acl.sjson.xz",
    "cmu_49_15.acl.sjson.xz",
    "cmu_81_18_looping.acl.sjson.xz",
    "cmu_09_02.acl.sjson",
)


class _Enough(Exception):
    """Stops a compression once its first segment problem is recorded."""


def record(clips: tuple[str, ...], stop: bool = False) -> list[tuple]:
    """The (problem, hierarchy, level) of every optimize_segment call compressing `clips`."""
    got: list[tuple] = []
    real = encoder.optimize_segment

    def recorder(*args: object) -> object:
        got.append(args)
        if stop:
            raise _Enough
        return real(*args)

    encoder.optimize_segment = recorder
    try:
        for name in clips:
            try:
                compress(
                    load_clip(DATA / name), CompressionSettings(level="highest", codec="acl-style")
                )
            except _Enough:
                pass
    finally:
        encoder.optimize_segment = real
    return got


def timed(call: tuple) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    encoder.optimize_segment(*call)
    return time.perf_counter() - wall, time.process_time() - cpu


def in_tree(tree: Path, args: list[str]) -> str:
    """This script's output run as `args` against the codec of `tree`, from outside it."""
    if args[:1] == ["compile"]:
        for old in (tree / "codec" / "codecs" / "acl_style" / "__pycache__").glob(
            "optimizer.*.nb*"
        ):
            old.unlink()
    env = dict(os.environ, PYTHONPATH=str(tree))
    script = tree / "bench" / "optimizer_kernels.py"
    done = subprocess.run(
        [sys.executable, str(script), *args], env=env, cwd="/", capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"{tree}: {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout.strip().splitlines()[-1]


def versus(a: Path, b: Path, runs: int, compiles: int, reps: int) -> None:
    """Trees a and b in turn: run and compile CPU seconds, their A/B ratios, the digests."""
    ratios: dict[str, list[float]] = {"run": [], "compile": []}
    cpus: dict[tuple[str, Path], list[float]] = {}
    digests = set()
    for what, rounds, args in (
        ("run", runs, ["run", str(reps)]),
        ("compile", compiles, ["compile"]),
    ):
        for k in range(rounds):
            cpu = {}
            for tree in (a, b) if k % 2 == 0 else (b, a):  # each first in turn
                line = in_tree(tree, args)
                print(f"{what:7} {k + 1} {tree}: {line}", flush=True)
                cpu[tree] = float(re.search(r"cpu ([0-9.]+) s", line).group(1))
                cpus.setdefault((what, tree), []).append(cpu[tree])
                if what == "run":
                    digests.add(line.split()[-1])
            ratios[what].append(cpu[a] / cpu[b])
            print(f"{what:7} {k + 1} A/B cpu {ratios[what][-1]:.3f}", flush=True)
    for what, r in ratios.items():
        if r:
            print(f"{what:7} A/B cpu ratios {' '.join(f'{x:.3f}' for x in r)}", end=" ")
            print(f"median {statistics.median(r):.3f}")
    for tree in (a, b):
        best = min(cpus.get(("run", tree), [np.nan]))
        comp = statistics.median(cpus.get(("compile", tree), [np.nan]))
        print(f"{tree}: run best cpu {best:.4f} s, compile median cpu {comp:.2f} s")
    print("digests", "identical" if len(digests) == 1 else f"DIFFER: {sorted(digests)}")


def main(argv: list[str]) -> None:
    if argv[:1] == ["vs"]:
        versus(
            Path(argv[1]).resolve(),
            Path(argv[2]).resolve(),
            *(int(x) for x in (argv[3:] + ["5", "3", "5"][len(argv[3:]) :])[:3]),
        )
        return
    if argv[:1] == ["compile"]:
        call = record(CLIPS[-1:], stop=True)[0]
        first, again = timed(call), timed(call)
        print(f"compile wall {first[0] - again[0]:.2f} s cpu {first[1] - again[1]:.2f} s")
        return
    reps = int(argv[1]) if len(argv) > 1 else 3
    calls = record(CLIPS)
    best = (np.inf, np.inf)
    for _ in range(reps):
        wall, cpu = time.perf_counter(), time.process_time()
        outs = [encoder.optimize_segment(*c) for c in calls]
        best = min(best[0], time.perf_counter() - wall), min(best[1], time.process_time() - cpu)
    digest = hashlib.sha256()
    for out in outs:
        for a in out:
            digest.update(np.ascontiguousarray(a).tobytes())
    print(
        f"segments {len(calls)} wall {best[0]:.4f} s cpu {best[1]:.4f} s {digest.hexdigest()[:16]}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
