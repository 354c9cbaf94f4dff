"""Compression in a child process (app.compress_process): the same bytes and measurements as in
the UI's process, superseded runs, failures, a killed child restarted, the child ended on close.
Real child processes throughout."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest

import codec
from app import compress_process
from app.controller import Controller
from app.model.document import Document
from tests.app.test_controller import small_clip

DATA = Path(__file__).resolve().parents[1] / "data"
REAL = DATA / "acl" / "cmu_09_02.acl.sjson"
START_S = 120_000  # a child's first answer: its start, imports and kernels (a loaded machine)


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, dead but not yet waited for, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def process_controller(qtbot):
    doc = Document()
    ctl = Controller(doc, debounce_ms=10, compress_in="process")
    yield doc, ctl
    ctl.shutdown()


def _timeless(stats: object) -> object:
    """The stats without their clock readings (at any depth): the rest must match."""
    if isinstance(stats, dict):
        return {k: _timeless(v) for k, v in stats.items() if "time" not in k}
    return stats


@pytest.mark.parametrize("clip", ["real", "small"])
def test_a_run_goes_through_the_child_and_gives_the_in_process_bytes_and_measurements(
    qtbot, process_controller, clip: str
) -> None:
    doc, ctl = process_controller
    assert ctl.compress_in == "process" and ctl.process_id not in (None, os.getpid())
    source = codec.load_clip(REAL) if clip == "real" else small_clip()
    with qtbot.waitSignal(ctl.result_ready, timeout=START_S):
        ctl.open_clip(source)
    with qtbot.waitSignal(ctl.result_ready, timeout=START_S):  # a second run: settings only
        doc.update_settings(precision=0.004)
    got = doc.result
    assert got is not None and doc.result_run is not None
    assert doc.result_run.tuning.precision == 0.004
    mine = codec.compress(doc.compression_input(), ctl.settings())
    assert got.data == mine.data and got.codec_name == mine.codec_name
    np.testing.assert_array_equal(got.error, mine.error)
    np.testing.assert_array_equal(got.error_between, mine.error_between)
    np.testing.assert_array_equal(got.lossy.rotations, mine.lossy.rotations)
    assert _timeless(got.stats) == _timeless(mine.stats)
    # the decoder was read from the bytes in this process: it samples as the codec's own
    times = np.linspace(0.0, source.duration, 17)
    for a, b in zip(
        got.decoder.sample_times(times, "none"),
        mine.decoder.sample_times(times, "none"),
        strict=True,
    ):
        np.testing.assert_array_equal(a, b)
    assert "Compressed" in doc.status.message and not doc.status.running


def test_a_newer_edit_supersedes_the_run_in_flight(qtbot, process_controller) -> None:
    doc, ctl = process_controller
    with qtbot.waitSignal(ctl.result_ready, timeout=START_S):
        ctl.open_clip(codec.load_clip(REAL))
    results = []
    ctl.result_ready.connect(results.append)
    t0 = time.perf_counter()
    for p in (0.002, 0.003, 0.004, 0.005):  # each supersedes the one before, at once
        ctl.edit_settings({"precision": p})
    edits_s = time.perf_counter() - t0
    qtbot.waitUntil(lambda: not ctl.running, timeout=START_S)
    assert edits_s < 0.5  # the UI thread never waited for the child
    assert results and results[-1] is doc.result
    assert doc.result_run.tuning.precision == 0.005  # the newest settings' result, no other
    fresh = codec.compress(doc.compression_input(), ctl.settings())
    assert doc.result.data == fresh.data


def test_a_failing_run_is_shown_and_the_child_lives_on(
    qtbot, process_controller, monkeypatch, tmp_path: Path
) -> None:
    doc, ctl = process_controller
    clip = small_clip()
    with qtbot.waitSignal(ctl.result_ready, timeout=START_S):
        ctl.open_clip(clip)
    pid = ctl.process_id
    # acl-2.1 at an acl_compressor set in this process after the child started (the
    # window's Compression > ACL 2.1 compressor): the child runs with it, and fails here
    missing = tmp_path / "acl_compressor"
    monkeypatch.setenv("SHELLSCOPE_ACL_COMPRESSOR", str(missing))
    with qtbot.waitSignal(ctl.failed, timeout=START_S) as blocker:
        ctl.edit_settings({"codec": "acl-2.1"})
    assert "SettingsError" in blocker.args[0] and f"{missing}: no such file" in blocker.args[0]
    assert doc.status.error and "no such file" in doc.status.error and not ctl.running
    assert doc.clip is clip and doc.result is not None  # the previous result stays
    with qtbot.waitSignal(ctl.result_ready, timeout=START_S):
        ctl.edit_settings({"codec": "acl-style", "precision": 0.02})
    assert ctl.process_id == pid


def _process_window(qtbot, dialogs, monkeypatch):
    """The main window, compressing in a child process (as $SHELLSCOPE_COMPRESS_IN says)."""
    monkeypatch.setenv(compress_process.ENV, "process")
    from app.main_window import MainWindow

    w = MainWindow(dialogs=dialogs)
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    return w


def test_a_killed_child_is_restarted_and_the_window_lives(qtbot, dialogs, ui, monkeypatch) -> None:
    w = _process_window(qtbot, dialogs, monkeypatch)
    ctl = w.controller
    assert ctl.compress_in == "process"
    ui.open(w, ui.acl_clip)
    first = ctl.process_id
    assert first is not None and alive(first)
    # killed while idle: the window says so; the next edit starts a new child
    with qtbot.waitSignal(ctl._died, timeout=30_000):
        os.kill(first, signal.SIGKILL)
    qtbot.waitUntil(lambda: "stopped (SIGKILL)" in w.document.status.message, timeout=10_000)
    with qtbot.waitSignal(ctl.result_ready, timeout=START_S):
        ctl.edit_settings({"precision": 0.003})
    second = ctl.process_id
    assert second not in (None, first) and alive(second)
    # killed mid-run: the run goes again on a new child, its result arrives
    with qtbot.waitSignal(ctl.result_ready, timeout=START_S):
        ctl.edit_settings({"precision": 0.004})
        os.kill(second, signal.SIGKILL)
    assert ctl.process_id not in (None, first, second)
    assert w.document.result_run.tuning.precision == 0.004 and w.isVisible()
    w.close()


def test_closing_the_window_ends_the_child(qtbot, dialogs, monkeypatch) -> None:
    w = _process_window(qtbot, dialogs, monkeypatch)
    pid = w.controller.process_id
    assert pid is not None and alive(pid)
    w.close()
    assert not alive(pid)


def test_a_controller_dropped_without_shutdown_ends_its_child(qtbot) -> None:
    import gc

    ctl = Controller(Document(), compress_in="process")
    pid = ctl.process_id
    assert pid is not None and alive(pid)
    del ctl
    gc.collect()
    qtbot.waitUntil(lambda: not alive(pid), timeout=10_000)


def test_the_parent_gone_ends_the_child() -> None:
    got: list[tuple] = []
    proc = compress_process.CompressProcess(got.append)
    proc.start()
    child = proc._child
    assert child is not None
    child._out.close()  # what the parent's death does to the pipe
    assert child.proc.wait(30) == 0
    deadline = time.monotonic() + 10
    while not got and time.monotonic() < deadline:
        time.sleep(0.01)
    assert got and got[-1][0] == "died"  # unasked: reported as a death
    proc.close()


def test_the_mode_is_read_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv(compress_process.ENV, "process")
    assert compress_process.mode() == "process" and compress_process.mode("thread") == "thread"
    monkeypatch.setenv(compress_process.ENV, "fork")
    with pytest.raises(ValueError, match="SHELLSCOPE_COMPRESS_IN='fork'"):
        compress_process.mode()


def test_the_child_never_imports_qt() -> None:
    """The child is the codec alone: no Qt, no OpenGL (a lighter process, no GUI state)."""
    import subprocess
    import sys

    check = (
        "import sys; import app.compress_process, codec.compression, "
        "codec.warm_up; bad = [m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'shiboken6', 'pyqtgraph', 'OpenGL')]; print(bad); sys.exit(bool(bad))"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", check], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
