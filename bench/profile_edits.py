"""Where an edit's milliseconds go, from the edit to the result drawn: the worker's share
(encode, container, each measurement step) and the UI thread's (each document listener, the
status bar, every widget's paint, the 3D view's rebuild and GL draw), on the clips of
bench/window_edits.py.

    bash tools/with_display.sh .venv/bin/python bench/profile_edits.py [--edits N] [--kind K]
        [--cprofile]

Each figure is the median over the edits (joint or global precision edits, as the bench
makes them). With --cprofile the UI thread's own functions during the last edit are listed
too. Instrumentation wraps functions from outside (nothing in app/ or codec/ changes), so the
times include a little of its own overhead. Timing each paint means a Python `notify` for
every event, which holds the GIL through each frame: the worker's times here are longer than
in the window (bench/window_edits.py has no such hook).
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import functools
import pstats
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

TIMES: dict[str, list[float]] = collections.defaultdict(list)  # label -> ms of this edit
_lock = threading.Lock()


def add(label: str, ms: float) -> None:
    with _lock:
        TIMES[label].append(ms)


def timed(label: str, fn):  # type: ignore[no-untyped-def]
    @functools.wraps(fn)
    def wrapper(*a, **k):  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            add(label, 1e3 * (time.perf_counter() - t))

    return wrapper


def widget_name(w: QtCore.QObject) -> str:
    """A widget's class; a plain Qt widget (a view's viewport, a dock's contents) is named
    with the nearest ancestor of our own or of pyqtgraph ("QWidget in PlotWidget <
    ErrorPlotPanel"), so that one class does not hide which panel's paint it is."""
    name = type(w).__name__
    if not name.startswith("Q"):
        return name
    chain, p = [], w.parent()
    while p is not None and len(chain) < 2:
        cls = type(p).__name__
        if not cls.startswith("Q") or cls in ("QTreeView", "QTreeWidget", "QTableWidget"):
            chain.append(cls)
        p = p.parent()
    return f"{name} in {' < '.join(chain)}" if chain else name


class App(QtWidgets.QApplication):
    """Times every paint event, by the painted widget's class."""

    def notify(self, receiver: QtCore.QObject, event: QtCore.QEvent) -> bool:  # type: ignore[override]
        kind = event.type()
        if kind in (QtCore.QEvent.Type.Paint, QtCore.QEvent.Type.UpdateRequest):
            t = time.perf_counter()
            ok = super().notify(receiver, event)
            name = "Paint" if kind == QtCore.QEvent.Type.Paint else "UpdateRequest"
            add(f"ui {name} {widget_name(receiver)}", 1e3 * (time.perf_counter() - t))
            return ok
        if kind == QtCore.QEvent.Type.LayoutRequest:
            t = time.perf_counter()
            ok = super().notify(receiver, event)
            add(f"ui LayoutRequest {type(receiver).__name__}", 1e3 * (time.perf_counter() - t))
            return ok
        return super().notify(receiver, event)


def instrument() -> None:
    import window_edits as we

    import codec.compression as comp
    import codec.measure.measure as meas
    from app import controller as ctl
    from app.model import document as docmod
    from app.scene import scene_view, viewport3d

    for name in ("clip_errors", "between_errors", "build_stats", "skin_error"):
        setattr(meas, name, timed(f"worker measure.{name}", getattr(meas, name)))
    comp.measure = timed("worker measure (all)", comp.measure)
    orig_write = comp.container.write
    comp.container.write = timed("worker container.write", orig_write)  # type: ignore[attr-defined]
    ctl._CompressorCache.compress = timed("worker run (all)", ctl._CompressorCache.compress)

    # the queue: worker done -> UI thread handles it
    done_at: dict[str, float] = {}
    orig_fin = ctl.Controller._on_finished

    def on_finished(self, generation, payload, message):  # type: ignore[no-untyped-def]
        if "t" in done_at and payload is not None:
            add("queue worker->UI", 1e3 * (time.perf_counter() - done_at.pop("t")))
        t = time.perf_counter()
        orig_fin(self, generation, payload, message)
        if payload is not None:
            add("ui Controller._on_finished (all)", 1e3 * (time.perf_counter() - t))

    ctl.Controller._on_finished = on_finished
    orig_compress = ctl._CompressorCache.compress

    def compress(self, *a, **k):  # type: ignore[no-untyped-def]
        r = orig_compress(self, *a, **k)
        done_at["t"] = time.perf_counter()
        return r

    ctl._CompressorCache.compress = compress

    def emit(self, *args):  # type: ignore[no-untyped-def]
        for slot in list(self._slots):
            name = we.slot_name(slot)
            t = time.perf_counter()
            slot(*args)
            add(f"ui slot {name}", 1e3 * (time.perf_counter() - t))

    docmod.Signal.emit = emit
    v = viewport3d.Viewport3D
    v._rebuild = timed("ui 3D _rebuild", v._rebuild)
    v._update_info = timed("ui 3D _update_info", v._update_info)
    sv = scene_view.SceneView
    sv.paintGL = timed("ui 3D paintGL (all)", sv.paintGL)
    sv.drawItemTree = timed("ui 3D drawItemTree", sv.drawItemTree)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--kind", choices=("joint", "global"), default="global")
    parser.add_argument("--clips", default="0,1,2", help="indices into the bench's clips")
    parser.add_argument("--cprofile", action="store_true")
    args = parser.parse_args()
    QtCore.QCoreApplication.setAttribute(QtCore.Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    app = App(sys.argv[:1])
    app.setOrganizationName("ShellscopeBench")
    app.setApplicationName("ShellscopeBench")
    import shutil
    import tempfile

    import window_edits as we

    from app.main_window import MainWindow

    instrument()
    scratch = Path(tempfile.mkdtemp(prefix="shellscope-prof-"))
    window = MainWindow(remember_layout=False)
    window.resize(1280, 800)
    window.show()
    beat = we.Heartbeat()
    for idx in (int(i) for i in args.clips.split(",")):
        joints, src = we.CLIPS[idx]
        path = scratch / src.name
        shutil.copy(src, path)
        we.wait_picture(window, lambda p=path: window.open_file(p))
        panel = window.panels["JointsPanel"]
        settings = window.panels["SettingsPanel"]
        j = joints // 2
        per_edit: list[dict[str, float]] = []
        total, blocked = [], []
        prof = cProfile.Profile() if args.cprofile else None
        for i in range(args.edits):
            value = round(0.006 + 0.0007 * i, 6)
            if args.kind == "joint":
                trigger = partial(panel.edit_joint, j, "precision", value)
            else:
                trigger = partial(settings.precision.setValue, value)
            TIMES.clear()
            beat.reset()
            if prof is not None and i == args.edits - 1:
                prof.enable()
            s, st = we.wait_picture(window, trigger)
            if prof is not None and i == args.edits - 1:
                prof.disable()
            blocked.append(beat.worst_ms())
            total.append(1e3 * s)
            row = {k: sum(v) for k, v in TIMES.items()}
            row.update({f"{k} #": float(len(v)) for k, v in TIMES.items() if k.startswith("ui U")})
            row["ui slot (all handlers, sum)"] = sum(
                v for k, v in row.items() if k.startswith("ui slot ")
            )
            row["codec compression_time"] = 1e3 * st["compression_time"]
            per_edit.append(row)
        keys = sorted({k for r in per_edit for k in r})
        print(f"\n== {src.name} ({joints} joints), {args.kind} edits x{args.edits}")
        print(f"edit-to-drawn {statistics.median(total):.0f} ms, UI block {max(blocked):.0f} ms")
        for k in keys:
            vals = [r.get(k, 0.0) for r in per_edit]
            print(f"  {k:58} {statistics.median(vals):7.1f}  (max {max(vals):6.1f})")
        if prof is not None:
            pstats.Stats(prof).sort_stats("cumulative").print_stats(45)
    window.close()
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
