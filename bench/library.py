"""The library on Dask: clips per second and memory per worker, on a synthetic library.

Run from the repository root:

    .venv/bin/python bench/library.py                 # 2,000 clips: 1 and 2 workers, scheduler
    .venv/bin/python bench/library.py --clips 300     # quicker
    .venv/bin/python bench/library.py --keep DIR      # build the library in DIR and keep it

The library is made from the clips of tests/data (ACL, BVH, glTF): each synthetic clip is a
random slice (8 to 64 samples) of one of them with every rotation and translation perturbed
by a little smooth noise, written as ACL SJSON. Three runs over it, none cached:
the embedded LocalCluster with 1 worker process, with 2, and a `dask scheduler` with two
`dask worker` processes (one thread each) started on localhost. Each prints its wall time
(cluster start included), clips per second and each worker's peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = ROOT / "tests" / "data"
SOURCES = (
    "acl/cmu_13_07.acl.sjson.xz",
    "acl/cmu_49_15.acl.sjson.xz",
    "acl/cmu_81_18_looping.acl.sjson.xz",
    "bvh/cmu_02_02_walk_daz.bvh",
    "bvh/cmu_131_02_walk_3dsmax.bvh.xz",
    "bvh/cmu_60_10_salsa_lead_scaled.bvh.xz",
    "gltf/CesiumMan.glb",
    "gltf/Fox.glb",
)


def make_library(folder: Path, count: int, seed: int = 7) -> list[Path]:
    """`count` sliced and perturbed clips written as ACL SJSON under `folder` (in sub-folders
    of 250, as a studio's tree has them)."""
    from codec.formats import load_clip, save_clip
    from codec.model import quat

    rng = np.random.default_rng(seed)
    sources = [load_clip(DATA / name) for name in SOURCES]
    out = []
    for i in range(count):
        src = sources[i % len(sources)]
        n = int(rng.integers(8, 65))
        n = min(n, src.num_samples)
        start = int(rng.integers(0, src.num_samples - n + 1))
        sl = slice(start, start + n)
        t = np.linspace(0, 1, n)[:, None, None]
        wobble = np.sin(2 * np.pi * (t + rng.uniform(0, 1, (1, src.num_joints, 1))))  # (S, J, 1)
        axis = rng.normal(size=(1, src.num_joints, 3))
        axis /= np.linalg.norm(axis, axis=-1, keepdims=True)
        angle = 0.02 * wobble[..., 0]  # (S, J) radians
        turn = quat.from_axis_angle(np.broadcast_to(axis, (n, src.num_joints, 3)), angle)
        rot = quat.normalize(quat.mul(src.rotations[sl], turn))
        tr = src.translations[sl] + 0.1 * wobble * rng.normal(size=(1, src.num_joints, 3))
        clip = src.replace(
            rotations=rot, translations=tr, scales=src.scales[sl].copy(), name=f"synthetic_{i}"
        )
        path = folder / f"set{i // 250:02}" / f"clip{i:05}.acl.sjson"
        path.parent.mkdir(parents=True, exist_ok=True)
        save_clip(clip, path, binary_exact=False)
        out.append(path)
    return out


class LocalScheduler:
    """`dask scheduler` and `workers` `dask worker` processes on localhost (ours to stop)."""

    def __init__(self, folder: Path, workers: int = 2) -> None:
        info = folder / "scheduler.json"
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        dask = [sys.executable, "-m", "dask"]
        quiet = {
            "cwd": ROOT,
            "env": env,
            "stdout": subprocess.DEVNULL,
            "stderr": subprocess.DEVNULL,
        }
        self.procs = [
            subprocess.Popen(
                [*dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                 "--scheduler-file", str(info)], **quiet,
            )
        ]  # fmt: skip
        deadline = time.monotonic() + 60
        while not info.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        for _ in range(workers):
            self.procs.append(
                subprocess.Popen(
                    [*dask, "worker", "--scheduler-file", str(info), "--nthreads", "1",
                     "--no-dashboard", "--host", "127.0.0.1"], **quiet,
                )
            )  # fmt: skip
        self.address = json.loads(info.read_text())["address"]
        from distributed import Client

        with Client(self.address, timeout="30s") as c:
            c.wait_for_workers(workers, timeout=120)

    def close(self) -> None:
        for p in self.procs[1:]:
            p.terminate()
        for p in self.procs[1:]:
            p.wait(30)
        self.procs[0].terminate()
        self.procs[0].wait(30)


def measure(label: str, files: list[tuple[str, str]], **kwargs: object) -> dict:
    from codec.library.engine import run_library
    from codec.library.tuning import LibrarySettings

    run = run_library(files, LibrarySettings(), measure_memory=True, **kwargs)  # type: ignore[arg-type]
    errors = sum(1 for r in run.rows if r["error"])
    return {
        "run": label,
        "workers": run.workers,
        "clips": len(run.rows),
        "errors": errors,
        "seconds": run.seconds,
        "clips_per_s": len(run.rows) / run.seconds,
        "peak_mb": [round(m / 2**20) for m in run.worker_memory],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=int, default=2000, help="library size (default 2000)")
    parser.add_argument("--keep", metavar="DIR", help="build the library here and keep it")
    args = parser.parse_args(argv)
    from codec.library.engine import library_files

    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="shellscope-lib-"))
    try:
        t0 = time.perf_counter()
        if not any(folder.rglob("*.acl.sjson")):
            make_library(folder, args.clips)
        files = library_files(folder)
        size = sum(Path(p).stat().st_size for p, _ in files)
        print(
            f"library: {len(files)} clips, {size / 2**20:.0f} MiB of SJSON, ready in "
            f"{time.perf_counter() - t0:.1f} s ({os.cpu_count()} cores)",
            flush=True,
        )
        results = [measure("embedded, 1 worker", files, workers=1)]
        print(results[-1], flush=True)
        results.append(measure("embedded, 2 workers", files, workers=2))
        print(results[-1], flush=True)
        sched = LocalScheduler(folder, 2)
        try:
            results.append(measure("dask scheduler + 2 workers", files, scheduler=sched.address))
        finally:
            sched.close()
        print(results[-1], flush=True)
        print()
        print(f"{'run':28} {'workers':>7} {'clips':>6} {'errors':>6} {'seconds':>8} "
              f"{'clips/s':>8}  peak MiB per worker")  # fmt: skip
        for r in results:
            print(
                f"{r['run']:28} {r['workers']:>7} {r['clips']:>6} {r['errors']:>6} "
                f"{r['seconds']:>8.1f} {r['clips_per_s']:>8.1f}  {r['peak_mb']}"
            )
        base = results[0]["clips_per_s"]
        print(f"scaling 1 -> 2 workers: x{results[1]['clips_per_s'] / base:.2f}")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
