"""Re-tune latency: one joint's precision edited, until the new result is in the Document.

Drives the window's own path without a window (Document + Controller, the Qt event loop of
a QCoreApplication): the edit goes in through `Document.set_overrides` as the Joints panel
does, the Controller compresses in the background with the clip's Compressor, and the clock
stops when the result is in the Document. Each clip is opened (and compressed) first; then
one joint's precision is edited ten times, to a new value each time (no segment's solution
can be reused from an earlier edit).

    .venv/bin/python bench/retune.py [--json] [--shared] [--edits N]

Target: median <= 150 ms on both clips (moonshot 50 ms). With --json the last line is
{"clips": [{"clip": NAME, "median_ms": M, "max_ms": X}, ...]}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PySide6 import QtCore  # noqa: E402

import codec  # noqa: E402
from app.controller import Controller  # noqa: E402
from app.model.document import Document  # noqa: E402
from codec.tuning import JointOverride  # noqa: E402

DATA = ROOT / "tests" / "data"
CLIPS = (("acl", "cmu_13_07.acl.sjson"), ("bvh", "cmu_02_03_run_ccrig.bvh"))


def clip_path(folder: str, name: str, shared: bool) -> Path:
    if shared:
        up = [p / "shared" / "data" for p in ROOT.parents if (p / "shared" / "data").is_dir()]
        if up:
            return up[0] / folder / name
    plain = DATA / folder / name
    return plain if plain.is_file() else plain.with_name(name + ".xz")


def wait(ctl: Controller, doc: Document, before: object, limit: float) -> None:
    """Run the event loop (idle, as the window's does) until the Document has a new result."""
    if doc.result is not before:
        return
    loop = QtCore.QEventLoop()
    ctl.result_ready.connect(loop.quit)
    ctl.failed.connect(loop.quit)
    QtCore.QTimer.singleShot(int(limit * 1000), loop.quit)
    loop.exec()
    ctl.result_ready.disconnect(loop.quit)
    ctl.failed.disconnect(loop.quit)
    if doc.result is before:
        raise SystemExit("no result within the time limit")


def bench_clip(path: Path, edits: int) -> dict:
    clip = codec.load_clip(path)
    doc = Document()
    ctl = Controller(doc)
    before = doc.result
    ctl.open_clip(clip, path)
    wait(ctl, doc, before, 120.0)  # the first compression (and the JIT, if cold)
    joint = clip.skeleton.names[clip.num_joints // 2]
    times = []
    for i in range(edits):
        precision = round(0.004 + 0.0005 * i, 6)
        before = doc.result
        t0 = time.perf_counter()
        doc.set_overrides([JointOverride(joint, precision=precision)])
        wait(ctl, doc, before, 60.0)
        times.append((time.perf_counter() - t0) * 1e3)
        got = doc.result.clip.skeleton.precision[clip.skeleton.index(joint)]
        assert got == precision, (got, precision)
    return {
        "clip": path.name,
        "joint": joint,
        "median_ms": statistics.median(times),
        "max_ms": max(times),
        "all_ms": [round(t, 1) for t in times],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.add_argument("--shared", action="store_true", help="clips from ../shared/data")
    parser.add_argument("--edits", type=int, default=10, help="edits per clip (default 10)")
    args = parser.parse_args()
    _app = QtCore.QCoreApplication.instance() or QtCore.QCoreApplication(sys.argv[:1])
    rows = [bench_clip(clip_path(f, n, args.shared), args.edits) for f, n in CLIPS]
    for r in rows:
        print(
            f"{r['clip']}: edit {r['joint']}'s precision {args.edits} times: median "
            f"{r['median_ms']:.1f} ms, max {r['max_ms']:.1f} ms  (target: median <= 150 ms)"
        )
    if args.json:
        print(
            json.dumps(
                {"clips": [{k: r[k] for k in ("clip", "median_ms", "max_ms")} for r in rows]}
            )
        )


if __name__ == "__main__":
    main()
