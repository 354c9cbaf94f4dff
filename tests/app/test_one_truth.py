"""One truth for tuning (issue 30): a clip tuned through the window's own panels (a joint's own
value, then a pattern rule made after it that also matches that joint, shells from the mesh on
a skinned clip) compresses to the same size and max error in the window, in the window's
exports, in `compress`, `stats` and `library` (an embedded cluster, and the window's File >
Open Library on a real `dask scheduler` this module starts), one reader each: BVH, ACL SJSON
with per-joint values, glTF with two animations, FBX and USD. The joint's own value wins
everywhere, and `compress CLIP --settings X` makes the same bytes from a stats JSON of the
window, one of `compress` and a library row (and the window's File > Save compressed is
`compress -o`'s file byte for byte, for every reader).

Every run is made once (module fixtures) and the tests compare them."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PySide6 import QtCore
from pytestqt.qtbot import QtBot

from app.views.joints import C_PREC
from codec.cli import main
from codec.codecs import container
from tests.app.conftest import DATA, FakeDialogs

ROOT = Path(__file__).resolve().parents[2]
WAIT_MS = 120_000


@dataclass(frozen=True)
class Case:
    """One clip and what the window does to it: `joint` gets its own precision, then the
    rule `pattern` (which matches `joint` too, and `other`) is added after it."""

    reader: str
    file: str
    animation: str | None  # what the window opens (None: the file's only animation)
    joint: str
    joint_value: float
    pattern: str
    pattern_value: float
    other: str  # a joint the pattern sets
    mesh: bool  # shells from the mesh (a skinned clip)
    default: bool = True  # the animation `stats` reads (a file's first)
    codec: str | None = None  # chosen in Settings before tuning (None: the default codec)


CASES = (
    Case("bvh", "cmu_02_03_run_ccrig.bvh", None, "CC_Base_R_Ring3", 0.002, "*Ring?", 0.005,
         "CC_Base_L_Ring3", False),
    Case("sjson", "per_joint.acl.sjson", None, "lIndex2", 0.004, "l*", 0.008, "lHand", False),
    Case("gltf", "Fox.glb", "Survey", "b_LeftHand_011", 0.003, "*Hand*", 0.006,
         "b_RightHand_08", True),
    Case("gltf-walk", "Fox.glb", "Walk", "b_Head_05", 0.004, "b_*", 0.02, "b_Neck_04", False,
         default=False, codec="auto"),
    Case("fbx", "kenney.fbx.xz", None, "LeftHand", 0.004, "*Hand*", 0.008, "RightHand", True),
    Case("usd", "CesiumMan.usdz", None, "leg_joint_L_3", 0.004, "leg_*", 0.008,
         "leg_joint_R_3", True),
)  # fmt: skip
IDS = [c.reader for c in CASES]


def per_joint_sjson(src: Path, dst: Path) -> None:
    """cmu_09_02 with precision and shell distance of their own on the hands (0.002 cm, 1.5 cm)
    and the head and neck (0.05 cm, 10 cm): the clip's own values, as ACL SJSON holds them."""
    text = src.read_text()
    head, sep, rest = text.partition("bones =")
    bones, sep2, tail = rest.partition("tracks =")

    def bone(m: re.Match[str]) -> str:
        block = m.group(0)
        name = re.search(r'name = "([^"]+)"', block).group(1)  # type: ignore[union-attr]
        if re.search("Index|Thumb|Mid|Ring|Pinky|Hand", name):
            own = "precision = 0.002\n\t\tvertex_distance = 1.5"
        elif name in ("head", "neck"):
            own = "precision = 0.05\n\t\tvertex_distance = 10.0"
        else:
            return block
        return block.replace("vertex_distance = 3.0", own)

    dst.write_text(head + sep + re.sub(r"\{[^{}]*\}", bone, bones) + sep2 + tail)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("one_truth") / "clips"
    root.mkdir()
    shutil.copy(DATA / "bvh" / "cmu_02_03_run_ccrig.bvh", root)
    per_joint_sjson(DATA / "acl" / "cmu_09_02.acl.sjson", root / "per_joint.acl.sjson")
    shutil.copy(DATA / "gltf" / "Fox.glb", root)
    shutil.copy(DATA / "fbx" / "maya_kenney_character_7700_binary.fbx.xz", root / "kenney.fbx.xz")
    shutil.copy(DATA / "usd" / "CesiumMan.usdz", root)
    return root


@dataclass
class WindowRun:
    size: int
    error: float
    joint: float  # the joint's precision the window resolved
    other: float  # the pattern's other joint
    stats_json: Path  # the Stats panel's export
    ssc: Path  # File > Save compressed


def _open_and_tune(bot: QtBot, window: Any, case: Case, path: Path, out: Path) -> WindowRun:
    """Open the clip, then tune it through the Joints and Settings panels, as a user does."""
    from PySide6.QtCore import Qt

    ctl, doc = window.controller, window.document
    joints, settings = window.panels["JointsPanel"], window.panels["SettingsPanel"]
    with bot.waitSignal(ctl.result_ready, timeout=WAIT_MS):
        assert window.open_file(path, animation=case.animation, remember=False)
    if case.codec is not None:  # auto on Fox Walk picks a codec that has no level
        with bot.waitSignal(ctl.result_ready, timeout=WAIT_MS):
            settings.codec.setCurrentText(case.codec)
    names = doc.clip.skeleton.names
    j, other = names.index(case.joint), names.index(case.other)
    editor = joints.edit_cell(j, C_PREC)  # double-click the joint's precision, type, Enter
    editor.lineEdit().selectAll()
    bot.keyClicks(editor, str(case.joint_value))
    with bot.waitSignal(ctl.result_ready, timeout=WAIT_MS):
        bot.keyClick(editor, Qt.Key.Key_Return)
    bot.mouseClick(joints.add_button, Qt.MouseButton.LeftButton)  # a pattern rule, after it
    rules = joints.rules
    bot.keyClicks(rules.indexWidget(rules.currentIndex()), case.pattern)
    bot.keyClick(rules.indexWidget(rules.currentIndex()), Qt.Key.Key_Return)
    bot.waitUntil(
        lambda: rules.currentColumn() == 1 and rules.indexWidget(rules.currentIndex()) is not None
    )
    bot.keyClicks(rules.indexWidget(rules.currentIndex()), str(case.pattern_value))
    with bot.waitSignal(ctl.result_ready, timeout=WAIT_MS):
        bot.keyClick(rules.indexWidget(rules.currentIndex()), Qt.Key.Key_Return)
    if case.mesh:
        with bot.waitSignal(ctl.result_ready, timeout=WAIT_MS):
            settings.shell_from_mesh.click()
    bot.waitUntil(lambda: not ctl.running)
    resolved = doc.resolved_joints().precision
    stats = window.panels["StatsPanel"].export_to("stats", out / f"{case.reader}.window.json")
    window.dialogs.paths.append(str(out / f"{case.reader}.window.ssc"))
    ssc = window.save_compressed()
    assert stats is not None and ssc is not None, window.dialogs.errors
    s = doc.result.stats
    return WindowRun(s["compressed_size"], s["max_error"], resolved[j], resolved[other], stats, ssc)


@pytest.fixture(scope="module")
def window_runs(folder: Path, qapp: Any, request: pytest.FixtureRequest, tmp_path_factory):
    """Every case tuned in one window (each clip's sidecar saved as the window saves it)."""
    from app.main_window import MainWindow

    QtCore.QSettings.setPath(
        QtCore.QSettings.Format.IniFormat,
        QtCore.QSettings.Scope.UserScope,
        str(tmp_path_factory.mktemp("qsettings")),
    )
    out = tmp_path_factory.mktemp("window_exports")
    bot = QtBot(request)
    window = MainWindow(dialogs=FakeDialogs(), remember_layout=False)  # type: ignore[arg-type]
    window.resize(1280, 800)
    window.show()
    bot.waitExposed(window)
    try:
        runs = {c.reader: _open_and_tune(bot, window, c, folder / c.file, out) for c in CASES}
    finally:
        window.close()  # what quitting does: the last clip's pending tuning is saved
    return runs


def run_cli(*argv: object) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    return {"out": out.getvalue(), "err": err.getvalue()}


def _animation(case: Case) -> list[str]:
    return ["--animation", case.animation] if case.animation else []


@pytest.fixture(scope="module")
def compressed(window_runs, folder: Path, tmp_path_factory) -> dict[str, tuple[dict, Path]]:
    """`python -m codec compress CLIP --json J -o X.ssc` of every case (the sidecar the window
    saved is its tuning)."""
    out = tmp_path_factory.mktemp("compress")
    runs = {}
    for c in CASES:
        j, x = out / f"{c.reader}.json", out / f"{c.reader}.ssc"
        run_cli("compress", folder / c.file, *_animation(c), "--json", j, "-o", x)
        runs[c.reader] = (json.loads(j.read_text()), x)
    return runs


@pytest.fixture(scope="module")
def stats_rows(window_runs, folder: Path, tmp_path_factory) -> dict[str, dict]:
    """`python -m codec stats FOLDER --json` (one row per file: its first animation)."""
    path = tmp_path_factory.mktemp("stats") / "stats.json"
    run_cli("stats", folder, "--jobs", "1", "--json", path)
    return {r["name"]: r for r in json.loads(path.read_text())["rows"]}


@pytest.fixture(scope="module")
def library_runs(window_runs, folder: Path, tmp_path_factory) -> dict[str, Path]:
    """`python -m codec library FOLDER` on its embedded cluster (one worker), no cache."""
    out = tmp_path_factory.mktemp("library")
    j, c = out / "library.json", out / "library.csv"
    run_cli("library", folder, "--workers", "1", "--no-cache", "--json", j, "--csv", c)
    return {"json": j, "csv": c}


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory) -> Any:
    """A real `dask scheduler` and one `dask worker` (from this checkout) on localhost."""
    info = tmp_path_factory.mktemp("dask") / "scheduler.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    dask = [sys.executable, "-m", "dask"]
    quiet = {"cwd": ROOT, "env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    procs = [
        subprocess.Popen(
            [*dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--scheduler-file", str(info)],
            **quiet,
        )
    ]  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not info.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        procs.append(
            subprocess.Popen(
                [*dask, "worker", "--scheduler-file", str(info), "--no-nanny", "--nthreads",
                 "1", "--no-dashboard", "--host", "127.0.0.1"],
                **quiet,
            )
        )  # fmt: skip
        from distributed import Client

        address = json.loads(info.read_text())["address"]
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(1, timeout=60)
        yield address
    finally:
        for worker in procs[1:]:
            worker.kill()  # it holds nothing to save
        procs[0].terminate()
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@pytest.fixture(scope="module")
def open_library_rows(window_runs, folder: Path, scheduler: str) -> list[dict]:
    """File > Open Library's background run (app.model.library_model), on the real scheduler."""
    from app.model.library_model import BackgroundLibraryRun

    run = BackgroundLibraryRun(folder, scheduler=scheduler)
    run.cache = None  # computed on the scheduler's worker, not read back
    run.start()
    run.thread.join(WAIT_MS / 1000)
    assert run.progress.finished and not run.progress.message, run.progress.message
    return run.drain()


def _row(rows: list[dict], case: Case, animation: str | None) -> dict:
    """The row of the case's clip; `animation` as its settings block names it (a USD row's
    label is its skeleton's path, the block has the animation's name)."""
    found = [
        r
        for r in rows
        if r["path"] == case.file and (r["settings"] or {}).get("animation") == animation
    ]
    assert len(found) == 1, [(r["path"], r["animation"], r.get("error")) for r in rows]
    assert not found[0]["error"], found[0]["error"]
    return found[0]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_path_gives_the_windows_numbers_and_the_joint_edit_wins(
    case: Case, window_runs, compressed, stats_rows, library_runs, open_library_rows, folder
) -> None:
    w = window_runs[case.reader]
    want = (w.size, w.error)
    # the joint's own value wins over the pattern made after it; the pattern sets the others
    assert (w.joint, w.other) == (case.joint_value, case.pattern_value)
    stats, ssc = compressed[case.reader]
    assert (stats["compressed_size"], stats["max_error"]) == want  # compress
    skeleton = container.read(ssc.read_bytes()).skeleton  # the budgets the file was made with
    names = skeleton.names
    assert skeleton.precision[names.index(case.joint)] == case.joint_value
    assert skeleton.precision[names.index(case.other)] == case.pattern_value
    assert stats["shellscope"]["shell_from_mesh"] == case.mesh
    assert stats["shellscope"]["codec"] == (case.codec or "acl-style")
    exported = json.loads(w.stats_json.read_text())  # the window's Stats export
    assert (exported["compressed_size"], exported["max_error"]) == want
    assert w.ssc.read_bytes() == ssc.read_bytes()  # the window's .ssc is compress's, byte for byte
    animation = stats["shellscope"]["animation"]
    library = json.loads(library_runs["json"].read_text())["rows"]
    for rows in (library, open_library_rows):  # embedded; the window's, on a scheduler
        row = _row(rows, case, animation)
        assert (row["compressed_size"], row["max_error"]) == want
        assert row["settings"] == stats["shellscope"]
    if case.default:  # `stats` reads a file's first animation
        row = stats_rows[case.file]
        assert (row["compressed_size"], row["max_error"]) == want


def test_the_sjson_clips_own_values_are_the_windows_defaults(window_runs, compressed) -> None:
    """Joints no rule touches keep the file's own values in the window too (not 0.01 cm)."""
    stats, ssc = compressed["sjson"]
    sk = container.read(ssc.read_bytes()).skeleton
    own = dict(zip(sk.names, sk.precision.tolist(), strict=True))
    assert own["rIndex2"] == 0.002 and own["head"] == 0.05 and own["hip"] == 0.01
    assert stats["shellscope"]["precision"] is None  # "the clip's own"
    assert window_runs["sjson"].size == stats["compressed_size"]


def _same_bytes(
    folder: Path, case: Case, settings: Path, want: Path, tmp: Path, *flags: str
) -> Path:
    """`compress CLIP --settings FILE -o Y.ssc` (no other flag), compared with `want`."""
    made = tmp / f"{case.reader}.{settings.name}.ssc"
    run_cli("compress", folder / case.file, "--settings", settings, "-o", made, *flags)
    assert made.read_bytes() == want.read_bytes()
    return made


@pytest.mark.parametrize("case", [CASES[1], CASES[2]], ids=["sjson", "gltf"])
def test_a_stats_json_from_the_window_makes_the_same_bytes(
    case: Case, window_runs, folder: Path, tmp_path: Path
) -> None:
    w = window_runs[case.reader]
    _same_bytes(folder, case, w.stats_json, w.ssc, tmp_path)


@pytest.mark.parametrize("case", [CASES[0]], ids=["bvh"])
def test_a_stats_json_from_compress_makes_the_same_bytes(
    case: Case, compressed, folder: Path, tmp_path: Path
) -> None:
    stats, ssc = compressed[case.reader]
    path = tmp_path / "compress.json"
    path.write_text(json.dumps(stats))
    _same_bytes(folder, case, path, ssc, tmp_path)


@pytest.mark.parametrize(
    ("case", "kind"), [(CASES[3], "json"), (CASES[1], "csv")], ids=["gltf-walk-json", "sjson-csv"],
)  # fmt: skip
def test_a_library_row_makes_the_same_bytes(
    case: Case, kind: str, compressed, library_runs, folder: Path, tmp_path: Path
) -> None:
    """The library JSON or CSV: the row of this clip (and, of Fox.glb's three, the one
    `--animation` names: without it the file's rows are ambiguous, and it says so)."""
    stats, ssc = compressed[case.reader]
    if case.animation is not None:
        err = io.StringIO()
        argv = ["compress", str(folder / case.file), "--settings", str(library_runs[kind])]
        assert main(argv, stdout=io.StringIO(), stderr=err) == 2
        assert "3 rows for" in err.getvalue() and "give --animation" in err.getvalue()
    made = _same_bytes(folder, case, library_runs[kind], ssc, tmp_path, *_animation(case))
    block = json.loads(container.read(made.read_bytes()).settings)
    if kind == "csv":
        with open(library_runs["csv"], newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["path"] == case.file]
        assert block == json.loads(rows[0]["settings"])
    else:
        rows = json.loads(library_runs["json"].read_text())["rows"]
        assert block == _row(rows, case, stats["shellscope"]["animation"])["settings"]
