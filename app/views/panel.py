"""What every docked panel is: a widget that follows the document and draws it, lazily.

Each panel used to repeat the same wiring, learned by copying: keep the document, a
`SyncGuard` for its own echoes, a `WhenShown` for the work a hidden tab should not do, a list
of `document.<signal>.connect(...)` lines, a guarded `showEvent` that runs deferred work, and
a first drawing at the end of `__init__`. `Panel` does that once, in that order; a panel
declares the document signals it follows (`follows`), builds its widgets (`build`) and says
how to draw itself whole (`refresh`).

Every connection is to a method of the panel itself, so Qt drops them when the panel is
deleted (a `WhenShown.request` connected directly outlived its widget).
"""

from __future__ import annotations

from typing import ClassVar

from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QWidget

from app.model.document import Document
from app.qt.handler_guard import survives
from app.qt.sync_guard import SyncGuard
from app.qt.when_shown import WhenShown

LATER = "refresh_when_shown"  # the method that draws the panel whole once it is on screen


class Panel(QWidget):
    """A docked view of `document`, built as `cls(document)` (main_window.PANELS).

    `follows`: (document signal, method name) pairs connected in this order after `build()`;
    name `LATER` to have the signal redraw the panel whole, now if it is on screen, else once
    when it is next shown. `syncing` is raised while the panel copies the model into its
    widgets (handlers of its own widgets return while it is up)."""

    follows: ClassVar[tuple[tuple[str, str], ...]] = ()

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.syncing = SyncGuard()
        self.when_shown = WhenShown(self, self.refresh)  # `runs`: the whole drawings done
        self.build()
        for signal, method in self.follows:
            getattr(document, signal).connect(getattr(self, method))
        self.refresh_when_shown()  # the first drawing

    def build(self) -> None:
        """Make the panel's widgets and lay them out (the document is `self.document`)."""
        raise NotImplementedError

    def refresh(self) -> None:
        """Draw the whole panel from the document."""
        raise NotImplementedError

    def refresh_when_shown(self, *_args: object) -> None:
        """`refresh` now while the panel is on screen, else once when it is shown."""
        self.when_shown.request()

    @survives
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.when_shown.shown()
