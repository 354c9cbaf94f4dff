"""Labels whose text changes on every edit repaint themselves and re-lay out nothing else."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from app.qt.label_fence import LabelFence, fixed_group
from tests.app.conftest import settle


class LayoutRequests(QObject):
    """Counts the re-layouts asked of some widgets."""

    def __init__(self, *widgets: QWidget) -> None:
        super().__init__()
        self.count = 0
        for w in widgets:
            w.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.count += 1
        return False


def _settle(qtbot) -> None:
    settle(qtbot)  # every layout request posted (and counted) and carried out


def test_a_fenced_label_shows_any_text_without_re_laying_out_its_panel(qtbot) -> None:
    panel = QWidget()
    qtbot.addWidget(panel)
    column = QVBoxLayout(panel)
    label = QLabel("short")
    fence = LabelFence(label)
    column.addWidget(fence)
    column.addWidget(QPushButton("below"))
    panel.resize(300, 100)
    panel.show()
    qtbot.waitExposed(panel)
    _settle(qtbot)
    width = panel.minimumSizeHint().width()
    requests = LayoutRequests(panel)
    long_text = "a status line much longer than the panel is wide, " * 3
    label.setText(long_text)
    _settle(qtbot)
    assert requests.count == 0
    assert label.text() == long_text  # the whole text is kept (cut at the fence's edge)
    assert label.geometry() == fence.rect() and fence.width() > 200
    assert panel.minimumSizeHint().width() == width  # a long text does not widen the panel
    panel.resize(400, 100)  # the label follows its fence
    _settle(qtbot)
    assert label.geometry() == fence.rect() and fence.width() > 300
    # the same panel without the fence re-lays out on a text change
    bare = QLabel("short")
    column.addWidget(bare)
    _settle(qtbot)
    requests.count = 0
    bare.setText(long_text)
    _settle(qtbot)
    assert requests.count > 0


def test_a_fixed_group_shows_and_hides_its_widgets_in_place(qtbot) -> None:
    panel = QWidget()
    qtbot.addWidget(panel)
    column = QVBoxLayout(panel)
    a, b = QPushButton("a"), QPushButton("Cancel")
    group = fixed_group(a, b)
    column.addWidget(group)
    panel.show()
    qtbot.waitExposed(panel)
    _settle(qtbot)
    size = group.size()
    requests = LayoutRequests(panel)
    b.hide()
    _settle(qtbot)
    b.show()
    a.hide()
    _settle(qtbot)
    assert requests.count == 0 and group.size() == size
    assert b.isVisible() and not a.isVisible()


def test_the_status_line_and_progress_re_lay_out_neither_bar_nor_window(qtbot, window) -> None:
    qtbot.waitExposed(window)
    _settle(qtbot)
    requests = LayoutRequests(window, window.statusBar())
    window.status_label.setText("Compressed: 16,584 bytes in 0.05 s, and a much longer tail")
    window.progress_bar.show()
    window.cancel_button.show()
    _settle(qtbot)
    window.status_label.setText("Compressing…")
    window.progress_bar.hide()
    window.cancel_button.hide()
    _settle(qtbot)
    assert requests.count == 0
    assert window.status_label.isVisible() and window.status_label.width() > 300


def test_a_fenced_wrapping_label_takes_the_lines_its_text_needs(qtbot) -> None:
    panel = QWidget()
    qtbot.addWidget(panel)
    column = QVBoxLayout(panel)
    label = QLabel("Change: none")
    label.setWordWrap(True)
    fence = LabelFence(label)
    column.addWidget(fence)
    column.addStretch(1)
    panel.resize(200, 300)
    panel.show()
    qtbot.waitExposed(panel)
    _settle(qtbot)
    line = label.fontMetrics().height()
    assert fence.height() < 2 * line
    requests = LayoutRequests(panel)
    long_text = "Change: size -594 B (-3.5 %) and max error +1.946e-3 cm, wrapped " * 2
    label.setText(long_text)  # more lines: the panel makes room for them
    _settle(qtbot)
    assert requests.count > 0
    assert fence.height() == label.heightForWidth(fence.width()) >= 2 * line
    assert label.geometry() == fence.rect()  # every line in view
    requests.count = 0
    label.setText(long_text.replace("594", "612"))  # as many lines: nothing moves
    _settle(qtbot)
    assert requests.count == 0


def test_a_fence_keeps_its_least_lines_for_a_shorter_text(qtbot) -> None:
    label = QLabel("t 0.000 s")
    label.setWordWrap(True)
    fence = LabelFence(label, min_lines=2)
    qtbot.addWidget(fence)
    fence.resize(300, 10)
    fence.show()
    qtbot.waitExposed(fence)
    two = label.fontMetrics().height() + label.fontMetrics().lineSpacing()
    assert fence.height() == two  # one line of text, the room of two
    label.setText("a readout long enough to need three lines or more at this width " * 2)
    _settle(qtbot)
    assert fence.height() == label.heightForWidth(300) > two
