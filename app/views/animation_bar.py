"""The animation switcher: which animation of a multi-animation file (glTF, FBX, USD) is on
screen, and the others to switch to in place.

A toolbar (shown only for a file holding several animations) and the same choices in
File > Animation. Its intents are signals the window routes: `animation_requested(name)`
opens that animation of the same file (with its own tuning from the sidecar),
`apply_all_requested` saves the tuning on screen for every animation of the file.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from app.qt.sync_guard import SyncGuard

APPLY_ALL = "Apply this tuning to all animations"


class AnimationBar(QtWidgets.QToolBar):
    """Animation [Walk v] · Apply this tuning to all animations."""

    animation_requested = QtCore.Signal(str)
    apply_all_requested = QtCore.Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__("Animation", parent)
        self.setObjectName("toolbar_animation")
        self.guard = SyncGuard()
        self.names: list[str] = []
        self.addWidget(QtWidgets.QLabel(" Animation "))
        self.box = QtWidgets.QComboBox()
        self.box.setToolTip("The animation of this file on screen; choose another to open it")
        self.box.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.box.currentTextChanged.connect(self._chosen)
        self.addWidget(self.box)
        self.apply_all_action = QtGui.QAction(APPLY_ALL, self)
        self.apply_all_action.setToolTip(
            "Save the tuning on screen (settings, codec and rules) in the sidecar as the tuning "
            "of every animation of this file"
        )
        self.apply_all_action.triggered.connect(self.apply_all_requested)
        self.addAction(self.apply_all_action)
        self.menu = QtWidgets.QMenu("A&nimation", parent)
        self.group = QtGui.QActionGroup(self)
        self.toggleViewAction().setText("Animation toolbar")
        self.show_animations([], None)

    def show_animations(self, names: list[str], current: str | None) -> None:
        """The file's animations (none or one: the toolbar hides) and the one on screen."""
        with self.guard:
            if names != self.names:
                self.names = list(names)
                self.box.clear()
                self.box.addItems(self.names)
            self.box.setCurrentText(current or "")
        self.menu.clear()
        for name in self.names:
            act = self.menu.addAction(name, lambda n=name: self._chosen(n))
            act.setCheckable(True)
            act.setChecked(name == current)
            self.group.addAction(act)
        self.menu.addSeparator()
        self.menu.addAction(self.apply_all_action)
        several = len(self.names) > 1
        self.menu.setEnabled(several)
        self.apply_all_action.setEnabled(several)
        self.toggleViewAction().setEnabled(several)
        self.setVisible(several)

    def _chosen(self, name: str) -> None:
        if not self.guard and name:
            self.animation_requested.emit(name)
