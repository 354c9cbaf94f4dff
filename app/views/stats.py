"""Stats of the current compression, what changed since the previous one, and the exports.

Everything is read from `result.stats` (ACL key names, filled by the codec), so the numbers
here are the numbers the JSON export and `python -m codec compress --json` print. The worst
joint and time are links: clicking selects the joint and jumps to the time. The export buttons
ask for a file name and emit `export_requested`; the controller writes the file.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.model.comparison import auto_tried_text, codec_label
from app.model.error_scale import MINUS, format_cm, format_rate, format_seconds, round_up
from app.qt.export_folder import export_folder
from app.qt.label_fence import LabelFence
from app.qt.plot_cache import cache_drawings
from app.views.panel import LATER, Panel, follow_document
from app.views.stat_rows import LABELS, SECTIONS
from codec.codecs.base import SUB_TRACKS
from codec.result import Result

GOOD, BAD = "#1e8449", "#c0392b"
# beside "Precision met: yes" a large error between samples read as a contradiction
TIPS = {
    "precision_met": "The budget is checked at the sample times (ACL's measure): every "
    "joint's error at every sample is within its precision",
    "max_error_between_samples": "The worst error between samples (rounding none): shown, "
    "not held to the budget, which is checked at the samples",
    "worst_time_between_samples": "When the worst error between samples happens: click to go there",
}
EXPORTS = ("stats", "csv", "lossy", "screenshot")  # the controller's names for them


def _bytes(n: float) -> str:
    return f"{n / 1024:.1f} KiB ({int(n):,} B)" if n >= 1024 else f"{int(n)} B"


def change_text(previous: Result | None, current: Result | None) -> str:
    """One rich-text line: how size and max error moved from `previous` to `current`."""
    if current is None:
        return ""
    size, err = current.stats.get("compressed_size"), current.stats.get("max_error")
    if previous is None or size is None or err is None:
        return "Change: no previous result to compare with"
    old_size, old_err = previous.stats.get("compressed_size"), previous.stats.get("max_error")
    if old_size is None or old_err is None:
        return "Change: no previous result to compare with"
    ds, de = int(size) - int(old_size), float(err) - float(old_err)
    pct = 100.0 * ds / old_size if old_size else 0.0
    size_col = GOOD if ds < 0 else BAD if ds > 0 else "inherit"
    err_col = GOOD if de < 0 else BAD if de > 0 else "inherit"
    size = f"{ds:+,} B ({pct:+.1f} %)".replace("-", MINUS)
    # "max error −27.36e-9 cm" read as the max error itself: each figure is marked a change
    return (
        f"Change since the last result: size \u0394 <span style='color:{size_col}'>{size}</span>"
        f" · max error \u0394 <span style='color:{err_col}'>{format_cm(de, signed=True)}</span>"
    )


class StatsPanel(Panel):
    """Dockable stats sheet with a bit-rate histogram and export buttons."""

    export_requested = Signal(str, str, object)  # kind, path, PNG bytes for a screenshot

    follows = (
        ("result_changed", LATER),
        ("clip_changed", LATER),
        ("comparison_changed", "_on_comparison"),
    )

    def build(self) -> None:
        document = self.document
        self._exported: Path | None = None
        self._measured = ""
        self.values: dict[str, QLabel] = {}
        self.track_counts: dict[tuple[str, str], QLabel] = {}
        self.export_buttons: dict[str, QPushButton] = {}

        self.change = QLabel()
        self.change.setTextFormat(Qt.TextFormat.RichText)
        self.change.setWordWrap(True)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(self._sheet())
        self.export_error = QLabel()
        self.export_error.setWordWrap(True)

        from app.views.compare_stats import CompareStatsTable

        self.sheet_scroll = scroll
        self.compare_table = CompareStatsTable(document)  # A | B | change while comparing
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(LabelFence(self.change))  # a new text re-lays out no more than it must
        layout.addWidget(scroll, 1)
        layout.addWidget(self.compare_table, 1)
        # the outcome above the buttons: its lines grow up into the sheet, the buttons stay
        # where the pointer is (below it they moved with every wrapped "Wrote ..." line)
        layout.addWidget(self.export_error)
        layout.addLayout(self._export_buttons())

        follow_document(self, ((document.clip_changed, self.export_error.clear),))  # old clip's
        self._on_comparison()

    def refresh(self) -> None:
        self._on_result()

    def _on_comparison(self) -> None:
        """While comparing the sheet gives way to the A | B | change table."""
        comparing = self.document.comparison.active
        self.compare_table.setVisible(comparing)
        self.sheet_scroll.setVisible(not comparing)

    def _sheet(self) -> QWidget:
        """The stats in groups, the sub-track counts and the bit-rate histogram."""
        sheet = QWidget()
        sheet_layout = QVBoxLayout(sheet)
        sheet_layout.setContentsMargins(0, 0, 0, 0)
        for title, keys in SECTIONS.items():
            box = QGroupBox(title)
            form = QFormLayout(box)
            form.setContentsMargins(6, 4, 6, 4)
            form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
            for key in keys:
                value = QLabel()
                value.setWordWrap(True)
                value.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
                value.linkActivated.connect(self._on_link)
                self.values[key] = value
                value.setToolTip(TIPS.get(key, ""))
                form.addRow(LABELS[key], value)
            sheet_layout.addWidget(box)

        tracks = QGroupBox("Sub-tracks")
        grid = QGridLayout(tracks)
        for c, kind in enumerate(("default", "constant", "animated")):
            grid.addWidget(QLabel(f"<b>{kind}</b>"), 0, c + 1, Qt.AlignmentFlag.AlignRight)
        for r, sub in enumerate(SUB_TRACKS):
            grid.addWidget(QLabel(sub), r + 1, 0)
            for c, kind in enumerate(("default", "constant", "animated")):
                label = QLabel()
                grid.addWidget(label, r + 1, c + 1, Qt.AlignmentFlag.AlignRight)
                self.track_counts[(sub, kind)] = label
        sheet_layout.addWidget(tracks)

        hist_box = QGroupBox("Bit rates (animated sub-track segments)")
        hist_layout = QVBoxLayout(hist_box)
        self.histogram = pg.PlotWidget(background="w")
        self.histogram.setMenuEnabled(False)
        self.histogram.setMouseEnabled(x=False, y=False)
        self.histogram.setLabel("bottom", "bits per component")
        self.histogram.setMinimumHeight(140)
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.8, brush=(60, 120, 200))
        self._hist_ranges: tuple | None = None  # the (x, y) ranges last set
        self.histogram.addItem(self.bars)
        cache_drawings(
            [self.bars, self.histogram.getAxis("left"), self.histogram.getAxis("bottom")]
        )
        hist_layout.addWidget(self.histogram)
        sheet_layout.addWidget(hist_box)
        sheet_layout.addStretch(1)
        return sheet

    def _export_buttons(self) -> QGridLayout:
        buttons = QGridLayout()
        buttons.setSpacing(4)
        for i, (key, text, tip) in enumerate(
            (
                ("stats", "Stats JSON…", "ACL key names"),
                ("csv", "Joints CSV…", "one row per joint: settings, storage, error"),
                (
                    "lossy",
                    "Lossy clip…",
                    "the decoded clip as ACL SJSON, BVH, USD, or a copy of the glTF or USD "
                    "source; measured in the file and kept within precision",
                ),
                ("screenshot", "Screenshot…", "the whole window as PNG"),
            )
        ):
            b = QPushButton(text)
            b.setToolTip(f"Export {tip}")
            b.clicked.connect(lambda _=False, k=key: self._ask_and_export(k))
            buttons.addWidget(b, i // 2, i % 2)
            self.export_buttons[key] = b
        return buttons

    # --- model -> view ------------------------------------------------------------------
    def _format(self, key: str, value: Any, stats: dict[str, Any]) -> str:
        if value is None:
            return "–"
        if key in ("raw_size", "compressed_size", "metadata_size", "file_size"):
            return _bytes(float(value))
        if key == "compression_ratio":
            return f"{float(value):.2f} : 1"
        if key == "codec" and "auto" in stats:  # what auto tried and what each cost
            tried = html.escape(auto_tried_text(stats, " \u00b7 "))
            return f"{html.escape(codec_label(stats))}<br><small>tried: {tried}</small>"
        if key == "worst_track":
            name = stats.get("worst_track_name", str(value))
            return f"<a href='joint:{int(value)}'>{name}</a> (#{int(value)})"
        if key == "worst_time":
            return f"<a href='worst:{float(value)!r}'>{float(value):.4f} s</a>"
        if key in ("max_error", "error_p99"):
            return format_cm(float(value), digits=5)
        if key == "max_error_between_samples":
            return format_cm(float(value), digits=5)
        if key == "worst_time_between_samples":
            return f"<a href='time:{float(value)!r}'>{float(value):.4f} s</a>"
        if key == "precision_met":  # the budget holds at the samples (ACL's measure)
            return (
                f"<span style='color:{GOOD}'>yes</span> (at samples)"
                if value
                else (f"<span style='color:{BAD}'>no</span> (at samples)")
            )
        if key == "num_stripped_keyframes":
            text = f"{int(value)} of {stats.get('num_stored_samples', '?')}"
            if stats.get("keyframe_stripping", {}).get("destructive"):
                text += f" <span style='color:{BAD}'>(destructive settings)</span>"
            return text
        if key == "bind_mode":
            return bind_mode_text(stats)
        if key == "compression_time":
            return format_seconds(float(value))
        if key == "duration":
            return f"{float(value):.3f} s"
        if key == "sample_rate":
            return format_rate(float(value))
        if isinstance(value, bool | np.bool_):
            return "yes" if value else "no"
        if isinstance(value, float | np.floating):
            return f"{float(value):.6g}"
        return str(value)

    def _on_result(self) -> None:
        r = self.document.result
        stats = r.stats if r is not None else {}
        for key, label in self.values.items():
            value = stats.get(key)
            if key == "num_segments" and value is None:
                value = stats.get("segmenting", {}).get("num_segments")
            label.setText(self._format(key, value, stats) if r is not None else "–")
        sub = stats.get("sub_tracks", {})
        for (name, kind), label in self.track_counts.items():
            label.setText(str(sub.get(name, {}).get(kind, "–")))
        hist = {int(k): int(v) for k, v in stats.get("bit_rate_histogram", {}).items()}
        xs = np.array(sorted(hist), dtype=float)
        self.bars.setOpts(x=xs, height=[hist[int(x)] for x in xs], width=0.8)
        if len(xs):
            ranges = (
                (min(-0.5, xs.min() - 0.5), max(xs.max(), 8) + 0.5),
                # the count axis ends on a round value: the next result, a few counts
                # apart, keeps it (each range set re-lays the plot out and draws its axis)
                (0, round_up(max(hist.values()) * 1.05)),
            )
            if ranges != self._hist_ranges:  # (set again, the same range re-lays the plot out)
                self._hist_ranges = ranges
                self.histogram.setXRange(*ranges[0])
                self.histogram.setYRange(*ranges[1])
        self.change.setText(change_text(self.document.previous_result, r))
        for b in self.export_buttons.values():
            b.setEnabled(r is not None)

    @property
    def histogram_data(self) -> dict[int, int]:
        """bits -> count as drawn."""
        opts = self.bars.opts
        return {int(x): int(h) for x, h in zip(opts["x"], opts["height"], strict=True)}

    # --- view -> model ------------------------------------------------------------------
    def _on_link(self, link: str) -> None:
        kind, _, value = link.partition(":")
        if kind == "joint":
            self.document.set_selection(int(value))
        elif kind == "time":
            self.document.set_time(float(value))
        elif kind == "worst":  # the worst time belongs to the worst joint: show both
            r = self.document.result
            if r is not None and r.stats.get("worst_track") is not None:
                self.document.set_selection(int(r.stats["worst_track"]))
            self.document.set_time(float(value))

    # --- exports ------------------------------------------------------------------------
    def export_to(self, kind: str, path: str | os.PathLike[str]) -> Path | None:
        """Ask for one export of the current result ('stats', 'csv', 'lossy' or
        'screenshot'); returns the file written (None when it failed: the panel shows why,
        or when nothing carried the request out)."""
        if self.document.result is None:
            return None
        png = None
        if kind == "screenshot":
            try:
                png = self._window_png()
            except RuntimeError as e:
                self.show_export(kind, os.fspath(path), str(e))
                return None
        self._exported = None
        self.export_requested.emit(kind, os.fspath(path), png)
        return self._exported

    def show_export(self, kind: str, path: str, error: str) -> None:
        """The outcome of an export (the controller's `exported`)."""
        if kind not in EXPORTS:
            return
        if error:
            self.export_error.setText(f"<span style='color:{BAD}'>Export failed: {error}</span>")
        else:
            self._exported = Path(path)
            note, self._measured = self._measured, ""
            # a break allowed after every folder: a long path wraps inside the dock instead
            # of widening it
            shown = html.escape(path).replace(os.sep, os.sep + "\u200b")
            self.export_error.setText(
                f"Wrote {shown}" + (f"<br>{html.escape(note)}" if note else "")
            )

    def show_export_measured(self, kind: str, text: str) -> None:
        """What an export measured in its own file (a lossy clip's error), shown with its
        outcome."""
        if kind in EXPORTS:
            self._measured = text

    def _window_png(self) -> bytes:
        from app.scene.screenshot import grab_png

        return grab_png(self.window())

    def _ask_and_export(self, kind: str) -> None:
        start, filters = self.suggestion(kind)
        path, _ = QFileDialog.getSaveFileName(self, "Export", str(start), filters)
        if path:
            self.export_to(kind, path)

    def suggestion(self, kind: str) -> tuple[Path, str]:
        """The file name an export's dialog offers (in the last export's folder) and its
        filters."""
        base = self.document.path
        stem = base.name.split(".")[0] if base is not None else "clip"
        folder = export_folder(base)
        suggestions = {
            "stats": (f"{stem}.stats.json", "JSON (*.json)"),
            "csv": (f"{stem}.joints.csv", "CSV (*.csv)"),
            "lossy": (
                f"{stem}.lossy.acl.sjson",
                "ACL SJSON (*.acl.sjson);;BVH (*.bvh);;USD (*.usda *.usdc *.usdz)",
            ),
            "screenshot": (f"{stem}.png", "PNG (*.png)"),
        }
        name, filters = suggestions[kind]
        if kind == "lossy" and base is not None and ".gl" in "".join(base.suffixes).lower():
            name = f"{stem}.lossy.glb"  # a glTF source: offer its lossy copy first
            filters = "glTF copy of the source (*.glb *.gltf);;" + filters
        elif kind == "lossy" and base is not None and ".usd" in "".join(base.suffixes).lower():
            name = f"{stem}.lossy.usdz"  # a USD source: offer its lossy copy first
            filters = "USD copy of the source (*.usda *.usdc *.usdz);;" + filters
        return folder / name, filters


def bind_mode_text(stats: dict[str, Any]) -> str:
    """acl-style's bind mode: the one kept, what the others tried cost (best, auto), and
    error compensation's size when it was tried."""
    tried = stats.get("bind_modes", {}).get("tried", {})
    mode = str(stats["bind_mode"])
    others = [
        f"{m} {_bytes(float(t['compressed_size']))}" + ("" if t["strict"] else " not strict")
        for m, t in tried.items()
        if m != mode
    ]
    text = mode + (f" (vs {', '.join(others)})" if others else "")
    screened = stats.get("bind_modes", {}).get("screened", {})
    if screened:  # auto leaves to best modes that might win by a few bytes
        auto = stats["bind_modes"].get("asked") == "auto"
        text += f"; {', '.join(screened)} not run"
        text += " (auto: --bind best tries them)" if auto else " (cannot beat strip)"
    base = stats.get("additive_base")
    if base:
        named = f" {base['name']!r}" if base["name"] else ""
        text += f": the additive alone, played on its base{named} ({base['num_samples']} samples)"
    comp = stats.get("error_compensation", {})
    if comp.get("on"):
        verdict = "kept" if comp.get("kept") else "not kept"
        text += f"; compensated {_bytes(float(comp['compressed_size']))}, {verdict}"
    clean = stats.get("default_cleaning")
    if clean and clean["num_snapped"]:
        text += (
            f"; <span style='color:{BAD}'>cleaned {clean['num_snapped']} sub-tracks: the clip "
            f"moved by up to {format_cm(clean['max_error_vs_read'], digits=5)}</span>"
        )
    return text
