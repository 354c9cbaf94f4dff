"""Stats while comparing: one row per stat of the Stats sheet, columns A | B | change.

The rows are the Stats panel's (`app.views.stat_rows.SECTIONS`), then the sub-track counts; the
change column is B against A (`app.model.comparison.stat_change`), green where B is smaller or more
accurate, red where it costs more. Double-clicking a worst time jumps there.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QShowEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from app.model.comparison import auto_tried_text, codec_label, stat_change, stats_of
from app.model.document import Document
from app.model.error_scale import format_cm, format_seconds
from app.qt.handler_guard import survives
from app.qt.when_shown import WhenShown
from app.views.panel import follow_document
from app.views.stat_rows import LABELS, SECTIONS

GOOD, BAD = QColor("#1e8449"), QColor("#c0392b")
LOWER_IS_BETTER = {
    "compressed_size",
    "file_size",
    "metadata_size",
    "max_error",
    "error_p99",
    "max_error_between_samples",
    "compression_time",
}
HIGHER_IS_BETTER = {"compression_ratio"}
SHORT = {  # the table is three values wide in a narrow dock: shorter row names
    "compressed_size": "Compressed",
    "file_size": ".ssc file",
    "max_error_between_samples": "Max between",
    "worst_time_between_samples": "Time between",
    "error_p99": "99th pct.",
    "compression_time": "Time",
    "precision_met": "Precision met",
    "num_stripped_keyframes": "Stripped keys",
}
SIZE_KEYS = {"raw_size", "compressed_size", "metadata_size", "file_size"}
ERROR_KEYS = {"max_error", "error_p99", "max_error_between_samples"}


def rows() -> list[tuple[str, str]]:
    """(key, label) of every row: the Stats sheet's keys, then sub-track counts."""
    out = [(key, SHORT.get(key, LABELS[key])) for keys in SECTIONS.values() for key in keys]
    for sub, short in (("rotation", "rot."), ("translation", "trans."), ("scale", "scale")):
        for kind in ("default", "constant", "animated"):  # "translation constant" set the
            out.append((f"sub_tracks/{sub}/{kind}", f"{short} {kind}"))  # column's width
    return out


def value_of(stats: dict[str, Any], key: str) -> Any:
    """A stats value by key, `a/b/c` reaching into nested dicts; None when absent."""
    if key == "num_segments" and key not in stats:
        return stats.get("segmenting", {}).get("num_segments")
    value: Any = stats
    for part in key.split("/"):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def text_of(key: str, value: Any, stats: dict[str, Any]) -> str:
    if value is None:
        return "\u2013"
    if key in SIZE_KEYS:
        n = int(value)
        return f"{n / 1024:.1f} KiB" if n >= 10 * 1024 else f"{n:,} B"
    if key in ERROR_KEYS:  # cm, as the column header says
        return format_cm(float(value), digits=3).removesuffix(" cm")  # never reads as a budget
    if key == "compression_ratio":
        return f"{float(value):.2f} : 1"
    if key == "worst_track":
        return str(stats.get("worst_track_name", value))
    if key == "codec":
        return codec_label(stats)  # "auto → curve" for a side auto made
    if key in ("worst_time", "worst_time_between_samples", "duration"):
        return f"{float(value):.4f} s"
    if key == "compression_time":
        return format_seconds(float(value))
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


class CompareStatsTable(QTableWidget):
    """A | B | change for every stats row of the document's comparison."""

    wants_width = Signal(int)  # the width that shows every column whole

    def __init__(self, document: Document) -> None:
        self.keys = rows()
        super().__init__(len(self.keys), 4)
        self.document = document
        self.setHorizontalHeaderLabels(["errors in cm", "A", "B", "change"])
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(20)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        header = self.horizontalHeader()
        # A, B and the change sized to their figures (fit_width), never cut: the row names
        # take what is left and elide when the dock is narrow (1280x800)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(False)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        for row, (_, label) in enumerate(self.keys):
            item = QTableWidgetItem(label)
            item.setToolTip(label)  # whole, when a narrow dock elides it
            self.setItem(row, 0, item)
        self.cellDoubleClicked.connect(self._on_double_click)
        # hidden while nothing is compared (the Stats sheet shows instead): results wait
        self.when_shown = WhenShown(self, self.refresh)
        request = self.when_shown.request
        follow_document(
            self, ((document.comparison_changed, request), (document.result_changed, request))
        )
        self.when_shown.request()

    @survives
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.when_shown.shown()

    def cell_text(self, key: str, column: int, tip: bool = False) -> str:
        """What row `key` shows in column 0 (A), 1 (B) or 2 (change), or its tooltip (the
        full value; for the change, the signed difference), for tests and tools."""
        item = self.item([k for k, _ in self.keys].index(key), column + 1)
        if item is None:
            return ""
        return item.toolTip() if tip else item.text()

    def refresh(self) -> None:
        doc = self.document
        sa, sb = stats_of(doc.side_result("A")), stats_of(doc.side_result("B"))
        for row, (key, _) in enumerate(self.keys):
            va, vb = value_of(sa, key), value_of(sb, key)
            rate = sb.get("sample_rate") if sb else None
            change = stat_change(key, va, vb, rate) if sa and sb else ""
            if key in ("worst_track", "level") and va is not None and vb is not None:
                change = "" if va == vb else "changed"
            # the column shows the percentage (a time: the frames); the tooltip both
            short = change.rsplit("(", 1)[-1].rstrip(")") if "(" in change else change
            short = short.replace(" frames", " fr")  # narrow: B and the change fit at 1280
            texts = (text_of(key, va, sa), text_of(key, vb, sb), short)
            tips = [str(va), str(vb), change]  # the full values and the signed difference
            if key == "codec":  # what auto tried on each side
                tips[:2] = [auto_tried_text(st) or str(v) for st, v in ((sa, va), (sb, vb))]
            for col, text in enumerate(texts):
                item = QTableWidgetItem(text)
                item.setToolTip(tips[col])
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if col == 2 and isinstance(va, int | float) and isinstance(vb, int | float):
                    better = (key in LOWER_IS_BETTER and vb < va) or (
                        key in HIGHER_IS_BETTER and vb > va
                    )
                    worse = (key in LOWER_IS_BETTER and vb > va) or (
                        key in HIGHER_IS_BETTER and vb < va
                    )
                    if better or worse:
                        item.setForeground(QBrush(GOOD if better else BAD))
                self.setItem(row, col + 1, item)
        self.fit_width()

    def fit_width(self) -> None:
        """Say how wide its four columns' contents are (`wants_width`): the window widens
        the Stats dock to it while comparing (at 1280x800 B and the change were cut)."""
        header = self.horizontalHeader()
        widths = [
            max(self.sizeHintForColumn(c), header.sectionSizeHint(c)) + 4
            for c in range(self.columnCount())
        ]
        for c, w in enumerate(widths[1:], start=1):  # the figures whole; the names stretch
            if header.sectionSize(c) != w:
                header.resizeSection(c, w)
        need = sum(widths) + 2 * self.frameWidth() + self.verticalScrollBar().sizeHint().width()
        self.wants_width.emit(need)

    def _on_double_click(self, row: int, column: int) -> None:
        key = self.keys[row][0]
        side = "A" if column == 1 else "B"
        stats = stats_of(self.document.side_result(side))
        if key in ("worst_time", "worst_time_between_samples") and stats.get(key) is not None:
            self.document.set_time(float(stats[key]))
        elif key == "worst_track" and stats.get("worst_track") is not None:
            self.document.set_selection(int(stats["worst_track"]))
