"""A label whose text changes repaint it and re-lay out nothing around it.

A QLabel whose text changes asks its parent's layout to run again, and a layout that ran asks
its own parent's, up to the window: a new status line re-laid out the status bar, the window
and every dock in it (1-3 ms an edit, twice an edit). Qt stops at a widget without a layout
(the request is posted to it and dropped) and at a widget of fixed size; `LabelFence` is the
first kind, `fixed_group` the second.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QWidget

from app.qt.handler_guard import survives, survives_event


class LabelFence(QWidget):
    """Holds `label`, filling it, in a widget without a layout: as wide as its own layout
    makes it, and as high as the label's text needs at that width (one line, or its wrapped
    lines for a word-wrapping label). A new text re-lays out the panel only when it needs
    another number of lines; a text wider than a one-line fence is cut at its edge instead
    of widening the window."""

    def __init__(self, label: QLabel, min_lines: int = 1, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = label
        self.min_lines = min_lines  # lines kept even for a shorter text
        label.setParent(self)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.fit()

    def fit(self) -> None:
        """Take the height the label's text needs at the fence's width, if it changed."""
        label = self.label
        metrics = label.fontMetrics()
        line = metrics.height() + (self.min_lines - 1) * metrics.lineSpacing()
        if label.wordWrap() and self.width() > 0:
            needed = label.heightForWidth(self.width())
        else:
            needed = label.sizeHint().height()
        needed = max(needed, line)
        if self.minimumHeight() != needed or self.maximumHeight() != needed:
            self.setFixedHeight(needed)

    @survives_event
    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:  # the label's text (or font) changed
            self.fit()
        return super().event(event)

    @survives
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.label.setGeometry(self.rect())
        self.fit()  # wrapped lines at the new width


def fixed_group(*widgets: QWidget) -> QWidget:
    """`widgets` side by side in a widget of fixed size (their room kept while hidden):
    showing or hiding one of them re-lays out this group only."""
    group = QWidget()
    row = QHBoxLayout(group)
    row.setContentsMargins(0, 0, 0, 0)
    for w in widgets:
        policy = w.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        w.setSizePolicy(policy)
        row.addWidget(w)
    group.setFixedSize(group.sizeHint())
    return group
