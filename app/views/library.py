"""File > Open Library: every clip of a folder in one table, filled while a background run
compresses them (app.model.library_model), sortable, filterable and coloured on the one error
scale. Double-click a row to open that clip (with its sidecar tuning) in the window.

Batch (the window's menu): apply a rule set (a preset or a rules file) to the selected rows,
written into each clip's sidecar (codec.sidecar.append_rules) so every run resolves it as the
window and the CLI do (codec.run_settings), then the library runs again; export the selected
rows' compressed files (.ssc, settings included) into a folder, on Dask; and a
size-against-precision sweep, run as `library --sweep` runs it, drawn below the table
(app.views.library_sweep), or read from a `library --sweep --json` file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6 import QtCore, QtGui, QtWidgets

from app.model.library_model import (
    COLUMNS,
    HEADER_TIPS,
    NUMERIC,
    BackgroundLibraryRun,
    LibraryTable,
    apply_rules_to_rows,
    apply_tuning_to_rows,
    export_settings,
    open_target,
    rules_of_file,
    sweep_settings,
    tooltip_of,
)
from app.model.rule_presets import PRESETS_KEY, all_presets
from app.views.library_sweep import SweepChart
from codec.library.rows import Row
from codec.tuning import JointOverride

POLL_MS = 200  # how often finished files are taken into the table
FOLDER_KEY = "library/folder"  # QSettings: the last library folder (the picker starts there)
SWEEP = "0.001, 0.005, 0.01, 0.05, 0.1"  # the sweep's precisions first offered (cm)
WIDTHS = (220, 150, 300, 55, 65, 75, 100, 60, 95, 60, 150, 65)  # per column of COLUMNS


class LibraryTableModel(QtCore.QAbstractTableModel):
    """A Qt face on a LibraryTable (rows of what is shown, in order)."""

    def __init__(self, table: LibraryTable, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.table = table
        self.root: Path | None = None  # the library's folder, for the paths on hover

    def rowCount(self, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.table.visible)

    def columnCount(self, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: QtCore.Qt.Orientation, role: int = 0):
        if orientation != QtCore.Qt.Orientation.Horizontal:
            return None
        if role == QtCore.Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][0]
        if role == QtCore.Qt.ItemDataRole.ToolTipRole:
            return HEADER_TIPS.get(COLUMNS[section][1])
        return None

    def data(self, index: QtCore.QModelIndex, role: int = 0):
        if not index.isValid():
            return None
        row = self.table.visible[index.row()]
        key = COLUMNS[index.column()][1]
        if role == QtCore.Qt.ItemDataRole.DisplayRole:
            return self.table.text_of(row, key)
        if role == QtCore.Qt.ItemDataRole.BackgroundRole and key in ("max_error", "used"):
            r, g, b, a = self.table.rgba(row)
            return QtGui.QBrush(QtGui.QColor.fromRgbF(r, g, b, a))
        if role == QtCore.Qt.ItemDataRole.ForegroundRole and key in ("max_error", "used"):
            return QtGui.QBrush(QtGui.QColor(20, 20, 20))
        if role == QtCore.Qt.ItemDataRole.TextAlignmentRole and key in NUMERIC:
            return int(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
        if role == QtCore.Qt.ItemDataRole.ToolTipRole:
            return tooltip_of(self.root, row, key)
        return None

    def sort(self, column: int, order: QtCore.Qt.SortOrder = QtCore.Qt.SortOrder.AscendingOrder):
        self.beginResetModel()
        self.table.sort(COLUMNS[column][1], order == QtCore.Qt.SortOrder.DescendingOrder)
        self.endResetModel()

    def refresh(self) -> None:
        self.beginResetModel()
        self.endResetModel()


class LibraryDialog(QtWidgets.QDialog):
    """The library window: a folder, Run / Stop, a filter, the table and the run's progress.
    `open_requested(path, animation)` asks the main window to open a clip."""

    open_requested = QtCore.Signal(str, object)

    def __init__(self, parent: QtWidgets.QWidget | None = None, workers: int | None = None):
        super().__init__(parent)
        self.setWindowTitle("Library")
        self.resize(1100, 600)
        self.workers = workers
        self.root: Path | None = None
        self.run: BackgroundLibraryRun | None = None
        self.table = LibraryTable()
        self.model = LibraryTableModel(self.table, self)

        self.folder_label = QtWidgets.QLabel("No folder")
        self.choose_button = QtWidgets.QPushButton("Choose folder\u2026")
        self.choose_button.clicked.connect(self.choose_folder)
        self.stop_button = QtWidgets.QPushButton("Stop")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        self.filter_edit = QtWidgets.QLineEdit()
        self.filter_edit.setPlaceholderText("Filter: clip, animation, joint or error")
        self.filter_edit.textChanged.connect(self._filter)
        self.problems_box = QtWidgets.QCheckBox("Problems only")
        self.problems_box.toggled.connect(self._filter)
        self.view = QtWidgets.QTableView()
        self.view.setModel(self.model)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(-1, QtCore.Qt.SortOrder.AscendingOrder)
        self.view.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.verticalHeader().hide()
        self.view.setWordWrap(False)  # one line per clip: a library is long
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        for column, width in enumerate(WIDTHS):
            self.view.setColumnWidth(column, width)
        self.view.horizontalHeader().setStretchLastSection(True)
        # long names keep both ends ("RobotArmature|Rob...Dance"), whole on hover
        self.view.setTextElideMode(QtCore.Qt.TextElideMode.ElideMiddle)
        self.view.doubleClicked.connect(self._open_row)
        self.view.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.ExtendedSelection)
        self.progress_label = QtWidgets.QLabel("")
        self.batch_label = QtWidgets.QLabel("")  # what the last batch action did
        self.batch_label.setWordWrap(True)
        self.batch_run: BackgroundLibraryRun | None = None
        # the main window's tuning to copy: (settings, rules, clip name), None without a clip
        self.tuning_source: Callable[[], tuple[Any, tuple[JointOverride, ...], str] | None]
        self.tuning_source = lambda: None
        self.batch_kind = ""
        self.sweep_precisions: list[float] = []
        self.sweep_chart = SweepChart()
        self.sweep_chart.hide()  # until a sweep has points
        self.menu_bar = QtWidgets.QMenuBar(self)
        self._batch_menu(self.menu_bar.addMenu("&Batch"))

        top = QtWidgets.QHBoxLayout()
        top.addWidget(self.folder_label, 1)
        top.addWidget(self.choose_button)
        top.addWidget(self.stop_button)
        bar = QtWidgets.QHBoxLayout()
        bar.addWidget(self.filter_edit, 1)
        bar.addWidget(self.problems_box)
        lay = QtWidgets.QVBoxLayout(self)
        lay.setMenuBar(self.menu_bar)
        lay.addLayout(top)
        lay.addLayout(bar)
        split = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        split.addWidget(self.view)
        split.addWidget(self.sweep_chart)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        lay.addWidget(split, 1)
        lay.addWidget(self.progress_label)
        lay.addWidget(self.batch_label)

        self.timer = QtCore.QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self.poll)

    def start_folder(self) -> str:
        """Where the folder picker opens: this library's folder, else the last one opened
        (QSettings), else the home folder (never the working directory)."""
        if self.root is not None:
            return str(self.root)
        last = QtCore.QSettings().value(FOLDER_KEY, "", type=str)
        return last if last and Path(last).is_dir() else str(Path.home())

    def choose_folder(self) -> None:
        start = self.start_folder()
        folder = QtWidgets.QFileDialog.getExistingDirectory(self, "Open library", start)
        if folder:
            self.open_folder(folder)

    def open_folder(self, folder: str | Path) -> None:
        """Start a run over `folder` (a running one is stopped); the table starts empty."""
        self.stop()
        self.root = Path(folder)
        self.model.root = self.root
        QtCore.QSettings().setValue(FOLDER_KEY, str(self.root.resolve()))
        self.folder_label.setText(str(self.root))
        self.table.clear()
        self.model.refresh()
        self.run = BackgroundLibraryRun(self.root, workers=self.workers)
        self.progress_label.setText(f"0 / {len(self.run.files)} files")
        self.stop_button.setEnabled(True)
        self.run.start()
        self.timer.start()

    def poll(self) -> None:
        """Take finished files into the table; say how far the runs are."""
        busy = self._poll_batch()
        run = self.run
        if run is None:
            if not busy:
                self.timer.stop()
            return
        rows = run.drain()
        if rows:
            self.model.beginResetModel()
            self.table.add(rows)
            self.model.endResetModel()
        p = run.progress
        left = int(p.seconds_left)
        text = (
            f"{p.files} / {p.total} files \u00b7 {p.clips_per_second:.1f} clips/s \u00b7 "
            f"about {left // 60}:{left % 60:02d} left"
        )
        if p.finished and not run.queue:
            if not busy:
                self.timer.stop()
                self.stop_button.setEnabled(False)
            text = f"{p.files} / {p.total} files" + (
                f" \u00b7 failed: {p.message}"
                if p.message
                else " \u00b7 stopped"
                if p.interrupted
                else " \u00b7 done"
            )
        self.progress_label.setText(text)

    def stop(self) -> None:
        for run in (self.run, self.batch_run):
            if run is not None and not run.progress.finished:
                run.stop()

    @property
    def run_finished(self) -> bool:
        return self.run is not None and self.run.progress.finished and not self.timer.isActive()

    def _filter(self) -> None:
        self.model.beginResetModel()
        self.table.set_filter(self.filter_edit.text(), self.problems_box.isChecked())
        self.model.endResetModel()

    def _open_row(self, index: QtCore.QModelIndex) -> None:
        if self.root is None or not index.isValid():
            return
        path, animation = open_target(self.root, self.table.visible[index.row()])
        self.open_requested.emit(str(path), animation)

    # --- batch actions ------------------------------------------------------------------
    def _batch_menu(self, menu: QtWidgets.QMenu) -> None:
        presets = menu.addMenu("Apply rule &preset to selected rows")
        presets.aboutToShow.connect(lambda: self._fill_presets(presets))
        menu.addAction("Apply &rules file to selected rows\u2026", self.ask_rules_file)
        self.tuning_action = menu.addAction(
            "Apply the main window's &tuning to selected rows", self.apply_tuning
        )
        menu.aboutToShow.connect(self._name_tuning)
        menu.addSeparator()
        menu.addAction("&Export selected rows (.ssc)\u2026", self.ask_export)
        menu.addSeparator()
        menu.addAction("Size against precision &sweep\u2026", self.ask_sweep)
        menu.addAction("&Open sweep JSON (library --sweep --json)\u2026", self.ask_sweep_json)

    def selected_rows(self) -> list[Row]:
        """The rows selected in the table (all shown rows when none is)."""
        picked = sorted({i.row() for i in self.view.selectionModel().selectedRows()})
        return [self.table.visible[i] for i in picked] or list(self.table.visible)

    def _name_tuning(self) -> None:
        """The tuning action names the clip whose tuning it copies (disabled without one)."""
        tuning = self.tuning_source()
        self.tuning_action.setEnabled(tuning is not None)
        self.tuning_action.setText(
            f"Apply {tuning[2]}'s &tuning to selected rows"
            if tuning is not None
            else "Apply the main window's &tuning to selected rows (no clip open)"
        )

    def apply_tuning(self, rows: list[Row] | None = None) -> None:
        """The main window's tuning (global settings and every rule, as its sidecar holds
        them) saved as each row's own, then the library runs again with it."""
        tuning = self.tuning_source()
        if self.root is None or tuning is None:
            return
        settings, overrides, name = tuning
        done, failed = apply_tuning_to_rows(
            self.root, self.selected_rows() if rows is None else rows, settings, overrides
        )
        text = f"Applied {name}'s tuning to {done} row(s)"
        if failed:
            text += f"; {len(failed)} failed: " + "; ".join(failed[:3])
        self.open_folder(self.root)
        self.batch_label.setText(text)

    def _fill_presets(self, menu: QtWidgets.QMenu) -> None:
        menu.clear()
        user = QtCore.QSettings().value(PRESETS_KEY, "", type=str)
        for name, rules in all_presets(user).items():
            menu.addAction(name, lambda r=rules: self.apply_rules(r))

    def ask_rules_file(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self, "Rules to apply", self.start_folder(), "Rules or sidecar (*.json)"
        )
        if path:
            self.apply_rules_file(path)

    def apply_rules_file(self, path: str | Path) -> None:
        """The rules of a rules file (or sidecar, as --overrides reads them) to the rows."""
        from codec.errors import ShellscopeError

        try:
            rules = rules_of_file(path)
        except ShellscopeError as e:
            self.batch_label.setText(f"Cannot use {path}: {e}")
            return
        self.apply_rules(rules)

    def apply_rules(self, rules: tuple[JointOverride, ...], rows: list[Row] | None = None) -> None:
        """Append `rules` to each row's sidecar (its animation's entry), then run the library
        again: the rows change as the window and the CLI would compress them."""
        if self.root is None or not rules:
            return
        done, failed = apply_rules_to_rows(
            self.root, self.selected_rows() if rows is None else rows, rules
        )
        patterns = ", ".join(r.pattern for r in rules)
        text = f"Applied {len(rules)} rule(s) ({patterns}) to {done} row(s)"
        if failed:
            text += f"; {len(failed)} failed: " + "; ".join(failed[:3])
        self.open_folder(self.root)
        self.batch_label.setText(text)

    def ask_export(self) -> None:
        folder = QtWidgets.QFileDialog.getExistingDirectory(
            self, "Export the selected rows' .ssc into", self.start_folder()
        )
        if folder:
            self.export_rows(folder)

    def export_rows(self, folder: str | Path, rows: list[Row] | None = None) -> None:
        """Compress the rows again on Dask and write each one's .ssc into `folder`."""
        if self.root is None:
            return
        rows = [r for r in (self.selected_rows() if rows is None else rows) if not r.get("error")]
        settings, files = export_settings(self.root, rows, folder)
        self._start_batch("export", [settings], files)

    def ask_sweep(self) -> None:
        text, ok = QtWidgets.QInputDialog.getText(
            self, "Size against precision", "Precisions (cm), comma separated:", text=SWEEP
        )
        if ok:
            try:
                precisions = [float(t) for t in text.replace(";", ",").split(",") if t.strip()]
            except ValueError:
                self.batch_label.setText(f"Not a list of numbers: {text}")
                return
            self.sweep(precisions)

    def sweep(self, precisions: list[float]) -> None:
        """Every clip at each precision (as `library --sweep`), the chart drawn when done."""
        if self.root is None:
            return
        good = sorted({p for p in precisions if p > 0 and p == p})
        if not good:
            self.batch_label.setText("A sweep needs precisions > 0")
            return
        self.sweep_precisions = good
        self._start_batch("sweep", sweep_settings(good), None)

    def ask_sweep_json(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self, "A library --sweep --json file", self.start_folder(), "JSON (*.json)"
        )
        if path:
            self.open_sweep_json(path)

    def open_sweep_json(self, path: str | Path) -> None:
        from codec.errors import ShellscopeError
        from codec.library.outputs import read_sweep_json

        try:
            self.show_sweep(read_sweep_json(path))
        except ShellscopeError as e:
            self.batch_label.setText(str(e))
            return
        self.batch_label.setText(f"Sweep of {path}")

    def show_sweep(self, sweep: list[dict]) -> None:
        self.sweep_chart.set_sweep(sweep)
        self.sweep_chart.show()

    def _start_batch(self, kind: str, settings: list, files: list | None) -> None:
        if self.batch_run is not None and not self.batch_run.progress.finished:
            self.batch_label.setText("A batch action is running; wait for it or Stop")
            return
        assert self.root is not None
        self.batch_kind = kind
        self.batch_run = BackgroundLibraryRun(
            self.root, self.workers, settings=settings, files=files, cached=kind != "export"
        )
        self.batch_label.setText(f"{kind}: 0 / {self.batch_run.progress.total} files")
        self.stop_button.setEnabled(True)
        self.batch_run.start()
        self.timer.start()

    def _poll_batch(self) -> bool:
        """Progress of the batch run; True while it goes on."""
        run = self.batch_run
        if run is None:
            return False
        run.drain()
        p = run.progress
        if not p.finished:
            self.batch_label.setText(f"{self.batch_kind}: {p.files} / {p.total} files")
            return True
        self.batch_run = None
        if p.message:
            self.batch_label.setText(f"{self.batch_kind} failed: {p.message}")
        elif self.batch_kind == "export":
            rows = [r for rs in run.results for r in rs]
            wrote = [r for r in rows if r.get("exported")]
            bad = [r for r in rows if r.get("error")]
            folder = Path(wrote[0]["exported"]).parent if wrote else ""
            self.batch_label.setText(
                f"Exported {len(wrote)} .ssc into {folder}"
                + (f"; {len(bad)} failed: {bad[0]['error']}" if bad else "")
            )
        else:
            from codec.library.outputs import sweep_points

            points = sweep_points(list(zip(self.sweep_precisions, run.results, strict=False)))
            self.show_sweep(points)
            self.batch_label.setText(
                f"Sweep of {len(points)} precisions" + (" (stopped)" if p.interrupted else "")
            )
        return False

    def closeEvent(self, ev: QtGui.QCloseEvent) -> None:
        self.stop()
        super().closeEvent(ev)
