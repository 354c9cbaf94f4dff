"""Time loading clips of every format (median of 3) and print a table.

Run from the repository root:

    .venv/bin/python bench/load_clips.py               # what the repository carries (tests/data)
    .venv/bin/python bench/load_clips.py --shared      # ../shared/data instead
    .venv/bin/python bench/load_clips.py a.fbx b.usdz  # any files

Target: the largest files load in under a second each. FBX files load in a
child process (codec.formats.fbx), so their time includes starting it; USD's includes
importing usd-core the first time in the process (the first repeat; the median drops it).
Compressed files (.gz/.xz/.zst) include their decompression.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = ROOT / "tests" / "data"
# ../shared/data beside the repository (or beside a folder of work trees holding it)
SHARED = next(
    (p / "shared" / "data" for p in ROOT.parents if (p / "shared" / "data").is_dir()),
    ROOT.parent / "shared" / "data",
)
REPEATS = 3
LIMIT_SECONDS = 1.0
FOLDERS = ("bvh", "gltf", "fbx", "usd", "acl")


def clips_in(root: Path) -> list[Path]:
    """Every readable transform clip under `root`, largest first within each format folder.

    Scalar track lists and ACL's two-form format reference are refused by load_clip on
    purpose, so they are not timed."""
    from codec.formats import clip_extensions

    exts = tuple(e for e in clip_extensions() if not e.startswith(".ssc"))
    out: list[Path] = []
    for folder in FOLDERS:
        files = [
            p
            for p in (root / folder).glob("*")
            if p.name.lower().endswith(exts)
            and not p.name.startswith(("track_list", "format_reference"))
        ]
        out += sorted(files, key=lambda p: -p.stat().st_size)
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="clips to time (default: tests/data)")
    parser.add_argument("--shared", action="store_true", help="time ../shared/data instead")
    args = parser.parse_args(argv)
    root = SHARED if args.shared else DATA
    paths = args.paths or clips_in(root)
    if not paths:
        print(f"no clips found (looked in {root})")
        return 1
    from codec.formats import load_clip

    print(f"{'file':<46} {'size':>10} {'joints':>7} {'samples':>8} {'median s':>9}  ok")
    slow = 0
    for path in paths:
        times = []
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            clip = load_clip(path)
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        ok = med < LIMIT_SECONDS
        slow += not ok
        print(
            f"{path.name:<46} {path.stat().st_size:>10,} {clip.num_joints:>7} "
            f"{clip.num_samples:>8} {med:>9.3f}  {'yes' if ok else 'NO'}"
        )
    print(f"limit {LIMIT_SECONDS:.1f} s per file; {slow} file(s) over it")
    return 1 if slow else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
