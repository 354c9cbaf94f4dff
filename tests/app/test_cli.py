"""`shellscope CLIP --time T --rounding floor --screenshot PNG` for every clip format."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtGui

import codec
from app.__main__ import parse_args

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


def run_app(
    *args: str, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m app ARGS` from the repository; `env` replaces the environment."""
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env=env if env is not None else {**os.environ, "PYOPENGL_PLATFORM": "glx"},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def skeleton_pixels(png: Path) -> tuple[int, int]:
    """(blue raw, green/yellow/red lossy) pixel counts of a screenshot."""
    img = QtGui.QImage(str(png)).convertToFormat(QtGui.QImage.Format.Format_RGBA8888)
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine() // 4, 4)
    r, g, b = (a[..., k].astype(int) for k in range(3))
    blue = (b > 80) & (b > r + 35) & (b > g + 20)
    lossy = (g > 110) & (g > b + 30) & (np.abs(g - r) < 200) & (r + g > 220) & (b < 120)
    return int(blue.sum()), int(lossy.sum())


@pytest.fixture(scope="module")
def ssc_clip(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ssc") / "cmu_09_02.ssc"
    path.write_bytes(codec.compress(codec.load_clip(DATA / "acl" / "cmu_09_02.acl.sjson")).data)
    return path


@pytest.mark.parametrize(
    "clip, extra",
    [
        ("bvh/cmu_02_02_walk_daz.bvh", ["--units", "cm"]),
        ("gltf/CesiumMan.glb", []),
        ("acl/cmu_09_02.acl.sjson", ["--select", "rHand", "--shells", "selected"]),
        ("ssc", ["--precision", "0.02"]),
    ],
)
def test_screenshot_of_every_format(clip, extra, tmp_path, ssc_clip) -> None:
    path = ssc_clip if clip == "ssc" else DATA / clip
    png = tmp_path / "a.png"
    proc = run_app(
        str(path), "--time", "0.3", "--rounding", "floor", "--screenshot", str(png), *extra
    )
    assert proc.returncode == 0, proc.stderr
    assert png.exists()
    blue, lossy = skeleton_pixels(png)
    assert blue > 100 and lossy > 100, (blue, lossy)


def test_a_broken_clip_exits_non_zero_with_the_readers_message(tmp_path) -> None:
    bad = tmp_path / "bad.acl.sjson"
    bad.write_text("version = 5\nbones = [ {")
    proc = run_app(str(bad), "--screenshot", str(tmp_path / "x.png"))
    assert proc.returncode == 2
    assert "bad.acl.sjson" in proc.stderr
    assert not (tmp_path / "x.png").exists()


def test_arguments_parse() -> None:
    a = parse_args(
        [
            "x.glb",
            "--animation",
            "Run",
            "--precision",
            "0.02",
            "--time",
            "1.5",
            "--rounding",
            "per_track",
            "--select",
            "Head",
            "--shells",
            "all",
            "--screenshot",
            "s.png",
            "--level",
            "high",
            "--units",
            "m",
        ]
    )
    assert (a.clip, a.animation, a.precision, a.time, a.rounding, a.select, a.shells) == (
        "x.glb",
        "Run",
        0.02,
        1.5,
        "per_track",
        "Head",
        "all",
    )
    assert (a.screenshot, a.level, a.units) == ("s.png", "high", "m")
    with pytest.raises(SystemExit):
        parse_args(["--rounding", "sideways"])


def _no_display_env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    return {**env, "PYOPENGL_PLATFORM": "glx", **extra}


def _x_sockets() -> set[str]:
    d = Path("/tmp/.X11-unix")
    return {p.name for p in d.iterdir()} if d.is_dir() else set()


def test_screenshot_view_saves_the_3d_view_alone(tmp_path) -> None:
    view, win = tmp_path / "view.png", tmp_path / "win.png"
    proc = run_app(
        str(DATA / "bvh" / "cmu_02_02_walk_daz.bvh"),
        "--time",
        "1.0",
        "--select",
        "lHand",
        "--view",
        "front",
        "--magnify",
        "100",
        "--screenshot-view",
        str(view),
        "--screenshot",
        str(win),
    )
    assert proc.returncode == 0, proc.stderr
    a, b = QtGui.QImage(str(view)), QtGui.QImage(str(win))
    assert 0 < a.width() < b.width() and 0 < a.height() < b.height()  # the view, not the window
    assert a.height() > 0.4 * b.height()
    blue, _ = skeleton_pixels(view)
    assert blue > 100


@pytest.mark.parametrize("platform", [None, "offscreen"])
def test_without_a_display_the_window_says_so_in_one_line(platform) -> None:
    env = _no_display_env(**({"QT_QPA_PLATFORM": platform} if platform else {}))
    clip = str(DATA / "acl" / "cmu_09_02.acl.sjson")
    proc = run_app(clip, env=env, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "display" in lines[0] and "--screenshot" in lines[0]


def test_without_a_display_screenshots_and_exports_still_work(tmp_path) -> None:
    before = _x_sockets()
    png, stats = tmp_path / "a.png", tmp_path / "s.json"
    clip = str(DATA / "acl" / "cmu_09_02.acl.sjson")
    proc = run_app(clip, "--screenshot-view", str(png), env=_no_display_env(), timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert QtGui.QImage(str(png)).width() > 300
    proc = run_app(clip, "--export-stats", str(stats), env=_no_display_env(), timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert stats.read_text().startswith("{")
    assert _x_sockets() == before  # the private X server went away with the app


def test_shell_distance_mesh_opens_the_window_with_shells_from_the_mesh(window, qtbot) -> None:
    from app.headless import tuning_from

    args = parse_args(
        [str(DATA / "gltf" / "Fox.glb"), "--animation", "Run", "--shell-distance", "mesh"]
    )
    tuning = tuning_from(args)
    assert tuning == {"shell_from_mesh": True}
    with qtbot.waitSignal(window.controller.result_ready, timeout=60_000):
        assert window.open_file(Path(args.clip), animation=args.animation, tuning=tuning)
    doc = window.document
    assert doc.settings.shell_from_mesh and doc.settings.shell_distance == 3.0
    shells = doc.result.clip.skeleton.shell_distance
    assert len(np.unique(shells)) > doc.clip.num_joints // 2
    assert tuning_from(parse_args(["x.glb", "--shell-distance", "2.5"])) == {
        "shell_distance": 2.5,
        "shell_from_mesh": False,
    }
