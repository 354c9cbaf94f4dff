"""Work for panels that are not on screen waits until they are.

Most docks share a tab with others (Error, Curves, Error heat map, Bit rates, Skin report), so
most of them are hidden behind the one in front; each still heard every result and edit and
redrew itself for nobody, on the UI thread, between the edit and its result on screen. A
panel hands its refresh to `WhenShown`: it runs at once while the panel is on screen (or
while its window is not shown at all: a panel built on its own, a window not shown yet), and
otherwise once, when the panel is next shown, before that first paint, so a tab brought to
the front shows the current result at once.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QDockWidget, QWidget


def off_screen(widget: QWidget) -> bool:
    """True while `widget` is out of sight in a window that is itself on screen: hidden (a
    closed dock, a table given way to another) or with nothing of it in view (a dock tabbed
    behind another is not hidden, Qt moves it outside the window)."""
    if not widget.window().isVisible():
        return False
    return not widget.isVisible() or widget.visibleRegion().isEmpty()


class WhenShown:
    """`request()` runs `refresh` now when `widget` is on screen, else marks it stale (or
    `defer()` does); a stale refresh runs when the widget is shown: on its showEvent (which
    calls `shown()`) or when its dock comes to the front (the dock's visibilityChanged; a
    tab brought forward gets no show event). `runs` counts the refreshes done, so tests can
    tell that a hidden panel did no work."""

    def __init__(self, widget: QWidget, refresh: Callable[[], None]) -> None:
        self.widget = widget
        self.refresh = refresh
        self.stale = False
        self.runs = 0
        self._dock: QDockWidget | None = None

    def request(self, *_args: object) -> None:
        if off_screen(self.widget):
            self.defer()
            return
        self._run()

    def defer(self) -> None:
        """Leave the refresh for when the widget is shown."""
        self.stale = True
        dock = self.widget.parentWidget()
        while dock is not None and not isinstance(dock, QDockWidget):
            dock = dock.parentWidget()
        if dock is not None and dock is not self._dock:  # docked (again): follow its tab
            if self._dock is not None:
                self._dock.visibilityChanged.disconnect(self._on_dock_visibility)
            self._dock = dock
            dock.visibilityChanged.connect(self._on_dock_visibility)

    def _on_dock_visibility(self, visible: bool) -> None:
        if visible:
            self.shown()

    def shown(self) -> None:
        if self.stale:
            self._run()

    def _run(self) -> None:
        self.stale = False
        self.runs += 1
        self.refresh()
