"""Panels tabbed behind another dock (Qt moves them out of the window; they are not
hidden) do no work for a result until they are shown, and then
show the current result at once (before their first paint); the panel in front keeps up."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QApplication

from app.model.error_scale import budget_fraction
from app.qt.when_shown import off_screen


def _edit(qtbot, window, precision: float) -> None:
    with qtbot.waitSignal(window.controller.result_ready, timeout=60_000):
        window.panels["SettingsPanel"].precision.setValue(precision)


def test_tabbed_panels_wait_for_their_tab_and_then_show_the_current_result(qtbot, loaded) -> None:
    window = loaded
    doc = window.document
    heat, bits = window.panels["ErrorHeatmapPanel"], window.panels["BitRatePanel"]
    curves, plot = window.panels["CurvesPanel"], window.panels["ErrorPlotPanel"]
    assert not off_screen(plot) and off_screen(heat) and off_screen(bits) and off_screen(curves)
    runs = {p: p.when_shown.runs for p in (heat, bits, curves)}
    drawn_plot = plot.when_shown.runs
    doc.set_selection(3)
    for precision in (0.02, 0.004):
        _edit(qtbot, window, precision)
    # two results and a selection later, no hidden panel has refreshed; the one in front has
    assert {p: p.when_shown.runs for p in runs} == runs
    assert all(p.when_shown.stale for p in runs)
    assert plot.when_shown.runs > drawn_plot and not plot.when_shown.stale
    shown_max = plot.max_curve.getData()[1]
    np.testing.assert_array_equal(shown_max, np.asarray(doc.result.error).max(axis=1))
    # the heat map has not drawn any result of this clip (the first was handled hidden too)
    first = heat.ratio.copy()

    window.docks["ErrorHeatmapPanel"].raise_()  # its tab to the front
    QApplication.processEvents()
    assert not off_screen(heat) and off_screen(plot)
    assert heat.when_shown.runs == runs[heat] + 1 and not heat.when_shown.stale
    sk = doc.result.clip.skeleton
    order = sk.hierarchy_order()
    want = budget_fraction(np.asarray(doc.result.error)[:, order], sk.precision[order][None, :])
    np.testing.assert_allclose(heat.ratio, want)
    assert first.shape != want.shape  # it did change: the tab shows the newest result
    assert heat.image is not None and heat.image.height() == doc.clip.num_joints

    # now the plot is the hidden one: it waits, and catches up when its tab is back
    before = plot.when_shown.runs
    _edit(qtbot, window, 0.011)
    assert plot.when_shown.runs == before and plot.when_shown.stale
    assert heat.when_shown.runs == runs[heat] + 2
    window.docks["ErrorPlotPanel"].raise_()
    QApplication.processEvents()
    assert plot.when_shown.runs == before + 1
    np.testing.assert_array_equal(
        plot.max_curve.getData()[1], np.asarray(doc.result.error).max(axis=1)
    )
    assert plot.joint_curve.getData()[1] is not None
    np.testing.assert_array_equal(plot.joint_curve.getData()[1], np.asarray(doc.result.error)[:, 3])

    window.docks["BitRatePanel"].raise_()
    QApplication.processEvents()
    assert bits.when_shown.runs == runs[bits] + 1
    costs = doc.result.costs
    np.testing.assert_array_equal(bits.bits, costs.bits_per_component)


def test_the_compare_table_waits_while_nothing_is_compared(qtbot, loaded) -> None:
    """The A | B table is hidden until Compare pins A: results meanwhile cost it nothing;
    pinned, it shows A and B at once."""
    window = loaded
    table = window.panels["StatsPanel"].compare_table
    runs = table.when_shown.runs
    _edit(qtbot, window, 0.02)
    assert table.when_shown.runs == runs and table.when_shown.stale
    assert window.controller.pin_a()
    QApplication.processEvents()
    assert table.isVisible() and table.when_shown.runs == runs + 1
    size = window.document.result.stats["compressed_size"]
    assert table.cell_text("compressed_size", 0) == table.cell_text("compressed_size", 1)
    assert table.cell_text("compressed_size", 1).replace(",", "").startswith(str(size))
