"""The legend of the one error colour scale, in % of the joint's budget and, when one joint is
in question, in centimetres too."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from app.model.error_scale import LEGEND_MAX, format_budget, legend_stops
from app.qt.handler_guard import survives


class ColorBar(QtWidgets.QWidget):
    """Gradient 0 .. 125 % of the budget with ticks at 0, 50 % and 100 %; `set_budget(cm)`
    adds the centimetres of the selected joint's budget under the 100 % tick."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.budget: float | None = None
        fm = self.fontMetrics()
        self.setFixedHeight(12 + fm.height() + 4)
        self.setMinimumWidth(self._min_width())
        self.setToolTip(
            "Error as a share of each joint's own precision (its budget): neutral below 50 %, "
            "amber to orange towards 100 %, red only over budget."
        )

    def _labels(self) -> list[tuple[float, str]]:
        end = "100 % = budget" if self.budget is None else f"100 % = {format_budget(self.budget)}"
        return [(0.0, "0"), (0.5, "50 %"), (1.0, end)]

    def _min_width(self) -> int:
        fm = self.fontMetrics()
        # 100 % sits at 1/LEGEND_MAX of the bar: the label centred there must fit on both sides
        end = fm.horizontalAdvance(self._labels()[-1][1])
        return int(end / 2 / (1.0 - 1.0 / LEGEND_MAX)) + 16

    def set_budget(self, budget: float | None) -> None:
        if budget != self.budget:
            self.budget = budget
            self.setMinimumWidth(self._min_width())
            self.update()

    def sizeHint(self) -> QtCore.QSize:
        return QtCore.QSize(max(self._min_width(), 220), self.height())

    @survives
    def paintEvent(self, _ev: QtGui.QPaintEvent) -> None:
        p = QtGui.QPainter(self)
        fm = p.fontMetrics()
        bar = QtCore.QRectF(6, 2, self.width() - 12, 9)
        grad = QtGui.QLinearGradient(bar.left(), 0, bar.right(), 0)
        for stop, rgb in legend_stops():
            grad.setColorAt(stop, QtGui.QColor.fromRgbF(*rgb))
        p.fillRect(bar, grad)
        ink = self.palette().color(QtGui.QPalette.ColorRole.WindowText)
        p.setPen(QtGui.QPen(ink, 1))
        y = bar.bottom() + 2 + fm.ascent()
        for frac, text in self._labels():
            x = bar.left() + bar.width() * frac / LEGEND_MAX
            p.drawLine(QtCore.QPointF(x, bar.top()), QtCore.QPointF(x, bar.bottom() + 2))
            w = fm.horizontalAdvance(text)
            left = min(max(x - w / 2, 0.0), self.width() - w)
            p.drawText(QtCore.QPointF(left, y), text)
        p.end()
