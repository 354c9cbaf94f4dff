"""The curve codec of this checkout against another commit's, on the keyed bench clips, in one run.

    .venv/bin/python bench/curve_vs_commit.py [--commit cc7531f ...] [--repeat 2]
                                              [--kinds K,...] [--sources NAME:SPACING,...]
                                              [--json OUT]

Each other commit (--commit, repeatable) is exported (`git archive`) to a temporary folder;
each side runs in its own child process (its own `codec` package and compiled kernels,
warmed up on the first clip before anything is timed), and the clips of
bench/keyed_codecs.py go to the children in turn, so all see the same machine load. Per
clip: each side's payload size, whether it is strict (every joint within its precision at
every sample, decoded from the bytes, float64) and its encode time (the codec's `encode`
alone, time.perf_counter; the least of --repeat runs, so a kernel compiled on first use of
a new signature or a burst of load on a shared machine is not taken for the codec's time),
and the ratio of the times, wall and CPU (time.process_time: the encode is one thread, so its
CPU seconds are its work whatever else the shared machine runs; wall time there is not).
The acceptance of issue 33: this checkout's time within 2x of
cc7531f's. One table per other commit.
"""

from __future__ import annotations

import argparse
import json
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

sys.path.insert(0, str(REPO / "bench"))

import keyed_codecs as kc  # noqa: E402 (the keyed clips of the bench beside this one)

from codec.cli.report_text import table  # noqa: E402

# the child: reads a pickled clip's path per line, answers one JSON line
CHILD = """
import json, pickle, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
from codec.codecs.curve import CurveCodec
from codec.measure.error_metric import clip_errors
from codec.settings import CompressionSettings
settings = CompressionSettings(precision=0.01, shell_distance=3.0, skin_error=False)
codec = CurveCodec()
repeat = int(sys.argv[2])
warm = False
for line in sys.stdin:
    clip = pickle.loads(open(line.strip(), "rb").read())
    if not warm:
        codec.encode(clip, settings)
        warm = True
    seconds = cpu = float("inf")
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        enc = codec.encode(clip, settings)
        seconds = min(seconds, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    decoded = codec.decode(enc.payload, clip.skeleton).decode_source()
    err = clip_errors(settings.apply(clip), decoded).max(axis=0)
    strict = bool(np.all(err <= settings.apply(clip).skeleton.precision))
    out = {"size": len(enc.payload), "time": seconds, "cpu": cpu, "strict": strict}
    print(json.dumps(out), flush=True)
"""


def _child(root: Path, repeat: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), str(repeat)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=root,
    )


def _ask(child: subprocess.Popen, path: Path) -> dict[str, Any]:
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(f"{path}\n")
    child.stdin.flush()
    line = child.stdout.readline()
    if not line:
        raise RuntimeError("a bench child ended early (see its stderr)")
    return json.loads(line)


def run(args: argparse.Namespace, say=print) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="shellscope-curve-vs-") as tmp:
        children = {"this": _child(REPO, args.repeat)}
        for n, commit in enumerate(args.commit):
            old = Path(tmp) / f"old{n}"
            old.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(REPO), "archive", commit], check=True, capture_output=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
            children[commit] = _child(old, args.repeat)
        try:
            clips = kc.keyed_clips(args.sources, args.kinds, False)
            for source, kind, spacing, keys, clip in clips:
                say(f"curve vs {', '.join(args.commit)}: {clip.name}")
                path = Path(tmp) / "clip.pkl"
                path.write_bytes(pickle.dumps(clip))
                row = {"source": source, "kind": kind, "spacing": spacing, "keys": keys}
                for side, child in children.items():  # the same clip, one side after the other
                    row[side] = _ask(child, path)
                rows.append(row)
        finally:
            for child in children.values():
                assert child.stdin is not None
                child.stdin.close()
                child.wait()
    return rows


def format_rows(rows: list[dict[str, Any]], commit: str) -> str:
    head = ["source", "kind", "keys", f"{commit} B", "this B", "size", "strict"]
    head += [f"{commit} s", "this s", "time x", f"{commit} cpu", "this cpu", "cpu x"]
    out = [head]
    for r in rows:
        a, b = r[commit], r["this"]
        out.append(
            [
                r["source"],
                r["kind"],
                r["spacing"],
                f"{a['size']:,}",
                f"{b['size']:,}",
                f"{b['size'] / a['size']:.3f}",
                f"{'yes' if a['strict'] else 'NO'}/{'yes' if b['strict'] else 'NO'}",
                f"{a['time']:.2f}",
                f"{b['time']:.2f}",
                f"{b['time'] / a['time']:.2f}",
                f"{a['cpu']:.2f}",
                f"{b['cpu']:.2f}",
                f"{b['cpu'] / a['cpu']:.2f}",
            ]
        )
    ratios = [r["this"]["time"] / r[commit]["time"] for r in rows]
    cpus = sorted(r["this"]["cpu"] / r[commit]["cpu"] for r in rows)
    larger = [r for r in rows if r["this"]["size"] > r[commit]["size"]]
    return "\n".join(
        [
            f"curve codec, this checkout against {commit}, in one run (encode only, warmed up); "
            "strict: decoded from the bytes, float64",
            table(out, right=range(3, len(head))),
            f"time ratio: max {max(ratios):.2f}, median {sorted(ratios)[len(ratios) // 2]:.2f}; "
            f"CPU ratio: max {cpus[-1]:.2f}, median {cpus[len(cpus) // 2]:.2f}; "
            f"clips larger than {commit}: {len(larger)}",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--commit", action="append", help="a commit to measure against (repeatable; cc7531f)"
    )
    parser.add_argument("--repeat", type=int, default=2, help="encodes per clip, least timed")
    parser.add_argument("--kinds", type=lambda s: s.split(","), default=list(kc.MAKE.KINDS))
    parser.add_argument(
        "--sources",
        type=lambda s: [(n, int(k)) for n, k in (p.split(":") for p in s.split(","))],
        default=list(kc.SOURCES),
    )
    parser.add_argument("--json", type=Path, help="write the rows as JSON here")
    args = parser.parse_args(argv)
    args.commit = args.commit or ["cc7531f"]
    rows = run(args, say=lambda m: print(m, file=sys.stderr, flush=True))
    print("\n\n".join(format_rows(rows, commit) for commit in args.commit))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
