"""File > Open Library: every clip of a folder in one table, filled while a background run
compresses them (app.library_model), sortable, filterable and coloured on the one error
scale. Double-click a row to open that clip (with its sidecar tuning) in the window."""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from app.library_model import COLUMNS, NUMERIC, BackgroundLibraryRun, LibraryTable, open_target

POLL_MS = 200  # how often finished files are taken into the table


class LibraryTableModel(QtCore.QAbstractTableModel):
    """A Qt face on a LibraryTable (rows of what is shown, in order)."""

    def __init__(self, table: LibraryTable, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.table = table

    def rowCount(self, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.table.visible)

    def columnCount(self, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: QtCore.Qt.Orientation, role: int = 0):
        if (
            orientation == QtCore.Qt.Orientation.Horizontal
            and role == QtCore.Qt.ItemDataRole.DisplayRole
        ):
            return COLUMNS[section][0]
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
            return row.get("error") or f"{row['path']} [{row.get('animation') or ''}]"
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
        for column, width in enumerate((300, 150, 55, 65, 75, 100, 60, 95, 60, 150, 60)):
            self.view.setColumnWidth(column, width)
        self.view.horizontalHeader().setStretchLastSection(True)
        self.view.doubleClicked.connect(self._open_row)
        self.progress_label = QtWidgets.QLabel("")

        top = QtWidgets.QHBoxLayout()
        top.addWidget(self.folder_label, 1)
        top.addWidget(self.choose_button)
        top.addWidget(self.stop_button)
        bar = QtWidgets.QHBoxLayout()
        bar.addWidget(self.filter_edit, 1)
        bar.addWidget(self.problems_box)
        lay = QtWidgets.QVBoxLayout(self)
        lay.addLayout(top)
        lay.addLayout(bar)
        lay.addWidget(self.view, 1)
        lay.addWidget(self.progress_label)

        self.timer = QtCore.QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self.poll)

    def choose_folder(self) -> None:
        start = str(self.root) if self.root else str(Path.cwd())
        folder = QtWidgets.QFileDialog.getExistingDirectory(self, "Open library", start)
        if folder:
            self.open_folder(folder)

    def open_folder(self, folder: str | Path) -> None:
        """Start a run over `folder` (a running one is stopped); the table starts empty."""
        self.stop()
        self.root = Path(folder)
        self.folder_label.setText(str(self.root))
        self.table.clear()
        self.model.refresh()
        self.run = BackgroundLibraryRun(self.root, workers=self.workers)
        self.progress_label.setText(f"0 / {len(self.run.files)} files")
        self.stop_button.setEnabled(True)
        self.run.start()
        self.timer.start()

    def poll(self) -> None:
        """Take finished files into the table; say how far the run is."""
        run = self.run
        if run is None:
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
        if self.run is not None and not self.run.progress.finished:
            self.run.stop()

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

    def closeEvent(self, ev: QtGui.QCloseEvent) -> None:
        self.stop()
        super().closeEvent(ev)
