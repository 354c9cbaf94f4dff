"""Compare from the command line: `--a SPEC --b SPEC` with --export-stats (no window) on BVH,
a skinned glTF and ACL clips, and with --screenshot-view (three skeletons drawn)."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtGui

from app.model.headless import add_export_arguments, run_headless
from app.scene.compare_layer import SIDE_COLOURS
from tests.app.test_cli import run_app

DATA = Path(__file__).resolve().parents[1] / "data"
CLIPS = [
    DATA / "bvh" / "cmu_02_02_walk_daz.bvh",
    DATA / "gltf" / "CesiumMan.glb",
    DATA / "acl" / "cmu_09_02.acl.sjson",
]


def _run(argv: list[str]) -> tuple[int, str, str]:
    p = argparse.ArgumentParser(prog="shellscope")
    p.add_argument("clip", nargs="?")
    add_export_arguments(p)
    out, err = io.StringIO(), io.StringIO()
    code = run_headless(p.parse_args(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("clip", CLIPS, ids=lambda p: p.name)
def test_b_at_a_looser_precision_is_smaller_and_the_json_has_both(clip: Path, tmp_path) -> None:
    out = tmp_path / "ab.json"
    code, text, err = _run(
        [str(clip), "--a", "precision=0.01", "--b", "precision=0.05", "--export-stats", str(out)]
    )
    assert code == 0, err
    d = json.loads(out.read_text())
    a, b = d["a"], d["b"]
    for side in (a, b):
        for key in ("compressed_size", "compression_ratio", "max_error", "worst_track"):
            assert key in side
    assert b["compressed_size"] < a["compressed_size"]
    assert a["max_error"] <= 0.01 * 1.0001 < b["max_error"] <= 0.05 * 1.0001
    assert d["change"]["compressed_size"] == b["compressed_size"] - a["compressed_size"]
    assert d["variants"] == {"a": {"precision": 0.01}, "b": {"precision": 0.05}}
    assert " A: " in text and " B: " in text


def test_codec_level_shell_and_rounding_keys(tmp_path) -> None:
    out = tmp_path / "ab.json"
    clip = CLIPS[2]
    code, _, err = _run(
        [
            str(clip),
            "--a",
            "codec=acl-style level=medium shell=2 rounding=floor",
            "--b",
            "codec=acl-style level=highest shell=6",
            "--export-stats",
            str(out),
        ]
    )
    assert code == 0, err
    d = json.loads(out.read_text())
    assert d["a"]["codec"] == d["b"]["codec"] == "acl-style"
    assert d["a"]["shellscope"]["view"]["rounding"] == "floor"
    assert (
        d["a"]["shellscope"]["shell_distance"] == 2.0 and d["a"]["shellscope"]["level"] == "medium"
    )
    assert d["variants"]["b"] == {"codec": "acl-style", "shell": 6.0, "level": "highest"}
    assert d["a"]["compressed_size"] != d["b"]["compressed_size"]


@pytest.mark.parametrize(
    "spec, why",
    [
        ("codec=nope", "--b: unknown codec 'nope'; known codecs: acl-style"),
        ("precision=x", "--b: precision 'x' is not a number"),
        ("speed=3", "--b: unknown key 'speed'"),
    ],
)
def test_a_bad_spec_is_one_line_and_exit_2_with_nothing_written(spec, why, tmp_path) -> None:
    out = tmp_path / "ab.json"
    code, _, err = _run([str(CLIPS[2]), "--b", spec, "--export-stats", str(out)])
    assert code == 2 and why in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def _colour_pixels(png: Path, rgb: tuple[float, ...]) -> int:
    img = QtGui.QImage(str(png)).convertToFormat(QtGui.QImage.Format.Format_RGBA8888)
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine() // 4, 4)
    target = np.array(rgb[:3]) * 255
    # lit faces vary in brightness: match the hue by the colour's direction
    px = a[..., :3].astype(float)
    norm = np.linalg.norm(px, axis=-1) + 1e-9
    cos = (px @ target) / (norm * np.linalg.norm(target))
    return int(((cos > 0.985) & (norm > 60)).sum())


def test_the_window_draws_a_and_b_and_writes_the_json(tmp_path) -> None:
    view, js = tmp_path / "ab_view.png", tmp_path / "ab.json"
    done = run_app(
        str(CLIPS[0]),
        "--a",
        "precision=0.01",
        "--b",
        "precision=0.5",
        "--magnify",
        "10",
        "--export-stats",
        str(js),
        "--screenshot-view",
        str(view),
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(js.read_text())["b"]["compressed_size"] > 0
    for side in ("A", "B"):
        assert _colour_pixels(view, SIDE_COLOURS[side]) > 150, side
