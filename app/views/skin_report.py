"""The skin report: is the character's skin within budget, and is each joint's shell honest?

Per joint, the codec's shell error (what the optimiser keeps within precision) against the
true error of the vertices the joint drives most (codec.measure.vertex_error), at sample times.
A ratio under 1 means the shell under-estimates: the codec believes the joint is within
budget while its skin moves more. Under-estimating joints come first; every column sorts.
Clicking a row selects the joint, double-clicking also jumps to the time of its worst
vertex. The table exports as CSV and a button takes the shell distances from the mesh, both
as intents the controller carries out (`export_requested`, `settings_edited`). Only reads
the result: the numbers are the codec's (codec.result_tables.skin_report_rows).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from app.qt.export_folder import export_folder
from app.qt.label_fence import LabelFence
from app.views.panel import LATER, Panel, follow_document
from codec.result_tables import skin_report_rows

GOOD, BAD = "#1e8449", "#c0392b"
UNDER_BACKGROUND = QColor(192, 57, 43, 60)
COLUMNS = (
    ("name", "Joint", "The joint; its vertices are those it moves most"),
    ("vertices", "Vertices", "Vertices whose strongest influence is this joint"),
    ("shell_distance", "Shell (cm)", "The shell distance the codec used for this joint"),
    (
        "mesh_shell_distance",
        "Mesh shell (cm)",
        "The shell distance the mesh gives: the farthest vertex the joint moves with weight "
        "over 0.1, in its bind space",
    ),
    ("shell_max_error", "Shell error (cm)", "Largest error on the joint's shell at samples"),
    (
        "vertex_max_error",
        "True error (cm)",
        "Largest distance between raw and lossy skin of the joint's vertices, at samples",
    ),
    (
        "shell_to_vertex_ratio",
        "Shell / true",
        "Shell error over true error: under 1, the shell under-estimates the skin's error",
    ),
    (
        "vertex_budget_fraction",
        "True / budget",
        "True error over the joint's precision: over 100 %, the skin is over budget",
    ),
    ("vertex_worst_time", "Worst (s)", "When the joint's worst vertex is worst"),
)
EXPORT = "skin_csv"  # the controller's name for this panel's export
NAN_KEY = math.inf  # joints without vertices sort after every number, up or down


class _Item(QTableWidgetItem):
    """A cell that sorts by its number (NaN last) and shows it formatted."""

    def __init__(self, text: str, key: float | str) -> None:
        super().__init__(text)
        self.key = key
        self.setFlags(self.flags() & ~Qt.ItemFlag.ItemIsEditable)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        if isinstance(other, _Item) and type(self.key) is type(other.key):
            return self.key < other.key  # type: ignore[operator]
        return super().__lt__(other)


def _number(key: str, v: float) -> tuple[str, float]:
    if isinstance(v, float) and math.isnan(v):
        return "\u2014", NAN_KEY
    if key == "shell_to_vertex_ratio":
        return ("\u221e" if math.isinf(v) else f"{v:.3g}"), v
    if key == "vertex_budget_fraction":
        return f"{100 * v:.1f} %", v
    if key == "vertex_worst_time":
        return f"{v:.3f}", v
    if key == "vertices":
        return f"{int(v):,}", v
    return f"{v:.4g}", v


class SkinReportPanel(Panel):
    """Dockable report of shell estimates against the skin's true error."""

    settings_edited = Signal(object)  # {"shell_from_mesh": bool}
    export_requested = Signal(str, str, object)  # kind, path, png (None)

    follows = (
        ("result_changed", LATER),
        ("clip_changed", LATER),
        ("settings_changed", "_sync_button"),
    )

    def build(self) -> None:
        document = self.document
        self._exported: Path | None = None
        self.rows: list[dict] = []
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.summary.linkActivated.connect(self._on_link)
        self.mesh_shells = QPushButton("Shells from the mesh")
        self.mesh_shells.setCheckable(True)
        self.mesh_shells.setToolTip(
            "Take every joint's shell distance from the mesh (Settings: shell distance from "
            "mesh) and compress again"
        )
        self.mesh_shells.toggled.connect(self._on_mesh_shells)
        self.export_button = QPushButton("Export CSV\u2026")
        self.export_button.setToolTip("This table, one row per joint, as CSV")
        self.export_button.clicked.connect(self._ask_and_export)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels([c[1] for c in COLUMNS])
        for i, (_, _, tip) in enumerate(COLUMNS):
            self.table.horizontalHeaderItem(i).setToolTip(tip)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        # header and three rows: the plots dock (and so the 3D view) is not held taller for it
        self.table.setMinimumHeight(4 * (self.fontMetrics().height() + 6))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setSortingEnabled(True)
        self.table.cellClicked.connect(self._on_click)
        self.table.cellDoubleClicked.connect(self._on_double_click)

        buttons = QHBoxLayout()
        buttons.addWidget(self.mesh_shells)
        buttons.addStretch(1)
        buttons.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        # fenced: as high as its lines at the panel's width (the layout squeezed it, and its
        # third line, the link to shells from the mesh and skin-strict, was clipped)
        layout.addWidget(LabelFence(self.summary))
        layout.addLayout(buttons)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.message)
        follow_document(self, ((document.clip_changed, self.message.clear),))  # old clip's

    # --- model -> view ------------------------------------------------------------------
    def refresh(self) -> None:
        self._on_result()

    def _sync_button(self) -> None:
        clip = self.document.clip
        with self.syncing:
            self.mesh_shells.setEnabled(clip is not None and bool(clip.meshes))
            self.mesh_shells.setChecked(self.document.settings.shell_from_mesh)

    def _on_result(self) -> None:
        self._sync_button()
        clip = self.document.clip
        r = self.document.result
        has_mesh = clip is not None and bool(clip.meshes)
        self.rows = skin_report_rows(r) if r is not None else []
        self.table.setVisible(has_mesh)
        self.export_button.setEnabled(bool(self.rows))
        if not has_mesh:
            self.summary.setText(
                "This clip has no skinned mesh. Open a glTF, FBX or USD file with a skin to "
                "measure the true error of its vertices against the shell estimate."
            )
            self.table.setRowCount(0)
            return
        if r is None or r.vertex_error is None:
            self.summary.setText("Compressing\u2026")
            self.table.setRowCount(0)
            return
        self.summary.setText(self._summary(r.stats))
        self._fill()

    def _summary(self, s: dict) -> str:
        worst_time = float(s["vertex_worst_time"])
        joint = int(s["vertex_worst_joint"])
        budget = (
            f"<span style='color:{GOOD}'>yes</span>"
            if s["vertex_precision_met"]
            else f"<span style='color:{BAD}'>no: {s['vertices_over_precision']:,} vertices over "
            "their strongest joint's precision</span>"
        )
        under = s["shell_underestimating_joints"]
        honest = (
            f"<span style='color:{GOOD}'>every joint's shell covers its skin</span>"
            if not under
            else f"<span style='color:{BAD}'>{len(under)} joint(s) under-estimate</span>"
            f" (lowest ratio {s['shell_to_vertex_ratio_min']:.3g} at "
            f"{s['shell_to_vertex_ratio_min_joint']})"
        )
        strict = s.get("skin_strict")
        from_mesh = self.document.mesh_shells() is not None or strict is not None
        source = "from the mesh" if from_mesh else "one value"
        hint = ""
        strict_link = "<a href='strict:on'><b>Skin strict</b></a> (every vertex within budget)"
        if not from_mesh and (under or not s["vertex_precision_met"]):
            hint = (
                f"<br><span style='color:{BAD}'>The shells under-estimate the skin:</span> "
                "<a href='mesh:on'><b>Use shells from the mesh</b></a> (each joint's shell "
                f"measured on its vertices) or {strict_link}."
            )
        elif strict is None and not s["vertex_precision_met"]:  # mesh shells still short
            hint = (
                f"<br><span style='color:{BAD}'>Shells from the mesh still leave the skin "
                f"over budget:</span> {strict_link}."
            )
        return (
            f"<b>Skin</b>: {s['num_meshes']} mesh(es), {s['num_vertices']:,} vertices. "
            f"<b>True error</b> {s['vertex_max_error']:.4g} cm at vertex "
            f"{s['vertex_worst_vertex']} of {s['vertex_worst_mesh']} "
            f"(<a href='joint:{joint}'>{s['vertex_worst_joint_name']}</a>, "
            f"<a href='worst:{joint}:{worst_time!r}'>t = {worst_time:.3f} s</a>), "
            f"p99 {s['vertex_error_p99']:.4g} cm, between samples "
            f"{s['vertex_max_error_between_samples']:.4g} cm.<br>"
            f"<b>Within budget</b>: {budget}. <b>Shells</b> ({source}): {honest}.{hint}"
            + (_skin_strict_text(strict) if strict else "")
        )

    def _fill(self) -> None:
        t = self.table
        t.setSortingEnabled(False)
        t.setRowCount(len(self.rows))
        bold = QFont()
        bold.setBold(True)
        for i, row in enumerate(self.rows):
            under = row["shell_underestimates"]
            for c, (key, _, _) in enumerate(COLUMNS):
                v = row[key]
                item = _Item(str(v), str(v).lower()) if key == "name" else _Item(*_number(key, v))
                item.setData(Qt.ItemDataRole.UserRole, int(row["joint"]))
                if key != "name":
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                if under:
                    item.setBackground(QBrush(UNDER_BACKGROUND))
                    if key == "shell_to_vertex_ratio":
                        item.setFont(bold)
                t.setItem(i, c, item)
        t.setSortingEnabled(True)
        ratio = [k for k, _, _ in COLUMNS].index("shell_to_vertex_ratio")
        t.sortItems(ratio, Qt.SortOrder.AscendingOrder)  # under-estimating first
        t.resizeColumnsToContents()

    def shown_joints(self) -> list[int]:
        """Joint indices in the table's current order (for tests and tools)."""
        return [
            int(self.table.item(i, 0).data(Qt.ItemDataRole.UserRole))
            for i in range(self.table.rowCount())
        ]

    # --- view -> model ------------------------------------------------------------------
    def _joint_at(self, row: int) -> int | None:
        item = self.table.item(row, 0)
        return None if item is None else int(item.data(Qt.ItemDataRole.UserRole))

    def _on_click(self, row: int, _column: int) -> None:
        j = self._joint_at(row)
        if j is not None:
            self.document.set_selection(j)

    def _on_double_click(self, row: int, _column: int) -> None:
        j = self._joint_at(row)
        if j is None:
            return
        self.document.set_selection(j)
        t = next((r["vertex_worst_time"] for r in self.rows if r["joint"] == j), math.nan)
        if not math.isnan(t):
            self.document.set_time(float(t))

    def _on_link(self, link: str) -> None:
        kind, _, value = link.partition(":")
        if kind == "joint":
            self.document.set_selection(int(value))
        elif kind == "mesh":
            self.settings_edited.emit({"shell_from_mesh": True})
        elif kind == "strict":
            self.settings_edited.emit({"skin_strict": True})
        elif kind == "worst":
            joint, _, t = value.partition(":")
            self.document.set_selection(int(joint))
            self.document.set_time(float(t))

    def _on_mesh_shells(self, on: bool) -> None:
        if not self.syncing:
            self.settings_edited.emit({"shell_from_mesh": bool(on)})

    # --- export -------------------------------------------------------------------------
    def export_to(self, path: str | os.PathLike[str]) -> Path | None:
        """Ask for the report as CSV; returns the file written (None when it failed: the
        panel shows why, or when nothing carried the request out)."""
        if self.document.result is None:
            return None
        self._exported = None
        self.export_requested.emit(EXPORT, os.fspath(path), None)
        return self._exported

    def show_export(self, kind: str, path: str, error: str) -> None:
        """The outcome of an export (the controller's `exported`)."""
        if kind != EXPORT:
            return
        if error:
            self.message.setText(f"<span style='color:{BAD}'>Export failed: {error}</span>")
        else:
            self._exported = Path(path)
            self.message.setText(f"Wrote {path}")

    def _ask_and_export(self) -> None:
        base = self.document.path
        stem = base.name.split(".")[0] if base is not None else "clip"
        folder = export_folder(base)  # the last export's folder
        path, _ = QFileDialog.getSaveFileName(
            self, "Export skin report", str(folder / f"{stem}.skin.csv"), "CSV (*.csv)"
        )
        if path:
            self.export_to(path)


def _skin_strict_text(k: dict) -> str:
    """The summary's skin-strict line: its promise kept or not, against the worst budget."""
    met = (
        f"<span style='color:{GOOD}'>met</span>"
        if k["met"]
        else (f"<span style='color:{BAD}'>NOT met</span>")
    )
    return (
        f"<br><b>Skin-strict</b>: {met}; worst vertex {k['worst_vertex_error']:.4g} cm of its "
        f"budget {k['worst_vertex_budget']:.4g} cm ({100 * k['worst_share']:.1f} %), "
        f"{k['rounds']} round(s), {len(k['tightened_joints'])} joint(s) tightened."
    )
