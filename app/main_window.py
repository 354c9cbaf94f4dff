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

from app.controller import Controller
from app.model.camera import MODE_LABELS
from app.model.document import Document, Status
from app.qt.export_folder import export_folder
from app.qt.frame_turns import FrameTurns
from app.qt.handler_guard import survives
from app.qt.label_fence import LabelFence, fixed_group
from app.scene.viewport3d import Viewport3D
from app.views.timeline import TimelineWidget
from codec.errors import SettingsError
from codec.formats import SPECS, format_of
from codec.model.character_size import character_size, length_text, size_warning
from codec.run_settings import Flags, resolve_reader, resolve_run
from codec.tuning import JointOverride

_KINDS = {  # file dialog filters: name -> patterns, from the formats
    spec.label: tuple(f"*{e}" for e in spec.extensions) for spec in SPECS.values()
}
_PACKED = tuple(  # the compressible ones also inside a .gz / .xz / .zst
    f"*{e}{z}"
    for spec in SPECS.values()
    if spec.compressible
    for e in spec.extensions
    for z in (".gz", ".xz", ".zst")
)
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
FAILED = "Compression failed: "  # a warning about one run, dropped when a run succeeds
RECENT_KEY = "recent_files"
RECENT_ANIMATIONS_KEY = "recent_animations"  # a recent multi-animation file: the one last open
GEOMETRY_KEY = "window/geometry"
STATE_KEY = "window/state"
ACL_COMPRESSOR_KEY = "acl/compressor"  # QSettings: the acl_compressor codec acl-2.1 runs
LAYOUT_VERSION = 3  # bump when the docks change so an old saved layout is not applied
# the share of the window's height the bottom docks take while Curves is in front: three
# plots need height to be read (at 1280x800 the default 184 px left them about 90)
CURVES_SHARE = 0.36
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
    ("app.views.curves", "CurvesPanel", "Curves", "bottom-tab"),
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


LAYOUT_PASSES = 4  # a text change can re-lay out a label, its panel, its dock, the window


def settle_before_paint(window: QtWidgets.QWidget) -> None:
    """Do now what would otherwise ask for another frame right after this one: pending
    re-layouts, and the plots' deferred work. A new result changes texts all over the window;
    each change asks its parent to re-lay out, the parent its dock, the dock the window, one
    event-loop turn each; a plot (pyqtgraph) fits its axes when it is about to paint and
    hands its changed items to its view a turn later. An edit took five to seven frames of
    the window's widgets (when the 3D view was a QOpenGLWidget each one composed the whole
    window through GL, 20-50 ms on software GL); settled first, each change is drawn in one."""
    app = QtCore.QCoreApplication.instance()
    meta = QtCore.QEvent.Type.MetaCall.value
    for view in window.findChildren(QtWidgets.QGraphicsView):
        scene = view.scene()
        if scene is None or not view.isVisible():
            continue
        prepare = getattr(scene, "prepareForPaint", None)  # pyqtgraph's GraphicsScene
        if prepare is not None:
            prepare()
        app.sendPostedEvents(scene, meta)  # the scene's queued dirty-item processing
    for _ in range(LAYOUT_PASSES):
        app.sendPostedEvents(None, QtCore.QEvent.Type.LayoutRequest.value)


# the window's children its layout never animates: they keep the application's style, so
# their paints and layouts ask no style hint of Python (the menu bar and the status bar asked
# some 70 an edit, each a wait for the interpreter while a compression ran beside them)
NOT_ANIMATED = (QtWidgets.QMenuBar, QtWidgets.QStatusBar)


class InstantLayoutStyle(QtWidgets.QProxyStyle):
    """The application's style, except that the window's docks, their tab bars and the centre
    take a new layout at once. Qt moves them with a geometry animation even when docks are not
    animated (of length 0, ended on a later event-loop turn, which then repaints the dock
    separators): every text change that re-lays out a panel cost a second frame. Set on the
    window's direct children that its layout moves (not the menu bar and the status bar);
    their own children keep the application's style."""

    def styleHint(  # type: ignore[override]
        self,
        hint: QtWidgets.QStyle.StyleHint,
        option: QtWidgets.QStyleOption | None = None,
        widget: QtWidgets.QWidget | None = None,
        returnData: QtWidgets.QStyleHintReturn | None = None,
    ) -> int:
        if hint == QtWidgets.QStyle.StyleHint.SH_Widget_Animation_Duration:
            return 0
        return super().styleHint(hint, option, widget, returnData)


class LazyProgressBar(QtWidgets.QProgressBar):
    """A progress bar that repaints with the next frame: QProgressBar.setValue repaints at
    once, a frame of the window's widgets for each progress step of a compression (about
    20 ms on software GL when the 3D view was a QOpenGLWidget and every frame composed the
    whole window; a few ms now, still one frame per step for nothing)."""

    def setValue(self, value: int) -> None:
        if value == self.value():
            return
        self.setUpdatesEnabled(False)  # setValue's own repaint() does nothing now
        super().setValue(value)
        self.setUpdatesEnabled(True)  # schedules an ordinary update()


class Dialogs:
    """Every question the window asks the user; tests swap in canned answers."""

    def open_path(self, parent: QtWidgets.QWidget, directory: str) -> str | None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(parent, "Open clip", directory, OPEN_FILTER)
        return path or None

    def open_acl_path(self, parent: QtWidgets.QWidget, directory: str) -> str | None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            parent, "Open ACL output", directory, "ACL 2.1 compressed tracks (*.acl)"
        )
        return path or None

    def acl_compressor_path(self, parent: QtWidgets.QWidget, current: str) -> str | None:
        """The acl_compressor codec acl-2.1 runs (None: cancelled, unchanged)."""
        path, _ = QtWidgets.QFileDialog.getOpenFileName(parent, "ACL 2.1's acl_compressor", current)
        return path or None

    def save_path(self, parent: QtWidgets.QWidget, start: str, kinds: str) -> str | None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(parent, "Save", start, kinds)
        return path or None

    def discard(self, parent: QtWidgets.QWidget, message: str) -> bool:
        """Whether to quit dropping an edit that could not be applied (False: stay)."""
        buttons = QtWidgets.QMessageBox.StandardButton
        answer = QtWidgets.QMessageBox.question(
            parent, "An edit was not applied", message, buttons.Discard | buttons.Cancel
        )
        return answer == buttons.Discard

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
        self._remembered_acl_compressor()
        self.open_options: dict[str, Any] = {}
        self._shortcuts: QtWidgets.QDialog | None = None
        self.setWindowTitle("Shellscope")
        self.setAcceptDrops(True)
        self.resize(1280, 800)

        self.viewport = Viewport3D(self.document, self)
        self.timeline = TimelineWidget(self.document, self)
        self.controller.attach(self.timeline)
        self._instant = InstantLayoutStyle()  # the docks, tab bars and centre lay out at once
        self._frame_waits = False  # a frame asked for now waits one event-loop turn
        # the widgets' frame and the 3D view's are drawn in turns of their own
        self.frame_turns = FrameTurns(self)
        self.viewport.scene.turns = self.frame_turns
        self.installEventFilter(self)  # the window's own events: _window_event
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
        # the side docks run the full height (the joint tree shows three times the rows);
        # the plots dock under the 3D view only
        corners = QtCore.Qt.Corner
        self.setCorner(corners.BottomLeftCorner, QtCore.Qt.DockWidgetArea.LeftDockWidgetArea)
        self.setCorner(corners.BottomRightCorner, QtCore.Qt.DockWidgetArea.RightDockWidgetArea)

        self._build_status_bar()
        self._build_compare()
        self._build_animation_bar()
        self._build_menus()
        mb = self.menuBar()
        self.compare_corner.setFixedHeight(mb.actionGeometry(mb.actions()[0]).height())
        self.panels: dict[str, QtWidgets.QWidget] = {}
        self.docks: dict[str, QtWidgets.QDockWidget] = {}
        self._add_panels()
        self._route_time_keys()
        self._default_state = self.saveState(LAYOUT_VERSION)
        self.remember_layout = remember_layout
        self.layout_restored = remember_layout and self._restore_layout()
        self._sized = self.layout_restored

        # The widgets' frame after a new result (or an edit) waits one event-loop turn:
        # handling a result (every view's update, 10-20 ms) and the frame that draws it (the
        # tables and the plots repaint, the plots in Python) in one turn blocked the UI for
        # both. The 3D view, a GL window of its own, is drawn on its own update timer
        # (QWindow.requestUpdate, 5 ms on xcb), a later turn anyway.
        self._next_turn = QtCore.QTimer(self)
        self._next_turn.setSingleShot(True)
        self._next_turn.setInterval(0)
        self._next_turn.timeout.connect(self._draw_frame)
        self.document.result_changed.connect(self._wait_a_turn)
        self.document.settings_changed.connect(self._wait_a_turn)
        self.document.status_changed.connect(self._on_status)
        self.document.clip_changed.connect(self._update_title)
        self.document.clip_changed.connect(self._show_skin_report)
        self.controller.failed.connect(self._on_failed)
        self.controller.result_ready.connect(self._drop_failures)
        # keys go to the 3D view first (text fields in panels keep their own keys)
        self.viewport.setFocus()

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
        self.panel_menu.addSeparator()
        self.panel_menu.addAction(self.compare_bar.toggleViewAction())  # while comparing
        self.panel_menu.addAction(self.animation_bar.toggleViewAction())  # several animations
        self.panels["SettingsPanel"].codec_requested.connect(self.controller.set_codec)
        self._stats_width: list | None = None  # (dock, width) before comparing widened them
        self.panels["StatsPanel"].compare_table.wants_width.connect(self._widen_stats)
        self.document.comparison_changed.connect(self._narrow_stats)
        self.docks["SkinReportPanel"].visibilityChanged.connect(
            lambda shown: shown and QtCore.QTimer.singleShot(0, self._fit_skin_report)
        )
        self._curves_grown: tuple[int, int, int] | None = None  # height before, asked, got
        self.docks["CurvesPanel"].visibilityChanged.connect(
            lambda shown: QtCore.QTimer.singleShot(0, lambda: self._fit_curves(shown))
        )

    def _route_time_keys(self) -> None:
        """Left / Right step time even when a slider or the joint tree has the keyboard.

        Qt gives a window's shortcuts first say only while the window is active and only
        when the focused widget does not claim the key; sliders and tree views claim the
        arrows (a precision slider would change the precision, a tree would fold its
        branches), so their arrow keys are taken here. Text fields, spin boxes and tables
        keep theirs (moving a cursor or a cell)."""
        for w in self.findChildren(QtWidgets.QWidget):
            if isinstance(w, QtWidgets.QAbstractSlider | QtWidgets.QTreeView) and not isinstance(
                w, QtWidgets.QScrollBar
            ):
                w.installEventFilter(self)

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:
        if watched is self:
            return self._window_event(event)
        kind = event.type()
        if kind in (QtCore.QEvent.Type.KeyPress, QtCore.QEvent.Type.ShortcutOverride):
            key_event = event  # a QKeyEvent for both kinds
            assert isinstance(key_event, QtGui.QKeyEvent)
            mods = key_event.modifiers() & ~QtCore.Qt.KeyboardModifier.KeypadModifier
            step = {QtCore.Qt.Key.Key_Left.value: -1, QtCore.Qt.Key.Key_Right.value: 1}.get(
                int(key_event.key())
            )
            if step is not None and mods == QtCore.Qt.KeyboardModifier.NoModifier:
                if kind == QtCore.QEvent.Type.ShortcutOverride:
                    return False  # not claimed: the window's shortcut (Playback) acts
                self.timeline.step(step)
                return True
        return super().eventFilter(watched, event)

    def _window_event(self, event: QtCore.QEvent) -> bool:
        """The window's own events, seen first (True: taken). Not an `event` override: Qt
        would then call the window's event handling, and so every frame it paints, from
        Python holding the GIL, and a compression running beside it waits for the whole
        frame (20-50 ms on software GL while the 3D view was a QOpenGLWidget)."""
        kind = event.type()
        if kind == QtCore.QEvent.Type.UpdateRequest:
            if self._frame_waits:
                # a result or an edit was handled in this event-loop turn: draw it in the
                # next one, so that input and timers are served between the two
                self._frame_waits = False
                self._next_turn.start()
                return True
            if self.frame_turns.taken():  # the 3D view drew a frame in this turn: ours next
                self._next_turn.start()
                return True
            self.frame_turns.take()
            settle_before_paint(self)
        elif kind == QtCore.QEvent.Type.ChildPolished:
            child = event.child()  # type: ignore[attr-defined]
            if (
                isinstance(child, QtWidgets.QWidget)
                and not isinstance(child, NOT_ANIMATED)
                and child.style() is not self._instant
            ):
                child.setStyle(self._instant)
        return False

    def _wait_a_turn(self) -> None:
        self._frame_waits = True

    def _draw_frame(self) -> None:
        """The frame an UpdateRequest asked for one turn ago: Qt posts no other while that
        one is unanswered, so it is posted again here (posted, not sent: the event loop
        paints it without holding the GIL)."""
        QtCore.QCoreApplication.postEvent(
            self,
            QtCore.QEvent(QtCore.QEvent.Type.UpdateRequest),
            QtCore.Qt.EventPriority.LowEventPriority.value,
        )

    def _size_docks(self) -> None:
        """Docks in proportion to the window, so a large screen gives the panels room too;
        the 3D view keeps the lion's share."""
        w, h = max(self.width(), 800), max(self.height(), 600)
        horizontal, vertical = QtCore.Qt.Orientation.Horizontal, QtCore.Qt.Orientation.Vertical
        # at 1280x800: joints 397, settings 272, plots 184 px; the 3D view the rest. Above
        # 800 px of height the plots take 40 % of the extra (at 1080: 360 px, the bit rates
        # of some 15 joints rather than 6), above 1280 px of width the joints a third of it
        sizes = (
            ("bottom", min(max(int(0.23 * h + 0.4 * max(h - 800, 0)), 180), 420), vertical),
            ("left", min(max(int(0.31 * w), 340), 640), horizontal),
            ("right", min(max(int(0.2125 * w), 272), 440), horizontal),
        )
        for area, size, orient in sizes:
            docks = [
                d
                for d in self.docks.values()
                if self.dockWidgetArea(d) == AREAS[area] and not d.isFloating()
            ]
            if docks:
                self.resizeDocks(docks[:1], [size], orient)

    @survives
    def _widen_stats(self, table_width: int) -> None:
        """While comparing, the Stats dock is as wide as its A | B | change table needs,
        as far as the 3D view can spare it (the table's row names give way beyond that)."""
        dock, table = self.docks["StatsPanel"], self.panels["StatsPanel"].compare_table
        if not self.document.comparison.active or dock.isFloating() or not table.isVisible():
            return
        more = table_width - table.width()
        if more <= 0:
            return
        docks, widths = [dock], [dock.width() + more]  # the 3D view gives what it can spare
        if self._stats_width is None:
            self._stats_width = [(d, d.width()) for d in docks]
        self.resizeDocks(docks, widths, QtCore.Qt.Orientation.Horizontal)

    def _narrow_stats(self) -> None:
        """The comparison ended: the docks go back to their widths before it."""
        if self.document.comparison.active or self._stats_width is None:
            return
        before, self._stats_width = self._stats_width, None
        docks = [(d, w) for d, w in before if not d.isFloating()]
        self.resizeDocks(
            [d for d, _ in docks], [w for _, w in docks], QtCore.Qt.Orientation.Horizontal
        )

    @survives
    def _fit_skin_report(self) -> None:
        """In front, the skin report's summary is read whole (its third line, the link to
        shells from the mesh and skin-strict, was clipped at 1280x800): the bottom docks
        grow to the summary's lines, the buttons and four rows of the table."""
        dock, panel = self.docks["SkinReportPanel"], self.panels["SkinReportPanel"]
        if dock.isFloating() or self.dockWidgetArea(dock) != AREAS["bottom"]:
            return
        short = panel.minimumSizeHint().height() - panel.visibleRegion().boundingRect().height()
        if short > 0 and dock.isVisible():
            want = min(dock.height() + short, int(CURVES_SHARE * self.height()))
            self.resizeDocks([dock], [want], QtCore.Qt.Orientation.Vertical)

    @survives
    def _fit_curves(self, shown: bool) -> None:
        """While Curves is in front the bottom docks take CURVES_SHARE of the window's
        height (when they had less); when another tab comes to the front they go back to
        the height they had, unless it was changed by hand in between."""
        dock = self.docks["CurvesPanel"]
        if dock.isFloating() or self.dockWidgetArea(dock) != AREAS["bottom"]:
            self._curves_grown = None
            return
        vertical = QtCore.Qt.Orientation.Vertical
        if shown and dock.isVisible():
            want = int(CURVES_SHARE * self.height())
            if dock.height() < want:
                before = dock.height()
                self.resizeDocks([dock], [want], vertical)
                # the height it took is known once laid out: the size asked of resizeDocks
                # counts the tab bar, the dock's height does not
                QtCore.QTimer.singleShot(
                    0, lambda: setattr(self, "_curves_grown", (before, want, dock.height()))
                )
        elif not shown and self._curves_grown is not None:
            before, asked, after = self._curves_grown
            self._curves_grown = None
            front = [d for d in self.tabifiedDockWidgets(dock) if d.isVisible()]
            front = [d for d in front if not d.visibleRegion().isEmpty()]
            if front and abs(dock.height() - after) <= 2:  # not resized by hand meanwhile
                self.resizeDocks(front[:1], [before + asked - after], vertical)

    @survives
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
        for bar in self.findChildren(QtWidgets.QTabBar):
            if bar.parent() is self:  # the docks' tab bars: Qt leaves the old ones on screen
                bar.hide()  # (under the new ones, or beside them once a toolbar shows)
        self.restoreState(self._default_state, LAYOUT_VERSION)
        for dock in self.docks.values():
            dock.show()
        # the default state was saved before any comparison: its toolbar comes back if one is on
        self.compare_bar.setVisible(self.document.comparison.active)
        self.animation_bar.setVisible(len(self.animation_bar.names) > 1)
        self._show_skin_report()
        self._size_docks()
        if self.document.comparison.active:  # once laid out: the A | B table's width again
            self._stats_width = None
            QtCore.QTimer.singleShot(0, self.panels["StatsPanel"].compare_table.fit_width)

    # --- status bar ---------------------------------------------------------------------
    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.status_label = QtWidgets.QLabel()
        self.progress_bar = LazyProgressBar()
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setMaximumWidth(200)
        self.progress_bar.setTextVisible(False)
        self.cancel_button = QtWidgets.QToolButton()
        self.cancel_button.setText("Cancel")
        self.cancel_button.setToolTip("Stop this compression")
        self.cancel_button.clicked.connect(self.controller.cancel)
        # the status line and the progress bar with Cancel change on every edit, twice: in
        # fences, their changes repaint them and re-lay out neither the bar nor the window
        bar.addWidget(LabelFence(self.status_label), 1)
        # warnings about the open clip (and a clip that failed to open), beside the
        # compression status rather than over it; all of them in its menu
        self.notices: list[str] = []
        self.notice_button = QtWidgets.QToolButton()
        self.notice_button.setAutoRaise(True)
        self.notice_button.setPopupMode(QtWidgets.QToolButton.ToolButtonPopupMode.InstantPopup)
        self.notice_button.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.notice_button.setStyleSheet("QToolButton { color: #d08020; }")
        self.notice_button.setMenu(QtWidgets.QMenu(self.notice_button))
        bar.addPermanentWidget(self.notice_button)
        self.notice_button.hide()
        self.units_label = QtWidgets.QLabel()  # the clip's units and up axis, always in view
        bar.addPermanentWidget(self.units_label)
        self.kept_label = QtWidgets.QLabel()  # what the clip kept from the last one
        self.kept_label.setContentsMargins(16, 0, 0, 0)  # apart from the units
        self.kept_label.setToolTip(
            "Each clip compresses with its own settings (its sidecar, else its own values); "
            "how it is looked at stays as it was"
        )
        bar.addPermanentWidget(self.kept_label)
        self.kept_label.hide()
        # showing them must not re-lay out the window: that resized the GL view, which
        # repainted at once (tens of ms on software GL) on every compression's start and end
        bar.addPermanentWidget(fixed_group(self.progress_bar, self.cancel_button))
        self.progress_bar.hide()
        self.cancel_button.hide()

    def _on_status(self) -> None:
        """The status line, red with its tooltip on an error; the progress bar and Cancel
        while a run is on. Each property is set only when it changes: a style sheet set
        again, even the same one, restyles the label (most of a millisecond, twice an edit)."""
        s = self.document.status
        text, style, tip = (
            (f"{s.message}: {s.error}", "color: #e05050;", s.error)
            if s.error
            else (s.message, "", "")
        )
        label = self.status_label
        if label.text() != text:
            label.setText(text)
        if label.styleSheet() != style:
            label.setStyleSheet(style)
        if label.toolTip() != tip:
            label.setToolTip(tip)
        for w in (self.progress_bar, self.cancel_button):
            if w.isVisibleTo(self) != s.running:
                # shown with updates off: showing repaints at once, and a repaint in a window
                # holding a GL view composes the whole window (1.9 ms -> 0.6 ms for Cancel)
                w.setUpdatesEnabled(False)
                w.setVisible(s.running)
                w.setUpdatesEnabled(True)  # an ordinary update() for the next frame
                if not s.running:
                    # hidden with updates off, the widget never asked its parent to paint
                    # over it, and its room is kept (a fixed group): without this update the
                    # bar and Cancel stayed on screen after every run
                    w.parentWidget().update(w.geometry())
        self.progress_bar.setValue(int(round(s.progress * 1000)))
        if self.cancel_action.isEnabled() != s.running:
            self.cancel_action.setEnabled(s.running)  # Esc stops a run, only while one runs

    def _on_failed(self, message: str) -> None:
        """The status label already says it in red; the message is also kept with the clip's
        warnings so it can be read in full."""
        self.notify(f"{FAILED}{message}")

    def _drop_failures(self) -> None:
        """A run succeeded: an earlier run's failure is no longer about what is shown."""
        if any(n.startswith(FAILED) for n in self.notices):
            self.set_notices([n for n in self.notices if not n.startswith(FAILED)])

    def set_notices(self, notices: list[str]) -> None:
        """Replace the warnings shown (a clip opened: its own warnings, nothing older)."""
        self.notices = []
        for n in notices:
            self.notify(n)
        self._show_notices()

    def notify(self, text: str) -> None:
        """Add a warning to the status bar's list (once)."""
        if text not in self.notices:
            self.notices.append(text)
        self._show_notices()

    def _show_notices(self) -> None:
        notices, button = self.notices, self.notice_button
        menu = button.menu()
        menu.clear()
        for n in notices:  # readable (not greyed out); a click copies the text
            act = menu.addAction(n, partial(QtWidgets.QApplication.clipboard().setText, n))
            act.setToolTip("Click to copy this warning")
        if notices:
            menu.addSeparator()
            menu.addAction("Clear warnings", lambda: self.set_notices([]))
        count = len(notices)
        button.setText(f"\u26a0 {count} warning{'s' if count != 1 else ''}")
        button.setToolTip("\n".join(notices))
        button.setVisible(bool(notices))

    def _build_compare(self) -> None:
        """Compare (A/B): its toolbar over the window and its layer in the 3D view."""
        from app.scene.compare_layer import CompareLayer
        from app.views.compare_bar import CompareBar

        self.compare_bar = bar = CompareBar(self.document, self)
        c = self.controller
        bar.pin_requested.connect(c.pin_a)
        bar.swap_requested.connect(c.swap_comparison)
        bar.clear_requested.connect(c.clear_comparison)
        bar.codec_requested.connect(c.set_codec)
        self.addToolBar(QtCore.Qt.ToolBarArea.TopToolBarArea, self.compare_bar)
        # the Compare button stays in reach beside the menus; its toolbar shows while comparing
        self.compare_corner = corner = QtWidgets.QToolButton(self)
        corner.setDefaultAction(bar.pin_action)
        corner.setAutoRaise(True)  # as tall as a menu title (set once the menus exist)
        self.menuBar().setCornerWidget(corner, QtCore.Qt.Corner.TopRightCorner)
        self.compare_layer = CompareLayer(self.viewport)

    def _build_animation_bar(self) -> None:
        """The animation switcher (app.views.animation_bar): a toolbar while the file holds
        several animations, and File > Animation."""
        from app.views.animation_bar import AnimationBar

        self.animation_bar = bar = AnimationBar(self)
        bar.animation_requested.connect(self.switch_animation)
        bar.apply_all_requested.connect(
            lambda: self.controller.apply_tuning_to_animations(self.animation_bar.names)
        )
        self.addToolBar(QtCore.Qt.ToolBarArea.TopToolBarArea, bar)

    def switch_animation(self, name: str) -> bool:
        """Open animation `name` of the file on screen in its place (with its own tuning)."""
        doc = self.document
        if doc.path is None or doc.clip is None or name == doc.clip.name:
            return False
        if not self.open_file(doc.path, animation=name):
            self.animation_bar.show_animations(self.animation_bar.names, doc.clip.name)
            return False
        return True

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
        f.addMenu(self.animation_bar.menu)
        self._action(f, "Open &Library\u2026", lambda: self.open_library())
        self._action(f, "Open &ACL output\u2026", lambda: self.open_acl_output())
        self._bvh_positions_menu(f.addMenu("&BVH position channels"))
        f.addSeparator()
        self._action(
            f,
            "&Save compressed (.ssc)\u2026",
            lambda: self.save_compressed(),
            QtGui.QKeySequence.StandardKey.Save,
        )
        f.addSeparator()
        self._action(f, "&Quit", self.close, QtGui.QKeySequence.StandardKey.Quit)
        self._edit_menu(mb.addMenu("&Edit"))

        v = mb.addMenu("&View")
        self._action(v, "&Frame clip", self.viewport.frame_all, "F")
        self._camera_menus(v)
        self._drawing_menus(v)
        v.addSeparator()
        self.panel_menu = v.addMenu("&Panels")
        self._curves_menu(v.addMenu("C&urves"))
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
        self.cancel_action = self._action(c, "&Cancel", self.controller.cancel, "Esc")
        self.cancel_action.setEnabled(False)
        c.addSeparator()
        self._action(c, "ACL 2.1 &compressor\u2026", lambda: self.choose_acl_compressor())

        compare = mb.addMenu("Co&mpare")
        for act in self.compare_bar.actions_for_menu():
            compare.addAction(act)
        self._rules_menu(mb.addMenu("R&ules"))

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

    def _curves_menu(self, menu: QtWidgets.QMenu) -> None:
        """View > Curves: the graph editor's framing, its error mode and pinned joints (the
        Curves panel does each, brought to the front; built after the menus)."""

        def curves() -> Any:
            self.docks["CurvesPanel"].show()
            self.docks["CurvesPanel"].raise_()
            return self.panels["CurvesPanel"]

        self._action(menu, "Frame &all curves (A in Curves)", lambda: curves().frame_all())
        self._action(menu, "Frame &worst error (F in Curves)", lambda: curves().frame_selection())
        error = self._action(menu, "&Lossy \u2212 raw", lambda on: curves().set_error_mode(on))
        error.setCheckable(True)
        menu.aboutToShow.connect(lambda: error.setChecked(self.panels["CurvesPanel"].error_mode))
        self._action(menu, "&Pin / unpin the selected joint", lambda: curves().toggle_pin())
        self._action(menu, "&Unpin all", lambda: curves().clear_pins())

    def _rules_menu(self, menu: QtWidgets.QMenu) -> None:
        """Rules: add a rule, presets (shipped and the user's own), which rule set the
        selected joint's values; the Joints panel does each (built after the menus)."""

        def joints() -> Any:
            self.docks["JointsPanel"].show()
            self.docks["JointsPanel"].raise_()
            return self.panels["JointsPanel"]

        self._action(menu, "&Add rule", lambda: joints()._on_add_clicked())
        presets = menu.addMenu("&Presets")
        presets.aboutToShow.connect(lambda: self.panels["JointsPanel"]._fill_presets_menu(presets))
        save = "&Save pattern rules as preset\u2026"
        self._action(menu, save, lambda: joints().ask_save_preset())
        self._action(menu, "&Which rule set the selected joint", self.show_joint_source)

    def show_joint_source(self) -> str:
        """Rules > Which rule set the selected joint: each value and the rule it came from."""
        j = self.document.selection
        text = self.panels["JointsPanel"].source_text(j) if j is not None else ""
        text = text.replace(": ", ":\n", 1).replace("; ", "\n") or "Select a joint first."
        box = QtWidgets.QMessageBox(
            QtWidgets.QMessageBox.Icon.Information, "Which rule set this joint", text, parent=self
        )
        box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        box.setWindowModality(QtCore.Qt.WindowModality.NonModal)
        box.show()  # not modal: the user keeps clicking joints
        return text

    def _edit_menu(self, e: QtWidgets.QMenu) -> None:
        """Edit > Undo / Redo of every tuning edit (Ctrl+Z; Ctrl+Shift+Z and Ctrl+Y), and
        Reset tuning. Text fields keep their own Ctrl+Z while they have the focus."""
        c = self.controller
        self.undo_action = self._action(e, "&Undo", c.undo, "Ctrl+Z")
        self.redo_action = self._action(e, "&Redo", c.redo, ["Ctrl+Shift+Z", "Ctrl+Y"])
        e.addSeparator()
        self.reset_tuning_action = self._action(e, "Reset &tuning to defaults", c.reset_tuning)
        c.history_changed.connect(self._sync_edit_menu)
        self._sync_edit_menu()

    def _sync_edit_menu(self) -> None:
        h = self.controller.history
        undo, redo = h.undo_label(), h.redo_label()
        self.undo_action.setEnabled(undo is not None)
        self.undo_action.setText(f"&Undo {undo}" if undo else "&Undo")
        self.redo_action.setEnabled(redo is not None)
        self.redo_action.setText(f"&Redo {redo}" if redo else "&Redo")

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
        from app.scene.viewport3d import MAGNIFY_STEPS

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

    def _bvh_positions_menu(self, menu: QtWidgets.QMenu) -> None:
        """File > BVH position channels: how a BVH's non-root position channels are read
        (codec.formats.bvh: auto decides from the first frame and says so in the warnings)."""
        group = QtGui.QActionGroup(self)
        self.bvh_position_actions: dict[str, QtGui.QAction] = {}
        for key, text in (
            ("auto", "&Auto (from the first frame)"),
            ("add", "&Added to OFFSET (as MakeHuman writes them)"),
            ("replace", "&Replacing OFFSET (as Blender reads them)"),
        ):
            act = self._action(menu, text, partial(self.set_bvh_positions, key), None, group)
            self.bvh_position_actions[key] = act
        self.bvh_position_actions["auto"].setChecked(True)

    def set_bvh_positions(self, reading: str) -> None:
        """Read BVH position channels this way from now on (File > BVH position channels,
        `--bvh-positions`); an open BVH clip is opened again with it."""
        self.open_options["bvh_positions"] = reading
        self.bvh_position_actions[reading].setChecked(True)
        path = self.document.path
        if path is not None and format_of(path) == "bvh":
            self.open_file(path, remember=False)

    # --- opening ------------------------------------------------------------------------
    def open_file(
        self,
        path: str | Path | None = None,
        animation: str | None = None,
        tuning: dict[str, Any] | None = None,
        overrides: tuple[JointOverride, ...] | None = None,
        remember: bool = True,
        flags: Flags | None = None,
        **options: Any,
    ) -> bool:
        """File > Open, recent files, drops, the library and the command line all come here.

        The clip opens with its complete settings as codec.run_settings resolves them for
        every command: its own values, its sidecar (this animation's tuning), then the
        command line's `flags` (`--overrides`, `--settings`, `--precision`, ...). Nothing
        that changes the bytes carries over from the clip open before (the codec is part of
        each clip's tuning); how it is looked at (rounding, magnifier, up axis) stays, and
        the status bar says so. `tuning` (GlobalSettings fields) and `overrides` replace
        what was resolved (scripts and tests). A value typed but not entered goes to the
        clip it was typed for first (or is asked about), as on quit.
        """
        problem = self.commit_typed()
        if problem and not self.dialogs.discard(
            self, f"{problem}\n\nOpen the other clip without it, or go back and correct it?"
        ):
            return False
        if path is None:
            start = str(self.document.path.parent) if self.document.path else str(Path.cwd())
            chosen = self.dialogs.open_path(self, start)
            if not chosen:
                return False
            path = chosen
        path = Path(path)
        flags = flags or Flags()
        try:
            opts = {**resolve_reader(path, flags), **self.open_options, **options}
            names = self.controller.list_animations(path)
            if animation is None:
                animation = opts.get("animation")
                if animation is None and len(names) > 1:
                    animation = self.dialogs.choose_animation(self, names)
                    if animation is None:
                        return False
            if animation is not None:
                opts["animation"] = animation
            clip = self.controller.load(path, **opts)
        except Exception as exc:  # the reader's message is the point
            self.dialogs.error(self, "Cannot open clip", str(exc))
            self.notify(f"Could not open {path.name}: {exc}")
            return False
        notices = [w if w.startswith(path.name) else f"{path.name}: {w}" for w in clip.warnings]
        reader = {k: opts.get(k) for k in ("units", "sample_rate", "bvh_positions")}
        flags = replace(flags, **{k: v for k, v in reader.items() if v is not None})
        try:
            run = resolve_run(path, clip.name, flags)  # this animation's tuning
        except SettingsError as exc:  # the clip is fine: open it without the sidecar, say why
            self.dialogs.error(self, "Cannot use the saved tuning", str(exc))
            notices.append(f"Saved tuning not used: {exc}")
            try:
                run = resolve_run(path, clip.name, flags, sidecar=False)
            except SettingsError as again:
                self.dialogs.error(self, "Bad settings", str(again))
                return False
        try:
            if tuning:
                run = replace(run, tuning=replace(run.tuning, **tuning))
        except ValueError as exc:
            self.dialogs.error(self, "Bad settings", str(exc))
            return False
        if overrides is not None:
            run = replace(run, rules=tuple(overrides))
        kept = self._kept_view() if self.document.clip is not None else ""
        try:
            self.controller.open_clip(clip, path, run=run)
        except Exception as exc:  # a view failed on it: the open clip stays
            self.dialogs.error(self, "Cannot open clip", f"{path}: {type(exc).__name__}: {exc}")
            self.notify(f"Could not open {path.name}: {type(exc).__name__}: {exc}")
            return False
        self.animation_bar.show_animations(names, clip.name if names else None)
        if remember:
            self._add_recent(path, clip.name if len(names) > 1 else None)
        self.set_notices(notices)  # the new clip's warnings; older ones were about other files
        self._update_title()  # an ACL output shown with the previous clip is gone
        self._show_kept(kept)
        return True

    def open_acl_output(self, path: str | Path | None = None) -> bool:
        """File > Open ACL output: ACL 2.1's compressed output (acl_compressor -out=FILE.acl)
        measured against the open clip, its raw reference: codec acl-2.1 shows ACL's pose,
        bit rates and errors until another clip opens. A file that does not fit the clip
        (other joints, length or rate) is refused with the reason; the result stays."""
        if self.document.clip is None:
            self.dialogs.error(
                self,
                "Open ACL output",
                "Open the raw clip first: ACL's output is measured against it.",
            )
            return False
        if path is None:
            start = str(self.document.path.parent) if self.document.path else str(Path.cwd())
            chosen = self.dialogs.open_acl_path(self, start)
            if not chosen:
                return False
            path = chosen
        try:
            self.controller.use_acl_output(path)
        except Exception as exc:  # the reader's or the match's message is the point
            self.dialogs.error(self, "Cannot use ACL output", str(exc))
            self.notify(f"Could not use {Path(path).name}: {exc}")
            return False
        self._update_title()  # says which ACL output is shown
        return True

    def _remembered_acl_compressor(self) -> None:
        """The acl_compressor chosen in an earlier session, unless this one was given one."""
        from codec.codecs import acl_compressor_path

        saved = self.qsettings.value(ACL_COMPRESSOR_KEY, "")
        if saved and not acl_compressor_path.configured():
            acl_compressor_path.configure(str(saved))

    def choose_acl_compressor(self, path: str | None = None) -> None:
        """Compression > ACL 2.1 compressor: the acl_compressor codec acl-2.1 runs
        (remembered; SHELLSCOPE_ACL_COMPRESSOR or --acl-compressor win for a session)."""
        from codec.codecs import acl_compressor_path

        if path is None:
            path = self.dialogs.acl_compressor_path(self, acl_compressor_path.configured() or "")
            if path is None:
                return
        acl_compressor_path.configure(path)
        self.qsettings.setValue(ACL_COMPRESSOR_KEY, path)
        why = acl_compressor_path.problem(acl_compressor_path.configured())
        self.notify(f"acl-2.1: {why}" if why else f"acl-2.1 runs {path}")
        for view in (self.panels.get("SettingsPanel"), self.compare_bar):
            if view is not None:
                view.refresh_codecs()

    def _kept_view(self) -> str:
        """How the clip open now is looked at, where that is not the default: what the next
        clip keeps ("rounding floor, error ×100, up axis Z")."""
        doc = self.document
        kept = []
        if doc.rounding != "none":
            kept.append(f"rounding {doc.rounding}")
        if doc.display.magnify != 1.0:
            kept.append(f"error \u00d7{doc.display.magnify:g}")
        if doc.display.up_axis != "auto":
            kept.append(f"up axis {doc.display.up_axis}")
        return ", ".join(kept)

    def _show_kept(self, kept: str) -> None:
        """The status bar says what the new clip kept from the last one (nothing that
        changes its bytes: those come from its own sidecar)."""
        text = f"{kept} kept from the last clip" if kept else ""
        self.kept_label.setText(text)
        self.kept_label.setVisible(bool(text))

    def save_compressed(self, path: str | Path | None = None) -> Path | None:
        """File > Save compressed (.ssc): the compressed file of the result on screen,
        carrying its settings block (`python -m codec compress CLIP --settings FILE.ssc`
        makes it again), written whole or not at all by the controller's exports."""
        doc = self.document
        if path is None:
            folder = export_folder(doc.path)  # where the last export went
            if doc.path is None:
                start = str(folder / "clip.ssc")
            else:
                stem = doc.path.name.split(".")[0]
                multi = self.controller.list_animations(doc.path)
                name = f"{stem}_{doc.clip.name}" if multi and doc.clip is not None else stem
                start = str(folder / f"{name}.ssc")
            chosen = self.dialogs.save_path(self, start, "Shellscope compressed (*.ssc)")
            if not chosen:
                return None
            path = chosen
        errors: list[str] = []

        def seen(_kind: str, _path: str, error: str) -> None:
            errors.append(error)

        self.controller.exported.connect(seen)
        try:
            out = self.controller.export("ssc", str(path))
        finally:
            self.controller.exported.disconnect(seen)
        if out is None:
            why = errors[-1] if errors else ""
            self.dialogs.error(self, "Cannot save the compressed clip", why)
            return None
        size = out.stat().st_size
        doc.set_status(Status(message=f"Saved {out.name} ({size:,} bytes)"))
        return out

    def open_library(self, folder: str | Path | None = None) -> Any:
        """File > Open Library: the library dialog (app.views.library), which runs a folder's
        clips in the background; double-clicking a row opens that clip here."""
        if getattr(self, "library", None) is None:
            from app.views.library import LibraryDialog

            # a window of its own (no parent): the main window comes in front of it when a
            # row opens; closed with the main window (closeEvent)
            self.library = LibraryDialog(None)
            self.library.open_requested.connect(self._open_from_library)
            self.library.tuning_source = self._tuning_for_library
        self.library.show()
        self.library.raise_()
        if folder is not None:
            self.library.open_folder(folder)
        else:
            self.library.choose_folder()
        return self.library

    def _tuning_for_library(self) -> tuple[Any, tuple[Any, ...], str] | None:
        """The tuning on screen for the Library's Batch > Apply ... tuning (None: no clip)."""
        clip = self.document.clip
        if clip is None or self.document.path is None:
            return None
        tuning = self.controller.history.current
        return tuning.settings, tuple(tuning.overrides), self.document.path.name

    def _open_from_library(self, path: str, animation: str | None) -> None:
        """A library row double-clicked: open it here and bring this window to the front."""
        self.open_file(path, animation=animation)
        self.showNormal() if self.isMinimized() else self.show()
        self.raise_()
        self.activateWindow()

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
        text, tip = (f"units: {units.short()}", units.statement()) if units else ("", "")
        size = character_size(clip) if clip is not None else None
        warning = size_warning(clip, size) if size is not None else None
        if warning:  # a unit slip: every budget is 100x off, and only the size shows it
            text = f"{text or 'units: cm'} \u26a0 {length_text(size.size_cm)}"
            tip = f"{tip}\n{warning}" if tip else warning
        self.units_label.setText(text)
        self.units_label.setToolTip(tip)
        self.units_label.setStyleSheet("QLabel { color: #d08020; }" if warning else "")
        tag = f" [{units.short()}]" if units else ""
        if clip is not None and len(self.animation_bar.names) > 1:
            tag = f" \u00b7 {clip.name}{tag}"  # which of the file's animations
        if self.document.acl_output:  # ACL's own output shown against this raw clip
            tag += f" \u00b7 ACL output {Path(self.document.acl_output).name}"
        self.setWindowTitle(f"{p.name}{tag} \u2014 Shellscope" if p else "Shellscope")

    def recent_files(self) -> list[str]:
        value = self.qsettings.value(RECENT_KEY, [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def recent_animations(self) -> dict[str, str]:
        """The animation last open of each recent multi-animation file (by path)."""
        value = self.qsettings.value(RECENT_ANIMATIONS_KEY, {})
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}

    def _add_recent(self, path: Path, animation: str | None = None) -> None:
        p = str(path.resolve())
        files = [p] + [f for f in self.recent_files() if f != p]
        self.qsettings.setValue(RECENT_KEY, files[:MAX_RECENT])
        animations = {f: a for f, a in self.recent_animations().items() if f in files[:MAX_RECENT]}
        animations.pop(p, None)
        if animation is not None:
            animations[p] = animation
        self.qsettings.setValue(RECENT_ANIMATIONS_KEY, animations)
        self._rebuild_recent()

    def _rebuild_recent(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        animations = self.recent_animations()
        for f in files:
            anim = animations.get(f)
            text = f"{Path(f).name} \u00b7 {anim}" if anim else Path(f).name
            act = self.recent_menu.addAction(text, lambda p=f, a=anim: self.open_file(p, a))
            act.setToolTip(f"{f} ({anim})" if anim else f)
        self.recent_menu.setEnabled(bool(files))

    # --- drag and drop ------------------------------------------------------------------
    @staticmethod
    def _dropped_path(mime: QtCore.QMimeData) -> str | None:
        for url in mime.urls():
            if url.isLocalFile() and url.toLocalFile().lower().endswith(CLIP_SUFFIXES):
                return url.toLocalFile()
        return None

    @survives
    def dragEnterEvent(self, ev: QtGui.QDragEnterEvent) -> None:
        if self._dropped_path(ev.mimeData()):
            ev.acceptProposedAction()

    @survives
    def dropEvent(self, ev: QtGui.QDropEvent) -> None:
        path = self._dropped_path(ev.mimeData())
        if path:
            ev.acceptProposedAction()
            QtCore.QTimer.singleShot(0, lambda: self.open_file(path))

    # --- closing ------------------------------------------------------------------------
    def commit_typed(self) -> str | None:
        """Apply what was typed in a field but not entered yet, as Enter would: a Settings
        spin box's text, an open cell editor (a joint's value, a rule's cell). Returns why an
        edit could not be applied (a rule cell that is not a number), None when all is in.
        Done without moving the focus, which an inactive window does not have."""
        for spin in self.findChildren(QtWidgets.QAbstractSpinBox):
            spin.interpretText()  # emits the value typed (keyboard tracking off) if it changed
        editing = QtWidgets.QAbstractItemView.State.EditingState
        no_hint = QtWidgets.QAbstractItemDelegate.EndEditHint.NoHint
        for view in self.findChildren(QtWidgets.QAbstractItemView):
            if view.state() != editing:
                continue
            editors = [
                w
                for w in view.viewport().children()  # a cell's editor lives on the viewport
                if isinstance(w, QtWidgets.QWidget) and not w.isHidden()
            ]
            delegate = view.itemDelegate()  # the view finds the editor's cell and its delegate
            for editor in editors:
                delegate.commitData.emit(editor)
                delegate.closeEditor.emit(editor, no_hint)
        for panel in self.panels.values():
            problem = getattr(panel, "unapplied_edit", lambda: None)()
            if problem:
                return problem
        return None

    def closeEvent(self, ev: QtGui.QCloseEvent) -> None:
        problem = self.commit_typed()
        if problem and not self.dialogs.discard(
            self, f"{problem}\n\nQuit without it, or go back and correct it?"
        ):
            ev.ignore()
            return
        if self.remember_layout:
            self.save_layout()
        self.timeline.pause()
        self.controller.shutdown(timeout=1.0)
        if getattr(self, "library", None) is not None:
            self.library.stop()  # its run keeps what finished in the cache
            self.library.close()  # a window of its own: it goes with this one
        self.viewport.release_gl()
        super().closeEvent(ev)
