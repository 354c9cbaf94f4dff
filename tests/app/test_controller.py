"""Controller: background runs, stale cancellation, debouncing, failures keep the clip."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import codec
from app.controller import Controller
from app.document import Document
from codec.clip import Clip, Skeleton


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
    qtbot.waitUntil(lambda: len(started) == 1)
    doc.update_settings(precision=0.05)
    qtbot.waitUntil(lambda: len(started) == 2, timeout=3000)
    qtbot.waitUntil(lambda: cancelled == [0.01], timeout=3000)
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        gate.set()
    assert doc.result.clip.skeleton.precision[0] == 0.05


def test_a_burst_of_edits_runs_at_its_first_edit_and_once_at_its_end(qtbot) -> None:
    doc = Document()
    runs = []

    def compress(clip, settings, progress, cancel):
        runs.append(clip.skeleton.precision[0])
        time.sleep(0.1)  # a compression long enough for the burst to arrive while it runs
        return codec.compress(clip, settings, progress=progress, cancel=cancel)

    ctl = Controller(doc, compress=compress, debounce_ms=150)
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        ctl.open_clip(small_clip())
    for p in (0.02, 0.03, 0.04, 0.05):
        doc.update_settings(precision=p)
        qtbot.wait(20)
    assert runs == [0.01, 0.02]  # the first edit at once; the rest wait for the burst to end
    qtbot.waitUntil(lambda: len(runs) == 3, timeout=30_000)
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        pass
    assert runs == [0.01, 0.02, 0.05]
    assert doc.result.clip.skeleton.precision[0] == 0.05


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
    doc = Document()
    saw_cancel = threading.Event()

    def compress(clip, settings, progress, cancel):
        while not cancel():
            time.sleep(0.002)
        saw_cancel.set()
        raise codec.Cancelled("stop")

    ctl = Controller(doc, compress=compress)
    ctl.open_clip(small_clip())
    assert ctl.running and doc.status.running
    ctl.cancel()
    assert saw_cancel.wait(2.0)
    qtbot.wait(50)
    assert not ctl.running and doc.result is None and "cancelled" in doc.status.message


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
def test_invalid_settings_never_reach_the_codec(bad) -> None:
    doc = Document()
    with pytest.raises(ValueError):
        doc.update_settings(precision=bad)


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
    gate.set()
    with qtbot.waitSignal(ctl.result_ready, timeout=30_000):
        pass
    assert doc.result is not None and doc.result.clip.num_joints == 3


def test_the_window_warms_the_codec_kernels_up_in_the_background(qtbot, monkeypatch) -> None:
    from codec import warm_up

    calls = []
    monkeypatch.setattr(warm_up, "warm_up", lambda: calls.append(threading.current_thread()))
    Controller(Document())
    qtbot.waitUntil(lambda: len(calls) == 1, timeout=5000)
    assert calls[0] is not threading.main_thread()
    Controller(Document(), compress=lambda *a, **k: None)  # a test's own codec: no warm-up
    qtbot.wait(50)
    assert len(calls) == 1
