"""Error plot and error heat map: draw the result, and drive time and selection both ways."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from app.views.error_heatmap import ErrorHeatmapPanel
from app.views.error_plot import ErrorPlotPanel
from codec.overrides import JointOverride
from tests.app.panel_helpers import Recompressions, make_document, make_result


def _click_view(qtbot, plot, x: float, y: float) -> None:
    vb = plot.getViewBox()
    scene = vb.mapViewToScene(QPointF(x, y))
    pos = plot.mapFromScene(scene)
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def test_curves_follow_result_selection_and_settings(qtbot) -> None:
    doc = make_document(with_result=False)
    panel = ErrorPlotPanel(doc)
    qtbot.addWidget(panel)
    assert panel.max_curve.getData()[0] is None or len(panel.max_curve.getData()[0]) == 0
    doc.set_result(make_result(doc.compression_input()))
    x, y = panel.max_curve.getData()
    np.testing.assert_allclose(y, doc.result.error.max(axis=1))
    assert x[-1] == pytest.approx(39 / 30)
    doc.set_selection(3)
    np.testing.assert_allclose(panel.joint_curve.getData()[1], doc.result.error[:, 3])
    assert panel.legend.getLabel(panel.joint_curve).text == "RightHand"
    doc.update_settings(precision=0.005)
    assert panel.precision_line.value() == 0.005
    doc.set_overrides([JointOverride("RightHand", precision=0.05)])
    assert panel.joint_precision_line.value() == 0.05
    assert panel.joint_precision_line.isVisibleTo(panel.plot.plotItem)


def test_between_samples_toggle_goes_through_the_document(qtbot) -> None:
    doc = make_document()
    panel = ErrorPlotPanel(doc)
    qtbot.addWidget(panel)
    assert len(panel.between_curve.getData()[0] or []) == 0
    panel.between_box.setChecked(True)
    assert doc.display.show_error_between
    np.testing.assert_allclose(panel.between_curve.getData()[1], doc.result.error_between.max(1))
    doc.update_display(show_error_between=False)
    assert not panel.between_box.isChecked()


def test_time_cursor_is_synchronised_both_ways(qtbot) -> None:
    doc = make_document()
    counter = Recompressions(doc)
    panel = ErrorPlotPanel(doc)
    qtbot.addWidget(panel)
    doc.set_time(0.5)
    assert panel.cursor.value() == 0.5
    panel.cursor.setValue(0.75)  # what a drag does
    assert doc.time == 0.75
    panel.resize(500, 300)
    panel.show()
    qtbot.waitExposed(panel)
    _click_view(qtbot, panel.plot, 1.0, 0.001)
    assert doc.time == pytest.approx(1.0, abs=0.02)
    assert counter.count == 0


def test_go_to_worst_selects_the_worst_joint_at_its_time(qtbot) -> None:
    doc = make_document()
    panel = ErrorPlotPanel(doc)
    qtbot.addWidget(panel)
    qtbot.mouseClick(panel.worst_button, Qt.MouseButton.LeftButton)
    assert doc.selection == 2 and doc.time == pytest.approx(31 / 30)
    assert "LeftHand" in panel.readout.text()


def test_heat_map_shows_error_over_precision_and_clicks_select(qtbot) -> None:
    doc = make_document()
    panel = ErrorHeatmapPanel(doc)
    qtbot.addWidget(panel)
    assert panel.ratio.shape == (40, 5)
    np.testing.assert_allclose(panel.ratio[:, 2], doc.result.error[:, 2] / 0.01)
    assert panel.cell_at(0.5, 3.5) == (3, 15 / 30)  # rows: root, Spine, LeftHand, RightHand
    doc.set_selection(2)
    assert panel.selection_box.getRegion() == (2, 3) or tuple(panel.selection_box.getRegion()) == (
        2.0,
        3.0,
    )
    doc.set_time(0.4)
    assert panel.cursor.value() == pytest.approx(0.4)
    panel.cursor.setValue(0.2)
    assert doc.time == pytest.approx(0.2)
    panel.resize(500, 300)
    panel.show()
    qtbot.waitExposed(panel)
    _click_view(qtbot, panel.plot, 1.0, 4.5)
    assert doc.selection == 4 and doc.time == pytest.approx(1.0)
    doc.set_result(None)
    assert panel.ratio.size == 0
