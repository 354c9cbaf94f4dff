"""Compare's controls: pin A, swap, clear, the codec of B, and what is drawn of each side.

A toolbar (and the same actions in the Compare menu). Its intents are signals the window
routes to the controller (`pin_requested`, `swap_requested`, `clear_requested`,
`codec_requested(name)`); what is drawn goes straight to the document's view switches.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from app.model.comparison import PANEL_SOURCES, registered_codecs
from app.model.document import Document
from app.qt.sync_guard import SyncGuard
from app.scene.compare_layer import RAW_COLOUR, SIDE_COLOURS
from app.views.codec_choice import mark_unavailable


def _swatch(rgba: tuple[float, ...]) -> QtGui.QIcon:
    pix = QtGui.QPixmap(12, 12)
    pix.fill(QtGui.QColor.fromRgbF(*rgba[:3], 1.0))
    return QtGui.QIcon(pix)


class CompareBar(QtWidgets.QToolBar):
    """Compare | Swap | Clear · codec · Raw A B · panels show A / B / B - A."""

    pin_requested = QtCore.Signal()
    swap_requested = QtCore.Signal()
    clear_requested = QtCore.Signal()
    codec_requested = QtCore.Signal(str)

    def __init__(self, document: Document, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__("Compare", parent)
        self.setObjectName("toolbar_compare")
        self.document = doc = document
        self.guard = SyncGuard()
        self._shown_for: bool | None = None  # the comparison state it was last shown for
        self.toggleViewAction().setText("Compare toolbar")

        self.pin_action = QtGui.QAction("Compare", self)
        self.pin_action.setToolTip(
            "Pin the result on screen as A; every later edit makes B (Ctrl+Shift+A)"
        )
        self.pin_action.setShortcut(QtGui.QKeySequence("Ctrl+Shift+A"))
        self.pin_action.triggered.connect(self.pin_requested)
        self.swap_action = QtGui.QAction("Swap A/B", self)
        self.swap_action.setToolTip("A becomes the current result and tuning, B becomes A")
        self.swap_action.setShortcut(QtGui.QKeySequence("Ctrl+Shift+W"))
        self.swap_action.triggered.connect(self.swap_requested)
        self.clear_action = QtGui.QAction("Clear", self)
        self.clear_action.setToolTip("End the comparison: back to one result")
        self.clear_action.triggered.connect(self.clear_requested)
        for act in (self.pin_action, self.swap_action, self.clear_action):
            self.addAction(act)
        self.addSeparator()

        self.codec_box = QtWidgets.QComboBox()
        self.codec_box.addItems(list(registered_codecs()))
        self.codec_box.setToolTip("The codec the current result (B) is compressed with")
        self.codec_box.currentTextChanged.connect(self._on_codec)
        self.addWidget(QtWidgets.QLabel(" codec "))
        self.addWidget(self.codec_box)
        self.addSeparator()

        self.show_boxes: dict[str, QtWidgets.QCheckBox] = {}
        for key, text, rgba, tip in (
            ("raw", "Raw", RAW_COLOUR, "Raw skeleton (R)"),
            ("A", "A", SIDE_COLOURS["A"], "A's skeleton"),
            ("B", "B", SIDE_COLOURS["B"], "B's skeleton"),
        ):
            box = QtWidgets.QCheckBox(text)
            box.setIcon(_swatch(rgba))
            box.setToolTip(tip)
            box.toggled.connect(lambda on, k=key: self._on_show(k, on))
            self.show_boxes[key] = box
            self.addWidget(box)
        self.addSeparator()
        self.addWidget(QtWidgets.QLabel(" heat map, bit rates: "))
        self.source_box = QtWidgets.QComboBox()
        self.source_box.addItems(["A", "B", "B \u2212 A"])
        self.source_box.setToolTip("What the error heat map and the bit-rate panel show")
        self.source_box.currentIndexChanged.connect(
            lambda i: doc.set_comparison_view(panel_source=PANEL_SOURCES[i])
        )
        self.addWidget(self.source_box)

        doc.comparison_changed.connect(self.sync)
        doc.result_changed.connect(self.sync)
        doc.display_changed.connect(self.sync)
        doc.settings_changed.connect(self.sync)
        doc.status_changed.connect(self.sync)
        self.sync()

    def actions_for_menu(self) -> list[QtGui.QAction]:
        """The Compare menu: the same actions as the toolbar."""
        return [self.pin_action, self.swap_action, self.clear_action]

    def _on_codec(self, name: str) -> None:
        if not self.guard and name:
            self.codec_requested.emit(name)

    def _on_show(self, key: str, on: bool) -> None:
        if self.guard:
            return
        if key == "raw":
            self.document.update_display(show_raw=on)
        else:
            self.document.set_comparison_view(**{f"show_{key.lower()}": on})

    def refresh_codecs(self) -> None:
        """Grey out again the codecs that cannot run (the acl_compressor changed)."""
        mark_unavailable(self.codec_box, self.document)

    def sync(self) -> None:
        """Copy the document into the controls (without echoing back)."""
        doc = self.document
        c = doc.comparison
        if self._shown_for != c.active:  # a row of controls only while comparing (room for
            self._shown_for = c.active  # the view); hidden by hand (View > Panels) it stays so
            self.setVisible(c.active)
        self.toggleViewAction().setEnabled(c.active)
        with self.guard:
            self.pin_action.setEnabled(doc.has_lossy())
            self.pin_action.setText("Re-pin A" if c.active else "Compare")
            busy = doc.status.running  # B is not yet what the editors say
            self.swap_action.setEnabled(c.active and doc.result is not None and not busy)
            self.clear_action.setEnabled(c.active)
            self.codec_box.setCurrentText(doc.codec)
            mark_unavailable(self.codec_box, doc)
            self.show_boxes["raw"].setChecked(doc.display.show_raw)
            self.show_boxes["A"].setChecked(c.show_a)
            self.show_boxes["B"].setChecked(c.show_b)
            for key in ("A", "B"):
                self.show_boxes[key].setEnabled(c.active)
            self.source_box.setCurrentIndex(PANEL_SOURCES.index(c.panel_source))
            self.source_box.setEnabled(c.active)
