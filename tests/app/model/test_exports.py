"""Exports parse back to the numbers they were made from, and are written whole or not at all."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from app.model import exports
from codec.result_tables import JOINT_COLUMNS
from codec.run_settings import RunSettings
from codec.tuning import JointOverride
from tests.app.panel_helpers import make_result


def test_stats_json_keeps_acl_key_names_and_values(tmp_path: Path) -> None:
    r = make_result()
    r.stats["nan_value"] = float("nan")
    run = RunSettings(rules=(JointOverride("*Hand*", precision=0.001),))
    out = exports.export_stats(tmp_path / "s.json", r, run.block(r.clip))
    data = json.loads(out.read_text())
    for key in (
        "raw_size",
        "compressed_size",
        "compression_ratio",
        "max_error",
        "worst_track",
        "worst_time",
        "compression_time",
        "num_bones",
        "num_samples",
        "segments",
    ):
        assert data[key] == r.stats[key], key
    assert data["segmenting"] == {"num_segments": 3}
    assert data["nan_value"] is None
    assert data["shellscope"]["rules"] == [{"pattern": "*Hand*", "precision": 0.001}]
    assert data["shellscope"]["format"] == "shellscope-settings"


def test_joint_csv_matches_the_result(tmp_path: Path) -> None:
    r = make_result()
    out = exports.export_joint_csv(tmp_path / "j.csv", r)
    rows = list(csv.DictReader(out.open()))
    assert [row["name"] for row in rows] == list(r.clip.skeleton.names)
    assert tuple(rows[0]) == JOINT_COLUMNS
    np.testing.assert_array_equal([float(row["max_error"]) for row in rows], r.error.max(0))
    assert rows[4]["rotation_kind"] == "constant" and rows[4]["rotation_bits_mean"] == ""
    bits = r.costs.bits_per_component[:, 2, 0]
    assert float(rows[2]["rotation_bits_mean"]) == bits.mean()
    assert float(rows[2]["rotation_bits_max"]) == bits.max()
    assert float(rows[2]["worst_time"]) == pytest.approx(31 / 30)


def test_a_failed_export_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "s.json"
    target.write_text("old")
    r = make_result()
    r.stats["bad"] = object()
    with pytest.raises(TypeError):
        exports.export_stats(target, r)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_screenshot_must_be_png(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        exports.export_screenshot(tmp_path / "x.png", b"GIF89a")
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 8
    assert exports.export_screenshot(tmp_path / "x.png", png).read_bytes() == png


def test_an_export_never_replaces_an_input(tmp_path: Path) -> None:
    """The window's Stats panel passes the open clip as the lossy export's source: exporting
    onto it (or, with `inputs`, onto the sidecar) is refused and the file is kept."""
    clip = tmp_path / "walk.acl.sjson"
    clip.write_text("the user's clip")
    link = tmp_path / "link.acl.sjson"
    link.symlink_to(clip)
    r = make_result()
    for call in (
        lambda: exports.export_lossy(clip, r, source=clip),
        lambda: exports.export_lossy(link, r, source=clip),
        lambda: exports.export_stats(clip, r, inputs=[clip]),
        lambda: exports.export_joint_csv(clip, r, inputs=[None, clip]),
    ):
        with pytest.raises(ValueError, match="is the input file"):
            call()
    assert clip.read_text() == "the user's clip"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.acl.sjson", "walk.acl.sjson"]


def test_an_export_over_a_fifo_is_refused_and_the_fifo_stays(tmp_path: Path) -> None:
    import os
    import stat

    fifo = tmp_path / "stats.json"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        exports.export_stats(fifo, make_result())
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
