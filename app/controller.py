"""The app's side effects: opening and compressing clips, saving the tuning, writing exports.

Views only draw the document and emit the user's intents as signals (`settings_edited`,
`overrides_edited`, `export_requested`); `attach` routes them here. The controller changes the
document, recompresses, and keeps the clip's sidecar in step with the tuning. Edits are
throttled, not debounced (`throttle`): the first edit runs at once, and during a burst (a
slider drag) the newest settings start again as soon as the run in flight is done, or, when
it takes more than twice as long as the last compression did, it is cancelled as stale, so
results keep coming while the user drags (a run cancelled so gives the next one longer). The
sidecar waits for the edits to settle (`debounce`); opening another clip and closing write a
pending save at once.

Compression runs where `app.compress_process.mode` says: on one daemon worker thread
(`_Worker`, "thread"), or in a persistent child process (app.compress_process, "process": the
codec no longer shares the interpreter lock with the UI thread). Either way runs go in the
order requested; each has its own cancel flag that the codec polls through its `cancel`
callback; a newer request raises the flag of the older one, and results of stale runs are
dropped by generation number, so the document only ever receives the result of the latest
settings. Daemon threads cannot hold the process open; the child ends with the window.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from PySide6 import QtCore

import codec
from app import compress_process
from app.model import exports
from app.model.document import Document, Status
from app.model.error_scale import format_seconds
from app.model.tuning_history import Tuning, TuningHistory
from app.qt import gui_thread_gc
from app.qt.export_folder import remember_export
from codec.codecs.registry import AUTO as AUTO_CODEC
from codec.codecs.registry import DEFAULT as DEFAULT_CODEC
from codec.errors import ShellscopeError
from codec.formats import READER_MODULES
from codec.formats.output_paths import output_problem
from codec.model.clip import Clip
from codec.result import Result
from codec.run_settings import RunSettings
from codec.settings import CompressionSettings
from codec.sidecar import save_sidecar, sidecar_path
from codec.tuning import GlobalSettings, JointOverride, exact_pattern

CompressFn = Callable[..., Result]
LoadFn = Callable[..., Clip]

DEBOUNCE_MS = 200  # edits settle this long before the tuning is saved
# a burst of edits starts a compression at most once per this interval: STALE_AFTER times as
# long as the last compression took, in bounds. At 1x a run a little slower than the last
# (most of them, on a busy machine) was cancelled and the next one too: a 20-tick slider drag
# showed 1 result
THROTTLE_MS = (30, 150, 1000)  # (least, before the first run is timed, most)
STALE_AFTER = 2.0
# the niceness of compression threads (and of the codec's segment threads they start, which
# inherit it): on two cores the worker's threads took the CPU from the UI thread mid-frame
# (bench/ui_blocks.py: blocks with the UI thread on the CPU a third of the time). At 3 the
# longest UI block per edit fell from 26-57 to 19-36 ms; at 10 the worker starved while the
# UI was busy (a 20-tick slider drag showed 0-3 results instead of 12-18)
WORKER_NICE = 3
WORKER_IDLE_S = 10.0  # the compression thread ends after this long without a run
WARM_REST_AFTER_S = compress_process.WARM_REST_AFTER_S
# and then this long, so the first result's frames are drawn before it takes the GIL in turns
# with the UI thread (it set the first result at delivery, before the views drew it)
WARM_REST_GRACE_S = 2.0


def below_ui() -> None:
    """Lower the calling thread's CPU priority to WORKER_NICE (Linux: niceness is per thread
    and inherited by the threads it starts; elsewhere it is per process, so nothing is done)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        if os.getpriority(os.PRIO_PROCESS, tid) < WORKER_NICE:
            os.setpriority(os.PRIO_PROCESS, tid, WORKER_NICE)
    except OSError:  # not allowed here: the worker runs at the UI's priority
        pass


class _CompressorCache:
    """The open clip's codec.compression.Compression, made by the first run that needs it
    (in the worker, off the UI thread). A plain object: workers reach it without holding the
    Controller, whose QTimers must die on the UI thread."""

    def __init__(self, fixed: Any = None) -> None:
        self.compressor: Any = None
        self.fixed = fixed  # ACL's output file, measured as acl-2.1 (codec.compression)

    def compress(
        self, source: Clip, clip: Clip, settings: CompressionSettings, **kwargs: Any
    ) -> Result:
        """codec's compression of `clip` (`source` with the resolved per-joint values):
        what does not depend on the settings is computed once per source, and (acl-style)
        segments whose inputs did not change are reused."""
        from codec.compression import Compression

        c = self.compressor
        if c is None or c.clip is not source:
            c = self.compressor = Compression(source, fixed=self.fixed)
        return c.run(settings, skeleton=clip.skeleton, **kwargs)


class _Run:
    def __init__(self, generation: int, made_with: RunSettings) -> None:
        self.generation = generation
        self.made_with = made_with  # the complete settings it compresses with
        self.cancel = threading.Event()
        self.done = threading.Event()  # set when its job has returned (run or skipped)
        self.started = time.monotonic()


class _Worker:
    """One compression thread that runs jobs in the order given and stops after WORKER_IDLE_S
    without work. A thread per run made the UI thread wait in `Thread.start` for the new
    thread to get the CPU and the GIL from the run in flight: 1-5 ms per edit, tens of ms
    over a slider drag, in the UI's longest blocks (bench/ui_blocks.py). Queuing a job here
    never waits; runs in order also means a run starts only once the stale one before it has
    stopped (runs share the clip's Compressor, whose caches are not for two threads at once).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._jobs: deque[Callable[[], None]] = deque()
        self._thread: threading.Thread | None = None
        self._stopping = False  # end once the jobs queued are done, without the idle wait

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            self._jobs.append(job)
            self._stopping = False
            start = self._thread is None
            if start:
                self._thread = threading.Thread(target=self._loop, name="compress", daemon=True)
            else:
                self._wake.notify()
            thread = self._thread
        if start:
            # cycles go to the GUI thread while it runs: a collection here that disconnects
            # a Qt slot deadlocks with the GUI thread (app.qt.gui_thread_gc)
            gui_thread_gc.start(thread)

    def _loop(self) -> None:
        below_ui()
        while True:
            with self._lock:
                if not self._jobs and not self._stopping:
                    self._wake.wait(WORKER_IDLE_S)
                if not self._jobs:  # idle: the next job starts a new thread
                    self._thread = None
                    return
                job = self._jobs.popleft()
            try:
                job()
            except Exception:  # a job's own failure; the jobs after it still run
                traceback.print_exc()

    def stop(self) -> threading.Thread | None:
        """End the thread once the jobs queued are done, without the idle wait; returns
        it (to join), or None when none runs."""
        with self._lock:
            self._stopping = True
            self._wake.notify()
            return self._thread


def import_readers() -> None:
    """Import every reader on this (the UI) thread before the warm-up thread imports numba:
    two threads importing at once once deadlocked the window (the UI thread importing pxr
    while the warm-up imported numba). usd-core and ufbx themselves are only ever imported
    by the reader's child process (codec.formats.reader_process), never here."""
    import importlib

    for name in READER_MODULES:
        importlib.import_module(name)


class Controller(QtCore.QObject):
    """Feeds the document: `load` reads, settings changes recompress (throttled), the
    views' intents edit the tuning (saved beside the clip) and write exports.

    `compress_in`: "thread" or "process" (app.compress_process.mode: None reads
    $SHELLSCOPE_COMPRESS_IN); a `compress` function given always runs on the thread.

    Signals: `result_ready(result)` after the document got a new result, `failed(message)`
    when a run raised, `progress(fraction, message)`, `busy_changed(running)`,
    `exported(kind, path, error)` after an export (error "" when it was written), preceded
    for a lossy clip by `export_measured(kind, text)`: the error measured in the file.
    """

    result_ready = QtCore.Signal(object)
    failed = QtCore.Signal(str)
    progress = QtCore.Signal(float, str)
    busy_changed = QtCore.Signal(bool)
    exported = QtCore.Signal(str, str, str)
    export_measured = QtCore.Signal(str, str)
    history_changed = QtCore.Signal()  # undo / redo became (un)available or changed labels
    # internal: worker threads -> UI thread
    _finished = QtCore.Signal(int, object, str)
    _progressed = QtCore.Signal(int, float, str)
    _warming = QtCore.Signal(str)  # the kernels compile (what to say), or "" once they have
    _died = QtCore.Signal(str)  # the compression process ended unasked (how)

    def __init__(
        self,
        document: Document,
        compress: CompressFn | None = None,
        load: LoadFn | None = None,
        debounce_ms: int = DEBOUNCE_MS,
        parent: QtCore.QObject | None = None,
        compress_in: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.document = document
        self._compress = compress
        self._load = load
        self._generation = 0
        self._run: _Run | None = None
        self._runs: list[_Run] = []
        self.debounce = QtCore.QTimer(self)
        self.debounce.setSingleShot(True)
        self.debounce.setInterval(debounce_ms)
        self.debounce.timeout.connect(self._on_debounce)
        self.throttle = QtCore.QTimer(self)
        self.throttle.setSingleShot(True)
        self.throttle.setInterval(THROTTLE_MS[1])
        self.throttle.timeout.connect(self._on_throttle)
        self._finished.connect(self._on_finished, QtCore.Qt.ConnectionType.QueuedConnection)
        self._progressed.connect(self._on_progress, QtCore.Qt.ConnectionType.QueuedConnection)
        self.level_override: str | None = None
        document.settings_changed.connect(self.schedule)
        self._cache = _CompressorCache()
        self._worker = _Worker()
        self._pending = False  # an edit waits for the throttle (or the run in flight)
        self._unsaved = False  # a tuning edit waits for the edits to settle to be saved
        self._opening = False
        self._result_text = ""  # the status line of the result on screen ("Compressed: ...")
        self.warming = ""  # while the codec's kernels compile (first start): what to say
        self.first_result = threading.Event()  # a run has finished (the warm-up goes on)
        self._closed = threading.Event()  # shut down: a warm-up not begun yet is not begun
        self._threads: list[threading.Thread] = []  # warm-ups, the worker: `join_threads`
        # every tuning edit goes through here; the sidecar saves its current state
        self.history = TuningHistory(Tuning(document.settings, document.overrides))
        self._warming.connect(self._on_warming, QtCore.Qt.ConnectionType.QueuedConnection)
        self._died.connect(self._on_died, QtCore.Qt.ConnectionType.QueuedConnection)
        self._crashed: int | None = None  # the generation the process last died running
        self._process: compress_process.CompressProcess | None = None
        self.compress_in = compress_process.mode(compress_in) if compress is None else "thread"
        # hand the GIL back to the UI thread more often while a worker (or the process's
        # reader, unpickling an answer) computes
        sys.setswitchinterval(min(sys.getswitchinterval(), 0.002))
        if self.compress_in == compress_process.PROCESS:
            import_readers()
            self._process = compress_process.CompressProcess(_process_listener(self))
            self._process.start()  # it warms its kernels up while the window opens
            weakref.finalize(self, self._process.close, 0.5)  # a Controller never shut down
            return
        if compress is None:
            # import now, not under the worker's GIL hold; compile (or load) the codec's
            # kernels now, so the first clip does not wait
            from codec import warm_up

            import_readers()

            def warm() -> None:
                # what the first compression needs (the default codec) first; every other
                # codec once the window shows its first result, not competing with it
                below_ui()
                for codec_setting in (DEFAULT_CODEC, AUTO_CODEC):
                    if codec_setting == AUTO_CODEC:
                        self.first_result.wait(WARM_REST_AFTER_S)
                        if self._closed.wait(WARM_REST_GRACE_S):
                            return
                    report = warm_up.warm_up(
                        lambda: self._warming.emit(warm_up.COMPILING), codec_setting
                    )
                    if report.compiled:
                        self._warming.emit("")

            self._start_thread(warm, "jit-warm-up")

    def _start_thread(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        self._threads.append(thread)
        gui_thread_gc.start(thread)  # cycles collected on the GUI thread meanwhile

    # --- opening ------------------------------------------------------------------------
    def load(self, path: str | Path, **options: Any) -> Clip:
        """Read a clip (raises the reader's error); does not touch the document."""
        fn = self._load if self._load is not None else codec.load_clip
        return fn(path, **options)

    @staticmethod
    def list_animations(path: str | Path) -> list[str]:
        """Animation names of a glTF, FBX (stacks) or USD (skeletons) file; empty for the
        formats that hold one clip."""
        from codec.formats import format_of, multi_animation

        if not multi_animation(format_of(path)):
            return []
        return list(codec.list_animations(path))

    def open_clip(
        self,
        clip: Clip,
        path: str | Path | None = None,
        overrides: tuple[JointOverride, ...] = (),
        settings: GlobalSettings | None = None,
        run: RunSettings | None = None,
    ) -> None:
        """Show a clip with its tuning and compress it right away. `run`: its complete
        settings (codec.run_settings.resolve_run, as the window's File > Open resolves
        them); without it, `settings` and `overrides` over the clip's own values.

        All or nothing: when the document or a view fails on the clip, the exception goes
        to the caller and the previous clip stays open with its result (a compression of it
        still running goes on). Only once the new clip is in is the old run cancelled. A
        tuning edit of the previous clip not saved yet is saved first.
        """
        self.save_tuning()
        self._opening = True  # the document's settings signal must not start a run of its own
        try:
            self.document.set_clip(clip, path, overrides, settings, run)
        except BaseException:
            self._pending = False  # the restored tuning is not an edit: nothing to redo
            self.throttle.stop()
            raise
        finally:
            self._opening = False
        self.history.reset(Tuning(self.document.settings, self.document.overrides))
        self.history_changed.emit()
        self.cancel()
        self._drop_acl_output()  # it belonged to the clip it was measured against
        self.compress_now()

    # --- ACL's own output -----------------------------------------------------------------
    def use_acl_output(self, path: str | Path) -> None:
        """Measure ACL's compressed output FILE.acl against the open clip, as codec acl-2.1
        with those bytes: read and matched to the clip now (ClipFormatError or
        CompressedFormatError naming what does not fit; nothing changes then), compressed
        and measured in the background like any edit. Opening another clip drops it."""
        from codec.formats.acl_binary import read_output

        clip = self.document.clip
        if clip is None:
            raise ValueError("open the raw clip first: ACL's output is measured against it")
        output = read_output(path)
        output.check(clip)  # type: ignore[attr-defined]
        self._cache = _CompressorCache(fixed=output)
        self.document.acl_output = str(path)
        if self.document.codec == output.name:  # type: ignore[attr-defined]
            self.compress_now()
        else:
            self.document.set_codec(output.name)  # type: ignore[attr-defined]

    def _drop_acl_output(self) -> None:
        """Forget ACL's output (it belonged to the clip it was measured against); the clip
        opened next compresses with its own settings' codec."""
        if self.document.acl_output is None:
            return
        self.document.acl_output = None
        self._cache = _CompressorCache()

    # --- compressing --------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._run is not None

    def schedule(self) -> None:
        """Recompress after a settings edit: at once, unless a run started less than one
        compression time ago is in flight; then the newest edit waits for that run to
        finish, or for the throttle to run out (and cancels the run, stale by then)."""
        if self.document.clip is None or self._opening:
            return
        if self.running and self.throttle.isActive():
            self._pending = True
            return
        self.compress_now()

    def _on_throttle(self) -> None:
        if self._pending:
            self.compress_now()

    def settings(self) -> CompressionSettings:
        """What the codec is given for the document's tuning (codec.run_settings)."""
        return self.document.run_settings().compression_settings(self.document.clip)

    def _on_debounce(self) -> None:
        if self._unsaved:
            self.save_tuning()

    def compress_now(self) -> None:
        """Start compressing the document's clip, cancelling any run in flight."""
        self._pending = False
        # the clip with the resolved per-joint values (document.compression_input) is made
        # on the worker: validating the new clip was 0.5-2 ms of the UI thread per edit
        source, joints = self.document.clip, self.document.resolved_joints()
        if source is None or joints is None:
            return
        if self._run is not None:  # the run in flight is stale: the next one gets longer, or
            # on a machine slower than the last timing every run would be cancelled in turn
            self.throttle.setInterval(min(2 * self.throttle.interval(), THROTTLE_MS[2]))
        self._cancel_current()
        self._generation += 1
        run_settings = self.document.run_settings()
        settings = run_settings.compression_settings(source)
        run = _Run(self._generation, run_settings)
        self._run = run
        self.throttle.start()
        self.document.set_status(Status(running=True, progress=0.0, message="Compressing\u2026"))
        self.busy_changed.emit(True)
        if self._process is not None:  # the child runs it (and drops the stale one)
            self._process.run(run.generation, source, self._cache.fixed, joints, settings)
            return
        self._runs = [r for r in self._runs if not r.done.is_set()]
        # the worker runs jobs in order: this one starts when the stale one, cancelled above,
        # has stopped at its next poll
        self._runs.append(run)
        if self._compress is not None:
            fn = self._compress
        else:
            fn = partial(self._cache.compress, source)
        # the worker holds the Controller weakly: were its last reference dropped on the
        # worker thread, its QTimers would be destroyed there (Qt forbids it; it can crash)
        owner = weakref.ref(self)

        def emit(signal: str, *args: object) -> None:
            ctl = owner()
            if ctl is not None:
                getattr(ctl, signal).emit(*args)

        def work() -> None:
            try:
                compress()
            finally:
                run.done.set()

        def compress() -> None:
            progress = compress_process.ProgressGate(partial(emit, "_progressed", run.generation))
            if run.cancel.is_set():  # superseded while it waited
                emit("_finished", run.generation, None, "")
                return
            try:
                clip = source.with_skeleton_settings(joints.precision, joints.shell_distance)
                result = fn(clip, settings, progress=progress, cancel=run.cancel.is_set)
            except codec.Cancelled:
                emit("_finished", run.generation, None, "")
            except Exception as exc:  # any failure is shown, the app lives on
                msg = f"{type(exc).__name__}: {exc}"
                traceback.print_exc()
                emit("_finished", run.generation, exc, msg)
            else:
                emit("_finished", run.generation, result, "")

        self._worker.submit(work)

    @property
    def _compressor(self) -> Any:
        """The open clip's Compressor (None before the first run)."""
        return self._cache.compressor

    def _cancel_current(self) -> None:
        if self._run is not None:
            self._run.cancel.set()
            if self._process is not None:
                self._process.cancel(self._run.generation)
            self._run = None

    def cancel(self) -> None:
        """Stop the run in flight (its result, if any, is dropped)."""
        self._pending = False
        self.throttle.stop()
        if self._run is not None:
            self._cancel_current()
            self.document.set_status(Status(message="Compression cancelled"))
            self.busy_changed.emit(False)

    def _on_progress(self, generation: int, fraction: float, message: str) -> None:
        if self._run is None or generation != self._run.generation:
            return
        text = message or "Compressing\u2026"
        if self.warming:
            text += f" ({self.warming})"
        self.document.set_status(Status(running=True, progress=fraction, message=text))
        self.progress.emit(fraction, message)

    def _on_warming(self, text: str) -> None:
        """The status line while the codec's kernels compile (a first start without their
        cache: the first compression waits for them), and a word once they are ready."""
        said, self.warming = self.warming, text
        status = self.document.status
        if status.error:
            return
        if text:
            message = f"{status.message} ({text})" if status.running else text.capitalize()
        elif said and said in status.message.lower():
            message = (
                status.message.replace(f" ({said})", "")
                if status.running
                else "The codec's kernels are compiled and cached for the next start"
            )
        else:
            return
        self.document.set_status(replace(status, message=message))

    def _on_died(self, how: str) -> None:
        """The compression process ended unasked (killed, a crash in a kernel): the next run
        starts a new one. A run in flight is run again once; when the same run takes it down
        a second time, that is the run's failure (shown as any other)."""
        said = f"The compression process stopped ({how}); a new one was started"
        run = self._run
        if run is None:
            self.document.set_status(Status(message=said))
            return
        if self._crashed != run.generation:
            self._run = None
            self.compress_now()  # a new generation on a new process
            self._crashed = self._generation
            self.document.set_status(Status(running=True, message=f"{said}; compressing again"))
            return
        self._on_finished(
            run.generation,
            RuntimeError(how),
            f"the compression process crashed twice on these settings ({how})",
        )

    def _on_finished(self, generation: int, payload: object, message: str) -> None:
        if self._run is None or generation != self._run.generation:
            return  # stale or cancelled
        run_started, made_with = self._run.started, self._run.made_with
        self._run = None
        self.first_result.set()
        self.busy_changed.emit(False)
        wall_ms = 1e3 * (time.monotonic() - run_started)
        if self._pending:  # an edit waited for this run: the newest settings go now
            self.compress_now()
        else:  # nothing in flight: the next edit starts at once (and no timer outlives it)
            self.throttle.stop()
        if isinstance(payload, Result) or (
            payload is not None and not isinstance(payload, BaseException)
        ):
            stats = getattr(payload, "stats", {}) or {}
            size = stats.get("compressed_size")
            secs = stats.get("compression_time")
            text = "Compressed"
            if size is not None:
                text += f": {size:,} bytes"
            if secs is not None:  # the codec's encode; the run also measured the error
                text += (
                    f" (encode {format_seconds(secs)}, whole run {format_seconds(wall_ms / 1e3)})"
                )
            lo, _, hi = THROTTLE_MS
            self.throttle.setInterval(int(min(max(STALE_AFTER * wall_ms, lo), hi)))
            self._result_text = text
            self.document.set_result(payload, made_with)  # type: ignore[arg-type]
            if self._run is None:
                self.document.set_status(Status(progress=1.0, message=text))
            else:  # shown while the newest edit compresses
                self.document.set_status(
                    Status(running=True, message=f"{text}; compressing the newest edit\u2026")
                )
            self.result_ready.emit(payload)
        elif isinstance(payload, BaseException):
            self.document.set_status(Status(message="Compression failed", error=message))
            self.failed.emit(message)
        else:
            self.document.set_status(Status(message="Compression cancelled"))

    # --- A/B comparison -----------------------------------------------------------------
    def pin_a(self) -> bool:
        """Compare: pin the result on screen as A (False, with a status line, before there
        is one). Later edits recompress B as usual; A stays."""
        try:
            self.document.pin_a()
        except ValueError as e:
            self.document.set_status(Status(message=str(e)))
            return False
        self.document.set_status(Status(message="Pinned as A: edits now make B"))
        return True

    def swap_comparison(self) -> None:
        """Swap A and B. Both results exist already, so nothing recompresses. Not while B is
        compressing (or an edit waits to be): the result on screen is not yet the tuning's."""
        if self.document.comparison.a is None or self.running or self._pending:
            return
        self._opening = True  # the tuning swap is not an edit
        try:
            self.document.swap_comparison()
        finally:
            self._opening = False
        self._edited()

    def clear_comparison(self) -> None:
        """Compare > Clear: back to one result; the status line says what is on screen again
        (not "Pinned as A: edits now make B"), or keeps saying that B compresses."""
        self.document.clear_comparison()
        if not self.document.status.running:
            self.document.set_status(Status(progress=1.0, message=self._result_text))

    def set_codec(self, name: str) -> None:
        """Compress with codec `name` (ValueError for an unknown one): a tuning edit like
        any other (undoable, saved in the clip's sidecar); B recompresses."""
        from app.model.comparison import check_codec

        if check_codec(name) != self.document.codec:
            self.edit_settings({"codec": name})

    # --- the views' intents -------------------------------------------------------------
    def attach(self, view: QtCore.QObject) -> None:
        """Route a view's intents here: whichever of the signals `settings_edited(changes)`,
        `overrides_edited(rules)`, `export_requested(kind, path, png)` and
        `gesture_started(setting)` / `gesture_ended()` (one undo step in between) it has;
        export outcomes go back to its `show_export(kind, path, error)`."""
        for name, slot in (
            ("settings_edited", self.edit_settings),
            ("overrides_edited", self.edit_overrides),
            ("export_requested", self.export),
            ("gesture_started", self.history.hold),  # a slider pressed: its drag one step
            ("gesture_ended", self.history.seal),
        ):
            signal = getattr(view, name, None)
            if signal is not None:
                signal.connect(slot)
        show = getattr(view, "show_export", None)
        if show is not None:
            self.exported.connect(show)
        measured = getattr(view, "show_export_measured", None)
        if measured is not None:
            self.export_measured.connect(measured)

    def edit_settings(self, changes: dict[str, Any]) -> None:
        """The user changed global settings (precision, shell_distance, level,
        shell_from_mesh): an undo step (a drag of one knob is one step), recompress, and save
        the tuning once the edits settle."""
        doc = self.document
        settings = replace(doc.settings, **changes)
        label = _settings_label(changes)
        self._apply(Tuning(settings, doc.overrides), label, merge=",".join(sorted(changes)))

    def edit_overrides(self, rules: tuple[JointOverride, ...]) -> None:
        """The user changed the per-joint rules: an undo step, recompress when a precision or
        shell changed, and save the tuning once the edits settle."""
        rules = tuple(rules)
        clip = self.document.clip
        names = tuple(clip.skeleton.names) if clip is not None else ()
        label = _rules_label(self.document.overrides, rules, names)
        merge = _new_rule_key(self.document.overrides, rules)
        added = len(rules) > len(self.document.overrides)
        if merge is not None and added:
            self.history.hold(merge)  # its value, typed next, joins this step
        self._apply(Tuning(self.document.settings, rules), label, merge=merge)
        if merge is not None and not added:
            self.history.seal()  # the new rule has its value: the next edit is a step

    def reset_tuning(self) -> None:
        """Edit > Reset tuning: default global settings and no rules (undoable)."""
        self._apply(Tuning(GlobalSettings(), ()), "reset tuning")

    def _apply(self, tuning: Tuning, label: str, merge: str | None = None) -> None:
        if self.document.clip is None:  # nothing open: nothing to undo nor to save
            self.document.set_tuning(tuning.settings, tuning.overrides)
            return
        if self.history.push(tuning, label, merge):
            self.history_changed.emit()
        self._show(self.history.current)

    def undo(self) -> bool:
        """Edit > Undo: the tuning before the last edit comes back (and is saved)."""
        tuning = self.history.undo()
        if tuning is None:
            return False
        self._show(tuning)
        self.history_changed.emit()
        return True

    def redo(self) -> bool:
        """Edit > Redo: the last undone edit is done again (and saved)."""
        tuning = self.history.redo()
        if tuning is None:
            return False
        self._show(tuning)
        self.history_changed.emit()
        return True

    def _show(self, tuning: Tuning) -> None:
        """Put a tuning of the history into the document (recompresses as needed)."""
        doc = self.document
        if tuning == Tuning(doc.settings, doc.overrides):
            return
        self.document.set_tuning(tuning.settings, tuning.overrides)
        self._edited()

    def _edited(self) -> None:
        if self.document.path is None:  # a clip without a file has nowhere to keep tuning
            return
        self._unsaved = True
        self.debounce.start()

    def save_tuning(self) -> Path | None:
        """Write a pending tuning edit to the clip's sidecar now (whole or not at all);
        None when nothing was pending. A failure shows in the status; the document keeps
        the edit, and the next edit tries again."""
        if not self._unsaved:
            return None
        self._unsaved = False
        self.debounce.stop()
        doc = self.document
        if doc.path is None:
            return None
        tuning = self.history.current
        try:
            animation = doc.clip.name if doc.clip is not None else None
            return save_sidecar(doc.path, tuning.settings, tuning.overrides, animation)
        except OSError as e:
            problem = f"could not save {sidecar_path(doc.path)}: {e.strerror or e}"
            doc.set_status(replace(doc.status, error=problem))
            return None

    def apply_tuning_to_animations(self, names: list[str]) -> Path | None:
        """Animation > Apply this tuning to all animations: the tuning on screen saved as the
        own tuning of every animation in `names` (the file's), beside this one's, in one
        write of the sidecar; each opens with it from now on. None (with the reason in the
        status) when it could not be written."""
        doc = self.document
        if doc.path is None or doc.clip is None:
            return None
        self._unsaved = False  # this write holds the pending edit too
        self.debounce.stop()
        tuning = self.history.current
        others = tuple(n for n in names if n != doc.clip.name)
        try:
            out = save_sidecar(doc.path, tuning.settings, tuning.overrides, doc.clip.name, others)
        except OSError as e:
            problem = f"could not save {sidecar_path(doc.path)}: {e.strerror or e}"
            doc.set_status(replace(doc.status, error=problem))
            return None
        count = len(others) + 1
        doc.set_status(
            replace(
                doc.status,
                message=f"{doc.clip.name}'s tuning saved for all {count} "
                f"animations of {doc.path.name}",
                error=None,
            )
        )
        return out

    def export(self, kind: str, path: str, png: bytes | None = None) -> Path | None:
        """Write one export of the document's result: 'stats' (JSON), 'csv' (joints),
        'lossy' (the decoded clip), 'ssc' (the compressed file, carrying its settings),
        'screenshot' (`png`, grabbed by a view) or 'skin_csv' (the skin report). Emits
        `exported`; returns the path written, or None."""
        doc = self.document
        r = doc.result
        inputs = [doc.path, sidecar_path(doc.path) if doc.path is not None else None]
        writers: dict[str, Callable[[], Path]] = {
            "stats": lambda: self._export_stats(path),
            "csv": lambda: exports.export_joint_csv(path, r),
            "lossy": lambda: self._export_lossy(path),
            "ssc": lambda: exports.export_ssc(path, r, self.result_run(), doc.clip, inputs),
            "screenshot": lambda: exports.export_screenshot(path, png or b""),
            "skin_csv": lambda: exports.export_skin_report_csv(path, r),
        }
        try:
            if kind not in writers:
                raise ValueError(f"unknown export {kind!r}")
            if r is None:
                raise ValueError("nothing to export before the first compression")
            inputs = [doc.path, sidecar_path(doc.path)] if doc.path is not None else []
            problem = output_problem(path, inputs)  # the check every output passes
            if problem:
                raise ValueError(f"{path}: {problem}")
            out = writers[kind]()
        except (OSError, ValueError, RuntimeError, ShellscopeError) as e:
            self.exported.emit(kind, str(path), str(e))
            return None
        remember_export(out)  # the next save dialog starts where this file went
        self.exported.emit(kind, str(out), "")
        return out

    def _export_lossy(self, path: str) -> Path:
        """The lossy clip, measured in the file (codec.lossy_export); says the figure."""
        doc = self.document
        assert doc.result is not None
        written = exports.export_lossy(path, doc.result, source=doc.path)
        self.export_measured.emit("lossy", "; ".join(written.summary() + written.notes))
        return written.path

    def result_run(self) -> RunSettings:
        """The complete settings of the result on screen (what its exports carry)."""
        doc = self.document
        return doc.result_run if doc.result_run is not None else doc.run_settings()

    def view_facts(self) -> dict[str, Any]:
        """What the window shows the result with (the settings block's `view`)."""
        doc = self.document
        if doc.clip is None:
            return {}
        return exports.view_facts(doc.clip, doc.path, doc.display.up_axis, doc.rounding)

    def _export_stats(self, path: str) -> Path:
        """The stats JSON with the settings block that made it; while comparing, A's and
        B's under `a` and `b` with their change (what `shellscope CLIP --a .. --b ..
        --export-stats` writes)."""
        from app.model.comparison import exported_pair

        doc = self.document
        a = doc.comparison.a
        b = doc.side_result("B")
        view = self.view_facts()
        if a is None or b is None:
            assert doc.result is not None
            block = self.result_run().block(doc.clip, view)
            return exports.export_stats(path, doc.result, block)
        a_run = replace(doc.run_base, tuning=replace(a.settings, codec=a.codec), rules=a.overrides)
        sides = []
        for result, run, rounding in (
            (a.result, a_run, doc.side_rounding("A")),
            (b, self.result_run(), doc.side_rounding("B")),
        ):
            d = exports.stats_dict(result, run.block(doc.clip, {**view, "rounding": rounding}))
            d.setdefault("codec", run.tuning.codec)
            sides.append(d)
        return exports.write_json(path, exported_pair(sides[0], sides[1]))

    def shutdown(self, timeout: float = 1.5) -> None:
        """Save a pending tuning edit, cancel everything and give the workers a moment to
        notice (they are daemons)."""
        self.save_tuning()
        self._pending = False
        self.throttle.stop()
        self._cancel_current()
        for r in self._runs:
            r.cancel.set()
        self._closed.set()
        self.first_result.set()  # a warm-up waiting for it wakes, and ends (_closed)
        deadline = time.monotonic() + timeout
        for r in self._runs:
            r.done.wait(max(0.0, deadline - time.monotonic()))
        self._runs.clear()
        worker = self._worker.stop()  # idle now: it ends at once
        if worker is not None:
            self._threads.append(worker)
        if self._process is not None:  # the child ends with the window
            self._process.close(max(0.1, deadline - time.monotonic()))

    def join_threads(self, timeout: float) -> list[threading.Thread]:
        """After `shutdown`: wait up to `timeout` s for the threads this controller started
        (the compression worker, the kernels' warm-up) to end; returns those still running.
        The window does not wait (they are daemons); a test does, so that nothing it started
        runs on under the tests after it."""
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return [t for t in self._threads if t.is_alive()]

    @property
    def process_id(self) -> int | None:
        """The compression process's id (None when compressing on a thread, or before it
        started)."""
        return None if self._process is None else self._process.pid


def _process_listener(ctl: Controller) -> compress_process.Listener:
    """The compression process's answers (on its reader thread) as the Controller's signals,
    the result's decoder read from its bytes there, off the UI thread. Holds the Controller
    weakly, as the worker thread does."""
    owner = weakref.ref(ctl)
    warmed = threading.Event()

    def warm_drawing() -> None:
        # the kernels this process draws with (decoding, posing, the skin), from the cache
        # the child filled: never compiled twice at once
        from codec import warm_up

        below_ui()
        warm_up.warm_up(None, DEFAULT_CODEC)

    def listen(message: tuple) -> None:
        ctl = owner()
        if ctl is None:
            return
        try:
            tell(ctl, message)
        except RuntimeError:  # the Controller's Qt side is gone (the window closed)
            pass

    def tell(ctl: Controller, message: tuple) -> None:
        kind = message[0]
        if kind == "progress":
            ctl._progressed.emit(*message[1:])
        elif kind == "done":
            try:
                result = compress_process.rebuilt(message[2])
            except Exception as exc:  # an answer that does not read back: the run's failure
                ctl._finished.emit(message[1], exc, f"{type(exc).__name__}: {exc}")
            else:
                ctl._finished.emit(message[1], result, "")
        elif kind == "cancelled":
            ctl._finished.emit(message[1], None, "")
        elif kind == "failed":
            sys.stderr.write(message[3])
            ctl._finished.emit(message[1], RuntimeError(message[2]), message[2])
        elif kind == "warming":
            ctl._warming.emit(message[1])
        elif kind == "warmed" and message[1] == DEFAULT_CODEC and not warmed.is_set():
            warmed.set()
            ctl._start_thread(warm_drawing, "jit-warm-up")
        elif kind == "died":
            ctl._died.emit(message[1])

    return listen


def _settings_label(changes: dict[str, Any]) -> str:
    """ "precision", "shell distance", ... for Edit > Undo <label>."""
    names = {
        "shell_distance": "shell distance",
        "shell_from_mesh": "shells from mesh",
        "skin_strict": "skin-strict",
    }
    return ", ".join(names.get(k, k) for k in changes) or "settings"


def _rules_label(
    before: tuple[JointOverride, ...],
    after: tuple[JointOverride, ...],
    names: tuple[str, ...] = (),
) -> str:
    """What a rules edit did, in the words of the Joints panel: "add rule *Hand*", "remove
    rule root", "edit rule *IK*", or for a joint's own values "edit joint LeftHand" and
    "reset joint LeftHand"."""
    gone = [r for r in before if r not in after]
    new = [r for r in after if r not in before]
    changed = (new or gone or [None])[0]
    own = {exact_pattern(n).lower(): n for n in names}
    joint = own.get(changed.pattern.lower()) if changed is not None else None
    if joint is not None:
        mine = [r for r in after if r.pattern.lower() == changed.pattern.lower()]
        return f"{'edit' if mine else 'reset'} joint {joint}"
    pattern = f" {changed.pattern}" if changed is not None else ""
    if len(after) > len(before):
        return f"add rule{pattern}"
    if len(after) < len(before):
        return f"remove rule{pattern}"
    return f"edit rule{pattern}" if new else "reorder rules"


def _new_rule_key(
    before: tuple[JointOverride, ...], after: tuple[JointOverride, ...]
) -> str | None:
    """The undo key joining "add a rule" and "set its value" into one step: the same key for
    a rule without values appended last, and for those values then set on it (the rest of
    the rules unchanged); None for any other edit."""
    empty = ("precision", "shell_distance", "rounding")
    if len(after) == len(before) + 1 and after[:-1] == before:
        new = after[-1]
        if all(getattr(new, f) is None for f in empty):
            return f"new rule {len(before)}"
    if len(after) == len(before) and before and after[:-1] == before[:-1]:
        old, new = before[-1], after[-1]
        if old.pattern == new.pattern and all(getattr(old, f) is None for f in empty):
            return f"new rule {len(before) - 1}"
    return None
