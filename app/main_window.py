"""The main window: the 3D view and the timeline in the centre, panels docked around, menus,
status bar with compression progress, File > Open / Open Recent / drag and drop.

Dialogs go through `Dialogs`, an object tests replace, so no modal box can hang a test run.
"""

from __future__ import annotations

import importlib
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from app.camera import MODE_LABELS
from app.controller import Controller
from app.document import Document, GlobalSettings
from app.sidecar import SidecarError, load_sidecar
from app.views.timeline import TimelineWidget
from app.views.viewport3d import Viewport3D
from codec.tuning import JointOverride

_KINDS = {  # file dialog filters: name -> patterns (each also .gz / .xz / .zst but .ssc)
    "BVH": ("*.bvh",),
    "glTF": ("*.gltf", "*.glb"),
    "FBX": ("*.fbx",),
    "USD": ("*.usd", "*.usda", "*.usdc", "*.usdz"),
    "ACL SJSON": ("*.acl.sjson", "*.sjson"),
}
_PACKED = tuple(f"{p}{z}" for pats in _KINDS.values() for p in pats for z in (".gz", ".xz", ".zst"))
OPEN_FILTER = ";;".join(
    [
        f"Animation clips ({' '.join(p for pats in _KINDS.values() for p in pats)} *.ssc "
        f"{' '.join(_PACKED)})"
    ]
    + [f"{k} ({' '.join(v)})" for k, v in _KINDS.items()]
    + ["Compressed clips (*.gz *.xz *.zst)", "Shellscope compressed (*.ssc)", "All files (*)"]
)
CLIP_SUFFIXES = (
    tuple(p[1:] for pats in _KINDS.values() for p in pats)
    + (".ssc",)
    + tuple(p[1:] for p in _PACKED)
)
MAX_RECENT = 8
RECENT_KEY = "recent_files"
GEOMETRY_KEY = "window/geometry"
STATE_KEY = "window/state"
LAYOUT_VERSION = 2  # bump when the docks change so an old saved layout is not applied
DEFAULT_CLIP = Path(__file__).resolve().parent.parent / "resources" / "cmu_09_02.acl.sjson"

# ---- the docked panels. Edit this list to add or move a panel. ------------------------
# (module, class, dock title, area): the class is built as cls(document) and its intents
# (signals) are routed to the controller (Controller.attach). area is left/right/top/bottom;
# "<area>-tab" tabs the dock with the previous one there.
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
        box = QtWidgets.QMessageBox(
            QtWidgets.QMessageBox.Icon.Warning,
            title,
            message,
            QtWidgets.QMessageBox.StandardButton.Ok,
            parent,
        )
        box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()  # window-modal but not blocking: the event loop keeps running


class MainWindow(QtWidgets.QMainWindow):
    def __init__(
        self,
        document: Document | None = None,
        controller: Controller | None = None,
        dialogs: Dialogs | None = None,
        remember_layout: bool = True,
    ) -> None:
        """`remember_layout`: restore the window's size and docks from the last session and
        save them on close (off for reproducible screenshots)."""
        super().__init__()
        self.document = document or Document()
        self.controller = controller or Controller(self.document, parent=self)
        self.dialogs = dialogs or Dialogs()
        self.qsettings = QtCore.QSettings()
        self.open_options: dict[str, Any] = {}
        self._shortcuts: QtWidgets.QDialog | None = None
        self.setWindowTitle("Shellscope")
        self.setAcceptDrops(True)
        self.resize(1280, 800)

        self.viewport = Viewport3D(self.document, self)
        self.timeline = TimelineWidget(self.document, self)
        self.controller.attach(self.timeline)
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
        self._default_state = self.saveState(LAYOUT_VERSION)
        self.remember_layout = remember_layout
        self.layout_restored = remember_layout and self._restore_layout()
        self._sized = self.layout_restored

        self.document.status_changed.connect(self._on_status)
        self.document.clip_changed.connect(self._update_title)
        self.document.clip_changed.connect(self._show_skin_report)
        self.controller.failed.connect(self._on_failed)
        # keys go to the 3D view first (text fields in panels keep their own keys)
        self.viewport.scene.setFocus()

    # --- panels -------------------------------------------------------------------------
    def _add_panels(self) -> None:
        """Dock every panel of PANELS, its intents routed to the controller."""
        self.panel_menu.clear()
        last: dict[str, QtWidgets.QDockWidget] = {}
        for module_name, class_name, title, where in PANELS:
            widget = getattr(importlib.import_module(module_name), class_name)(self.document)
            self.controller.attach(widget)
            dock = QtWidgets.QDockWidget(title, self)
            dock.setObjectName(f"dock_{class_name}")
            dock.setWidget(widget)  # each panel scrolls its own content
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
        """Docks in proportion to the window, so a large screen gives the panels room too;
        the 3D view keeps the lion's share."""
        w, h = max(self.width(), 800), max(self.height(), 600)
        horizontal, vertical = QtCore.Qt.Orientation.Horizontal, QtCore.Qt.Orientation.Vertical
        sizes = (
            ("bottom", min(max(int(0.27 * h), 200), 380), vertical),
            ("left", min(max(int(0.25 * w), 300), 520), horizontal),
            ("right", min(max(int(0.24 * w), 300), 480), horizontal),
        )
        for area, size, orient in sizes:
            docks = [
                d
                for d in self.docks.values()
                if self.dockWidgetArea(d) == AREAS[area] and not d.isFloating()
            ]
            if docks:
                self.resizeDocks(docks[:1], [size], orient)

    def showEvent(self, ev: QtGui.QShowEvent) -> None:
        super().showEvent(ev)
        if not self._sized:  # first show without a remembered layout: fit the docks
            self._sized = True
            QtCore.QTimer.singleShot(0, self._size_docks)

    def _restore_layout(self) -> bool:
        """Window geometry and dock layout of the last session, if there is one."""
        geometry = self.qsettings.value(GEOMETRY_KEY)
        state = self.qsettings.value(STATE_KEY)
        if not isinstance(geometry, QtCore.QByteArray) or not isinstance(state, QtCore.QByteArray):
            return False
        return bool(self.restoreGeometry(geometry) and self.restoreState(state, LAYOUT_VERSION))

    def save_layout(self) -> None:
        self.qsettings.setValue(GEOMETRY_KEY, self.saveGeometry())
        self.qsettings.setValue(STATE_KEY, self.saveState(LAYOUT_VERSION))
        self.qsettings.sync()

    def reset_layout(self) -> None:
        """View > Reset layout: every dock back where it started, sized for the window."""
        self.restoreState(self._default_state, LAYOUT_VERSION)
        for dock in self.docks.values():
            dock.show()
        self._show_skin_report()
        self._size_docks()

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
    def _action(
        self,
        menu: QtWidgets.QMenu,
        text: str,
        slot: Any,
        shortcut: str | QtGui.QKeySequence | list | None = None,
        group: QtGui.QActionGroup | None = None,
    ) -> QtGui.QAction:
        """A menu entry whose shortcut works anywhere in the window (also with the menu bar
        hidden); a list gives several keys (a digit and its keypad twin)."""
        act = QtGui.QAction(text, self)
        if shortcut is not None:
            keys = shortcut if isinstance(shortcut, list) else [shortcut]
            act.setShortcuts([QtGui.QKeySequence(k) for k in keys])
            act.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        if group is not None:
            act.setCheckable(True)
            group.addAction(act)
        act.triggered.connect(slot)
        menu.addAction(act)
        self.addAction(act)
        return act

    def _build_menus(self) -> None:
        mb = self.menuBar()
        f = mb.addMenu("&File")
        self._action(
            f, "&Open\u2026", lambda: self.open_file(), QtGui.QKeySequence.StandardKey.Open
        )
        self.recent_menu = f.addMenu("Open &Recent")
        self._rebuild_recent()
        self._action(f, "Open &Library\u2026", lambda: self.open_library())
        f.addSeparator()
        self._action(f, "&Quit", self.close, QtGui.QKeySequence.StandardKey.Quit)

        v = mb.addMenu("&View")
        self._action(v, "&Frame clip", self.viewport.frame_all, "F")
        self._camera_menus(v)
        self._drawing_menus(v)
        v.addSeparator()
        self.panel_menu = v.addMenu("&Panels")
        self._action(v, "Reset &layout", self.reset_layout)

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

        h = mb.addMenu("&Help")
        self._action(
            h,
            "&Keyboard shortcuts",
            self.show_shortcuts,
            [QtGui.QKeySequence.StandardKey.HelpContents, "?"],
        )
        self.document.display_changed.connect(self._sync_view_menu)
        self.viewport.view_changed.connect(self._sync_view_menu)
        self._sync_view_menu()

    def _camera_menus(self, v: QtWidgets.QMenu) -> None:
        """View > Camera, Views (Blender's numpad keys) and Up axis."""
        doc, vp = self.document, self.viewport
        cam = v.addMenu("&Camera")
        self.camera_actions: dict[str, QtGui.QAction] = {}
        group = QtGui.QActionGroup(self)
        for mode, key in (
            ("follow", "Shift+F"),
            ("clip", "Shift+C"),
            ("selection", "Shift+S"),
            ("free", None),
        ):
            self.camera_actions[mode] = self._action(
                cam, MODE_LABELS[mode], partial(doc.update_display, camera=mode), key, group
            )
        views = v.addMenu("&Views")
        keypad = QtCore.Qt.KeyboardModifier.KeypadModifier
        no_mod = QtCore.Qt.KeyboardModifier(0)
        for name, digit, ctrl in (
            ("front", 1, False),
            ("back", 1, True),
            ("right", 3, False),
            ("left", 3, True),
            ("top", 7, False),
            ("bottom", 7, True),
            ("perspective", 0, False),
        ):
            key = QtCore.Qt.Key(QtCore.Qt.Key.Key_0.value + digit)
            mod = QtCore.Qt.KeyboardModifier.ControlModifier if ctrl else no_mod
            keys = [QtGui.QKeySequence(mod | key), QtGui.QKeySequence(mod | keypad | key)]
            self._action(views, name.capitalize(), partial(vp.set_view, name), keys)
        views.addSeparator()
        five = ["5", QtGui.QKeySequence(keypad | QtCore.Qt.Key.Key_5)]
        self.ortho_action = self._action(views, "&Orthographic", vp.toggle_ortho, five)
        self.ortho_action.setCheckable(True)
        up = v.addMenu("&Up axis")
        self.up_actions: dict[str, QtGui.QAction] = {}
        group = QtGui.QActionGroup(self)
        for axis in ("auto", "X", "Y", "Z"):
            text = "Auto (from the file)" if axis == "auto" else f"{axis} up"
            self.up_actions[axis] = self._action(
                up, text, partial(doc.update_display, up_axis=axis), None, group
            )

    def _drawing_menus(self, v: QtWidgets.QMenu) -> None:
        """View > Error magnifier, the skeleton and skin toggles, and Shells."""
        doc = self.document
        mag = v.addMenu("Error &magnifier")
        self.magnify_actions: dict[float, QtGui.QAction] = {}
        group = QtGui.QActionGroup(self)
        for k in (1.0, 10.0, 100.0, 1000.0):
            self.magnify_actions[k] = self._action(
                mag, f"\u00d7{k:g}", partial(doc.update_display, magnify=k), None, group
            )
        mag.addSeparator()
        self._action(mag, "Magnify more", lambda: self._step_magnify(1), "]")
        self._action(mag, "Magnify less", lambda: self._step_magnify(-1), "[")
        v.addSeparator()
        for text, shown, key in (
            ("Toggle &raw skeleton", "show_raw", "R"),
            ("Toggle &lossy skeleton", "show_lossy", "E"),
            ("Toggle raw s&kin", "show_raw_skin", "Shift+R"),
            ("Toggle lossy sk&in", "show_lossy_skin", "Shift+E"),
        ):
            self._action(v, text, partial(self._toggle, shown), key)
        shells = v.addMenu("&Shells")
        self.shell_actions: dict[str, QtGui.QAction] = {}
        group = QtGui.QActionGroup(self)
        for mode in ("none", "selected", "all"):
            self.shell_actions[mode] = self._action(
                shells, mode.capitalize(), partial(doc.update_display, shells=mode), None, group
            )
        self._action(shells, "Next shells mode", self._cycle_shells, "S")

    def _toggle(self, shown: str) -> None:
        """Flip one of the display's show_* switches."""
        self.document.update_display(**{shown: not getattr(self.document.display, shown)})

    def _sync_view_menu(self) -> None:
        disp = self.document.display
        self.camera_actions[disp.camera].setChecked(True)
        self.up_actions[disp.up_axis].setChecked(True)
        detected = f" (now {self.viewport.up})" if self.document.clip is not None else ""
        self.up_actions["auto"].setText(f"Auto (from the file){detected}")
        self.shell_actions[disp.shells].setChecked(True)
        for k, act in self.magnify_actions.items():
            act.setChecked(k == disp.magnify)
        self.ortho_action.setChecked(self.viewport.scene.ortho)

    def _step_magnify(self, direction: int) -> None:
        from app.views.viewport3d import MAGNIFY_STEPS

        k = self.document.display.magnify
        i = int(np.searchsorted(MAGNIFY_STEPS, k, side="right" if direction > 0 else "left"))
        i = i if direction > 0 else i - 1
        i = min(max(i, 0), len(MAGNIFY_STEPS) - 1)
        self.document.update_display(magnify=float(MAGNIFY_STEPS[i]))

    def _cycle_shells(self) -> None:
        modes = ("none", "selected", "all")
        i = (modes.index(self.document.display.shells) + 1) % len(modes)
        self.document.update_display(shells=modes[i])

    def show_shortcuts(self) -> QtWidgets.QDialog:
        """Help > Keyboard shortcuts: every action with a key, read from the menus themselves,
        and the mouse gestures of the 3D view."""
        from app.views.shortcuts_dialog import ShortcutsDialog

        if self._shortcuts is None:
            self._shortcuts = ShortcutsDialog(self.menuBar(), self)
        self._shortcuts.show()
        self._shortcuts.raise_()
        return self._shortcuts

    # --- opening ------------------------------------------------------------------------
    def open_file(
        self,
        path: str | Path | None = None,
        animation: str | None = None,
        tuning: dict[str, Any] | None = None,
        overrides: tuple[JointOverride, ...] | None = None,
        remember: bool = True,
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
        except Exception as exc:  # the reader's message is the point
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
        try:
            self.controller.open_clip(clip, path, tuple(rules), settings)
        except Exception as exc:  # a view failed on it: the open clip stays
            self.dialogs.error(self, "Cannot open clip", f"{path}: {type(exc).__name__}: {exc}")
            self.statusBar().showMessage(f"Could not open {path.name}", 8000)
            return False
        if remember:
            self._add_recent(path)
        for w in clip.warnings:
            self.statusBar().showMessage(f"{path.name}: {w}", 8000)
        return True

    def open_library(self, folder: str | Path | None = None) -> Any:
        """File > Open Library: the library dialog (app.views.library), which runs a folder's
        clips in the background; double-clicking a row opens that clip here."""
        if getattr(self, "library", None) is None:
            from app.views.library import LibraryDialog

            self.library = LibraryDialog(self)
            self.library.open_requested.connect(lambda p, a: self.open_file(p, animation=a))
        self.library.show()
        self.library.raise_()
        if folder is not None:
            self.library.open_folder(folder)
        else:
            self.library.choose_folder()
        return self.library

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

    def dragEnterEvent(self, ev: QtGui.QDragEnterEvent) -> None:
        if self._dropped_path(ev.mimeData()):
            ev.acceptProposedAction()

    def dropEvent(self, ev: QtGui.QDropEvent) -> None:
        path = self._dropped_path(ev.mimeData())
        if path:
            ev.acceptProposedAction()
            QtCore.QTimer.singleShot(0, lambda: self.open_file(path))

    # --- closing ------------------------------------------------------------------------
    def closeEvent(self, ev: QtGui.QCloseEvent) -> None:
        if self.remember_layout:
            self.save_layout()
        self.timeline.pause()
        self.controller.shutdown(timeout=1.0)
        if getattr(self, "library", None) is not None:
            self.library.stop()  # its run keeps what finished in the cache
        self.viewport.release_gl()
        super().closeEvent(ev)
