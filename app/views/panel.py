"""What every docked panel is: a widget that follows the document and draws it, lazily.

Each panel used to repeat the same wiring, learned by copying: keep the document, a
`SyncGuard` for its own echoes, a `WhenShown` for the work a hidden tab should not do, a list
of `document.<signal>.connect(...)` lines, a guarded `showEvent` that runs deferred work, and
a first drawing at the end of `__init__`; two panels (Settings, Joints) had no WhenShown and
redrew themselves for every edit even when closed. `Panel` does it once: a panel declares the
document signals it follows (`follows`), builds its widgets (`build`) and says how to draw
itself whole (`refresh`).

Every followed signal waits while the panel is off screen (a closed dock, a tab behind
another): its handler runs once when the panel is shown, before the first paint, in the
order `follows` declares them; a waiting `refresh` (`LATER`) stands for all of them. The
document's signals are plain callback lists, so the panel takes its handlers off them when
it is destroyed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, ClassVar

from PySide6.QtCore import QObject
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QWidget

from app.model.document import Document, Signal
from app.qt.handler_guard import survives
from app.qt.sync_guard import SyncGuard
from app.qt.when_shown import WhenShown

LATER = "refresh"  # in `follows`: the signal redraws the panel whole


Links = tuple[tuple[Signal, Callable[..., Any]], ...]


def follow_document(owner: QObject, links: Links) -> None:
    """Connect each (document signal, slot) and take them off again when `owner` is
    destroyed: a slot left on the document would reach a deleted object."""
    for signal, slot in links:
        signal.connect(slot)
    owner.destroyed.connect(partial(_unfollow, links))


def _unfollow(links: Links, *_args: object) -> None:
    for signal, slot in links:
        signal.disconnect(slot)


class Panel(QWidget):
    """A docked view of `document`, built as `cls(document)` (main_window.PANELS).

    `follows`: (document signal, method name) pairs, connected after `build()`. `syncing` is
    raised while the panel copies the model into its widgets (handlers of its own widgets
    return while it is up). `when_shown.runs` counts the times it did work for the document,
    `when_shown.stale` says work is waiting for it to be shown."""

    follows: ClassVar[tuple[tuple[str, str], ...]] = ()

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.syncing = SyncGuard()
        self.when_shown = WhenShown(self, self._catch_up)
        self._waiting: dict[str, None] = {}  # method names, an ordered set
        self._order = {name: i for i, name in enumerate(dict.fromkeys(m for _, m in self.follows))}
        self.build()
        for _, method in self.follows:
            getattr(self, method)  # a typo fails here, not at the first signal
        links = tuple((getattr(document, s), partial(self._wait_for, m)) for s, m in self.follows)
        follow_document(self, links)
        self.refresh_when_shown()  # the first drawing

    def build(self) -> None:
        """Make the panel's widgets and lay them out (the document is `self.document`)."""
        raise NotImplementedError

    def refresh(self) -> None:
        """Draw the whole panel from the document."""
        raise NotImplementedError

    def refresh_when_shown(self) -> None:
        """`refresh` now while the panel is on screen, else once when it is shown."""
        self._wait_for(LATER)

    def _wait_for(self, method: str, *_args: object) -> None:
        self._waiting[method] = None
        self.when_shown.request()

    def _catch_up(self) -> None:
        waiting, self._waiting = self._waiting, {}
        if LATER in waiting:
            self.refresh()
            return
        for method in sorted(waiting, key=self._order.__getitem__):
            getattr(self, method)()

    @survives
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.when_shown.shown()
