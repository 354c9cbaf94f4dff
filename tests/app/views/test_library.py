"""File > Open Library: the Qt-free table (sort, filter, colours on the one error scale) and
the dialog filled by a real background run on Dask, opening a clip from it in the window."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore

from app.model.error_scale import error_colors
from app.model.library_model import (
    COLUMNS,
    LibraryTable,
    apply_tuning_to_rows,
    open_target,
    problem_text,
    take_name,
    tooltip_of,
    used,
)
from codec.library.outputs import library_json, sweep_points
from codec.library.rows import error_row
from codec.run_settings import resolve_run
from codec.sidecar import load_sidecar
from codec.tuning import GlobalSettings, JointOverride

DATA = Path(__file__).resolve().parents[2] / "data"


def _column(key: str) -> int:
    return [k for _, k in COLUMNS].index(key)


def _row(path, err, precision=0.01, met=True, joint="hand", animation=""):
    return {
        "path": path, "animation": animation, "joints": 2, "samples": 10, "duration": 1.0,
        "raw_size": 800, "compressed_size": 100, "compression_ratio": 8.0, "max_error": err,
        "precision": precision, "precision_met": met, "worst_joint": joint, "worst_time": 0.5,
        "codec": "acl-style", "compression_time": 0.1, "error": "",
    }  # fmt: skip


def test_table_sorts_filters_and_colours_on_the_error_scale():
    t = LibraryTable()
    rows = [
        _row("a.bvh", 0.004),
        _row("b.bvh", 0.012, met=False, joint="LeftHand"),
        _row("c.bvh", 0.0009, precision=0.001),
        error_row("d.bvh", "", "d.bvh: line 3: no ROOT"),
    ]
    t.add(rows)
    assert [r["path"] for r in t.visible] == ["a.bvh", "b.bvh", "c.bvh", "d.bvh"]
    t.sort("used", descending=True)
    assert [r["path"] for r in t.visible] == ["b.bvh", "c.bvh", "a.bvh", "d.bvh"]
    t.sort("used")
    assert [r["path"] for r in t.visible] == ["a.bvh", "c.bvh", "b.bvh", "d.bvh"]  # failed last
    t.set_filter(problems_only=True)
    assert [r["path"] for r in t.visible] == ["b.bvh", "d.bvh"]
    t.set_filter("lefthand")
    assert [r["path"] for r in t.visible] == ["b.bvh"]
    assert t.text_of(rows[0], "used") == "40 %"
    assert used(rows[2]) == pytest.approx(0.9)
    # the colour is the error scale's for the share of the budget: red only over it
    assert np.allclose(t.rgba(rows[0]), error_colors(np.array(0.4)))
    assert np.allclose(t.rgba(rows[1])[:3], error_colors(np.array(1.2))[:3])
    assert t.rgba(rows[1]) != t.rgba(rows[2])
    assert open_target("/lib", _row("x/Fox.glb", 0.01, animation="Walk")) == (
        Path("/lib/x/Fox.glb"),
        "Walk",
    )
    assert open_target("/lib", _row("y.bvh", 0.01, animation="y"))[1] is None


def test_open_library_fills_the_table_and_opens_a_clip(qtbot, window, tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(DATA / "gltf" / "Fox.glb", lib)
    shutil.copy(DATA / "acl" / "cmu_81_16_two_samples.acl.sjson", lib)
    (lib / "broken.bvh").write_text("HIERARCHY\n")
    dialog = window.open_library(lib)
    qtbot.waitUntil(lambda: dialog.run_finished, timeout=120_000)
    model = dialog.model
    assert model.rowCount() == 5  # Fox's three animations, the ACL clip, the broken file
    assert "done" in dialog.progress_label.text()
    dialog.view.sortByColumn(_column("compressed_size"), QtCore.Qt.SortOrder.DescendingOrder)
    first = dialog.table.visible[0]
    assert first["path"] == "Fox.glb" and first["animation"] == "Survey"  # the largest
    assert dialog.table.visible[-1]["path"] == "broken.bvh"  # failed rows stay last
    dialog.filter_edit.setText("walk")
    assert model.rowCount() == 1
    index = model.index(0, 0)
    colour = model.data(model.index(0, _column("used")), QtCore.Qt.ItemDataRole.BackgroundRole)
    assert colour.color().getRgbF()[:3] == pytest.approx(
        tuple(LibraryTable.rgba(dialog.table.visible[0])[:3]), abs=1 / 255
    )
    dialog._open_row(index)
    qtbot.waitUntil(lambda: window.document.clip is not None, timeout=30_000)
    assert window.document.path == lib / "Fox.glb"
    assert window.document.clip.num_samples == 18  # Walk, not the first animation


def test_cells_name_the_problem_the_take_and_the_encode_time() -> None:
    """The problem sits beside the clip, without the path the Clip column names (the path
    on hover); a rig's takes read by their own names; the time column says what it times."""
    keys = [k for _, k in COLUMNS]
    assert keys.index("error") == 2 and dict((k, t) for t, k in COLUMNS)["error"] == "Problem"
    assert dict((k, t) for t, k in COLUMNS)["compression_time"] == "Encode s"
    row = error_row("sub/d.bvh", "", "/lib/sub/d.bvh (line 3): no ROOT")
    assert problem_text(row) == "line 3: no ROOT"
    assert LibraryTable().text_of(row, "error") == "line 3: no ROOT"
    assert tooltip_of("/lib", row, "error") == "/lib/sub/d.bvh (line 3): no ROOT"
    assert tooltip_of("/lib", _row("sub/a.bvh", 0.01), "path") == "/lib/sub/a.bvh []"
    assert problem_text(error_row("x.glb", "", "odd: x.glb broke")) == "odd: x.glb broke"
    fbx = _row("robot.fbx", 0.01, animation="RobotArmature|Robot_Dance")
    assert take_name("RobotArmature|Robot_Dance") == "Robot_Dance"
    assert LibraryTable().text_of(fbx, "animation") == "Robot_Dance"
    assert tooltip_of("/lib", fbx, "animation") == "RobotArmature|Robot_Dance"


def test_library_batch_actions_folder_and_front(qtbot, window, tmp_path):
    """A broken .glb says what is wrong; the picker starts in the last library folder; a
    rule set applied to a selected row lands in its sidecar and the rerun uses it; the
    selected rows export as .ssc; a sweep draws size against precision (and a
    `library --sweep --json` file draws the same); a double-click brings the main window
    to the front."""
    from app.views.library import LibraryDialog

    lib = tmp_path / "lib"
    lib.mkdir()
    acl = lib / "cmu_81_16_two_samples.acl.sjson"
    shutil.copy(DATA / "acl" / acl.name, acl)
    glb = (DATA / "gltf" / "RiggedSimple.glb").read_bytes()
    (lib / "broken.glb").write_bytes(b"\0\0\0\0" + glb[4:])
    dialog = window.open_library(lib)
    assert dialog.windowHandle().transientParent() is None  # not kept over the window
    assert LibraryDialog(None).start_folder() == str(lib.resolve())  # not the cwd
    dialog._name_tuning()  # Batch > Apply ... tuning needs a clip in the window
    assert not dialog.tuning_action.isEnabled() and "no clip open" in dialog.tuning_action.text()
    dialog.workers = 1  # the runs below: one worker starts sooner on a shared machine
    qtbot.waitUntil(lambda: dialog.run_finished, timeout=120_000)
    rows = {r["path"]: r for r in dialog.table.visible}
    problem = dialog.table.text_of(rows["broken.glb"], "error")
    assert problem.startswith("byte 0: not a binary glTF") and str(lib) not in problem
    # a rule set to the ACL clip's row: its sidecar, then a rerun resolving it
    dialog.view.selectRow(dialog.table.visible.index(rows[acl.name]))
    dialog.apply_rules((JointOverride("*|!nothing", precision=0.5),))
    assert load_sidecar(acl)[1] == (JointOverride("*|!nothing", precision=0.5),)
    qtbot.waitUntil(lambda: dialog.run_finished, timeout=120_000)
    tuned = next(r for r in dialog.table.visible if r["path"] == acl.name)
    assert tuned["precision"] == 0.5 and rows[acl.name]["precision"] != 0.5
    # export the selected row: its .ssc (only that row's)
    out = tmp_path / "out"
    out.mkdir()
    dialog.view.selectRow(dialog.table.visible.index(tuned))
    dialog.export_rows(out)
    qtbot.waitUntil(lambda: dialog.batch_run is None, timeout=120_000)
    written = sorted(p.name for p in out.iterdir())
    assert written == ["cmu_81_16_two_samples.acl.ssc"], dialog.batch_label.text()
    assert (out / written[0]).stat().st_size > 0 and "Exported 1 .ssc" in dialog.batch_label.text()
    # a sweep: two precisions, the chart's points from the runs' totals
    dialog.sweep([0.1, 0.001])
    qtbot.waitUntil(lambda: dialog.batch_run is None, timeout=180_000)
    points = dialog.sweep_chart.points
    assert [p["precision"] for p in points] == [0.001, 0.1] and dialog.sweep_chart.isVisible()
    sizes = [p["totals"]["compressed_size"] for p in points]
    assert sizes[0] >= sizes[1] > 0 and len(dialog.sweep_chart.label_texts()) == 2
    # the same chart from library --sweep --json's data
    sweep = sweep_points([(0.02, [tuned]), (0.2, [tuned])])
    (tmp_path / "sweep.json").write_text(library_json([tuned], {}, sweep))
    dialog.open_sweep_json(tmp_path / "sweep.json")
    assert [p["precision"] for p in dialog.sweep_chart.points] == [0.02, 0.2]
    (tmp_path / "plain.json").write_text(library_json([tuned], {}))
    dialog.open_sweep_json(tmp_path / "plain.json")
    assert "sweep: none" in dialog.batch_label.text()
    # a double-click opens the clip and brings the main window in front
    dialog.activateWindow()
    dialog._open_row(dialog.model.index(dialog.table.visible.index(tuned), 0))
    qtbot.waitUntil(lambda: window.document.clip is not None, timeout=30_000)
    qtbot.waitUntil(window.isActiveWindow, timeout=5_000)
    dialog._name_tuning()
    assert dialog.tuning_action.isEnabled() and acl.name in dialog.tuning_action.text()


def test_the_window_tuning_applied_to_rows_is_what_their_runs_resolve(tmp_path):
    """Batch > Apply <clip>'s tuning: each row's clip (its animation's entry of a
    multi-animation file) is then run with the window's settings and rules, by the one
    resolver; the file's other animations and the rows not chosen keep their own."""
    for name in ("Fox.glb", "RiggedSimple.glb"):
        shutil.copy(DATA / "gltf" / name, tmp_path / name)
    rules = (JointOverride("*Leg*|!*Toe*", precision=0.002), JointOverride("b_Head_05", 5.0))
    settings = GlobalSettings(precision=0.05, shell_distance=4.0, codec="curve")
    rows = [_row("Fox.glb", 0.001, animation="Walk"), _row("gone.bvh", 0.0)]
    rows[1]["error"] = "no such file"
    done, failed = apply_tuning_to_rows(tmp_path, rows, settings, rules)
    assert done == 1 and failed == ["gone.bvh: could not be read"]
    walk = resolve_run(tmp_path / "Fox.glb", "Walk")
    assert (walk.tuning, walk.rules) == (settings, rules)
    assert resolve_run(tmp_path / "Fox.glb", "Run").tuning == GlobalSettings()
    assert resolve_run(tmp_path / "RiggedSimple.glb").tuning == GlobalSettings()
