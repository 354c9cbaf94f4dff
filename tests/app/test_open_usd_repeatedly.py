"""The window opens a USD clip 20 times in a row without a hang, in a fresh interpreter where
the warm-up thread is still importing numba while the first clip is read (the UI thread
once imported pxr at that moment and deadlocked in about 1 run of 5). usd-core must never
be imported by the window's process at all: it runs in the reader's child process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
USDZ = ROOT / "tests" / "data" / "usd" / "CesiumMan.usdz"
SCRIPT = """
import sys
from PySide6 import QtCore, QtWidgets
QtCore.QCoreApplication.setAttribute(QtCore.Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
app = QtWidgets.QApplication([])
from app.main_window import MainWindow
errors = []
class Dialogs:
    def error(self, parent, title, message):
        errors.append(message)
    def choose_animation(self, parent, names):
        return names[0]
w = MainWindow(dialogs=Dialogs(), remember_layout=False)
w.show()
for i in range(20):
    assert w.open_file(sys.argv[1], remember=False), errors
    app.processEvents()
    print(f"open {i}", flush=True)
assert w.document.clip.num_joints == 19
assert "pxr" not in sys.modules and "ufbx" not in sys.modules
print("opened 20 times")
w.close()
"""


STEP_S = 60.0  # the start, each open, the end: a hang is a step that takes longer


@pytest.mark.timeout(1500)  # a last guard: STEP_S for each of the 22 steps
def test_the_window_opens_a_usd_clip_20_times_without_a_hang(tmp_path: Path) -> None:
    """A hang is an open that does not end: the guard is on each step, not on the whole
    run (the 20 opens took 183 s of a 200 s guard at load 8, every one progressing)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    env.setdefault("QT_QPA_PLATFORM", "xcb")
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with open(out, "w") as stdout, open(err, "w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-c", SCRIPT, str(USDZ)], cwd=ROOT, env=env, stdout=stdout,
            stderr=stderr,
        )  # fmt: skip
    lines, since = 0, time.monotonic()
    while proc.poll() is None:
        now = out.read_text().count("\n")
        if now > lines:
            lines, since = now, time.monotonic()
        elif time.monotonic() - since > STEP_S:
            proc.kill()
            proc.wait()
            pytest.fail(f"hung after {lines} opens:\n{err.read_text()[-2000:]}")
        time.sleep(0.2)
    assert proc.returncode == 0, err.read_text()[-2000:]
    assert "opened 20 times" in out.read_text()
