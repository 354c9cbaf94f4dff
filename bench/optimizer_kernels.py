"""The acl-style optimiser's kernels alone: their run time and their cold compile time.

    .venv/bin/python bench/optimizer_kernels.py run [REPS]   every segment, best of REPS
    .venv/bin/python bench/optimizer_kernels.py compile      first call on an empty cache

`run` records every segment problem the encoder hands `optimize_segment` while compressing
four CMU clips at level highest, replays them REPS times and prints the best wall and CPU
seconds and a digest of the outputs (rates, stuck joints, quantised samples): two trees
that print the same digest chose the same bits. `compile` stops the encoder at its first
segment and times the first `optimize_segment` call, less a second one: delete
codec/codecs/acl_style/__pycache__/optimizer.*.nb* first, so that only the optimiser's
kernels compile. Compare two commits by running each tree in turn (PYTHONPATH=<tree>, from
outside both) and quote CPU seconds on a loaded machine: wall time follows the load.
"""

from __future__ import annotations

import hashlib
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


def main(argv: list[str]) -> None:
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
