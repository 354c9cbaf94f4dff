"""Help > Keyboard shortcuts: what every key and mouse gesture does, read from the menus.

The table is built from the window's own actions, so it can never list a key that does
nothing or miss one that was added later.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

MOUSE = (
    ("3D view", "Left drag", "Orbit"),
    ("3D view", "Middle drag, Ctrl + left drag", "Pan"),
    ("3D view", "Wheel", "Zoom (F frames the clip again)"),
    ("3D view", "Click a joint", "Select it"),
    ("Timeline", "Drag", "Scrub (continuous time, between samples too)"),
    ("Error, heat map", "Click or drag the orange cursor", "Jump in time (and select a joint)"),
    ("Joints", "Double-click precision, shell or rounding", "Override that joint"),
)


def shortcut_rows(menu_bar: QtWidgets.QMenuBar) -> list[tuple[str, str, str]]:
    """(menu path, keys, action) of every menu action that has a shortcut, in menu order."""
    rows: list[tuple[str, str, str]] = []

    def walk(menu: QtWidgets.QMenu, path: str) -> None:
        for act in menu.actions():
            sub = act.menu()
            name = act.text().replace("&", "").replace("\u2026", "")
            if sub is not None:
                walk(sub, f"{path} \u203a {name}")
            elif act.shortcuts():
                keys = ", ".join(
                    k.toString(QtGui.QKeySequence.SequenceFormat.NativeText)
                    for k in act.shortcuts()
                )
                rows.append((path, keys, name))

    for act in menu_bar.actions():
        if act.menu() is not None:
            walk(act.menu(), act.text().replace("&", ""))
    return rows


class ShortcutsDialog(QtWidgets.QDialog):
    def __init__(self, menu_bar: QtWidgets.QMenuBar, parent: QtWidgets.QWidget) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.rows = shortcut_rows(menu_bar)
        self.table = QtWidgets.QTableWidget(len(self.rows) + len(MOUSE), 3)
        self.table.setHorizontalHeaderLabels(["Where", "Keys or mouse", "Does"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.NoSelection)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(QtCore.Qt.TextElideMode.ElideNone)
        for r, (where, keys, what) in enumerate([*self.rows, *MOUSE]):
            for c, text in enumerate((where, keys, what)):
                self.table.setItem(r, c, QtWidgets.QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setStretchLastSection(True)
        close = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.close)
        lay = QtWidgets.QVBoxLayout(self)
        lay.addWidget(self.table)
        lay.addWidget(close)
        width = sum(self.table.columnWidth(c) for c in range(3)) + 60
        self.resize(min(max(width, 520), 900), 560)
