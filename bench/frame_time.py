"""Frame time, scrub latency and UI stalls of the 3D view under a software GL (run under Xvfb).

The scene is the heaviest default one: 142 joints (cmu_02_03_run_ccrig), lit anti-aliased
bones of both skeletons, every dominant shell outlined, the gizmo overlay, at 1280x720.

    tools/with_display.sh .venv/bin/python bench/frame_time.py [--shared]
        [--mesh fox|cesiumman|CLIP.glb] [--skin-style translucent|solid|wireframe]

Prints numbers; targets: median frame <= 25 ms, median scrub latency <= 40 ms, longest
event-loop stall while compressing in the background <= 100 ms. `--mesh` draws a skinned
character instead of the BVH: Fox (Run, 1,728 vertices) or CesiumMan (3,273 vertices) with
both skins shown (raw and lossy, skinned every frame) on top of the bones and every shell.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("PYOPENGL_PLATFORM", "glx")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from OpenGL import GL
from PySide6 import QtCore, QtWidgets

QtCore.QCoreApplication.setAttribute(QtCore.Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
app = QtWidgets.QApplication(sys.argv[:1])

import codec  # noqa: E402
from app.controller import Controller  # noqa: E402
from app.model.document import Document  # noqa: E402
from app.scene.viewport3d import Viewport3D  # noqa: E402
from app.views.timeline import TimelineWidget  # noqa: E402

# The repository's own copies by default (a fresh clone has no ../shared); `--shared` reads
# the same two clips from ../shared/data instead.
DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
_UP = Path(__file__).resolve().parents[1:]
SHARED = next((p / "shared" / "data" for p in _UP if (p / "shared").is_dir()), _UP[1] / "shared")
if "--shared" in sys.argv[1:]:
    BVH = SHARED / "bvh" / "cmu_02_03_run_ccrig.bvh"
    LONG = SHARED / "acl" / "cmu_13_07.acl.sjson"
else:
    BVH = DATA / "bvh" / "cmu_02_03_run_ccrig.bvh"
    LONG = DATA / "acl" / "cmu_13_07.acl.sjson.xz"
MESHES = {
    "fox": (DATA / "gltf" / "Fox.glb", "Run"),
    "cesiumman": (DATA / "gltf" / "CesiumMan.glb", None),
}


def option(name: str, default: str | None = None) -> str | None:
    """The value after `name` on the command line (default when absent)."""
    args = sys.argv[1:]
    return args[args.index(name) + 1] if name in args[:-1] else default


MESH = option("--mesh")
SKIN_STYLE = option("--skin-style", "translucent")


def wait_frame(vp: Viewport3D, timeout: float = 5.0) -> None:
    loop = QtCore.QEventLoop()
    vp.frame_drawn.connect(loop.quit)
    QtCore.QTimer.singleShot(int(timeout * 1000), loop.quit)
    loop.exec()
    vp.frame_drawn.disconnect(loop.quit)


def main() -> None:
    doc = Document()
    host = QtWidgets.QWidget()
    lay = QtWidgets.QVBoxLayout(host)
    vp = Viewport3D(doc)
    timeline = TimelineWidget(doc)
    lay.addWidget(vp, 1)
    lay.addWidget(timeline)
    host.show()
    path, animation = BVH, None
    if MESH is not None:
        path, animation = MESHES.get(MESH.lower(), (Path(MESH), None))
    clip = codec.load_clip(path, animation=animation) if animation else codec.load_clip(path)
    doc.set_clip(clip, path)
    t0 = time.perf_counter()
    doc.set_result(codec.compress(doc.compression_input()))
    print(
        f"{path.name}: {clip.num_joints} joints, {clip.num_samples} samples "
        f"(compressed in {time.perf_counter() - t0:.1f} s)"
    )
    if MESH is not None:
        doc.update_display(show_raw_skin=True, show_lossy_skin=True, skin_style=SKIN_STYLE)
        verts = sum(m.num_vertices for m in clip.meshes)
        tris = sum(len(m.triangles) for m in clip.meshes)
        print(
            f"skin: {len(clip.meshes)} mesh(es), {verts:,} vertices, {tris:,} triangles, "
            f"raw + lossy shown, {SKIN_STYLE}"
        )
    doc.update_display(shells="all")
    doc.set_selection(clip.num_joints // 2)
    # make the GL scene exactly 1280x720
    extra = host.sizeHint().height() - vp.scene_box.sizeHint().height()
    host.resize(1280 + 20, 720 + extra)
    for _ in range(5):
        app.processEvents()
    dw, dh = 1280 - vp.scene.width(), 720 - vp.scene.height()
    host.resize(host.width() + dw, host.height() + dh)
    for _ in range(5):
        app.processEvents()
    vp.invalidate()
    wait_frame(vp)
    vp.scene.makeCurrent()
    samples = int(GL.glGetIntegerv(GL.GL_SAMPLES))
    print(
        f"scene {vp.scene.width()}x{vp.scene.height()}, {samples}x MSAA, lit bones "
        f"({vp.lossy_mesh.num_bones} lossy + {vp.raw_mesh.num_bones} raw), shells: all "
        f"({len(clip.skeleton.names)} outlined, {len(vp.shell_outlines.pos) // 2} segments), "
        f"camera {doc.display.camera}"
    )

    # 1) frame time: draw frame after frame, time moving each frame (playback at full speed)
    rate = clip.sample_rate

    def frame_times() -> list[float]:
        times = []
        for i in range(120):
            doc.set_time((i * 0.37 % clip.num_samples) / rate)
            t = time.perf_counter()
            vp.scene.makeCurrent()  # binds the GL window's framebuffer
            vp.scene.paintGL()  # rebuild + draw, synchronously
            GL.glFinish()
            times.append((time.perf_counter() - t) * 1000)
        return times

    times = frame_times()
    print(
        f"frame time: median {statistics.median(times):.1f} ms, "
        f"p90 {sorted(times)[int(0.9 * len(times))]:.1f} ms"
    )
    if MESH is not None:  # the same scene without the skins, in this run: what they cost
        doc.update_display(show_raw_skin=False, show_lossy_skin=False)
        bare = frame_times()
        doc.update_display(show_raw_skin=True, show_lossy_skin=True)
        print(
            f"frame time without the skins: median {statistics.median(bare):.1f} ms "
            f"(with them x{statistics.median(times) / statistics.median(bare):.2f})"
        )

    # 2) scrub latency: a scrub-bar move until that frame is on screen
    lat = []
    for i in range(60):
        t = time.perf_counter()
        timeline.bar.scrubbed.emit(((i * 7.3) % clip.num_samples) / rate)
        wait_frame(vp)
        lat.append((time.perf_counter() - t) * 1000)
    print(f"scrub latency: median {statistics.median(lat):.1f} ms, max {max(lat):.1f} ms")

    # 3) longest event-loop stall while a long clip compresses in the background
    doc2 = Document()
    ctl = Controller(doc2)
    gaps: list[float] = []
    stamps: list[float] = []
    last = [time.perf_counter()]

    def beat() -> None:
        now = time.perf_counter()
        gaps.append((now - last[0]) * 1000)
        stamps.append(now - t)
        last[0] = now

    heart = QtCore.QTimer()
    heart.setTimerType(QtCore.Qt.TimerType.PreciseTimer)
    heart.setInterval(5)
    heart.timeout.connect(beat)
    long_clip = codec.load_clip(LONG)
    done = QtCore.QEventLoop()
    ctl.result_ready.connect(done.quit)
    ctl.failed.connect(done.quit)
    t = time.perf_counter()
    last[0] = t
    heart.start()
    ctl.open_clip(long_clip, LONG)
    done.exec()
    heart.stop()
    took = time.perf_counter() - t
    print(
        f"{LONG.name}: compressed in the background in {took:.1f} s; "
        f"longest UI stall {max(gaps):.1f} ms (heartbeat 5 ms, {len(gaps)} beats, "
        f"ending {stamps[gaps.index(max(gaps))]:.2f} s after the request)"
    )
    vp.release_gl()
    host.close()


if __name__ == "__main__":
    main()
