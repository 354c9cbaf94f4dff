"""The command line's A/B in the window: `shellscope CLIP --a SPEC --b SPEC --screenshot P`.

Each side's keys apply over the tuning the clip opens with (its sidecar and the command line).
The clip opens with A's; when A's result is in, it is pinned, B's tuning is applied as an edit
would be (the controller recompresses in the background), and `finished`
fires once B's result is in, so a screenshot shows the two. Nothing is saved beside the clip.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6 import QtCore

from app.controller import Controller
from app.model.comparison import Variant


class PairRun(QtCore.QObject):
    """Drives one A/B: `done` once both results exist (or a run failed); `finished` then."""

    finished = QtCore.Signal()

    def __init__(self, controller: Controller, a: Variant, b: Variant) -> None:
        super().__init__(controller)
        self.controller = controller
        self.a, self.b = a, b
        self.done = False
        self._stage = "open"
        self._base = None  # the tuning the clip opened with

    def start(self) -> None:
        """Call before the clip opens."""
        c = self.controller
        c.document.clip_changed.connect(self._on_open)
        c.result_ready.connect(self._on_result)
        c.failed.connect(self._on_failed)

    def _on_open(self) -> None:
        """The clip is in, its first compression not started: A's tuning goes in now."""
        doc = self.controller.document
        doc.clip_changed.disconnect(self._on_open)
        self._base = doc.settings
        doc.codec = self.a.codec or doc.codec  # not an edit: the opening run compresses it
        doc.settings = replace(doc.settings, **self.a.tuning())
        self._stage = "A"

    def _on_failed(self, _message: str) -> None:
        self._finish()

    def _on_result(self, _result: object) -> None:
        if self._stage == "B":
            self._finish()
            return
        if self._stage != "A":
            return
        doc = self.controller.document
        self._stage = "pinning"
        self.controller.pin_a()
        doc.set_a_rounding(self.a.rounding)  # A keeps its own; the window's is B's
        if self.b.rounding:
            doc.set_rounding(self.b.rounding)
        self._stage = "B"
        before = doc.result
        codec = self.b.codec or doc.codec
        doc.set_settings(replace(self._base or doc.settings, **self.b.tuning(), codec=codec))
        if not self.controller.running and doc.result is before:  # B's tuning is A's
            self._finish()

    def _finish(self) -> None:
        if not self.done:
            self.done = True
            self._stage = "done"
            self.finished.emit()
