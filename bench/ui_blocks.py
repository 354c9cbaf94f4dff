"""What fills each long UI block (>= 16 ms) during edits and the precision-slider drag, on the
clips of bench/window_edits.py.

A 5 ms heartbeat on the UI thread finds the blocks (the gaps between its beats); a sampling
thread records, every millisecond, the Python stack of the UI thread and of every worker, and
each thread's CPU time (Linux schedstat). For every gap >= 16 ms it prints the gap, the CPU the
UI thread and the workers used in it (a UI thread with little CPU in a long gap was waiting: on
the GIL, or on the X server), the UI's paints and layouts (timed per widget through `notify`),
and the functions seen most often on each thread (innermost frame of ours < innermost frame).

    bash tools/with_display.sh .venv/bin/python bench/ui_blocks.py [--edits N] [--clips 0,1,2]
        [--top K] [--no-paints]

The sampler takes the GIL about every millisecond, so it slows the worker's Python a little;
the paint timing adds a Python `notify` per event (--no-paints leaves it out: a plain
QApplication), which lengthens every frame: the blocks here are longer than in
bench/window_edits.py. The blocks counted at the end (per clip and phase: count >= 16 ms,
longest, median) are the figures to compare, run against run with the same options. Both
compression modes in one run: bench/modes.py thread,process bench/ui_blocks.py [options].
"""

from __future__ import annotations

import argparse
import bisect
import collections
import os
import statistics
import sys
import threading
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from PySide6 import QtCore, QtWidgets  # noqa: E402

BLOCK_MS = 16.0
OURS = (str(ROOT / "app"), str(ROOT / "codec"))


def where(frame: object) -> str:
    """`ours < innermost`: the innermost frame in app/ or codec/, and the innermost frame
    (file:function:line), so that a library call is named with who made it."""
    f = frame
    inner = f"{Path(f.f_code.co_filename).name}:{f.f_code.co_name}:{f.f_lineno}"  # type: ignore[attr-defined]
    while f is not None:
        fn = f.f_code.co_filename  # type: ignore[attr-defined]
        if fn.startswith(OURS):
            rel = os.path.relpath(fn, ROOT)
            mine = f"{rel}:{f.f_code.co_name}:{f.f_lineno}"  # type: ignore[attr-defined]
            return (
                mine
                if mine.endswith(inner.split(":", 1)[1]) and rel.endswith(inner.split(":")[0])
                else f"{mine} < {inner}"
            )
        f = f.f_back  # type: ignore[attr-defined]
    return inner


def idle(where: str) -> bool:
    """A thread that waits for work (an idle pool thread, the finished JIT warm-up)."""
    if where.startswith("[jit") or where.endswith("thread.py:_worker:81"):
        return True
    if "compress_process.py:_read_loop" in where and "connection.py:_recv" in where:
        return True  # the compression process's reader, waiting for an answer
    if "compress_process.py:_send_loop" in where:  # its sender, waiting for a message
        return True
    return "controller.py:_loop:" in where and "threading.py:wait" in where


def cpu_ns(tid: int) -> int:
    """Nanoseconds thread `tid` of this process has run (0 if it has gone)."""
    try:
        with open(f"/proc/self/task/{tid}/schedstat") as fh:
            return int(fh.read().split()[0])
    except OSError:
        return 0


class Sampler(threading.Thread):
    """Every `period` s: (time, UI stack, [worker stacks], UI cpu ns, workers' cpu ns)."""

    def __init__(self, period: float = 0.001) -> None:
        super().__init__(name="ui-blocks-sampler", daemon=True)
        self.period = period
        self.samples: list[tuple[float, str, list[str], int, int]] = []
        self.running = True
        self.main = threading.main_thread()

    def run(self) -> None:
        me = threading.get_ident()
        worker_cpu: dict[int, int] = {}  # native id -> last cpu ns (for threads that ended)
        while self.running:
            frames = sys._current_frames()
            t = time.perf_counter()
            threads = {th.ident: th for th in threading.enumerate()}
            ui = frames.get(self.main.ident)
            workers = []
            for ident, fr in frames.items():
                if ident in (me, self.main.ident):
                    continue
                th = threads.get(ident)
                name = th.name.split("-")[0] if th is not None else "?"
                workers.append(f"[{name}] {where(fr)}")
                if th is not None and th.native_id is not None:
                    worker_cpu[th.native_id] = cpu_ns(th.native_id)
            self.samples.append(
                (
                    t,
                    where(ui) if ui is not None else "(no Python frame)",
                    workers,
                    cpu_ns(self.main.native_id or 0),
                    sum(worker_cpu.values()),
                )
            )
            time.sleep(self.period)


class Beat:
    """A 5 ms UI timer recording every gap between its beats as (start, end)."""

    def __init__(self) -> None:
        self.timer = QtCore.QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self.beat)
        self.last = time.perf_counter()
        self.gaps: list[tuple[float, float]] = []

    def beat(self) -> None:
        now = time.perf_counter()
        if now - self.last >= BLOCK_MS / 1e3:
            self.gaps.append((self.last, now))
        self.last = now

    def start(self) -> None:
        self.last = time.perf_counter()
        self.timer.start()

    def stop(self) -> None:
        self.beat()
        self.timer.stop()


EVENTS: list[tuple[float, float, str]] = []  # (start, end, label) of paints and layouts
TOTAL_QT: collections.Counter = collections.Counter()  # label -> ms inside blocks, all phases
TOTAL_UI: collections.Counter = collections.Counter()  # function -> samples inside blocks
TOTAL_WORK: collections.Counter = collections.Counter()


def widget_name(w: QtCore.QObject) -> str:
    name = type(w).__name__
    p, chain = w.parent(), []
    while p is not None and len(chain) < 2:
        cls = type(p).__name__
        if not cls.startswith("Q"):
            chain.append(cls)
        p = p.parent()
    return f"{name} in {'<'.join(chain)}" if chain else name


class App(QtWidgets.QApplication):
    """Times paints, update requests and layout requests per widget."""

    KINDS = {
        QtCore.QEvent.Type.Paint: "Paint",
        QtCore.QEvent.Type.UpdateRequest: "UpdateRequest",
        QtCore.QEvent.Type.LayoutRequest: "Layout",
    }

    def notify(self, receiver: QtCore.QObject, event: QtCore.QEvent) -> bool:  # type: ignore[override]
        kind = self.KINDS.get(event.type())
        if kind is None:
            return super().notify(receiver, event)
        t = time.perf_counter()
        ok = super().notify(receiver, event)
        EVENTS.append((t, time.perf_counter(), f"{kind} {widget_name(receiver)}"))
        return ok


def report(phase: str, beat: Beat, sampler: Sampler, top: int) -> tuple[int, float]:
    """Print every gap of `beat` with what filled it; (count, longest ms)."""
    samples = sampler.samples
    times = [s[0] for s in samples]

    longest = 0.0
    for g0, g1 in beat.gaps:
        ms = 1e3 * (g1 - g0)
        longest = max(longest, ms)
        i0, i1 = bisect.bisect_left(times, g0), bisect.bisect_right(times, g1)
        inside = samples[i0:i1]
        if not inside:
            print(f"  [{phase}] gap {ms:5.1f} ms: no samples (the sampler was starved)")
            continue
        n = len(inside)
        ui_cpu = 1e-6 * (inside[-1][3] - inside[0][3])
        wk_cpu = 1e-6 * (inside[-1][4] - inside[0][4])
        span = 1e3 * (inside[-1][0] - inside[0][0])
        print(
            f"  [{phase}] gap {ms:5.1f} ms  ({n} samples over {span:.0f} ms; CPU there: UI "
            f"{ui_cpu:.0f} ms, workers {wk_cpu:.0f} ms)"
        )
        ev = collections.Counter()
        for a, b, label in EVENTS:
            if a < g1 and b > g0:
                ev[label] += 1e3 * (min(b, g1) - max(a, g0))
        TOTAL_QT.update(ev)
        for label, v in ev.most_common(top):
            if v >= 1.0:
                print(f"      qt   {v:5.1f} ms  {label}")
        ui = collections.Counter(s[1] for s in inside)
        TOTAL_UI.update(ui)
        for k, c in ui.most_common(top):
            print(f"      ui   {100 * c / n:3.0f}%  {k}")
        wk = collections.Counter(w for s in inside for w in s[2] if not idle(w))
        TOTAL_WORK.update(wk)
        for k, c in wk.most_common(top):
            print(f"      work {100 * c / n:3.0f}%  {k}")
    return len(beat.gaps), longest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=5, help="edits of each kind (default 5)")
    parser.add_argument("--clips", default="0,1,2", help="indices into window_edits.CLIPS")
    parser.add_argument("--top", type=int, default=5, help="functions shown per thread")
    parser.add_argument("--no-paints", action="store_true", help="do not time Qt events")
    args = parser.parse_args()
    QtCore.QCoreApplication.setAttribute(QtCore.Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    # --no-paints: a plain QApplication, no Python call per event (the figures closest to
    # bench/window_edits.py's)
    app = (QtWidgets.QApplication if args.no_paints else App)(sys.argv[:1])
    app.setOrganizationName("ShellscopeBench")
    app.setApplicationName("ShellscopeBench")
    import shutil
    import tempfile

    import window_edits as we

    from app.main_window import MainWindow

    scratch = Path(tempfile.mkdtemp(prefix="shellscope-blocks-"))
    window = MainWindow(remember_layout=False)
    window.resize(1280, 800)
    window.show()
    sampler = Sampler()
    sampler.start()
    summary = []
    for idx in (int(i) for i in args.clips.split(",")):
        joints, src = we.CLIPS[idx]
        path = scratch / src.name
        shutil.copy(src, path)
        we.wait_picture(window, lambda p=path: window.open_file(p))
        panel = window.panels["JointsPanel"]
        settings = window.panels["SettingsPanel"]
        j = joints // 2
        print(f"\n== {src.name} ({joints} joints)")
        for kind in ("joint", "global"):
            beat = Beat()
            sampler.samples.clear()
            EVENTS.clear()
            beat.start()
            for i in range(args.edits):
                value = round(0.006 + 0.0007 * i, 6)
                if kind == "joint":
                    trigger = partial(panel.edit_joint, j, "precision", value)
                else:
                    trigger = partial(settings.precision.setValue, value)
                we.wait_picture(window, trigger)
            beat.stop()
            n, worst = report(f"{kind} edits", beat, sampler, args.top)
            summary.append((src.name, joints, f"{kind} edits", n, worst, beat.gaps))
        # the drag of bench/window_edits.py: 20 ticks 50 ms apart, then until drawn
        slider = settings.slider
        ticks = [slider.value() - 1 - k for k in range(20)]
        beat = Beat()
        sampler.samples.clear()
        EVENTS.clear()
        beat.start()
        for v in ticks[:-1]:
            slider.setValue(v)
            end = time.perf_counter() + 0.05
            while time.perf_counter() < end:
                QtWidgets.QApplication.processEvents(
                    QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 5
                )
        we.wait_picture(window, partial(slider.setValue, ticks[-1]))
        beat.stop()
        n, worst = report("drag", beat, sampler, args.top)
        summary.append((src.name, joints, "drag", n, worst, beat.gaps))
    sampler.running = False
    sampler.join()
    window.close()
    shutil.rmtree(scratch, ignore_errors=True)
    print("\nin all blocks: Qt events (ms), UI and worker functions (samples)")
    for label, v in TOTAL_QT.most_common(3 * args.top):
        print(f"  qt   {v:7.1f} ms  {label}")
    for k, c in TOTAL_UI.most_common(3 * args.top):
        print(f"  ui   {c:5d}  {k}")
    for k, c in TOTAL_WORK.most_common(2 * args.top):
        print(f"  work {c:5d}  {k}")
    print("\nblocks >= 16 ms: clip, phase, count, longest, median")
    for name, joints, phase, n, worst, gaps in summary:
        med = statistics.median([1e3 * (b - a) for a, b in gaps]) if gaps else 0.0
        print(f"  {name:34} {joints:>4} {phase:13} {n:3d}  {worst:5.1f} ms  {med:5.1f} ms")


if __name__ == "__main__":
    main()
