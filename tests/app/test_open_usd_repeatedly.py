"""The window opens a USD clip 20 times in a row without a hang, in a fresh interpreter where
the warm-up thread is still importing numba while the first clip is read (the UI thread
once imported pxr at that moment and deadlocked in about 1 run of 5). usd-core must never
be imported by the window's process at all: it runs in the reader's child process."""

from __future__ import annotations

import os
import subprocess
import sys
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
assert w.document.clip.num_joints == 19
assert "pxr" not in sys.modules and "ufbx" not in sys.modules
print("opened 20 times")
w.close()
"""


@pytest.mark.timeout(240)
def test_the_window_opens_a_usd_clip_20_times_without_a_hang(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    env.setdefault("QT_QPA_PLATFORM", "xcb")
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(USDZ)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=200,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "opened 20 times" in proc.stdout
