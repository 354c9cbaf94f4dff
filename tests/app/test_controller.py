"""Controller: background runs, stale cancellation, debouncing, failures keep the clip."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore

import codec
from app import controller as controller_module
from app.controller import WORKER_NICE, Controller
from app.model.document import Document
from codec.model.clip import Clip, Skeleton
from codec.sidecar import load_sidecar, sidecar_path
from codec.tuning import GlobalSettings, JointOverride


def small_clip() -> Clip:
    offsets = np.array([[0, 0, 0], [0, 10, 0], [0, 10, 0.0]])
    sk = Skeleton.create(["root", "a", "b"], [-1, 0, 1], bind_translations=offsets)
    s = 12
    rot = np.zeros((s, 3, 4))
    ang = np.linspace(0, 1, s)[:, None] * np.array([0.2, 0.5, 0.9])
    rot[..., 2], rot[..., 3] = np.sin(ang / 2), np.cos(ang / 2)
    tr = np.broadcast_to(sk.bind_translations, (s, 3, 3)).copy()
    return Clip(sk, 30.0, rot, tr, np.ones((s, 3, 3)))


def test_real_compression_runs_off_the_ui_thread(qtbot) -> None:
    doc = Document()
    ctl = Controller(doc)
    threads = []

    def compress(clip, settings, progress, cancel):
        threads.append(threading.current_thread())
        progress(0.5, "half")
        return codec.compress(clip, settings, progress=progress, cancel=cancel)

    ctl._compress = compress
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        ctl.open_clip(small_clip())
    assert threads and threads[0] is not threading.main_thread()
    assert doc.result is not None and doc.result.clip.num_joints == 3
    assert not doc.status.running and "Compressed" in doc.status.message


def test_the_chosen_codec_compresses_and_names_the_result(qtbot) -> None:
    doc = Document()
    ctl = Controller(doc)
    seen = []

    def compress(clip, settings, progress, cancel):
        seen.append(settings.codec)
        return codec.compress(clip, settings, progress=progress, cancel=cancel)

    ctl._compress = compress
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        ctl.open_clip(small_clip())
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        ctl.set_codec("keyreduce")  # a tuning edit: undoable, saved with the clip's tuning
    assert seen == ["acl-style", "keyreduce"] and doc.result is not None
    assert doc.settings.codec == "keyreduce" and ctl.history.undo_label() == "codec"
    assert doc.result.codec_name == "keyreduce" and doc.result.stats["codec"] == "keyreduce"
    assert doc.result.costs is None  # not a bit-rate codec
    with pytest.raises(ValueError, match="unknown codec 'zip'"):
        ctl.set_codec("zip")  # what `shellscope --codec` refuses before a window opens
    assert ctl.settings().codec == "keyreduce"


def test_a_newer_request_cancels_the_stale_run(qtbot) -> None:
    doc = Document()
    started, cancelled = [], []
    gate = threading.Event()

    def compress(clip, settings, progress, cancel):
        started.append(clip.skeleton.precision[0])
        while not gate.is_set():
            if cancel():
                cancelled.append(clip.skeleton.precision[0])
                raise codec.Cancelled("stop")
            time.sleep(0.002)
        return codec.compress(clip, settings)

    ctl = Controller(doc, compress=compress, debounce_ms=10)
    ctl.open_clip(small_clip())
    qtbot.waitUntil(lambda: len(started) == 1, timeout=30_000)
    doc.update_settings(precision=0.05)
    qtbot.waitUntil(lambda: len(started) == 2, timeout=30_000)
    qtbot.waitUntil(lambda: cancelled == [0.01], timeout=30_000)
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        gate.set()
    assert doc.result.clip.skeleton.precision[0] == 0.05


def test_a_burst_of_edits_runs_its_first_edit_at_once_and_then_only_the_newest(qtbot) -> None:
    """Throttled, not debounced: the first edit starts at once; edits arriving while it runs
    do not each start a run, the newest one runs next (and the result is its)."""
    doc = Document()
    runs = []
    burst_sent = threading.Event()

    def compress(clip, settings, progress, cancel):
        runs.append(clip.skeleton.precision[0])
        if len(runs) == 1:  # the opening: slow enough that the throttle is long (twice it)
            time.sleep(0.4)
        if len(runs) == 2:  # the first edit's run: still running when the burst arrives
            burst_sent.wait(30)
        return codec.compress(clip, settings, progress=progress, cancel=cancel)

    ctl = Controller(doc, compress=compress, debounce_ms=150)
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        ctl.open_clip(small_clip())
    doc.update_settings(precision=0.02)
    qtbot.waitUntil(lambda: len(runs) == 2, timeout=30_000)
    assert runs == [0.01, 0.02]  # the first edit at once
    for p in (0.03, 0.04, 0.05):
        doc.update_settings(precision=p)
    burst_sent.set()
    qtbot.waitUntil(lambda: doc.result.clip.skeleton.precision[0] == 0.05, timeout=30_000)
    assert runs[:2] == [0.01, 0.02] and runs[-1] == 0.05
    assert 0.03 not in runs and 0.04 not in runs  # superseded before they could start


def test_a_lone_edit_compresses_at_once(qtbot) -> None:
    doc = Document()
    runs = []

    def compress(clip, settings, progress, cancel):
        runs.append(clip.skeleton.precision[0])
        return codec.compress(clip, settings, progress=progress, cancel=cancel)

    ctl = Controller(doc, compress=compress, debounce_ms=10_000)
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        ctl.open_clip(small_clip())
    with qtbot.waitSignal(ctl.result_ready, timeout=5_000):  # long before the 10 s debounce
        doc.update_settings(precision=0.02)
    assert runs == [0.01, 0.02]


def test_the_window_reuses_the_clips_compressor_and_matches_a_fresh_compress(qtbot) -> None:
    doc = Document()
    ctl = Controller(doc, debounce_ms=10)
    clip = small_clip()
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        ctl.open_clip(clip)
    first = ctl._compressor
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        doc.update_settings(precision=0.004)
    assert ctl._compressor is first  # the same clip: its analysis is kept
    fresh = codec.compress(doc.compression_input(), ctl.settings())
    assert doc.result.data == fresh.data


def test_a_failing_run_reports_and_keeps_the_clip(qtbot) -> None:
    doc = Document()

    def compress(clip, settings, progress, cancel):
        raise RuntimeError("optimiser exploded")

    ctl = Controller(doc, compress=compress)
    clip = small_clip()
    with qtbot.waitSignal(ctl.failed, timeout=5000) as blocker:
        ctl.open_clip(clip)
    assert "optimiser exploded" in blocker.args[0]
    assert doc.clip is clip and doc.result is None
    assert doc.status.error and "optimiser exploded" in doc.status.error
    assert not doc.status.running


def test_cancel_stops_the_run_and_drops_its_result(qtbot) -> None:
    """Cancelled once the codec runs (waited for: on a loaded machine the worker may start it
    only after a cancel, and then skips it without calling the codec at all)."""
    doc = Document()
    started, saw_cancel = threading.Event(), threading.Event()

    def compress(clip, settings, progress, cancel):
        started.set()
        while not cancel():
            time.sleep(0.002)
        saw_cancel.set()
        raise codec.Cancelled("stop")

    ctl = Controller(doc, compress=compress)
    ctl.open_clip(small_clip())
    assert ctl.running and doc.status.running
    assert started.wait(60)
    ctl.cancel()
    assert saw_cancel.wait(60)
    qtbot.waitUntil(lambda: "cancelled" in doc.status.message, timeout=10_000)
    assert not ctl.running and doc.result is None


def test_shutdown_is_prompt_even_if_the_codec_never_looks_at_cancel(qtbot) -> None:
    doc = Document()
    release = threading.Event()

    def compress(clip, settings, progress, cancel):
        release.wait(10)
        raise codec.Cancelled("late")

    ctl = Controller(doc, compress=compress)
    ctl.open_clip(small_clip())
    t0 = time.monotonic()
    ctl.shutdown(timeout=0.3)
    assert time.monotonic() - t0 < 1.0
    release.set()


@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_invalid_settings_never_reach_the_codec(qtbot, bad) -> None:
    """A refused value leaves the settings as they were and starts no compression: the
    codec is called once for the opened clip and never with the bad precision."""
    doc = Document()
    seen: list[float] = []

    def compress(clip, settings, progress, cancel):
        seen.append(float(clip.skeleton.precision.max()))
        return codec.compress(clip, settings)

    ctl = Controller(doc, compress=compress, debounce_ms=10)
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        ctl.open_clip(small_clip())
    before = doc.settings
    own = doc.global_precision()  # the clip's own value: no precision set yet
    with pytest.raises(ValueError):
        doc.update_settings(precision=bad)
    # nothing scheduled: no timer that could start a run, none running
    qtbot.waitUntil(lambda: not ctl.debounce.isActive() and not ctl.throttle.isActive())
    assert doc.settings == before
    assert seen == [own] and not ctl.running
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):  # a good value does reach it
        doc.update_settings(precision=own * 2)
    assert seen == [own, own * 2]


def test_a_failed_open_keeps_the_clip_and_its_compression_running(qtbot) -> None:
    """A view failing on a new clip leaves the open one as it was: still compressing (the
    run is not cancelled), no recompression scheduled, and its result arrives."""
    from tests.codec.helpers import chain_clip

    doc = Document()
    gate = threading.Event()

    def compress(clip, settings, progress, cancel):
        while not gate.is_set():
            if cancel():
                raise codec.Cancelled("stop")
            time.sleep(0.002)
        return codec.compress(clip, settings)

    ctl = Controller(doc, compress=compress, debounce_ms=10)
    first = small_clip()
    ctl.open_clip(first)
    assert ctl.running

    def view() -> None:
        if doc.clip is not first:
            raise RuntimeError("the view cannot draw this clip")

    doc.clip_changed.connect(view)
    with pytest.raises(RuntimeError, match="cannot draw"):
        ctl.open_clip(chain_clip(num_joints=5))
    assert doc.clip is first and ctl.running and not ctl.debounce.isActive()
    assert not ctl.first_result.is_set()
    gate.set()
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        pass
    assert doc.result is not None and doc.result.clip.num_joints == 3
    assert ctl.first_result.is_set()  # the other codecs' warm-up waits for this


def test_the_window_warms_the_codec_kernels_up_in_the_background(qtbot, monkeypatch) -> None:
    """Off the UI thread, saying so in the status line when the kernels compile (a first
    start without their cache) and when they are ready."""
    from codec import warm_up

    calls = []
    go_on = threading.Event()

    def compiling_warm_up(compiling, codec):
        calls.append((threading.current_thread(), codec))
        compiling()
        go_on.wait(5)
        return warm_up.WarmUp(1.0, 3)

    monkeypatch.setattr(warm_up, "warm_up", compiling_warm_up)
    doc = Document()
    ctl = Controller(doc)
    qtbot.waitUntil(lambda: "compiling the codec's kernels" in doc.status.message.lower())
    assert calls[0] == (calls[0][0], "acl-style") and calls[0][0] is not threading.main_thread()
    assert ctl.warming == warm_up.COMPILING
    ctl._on_progress(0, 0.5, "segment 1/2")  # no run: ignored
    go_on.set()
    qtbot.waitUntil(lambda: doc.status.message.startswith("The codec's kernels are compiled"))
    assert ctl.warming == "" and len(calls) == 1
    ctl.first_result.set()  # the first result is in: every other codec warms up
    qtbot.waitUntil(lambda: len(calls) == 2)
    assert calls[1] == (calls[0][0], "auto")
    warming = lambda: sum(t.name == "jit-warm-up" for t in threading.enumerate())  # noqa: E731
    before = warming()
    Controller(Document(), compress=lambda *a, **k: None)  # a test's own codec: no warm-up
    assert warming() <= before and len(calls) == 2


def test_a_run_waiting_for_the_compiler_says_so(qtbot) -> None:
    from codec import warm_up

    doc = Document()
    ctl = Controller(doc, compress=_slow_compress)
    ctl.open_clip(small_clip())
    ctl._on_warming(warm_up.COMPILING)
    assert doc.status.running and doc.status.message.endswith(f"({warm_up.COMPILING})")
    ctl._on_warming("")
    assert doc.status.running and warm_up.COMPILING not in doc.status.message
    ctl.cancel()


def _slow_compress(clip, settings, progress=None, cancel=None, **_kwargs):
    while cancel is not None and not cancel():
        time.sleep(0.01)
    raise codec.Cancelled("cancelled")


# --- the views' intents: tuning saved beside the clip, exports written ------------------------


class Intents(QtCore.QObject):
    """What a view emits (app.views.*): the controller is the one that acts on it."""

    settings_edited = QtCore.Signal(object)
    overrides_edited = QtCore.Signal(object)
    export_requested = QtCore.Signal(str, str, object)

    def __init__(self) -> None:
        super().__init__()
        self.outcomes: list[tuple[str, str, str]] = []

    def show_export(self, kind: str, path: str, error: str) -> None:
        self.outcomes.append((kind, path, error))


def _cancelled(*_args, **_kwargs):
    raise codec.Cancelled("no compression in these tests")


def _opened(qtbot, path: Path | None, debounce_ms: int) -> tuple[Document, Controller, Intents]:
    doc = Document()
    ctl = Controller(doc, compress=_cancelled, debounce_ms=debounce_ms)
    view = Intents()
    ctl.attach(view)
    ctl.open_clip(small_clip(), path)
    return doc, ctl, view


def test_a_burst_of_edits_is_saved_once_when_it_settles(qtbot, tmp_path: Path, monkeypatch) -> None:
    from app import controller as controller_module

    saves = []
    real = controller_module.save_sidecar
    monkeypatch.setattr(
        controller_module, "save_sidecar", lambda *a: (saves.append(a[1:3]), real(*a))[1]
    )
    doc, ctl, view = _opened(qtbot, tmp_path / "walk.bvh", debounce_ms=150)
    for p in (0.02, 0.03, 0.04):
        view.settings_edited.emit({"precision": p})
    rules = (JointOverride("a", rounding="floor"),)  # a rounding-only rule: saved all the same
    view.overrides_edited.emit(rules)
    assert doc.settings.precision == 0.04 and doc.overrides == rules  # the model at once
    assert saves == [] and not sidecar_path(doc.path).exists()  # the file when they settle
    qtbot.waitUntil(lambda: len(saves) == 1)
    qtbot.waitUntil(lambda: not ctl.debounce.isActive())  # no later save can come
    assert saves == [(doc.settings, rules)]
    assert load_sidecar(doc.path) == (GlobalSettings(precision=0.04), rules)


def test_opening_another_clip_or_closing_saves_a_pending_edit_first(qtbot, tmp_path: Path) -> None:
    first = tmp_path / "first.bvh"
    doc, ctl, view = _opened(qtbot, first, debounce_ms=60_000)
    view.settings_edited.emit({"level": "high"})
    assert not sidecar_path(first).exists()
    second = tmp_path / "second.bvh"
    ctl.open_clip(small_clip(), second, settings=GlobalSettings(level="low"))
    assert load_sidecar(first)[0] == GlobalSettings(level="high")  # the first clip's edit
    assert not sidecar_path(second).exists()  # opening is not an edit
    view.overrides_edited.emit((JointOverride("b", precision=0.5),))
    ctl.shutdown()
    assert load_sidecar(second) == (GlobalSettings(level="low"), (JointOverride("b", 0.5),))


def test_a_sidecar_that_cannot_be_written_is_reported_and_the_edit_kept(
    qtbot, tmp_path: Path
) -> None:
    doc, ctl, view = _opened(qtbot, tmp_path / "missing" / "walk.bvh", debounce_ms=60_000)
    view.settings_edited.emit({"precision": 0.5})
    assert ctl.save_tuning() is None
    assert doc.status.error and "walk.bvh.shellscope.json" in doc.status.error
    assert doc.settings.precision == 0.5
    assert ctl.save_tuning() is None  # nothing pending any more
    unsaved, ctl2, view2 = _opened(qtbot, None, debounce_ms=10)  # a clip without a file
    view2.settings_edited.emit({"precision": 0.5})
    assert unsaved.settings.precision == 0.5 and ctl2.save_tuning() is None


def test_exports_are_written_by_the_controller_and_reported_back(qtbot, tmp_path: Path) -> None:
    doc, ctl, view = _opened(qtbot, tmp_path / "walk.bvh", debounce_ms=10)
    view.export_requested.emit("stats", str(tmp_path / "s.json"), None)
    assert view.outcomes[-1][2] and "first compression" in view.outcomes[-1][2]
    doc.set_result(codec.compress(doc.compression_input()))
    view.export_requested.emit("stats", str(tmp_path / "s.json"), None)
    assert view.outcomes[-1] == ("stats", str(tmp_path / "s.json"), "")
    assert json.loads((tmp_path / "s.json").read_text())["num_bones"] == 3
    view.export_requested.emit("screenshot", str(tmp_path / "x.png"), b"not a png")
    assert "not a PNG" in view.outcomes[-1][2] and not (tmp_path / "x.png").exists()
    view.export_requested.emit("skin_csv", str(tmp_path / "skin.csv"), None)
    assert "no skinned mesh" in view.outcomes[-1][2]
    view.export_requested.emit("movie", str(tmp_path / "m.mp4"), None)
    assert "unknown export" in view.outcomes[-1][2]
    # the check every output passes (issue 37): never the clip, a sidecar or a FIFO
    (tmp_path / "walk.bvh").write_text("HIERARCHY")
    os.mkfifo(tmp_path / "pipe.csv")
    for name, words in (("walk.bvh", "is the input file"),
                        ("walk.bvh.shellscope.json", "refusing to overwrite"),
                        ("pipe.csv", "not a regular file")):  # fmt: skip
        view.export_requested.emit("csv", str(tmp_path / name), None)
        assert words in view.outcomes[-1][2], view.outcomes[-1]
    assert (tmp_path / "walk.bvh").read_text() == "HIERARCHY"


def test_a_drag_keeps_showing_results_when_each_run_is_slower_than_the_last(qtbot) -> None:
    """A run a little slower than the last one is not cancelled as stale at once (twice the
    last run's time), and a cancelled run gives the next one longer: a drag over a machine
    that grows busier still shows results as it goes, then the newest settings."""
    doc = Document()
    runs: list[float] = []

    def compress(clip, settings, progress, cancel):
        runs.append(clip.skeleton.precision[0])
        end = time.monotonic() + 0.04 + 0.015 * len(runs)  # each run slower than the last
        while time.monotonic() < end:
            if cancel():
                raise codec.Cancelled("stale")
            time.sleep(0.002)
        return codec.compress(clip, settings)

    ctl = Controller(doc, compress=compress, debounce_ms=10_000)
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        ctl.open_clip(small_clip())
    shown: list[float] = []
    ctl.result_ready.connect(lambda r: shown.append(r.clip.skeleton.precision[0]))
    # a drag, a tick every 20 ms, until it has shown 3 results: 1.2 s (60 ticks) on a quiet
    # machine; ticks, not seconds, bound it (a busy one runs fewer per second). Were each run
    # a little slower than the last cancelled as stale, none would show however long it went
    ticks = 0
    while len(shown) < 3 and ticks < 600:
        doc.update_settings(precision=round(0.02 + 0.0001 * ticks, 6))
        qtbot.wait(20)
        ticks += 1
    during, last = len(shown), round(0.02 + 0.0001 * (ticks - 1), 6)
    qtbot.waitUntil(lambda: doc.result.clip.skeleton.precision[0] == last, timeout=60_000)
    assert during >= 3, (during, ticks, runs)
    assert shown == sorted(shown)  # results of ever newer settings, none stale


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")
def test_compression_threads_run_below_the_ui_threads_priority(qtbot) -> None:
    """The worker (and the codec's segment threads it starts) yield the CPU to the UI thread:
    its niceness is WORKER_NICE, the UI thread's is left as it was."""
    doc = Document()
    ctl = Controller(doc)
    ui_nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen = []

    def compress(clip, settings, progress, cancel):
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        started = []
        t = threading.Thread(
            target=lambda: started.append(
                os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
            )
        )
        t.start()
        t.join()
        seen.extend(started)
        return codec.compress(clip, settings, progress=progress, cancel=cancel)

    ctl._compress = compress
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        ctl.open_clip(small_clip())
    want = max(ui_nice, WORKER_NICE)
    assert seen == [want, want]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == ui_nice


def test_runs_share_one_worker_thread_in_the_order_requested(qtbot) -> None:
    """Edits queue on one compression thread (no thread started per edit)."""
    doc = Document()
    ctl = Controller(doc)
    ran = []

    def compress(clip, settings, progress, cancel):
        ran.append((threading.current_thread(), float(clip.skeleton.precision[0])))
        return codec.compress(clip, settings, progress=progress, cancel=cancel)

    ctl._compress = compress
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        ctl.open_clip(small_clip())
    for p in (0.02, 0.03):
        with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
            ctl.edit_settings({"precision": p})
    assert len(ran) == 3 and len({t for t, _ in ran}) == 1
    assert ran[0][0] is not threading.main_thread()
    assert [p for _, p in ran[1:]] == [0.02, 0.03]


def test_the_worker_ends_when_idle_and_a_new_job_starts_it_again(monkeypatch) -> None:
    monkeypatch.setattr(controller_module, "WORKER_IDLE_S", 0.05)
    worker = controller_module._Worker()
    seen: list[tuple[threading.Thread, int]] = []
    done = threading.Event()

    def job(i: int) -> None:
        seen.append((threading.current_thread(), i))
        if i == 2:
            done.set()

    for i in range(3):
        worker.submit(lambda i=i: job(i))
    assert done.wait(5)
    first = seen[0][0]
    assert [i for _, i in seen] == [0, 1, 2] and all(t is first for t, _ in seen)
    first.join(5)
    assert not first.is_alive()  # idle: it ended
    again = threading.Event()
    worker.submit(again.set)
    assert again.wait(5)


def test_a_failing_job_does_not_stop_the_ones_after_it(capsys) -> None:
    worker = controller_module._Worker()
    done = threading.Event()
    worker.submit(lambda: 1 / 0)
    worker.submit(done.set)
    assert done.wait(5)
    assert "ZeroDivisionError" in capsys.readouterr().err
    worker.stop().join(5)  # type: ignore[union-attr]


def test_shutdown_ends_the_idle_compression_thread_at_once(qtbot) -> None:
    """Nothing a controller started runs on once it is shut down: its compression thread,
    idle after the run, ends without the WORKER_IDLE_S wait."""
    ctl = Controller(
        Document(), compress=lambda clip, settings, **kw: codec.compress(clip, settings)
    )
    with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
        ctl.open_clip(small_clip())
    ctl.shutdown()
    left = ctl.join_threads(2.0)  # well within WORKER_IDLE_S
    assert left == [] and controller_module.WORKER_IDLE_S > 2.0


def test_shutdown_ends_a_warm_up_waiting_for_the_first_result(qtbot, monkeypatch) -> None:
    """A warm-up waiting for the first result (to warm the other codecs) ends when the
    controller is shut down, without warming them: no one will compress."""
    from codec import warm_up

    warmed: list[str] = []
    monkeypatch.setattr(
        warm_up, "warm_up", lambda compiling, codec: warmed.append(codec) or warm_up.WarmUp(0.0, 0)
    )
    ctl = Controller(Document())
    qtbot.waitUntil(lambda: warmed == ["acl-style"], timeout=30_000)  # now it waits
    ctl.shutdown()
    assert ctl.join_threads(2.0) == []  # well within WARM_REST_AFTER_S
    assert warmed == ["acl-style"] and controller_module.WARM_REST_AFTER_S > 2.0


def test_the_other_codecs_warm_up_after_the_first_result_is_drawn(qtbot, monkeypatch) -> None:
    """The other codecs' warm-up waits a grace after the first result (whose frames are
    drawn meanwhile), and a shutdown during that grace ends it without warming them."""
    from codec import warm_up

    warmed: list[str] = []
    monkeypatch.setattr(
        warm_up, "warm_up", lambda compiling, codec: warmed.append(codec) or warm_up.WarmUp(0.0, 0)
    )
    monkeypatch.setattr(controller_module, "WARM_REST_GRACE_S", 1.5)
    ctl = Controller(Document())
    qtbot.waitUntil(lambda: warmed == ["acl-style"], timeout=30_000)
    ctl.first_result.set()
    qtbot.wait(500)
    assert warmed == ["acl-style"]  # still in its grace
    qtbot.waitUntil(lambda: warmed == ["acl-style", "auto"], timeout=30_000)
    ctl.shutdown()

    warmed.clear()
    ctl = Controller(Document())
    qtbot.waitUntil(lambda: warmed == ["acl-style"], timeout=30_000)
    ctl.first_result.set()
    ctl.shutdown()
    assert ctl.join_threads(1.0) == [] and warmed == ["acl-style"]
