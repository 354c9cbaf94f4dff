"""Bit-rate heat map: joints (rows, hierarchy order) x segments, for rotation, translation, scale.

It answers "where do the bytes go": each cell is one sub-track in one segment, coloured by the
bits per component the optimiser chose. Default and constant sub-tracks store nothing per
segment and are marked D and C. Hovering tells bits, bytes, the segment's samples and the
joint's error there; clicking selects the joint and moves the time to the segment's start.
The view only draws `document.result`; it never runs the codec.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
)
from PySide6.QtWidgets import QLabel, QScrollArea, QToolTip, QVBoxLayout, QWidget

from app.model.comparison import bits_difference, kinds_of
from app.model.document import Document
from app.qt.handler_guard import survives, survives_event
from app.views.elided_names import elide_name
from app.views.panel import LATER, Panel
from codec.codecs.base import CONSTANT_BITS, SUB_TRACKS, TrackKind
from codec.result_tables import cell_bytes, segment_errors

ROW_HEIGHT = 16
HEADER_HEIGHT = 34
NAME_WIDTH = 150  # the names' column at least; wider for a deep rig's names (fit_names)
NAME_SHARE = 0.4  # ... up to this share of the panel: the cells keep the rest
INDENT = 8
GROUP_GAP = 8
DEFAULT_COLOUR = QColor(236, 236, 236)
CONSTANT_COLOUR = QColor(196, 196, 196)
SEGMENT_CONSTANT_COLOUR = QColor(150, 200, 240)  # bit rate 0: constant within the segment
RAW_COLOUR = QColor(220, 40, 40)  # 32 bits: the raw float fallback
_VIRIDIS = pg.colormap.get("viridis").getLookupTable(0.0, 1.0, 23, mode="byte")


def bits_colour(bits: int) -> QColor:
    """Colour of an animated cell: blue for constant-in-segment, viridis 1..23, red for raw."""
    if bits <= 0:
        return SEGMENT_CONSTANT_COLOUR
    if bits >= 32:
        return RAW_COLOUR
    r, g, b, *_ = _VIRIDIS[min(bits, 23) - 1]
    return QColor(int(r), int(g), int(b))


def difference_colour(d: int) -> QColor:
    """B - A bits: blue fewer, grey same, vermillion more (full at 8 bits)."""
    t = min(abs(d) / 8.0, 1.0)
    end = (0, 114, 178) if d < 0 else (213, 94, 0)
    return QColor(*(int(round(236 + t * (e - 236))) for e in end))


def _text_colour(c: QColor) -> QColor:
    return QColor(Qt.GlobalColor.black if c.lightness() > 140 else Qt.GlobalColor.white)


def not_a_bit_rate_codec(codec_name: str) -> str:
    """What the panel says for a result whose codec stores no bit rates."""
    return f"{codec_name} is not a bit-rate codec: it has no bit rates to show."


class BitRateCanvas(QWidget):
    """The painted grid; its parent panel wraps it in a vertical scroll area."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.setMouseTracking(True)
        self.setMinimumWidth(NAME_WIDTH + 3 * 12)
        f = QFont(self.font())
        f.setPointSizeF(max(6.5, f.pointSizeF() * 0.8))
        self._small = f
        self.name_width = NAME_WIDTH
        self.shown_names: tuple[str, ...] = ()  # each joint's name as drawn (elided to fit)
        self._refresh_data()

    # --- data ---------------------------------------------------------------------------
    def source(self) -> str:
        """'B' (the current result), or while comparing 'A' or 'B-A'."""
        c = self.document.comparison
        return c.panel_source if c.active else "B"

    @property
    def result(self):  # the result drawn: A's, or the current one (also under B - A)
        return self.document.side_result("A" if self.source() == "A" else "B")

    def _refresh_data(self) -> None:
        r = self.result
        if r is not None and r.costs is None:  # a codec without bit rates: nothing to draw
            r = None
        a = self.document.side_result("A") if self.source() == "B-A" else None
        if a is not None and a.costs is None:
            a = None
        # (G, J, 3) B - A bits per component where the two share their segments, else None
        self.diff = bits_difference(a, r) if a is not None and r is not None else None
        a_kinds = kinds_of(a) if self.diff is not None and a is not None else None
        if r is None:
            self.bits = np.zeros((0, 0, 3), dtype=np.int64)
            self.kinds = np.zeros((0, 3), dtype=np.int64)
            self.order = np.zeros(0, dtype=np.int64)
            self.depth = np.zeros(0, dtype=np.int64)
            self.names: tuple[str, ...] = ()
            self.bytes = np.zeros((0, 0, 3))
            self.seg_error = np.zeros((0, 0))
            self.segments = np.zeros((0, 2), dtype=np.int64)
        else:
            self.bits = r.costs.bits_per_component
            self.kinds = np.asarray(r.costs.kinds)
            if a_kinds is not None:  # a cell either side animates is compared
                self.kinds = np.maximum(self.kinds, a_kinds)
            self.order = r.clip.skeleton.hierarchy_order()
            self.depth = r.clip.skeleton.depths
            self.names = r.clip.skeleton.names
            self.bytes = cell_bytes(r)
            self.seg_error = segment_errors(r)
            self.segments = np.asarray(r.costs.segments, dtype=np.int64).reshape(-1, 2)
        self.row_of = np.empty(len(self.order), dtype=np.int64)
        self.row_of[self.order] = np.arange(len(self.order))
        self.fit_names()
        self.setMinimumHeight(HEADER_HEIGHT + ROW_HEIGHT * len(self.order) + 4)
        self.updateGeometry()
        self.update()

    def _name_left(self, joint: int) -> int:
        return 2 + INDENT * int(self.depth[joint])

    def fit_names(self) -> None:
        """Size the names' column to the widest indented name, within NAME_SHARE of the
        width (at 1920x1080 a fixed 150 px cut the CC rig's deep names); a name that still
        does not fit keeps its side and its end around an ellipsis (`elide_name`)."""
        fm = QFontMetrics(self._small)
        need = max(
            (self._name_left(j) + fm.horizontalAdvance(n) + 4 for j, n in enumerate(self.names)),
            default=NAME_WIDTH,
        )
        self.name_width = int(max(NAME_WIDTH, min(need, NAME_SHARE * self.width())))
        self.shown_names = tuple(
            self._elided(n, self.name_width - self._name_left(j) - 4, fm)
            for j, n in enumerate(self.names)
        )

    @staticmethod
    def _elided(name: str, room: int, fm: QFontMetrics) -> str:
        return elide_name(name, lambda t: fm.horizontalAdvance(t) <= room)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_names()

    @property
    def num_segments(self) -> int:
        return int(self.bits.shape[0])

    def _cell_width(self) -> float:
        g = max(self.num_segments, 1)
        return max(3.0, (self.width() - self.name_width - 2 * GROUP_GAP - 2) / (3 * g))

    def _group_left(self, k: int) -> float:
        return self.name_width + k * (self.num_segments * self._cell_width() + GROUP_GAP)

    def cell_rect(self, segment: int, joint: int, sub_track: int) -> QRect:
        w = self._cell_width()
        x = self._group_left(sub_track) + segment * w
        y = HEADER_HEIGHT + int(self.row_of[joint]) * ROW_HEIGHT
        return QRect(int(x), y, max(1, int(x + w) - int(x) - 1), ROW_HEIGHT - 1)

    def cell_at(self, pos: QPoint) -> tuple[int | None, int | None, int | None]:
        """(segment, joint, sub_track) under a point; segment/sub_track None over the names."""
        row = (pos.y() - HEADER_HEIGHT) // ROW_HEIGHT
        if pos.y() < HEADER_HEIGHT or not 0 <= row < len(self.order):
            return None, None, None
        joint = int(self.order[row])
        if pos.x() < self.name_width:
            return None, joint, None
        w = self._cell_width()
        for k in range(3):
            left = self._group_left(k)
            g = int((pos.x() - left) // w)
            if left <= pos.x() and 0 <= g < self.num_segments:
                return g, joint, k
        return None, joint, None

    def tooltip_text(self, segment: int, joint: int, sub_track: int) -> str:
        """What one cell means, in words a tech animator uses."""
        start, count = (int(v) for v in self.segments[segment])
        rate = self.result.clip.sample_rate if self.result is not None else 1.0
        kind = TrackKind(int(self.kinds[joint, sub_track]))
        head = (
            f"<b>{self.names[joint]}</b> {SUB_TRACKS[sub_track]}, segment {segment}<br>"
            f"samples {start}–{start + count - 1} ({start / rate:.3f}–"
            f"{(start + count - 1) / rate:.3f} s)<br>"
        )
        if kind == TrackKind.DEFAULT:
            body = "default: equals the bind pose, stores nothing"
        elif kind == TrackKind.CONSTANT:
            body = "constant: one value for the whole clip, nothing per segment"
        elif self.diff is not None:
            d = int(self.diff[segment, joint, sub_track])
            body = f"B \u2212 A: {d:+d} bits per component" if d else "same bits in A and B"
        else:
            bits = int(self.bits[segment, joint, sub_track])
            if bits == 0:
                body = f"constant in this segment: one {CONSTANT_BITS}-bit value"
            elif bits >= 32:
                body = "raw: 32 bits per component (full float)"
            else:
                body = f"{bits} bits per component"
            body += f", {self.bytes[segment, joint, sub_track]:g} bytes"
        err = float(self.seg_error[segment, joint])
        return f"{head}{body}<br>joint error here: {err:.5g}"

    # --- drawing ------------------------------------------------------------------------
    @survives
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), self.palette().base())
        result = self.result
        if result is None:
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No compression result yet")
            return
        if result.costs is None:
            p.drawText(
                self.rect(), Qt.AlignmentFlag.AlignCenter, not_a_bit_rate_codec(result.codec_name)
            )
            return
        w = self._cell_width()
        g_count = self.num_segments
        sel = self.document.selection
        rate = self.result.clip.sample_rate
        now = int(round(self.document.time * rate))
        current = int(np.searchsorted(self.segments[:, 0], now, side="right") - 1)
        p.setFont(self._small)
        names_w = self.name_width
        ink = self.palette().text().color()
        y0, y1 = event.rect().top(), event.rect().bottom()  # draw only the exposed rows
        for row, joint in enumerate(self.order):
            y = HEADER_HEIGHT + row * ROW_HEIGHT
            if y + ROW_HEIGHT < y0 or y > y1:
                continue
            if joint == sel:  # name on the highlight; cells keep their colours, framed
                p.fillRect(0, y, names_w - 2, ROW_HEIGHT, self.palette().highlight())
                frame = self.palette().highlight().color()
                p.fillRect(names_w - 2, y - 1, self.width(), 1, frame)
                p.fillRect(names_w - 2, y + ROW_HEIGHT - 1, self.width(), 1, frame)
            p.setPen(self.palette().highlightedText().color() if joint == sel else ink)
            x = self._name_left(joint)
            p.drawText(
                QRect(x, y, names_w - x - 2, ROW_HEIGHT),
                Qt.AlignmentFlag.AlignVCenter,
                self.shown_names[joint],
            )
            for k in range(3):
                kind = int(self.kinds[joint, k])
                for g in range(g_count):
                    rect = self.cell_rect(g, joint, k)
                    if kind == TrackKind.ANIMATED and self.diff is not None:
                        d = int(self.diff[g, joint, k])
                        colour, text = difference_colour(d), f"{d:+d}" if d else "="
                    elif kind == TrackKind.ANIMATED:
                        bits = int(self.bits[g, joint, k])
                        colour, text = bits_colour(bits), str(bits)
                    elif kind == TrackKind.CONSTANT:
                        colour, text = CONSTANT_COLOUR, "C"
                    else:
                        colour, text = DEFAULT_COLOUR, "D"
                    p.fillRect(rect, colour)
                    if w >= 13:
                        p.setPen(_text_colour(colour))
                        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        self._paint_header(p, w, g_count)
        if 0 <= current < g_count:  # outline the segment under the time cursor
            p.setPen(QColor(255, 120, 0))
            p.setBrush(Qt.BrushStyle.NoBrush)
            for k in range(3):
                x = int(self._group_left(k) + current * w)
                p.drawRect(x - 1, HEADER_HEIGHT - 2, int(w), ROW_HEIGHT * len(self.order) + 2)

    def _paint_header(self, p: QPainter, w: float, g_count: int) -> None:
        """Sub-track and segment labels at the top of what is visible: they stay in view
        while the rows scroll under them."""
        top = self.visibleRegion().boundingRect().top()
        p.fillRect(0, top, self.width(), HEADER_HEIGHT - 2, self.palette().base())
        p.setPen(self.palette().text().color())
        for k, label in enumerate(("Rotation", "Translation", "Scale")):
            left = self._group_left(k)
            p.drawText(
                QRect(int(left), top, int(w * g_count), 16), Qt.AlignmentFlag.AlignCenter, label
            )
            step = max(1, int(np.ceil(14 / w)))
            for g in range(0, g_count, step):
                p.drawText(
                    QRect(int(left + g * w), top + 16, int(w * step), HEADER_HEIGHT - 16),
                    Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                    str(g),
                )
        bottom_left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom
        p.drawText(
            QRect(2, top, self.name_width - 4, HEADER_HEIGHT - 2), bottom_left, "segment \u2192"
        )

    # --- interaction --------------------------------------------------------------------
    @survives_event
    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip:
            g, j, k = self.cell_at(e.pos())
            if g is not None and j is not None and k is not None:
                QToolTip.showText(e.globalPos(), self.tooltip_text(g, j, k), self)
            elif j is not None:  # over the names: the whole name (an elided one's in full)
                QToolTip.showText(e.globalPos(), self.names[j], self)
            else:
                QToolTip.hideText()
                e.ignore()
            return True
        return super().event(e)

    @survives
    def mousePressEvent(self, e: QMouseEvent) -> None:
        g, j, _ = self.cell_at(e.position().toPoint())
        if j is None:
            return super().mousePressEvent(e)
        self.document.set_selection(j)
        if g is not None and self.result is not None:
            self.document.set_time(self.segments[g, 0] / self.result.clip.sample_rate)

    def sizeHint(self) -> QSize:
        return QSize(
            self.name_width + 3 * max(self.num_segments, 1) * 18 + 2 * GROUP_GAP,
            self.minimumHeight(),
        )


class BitRatePanel(Panel):
    """Dockable heat map of the bit rates of `document.result`."""

    follows = (
        ("result_changed", LATER),
        ("clip_changed", LATER),
        ("selection_changed", "_on_selection"),
        ("time_changed", "_repaint_canvas"),
        ("comparison_changed", LATER),
    )

    def build(self) -> None:
        document = self.document
        self.canvas = BitRateCanvas(document)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.setWidget(self.canvas)
        # the header is painted at the top of the visible rows: repaint it on every scroll
        self.scroll.verticalScrollBar().valueChanged.connect(self.canvas.update)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        legend = QLabel(
            "bits/component: dark 1 → yellow 23 · "
            "<span style='background:#96c8f0'>&nbsp;0&nbsp;</span> constant in segment · "
            "<span style='background:#dc2828;color:white'>&nbsp;32&nbsp;</span> raw · "
            "<span style='background:#c4c4c4'>&nbsp;C&nbsp;</span> constant · "
            "<span style='background:#ececec'>&nbsp;D&nbsp;</span> default"
        )
        legend.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.summary)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(legend)

    def refresh(self) -> None:
        self._on_result()

    def _repaint_canvas(self) -> None:
        self.canvas.update()

    @property
    def bits(self) -> np.ndarray:
        """(G, J, 3) bits per component as drawn (-1 where not animated)."""
        return self.canvas.bits

    def joint_bits(self, joint: int) -> int:
        """Total bits per sample over a joint's animated sub-tracks, summed over segments."""
        b = self.canvas.bits[:, joint, :]
        return int(np.where(b > 0, b, 0).sum())

    def _on_result(self) -> None:
        self.canvas._refresh_data()
        r = self.canvas.result
        if r is None:
            self.summary.setText("Bit rates appear after the first compression.")
            return
        if r.costs is None:
            self.summary.setText(not_a_bit_rate_codec(r.codec_name))
            return
        source = self.canvas.source()
        if source == "B-A" and self.canvas.diff is None:
            self.summary.setText(
                "B \u2212 A: A and B do not share their segments (another level or codec), "
                "so cells cannot be compared; showing B."
            )
            return
        if self.canvas.diff is not None:
            d = self.canvas.diff
            self.summary.setText(
                f"B \u2212 A bits per component: {int((d < 0).sum())} cells fewer "
                f"(blue), {int((d > 0).sum())} more (red), total {int(d.sum()):+d}"
            )
            return
        anim = self.bits[self.bits > 0]
        mean = f"{anim.mean():.1f}" if anim.size else "–"
        prefix = "A: " if source == "A" else ""
        self.summary.setText(
            f"{prefix}{self.bits.shape[1]} joints × {self.bits.shape[0]} segments · "
            f"mean {mean} bits/component over animated cells"
        )

    def _on_selection(self) -> None:
        if self.when_shown.stale:  # drawn with the result when shown
            return
        self.canvas.update()
        j = self.document.selection
        if j is not None and j < len(self.canvas.row_of):
            y = HEADER_HEIGHT + int(self.canvas.row_of[j]) * ROW_HEIGHT
            self.scroll.ensureVisible(0, y + ROW_HEIGHT // 2, 0, HEADER_HEIGHT + ROW_HEIGHT)
