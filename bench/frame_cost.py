"""What one frame costs in the real window (1280x800), on the 44-joint clip of
bench/window_edits.py: the 3D view drawn again with nothing else changed (until its frame is
swapped), and a status-bar text change (until the window's widgets are painted), each with
the 3D view's own paintGL inside it. The 3D view is a GL window of its own
(app.scene.scene_view): a widget change paints only the widgets, in raster, and a 3D frame
draws and swaps the view alone; these are the "one frame" the edit bench's UI blocks compare
with. (With a QOpenGLWidget Qt composed the whole window through GL for either: 15-25 ms on
llvmpipe for a one-label change.)

    bash tools/with_display.sh .venv/bin/python bench/frame_cost.py [--frames N]

The view multisamples on a GPU and not on software GL (GL_RENDERER llvmpipe, softpipe,
SwiftShader); SHELLSCOPE_MSAA=4 (or 0) in the environment measures it with (or without).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from PySide6 import QtCore, QtWidgets  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=30, help="frames of each kind")
    args = parser.parse_args()
    QtCore.QCoreApplication.setAttribute(QtCore.Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    app.setOrganizationName("ShellscopeBench")
    app.setApplicationName("ShellscopeBench")
    import window_edits as we

    from app.main_window import MainWindow
    from app.scene import scene_view

    paint_ms: list[float] = []
    paint_gl = scene_view.SceneView.paintGL

    def timed_paint(self: scene_view.SceneView) -> None:
        t = time.perf_counter()
        paint_gl(self)
        paint_ms.append(1e3 * (time.perf_counter() - t))

    scene_view.SceneView.paintGL = timed_paint  # type: ignore[method-assign]
    scratch = Path(tempfile.mkdtemp(prefix="shellscope-frame-"))
    path = scratch / we.CLIPS[0][1].name
    shutil.copy(we.CLIPS[0][1], path)
    window = MainWindow(remember_layout=False)
    window.resize(1280, 800)
    window.show()
    we.wait_picture(window, lambda: window.open_file(path))
    vp = window.viewport
    loop = QtCore.QEventLoop()
    widgets = window._bench_widget_frames  # the window's widget frames (wait_picture's)

    def frames(trigger, done) -> tuple[list[float], list[float]]:  # type: ignore[no-untyped-def]
        took, gl = [], []
        for i in range(args.frames):
            QtCore.QTimer.singleShot(60, loop.quit)  # settle between frames
            loop.exec()
            done.connect(loop.quit)
            paint_ms.clear()
            t = time.perf_counter()
            trigger(i)
            loop.exec()  # until that frame is on screen
            took.append(1e3 * (time.perf_counter() - t))
            done.disconnect(loop.quit)
            QtCore.QTimer.singleShot(30, loop.quit)  # a 3D frame the change asked for too
            loop.exec()
            gl.append(sum(paint_ms))
        return took, gl

    rows = [
        ("3D view drawn again", frames(lambda i: vp.invalidate(), vp.frame_drawn)),
        (
            "status text changed",
            frames(lambda i: window.status_label.setText(f"frame {i}"), widgets.drawn),
        ),
    ]
    window.close()
    shutil.rmtree(scratch, ignore_errors=True)
    size = vp.scene.size()
    print(f"window 1280x800, 3D view {size.width()}x{size.height()}, ms (median / max);")
    print("3D view until its frame is swapped, a widget change until the widgets are painted")
    for name, (took, gl) in rows:
        print(
            f"  {name:22} frame {statistics.median(took):5.1f} / {max(took):5.1f}   "
            f"paintGL {statistics.median(gl):5.1f} / {max(gl):5.1f}"
        )


if __name__ == "__main__":
    main()
