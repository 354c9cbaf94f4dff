"""Error heat map: joints (rows, hierarchy order) x time, coloured by the share of each joint's
budget it uses.

The error plot says *when* the clip is wrong; this says *where* at the same time. Colours are
the one error scale (neutral below half the budget, amber to orange towards it, red only over
it), so a red cell here is a red bone in the 3D view. *Fit rows* (on by default) shrinks the
rows, down to MIN_ROW pixels, until every joint is in view at once, naming as many rows as a
small font fits (hover names every cell); off, every row is a line of text and the rows
scroll. The time ruler stays on top.
Clicking selects the joint and jumps to that time, dragging scrubs, hovering tells the error.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QEvent, QPoint, QRect, QRectF, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QImage,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QScrollArea,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from app.model.comparison import error_difference, error_of
from app.model.error_scale import (
    budget_fraction,
    error_colors_u8,
    format_budget,
    format_cm,
    format_percent,
)
from app.qt.handler_guard import survives, survives_event
from app.views.panel import LATER, Panel

INDENT = 8
MIN_ROW = 2  # px: the least a fitted row gets (44 joints in the 1280x800 window's plots dock)
CURSOR = QColor(255, 120, 0)
SELECTION = QColor(255, 40, 240)


def nice_step(span: float, room_px: float, min_px: float) -> float:
    """A 1-2-5 step in seconds so that labels at least `min_px` apart fit in `room_px`."""
    if span <= 0 or room_px <= 0:
        return 1.0
    raw = span * min_px / room_px
    exp = 10.0 ** math.floor(math.log10(raw))
    for m in (1.0, 2.0, 5.0, 10.0):
        if m * exp >= raw:
            return m * exp
    return 10.0 * exp


class HeatmapCanvas(QWidget):
    """The rows: names on the left, one image of coloured cells on the right."""

    def __init__(self, panel: ErrorHeatmapPanel) -> None:
        super().__init__(panel)
        self.panel = panel
        self.setMouseTracking(True)
        self._dragging = False

    @property
    def text_row(self) -> int:
        return self.fontMetrics().height() + 2

    @property
    def row_height(self) -> int:
        """A line of text; with Fit rows, less (down to MIN_ROW) so every row is in view."""
        p = self.panel
        line = self.text_row
        n = len(p.order)
        if not n or not p.fit_rows.isChecked():
            return line
        room = p.scroll.viewport().height()
        return max(MIN_ROW, min(line, room // n))

    def label_font(self) -> QFont:
        """The names' font: the widget's own for rows a line high, else a smaller one."""
        if self.row_height >= self.text_row:
            return self.font()
        small = QFont(self.font())
        small.setPixelSize(max(8, min(10, self.fontMetrics().height() - 4)))
        return small

    def label_every(self) -> int:
        """Name every k-th row so the labels do not overlap."""
        rh = self.row_height
        if rh >= self.text_row:
            return 1
        return max(1, math.ceil((QFontMetrics(self.label_font()).height() + 1) / rh))

    def name_width(self) -> int:
        p = self.panel
        fm = QFontMetrics(self.label_font())
        if not len(p.order):
            return 120
        widths = [fm.horizontalAdvance(p.names[j]) + INDENT * int(p.depth[j]) for j in p.order]
        return int(max(widths)) + 12

    def cells_rect(self) -> QRect:
        left = self.name_width()
        rows = self.row_height * len(self.panel.order)
        return QRect(left, 0, max(self.width() - left - 4, 1), rows)

    def time_to_x(self, t: float) -> float:
        r = self.cells_rect()
        p = self.panel
        span = p.num_samples / p.rate if p.num_samples else 1.0
        return r.left() + (t + 0.5 / p.rate) / span * r.width()

    def cell_at(self, pos: QPoint) -> tuple[int, int] | None:
        """(joint, sample) under a pixel, or (joint, -1) over the names, or None."""
        p = self.panel
        row = pos.y() // self.row_height
        if not 0 <= row < len(p.order):
            return None
        joint = int(p.order[row])
        r = self.cells_rect()
        if pos.x() < r.left():
            return joint, -1
        s = int((pos.x() - r.left()) / max(r.width(), 1) * p.num_samples)
        return joint, min(max(s, 0), p.num_samples - 1)

    def sizeHint(self) -> QSize:
        return QSize(self.name_width() + 300, self.row_height * max(len(self.panel.order), 1))

    @survives
    def paintEvent(self, event: QPaintEvent) -> None:
        p = self.panel
        painter = QPainter(self)
        painter.fillRect(self.rect(), self.palette().base())
        if p.image is None:
            painter.setPen(self.palette().text().color())
            msg = "Compressing\u2026" if p.document.clip is not None else "No clip"
            top_left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop
            painter.drawText(self.rect().adjusted(8, 4, 0, 0), top_left, msg)
            return
        cells = self.cells_rect()
        painter.drawImage(QRectF(cells), p.image)
        rh = self.row_height
        sel = p.document.selection
        ink = self.palette().text().color()
        painter.setFont(self.label_font())
        every = self.label_every()
        lh = rh * every  # a label's box: its row and the unlabelled ones under it
        y0, y1 = event.rect().top(), event.rect().bottom()
        sel_row = int(p.row_of[sel]) if sel is not None and sel < len(p.row_of) else -1
        for row, joint in enumerate(p.order):
            y = row * rh
            if y + lh < y0 or y > y1:
                continue
            if joint == sel:
                box = QRect(0, y + rh // 2 - lh // 2, cells.left() - 2, lh)
                painter.fillRect(box, self.palette().highlight())
                painter.setPen(self.palette().highlightedText().color())
            elif row % every or abs(row - sel_row) < every:
                continue  # unlabelled, or under the selection's label
            else:
                box = QRect(0, y, cells.left() - 2, lh)
                painter.setPen(ink)
            x = 4 + INDENT * int(p.depth[joint])
            box.setLeft(x)
            align = Qt.AlignmentFlag.AlignVCenter if every == 1 else Qt.AlignmentFlag.AlignTop
            painter.drawText(box, align, p.names[joint])
        if sel is not None and sel < len(p.row_of):
            y = int(p.row_of[sel]) * rh
            painter.setPen(QPen(SELECTION, 1.5))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(QRectF(cells.left(), y + 0.5, cells.width() - 1, rh - 1))
        x = self.time_to_x(p.document.time)
        painter.setPen(QPen(CURSOR, 2))
        painter.drawLine(int(round(x)), 0, int(round(x)), self.height())

    # --- interaction --------------------------------------------------------------------
    @survives_event
    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip:
            hit = self.cell_at(e.pos())
            if hit is not None and hit[1] >= 0:
                QToolTip.showText(e.globalPos(), self.panel.tooltip_text(*hit), self)
            else:
                QToolTip.hideText()
                e.ignore()
            return True
        return super().event(e)

    @survives
    def mousePressEvent(self, e: QMouseEvent) -> None:
        if e.button() != Qt.MouseButton.LeftButton:
            return super().mousePressEvent(e)
        hit = self.cell_at(e.position().toPoint())
        if hit is None:
            return
        joint, sample = hit
        self.panel.document.set_selection(joint)
        if sample >= 0:
            self._dragging = True
            self._scrub(e.position().x())

    @survives
    def mouseMoveEvent(self, e: QMouseEvent) -> None:
        if self._dragging:
            self._scrub(e.position().x())

    @survives
    def mouseReleaseEvent(self, e: QMouseEvent) -> None:
        self._dragging = False

    def _scrub(self, x: float) -> None:
        p = self.panel
        r = self.cells_rect()
        t = (x - r.left()) / max(r.width(), 1) * p.num_samples / p.rate - 0.5 / p.rate
        p.document.set_time(min(max(t, 0.0), p.document.duration))


class TimeRuler(QWidget):
    """Seconds above the cells, aligned with the canvas below; shows the cursor too."""

    def __init__(self, panel: ErrorHeatmapPanel) -> None:
        super().__init__(panel)
        self.panel = panel
        self.setFixedHeight(self.fontMetrics().height() + 8)

    @survives
    def paintEvent(self, _e: QPaintEvent) -> None:
        p = self.panel
        canvas = p.canvas
        painter = QPainter(self)
        fm = painter.fontMetrics()
        ink = self.palette().color(self.foregroundRole())
        painter.setPen(ink)
        win = self.window()
        off = canvas.mapTo(win, QPoint(0, 0)).x() - self.mapTo(win, QPoint(0, 0)).x()
        if p.image is None:
            return
        cells = canvas.cells_rect()
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        first = fm.horizontalAdvance("0.0") // 2 + 10  # clear of the first tick's label
        room = off + cells.left() - first
        if room >= fm.horizontalAdvance("time (s)"):  # the names may leave it no room
            painter.drawText(QRect(0, 0, room, self.height()), right, "time (s)")
        dur = p.document.duration
        step = nice_step(max(dur, 1e-6), cells.width(), fm.horizontalAdvance("00.00") + 16)
        digits = max(0, -int(math.floor(math.log10(step)))) if step < 1 else 0
        k = 0
        while k * step <= dur + 1e-9:
            t = k * step
            x = off + canvas.time_to_x(t)
            painter.drawLine(int(x), self.height() - 4, int(x), self.height())
            text = f"{t:.{digits}f}"
            w = fm.horizontalAdvance(text)
            painter.drawText(int(x - w / 2), self.height() - 6, text)
            k += 1
        x = off + canvas.time_to_x(p.document.time)
        painter.setPen(QPen(CURSOR, 2))
        painter.drawLine(int(x), 0, int(x), self.height())


CAPTIONS = {
    "B": "Error of every joint over time, as a share of its own budget",
    "A": "A's error of every joint over time, as a share of its own budget",
    "B-A": "B \u2212 A of every joint over time, as a share of its budget: "
    "blue where B is more accurate, red where it is less (full colour at one budget)",
}
BETTER, WORSE, SAME = (0, 114, 178), (213, 94, 0), (236, 236, 236)  # Okabe-Ito, grey


def difference_colors_u8(share: np.ndarray) -> np.ndarray:
    """(..., 4) uint8 diverging colours of B - A in budgets: -1 blue .. 0 grey .. +1 red."""
    t = np.clip(np.nan_to_num(share), -1.0, 1.0)[..., None]
    same, better, worse = (np.array(c, dtype=float) for c in (SAME, BETTER, WORSE))
    rgb = np.where(t < 0, same + (-t) * (better - same), same + t * (worse - same))
    out = np.empty(share.shape + (4,), dtype=np.uint8)
    out[..., :3] = np.round(rgb).astype(np.uint8)
    out[..., 3] = 255
    return out


class ErrorHeatmapPanel(Panel):
    """Dockable joints x time view of `document.result.error`."""

    follows = (
        ("result_changed", LATER),
        ("clip_changed", LATER),
        ("selection_changed", "_on_selection"),
        ("time_changed", "_repaint"),
        ("comparison_changed", LATER),
    )

    def build(self) -> None:
        self.ratio = np.zeros((0, 0))  # (S, J) budget fraction, columns in hierarchy order
        self.order = np.zeros(0, dtype=np.int64)
        self.depth = np.zeros(0, dtype=np.int64)
        self.row_of = np.zeros(0, dtype=np.int64)
        self.names: tuple[str, ...] = ()
        self.image: QImage | None = None
        # (clip, (S, J) fractions, (J, S, 4) colours) of the last error image drawn
        self._colours: tuple[object, np.ndarray, np.ndarray] | None = None
        self.recoloured = 0  # rows coloured for the last image (tests, benchmarks)
        self.num_samples = 0
        self.rate = 1.0

        self.fit_rows = QToolButton()
        self.fit_rows.setText("Fit rows")
        self.fit_rows.setCheckable(True)
        self.fit_rows.setChecked(True)
        self.fit_rows.setToolTip(
            "On: every joint in view at once (thin rows, names where they fit, hover for the "
            "rest). Off: one line of text per row, scrolling."
        )
        self.fit_rows.toggled.connect(self._relayout)
        self.canvas = HeatmapCanvas(self)
        self.canvas.setToolTip("")  # cells answer with their own tooltip
        self.setToolTip(
            "Error of every joint over time, as a share of its own budget (the colour scale "
            "of the 3D view's bar)"
        )
        self.ruler = TimeRuler(self)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.setWidget(self.canvas)
        # one header row: the toggle over the names, the ruler over the cells (the colour
        # scale is the 3D view's, always in sight), so the rows get the panel's height
        top = QHBoxLayout()
        top.setSpacing(2)
        top.addWidget(self.fit_rows)
        top.addWidget(self.ruler, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.scroll, 1)

    def refresh(self) -> None:
        self._on_result()

    def _repaint(self) -> None:
        self.canvas.update()
        self.ruler.update()

    # --- model -> view ------------------------------------------------------------------
    def source(self) -> str:
        """What is drawn: 'B' (the current result), or while comparing 'A' or 'B-A'."""
        c = self.document.comparison
        return c.panel_source if c.active else "B"

    def _on_result(self) -> None:
        doc = self.document
        source = self.source()
        r = doc.side_result("A" if source == "A" else "B")
        a = doc.side_result("A") if source == "B-A" else None
        diff = error_difference(a, r) if a is not None and r is not None else None
        if r is None or (source == "B-A" and diff is None):
            self.ratio = np.zeros((0, 0))
            self.image = None
            self.order = np.zeros(0, dtype=np.int64)
        else:
            sk = r.clip.skeleton
            self.names = sk.names
            self.order, self.depth = sk.hierarchy_order(), sk.depths
            budget = np.asarray(sk.precision)[self.order][None, :]
            if diff is not None:  # B - A as a share of the budget: blue B better, red worse
                self.ratio = diff[:, self.order] / budget
                rgba = np.ascontiguousarray(difference_colors_u8(self.ratio.T))
            else:
                err = error_of(r)[:, self.order]
                rgba = self._recolour(budget_fraction(err, budget), doc.clip)  # (J, S, 4)
            self.num_samples, self.rate = self.ratio.shape[0], r.clip.sample_rate
            h, w = rgba.shape[:2]
            self.image = QImage(rgba.data, w, h, 4 * w, QImage.Format.Format_RGBA8888).copy()
        self.setToolTip(CAPTIONS[source])  # the caption lives in the tooltip (room for rows)
        self.row_of = np.empty(len(self.order), dtype=np.int64)
        self.row_of[self.order] = np.arange(len(self.order))
        self._relayout()
        self._on_selection()

    def _recolour(self, ratio: np.ndarray, clip: object) -> np.ndarray:
        """The (J, S, 4) colours of budget fractions `ratio` (S, J), rows in hierarchy
        order: only the rows whose fractions changed since the last image of this clip are
        coloured again (an edit of one joint's precision moves a few joints' errors; the
        colour scale costs far more than the comparison). Sets `ratio` and `recoloured`,
        the number of rows coloured."""
        last = self._colours
        if last is not None and last[0] is clip and last[1].shape == ratio.shape:
            rgba = last[2]  # the colours of last[1], row for row: a pure function of it
            rows = np.flatnonzero(np.any(ratio != last[1], axis=0))
            if rows.size:
                rgba[rows] = error_colors_u8(ratio[:, rows].T)
        else:
            rgba = np.ascontiguousarray(error_colors_u8(ratio.T))
            rows = np.arange(ratio.shape[1])
        self.recoloured = int(rows.size)
        self.ratio = ratio
        self._colours = (clip, ratio, rgba)
        return rgba

    def _relayout(self) -> None:
        """The canvas as tall as its rows (the scroll area's height decides fitted rows)."""
        self.canvas.setMinimumHeight(self.canvas.row_height * max(len(self.order), 1))
        self.canvas.updateGeometry()
        self._repaint()

    @survives
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._relayout()

    def _on_selection(self) -> None:
        if self.when_shown.stale:  # drawn with the result when shown
            return
        j = self.document.selection
        if j is not None and j < len(self.row_of) and self.image is not None:
            y = int(self.row_of[j]) * self.canvas.row_height
            self.scroll.ensureVisible(0, y + self.canvas.row_height // 2, 0, self.canvas.row_height)
        self._repaint()

    def tooltip_text(self, joint: int, sample: int) -> str:
        source = self.source()
        r = self.document.side_result("A" if source == "A" else "B")
        if r is None:
            return ""
        if source == "B-A":
            a = self.document.side_result("A")
            ea = float(error_of(a)[sample, joint]) if a is not None else float("nan")
            eb = float(error_of(r)[sample, joint])
            return (
                f"<b>{self.names[joint]}</b><br>sample {sample} ({sample / self.rate:.3f} s)<br>"
                f"A {format_cm(ea)}, B {format_cm(eb)}: B \u2212 A {format_cm(eb - ea)}"
            )
        err = float(np.asarray(r.error)[sample, joint])
        frac = float(self.ratio[sample, int(self.row_of[joint])])
        return (
            f"<b>{self.names[joint]}</b><br>sample {sample} ({sample / self.rate:.3f} s)<br>"
            f"error {format_cm(err)}, {format_percent(frac)} of its "
            f"{format_budget(float(r.clip.skeleton.precision[joint]))} budget"
        )
