"""The main window: the 3D view and the timeline in the centre, panels docked around, menus,
status bar with compression progress, File > Open / Open Recent / drag and drop.

Dialogs go through `Dialogs`, an object tests replace, so no modal box can hang a test run.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from PySide6 import QtCore, QtGui, QtWidgets

from app.controller import Controller
from app.document import Document, GlobalSettings
from app.sidecar import SidecarError, load_sidecar
from app.views.timeline import TimelineWidget
from app.views.viewport3d import Viewport3D
from codec.overrides import JointOverride

_KINDS = {  # file dialog filters: name -> patterns (each also .gz / .xz / .zst but .ssc)
    "BVH": ("*.bvh",),
    "glTF": ("*.gltf", "*.glb"),
    "FBX": ("*.fbx",),
    "USD": ("*.usd", "*.usda", "*.usdc", "*.usdz"),
    "ACL SJSON": ("*.acl.sjson", "*.sjson"),
}
_PACKED = tuple(f"{p}{z}" for pats in _KINDS.values() for p in pats for z in (".gz", ".xz", ".zst"))
OPEN_FILTER = ";;".join(
    [f"Animation clips ({' '.join(p for pats in _KINDS.values() for p in pats)} *.ssc "
     f"{' '.join(_PACKED)})"]
    + [f"{k} ({' '.join(v)})" for k, v in _KINDS.items()]
    + ["Compressed clips (*.gz *.xz *.zst)", "Shellscope compressed (*.ssc)", "All files (*)"]
)  # fmt: skip
CLIP_SUFFIXES = tuple(p[1:] for pats in _KINDS.values() for p in pats) + (".ssc",) + tuple(
    p[1:] for p in _PACKED
)
MAX_RECENT = 8
RECENT_KEY = "recent_files"
DEFAULT_CLIP = Path(__file__).resolve().parent.parent / "resources" / "cmu_09_02.acl.sjson"

# ---- panels of the other views (issue 5). Edit this list to add or move a panel. --------
# (module, class, dock title, area): the class is built as cls(document) (plus
# controller=... when its __init__ takes one); a module that does not exist yet is skipped.
# area is left/right/top/bottom; "<area>-tab" tabs the dock with the previous one there.
PANELS: list[tuple[str, str, str, str]] = [
    ("app.views.settings", "SettingsPanel", "Settings", "right"),
    ("app.views.stats", "StatsPanel", "Stats", "right"),
    ("app.views.joints", "JointsPanel", "Joints", "left"),
    ("app.views.error_plot", "ErrorPlotPanel", "Error", "bottom"),
    ("app.views.error_heatmap", "ErrorHeatmapPanel", "Error heat map", "bottom-tab"),
    ("app.views.bitrates", "BitRatePanel", "Bit rates", "bottom-tab"),
    ("app.views.skin_report", "SkinReportPanel", "Skin report", "bottom-tab"),
]
AREAS = {
    "left": QtCore.Qt.DockWidgetArea.LeftDockWidgetArea,
    "right": QtCore.Qt.DockWidgetArea.RightDockWidgetArea,
    "top": QtCore.Qt.DockWidgetArea.TopDockWidgetArea,
    "bottom": QtCore.Qt.DockWidgetArea.BottomDockWidgetArea,
}


class Dialogs:
    """Every question the window asks the user; tests swap in canned answers."""

    def open_path(self, parent: QtWidgets.QWidget, directory: str) -> str | None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(parent, "Open clip", directory, OPEN_FILTER)
        return path or None

    def choose_animation(self, parent: QtWidgets.QWidget, names: list[str]) -> str | None:
        name, ok = QtWidgets.QInputDialog.getItem(
            parent, "Choose animation", "This file holds several animations:", names, 0, False
        )
        return name if ok else None

    def error(self, parent: QtWidgets.QWidget, title: str, message: str) -> None:
        box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Warning, title, message,
                                    QtWidgets.QMessageBox.StandardButton.Ok, parent)  # fmt: skip
        box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()  # window-modal but not blocking: the event loop keeps running


class MainWindow(QtWidgets.QMainWindow):
    def __init__(
        self,
        document: Document | None = None,
        controller: Controller | None = None,
        dialogs: Dialogs | None = None,
    ) -> None:
        super().__init__()
        self.document = document or Document()
        self.controller = controller or Controller(self.document, parent=self)
        self.dialogs = dialogs or Dialogs()
        self.qsettings = QtCore.QSettings()
        self.open_options: dict[str, Any] = {}
        self.setWindowTitle("Shellscope")
        self.setAcceptDrops(True)
        self.resize(1280, 800)

        self.viewport = Viewport3D(self.document, self)
        self.timeline = TimelineWidget(self.document, self)
        central = QtWidgets.QWidget(self)
        lay = QtWidgets.QVBoxLayout(central)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.viewport, 1)
        lay.addWidget(self.timeline)
        self.setCentralWidget(central)
        self.setDockOptions(
            QtWidgets.QMainWindow.DockOption.AnimatedDocks
            | QtWidgets.QMainWindow.DockOption.AllowTabbedDocks
        )

        self._build_status_bar()
        self._build_menus()
        self.panels: dict[str, QtWidgets.QWidget] = {}
        self.docks: dict[str, QtWidgets.QDockWidget] = {}
        self._add_panels()
        self._size_docks()

        self.document.status_changed.connect(self._on_status)
        self.document.clip_changed.connect(self._update_title)
        self.document.clip_changed.connect(self._show_skin_report)
        self.controller.failed.connect(self._on_failed)
        # keys go to the 3D view first (text fields in panels keep their own keys)
        self.viewport.scene.setFocus()

    # --- panels (issue 5) ---------------------------------------------------------------
    def _add_panels(self) -> None:
        """Dock every panel of PANELS whose module exists (tolerant while they land)."""
        self.panel_menu.clear()
        last: dict[str, QtWidgets.QDockWidget] = {}
        for module_name, class_name, title, where in PANELS:
            try:
                module = importlib.import_module(module_name)
            except ModuleNotFoundError as exc:
                if exc.name == module_name:
                    continue
                raise
            cls = getattr(module, class_name)
            kwargs: dict[str, Any] = {}
            if "controller" in inspect.signature(cls).parameters:
                kwargs["controller"] = self.controller
            widget = cls(self.document, **kwargs)
            dock = QtWidgets.QDockWidget(title, self)
            dock.setObjectName(f"dock_{class_name}")
            # a scroll area lets a narrow dock scroll instead of widening the whole window
            scroll = QtWidgets.QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
            scroll.setWidget(widget)
            dock.setWidget(scroll)
            area, _, tab = where.partition("-")
            if tab and area in last:
                self.tabifyDockWidget(last[area], dock)
                last[area].raise_()
            else:
                self.addDockWidget(AREAS[area], dock)
                last[area] = dock
            self.panels[class_name] = widget
            self.docks[class_name] = dock
            self.panel_menu.addAction(dock.toggleViewAction())

    def _size_docks(self) -> None:
        """Give the 3D view the lion's share of the window."""
        for area, size, orient in (("bottom", 230, QtCore.Qt.Orientation.Vertical),
                                   ("left", 270, QtCore.Qt.Orientation.Horizontal),
                                   ("right", 300, QtCore.Qt.Orientation.Horizontal)):  # fmt: skip
            docks = [d for d in self.docks.values() if self.dockWidgetArea(d) == AREAS[area]]
            if docks:
                self.resizeDocks(docks[:1], [size], orient)

    # --- status bar ---------------------------------------------------------------------
    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.status_label = QtWidgets.QLabel()
        self.progress_bar = QtWidgets.QProgressBar()
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setMaximumWidth(200)
        self.progress_bar.setTextVisible(False)
        self.cancel_button = QtWidgets.QToolButton()
        self.cancel_button.setText("Cancel")
        self.cancel_button.setToolTip("Stop this compression")
        self.cancel_button.clicked.connect(self.controller.cancel)
        bar.addWidget(self.status_label, 1)
        self.units_label = QtWidgets.QLabel()  # the clip's units and up axis, always in view
        bar.addPermanentWidget(self.units_label)
        bar.addPermanentWidget(self.progress_bar)
        bar.addPermanentWidget(self.cancel_button)
        self.progress_bar.hide()
        self.cancel_button.hide()

    def _on_status(self) -> None:
        s = self.document.status
        if s.error:
            self.status_label.setText(f"{s.message}: {s.error}")
            self.status_label.setStyleSheet("color: #e05050;")
            self.status_label.setToolTip(s.error)
        else:
            self.status_label.setText(s.message)
            self.status_label.setStyleSheet("")
            self.status_label.setToolTip("")
        self.progress_bar.setVisible(s.running)
        self.cancel_button.setVisible(s.running)
        self.progress_bar.setValue(int(round(s.progress * 1000)))

    def _on_failed(self, message: str) -> None:
        self.statusBar().showMessage(f"Compression failed: {message}", 10000)

    # --- menus --------------------------------------------------------------------------
    def _action(self, menu: QtWidgets.QMenu, text: str, slot: Any,
                shortcut: str | QtGui.QKeySequence | None = None) -> QtGui.QAction:  # fmt: skip
        act = QtGui.QAction(text, self)
        if shortcut is not None:
            act.setShortcut(QtGui.QKeySequence(shortcut))
            act.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        act.triggered.connect(slot)
        menu.addAction(act)
        self.addAction(act)  # shortcuts work with the menu bar hidden too
        return act

    def _build_menus(self) -> None:
        mb = self.menuBar()
        f = mb.addMenu("&File")
        self._action(
            f, "&Open\u2026", lambda: self.open_file(), QtGui.QKeySequence.StandardKey.Open
        )
        self.recent_menu = f.addMenu("Open &Recent")
        self._rebuild_recent()
        f.addSeparator()
        self._action(f, "&Quit", self.close, QtGui.QKeySequence.StandardKey.Quit)

        v = mb.addMenu("&View")
        self._action(v, "&Frame all", lambda: self.viewport.frame_all(), "F")
        v.addSeparator()
        self._action(v, "Toggle &raw skeleton", lambda: self.document.update_display(
            show_raw=not self.document.display.show_raw), "R")  # fmt: skip
        self._action(v, "Toggle &lossy skeleton", lambda: self.document.update_display(
            show_lossy=not self.document.display.show_lossy), "E")  # fmt: skip
        shells = v.addMenu("&Shells")
        for mode in ("none", "selected", "all"):
            show = partial(self.document.update_display, shells=mode)
            self._action(shells, mode.capitalize(), show)
        self._action(v, "F&ollow selected joint", lambda: self.document.update_display(
            follow_selected=not self.document.display.follow_selected))  # fmt: skip
        self.panel_menu = v.addMenu("&Panels")

        p = mb.addMenu("&Playback")
        t = self.timeline
        self._action(p, "&Play / pause", t.toggle_play, "Space")
        self._action(p, "&Next sample", lambda: t.step(1), "Right")
        self._action(p, "P&revious sample", lambda: t.step(-1), "Left")
        self._action(p, "&First sample", t.go_home, "Home")
        self._action(p, "&Last sample", t.go_end, "End")
        self._action(p, "L&oop", t.loop_box.toggle, "L")

        c = mb.addMenu("&Compression")
        self._action(c, "&Recompress now", self.controller.compress_now, "Ctrl+R")
        self._action(c, "&Cancel", self.controller.cancel, "Esc")

    # --- opening ------------------------------------------------------------------------
    def open_file(
        self,
        path: str | Path | None = None,
        animation: str | None = None,
        tuning: dict[str, Any] | None = None,
        overrides: tuple[JointOverride, ...] | None = None,
        **options: Any,
    ) -> bool:
        """File > Open, recent files, drops and the command line all come here.

        The clip opens with the tuning saved beside it (its sidecar; defaults without one);
        `tuning` (precision, shell_distance, level) and `overrides`, as the command line
        gives them, replace what the sidecar says.
        """
        if path is None:
            start = str(self.document.path.parent) if self.document.path else str(Path.cwd())
            chosen = self.dialogs.open_path(self, start)
            if not chosen:
                return False
            path = chosen
        path = Path(path)
        opts = {**self.open_options, **options}
        try:
            if animation is None:
                names = self.controller.list_animations(path)
                if len(names) > 1:
                    animation = self.dialogs.choose_animation(self, names)
                    if animation is None:
                        return False
            if animation is not None:
                opts["animation"] = animation
            clip = self.controller.load(path, **opts)
        except Exception as exc:  # noqa: BLE001 - the reader's message is the point
            self.dialogs.error(self, "Cannot open clip", str(exc))
            self.statusBar().showMessage(f"Could not open {path.name}", 8000)
            return False
        try:
            saved, rules = load_sidecar(path)
        except SidecarError as exc:  # the clip is fine: open it untuned and say why
            self.dialogs.error(self, "Cannot use the saved tuning", str(exc))
            saved, rules = None, ()
        settings = saved or GlobalSettings()
        try:
            if tuning:
                settings = replace(settings, **tuning)
        except ValueError as exc:
            self.dialogs.error(self, "Bad settings", str(exc))
            return False
        if overrides is not None:
            rules = overrides
        self.controller.open_clip(clip, path, tuple(rules), settings)
        self._add_recent(path)
        for w in clip.warnings:
            self.statusBar().showMessage(f"{path.name}: {w}", 8000)
        return True

    def _show_skin_report(self) -> None:
        """The skin report's tab is there for clips with a skinned mesh only."""
        dock = self.docks.get("SkinReportPanel")
        clip = self.document.clip
        if dock is not None:
            dock.setVisible(clip is not None and bool(clip.meshes))

    def _update_title(self) -> None:
        p = self.document.path
        clip = self.document.clip
        units = clip.units if clip is not None else None
        self.units_label.setText(f"units: {units.short()}" if units else "")
        self.units_label.setToolTip(units.statement() if units else "")
        tag = f" [{units.short()}]" if units else ""
        self.setWindowTitle(f"{p.name}{tag} \u2014 Shellscope" if p else "Shellscope")

    def recent_files(self) -> list[str]:
        value = self.qsettings.value(RECENT_KEY, [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def _add_recent(self, path: Path) -> None:
        p = str(path.resolve())
        files = [p] + [f for f in self.recent_files() if f != p]
        self.qsettings.setValue(RECENT_KEY, files[:MAX_RECENT])
        self._rebuild_recent()

    def _rebuild_recent(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        for f in files:
            act = self.recent_menu.addAction(Path(f).name, lambda p=f: self.open_file(p))
            act.setToolTip(f)
        self.recent_menu.setEnabled(bool(files))

    # --- drag and drop ------------------------------------------------------------------
    @staticmethod
    def _dropped_path(mime: QtCore.QMimeData) -> str | None:
        for url in mime.urls():
            if url.isLocalFile() and url.toLocalFile().lower().endswith(CLIP_SUFFIXES):
                return url.toLocalFile()
        return None

    def dragEnterEvent(self, ev: QtGui.QDragEnterEvent) -> None:  # noqa: N802
        if self._dropped_path(ev.mimeData()):
            ev.acceptProposedAction()

    def dropEvent(self, ev: QtGui.QDropEvent) -> None:  # noqa: N802
        path = self._dropped_path(ev.mimeData())
        if path:
            ev.acceptProposedAction()
            QtCore.QTimer.singleShot(0, lambda: self.open_file(path))

    # --- closing ------------------------------------------------------------------------
    def closeEvent(self, ev: QtGui.QCloseEvent) -> None:  # noqa: N802
        self.timeline.pause()
        self.controller.shutdown(timeout=1.0)
        self.viewport.release_gl()
        super().closeEvent(ev)
