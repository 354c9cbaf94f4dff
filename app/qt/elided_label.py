"""A one-line label that elides what does not fit: a readout that must never wrap.

A word-wrapping readout above the 3D view or the error plot took two or three lines as the
joint names and the window's width went, and each new line moved the 3D view and the
timeline under the pointer. This label keeps one line at any width: a text too long for it
ends in an ellipsis, and the whole text is in its tooltip. `text()` is the whole text.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from app.qt.handler_guard import survives


class ElidedLabel(QLabel):
    """One line, elided on the right; the whole text is `text()` and the tooltip's first
    line (after `tip`, the label's own explanation)."""

    def __init__(self, tip: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self._tip = tip
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setToolTip(tip)

    def text(self) -> str:  # type: ignore[override]
        return self._full

    def setText(self, text: str) -> None:  # type: ignore[override]
        if text == self._full:
            return
        self._full = text
        self._elide()
        self.setToolTip(f"{text}\n{self._tip}" if self._tip and text else text or self._tip)

    def shown_text(self) -> str:
        """What is drawn (the whole text, or its start and an ellipsis)."""
        return super().text()

    def _elide(self) -> None:
        width = self.contentsRect().width()
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, width)
        if super().text() != shown:
            super().setText(shown)

    @survives
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()
