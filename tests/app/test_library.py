"""File > Open Library: the Qt-free table (sort, filter, colours on the one error scale) and
the dialog filled by a real background run on Dask, opening a clip from it in the window."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore

from app.error_scale import error_colors
from app.library_model import LibraryTable, open_target, used
from codec.library.rows import error_row

DATA = Path(__file__).resolve().parents[1] / "data"


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
    dialog.view.sortByColumn(5, QtCore.Qt.SortOrder.DescendingOrder)
    first = dialog.table.visible[0]
    assert first["path"] == "Fox.glb" and first["animation"] == "Survey"  # the largest
    assert dialog.table.visible[-1]["path"] == "broken.bvh"  # failed rows stay last
    dialog.filter_edit.setText("walk")
    assert model.rowCount() == 1
    index = model.index(0, 0)
    colour = model.data(model.index(0, 8), QtCore.Qt.ItemDataRole.BackgroundRole)
    assert colour.color().getRgbF()[:3] == pytest.approx(
        tuple(LibraryTable.rgba(dialog.table.visible[0])[:3]), abs=1 / 255
    )
    dialog._open_row(index)
    qtbot.waitUntil(lambda: window.document.clip is not None, timeout=30_000)
    assert window.document.path == lib / "Fox.glb"
    assert window.document.clip.num_samples == 18  # Walk, not the first animation
