"""Joints: the hierarchy with what each joint costs and how wrong it is, and where to tune it.

Per joint: sub-track kinds and bits, precision, shell distance, dominant shell and max error.
Precision, shell distance and per_track rounding are edited in place; an edit becomes an
exact-name override rule, which wins over every pattern rule whatever their order. Rules by
name pattern (`*Hand*`, `*IK*`, `root`) are added, edited and removed below the tree, the
same list ozz and Unreal's ACL plugin keep.
Every edit is an intent, `overrides_edited(rules)`, that the controller applies (it
recompresses and saves the rules beside the clip).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import (
    QAbstractItemModel,
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QSettings,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QAction,
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QHelpEvent,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QToolTip,
    QTreeView,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.model.error_scale import (
    budget_fraction,
    eng,
    error_colors,
    format_budget,
    format_percent,
    is_over,
)
from app.model.rule_presets import PRESETS_KEY, all_presets, read_presets, write_presets
from app.qt.handler_guard import survives
from app.views.elided_names import ElidedNameDelegate
from app.views.panel import Panel
from codec.codecs.base import TrackKind
from codec.model.sampling import BASE_ROUNDING
from codec.name_pattern import NamePattern, pattern_problem
from codec.tuning import JointOverride, exact_pattern, set_joint_override

# the name is frozen in its own view on the left; the values scroll on their own, the ones a
# tuner reads first (error against budget) leftmost
COLUMNS = (
    "Joint",
    "Max error",
    "Used",
    "Precision",
    "Shell",
    "Dominant",
    "Rot",
    "Trans",
    "Scale",
    "Rounding",
)
NAMES_SHARE = 0.4  # the names pane's least share of the panel's width
MIN_VALUE_COLUMNS = 3  # Max error, Used and Precision: always whole in view when they fit
C_NAME, C_ERR, C_USED, C_PREC, C_SHELL, C_DOM, C_ROT, C_TRANS, C_SCALE, C_ROUND = range(
    len(COLUMNS)
)
HEADER_TIPS = {
    C_ERR: "Largest error of the joint over the clip at sample times, in cm",
    C_USED: "Max error as a share of the joint's precision (its budget), on the error colour scale",
    C_PREC: "The joint's error budget in cm; double-click to give this joint its own",
    C_SHELL: "Shell distance in cm (where the error is measured); double-click to override",
    C_DOM: "Dominant shell in cm: the farthest shell this joint's rotation moves",
    C_ROT: "Rotation: D default, C constant, else bits per component over segments",
    C_TRANS: "Translation: D default, C constant, else bits per component over segments",
    C_SCALE: "Scale: D default, C constant, else bits per component over segments",
    C_ROUND: "Rounding used under per_track; double-click to choose this joint's",
}
EDITABLE = {C_PREC: "precision", C_SHELL: "shell_distance", C_ROUND: "rounding"}
RULE_COLUMNS = ("Pattern", "Precision", "Shell", "Rounding", "Joints")
UNMATCHED = QColor(192, 57, 43)
FIELDS = ("precision", "shell", "rounding")
JOINT_ROLE = Qt.ItemDataRole.UserRole
OVER_BUDGET = QColor(192, 57, 43)


def _spin(parent: QWidget) -> QDoubleSpinBox:
    s = QDoubleSpinBox(parent)
    s.setDecimals(5)
    s.setRange(1e-6, 1e5)
    s.setStepType(QDoubleSpinBox.StepType.AdaptiveDecimalStepType)
    return s


def subtrack_text(kind: int, bits: np.ndarray) -> str:
    """'D', 'C', or the bits per component over segments ('12' or '8–14')."""
    if kind == TrackKind.DEFAULT:
        return "D"
    if kind == TrackKind.CONSTANT:
        return "C"
    b = bits[bits >= 0]
    if b.size == 0:
        return "A"
    lo, hi = int(b.min()), int(b.max())
    return str(lo) if lo == hi else f"{lo}–{hi}"


def subtrack_texts(kinds: np.ndarray, bits: np.ndarray) -> list[list[str]]:
    """`subtrack_text` of every joint and sub-track at once: kinds (J, 3), bits per component
    (G, J, 3) with -1 where a segment stores none; [joint][sub-track] texts."""
    valid = bits >= 0
    lo = np.where(valid, bits, np.iinfo(np.int64).max).min(axis=0, initial=np.iinfo(np.int64).max)
    hi = np.where(valid, bits, -1).max(axis=0, initial=-1)
    out: list[list[str]] = []
    for kj, lj, hj in zip(kinds.tolist(), lo.tolist(), hi.tolist(), strict=True):
        row = []
        for kind, a, b in zip(kj, lj, hj, strict=True):
            if kind == TrackKind.DEFAULT:
                row.append("D")
            elif kind == TrackKind.CONSTANT:
                row.append("C")
            elif b < 0:
                row.append("A")
            else:
                row.append(str(a) if a == b else f"{a}\u2013{b}")
        out.append(row)
    return out


def _changed_rows(new: np.ndarray | None, old: object, n: int) -> np.ndarray:
    """(n,) bool: the rows of per-joint numbers `new` (n, k) that differ from `old` (the
    numbers last shown, `_UNSHOWN` when nothing was; None where the group was empty): every
    row when the group appears, goes or changes shape, else where any number moved (NaN
    counts as moved)."""
    if old is _UNSHOWN:
        return np.ones(n, dtype=bool)
    if new is None or old is None:
        return np.full(n, (new is None) != (old is None))
    assert isinstance(old, np.ndarray)
    if old.shape != new.shape:
        return np.ones(n, dtype=bool)
    return np.any(new != old, axis=1)


_UNSHOWN = object()


def matches_filter(name: str, text: str) -> bool:
    """Substring match, or a glob when the filter holds * or ? (case-insensitive). A glob
    the rules would refuse (codec.name_pattern's bounds: a pasted wall of text) matches
    nothing, rather than raising in the text box's slot."""
    text = text.strip()
    if not text:
        return True
    if any(c in text for c in "*?["):
        return pattern_problem(text) is None and NamePattern(text).matches(name)
    return text.lower() in name.lower()


class JointEditDelegate(QStyledItemDelegate):
    """Spin boxes for precision / shell distance, a combo for rounding; edits go to the panel."""

    def __init__(self, panel: JointsPanel) -> None:
        super().__init__(panel.tree)
        self.panel = panel

    def createEditor(
        self, parent: QWidget, option: QStyleOptionViewItem, index: QModelIndex
    ) -> QWidget | None:
        if index.column() in (C_PREC, C_SHELL):
            return _spin(parent)
        if index.column() == C_ROUND:
            combo = QComboBox(parent)
            combo.addItems(BASE_ROUNDING)
            return combo
        return None

    def setEditorData(self, editor: QWidget, index: QModelIndex) -> None:
        joint = index.siblingAtColumn(C_NAME).data(JOINT_ROLE)
        r = self.panel.document.resolved_joints()
        if r is None or joint is None:
            return
        if isinstance(editor, QDoubleSpinBox):
            values = r.precision if index.column() == C_PREC else r.shell_distance
            editor.setValue(float(values[joint]))
        elif isinstance(editor, QComboBox):
            editor.setCurrentText(str(r.rounding[joint]))

    def setModelData(
        self,
        editor: QWidget,
        model: QAbstractItemModel,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        joint = index.siblingAtColumn(C_NAME).data(JOINT_ROLE)
        if joint is None:
            return
        if isinstance(editor, QDoubleSpinBox):
            value: float | str = float(editor.value())
        elif isinstance(editor, QComboBox):
            value = editor.currentText()
        else:
            return
        self.panel.edit_joint(int(joint), EDITABLE[index.column()], value)

    def helpEvent(
        self,
        event: QHelpEvent,
        view: QAbstractItemView,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> bool:
        """The result cells' tooltips come from the panel when hovered."""
        joint = index.siblingAtColumn(C_NAME).data(JOINT_ROLE)
        if event.type() == QEvent.Type.ToolTip and joint is not None:
            text = self.panel.result_tip(int(joint), index.column())
            if text:
                QToolTip.showText(event.globalPos(), text, view)
                return True
        return super().helpEvent(event, view, option, index)


class JointsPanel(Panel):
    """Dockable joint tree with in-place tuning and the override rules; edits go out as
    `overrides_edited(rules)`, the whole new list of rules."""

    overrides_edited = Signal(object)  # tuple[JointOverride, ...]

    follows = (
        ("clip_changed", "_build_tree"),
        ("settings_changed", "_on_settings"),
        ("rounding_changed", "_on_settings"),
        ("result_changed", "_refresh_result"),
        ("selection_changed", "_on_selection"),
    )

    def build(self) -> None:
        self.items: list[QTreeWidgetItem] = []
        self._table_rules: tuple[JointOverride, ...] | None = None
        self._resized_columns: set[int] = set()  # columns whose text or font changed
        self._tuning_shown: tuple | None = None  # (cells, arrays) `_refresh_tuning` wrote
        self._result_shown: tuple | None = None  # (cells, kind, numbers) `_refresh_result` wrote
        self._tip_numbers: tuple = (None, None)  # what the result cells' tooltips read
        self._draft_row: int | None = None  # a rule being added: not a rule until it has a name
        self._names_width: int | None = None  # what the names need, measured once per clip
        self._joints_of: tuple | None = None  # (names, exact-name pattern -> joints)
        self._tuning_key: tuple | None = None  # (clip, settings, rules, cells) last shown

        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter joints (text or glob such as *Hand*)")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._apply_filter)

        # names: the tree itself, showing only its first column, as wide as its view: a
        # name too long for it keeps its side and its end around an ellipsis (the full name
        # on hover); values: a second view of the same model beside it
        self.tree = QTreeWidget()
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(list(COLUMNS))
        self.name_delegate = ElidedNameDelegate(self.tree)
        self.tree.setItemDelegateForColumn(C_NAME, self.name_delegate)
        self.values = QTreeView()
        self.values.setModel(self.tree.model())
        self.values.setSelectionModel(self.tree.selectionModel())
        self.values.setRootIsDecorated(False)
        self.values.setItemsExpandable(False)
        self.values.setIndentation(0)
        self.values.setItemDelegate(JointEditDelegate(self))
        self.values.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.SelectedClicked
        )
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tree.setIndentation(8)  # a 10-deep CC rig keeps its names whole
        for view in (self.tree, self.values):
            view.setUniformRowHeights(True)
            view.setAlternatingRowColors(True)
            view.setTextElideMode(Qt.TextElideMode.ElideNone)
            view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
            view.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
            # both always keep a horizontal bar, so their rows stay level when scrolled
            view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
            header = view.header()
            # sized once per refresh (`_size_columns`): ResizeToContents would measure every
            # row again on each cell written, a cost in the square of the joints
            header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
            header.setStretchLastSection(False)
        self.tree.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # always there, so the values pane's width (whole columns, `_fit_split`) counts it
        self.values.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.tree.header().setSectionResizeMode(C_NAME, QHeaderView.ResizeMode.Stretch)
        for c in range(1, len(COLUMNS)):
            self.tree.setColumnHidden(c, True)
        self.values.setColumnHidden(C_NAME, True)
        for c, tip in HEADER_TIPS.items():
            self.tree.headerItem().setToolTip(c, tip)
        self.tree.headerItem().setToolTip(C_NAME, "Joints in hierarchy order")
        vs_names, vs_values = self.tree.verticalScrollBar(), self.values.verticalScrollBar()
        vs_values.valueChanged.connect(vs_names.setValue)
        vs_names.valueChanged.connect(vs_values.setValue)
        self.tree.expanded.connect(self.values.expand)
        self.tree.collapsed.connect(self.values.collapse)
        # Ctrl/Shift-click selects several joints: the current one is the document's
        # selection, the others its `also_selected` (Curves draws them all)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.values.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.currentItemChanged.connect(self._on_current_item)
        self.tree.itemSelectionChanged.connect(self._to_document)
        reset = QAction("Reset joint to rules and global values", self.tree)
        reset.triggered.connect(self.reset_selected_joint)
        for view in (self.tree, self.values):
            view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
            view.addAction(reset)
        self.table_split = QSplitter(Qt.Orientation.Horizontal)
        self.table_split.addWidget(self.tree)
        self.table_split.addWidget(self.values)
        self.table_split.setChildrenCollapsible(False)
        self.table_split.setStretchFactor(0, 1)
        self.table_split.setStretchFactor(1, 1)
        self._split_by_hand = False
        self.table_split.splitterMoved.connect(self._on_split_moved)

        self.rules = QTableWidget(0, len(RULE_COLUMNS))
        self.rules.setHorizontalHeaderLabels(list(RULE_COLUMNS))
        self.rules.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.rules.horizontalHeader().setStretchLastSection(True)
        self.rules.verticalHeader().setVisible(False)
        self.rules.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.rules.setToolTip(
            "Pattern rules apply top to bottom, later rules win; a rule naming one joint "
            "exactly (what editing a joint above makes) wins over every pattern, wherever it "
            "is. Pattern: glob on joint names, any case; `a|b` either, a leading `!` "
            "excludes (`*Index*|!*Toe*`), `re:` a regular expression of the whole name. "
            "Empty cells keep the value from earlier rules or the global settings."
        )
        self.rules.itemChanged.connect(self._on_rule_item_changed)
        self.rules.itemDelegate().closeEditor.connect(self._on_rule_editor_closed)
        # a few rules always in view, so an added rule cannot hide below the header
        rows = 4
        self.rules.setMinimumHeight(
            self.rules.horizontalHeader().sizeHint().height()
            + rows * self.rules.verticalHeader().defaultSectionSize()
            + 2 * self.rules.frameWidth()
        )
        self.add_button = QPushButton("Add rule")
        self.add_button.clicked.connect(self._on_add_clicked)
        self.remove_button = QPushButton("Remove")
        self.remove_button.clicked.connect(self.remove_selected_rules)
        self.presets_button = QPushButton("Presets")
        self.presets_button.setToolTip("Add a preset's rules (fingers, face, IK, your own)")
        self.presets_menu = QMenu("Rule &presets", self)
        self.presets_menu.aboutToShow.connect(lambda: self._fill_presets_menu())
        self.presets_button.setMenu(self.presets_menu)
        self.rule_warning = QLabel()  # rules that match no joint: said, never silent
        self.rule_warning.setWordWrap(True)
        self.rule_warning.setStyleSheet("color: #b9770e")
        self.source_label = QLabel()  # which rule set the selected joint's values
        self.source_label.setWordWrap(True)
        self.source_label.setTextFormat(Qt.TextFormat.PlainText)
        self.rule_error = QLabel()
        self.rule_error.setWordWrap(True)
        self.rule_error.setStyleSheet("color: #c0392b")

        rules_box = QGroupBox("Override rules")
        rules_box.setToolTip("By joint name pattern; later rules win over earlier ones")
        rules_layout = QVBoxLayout(rules_box)
        rules_layout.setContentsMargins(4, 4, 4, 4)
        rules_layout.addWidget(self.rules, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addWidget(self.presets_button)
        buttons.addStretch(1)
        rules_layout.addLayout(buttons)
        rules_layout.addWidget(self.rule_error)
        rules_layout.addWidget(self.rule_warning)
        rules_layout.addWidget(self.source_label)

        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.filter)
        top_layout.addWidget(self.table_split, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(rules_box)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(split)

    # --- model -> view ------------------------------------------------------------------
    def refresh(self) -> None:
        self._build_tree()

    def _build_tree(self) -> None:
        with self.syncing:
            self.tree.clear()
            self.items = []
            # the last value written of every cell: (column, role) -> a value per joint
            self._cells: dict[tuple[int, str], list[object]] = {}
            self._bold = QFont(self.tree.font())
            self._bold.setBold(True)
            self._plain = QFont(self.tree.font())
            self._plain_metrics = QFontMetricsF(self._plain)
            self._bold_metrics = QFontMetricsF(self._bold)
            self._text_widths: dict[tuple[bool, str], int] = {}
            style = self.values.style()
            # a cell's text box: the focus frame's margin and a pixel each side (what the
            # item delegate's size hint adds), and a pixel for rounding
            margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, self.values)
            self._cell_margin = 2 * (margin + 1) + 1
            self._ink = self.tree.palette().text()
            clip = self.document.clip
            if clip is not None:
                sk = clip.skeleton
                for j, name in enumerate(sk.names):
                    p = int(sk.parents[j])
                    item = (
                        QTreeWidgetItem([name]) if p < 0 else QTreeWidgetItem(self.items[p], [name])
                    )
                    item.setData(C_NAME, JOINT_ROLE, j)
                    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                    for c in (C_ROT, C_TRANS, C_SCALE, C_PREC, C_SHELL, C_DOM, C_ERR, C_USED):
                        item.setTextAlignment(
                            c, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                        )
                    self.items.append(item)
                    if p < 0:
                        self.tree.addTopLevelItem(item)
                self.tree.expandAll()
                self.values.expandAll()
            # (J, columns) pixels of every cell's text as written (`_put`), for the widths
            self._widths = np.zeros((len(self.items), len(COLUMNS)), dtype=np.int64)
            self.tree.resizeColumnToContents(C_NAME)  # names never change with the tuning
            self._names_width = None
            self._fit_split()
        self._refresh_values()
        self._refresh_rules()
        self._apply_filter()
        self._on_selection()

    def _on_split_moved(self, _pos: int, _index: int) -> None:
        self._split_by_hand = True

    def _fit_split(self) -> None:
        """The values pane shows whole columns only (a column cut at its edge read "99.9 %"
        as "9.9 %"): Max error, Used and Precision at least, as many more as leave the names
        what they need; the names take the rest (eliding in the middle when short of it,
        never narrower than NAMES_SHARE of the panel)."""
        if self._split_by_hand:
            return
        split = self.table_split
        total = max(split.width() - split.handleWidth(), 1)  # the panes' room
        if self._names_width is None:  # the names never change with the tuning: once
            self._names_width = self.tree.sizeHintForColumn(C_NAME) + 6 if self.items else 120
        header = self.values.header()
        chrome = self.values.width() - self.values.viewport().width()  # frame and bar
        if chrome <= 0 or not self.values.isVisible():  # not laid out yet
            bar = self.values.verticalScrollBar().sizeHint().width()
            chrome = bar + 2 * self.values.frameWidth()
        columns = [c for c in range(1, len(COLUMNS)) if not header.isSectionHidden(c)]
        edges = np.cumsum([header.sectionSize(c) for c in columns]) + chrome
        names_least = min(self._names_width, int(NAMES_SHARE * total))
        fits = [
            int(w)
            for k, w in enumerate(edges)
            if k < MIN_VALUE_COLUMNS or total - w >= self._names_width
        ]
        values = max((w for w in fits if total - w >= names_least), default=int(edges[0]))
        first = max(total - values, int(NAMES_SHARE * total))
        self.table_split.setSizes([first, max(total - first, 1)])

    @survives
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_split()

    def _on_settings(self) -> None:
        """A tuning edit. A rules edit that changes a precision says so twice (settings and
        rounding changed): the second finds this very tuning shown and does nothing."""
        doc = self.document
        tuning = (doc.clip, doc.settings, doc.overrides, self._cells)
        last = self._tuning_key
        if last is not None and all(a is b or a == b for a, b in zip(last, tuning, strict=True)):
            return
        self._tuning_key = tuning
        self._refresh_tuning()
        self._size_columns()
        self._refresh_rules()
        self._show_source()

    def _refresh_values(self) -> None:
        """Every cell from the document (after the tree is built)."""
        self._refresh_tuning()
        self._refresh_result()

    def _put(self, j: int, column: int, role: str, value: object) -> None:
        """Write one cell's text, tooltip, font or brush when it changed (`_put_all`)."""
        self._put_all(column, role, (j,), (value,))

    def _put_all(
        self, column: int, role: str, rows: Sequence[int], values: Sequence[object]
    ) -> None:
        """Write one role (text, tip, bold, background, foreground) of one column for the
        joints `rows`, each cell only when its value changed: each write makes Qt re-lay
        out the row, and Qt's own getters (a QFont, a QBrush compared) cost as much as the
        write, so the last values written are remembered here, a list per column and role
        (a global edit writes some 200 cells a column)."""
        cache = self._cells.get((column, role))
        if cache is None:
            cache = self._cells[(column, role)] = [_UNSHOWN] * len(self.items)
        items = self.items
        sized = role in ("text", "bold")
        if sized:
            texts = self._cells.get((column, "text")) or [None] * len(items)
            bolds = self._cells.get((column, "bold")) or [None] * len(items)
            widths, width = self._widths, self._text_width
        for j, value in zip(rows, values, strict=True):
            if cache[j] == value:
                continue
            cache[j] = value
            item = items[j]
            if sized:
                self._resized_columns.add(column)
                if column == C_NAME:  # a name turned bold (or back): measure names again
                    self._names_width = None
                text, bold = texts[j], bolds[j]
                ok = isinstance(text, str) and text
                bold = bold is not _UNSHOWN and bool(bold)
                widths[j, column] = width(text, bold) if ok else 0  # type: ignore[arg-type]
            if role == "text":
                item.setText(column, value)  # type: ignore[arg-type]
            elif role == "tip":
                item.setToolTip(column, value)  # type: ignore[arg-type]
            elif role == "bold":
                item.setFont(column, self._bold if value else self._plain)
            elif role == "background":
                item.setBackground(column, QBrush(QColor(*value)) if value else QBrush())  # type: ignore[misc]
            elif role == "foreground":
                item.setForeground(column, QBrush(QColor(*value)) if value else self._ink)  # type: ignore[misc]

    def _refresh_tuning(self) -> None:
        """Precision, shell and rounding of every joint, bold where its own rule sets them:
        what a settings or rule edit changes before any result comes back. Only the joints
        whose values changed since the last refresh are visited (a joint's edit, one row)."""
        r = self.document.resolved_joints()
        clip = self.document.clip
        if r is None or not self.items or clip is None:
            return
        names = clip.skeleton.names
        n = len(self.items)
        # which fields each joint's own (exact-name) rule sets; the last such rule wins
        own = np.zeros((n, 3), dtype=bool)
        rules = self.document.overrides
        if rules:
            if self._joints_of is None or self._joints_of[0] is not names:
                by_pattern: dict[str, list[int]] = {}
                for j in range(n):
                    by_pattern.setdefault(exact_pattern(names[j]).lower(), []).append(j)
                self._joints_of = (names, by_pattern)
            joints_of = self._joints_of[1]
            for rule in rules:
                for j in joints_of.get(rule.pattern.lower(), ()):
                    own[j] = (
                        rule.precision is not None,
                        rule.shell_distance is not None,
                        rule.rounding is not None,
                    )
        state = (r.precision, r.shell_distance, r.rounding, r.overridden, own)
        shown = self._tuning_shown
        fresh = shown is None or shown[0] is not self._cells  # a new tree: every row

        def moved(k: int) -> list[int]:
            """The joints whose field k of `state` changed since it was last shown."""
            if fresh:
                return list(range(n))
            diff = np.asarray(state[k]) != np.asarray(shown[1][k])  # type: ignore[index]
            return np.flatnonzero(diff.any(axis=1) if diff.ndim > 1 else diff).tolist()

        self._tuning_shown = (self._cells, tuple(np.array(a, copy=True) for a in state))
        texts: dict[float, str] = {}  # most joints share a few values

        def text(v: float) -> str:  # settings read as typed: 0.01, not 10e-3
            t = texts.get(v)
            if t is None:
                t = texts[v] = f"{v:.6g}"
            return t

        # field by field: a global precision edit writes the precision column only
        put = self._put_all
        rows = moved(0)
        put(C_PREC, "text", rows, [text(v) for v in r.precision[rows].tolist()])
        rows = moved(1)
        put(C_SHELL, "text", rows, [text(v) for v in r.shell_distance[rows].tolist()])
        rows = moved(2)
        put(C_ROUND, "text", rows, [str(r.rounding[j]) for j in rows])
        rows = moved(4)
        for k, c in enumerate((C_PREC, C_SHELL, C_ROUND)):
            put(c, "bold", rows, own[rows, k].tolist())
        rows = moved(3)
        flags = np.asarray(r.overridden)[rows].tolist()
        put(C_NAME, "bold", rows, flags)
        put(C_NAME, "tip", rows, ["set by override rules" if f else "" for f in flags])

    def _refresh_result(self) -> None:
        """Kinds and bits, dominant shell, max error and its share of the budget; then the
        columns are sized once. Each group of columns is formatted again only for the joints
        whose numbers in it changed (a global edit moves every error, few bit rates)."""
        if not self.items:
            return
        result = self.document.result
        costs = result.costs if result is not None else None
        n = len(self.items)
        same = costs is not None and costs.kinds.shape[0] == n
        fits = result is not None and result.error.ndim == 2
        fits = fits and result.error.shape[1] == n and result.error.size > 0
        err = np.asarray(result.error).max(axis=0) if fits else None  # type: ignore[union-attr]
        ds = costs.dominant_shells if same else None  # type: ignore[union-attr]
        sub = dom = errs = None  # (J, k) the numbers each group of columns shows
        if same:
            assert costs is not None
            all_bits = np.asarray(costs.bits_per_component)  # (G, J, 3)
            sub = np.hstack(
                [np.asarray(costs.kinds), all_bits.transpose(1, 0, 2).reshape(n, -1)]
            ).astype(np.float64)
            if ds is not None:
                dom = np.stack([ds.distance, ds.precision], axis=1).astype(np.float64)
        if err is not None:
            assert result is not None
            budget = np.asarray(result.clip.skeleton.precision, dtype=np.float64)
            errs = np.stack([err, budget], axis=1).astype(np.float64)
        last = self._result_shown
        fresh = last is None or last[0] is not self._cells
        shown = {} if fresh else last[1]  # type: ignore[index]
        todo_sub = _changed_rows(sub, shown.get("sub", _UNSHOWN), n)
        todo_dom = _changed_rows(dom, shown.get("dom", _UNSHOWN), n)
        todo_err = _changed_rows(errs, shown.get("err", _UNSHOWN), n)
        self._result_shown = (self._cells, {"sub": sub, "dom": dom, "err": errs})
        put = self._put_all
        rows = np.flatnonzero(todo_sub).tolist()
        if sub is not None:
            texts = subtrack_texts(np.asarray(costs.kinds)[rows], all_bits[:, rows])  # type: ignore[union-attr]
            for k, c in enumerate((C_ROT, C_TRANS, C_SCALE)):
                put(c, "text", rows, [t[k] for t in texts])
        else:
            for c in (C_ROT, C_TRANS, C_SCALE):
                put(c, "text", rows, [""] * len(rows))
        rows = np.flatnonzero(todo_dom).tolist()
        dom_text = [eng(d) for d in dom[rows, 0].tolist()] if dom is not None else [""] * len(rows)
        put(C_DOM, "text", rows, dom_text)
        over = None
        rows = np.flatnonzero(todo_err).tolist()
        if errs is not None:
            assert err is not None
            fraction = np.asarray(budget_fraction(err, budget), dtype=np.float64)  # (J,)
            over = np.asarray(is_over(fraction))
            used = np.round(np.asarray(error_colors(fraction[rows]))[:, :3] * 255).astype(int)
            red = (OVER_BUDGET.red(), OVER_BUDGET.green(), OVER_BUDGET.blue())
            put(C_ERR, "text", rows, [eng(e, 4) for e in err[rows].tolist()])
            put(C_ERR, "foreground", rows, [red if o else None for o in over[rows].tolist()])
            put(C_USED, "text", rows, [format_percent(f) for f in fraction[rows].tolist()])
            put(C_USED, "background", rows, [tuple(u) for u in used.tolist()])
            put(C_USED, "foreground", rows, [(20, 20, 20)] * len(rows))
        else:
            for c in (C_ERR, C_USED):
                put(c, "text", rows, [""] * len(rows))
                put(c, "background", rows, [None] * len(rows))
        self._tip_numbers = (
            ds if same else None,
            (err, budget, over) if err is not None else None,
        )
        self._size_columns()

    def result_tip(self, joint: int, column: int) -> str:
        """The hover text of a result cell, written when asked for: a global edit changes
        every joint's error, and two tooltips per row were a third of the panel's refresh."""
        ds, errors = self._tip_numbers
        if column == C_DOM and ds is not None and 0 <= joint < len(ds.distance):
            return (
                f"dominant shell {eng(ds.distance[joint], 6)} cm, "
                f"its precision {eng(ds.precision[joint], 6)} cm"
            )
        if column in (C_ERR, C_USED) and errors is not None and 0 <= joint < len(errors[0]):
            err, budget, over = errors
            tip = f"{eng(err[joint])} cm of a {format_budget(float(budget[joint]))} budget"
            return tip + (": over budget" if column == C_ERR and over[joint] else "")
        return ""

    def _text_width(self, text: str, bold: bool) -> int:
        """Pixels `text` takes in a cell's font, remembered: most cells share a few texts."""
        key = (bold, text)
        w = self._text_widths.get(key)
        if w is None:
            fm = self._bold_metrics if bold else self._plain_metrics
            w = self._text_widths[key] = math.ceil(fm.horizontalAdvance(text))
        return w

    def column_width(self, column: int) -> int:
        """What a value column needs: its widest cell's text in that cell's font and the
        style's margins around it, or its title. From the widths of the texts the panel
        wrote (kept per cell as it writes them): `sizeHintForColumn` asks the delegate for
        every row's size (6 ms of a result at 212 joints)."""
        widest = int(self._widths[:, column].max()) if len(self._widths) else 0
        cell = widest + self._cell_margin if widest else 0
        return max(cell, self.values.header().sectionSizeHint(column))

    def _size_columns(self) -> None:
        """Every value column as wide as its widest cell or its title, measured once."""
        header = self.values.header()
        resized = False
        for c in sorted(self._resized_columns):  # only where a text or font changed
            if c == C_NAME:
                continue
            want = self.column_width(c)
            if header.sectionSize(c) != want:
                header.resizeSection(c, want)
                resized = True
        self._resized_columns.clear()
        if resized:
            self._fit_split()

    def _refresh_rules(self) -> None:
        rules = self.document.overrides
        if rules == self._table_rules:
            self._refresh_match_counts()  # the same rules on another clip count again
            return
        with self.syncing:
            self.rules.setRowCount(len(rules))
            for row, rule in enumerate(rules):
                cells = (
                    rule.pattern,
                    "" if rule.precision is None else f"{rule.precision:g}",
                    "" if rule.shell_distance is None else f"{rule.shell_distance:g}",
                    rule.rounding or "",
                    "",
                )
                for c, text in enumerate(cells):
                    cell = QTableWidgetItem(text)
                    if c == len(cells) - 1:
                        cell.setFlags(cell.flags() & ~Qt.ItemFlag.ItemIsEditable)
                    self.rules.setItem(row, c, cell)
            self._table_rules = rules
            self._draft_row = None
        self.rule_error.setText("")
        self._refresh_match_counts()
        self._show_source()

    def _apply_filter(self) -> None:
        text = self.filter.text()
        if not self.items:
            return
        shown = np.array([matches_filter(item.text(C_NAME), text) for item in self.items])
        if self.document.clip is not None:  # a match keeps the chain above it in view
            shown = self.document.clip.skeleton.with_ancestors(shown)
        for item, visible in zip(self.items, shown, strict=True):
            item.setHidden(not visible)
            index = self.tree.indexFromItem(item)
            self.values.setRowHidden(index.row(), index.parent(), not visible)

    def _on_selection(self) -> None:
        j = self.document.selection
        self._show_source()
        if self.syncing:  # the tree's own click, told to the document
            return
        with self.syncing:
            if j is None or j >= len(self.items):
                self.tree.setCurrentItem(None)
                self.tree.clearSelection()
            else:
                select = QItemSelectionModel.SelectionFlag  # whatever keys are held
                self.tree.setCurrentItem(self.items[j], 0, select.ClearAndSelect | select.Rows)
                for k in self.document.also_selected:
                    if k < len(self.items):
                        self.items[k].setSelected(True)
                self.tree.scrollToItem(self.items[j])

    def edit_cell(self, joint: int, column: int) -> QWidget | None:
        """Open the in-place editor of one joint's precision, shell or rounding (what a
        double-click does) and return it."""
        index = self.tree.indexFromItem(self.items[joint], column)
        self.values.setCurrentIndex(index)
        self.values.edit(index)
        return self.values.indexWidget(index) or self.values.viewport().findChild(
            QComboBox if column == C_ROUND else QDoubleSpinBox
        )

    # --- view -> model ------------------------------------------------------------------
    def _on_current_item(self, item: QTreeWidgetItem | None, _previous: object) -> None:
        if item is not None:
            self._to_document()

    def _to_document(self) -> None:
        """The current joint and the other selected ones (hierarchy order) to the document."""
        item = self.tree.currentItem()
        if self.syncing or item is None:
            return
        also = sorted(int(i.data(C_NAME, JOINT_ROLE)) for i in self.tree.selectedItems())
        with self.syncing:  # the tree already shows it: no echo while Qt is mid-click
            self.document.set_selection(int(item.data(C_NAME, JOINT_ROLE)), tuple(also))

    def _commit(self, rules: tuple[JointOverride, ...]) -> None:
        self.overrides_edited.emit(tuple(rules))

    def edit_joint(self, joint: int, field: str, value: float | str | None) -> None:
        """Give one joint its own value (an exact-name rule that wins over every pattern)."""
        if self.document.clip is None:
            return
        name = self.document.clip.skeleton.names[joint]
        if isinstance(value, float) and not (math.isfinite(value) and value > 0):
            return
        self._commit(set_joint_override(self.document.overrides, name, **{field: value}))

    def reset_selected_joint(self) -> None:
        """Drop the selected joint's own rule, so rules and global values apply again."""
        j = self.document.selection
        if j is None or self.document.clip is None:
            return
        name = self.document.clip.skeleton.names[j]
        self._commit(
            set_joint_override(
                self.document.overrides, name, precision=None, shell_distance=None, rounding=None
            )
        )

    def add_rule(self, pattern: str, **fields: float | str | None) -> None:
        """Append a pattern rule (later rules win)."""
        self._commit((*self.document.overrides, JointOverride(pattern, **fields)))  # type: ignore[arg-type]

    def _on_add_clicked(self) -> None:
        """A new empty row with its pattern being typed: it becomes a rule (matching nothing
        else, pinning nothing) once a pattern is entered; Esc or an empty pattern drops it."""
        if self._draft_row is not None:
            row = self._draft_row
        else:
            row = self.rules.rowCount()
            with self.syncing:
                self.rules.insertRow(row)
                for c in range(len(RULE_COLUMNS)):
                    cell = QTableWidgetItem("")
                    if c == len(RULE_COLUMNS) - 1:
                        cell.setFlags(cell.flags() & ~Qt.ItemFlag.ItemIsEditable)
                    self.rules.setItem(row, c, cell)
            self._draft_row = row
        self.rules.setCurrentCell(row, 0)
        self.rules.scrollToItem(self.rules.item(row, 0))
        self.rules.editItem(self.rules.item(row, 0))

    def _on_rule_editor_closed(self, _editor: QWidget, _hint: object) -> None:
        """Leaving the new row's pattern empty (Esc, or Enter on nothing) cancels it."""
        row = self._draft_row
        if row is None:
            return
        cell = self.rules.item(row, 0)
        if cell is None or not cell.text().strip():
            self._drop_draft()

    def _drop_draft(self) -> None:
        if self._draft_row is None:
            return
        with self.syncing:
            self.rules.removeRow(self._draft_row)
        self._draft_row = None
        self.rule_error.setText("")

    def remove_selected_rules(self) -> None:
        rows = {i.row() for i in self.rules.selectionModel().selectedRows()}
        if not rows and self.rules.currentRow() >= 0:
            rows = {self.rules.currentRow()}
        if self._draft_row is not None and self._draft_row in rows:
            rows.discard(self._draft_row)
            self._drop_draft()
        self._commit(tuple(r for i, r in enumerate(self.document.overrides) if i not in rows))

    def _rule_from_row(self, row: int) -> JointOverride:
        def text(c: int) -> str:
            cell = self.rules.item(row, c)
            return cell.text().strip() if cell is not None else ""

        def number(c: int, label: str) -> float | None:
            t = text(c)
            if not t:
                return None
            try:
                return float(t)
            except ValueError:
                raise ValueError(f"row {row + 1}: {label} {t!r} is not a number") from None

        pattern = text(0)
        if not pattern:
            raise ValueError(f"row {row + 1}: the pattern is empty")
        return JointOverride(
            pattern, number(1, "precision"), number(2, "shell distance"), text(3) or None
        )

    def _on_rule_item_changed(self, _item: QTableWidgetItem) -> None:
        if self.syncing:
            return
        draft = self._draft_row
        named = draft is not None and bool(self.rules.item(draft, 0).text().strip())
        rows = [r for r in range(self.rules.rowCount()) if r != draft or named]
        try:
            rules = tuple(self._rule_from_row(r) for r in rows)
        except ValueError as e:
            self.rule_error.setText(str(e))  # keep the table as typed; the model keeps its rules
            return
        self.rule_error.setText("")
        self._table_rules = rules  # the table already shows them: no rebuild under the editor
        if named:  # the new rule has its pattern: now its precision is typed
            self._draft_row = None
            precision = self.rules.item(draft, 1)  # type: ignore[arg-type]
            self.rules.setCurrentItem(precision)
            QTimer.singleShot(0, lambda: self._edit_if_current(precision))
        if rules != self.document.overrides:
            self._commit(rules)
        self._refresh_match_counts()

    def unapplied_edit(self) -> str | None:
        """Why a rule typed in the table is not in the tuning (a cell that is not a number),
        None when the table holds what the tuning does (the window asks before quitting)."""
        text = self.rule_error.text()
        return f"Override rules: {text}" if text else None

    def _edit_if_current(self, cell: QTableWidgetItem) -> None:
        if (
            self.rules.currentItem() is cell
            and self.rules.state() != QAbstractItemView.State.EditingState
        ):
            self.rules.editItem(cell)

    def _refresh_match_counts(self) -> None:
        """Each rule's count of joints; a rule matching none is marked, and said below the
        table (a typo or a glob of another rig must not pass silently)."""
        clip = self.document.clip
        unmatched = []
        with self.syncing:
            for row, rule in enumerate(self.document.overrides[: self.rules.rowCount()]):
                cell = self.rules.item(row, len(RULE_COLUMNS) - 1)
                if cell is None or clip is None:
                    continue
                n = int(rule.matches(clip.skeleton.names).sum())
                cell.setText(str(n) if n else "0 \u26a0")
                cell.setForeground(QBrush(UNMATCHED) if not n else self._ink_brush())
                cell.setToolTip("" if n else "This rule matches no joint of this clip")
                if not n:
                    unmatched.append(f"{row + 1} ({rule.pattern})")
        text = ""
        if len(unmatched) == 1:
            text = f"\u26a0 Rule {unmatched[0]} matches no joint"
        elif unmatched:
            more = f" and {len(unmatched) - 3:,} more" if len(unmatched) > 3 else ""
            text = f"\u26a0 Rules {', '.join(unmatched[:3])}{more} match no joint"
        self.rule_warning.setText(text)
        self.rule_warning.setVisible(bool(text))

    def _ink_brush(self) -> QBrush:
        return self.rules.palette().text()

    def source_text(self, joint: int) -> str:
        """Which rule set each of the joint's values, or that the global value stands."""
        doc = self.document
        r = doc.resolved_joints()
        if r is None or doc.clip is None or not 0 <= joint < len(r.precision):
            return ""
        rules = doc.overrides
        values = (
            f"{r.precision[joint]:g}",
            f"{r.shell_distance[joint]:g}",
            str(r.rounding[joint]),
        )
        parts = []
        for field, value, k in zip(FIELDS, values, r.source[joint].tolist(), strict=True):
            if k < 0:
                parts.append(f"{field} {value} (global)")
            elif rules[k].exact:
                parts.append(f"{field} {value} (its own value, rule {k + 1})")
            else:
                parts.append(f"{field} {value} (rule {k + 1}: {rules[k].pattern})")
        return f"{doc.clip.skeleton.names[joint]}: " + "; ".join(parts)

    def _show_source(self) -> None:
        j = self.document.selection
        text = self.source_text(j) if j is not None else ""
        self.source_label.setText(text)
        self.source_label.setToolTip(text)
        self.source_label.setVisible(bool(text))

    # --- presets ------------------------------------------------------------------------
    def presets(self) -> dict[str, tuple[JointOverride, ...]]:
        """The shipped presets and the user's own (QSettings, per user)."""
        return all_presets(QSettings().value(PRESETS_KEY, "", type=str))

    def apply_preset(self, name: str) -> None:
        """Append a preset's rules to the clip's (one undo step; later rules win)."""
        rules = self.presets().get(name)
        if rules and self.document.clip is not None:
            self._commit((*self.document.overrides, *rules))

    def save_preset(self, name: str, rules: tuple[JointOverride, ...] | None = None) -> None:
        """Keep `rules` (the clip's pattern rules by default: a joint's own values belong
        to its rig) as the user's preset `name`."""
        rules = tuple(r for r in self.document.overrides if not r.exact) if rules is None else rules
        if not name.strip() or not rules:
            return
        settings = QSettings()
        own = read_presets(settings.value(PRESETS_KEY, "", type=str))
        own[name.strip()] = rules
        settings.setValue(PRESETS_KEY, write_presets(own))

    def delete_preset(self, name: str) -> None:
        settings = QSettings()
        own = read_presets(settings.value(PRESETS_KEY, "", type=str))
        if own.pop(name, None) is not None:
            settings.setValue(PRESETS_KEY, write_presets(own))

    def ask_save_preset(self) -> None:
        """Rules > Save rules as preset: asks a name."""
        name, ok = QInputDialog.getText(self, "Save rules as preset", "Preset name:")
        if ok:
            self.save_preset(name)

    def _fill_presets_menu(self, menu: QMenu | None = None) -> None:
        """The presets (apply one), save and delete: the Presets button's menu and the
        window's Rules > Presets fill themselves here when shown."""
        menu = menu if menu is not None else self.presets_menu
        menu.clear()
        own = read_presets(QSettings().value(PRESETS_KEY, "", type=str))
        for name, rules in self.presets().items():
            act = menu.addAction(name, lambda n=name: self.apply_preset(n))
            act.setToolTip(" ; ".join(r.pattern for r in rules))
        menu.addSeparator()
        save = menu.addAction("Save pattern rules as preset\u2026", self.ask_save_preset)
        save.setEnabled(any(not r.exact for r in self.document.overrides))
        delete = menu.addMenu("Delete my preset")
        for name in own:
            delete.addAction(name, lambda n=name: self.delete_preset(n))
        delete.setEnabled(bool(own))
