"""Error plot and error heat map: draw the result, and drive time and selection both ways."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtWidgets import QGraphicsItem

from app.views.error_heatmap import ErrorHeatmapPanel
from app.views.error_plot import ErrorPlotPanel
from codec.tuning import JointOverride
from tests.app.panel_helpers import Recompressions, make_document, make_result


def _pixels(image) -> np.ndarray:
    """(H, W, 4) int ARGB values of a QImage."""
    image = image.convertToFormat(image.Format.Format_ARGB32)
    rows = np.frombuffer(image.constBits(), dtype=np.uint8).reshape(image.height(), -1, 4)
    return rows[:, : image.width()].astype(int)


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
    assert "RightHand" in panel.legend.text()
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


def test_legend_sits_outside_the_plot_and_the_axis_is_in_cm(qtbot) -> None:
    doc = make_document()
    panel = ErrorPlotPanel(doc)
    qtbot.addWidget(panel)
    panel.resize(700, 320)
    panel.show()
    qtbot.waitExposed(panel)
    # the legend is a row of its own: it never overlaps the plotted area
    legend = panel.legend.geometry()
    plot = panel.plot.geometry()
    assert legend.bottom() < plot.top()
    assert "budget 0.01 cm" in panel.legend.text()
    axis = panel.plot.getAxis("left")
    assert axis.labelText == "error (cm)" and not axis.autoSIPrefix
    assert axis.tickStrings([0.0, 0.002, 0.01], 1.0, 0.002) == ["0", "2e\u22123", "10e\u22123"]
    ticks = [0.0, 0.2, 0.4, 0.6, 0.8]  # a 1 cm budget: decimals, not 800e-3
    assert axis.tickStrings(ticks, 1.0, 0.2) == ["0", "0.2", "0.4", "0.6", "0.8"]
    # the error axis starts at zero and shows the budget line
    lo, hi = panel.plot.getViewBox().viewRange()[1]
    assert lo == 0.0 and hi >= max(doc.global_precision(), doc.result.error.max())


def test_error_axis_ends_on_a_round_value_that_small_changes_keep(qtbot) -> None:
    doc = make_document()
    panel = ErrorPlotPanel(doc)
    qtbot.addWidget(panel)
    vb = panel.plot.getViewBox()
    assert vb.viewRange()[1] == pytest.approx([0.0, 0.04])  # worst 0.03 x 1.12, rounded up
    doc.update_settings(precision=0.031)  # over the worst error: the budget sets the top
    assert doc.settings.precision > doc.result.error.max()
    assert vb.viewRange()[1] == pytest.approx([0.0, 0.04])  # 0.0347: the same round end
    doc.update_settings(precision=0.033)  # a small step: the axis stays
    assert vb.viewRange()[1][1] == pytest.approx(0.04)
    doc.update_settings(precision=0.036)  # 0.0403: the next round end
    assert vb.viewRange()[1][1] == pytest.approx(0.05)
    # axes, curves and lines are drawn into pixmaps once and copied until they change
    items = [panel.plot.getAxis("left"), panel.plot.getAxis("bottom"), panel.cursor]
    items += [c.curve for c in panel.curves()] + [panel.precision_line]
    for item in items:
        assert item.cacheMode() == QGraphicsItem.CacheMode.DeviceCoordinateCache
    # and drawn the same as without the pixmaps
    panel.resize(500, 300)
    panel.show()
    qtbot.waitExposed(panel)
    cached = _pixels(panel.plot.grab().toImage())
    for item in items:
        item.setCacheMode(QGraphicsItem.CacheMode.NoCache)
    # (a grid line blended onto the pixmap first may differ by a shade)
    assert np.abs(_pixels(panel.plot.grab().toImage()) - cached).max() <= 16


def test_a_new_clip_clears_the_plot_before_its_result_exists(qtbot) -> None:
    doc = make_document()
    panel = ErrorPlotPanel(doc)
    qtbot.addWidget(panel)
    assert len(panel.max_curve.getData()[0]) == 40
    from tests.app.panel_helpers import make_clip

    longer = make_clip("run")
    longer = longer.replace(
        rotations=np.concatenate([longer.rotations] * 3),
        translations=np.concatenate([longer.translations] * 3),
        scales=np.concatenate([longer.scales] * 3),
    )
    doc.set_clip(longer)  # compressing: no result yet
    x = panel.max_curve.getData()[0]
    assert x is None or len(x) == 0
    lo, hi = panel.plot.getViewBox().viewRange()[0]
    assert hi >= longer.duration * 0.99  # the new clip's time axis, not the old one's
    assert "compressing" in panel.readout.text()


def _heatmap(qtbot) -> tuple[ErrorHeatmapPanel, object]:
    doc = make_document()
    panel = ErrorHeatmapPanel(doc)
    qtbot.addWidget(panel)
    panel.resize(600, 260)
    panel.show()
    qtbot.waitExposed(panel)
    return panel, doc


def test_heat_map_shows_budget_fractions_in_readable_rows(qtbot) -> None:
    panel, doc = _heatmap(qtbot)
    assert panel.ratio.shape == (40, 5)
    np.testing.assert_allclose(panel.ratio[:, 2], doc.result.error[:, 2] / 0.01)
    canvas = panel.canvas
    fm = canvas.fontMetrics()
    assert canvas.row_height >= fm.height()  # 5 rows fit: every row is a line of text
    names = [doc.clip.skeleton.names[j] for j in panel.order]
    widest = max(
        fm.horizontalAdvance(n) + 8 * int(panel.depth[j])
        for n, j in zip(names, panel.order, strict=True)
    )
    assert canvas.cells_rect().left() >= widest  # no name is cut
    # the cells carry the one error scale
    from app.model.error_scale import error_colors_u8

    img = panel.image.convertToFormat(panel.image.Format.Format_RGBA8888)
    px = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine() // 4, 4)
    row = int(panel.row_of[2])
    np.testing.assert_array_equal(px[row, 31], error_colors_u8(doc.result.error[31, 2] / 0.01))
    assert "LeftHand" in panel.tooltip_text(2, 31) and "%" in panel.tooltip_text(2, 31)


def test_heat_map_clicks_select_and_scrub(qtbot) -> None:
    panel, doc = _heatmap(qtbot)
    canvas = panel.canvas
    rh = canvas.row_height
    x = int(canvas.time_to_x(1.0))
    row = int(panel.row_of[4])
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=QPoint(x, row * rh + rh // 2))
    assert doc.selection == 4 and doc.time == pytest.approx(1.0, abs=1 / 30)
    assert canvas.cell_at(QPoint(x, row * rh + 2)) == (4, 30)
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=QPoint(x, rh // 2))
    qtbot.mouseMove(canvas, QPoint(int(canvas.time_to_x(0.4)), rh // 2))
    qtbot.mouseRelease(
        canvas, Qt.MouseButton.LeftButton, pos=QPoint(int(canvas.time_to_x(0.4)), rh // 2)
    )
    assert doc.time == pytest.approx(0.4, abs=1 / 30) and doc.selection == int(panel.order[0])
    doc.set_result(None)
    assert panel.ratio.size == 0 and panel.image is None


def test_heat_map_rows_scroll_to_the_selection_on_a_big_rig(qtbot) -> None:
    import codec
    from tests.app.conftest import DATA

    doc = make_document(with_result=False)
    panel = ErrorHeatmapPanel(doc)
    qtbot.addWidget(panel)
    panel.resize(600, 200)
    panel.show()
    clip = codec.load_clip(DATA / "bvh" / "cmu_02_03_run_ccrig.bvh")
    doc.set_clip(clip)
    from types import SimpleNamespace

    rng = np.random.default_rng(3)
    err = rng.uniform(0.0, 0.012, (clip.num_samples, clip.num_joints))
    doc.set_result(SimpleNamespace(clip=clip, error=err))  # all the heat map reads
    assert panel.canvas.height() >= panel.canvas.row_height * clip.num_joints
    last = int(panel.order[-1])
    doc.set_selection(last)
    bar = panel.scroll.verticalScrollBar()
    assert bar.value() > 0  # scrolled down to the last row


def test_heat_map_colours_again_only_the_rows_whose_error_changed(qtbot) -> None:
    """A result that moves one joint's error recolours that joint's row; the image is the
    one a fresh panel draws of the same result, pixel for pixel."""
    doc = make_document()
    panel = ErrorHeatmapPanel(doc)
    qtbot.addWidget(panel)
    assert panel.recoloured == doc.clip.num_joints  # the first image: every row
    r = make_result(doc.compression_input())
    r.measurements.error[:, 3] *= 1.7  # RightHand only
    doc.set_result(r)
    assert panel.recoloured == 1
    fresh = ErrorHeatmapPanel(doc)
    qtbot.addWidget(fresh)
    assert fresh.recoloured == doc.clip.num_joints
    assert panel.image == fresh.image
    np.testing.assert_array_equal(panel.ratio, fresh.ratio)
    doc.set_result(make_result(doc.compression_input(), scale=3.0))  # every error moves
    assert panel.recoloured == doc.clip.num_joints
