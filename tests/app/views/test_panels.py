"""Every entry of `main_window.PANELS`, whatever it is: a `Panel` whose `follows` name the
document's signals and its own methods; closed, none of its code runs and it paints nothing
whatever the document says (its handlers wait, however it is wired); shown again, it catches
up once, before its first paint; showing and hiding it prints no Qt warning; deleted, it
leaves the document's signals.

A panel added by CONTRIBUTING's "add a panel" row is covered without touching this file."""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable
from types import FrameType

from PySide6 import QtCore
from PySide6.QtWidgets import QApplication, QWidget

from app.main_window import PANELS
from app.model.document import Document, Signal
from app.qt.when_shown import off_screen
from app.views.panel import LATER, Panel
from tests.app.conftest import RESULT_TIMEOUT_MS


class _Paints(QtCore.QObject):
    """Counts the paint events of a widget and its children, and what its `when_shown` had
    run at the first of them."""

    def __init__(self, panel: Panel) -> None:
        super().__init__()
        self.panel, self.count, self.runs_at_first = panel, 0, None

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.Paint and isinstance(watched, QWidget):
            if watched is self.panel or self.panel.isAncestorOf(watched):
                if self.count == 0:
                    self.runs_at_first = self.panel.when_shown.runs
                self.count += 1
        return False


def _followed(panel: Panel) -> list[str]:
    return list(dict.fromkeys(signal for signal, _ in panel.follows))


def _own_calls(panel: Panel) -> tuple[list[str], Callable[..., None]]:
    """A profile function that lists the Python methods of `panel` and of its child widgets
    that run, and the list it fills (the Panel base's own bookkeeping left out)."""
    calls: list[str] = []
    base = inspect.getfile(Panel)

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        if event != "call" or frame.f_code.co_filename == base:
            return
        owner = frame.f_locals.get("self")
        if owner is panel or (isinstance(owner, QWidget) and panel.isAncestorOf(owner)):
            calls.append(frame.f_code.co_qualname)

    return calls, profile


def test_every_panel_waits_while_closed_and_catches_up_once_when_shown(
    qtbot, loaded, qtlog
) -> None:
    window, app = loaded, QApplication.instance()
    doc = window.document
    assert {cls for _, cls, _, _ in PANELS} <= set(window.panels)
    for _, cls, _, _ in PANELS:
        panel, dock = window.panels[cls], window.docks[cls]
        assert isinstance(panel, Panel) and panel.follows, cls
        for signal, method in panel.follows:
            assert isinstance(getattr(doc, signal), Signal), (cls, signal)
            assert method == LATER or callable(getattr(panel, method)), (cls, method)
        assert "result_changed" in _followed(panel) or "clip_changed" in _followed(panel)

        dock.close()  # what the dock's close button does
        QApplication.processEvents()
        assert off_screen(panel), cls
        paints, runs = _Paints(panel), panel.when_shown.runs
        app.installEventFilter(paints)
        try:
            calls, profile = _own_calls(panel)
            sys.setprofile(profile)
            try:
                for signal in _followed(panel):  # the document says everything changed
                    getattr(doc, signal).emit()
            finally:
                sys.setprofile(None)
            assert not calls, (cls, calls)  # none of its code ran, however it is wired
            # settings_changed recompresses: its result comes in while the panel is closed
            qtbot.waitUntil(lambda: not window.controller.running, timeout=RESULT_TIMEOUT_MS)
            QApplication.processEvents()
            assert panel.when_shown.runs == runs and panel.when_shown.stale, cls
            assert paints.count == 0, cls

            dock.show()
            dock.raise_()  # a tabbed dock comes back behind the tab in front
            qtbot.waitUntil(lambda p=paints: p.count > 0, timeout=5_000)
            assert panel.when_shown.runs == runs + 1 and not panel.when_shown.stale, cls
            assert paints.runs_at_first == runs + 1, cls  # caught up before the first paint
        finally:
            app.removeEventFilter(paints)
    warnings = [r for r in qtlog.records if r.type != QtCore.QtMsgType.QtDebugMsg]
    assert not warnings, [r.message for r in warnings]


def test_a_deleted_panel_leaves_the_documents_signals(qtbot) -> None:
    doc = Document()
    for module, cls, _, _ in PANELS:
        panel = getattr(importlib.import_module(module), cls)(doc)
        followed = _followed(panel)
        panel.deleteLater()
        QApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
        for signal in followed:  # a handler left behind would reach a deleted widget
            getattr(doc, signal).emit()
