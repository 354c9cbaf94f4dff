"""The app's side effects: opening and compressing clips, saving the tuning, writing exports.

Views only draw the document and emit the user's intents as signals (`settings_edited`,
`overrides_edited`, `export_requested`); `attach` routes them here. The controller changes the
document, recompresses, and keeps the clip's sidecar in step with the tuning: one debounce
(`debounce`) lets a burst of edits (a slider drag) settle before the newest settings run and
before the sidecar is written; opening another clip and closing write a pending save at once.

Compression runs on a daemon thread per request. Each run has its own cancel flag that the
codec polls through its `cancel` callback; a newer request raises the flag of the older
one, and results of stale runs are dropped by generation number, so the document only ever
receives the result of the latest settings. Daemon threads cannot hold the process open.
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6 import QtCore

import codec
from app import exports
from app.document import Document, GlobalSettings, Status
from app.sidecar import save_sidecar, sidecar_path
from codec.model.clip import Clip
from codec.result import CompressionResult
from codec.settings import CompressionSettings
from codec.tuning import JointOverride

CompressFn = Callable[..., CompressionResult]
LoadFn = Callable[..., Clip]

DEBOUNCE_MS = 200
PROGRESS_INTERVAL = 0.05  # s between progress signals from one run


class _Run:
    def __init__(self, generation: int) -> None:
        self.generation = generation
        self.cancel = threading.Event()
        self.thread: threading.Thread | None = None
        self.last_progress = 0.0


class Controller(QtCore.QObject):
    """Feeds the document: `load` reads, settings changes recompress (debounced), the
    views' intents edit the tuning (saved beside the clip) and write exports.

    Signals: `result_ready(result)` after the document got a new result, `failed(message)`
    when a run raised, `progress(fraction, message)`, `busy_changed(running)`,
    `exported(kind, path, error)` after an export (error "" when it was written).
    """

    result_ready = QtCore.Signal(object)
    failed = QtCore.Signal(str)
    progress = QtCore.Signal(float, str)
    busy_changed = QtCore.Signal(bool)
    exported = QtCore.Signal(str, str, str)
    # internal: worker threads -> UI thread
    _finished = QtCore.Signal(int, object, str)
    _progressed = QtCore.Signal(int, float, str)

    def __init__(
        self,
        document: Document,
        compress: CompressFn | None = None,
        load: LoadFn | None = None,
        debounce_ms: int = DEBOUNCE_MS,
        parent: QtCore.QObject | None = None,
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
        self._finished.connect(self._on_finished, QtCore.Qt.ConnectionType.QueuedConnection)
        self._progressed.connect(self._on_progress, QtCore.Qt.ConnectionType.QueuedConnection)
        self.level_override: str | None = None
        document.settings_changed.connect(self.schedule)
        self._compressor: Any = (
            None  # codec.codecs.acl_style.encoder.Compressor of the document's clip
        )
        self._pending = False  # a recompression waits for the edits to settle
        self._unsaved = False  # a tuning edit waits for the edits to settle to be saved
        self._opening = False
        # hand the GIL back to the UI thread more often while a worker computes
        sys.setswitchinterval(min(sys.getswitchinterval(), 0.002))
        if compress is None:
            # import now, not under the worker's GIL hold; compile (or load) the codec's
            # kernels now, so the first clip does not wait
            from codec.codecs.acl_style import warm_up

            threading.Thread(target=warm_up.warm_up, name="jit-warm-up", daemon=True).start()

    # --- opening ------------------------------------------------------------------------
    def load(self, path: str | Path, **options: Any) -> Clip:
        """Read a clip (raises the reader's error); does not touch the document."""
        fn = self._load if self._load is not None else codec.load_clip
        return fn(path, **options)

    @staticmethod
    def list_animations(path: str | Path) -> list[str]:
        """Animation names of a glTF, FBX (stacks) or USD (skeletons) file; empty for the
        formats that hold one clip."""
        from codec.formats import format_of

        if format_of(path) not in ("gltf", "fbx", "usd"):
            return []
        return list(codec.list_animations(path))

    def open_clip(
        self,
        clip: Clip,
        path: str | Path | None = None,
        overrides: tuple[JointOverride, ...] = (),
        settings: GlobalSettings | None = None,
    ) -> None:
        """Show a clip with its tuning and compress it right away.

        All or nothing: when the document or a view fails on the clip, the exception goes
        to the caller and the previous clip stays open with its result (a compression of it
        still running goes on). Only once the new clip is in is the old run cancelled. A
        tuning edit of the previous clip not saved yet is saved first.
        """
        self.save_tuning()
        self._opening = True  # the document's settings signal must not start a run of its own
        try:
            self.document.set_clip(clip, path, overrides, settings)
        except BaseException:
            self._pending = False  # the restored tuning is not an edit: nothing to redo
            self.debounce.stop()
            raise
        finally:
            self._opening = False
        self.cancel()
        self.compress_now()

    # --- compressing --------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._run is not None

    def schedule(self) -> None:
        """Recompress after a settings edit: at once when nothing is compressing; edits
        that arrive while a run is in flight (a slider drag) wait until they settle, then
        the newest one runs (and cancels the stale run)."""
        if self.document.clip is None or self._opening:
            return
        if not self.running and not self._pending:
            self.compress_now()
            return
        self._pending = True
        self.debounce.start()

    def settings(self) -> CompressionSettings:
        return CompressionSettings(level=self.document.settings.level)

    def _on_debounce(self) -> None:
        if self._pending:
            self.compress_now()
        if self._unsaved:
            self.save_tuning()

    def compress_now(self) -> None:
        """Start compressing the document's clip, cancelling any run in flight."""
        self._pending = False
        if not self._unsaved:
            self.debounce.stop()
        clip = self.document.compression_input()
        if clip is None:
            return
        self._cancel_current()
        self._generation += 1
        run = _Run(self._generation)
        self._run = run
        self._runs = [r for r in self._runs if r.thread is not None and r.thread.is_alive()]
        self._runs.append(run)
        settings = self.settings()
        fn = self._compress if self._compress is not None else self._codec_compress

        def work() -> None:
            def progress(fraction: float, message: str = "") -> None:
                now = time.monotonic()
                if now - run.last_progress >= PROGRESS_INTERVAL:
                    run.last_progress = now
                    self._progressed.emit(run.generation, float(fraction), str(message))

            try:
                result = fn(clip, settings, progress=progress, cancel=run.cancel.is_set)
            except codec.Cancelled:
                self._finished.emit(run.generation, None, "")
            except Exception as exc:  # any failure is shown, the app lives on
                msg = f"{type(exc).__name__}: {exc}"
                traceback.print_exc()
                self._finished.emit(run.generation, exc, msg)
            else:
                self._finished.emit(run.generation, result, "")

        run.thread = threading.Thread(target=work, name=f"compress-{run.generation}", daemon=True)
        self.document.set_status(Status(running=True, progress=0.0, message="Compressing\u2026"))
        self.busy_changed.emit(True)
        run.thread.start()

    def _codec_compress(self, clip: Clip, settings: CompressionSettings, **kwargs: Any) -> Any:
        """codec's compression through one Compressor per open clip: what does not depend on
        the settings is computed once, and segments whose inputs did not change are reused."""
        from app.comparison import DEFAULT_CODEC, compress_with
        from codec.codecs.acl_style.encoder import Compressor

        if self.document.codec != DEFAULT_CODEC:
            return compress_with(self.document.codec, clip, settings, **kwargs)
        source = self.document.clip
        c = self._compressor
        if c is None or c.clip is not source:
            c = self._compressor = Compressor(source)
        return c.run(settings, skeleton=clip.skeleton, **kwargs)

    def _cancel_current(self) -> None:
        if self._run is not None:
            self._run.cancel.set()
            self._run = None

    def cancel(self) -> None:
        """Stop the run in flight (its result, if any, is dropped)."""
        self._pending = False
        if not self._unsaved:
            self.debounce.stop()
        if self._run is not None:
            self._cancel_current()
            self.document.set_status(Status(message="Compression cancelled"))
            self.busy_changed.emit(False)

    def _on_progress(self, generation: int, fraction: float, message: str) -> None:
        if self._run is None or generation != self._run.generation:
            return
        self.document.set_status(
            Status(running=True, progress=fraction, message=message or "Compressing\u2026")
        )
        self.progress.emit(fraction, message)

    def _on_finished(self, generation: int, payload: object, message: str) -> None:
        if self._run is None or generation != self._run.generation:
            return  # stale or cancelled
        self._run = None
        self.busy_changed.emit(False)
        if isinstance(payload, CompressionResult) or (
            payload is not None and not isinstance(payload, BaseException)
        ):
            stats = getattr(payload, "stats", {}) or {}
            size = stats.get("compressed_size")
            secs = stats.get("compression_time")
            text = "Compressed"
            if size is not None:
                text += f": {size:,} bytes"
            if secs is not None:
                text += f" in {secs:.2f} s"
            self.document.set_result(payload)  # type: ignore[arg-type]
            self.document.set_status(Status(progress=1.0, message=text))
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
        self.document.clear_comparison()

    def set_codec(self, name: str) -> None:
        """Compress with codec `name` (ValueError for an unknown one); B recompresses."""
        self.document.set_codec(name)

    # --- the views' intents -------------------------------------------------------------
    def attach(self, view: QtCore.QObject) -> None:
        """Route a view's intents here: whichever of the signals `settings_edited(changes)`,
        `overrides_edited(rules)` and `export_requested(kind, path, png)` it has; export
        outcomes go back to its `show_export(kind, path, error)`."""
        for name, slot in (
            ("settings_edited", self.edit_settings),
            ("overrides_edited", self.edit_overrides),
            ("export_requested", self.export),
        ):
            signal = getattr(view, name, None)
            if signal is not None:
                signal.connect(slot)
        show = getattr(view, "show_export", None)
        if show is not None:
            self.exported.connect(show)

    def edit_settings(self, changes: dict[str, Any]) -> None:
        """The user changed global settings (precision, shell_distance, level,
        shell_from_mesh): recompress, and save the tuning once the edits settle."""
        self.document.update_settings(**changes)
        self._edited()

    def edit_overrides(self, rules: tuple[JointOverride, ...]) -> None:
        """The user changed the per-joint rules: recompress when a precision or shell
        changed, and save the tuning once the edits settle."""
        self.document.set_overrides(rules)
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
        if not self._pending:
            self.debounce.stop()
        doc = self.document
        if doc.path is None:
            return None
        try:
            return save_sidecar(doc.path, doc.settings, doc.overrides)
        except OSError as e:
            problem = f"could not save {sidecar_path(doc.path)}: {e.strerror or e}"
            doc.set_status(replace(doc.status, error=problem))
            return None

    def export(self, kind: str, path: str, png: bytes | None = None) -> Path | None:
        """Write one export of the document's result: 'stats' (JSON), 'csv' (joints),
        'lossy' (the decoded clip), 'screenshot' (`png`, grabbed by a view) or 'skin_csv'
        (the skin report). Emits `exported`; returns the path written, or None."""
        doc = self.document
        r = doc.result
        writers: dict[str, Callable[[], Path]] = {
            "stats": lambda: self._export_stats(path),
            "csv": lambda: exports.export_joint_csv(path, r),
            "lossy": lambda: exports.export_lossy(path, r, source=doc.path),
            "screenshot": lambda: exports.export_screenshot(path, png or b""),
            "skin_csv": lambda: exports.export_skin_report_csv(path, r),
        }
        try:
            if kind not in writers:
                raise ValueError(f"unknown export {kind!r}")
            if r is None:
                raise ValueError("nothing to export before the first compression")
            out = writers[kind]()
        except (OSError, ValueError, RuntimeError) as e:
            self.exported.emit(kind, str(path), str(e))
            return None
        self.exported.emit(kind, str(out), "")
        return out

    def _export_stats(self, path: str) -> Path:
        """The stats JSON; while comparing, A's and B's under `a` and `b` with their change
        (what `shellscope CLIP --a .. --b .. --export-stats` writes)."""
        from app.comparison import exported_pair

        doc = self.document
        a = doc.comparison.a
        b = doc.side_result("B")
        if a is None or b is None:
            assert doc.result is not None
            return exports.export_stats(path, doc.result, doc.overrides)
        sides = []
        for result, overrides, name in (
            (a.result, a.overrides, a.codec),
            (b, doc.overrides, doc.codec),
        ):
            d = exports.stats_dict(result, overrides)
            d.setdefault("codec", name)
            sides.append(d)
        return exports.write_json(path, exported_pair(sides[0], sides[1]))

    def shutdown(self, timeout: float = 1.5) -> None:
        """Save a pending tuning edit, cancel everything and give the workers a moment to
        notice (they are daemons)."""
        self.save_tuning()
        self._pending = False
        self.debounce.stop()
        self._cancel_current()
        for r in self._runs:
            r.cancel.set()
        deadline = time.monotonic() + timeout
        for r in self._runs:
            if r.thread is not None:
                r.thread.join(max(0.0, deadline - time.monotonic()))
        self._runs.clear()
