"""Compare in the window: the toolbar and menu, A and B in the 3D view (toggles, magnifier),
the error plot's A curves, the Stats A | B | change table, the heat map and bit rates' A / B /
B - A switch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QApplication

from tests.app.conftest import RESULT_TIMEOUT_MS, settle
from tests.app.test_layout import cut_texts

BVH_NAME = "cmu_02_02_walk_daz.bvh"


def _front(window, panel: str) -> None:
    """Bring a tabbed panel to the front, as a user does to read it: panels behind another
    tab leave their work until they are shown."""
    window.docks[panel].raise_()
    QApplication.processEvents()


def _pin_and_loosen(qtbot, window, precision: float = 0.2) -> None:
    bar = window.compare_bar
    assert bar.pin_action.isEnabled() and not bar.swap_action.isEnabled()
    bar.pin_action.trigger()
    assert window.document.comparison.active
    with qtbot.waitSignal(window.controller.result_ready, timeout=RESULT_TIMEOUT_MS):
        window.document.update_settings(precision=precision)  # an edit, not saved beside the clip


def test_compare_is_in_the_menu_and_the_toolbar(loaded) -> None:
    menus = {a.text().replace("&", ""): a.menu() for a in loaded.menuBar().actions()}
    texts = [a.text() for a in menus["Compare"].actions()]
    assert texts == ["Compare", "Swap A/B", "Clear"]
    # beside the menus the Compare button; the A/B toolbar only while comparing
    corner = loaded.menuBar().cornerWidget(Qt.Corner.TopRightCorner)
    assert corner.defaultAction() is loaded.compare_bar.pin_action and corner.isVisible()
    assert corner.height() > 10 and corner.width() > 30  # drawn, not squeezed to nothing
    assert not loaded.compare_bar.isVisible()
    loaded.compare_bar.pin_action.trigger()
    assert loaded.document.comparison.active and loaded.compare_bar.isVisible()


def test_a_and_b_are_drawn_magnified_and_toggle(qtbot, loaded, ui) -> None:
    doc, vp, layer = loaded.document, loaded.viewport, loaded.compare_layer
    _pin_and_loosen(qtbot, loaded)
    doc.set_time(0.37)
    ui.draw(vp)
    # the legend names the three skeletons inside the view, clear of the axis gizmo
    box = layer.legend_rect()
    assert not box.isEmpty() and QRectF(0, 0, vp.scene.width(), vp.scene.height()).contains(box)
    assert not box.intersects(vp.gizmo_rect())
    pa, pb = layer.positions["A"], layer.positions["B"]
    assert pa is not None and pb is not None
    assert layer.bones["A"].visible() and layer.bones["B"].visible()
    assert not vp.lossy_bones.visible()  # the error-coloured lossy skeleton gives way
    # B is the looser one: further from raw than A
    da = np.linalg.norm(pa - vp.raw_positions, axis=1).max()
    db = np.linalg.norm(pb - vp.raw_positions, axis=1).max()
    assert db > da
    doc.update_display(magnify=100.0)
    ui.draw(vp)
    db100 = np.linalg.norm(layer.positions["B"] - vp.raw_positions, axis=1).max()
    assert db100 > 50 * db
    loaded.compare_bar.show_boxes["A"].setChecked(False)
    ui.draw(vp)
    assert not doc.comparison.show_a and not layer.bones["A"].visible()
    assert layer.bones["B"].visible()
    loaded.compare_bar.clear_action.trigger()
    ui.draw(vp)
    assert not layer.bones["B"].visible() and vp.lossy_bones.visible()


def test_error_plot_stats_heat_map_and_bit_rates_show_both(qtbot, loaded) -> None:
    doc = loaded.document
    plot = loaded.panels["ErrorPlotPanel"]
    stats = loaded.panels["StatsPanel"]
    heat = loaded.panels["ErrorHeatmapPanel"]
    bits = loaded.panels["BitRatePanel"]
    assert len(plot.a_max_curve.getData()[0] or []) == 0
    assert stats.compare_table.isHidden()
    _pin_and_loosen(qtbot, loaded, 0.1)
    a, b = doc.side_result("A"), doc.side_result("B")
    doc.set_selection(5)
    _, ya = plot.a_max_curve.getData()
    _, yb = plot.max_curve.getData()
    np.testing.assert_allclose(ya, a.error.max(axis=1))
    np.testing.assert_allclose(yb, b.error.max(axis=1))
    np.testing.assert_allclose(plot.a_joint_curve.getData()[1], a.error[:, 5])
    assert "A worst joint" in plot.legend.text() and "B worst joint" in plot.legend.text()

    assert not stats.compare_table.isHidden() and stats.sheet_scroll.isHidden()
    t = stats.compare_table
    ca, cb = a.stats["compressed_size"], b.stats["compressed_size"]
    assert t.cell_text("compressed_size", 0, tip=True) == str(ca)
    assert t.cell_text("compressed_size", 1, tip=True) == str(cb)
    assert t.cell_text("compressed_size", 2, tip=True).startswith(f"{cb - ca:+d}")
    assert t.cell_text("compressed_size", 2) == f"{100 * (cb - ca) / ca:+.1f}%"

    precision = np.asarray(b.clip.skeleton.precision)
    _front(loaded, "ErrorHeatmapPanel")
    b_ratio = heat.ratio.copy()
    doc.set_comparison_view(panel_source="A")
    assert not np.allclose(heat.ratio, b_ratio)
    doc.set_comparison_view(panel_source="B-A")
    order = b.clip.skeleton.hierarchy_order()
    np.testing.assert_allclose(heat.ratio, ((b.error - a.error) / precision)[:, order])
    assert "B \u2212 A" in heat.toolTip()
    _front(loaded, "BitRatePanel")
    assert bits.canvas.diff is not None
    both = (a.costs.bits_per_component >= 0) & (b.costs.bits_per_component >= 0)
    np.testing.assert_array_equal(
        bits.canvas.diff[both], (b.costs.bits_per_component - a.costs.bits_per_component)[both]
    )
    assert not bits.canvas.diff[
        (a.costs.bits_per_component < 0) & (b.costs.bits_per_component < 0)
    ].any()
    assert "fewer" in bits.summary.text()
    loaded.compare_bar.swap_action.trigger()
    assert doc.side_result("A") is b and doc.side_result("B") is a
    a_budget = np.asarray(a.clip.skeleton.precision)  # the budget of what is now B
    _front(loaded, "ErrorHeatmapPanel")
    np.testing.assert_allclose(heat.ratio, ((a.error - b.error) / a_budget)[:, order])


def test_nothing_is_cut_while_comparing_at_1280x800(qtbot, loaded) -> None:
    loaded.resize(1280, 800)
    loaded.reset_layout()
    _pin_and_loosen(qtbot, loaded, 0.1)
    loaded.document.set_selection(3)
    settle(qtbot, loaded.viewport)
    problems = []
    for name in ("StatsPanel", "CurvesPanel", "ErrorPlotPanel"):
        loaded.docks[name].raise_()
        settle(qtbot, loaded.viewport)
        problems += cut_texts(loaded.docks[name])
    problems += cut_texts(loaded.compare_bar)
    # the A | B | change table: the figures whole and in view (B and the change were cut
    # past the dock's edge); only the row names may elide, whole in their tooltips
    table = loaded.panels["StatsPanel"].compare_table
    problems.remove(f"{type(table).__name__} column 0 cut")
    header = table.horizontalHeader()
    right = sum(header.sectionSize(c) for c in range(4))
    assert right <= table.viewport().width()
    for c in (1, 2, 3):
        assert header.sectionSize(c) >= table.sizeHintForColumn(c), c
    assert not problems, "\n".join(problems)


def test_a_command_line_pair_in_the_window_keeps_each_sides_tuning(qtbot, window, tmp_path):
    import shutil

    from app.compare_run import PairRun
    from app.model.comparison import parse_variant

    clip = tmp_path / "walk.bvh"
    shutil.copy(Path(__file__).resolve().parents[1] / "data" / "bvh" / BVH_NAME, clip)
    pair = PairRun(
        window.controller,
        parse_variant("precision=0.01 rounding=floor", "--a"),
        parse_variant("precision=0.05 level=medium", "--b"),
    )
    pair.start()
    with qtbot.waitSignal(pair.finished, timeout=2 * RESULT_TIMEOUT_MS):
        assert window.open_file(clip, remember=False)
    doc = window.document
    a, b = doc.comparison.a, doc.side_result("B")
    assert pair.done and a is not None and b is not None
    assert a.settings.precision == 0.01 and a.settings.level == "automatic"
    assert doc.settings.precision == 0.05 and doc.settings.level == "medium"
    assert float(a.result.clip.skeleton.precision[0]) == 0.01
    assert float(b.clip.skeleton.precision[0]) == 0.05
    assert b.stats["compressed_size"] < a.result.stats["compressed_size"]
    assert doc.side_rounding("A") == "floor" and doc.side_rounding("B") == "none"
    window.close()
    assert not list(tmp_path.glob("*.shellscope.json"))  # a command-line pair saves nothing


def test_the_stats_export_holds_both_sides_while_comparing(qtbot, loaded, tmp_path) -> None:
    import json

    ctl = loaded.controller
    single = ctl.export("stats", str(tmp_path / "one.json"))
    assert "compressed_size" in json.loads(single.read_text())
    _pin_and_loosen(qtbot, loaded, 0.1)
    pair = json.loads(ctl.export("stats", str(tmp_path / "ab.json")).read_text())
    a, b = loaded.document.side_result("A"), loaded.document.side_result("B")
    assert pair["a"]["compressed_size"] == a.stats["compressed_size"]
    assert pair["b"]["compressed_size"] == b.stats["compressed_size"]
    assert pair["a"]["codec"] == pair["b"]["codec"] == "acl-style"
    assert pair["change"]["max_error"] == b.stats["max_error"] - a.stats["max_error"]


def test_reset_layout_keeps_the_compare_toolbar_and_clear_resets_the_status(qtbot, loaded):
    bar, doc = loaded.compare_bar, loaded.document
    toggle = bar.toggleViewAction()
    assert toggle in loaded.panel_menu.actions() and not toggle.isEnabled()
    bar.pin_action.trigger()
    assert "Pinned as A" in loaded.status_label.text()
    loaded.reset_layout()  # it used to hide the toolbar until Clear
    assert bar.isVisible() and toggle.isEnabled() and toggle.isChecked()
    toggle.trigger()  # View > Panels > Compare toolbar hides it, and it stays hidden
    doc.set_time(0.2)
    assert not bar.isVisible()
    toggle.trigger()
    assert bar.isVisible()
    bar.clear_action.trigger()
    assert not bar.isVisible() and not toggle.isEnabled()
    settings_status = loaded.panels["SettingsPanel"].status.text()
    for text in (loaded.status_label.text(), settings_status):
        assert "Pinned" not in text and text.startswith("Compressed: ")
