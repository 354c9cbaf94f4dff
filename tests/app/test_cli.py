"""`shellscope CLIP --time T --rounding floor --screenshot PNG` for every clip format."""

from __future__ import annotations

import os
import shutil
import socket
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


def run_in_process(qtbot, capsys, monkeypatch, *args: str) -> tuple[int, str]:
    """`app.__main__.main(ARGS)` in this process, as `python -m app ARGS` runs it (the window,
    its event loop until the screenshot quits it): (exit code, stderr). What main() sets for
    its process (the exception hook, the application's names, MSAA for pictures) is put back,
    and its window is closed and deleted with the test's widgets. One test of each kind still
    starts a real process (test_screenshot_view_saves_the_3d_view_alone, the tests without a
    display)."""
    from PySide6 import QtCore, QtWidgets

    import app.__main__
    from app.scene import scene_view

    # the screenshot's give-up timer outlives its run here (a process would have ended): due
    # later, it would quit whatever event loop a later test runs
    monkeypatch.setattr(app.__main__, "SCREENSHOT_TIMEOUT_MS", 2**31 - 1)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    monkeypatch.setattr(scene_view, "KEEP_MSAA", scene_view.KEEP_MSAA)
    names = QtCore.QCoreApplication.organizationName(), QtCore.QCoreApplication.applicationName()
    before = set(QtWidgets.QApplication.topLevelWidgets())
    capsys.readouterr()
    try:
        code = app.__main__.main(list(args))
    finally:
        # closing its last window asked the application to quit (a Quit event, posted while
        # main() ran its event loop): a process ends there, here it would end a later test's
        QtCore.QCoreApplication.removePostedEvents(
            QtCore.QCoreApplication.instance(), QtCore.QEvent.Type.Quit
        )
        QtCore.QCoreApplication.setOrganizationName(names[0])
        QtCore.QCoreApplication.setApplicationName(names[1])
        for w in set(QtWidgets.QApplication.topLevelWidgets()) - before:
            if w.parent() is None:
                qtbot.addWidget(w)  # closed and deleted when the test ends
    return code, capsys.readouterr().err


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
def test_screenshot_of_every_format(
    clip, extra, tmp_path, ssc_clip, qtbot, capsys, monkeypatch
) -> None:
    path = ssc_clip if clip == "ssc" else DATA / clip
    png = tmp_path / "a.png"
    args = (str(path), "--time", "0.3", "--rounding", "floor", "--screenshot", str(png), *extra)
    code, err = run_in_process(qtbot, capsys, monkeypatch, *args)
    assert code == 0, err
    assert png.exists()
    blue, lossy = skeleton_pixels(png)
    assert blue > 100 and lossy > 100, (blue, lossy)


def test_a_broken_clip_exits_non_zero_with_the_readers_message(
    tmp_path, qtbot, capsys, monkeypatch
) -> None:
    bad = tmp_path / "bad.acl.sjson"
    bad.write_text("version = 5\nbones = [ {")
    code, err = run_in_process(
        qtbot, capsys, monkeypatch, str(bad), "--screenshot", str(tmp_path / "x.png")
    )
    assert code == 2
    assert "bad.acl.sjson" in err
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


_XVFB_RECORDER = """
import os, sys
real, log = sys.argv[1], sys.argv[2]
args = sys.argv[3:]
at = args.index("-displayfd") + 1
told = int(args[at])
pid = os.getpid()
start = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()[19]
read_end, write_end = os.pipe()
if os.fork() == 0:  # relays the display number from Xvfb to the app, noting it on the way
    os.close(write_end)
    text = b""
    while not text.endswith(b"\\n"):
        chunk = os.read(read_end, 32)
        if not chunk:
            break
        text += chunk
    with open(log, "a") as out:
        out.write(f"{pid} {start} {text.decode().strip()}\\n")
    os.write(told, text)
    os._exit(0)
os.close(read_end)
os.set_inheritable(write_end, True)
args[at] = str(write_end)
os.execv(real, [real, *args])
"""


def _xvfb_recorder(folder: Path) -> tuple[Path, Path]:
    """A folder to put first on PATH whose `Xvfb` becomes the real Xvfb (exec: the same
    process) after noting, in the returned log, its PID, its start time (clock ticks after
    boot) and the display number it picked (relayed from -displayfd to the app).
    Returns (bin folder, log)."""
    real = shutil.which("Xvfb")
    assert real, "make setup installs xvfb"
    log = folder / "xvfb.log"
    (folder / "recorder.py").write_text(_XVFB_RECORDER)
    shim = folder / "bin" / "Xvfb"
    shim.parent.mkdir()
    shim.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -S "{folder / "recorder.py"}" "{real}" "{log}" "$@"\n'
    )
    shim.chmod(0o755)
    return shim.parent, log


def _answers(path: str) -> bool:
    """Does an X server listen at this Unix socket file?"""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(1.0)
        try:
            s.connect(path)
            return True
        except OSError:
            return False


def _leftovers(pid: int, started: str, number: str) -> list[str]:
    """What is left on the machine of our Xvfb (`pid`, `started`, display :`number`): the
    process, its socket file if nobody answers there (another server may have taken the
    number since, which is not ours), a lock file naming our PID. Nothing else is looked at."""
    left = []
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        fields = []
    if fields and fields[19] == started and fields[0] != "Z":
        left.append(f"Xvfb process {pid} still running")
    sock = f"/tmp/.X11-unix/X{number}"
    if os.path.exists(sock) and not _answers(sock):
        left.append(f"{sock}, where nothing answers")
    lock = Path(f"/tmp/.X{number}-lock")
    try:
        if int(lock.read_text().strip() or 0) == pid:
            left.append(f"{lock}, naming our Xvfb")
    except (OSError, ValueError):
        pass
    return left


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
    """A screenshot without a display starts a private Xvfb, which is gone with the app:
    its process, lock file and socket. Only the Xvfb this app started is looked at (found by
    its PID), so other X servers starting or stopping on the machine cannot sway the test.
    An export needs no display and starts none."""
    bin_dir, log = _xvfb_recorder(tmp_path)
    env = _no_display_env(PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    png, stats = tmp_path / "a.png", tmp_path / "s.json"
    clip = str(DATA / "acl" / "cmu_09_02.acl.sjson")
    proc = run_app(clip, "--screenshot-view", str(png), env=env, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert QtGui.QImage(str(png)).width() > 300
    started = log.read_text().split()
    assert len(started) == 3, started  # the app started exactly one X server
    assert _leftovers(int(started[0]), started[1], started[2]) == []  # gone with the app
    proc = run_app(clip, "--export-stats", str(stats), env=env, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert stats.read_text().startswith("{")
    assert log.read_text().split() == started  # no X server for an export


def test_shell_distance_mesh_opens_the_window_with_shells_from_the_mesh(window, qtbot) -> None:
    from codec.cli.flags import run_flags

    args = parse_args(
        [str(DATA / "gltf" / "Fox.glb"), "--animation", "Run", "--shell-distance", "mesh"]
    )
    flags = run_flags(args)
    assert flags.tuning_changes() == {"shell_from_mesh": True}
    with qtbot.waitSignal(window.controller.result_ready, timeout=60_000):
        assert window.open_file(Path(args.clip), animation=args.animation, flags=flags)
    doc = window.document
    assert doc.settings.shell_from_mesh and doc.settings.shell_distance is None  # the clip's
    shells = doc.result.clip.skeleton.shell_distance
    assert len(np.unique(shells)) > doc.clip.num_joints // 2
    assert run_flags(parse_args(["x.glb", "--shell-distance", "2.5"])).tuning_changes() == {
        "shell_distance": 2.5,
        "shell_from_mesh": False,
    }
