"""The skin report panel, shells from the mesh in the window, and the exports."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.model import exports
from app.views.skin_report import COLUMNS
from codec import result_tables


@pytest.fixture
def cesium(window, ui, tmp_path: Path):
    """CesiumMan opened from a private copy (the sidecar is written beside it)."""
    path = tmp_path / "CesiumMan.glb"
    shutil.copy(ui.data / "gltf" / "CesiumMan.glb", path)
    ui.open(window, path)
    # its tab to the front, as a user does to read it: a panel behind another tab leaves
    # its work until it is shown
    window.docks["SkinReportPanel"].raise_()
    QApplication.processEvents()
    return window


def column(name: str) -> int:
    return [k for k, _, _ in COLUMNS].index(name)


def cell(panel, row: int, name: str) -> str:
    return panel.table.item(row, column(name)).text()


def test_report_shows_the_ratio_of_every_joint(cesium) -> None:
    doc = cesium.document
    panel = cesium.panels["SkinReportPanel"]
    assert not cesium.docks["SkinReportPanel"].isHidden()  # its tab is there
    h = doc.result.vertex_error.joints
    shown = panel.shown_joints()
    assert sorted(shown) == list(range(doc.clip.num_joints))  # every joint, once
    for row, j in enumerate(shown):
        text = cell(panel, row, "shell_to_vertex_ratio")
        if np.isnan(h.ratio[j]):
            assert text == "\u2014"
        else:
            assert float(text) == pytest.approx(h.ratio[j], rel=1e-2)
        assert cell(panel, row, "name") == doc.clip.skeleton.names[j]
    # under-estimating joints first, worst first
    under = [j for j in shown if h.underestimates[j]]
    assert shown[: len(under)] == under and len(under) > 0
    assert list(h.ratio[under]) == sorted(h.ratio[under])
    assert "under-estimate" in panel.summary.text() and "True error" in panel.summary.text()


def test_columns_sort_and_rows_lead_to_the_joint_and_its_worst_time(cesium) -> None:
    doc = cesium.document
    panel = cesium.panels["SkinReportPanel"]
    h = doc.result.vertex_error.joints
    panel.table.sortItems(column("vertices"), Qt.SortOrder.DescendingOrder)
    order = panel.shown_joints()
    assert list(h.vertices[order]) == sorted(h.vertices, reverse=True)
    panel.table.cellClicked.emit(0, 0)
    assert doc.selection == order[0]
    panel.table.cellDoubleClicked.emit(1, 3)
    assert doc.selection == order[1]
    assert doc.time == pytest.approx(h.worst_time[order[1]])


def test_shells_from_the_mesh_button_recompresses_with_a_shell_per_joint(
    cesium, qtbot, tmp_path: Path
) -> None:
    doc = cesium.document
    panel = cesium.panels["SkinReportPanel"]
    settings_box = cesium.panels["SettingsPanel"].shell_from_mesh
    assert panel.mesh_shells.isEnabled() and settings_box.isEnabled()
    with qtbot.waitSignal(cesium.controller.result_ready, timeout=60_000):
        panel.mesh_shells.click()
    assert doc.settings.shell_from_mesh and settings_box.isChecked()
    shells = doc.result.clip.skeleton.shell_distance
    assert len(np.unique(np.round(shells, 6))) == doc.clip.num_joints  # one per joint
    assert np.allclose(shells, doc.result.vertex_error.joints.mesh_shell)
    rows = panel.shown_joints()
    shown = [float(cell(panel, r, "shell_distance")) for r in range(len(rows))]
    assert np.allclose(shown, shells[rows], rtol=1e-3)
    assert "from the mesh" in panel.summary.text()
    # the choice is kept beside the clip, once the edit has settled
    sidecar = tmp_path / "CesiumMan.glb.shellscope.json"
    qtbot.waitUntil(sidecar.exists)
    saved = json.loads(sidecar.read_text())
    own = saved["animations"][doc.clip.name]  # a glTF keeps each animation's tuning
    assert own["settings"]["shell_from_mesh"] is True
    # and the settings box turns it off again
    with qtbot.waitSignal(cesium.controller.result_ready, timeout=60_000):
        settings_box.setChecked(False)
    assert np.all(doc.result.clip.skeleton.shell_distance == doc.global_shell_distance())


def test_report_csv(cesium, tmp_path: Path) -> None:
    panel = cesium.panels["SkinReportPanel"]
    out = panel.export_to(tmp_path / "skin.csv")
    assert out is not None and "Wrote" in panel.message.text()
    rows = list(csv.DictReader(out.open()))
    result = cesium.document.result
    h = result.vertex_error.joints
    assert [r["name"] for r in rows] == [result.clip.skeleton.names[j] for j in h.order()]
    for r in rows:
        j = int(r["joint"])
        ratio = r["shell_to_vertex_ratio"]
        assert (ratio == "" and np.isnan(h.ratio[j])) or float(ratio) == h.ratio[j]
        assert (r["shell_underestimates"] == "True") == bool(h.underestimates[j])
    # the per-joint CSV of the Stats panel carries the same columns
    joints = list(
        csv.DictReader((cesium.panels["StatsPanel"].export_to("csv", tmp_path / "j.csv")).open())
    )
    assert set(result_tables.SKIN_JOINT_COLUMNS) <= set(joints[0])
    assert float(joints[4]["shell_to_vertex_ratio"] or "nan") == pytest.approx(
        h.ratio[4], nan_ok=True
    )


def test_a_clip_without_mesh_has_no_report(loaded, tmp_path: Path) -> None:
    panel = loaded.panels["SkinReportPanel"]
    assert loaded.docks["SkinReportPanel"].isHidden()  # no tab for it
    assert "no skinned mesh" in panel.summary.text()
    assert panel.table.rowCount() == 0 and not panel.mesh_shells.isEnabled()
    assert not loaded.panels["SettingsPanel"].shell_from_mesh.isEnabled()
    assert panel.export_to(tmp_path / "x.csv") is None and not (tmp_path / "x.csv").exists()
    # the joints CSV keeps exactly today's columns
    text = exports.joint_csv_text(loaded.document.result)
    assert text.splitlines()[0].split(",") == list(result_tables.JOINT_COLUMNS)


def test_an_under_estimating_skin_offers_shells_from_the_mesh(cesium, qtbot) -> None:
    """CesiumMan's one shell distance under-estimates its skin: the summary says so and its
    link turns shells from the mesh on (and the hint goes once they are)."""
    doc = cesium.document
    panel = cesium.panels["SkinReportPanel"]
    assert doc.result.stats["shell_underestimating_joints"]
    assert "Use shells from the mesh" in panel.summary.text() and "href='mesh:on'" in (
        panel.summary.text()
    )
    with qtbot.waitSignal(cesium.controller.result_ready, timeout=60_000):
        panel.summary.linkActivated.emit("mesh:on")
    assert doc.settings.shell_from_mesh and panel.mesh_shells.isChecked()
    assert "Use shells from the mesh" not in panel.summary.text()
    # CesiumMan's mesh shells still leave its skin 1.29x over: the report offers skin strict
    assert not doc.result.stats["vertex_precision_met"]
    assert "still leave the skin over budget" in panel.summary.text()
    with qtbot.waitSignal(cesium.controller.result_ready, timeout=60_000):
        panel.summary.linkActivated.emit("strict:on")
    assert doc.settings.skin_strict and doc.result.stats["vertex_precision_met"]
    assert "over budget.</span>" not in panel.summary.text()
    cesium.controller.undo()  # ordinary tuning edits: undone like any other
    assert not doc.settings.skin_strict and doc.settings.shell_from_mesh
    cesium.controller.undo()
    assert not doc.settings.shell_from_mesh


def test_skin_strict_from_the_settings_panel_keeps_the_skin_within_budget(cesium, qtbot) -> None:
    """Settings > Skin > skin strict on CesiumMan: the report says the promise was kept."""
    doc = cesium.document
    settings = cesium.panels["SettingsPanel"]
    panel = cesium.panels["SkinReportPanel"]
    assert (
        settings.skin_strict.isVisibleTo(settings) and not doc.result.stats["vertex_precision_met"]
    )
    with qtbot.waitSignal(cesium.controller.result_ready, timeout=60_000):
        settings.skin_strict.setChecked(True)
    stats = doc.result.stats
    assert stats["skin_strict"]["met"] and stats["vertex_max_error"] <= 0.01
    assert "Skin-strict</b>: <span" in panel.summary.text() and "met</span>" in panel.summary.text()
    assert "Shells</b> (from the mesh)" in panel.summary.text()


def test_export_messages_belong_to_the_clip_they_were_about(cesium, ui, tmp_path: Path) -> None:
    stats = cesium.panels["StatsPanel"]
    panel = cesium.panels["SkinReportPanel"]
    assert stats.export_to("stats", tmp_path / "missing" / "s.json") is None
    assert panel.export_to(tmp_path / "missing" / "s.csv") is None
    assert "Export failed" in stats.export_error.text()
    assert "Export failed" in panel.message.text()
    ui.open(cesium, ui.data / "gltf" / "RiggedSimple.glb")
    assert stats.export_error.text() == "" and panel.message.text() == ""
