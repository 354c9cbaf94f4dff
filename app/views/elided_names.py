"""Joint names that do not fit their column, shortened as a rigger reads them.

A deep rig's names share long prefixes and differ at both ends: the side (`CC_Base_R_`,
`mixamorig:Left`, `lHand`) near the start, the part (`ToeBaseShareBone_End`) at the end.
Cutting the end ("CC_Base_R_ToeBa...") loses the part; Qt's middle elision can lose the
side. So a name keeps its side marker with everything before it, and its end, and the
ellipsis goes in between: "CC_Base_R_…Bone_End". The full name is the tooltip.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFontMetrics, QHelpEvent, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolTip,
)

ELLIPSIS = "\u2026"
# a side marker: L / R / Left / Right (as riggers write them) as a token of its own
# (between separators) or as a camel-case prefix ("lHand", "LeftUpLeg", "mixamorig:RightFoot")
_SEP = r"_.:|/\- "
SIDE = re.compile(
    rf"(?:^|(?<=[{_SEP}]))(?:L|R|l|r|Left|Right|left|right|LEFT|RIGHT|Lf|Rt)(?=$|[{_SEP}])"
    rf"|(?:^|(?<=[{_SEP}]))(?:Left|Right|left|right|L|R|l|r)(?=[A-Z])"
)
# a marker where the name starts is kept in the head, one near the end in the tail
HEAD_SHARE = 0.6


def kept_ends(name: str) -> tuple[int, int]:
    """(head, tail): the name's first `head` characters and those from `tail` on must stay
    (the side marker with what precedes it, or with what follows when it is near the end);
    (0, len(name)) when the name has no side marker."""
    m = SIDE.search(name)
    if m is None or m.end() >= len(name):
        return 0, len(name)
    if m.end() <= HEAD_SHARE * len(name):
        end = m.end() + (name[m.end()] in _SEP)  # with its separator: "CC_Base_R_"
        return end, len(name)
    return 0, m.start()


def elide_name(name: str, fits: Callable[[str], bool]) -> str:
    """`name` itself when `fits` it, else its kept ends (`kept_ends`) with as much as fits
    around an ellipsis, two thirds of the rest to the tail (where the part is named); when
    that leaves no room for the end, the prefix before the side marker goes instead
    ("…R_Mid3_End": left or right is what tells two deep joints apart); else a plain middle
    elision."""
    if fits(name):
        return name
    head, tail = kept_ends(name)

    def shortened(extra: int, h: int, t: int) -> str:
        to_head = extra // 3
        return name[: h + to_head] + ELLIPSIS + name[t - (extra - to_head) :]

    def around(h: int, t: int) -> str | None:
        room = t - h  # the characters that may go
        if room <= 1 or not fits(shortened(0, h, t)):
            return None
        lo, hi = 0, room - 1  # the longest extra that fits (lo always fits)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fits(shortened(mid, h, t)):
                lo = mid
            else:
                hi = mid - 1
        return shortened(lo, h, t)

    kept = around(head, tail)
    if kept is not None and not kept.endswith(ELLIPSIS):
        return kept
    side = SIDE.search(name)
    if side is not None and side.start() > 0:
        for start in range(1, side.start() + 1):  # as much of the prefix as fits
            if fits(ELLIPSIS + name[start:]):
                return ELLIPSIS + name[start:]
        rest = name[side.start() :]  # "…L_…02_End": the side, then as much of the end
        own = head - side.start()
        for k in range(len(rest) - own - 1, 0, -1):
            text = ELLIPSIS + rest[:own] + ELLIPSIS + rest[-k:]
            if own > 0 and fits(text):
                return text
    return kept or around(0, len(name)) or ELLIPSIS


class ElidedNameDelegate(QStyledItemDelegate):
    """Paints a name column with `elide_name` at the cell's width and shows the full name
    (with the item's own tooltip) on hover."""

    def text_width(self, option: QStyleOptionViewItem) -> int:
        """Pixels the text may take in a cell: the style's text rect less its margins."""
        widget = option.widget
        style = widget.style() if widget is not None else None
        if style is None:
            return option.rect.width()
        rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, option, widget)
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, widget) + 1
        return rect.width() - 2 * margin

    def elided(self, option: QStyleOptionViewItem) -> str:
        """The option's text shortened to its cell (`elide_name`)."""
        metrics = QFontMetrics(option.font)
        width = self.text_width(option)
        return elide_name(option.text, lambda s: metrics.horizontalAdvance(s) <= width)

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        """As QStyledItemDelegate paints, with the text elided here (sizeHint keeps the
        whole name, so the panel can still ask how wide the names want to be)."""
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = self.elided(opt)
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)

    def shown_text(self, view: QAbstractItemView, index: QModelIndex) -> tuple[str, int, int]:
        """(text drawn, its width, the width it may take) for `index` as `view` lays it out
        now: what a test or a tool can check without reading pixels."""
        option = QStyleOptionViewItem()
        option.initFrom(view)
        option.widget = view
        option.rect = view.visualRect(index)
        self.initStyleOption(option, index)
        text = self.elided(option)
        return text, QFontMetrics(option.font).horizontalAdvance(text), self.text_width(option)

    def helpEvent(
        self,
        event: QHelpEvent,
        view: QAbstractItemView,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> bool:
        if event.type() != QEvent.Type.ToolTip or not index.isValid():
            return super().helpEvent(event, view, option, index)
        name = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        own = str(index.data(Qt.ItemDataRole.ToolTipRole) or "")
        QToolTip.showText(event.globalPos(), f"{name}\n{own}" if own else name, view)
        return True
