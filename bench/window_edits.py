"""The window at work: open-to-picture and edit-to-result on 44, 142 and 212-joint clips, with
the codec's own time beside each figure, and a precision-slider drag.

Runs the real MainWindow (1280x800, under `tools/with_display.sh`); every edit goes in as the
user's does (the Joints panel's `edit_joint`, the Settings panel's precision box and slider)
and the clock stops when the new result is in every view: the 3D view (a GL window of its
own) has drawn it and so have the window's widgets, whichever is later. A 5 ms heartbeat
timer measures how long the UI thread was blocked (its largest gap).

    bash tools/with_display.sh .venv/bin/python bench/window_edits.py [--edits N] [--json]

Both compression modes in one run: bench/modes.py thread,process bench/window_edits.py.

Goal: edit-to-result within 1.5x the codec's time + 50 ms; the UI never blocked more than a
frame or two. With --json the last line holds every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PySide6 import QtCore, QtWidgets  # noqa: E402

DATA = ROOT / "tests" / "data"
CLIPS = (  # (joints, path): a CMU rig, a Character Creator rig, the MakeHuman face rig
    (44, DATA / "acl" / "cmu_13_07.acl.sjson.xz"),
    (142, DATA / "bvh" / "cmu_02_03_run_ccrig.bvh"),
    (212, DATA / "bvh" / "makehuman_face_poseunits.bvh.xz"),
)


def slot_name(slot) -> str:  # type: ignore[no-untyped-def]
    """A document listener named by its owner's class; a panel's deferred refresh by its
    panel (app.qt.when_shown)."""
    owner = getattr(slot, "__self__", None)
    if type(owner).__name__ == "WhenShown":  # a panel's refresh, run or put off
        return f"{type(owner.widget).__name__}.{owner.refresh.__name__} (when shown)"
    return f"{type(owner).__name__}.{slot.__name__}" if owner else slot.__qualname__


class Heartbeat:
    """A 5 ms timer; `worst_ms()` is the longest the event loop went without serving it."""

    def __init__(self) -> None:
        self.timer = QtCore.QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self._beat)
        self.last = time.perf_counter()
        self.worst = 0.0

    def _beat(self) -> None:
        now = time.perf_counter()
        self.worst = max(self.worst, now - self.last)
        self.last = now

    def reset(self) -> None:
        self.last = time.perf_counter()
        self.worst = 0.0
        self.timer.start()

    def worst_ms(self) -> float:
        self._beat()
        self.timer.stop()
        return 1e3 * self.worst


class WidgetFrames(QtCore.QObject):
    """Says when the window's widgets have been drawn: `drawn` is emitted (and `last` set to
    perf_counter) on the event-loop turn after each frame of the window's widgets. The 3D
    view is a GL window of its own with its own frames (the viewport's `frame_drawn`)."""

    drawn = QtCore.Signal()

    def __init__(self, window: QtWidgets.QWidget) -> None:
        super().__init__(window)
        self.window = window
        self.last = 0.0
        window.installEventFilter(self)  # after the window's own filter: seen first

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:
        if watched is self.window and event.type() == QtCore.QEvent.Type.UpdateRequest:
            turns = getattr(self.window, "frame_turns", None)  # the 3D view drew this turn
            put_off = getattr(self.window, "_frame_waits", False) or (
                turns is not None and turns.taken()
            )
            if not put_off:  # else put off a turn
                QtCore.QTimer.singleShot(0, self._done)  # runs once this frame is painted
        return False

    def _done(self) -> None:
        self.last = time.perf_counter()
        self.drawn.emit()


def wait_picture(window: object, trigger: object, timeout_s: float = 120.0) -> tuple[float, dict]:
    """Call `trigger()`, run the event loop until a new result is in the document, the 3D
    view has drawn it and the window's widgets have been drawn after it; (seconds, that
    result's stats). A result that changes no widget counts the 3D view's frame alone."""
    doc = window.document  # type: ignore[attr-defined]
    vp = window.viewport  # type: ignore[attr-defined]
    ctl = window.controller  # type: ignore[attr-defined]
    watch = getattr(window, "_bench_widget_frames", None)
    if watch is None:
        watch = WidgetFrames(window)  # type: ignore[arg-type]
        window._bench_widget_frames = watch  # type: ignore[attr-defined]
    loop = QtCore.QEventLoop()
    state = {"result": False, "gl": 0.0, "widgets": 0.0}
    before = doc.result

    def on_result(_r: object) -> None:
        # a result of the newest settings: none is pending and none is in flight
        if doc.result is not before and not ctl.running:
            state["result"] = True
            vp.invalidate()

    def on_frame() -> None:
        if state["result"] and not state["gl"]:
            state["gl"] = time.perf_counter()
            if state["widgets"]:
                loop.quit()
            else:  # the widgets' frame may come a turn later (or not at all)
                QtCore.QTimer.singleShot(250, loop.quit)

    def on_widgets() -> None:
        if state["result"] and not state["widgets"]:
            state["widgets"] = watch.last
            if state["gl"]:
                loop.quit()

    ctl.result_ready.connect(on_result)
    vp.frame_drawn.connect(on_frame)
    watch.drawn.connect(on_widgets)
    QtCore.QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    t0 = time.perf_counter()
    trigger()  # type: ignore[operator]
    if not (state["gl"] and state["widgets"]):
        loop.exec()
    ctl.result_ready.disconnect(on_result)
    vp.frame_drawn.disconnect(on_frame)
    watch.drawn.disconnect(on_widgets)
    if not state["gl"]:
        raise SystemExit("no result drawn within the time limit")
    return max(state["gl"], state["widgets"]) - t0, dict(doc.result.stats)


def bench_clip(window: object, joints: int, path: Path, edits: int, beat: Heartbeat) -> dict:
    w = window
    open_s, stats = wait_picture(w, lambda: w.open_file(path))  # type: ignore[attr-defined]
    doc = w.document  # type: ignore[attr-defined]
    assert doc.clip.num_joints == joints, (path, doc.clip.num_joints)
    panel = w.panels["JointsPanel"]  # type: ignore[attr-defined]
    settings = w.panels["SettingsPanel"]  # type: ignore[attr-defined]
    row = {"clip": path.name, "joints": joints, "open_ms": 1e3 * open_s}
    row["open_codec_ms"] = 1e3 * stats["compression_time"]
    j = joints // 2
    for kind in ("joint", "global"):
        took, codec_ms, blocked = [], [], []
        for i in range(edits):
            value = round(0.006 + 0.0007 * i, 6)
            if kind == "joint":
                trigger = lambda v=value: panel.edit_joint(j, "precision", v)  # noqa: E731
            else:
                trigger = lambda v=value: settings.precision.setValue(v)  # noqa: E731
            beat.reset()
            s, st = wait_picture(w, trigger)
            blocked.append(beat.worst_ms())
            took.append(1e3 * s)
            codec_ms.append(1e3 * st["compression_time"])
        row[f"{kind}_ms"] = statistics.median(took)
        row[f"{kind}_codec_ms"] = statistics.median(codec_ms)
        row[f"{kind}_blocked_ms"] = max(blocked)
    # a slider drag: 20 ticks, one every 50 ms, then until the last value is drawn
    slider = settings.slider
    start = slider.value()
    ticks = [start - 1 - k for k in range(20)]
    beat.reset()
    results = []
    w.controller.result_ready.connect(results.append)  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    for v in ticks[:-1]:
        slider.setValue(v)
        end = time.perf_counter() + 0.05
        while time.perf_counter() < end:
            QtWidgets.QApplication.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 5)
    during = len(results)
    settle_s, st = wait_picture(w, lambda: slider.setValue(ticks[-1]))
    w.controller.result_ready.disconnect(results.append)  # type: ignore[attr-defined]
    row["drag_total_ms"] = 1e3 * (time.perf_counter() - t0)
    row["drag_settle_ms"] = 1e3 * settle_s
    row["drag_settle_codec_ms"] = 1e3 * st["compression_time"]
    row["drag_results_during"] = during
    row["drag_blocked_ms"] = beat.worst_ms()
    return row


def resident_mb(pid: int | None) -> float:
    """Resident memory of process `pid` in MB (0 without one)."""
    if pid is None:
        return 0.0
    with open(f"/proc/{pid}/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return kb / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=5, help="edits of each kind (default 5)")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args()
    QtCore.QCoreApplication.setAttribute(QtCore.Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    app.setOrganizationName("ShellscopeBench")
    app.setApplicationName("ShellscopeBench")
    from app.main_window import MainWindow

    # the window saves each clip's tuning beside it: work on copies, never on tests/data
    scratch = Path(tempfile.mkdtemp(prefix="shellscope-bench-"))
    clips = []
    for joints, path in CLIPS:
        shutil.copy(path, scratch / path.name)
        clips.append((joints, scratch / path.name))
    window = MainWindow(remember_layout=False)
    window.resize(1280, 800)
    window.show()
    beat = Heartbeat()
    rows = [bench_clip(window, j, p, args.edits, beat) for j, p in clips]
    memory = {
        "ui_mb": resident_mb(os.getpid()),
        "child_mb": resident_mb(window.controller.process_id),
    }
    window.close()
    shutil.rmtree(scratch, ignore_errors=True)
    print("times in ms; codec = the result's own compression_time; goal: edit <= 1.5 codec + 50")
    head = f"{'clip':34} {'J':>4} {'open':>7} {'codec':>6}  "
    head += f"{'joint edit':>10} {'codec':>6} {'goal':>6} {'block':>6}  "
    head += f"{'global edit':>11} {'codec':>6} {'goal':>6} {'block':>6}"
    print(head)
    for r in rows:
        goal_j = 1.5 * r["joint_codec_ms"] + 50
        goal_g = 1.5 * r["global_codec_ms"] + 50
        print(
            f"{r['clip']:34} {r['joints']:>4} {r['open_ms']:7.0f} {r['open_codec_ms']:6.0f}  "
            f"{r['joint_ms']:10.0f} {r['joint_codec_ms']:6.0f} {goal_j:6.0f} "
            f"{r['joint_blocked_ms']:6.0f}  "
            f"{r['global_ms']:11.0f} {r['global_codec_ms']:6.0f} {goal_g:6.0f} "
            f"{r['global_blocked_ms']:6.0f}"
        )
    print("slider drag, 20 ticks 50 ms apart: results shown during the drag, settle after the")
    print("last tick (codec time of that run), longest UI block")
    for r in rows:
        print(
            f"{r['clip']:34} {r['joints']:>4} results {r['drag_results_during']:>2}  settle "
            f"{r['drag_settle_ms']:5.0f} ms (codec {r['drag_settle_codec_ms']:4.0f})  "
            f"total {r['drag_total_ms']:5.0f} ms  block {r['drag_blocked_ms']:4.0f} ms"
        )
    print(
        f"resident memory after the bench: the window's process {memory['ui_mb']:.0f} MB, "
        f"the compression process {memory['child_mb']:.0f} MB (compressing in: "
        f"{window.controller.compress_in})"
    )
    if args.json:
        print(
            json.dumps(
                {
                    "clips": [
                        {k: round(v, 1) if isinstance(v, float) else v for k, v in r.items()}
                        for r in rows
                    ],
                    "memory_mb": memory,
                }
            )
        )


if __name__ == "__main__":
    main()
