"""Regenerate every picture in docs/ from the real window: `python tools/screenshots.py`.

The main window at 1280x800 and 1920x1080, the 3D view alone (shells, magnifier, a named
view), each panel, the skinned mesh with its report, ACL 2.1's own output (alone with
`--acl-only`), Compare / Curves (alone with `--compare-only`) and Curves as a graph editor
(alone with `--graph-only`), an additive clip on its base, on clips the repository carries.
Works without a display (a private Xvfb is started, as `shellscope --screenshot` does). Look
at the pictures before committing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.model.display import PrivateXServer, has_display, use_display  # noqa: E402

DOCS = ROOT / "docs"
DATA = ROOT / "tests" / "data"
WALK = DATA / "bvh" / "cmu_02_02_walk_daz.bvh"
RUN = DATA / "bvh" / "cmu_02_03_run_ccrig.bvh"
LONG_XZ = DATA / "acl" / "cmu_13_07.acl.sjson.xz"
CESIUM = DATA / "gltf" / "CesiumMan.glb"
LOOP_XZ = DATA / "acl" / "cmu_81_18_looping.acl.sjson.xz"
LOOP_ACL = DATA / "acl21" / "cmu_81_18_looping.acl"  # ACL 2.1's own output of it
WALK_ACL_RAW = DATA / "acl" / "cmu_09_02.acl.sjson"
WALK_ACL = DATA / "acl21" / "cmu_09_02.acl"
ADDITIVE = DATA / "acl" / "additive_relative_chain.acl.sjson"  # tools/make_additive_clip.py


def main() -> int:
    server = None
    if not has_display():
        server = PrivateXServer(2000, 1300)
        use_display(server.start())
    os.environ.setdefault("PYOPENGL_PLATFORM", "glx")
    try:
        return shoot()
    finally:
        if server is not None:
            server.stop()


def shoot() -> int:
    import lzma
    import tempfile

    from PySide6 import QtCore, QtWidgets

    QtCore.QCoreApplication.setAttribute(QtCore.Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    app.setApplicationName("ShellscopeScreenshots")  # never the user's settings

    from app.main_window import Dialogs, MainWindow
    from app.scene import scene_view
    from app.scene.screenshot import grab_image
    from codec.tuning import JointOverride

    scene_view.KEEP_MSAA = True  # the docs' pictures keep smooth edges on software GL too
    DOCS.mkdir(exist_ok=True)
    written: list[Path] = []

    def settle(window: MainWindow, frames: int = 3) -> None:
        vp = window.viewport
        for _ in range(frames):
            loop = QtCore.QEventLoop()
            vp.frame_drawn.connect(loop.quit)
            QtCore.QTimer.singleShot(3000, loop.quit)
            vp.invalidate()
            loop.exec()
            vp.frame_drawn.disconnect(loop.quit)
        for _ in range(10):
            app.processEvents()

    def open_clip(window: MainWindow, path: Path, **kw: object) -> None:
        loop = QtCore.QEventLoop()
        window.controller.result_ready.connect(loop.quit)
        window.controller.failed.connect(loop.quit)
        if not window.open_file(path, remember=False, **kw):
            raise SystemExit(f"cannot open {path}")
        loop.exec()

    def save(image: object, name: str) -> None:
        path = DOCS / name
        if not image.save(str(path), "PNG"):  # type: ignore[attr-defined]
            raise SystemExit(f"cannot write {path}")
        written.append(path)

    def window_at(w: int, h: int) -> MainWindow:
        window = MainWindow(dialogs=Dialogs(), remember_layout=False)
        window.resize(w, h)
        window.show()
        for _ in range(20):
            app.processEvents()
        return window

    def graph_editor() -> None:
        """5) Curves as a graph editor at 1280x800: the 0.5 cm walk's lossy - raw of the right
        foot framed on its worst error, the left hand pinned below it."""
        window = window_at(1280, 800)
        open_clip(window, WALK)
        doc = window.document
        loop = QtCore.QEventLoop()
        window.controller.result_ready.connect(loop.quit)
        doc.update_settings(precision=0.5)
        loop.exec()
        window.reset_layout()
        window.docks["CurvesPanel"].raise_()
        curves = window.panels["CurvesPanel"]
        doc.set_selection(doc.clip.skeleton.index("lHand"))
        curves.toggle_pin()
        doc.set_selection(doc.clip.skeleton.index("rFoot"))
        curves.set_error_mode(True)
        doc.set_time(curves.frame_selection() or 0.0)
        settle(window)
        save(grab_image(window), "curves_error.png")
        # the Library at 1280x800 over a copy of the test clips: a broken .glb, a rig's
        # takes, and a sweep of three precisions drawn below the table
        with tempfile.TemporaryDirectory() as tmp:
            lib = Path(tmp) / "library"
            lib.mkdir()
            for src in (WALK, RUN, DATA / "gltf" / "Fox.glb", DATA / "acl" / LOOP_XZ.name):
                (lib / src.name).write_bytes(src.read_bytes())
            robot = lib / "quaternius_robot.fbx"
            robot.write_bytes(
                lzma.decompress((DATA / "fbx" / "quaternius_robot.fbx.xz").read_bytes())
            )
            (lib / "broken.glb").write_bytes(b"\0\0\0\0" + CESIUM.read_bytes()[4:])
            dialog = window.open_library(lib)
            dialog.resize(1280, 800)
            while not dialog.run_finished:
                app.processEvents()
                QtCore.QThread.msleep(50)
            dialog.sweep([0.001, 0.01, 0.1])
            while dialog.batch_run is not None:
                app.processEvents()
                QtCore.QThread.msleep(50)
            for _ in range(20):
                app.processEvents()
            save(dialog.grab().toImage(), "library_sweep.png")
            dialog.close()
        window.close()

    if "--graph-only" in sys.argv:
        graph_editor()
        for path in written:
            print(f"wrote {path.relative_to(ROOT)}")
        app.shutdown()
        return 0

    # ACL 2.1's own output against its raw clip: the loop at ACL's worst moment with ACL's
    # bit rates (the error magnified x100), and a walk's raw and ACL pose in the 3D view
    window = window_at(1280, 800)
    open_clip(window, LOOP_XZ)
    doc = window.document
    loop = QtCore.QEventLoop()
    window.controller.result_ready.connect(loop.quit)
    if not window.open_acl_output(LOOP_ACL):
        raise SystemExit(f"cannot use {LOOP_ACL}")
    loop.exec()
    stats = doc.result.stats
    doc.set_time(stats["worst_time"])
    doc.set_selection(stats["worst_track"])
    doc.update_display(magnify=100.0)
    window.reset_layout()
    window.docks["BitRatePanel"].raise_()
    settle(window)
    save(grab_image(window), "acl_output.png")
    window.close()
    window = window_at(1920, 1080)  # the 3D view alone: a short walk, raw and ACL's pose
    open_clip(window, WALK_ACL_RAW)
    doc = window.document
    loop = QtCore.QEventLoop()
    window.controller.result_ready.connect(loop.quit)
    if not window.open_acl_output(WALK_ACL):
        raise SystemExit(f"cannot use {WALK_ACL}")
    loop.exec()
    doc.set_time(doc.result.stats["worst_time"])
    doc.set_selection(doc.result.stats["worst_track"])
    doc.update_display(magnify=300.0)
    window.viewport.set_view("right")
    settle(window)
    save(window.viewport.scene.grabFramebuffer(), "view_acl_output.png")
    window.close()
    if "--acl-only" in sys.argv:  # just these two
        for path in written:
            print(f"wrote {path.relative_to(ROOT)}")
        app.shutdown()
        return 0

    # 0) Compare and Curves at 1280x800: the walk at 0.01 cm pinned as A, then 0.1 cm (B)
    window = window_at(1280, 800)
    open_clip(window, WALK)
    doc = window.document
    window.controller.pin_a()
    loop = QtCore.QEventLoop()
    window.controller.result_ready.connect(loop.quit)
    doc.update_settings(precision=0.1)  # an edit that is not saved beside the clip
    loop.exec()
    doc.set_time(0.8)
    doc.set_selection(doc.clip.skeleton.index("rFoot"))
    doc.update_display(magnify=10.0)
    window.reset_layout()
    for dock, name, source in (
        ("ErrorPlotPanel", "compare.png", "B"),
        ("CurvesPanel", "curves.png", "B"),
        ("ErrorHeatmapPanel", "compare_heatmap.png", "B-A"),
    ):
        doc.set_comparison_view(panel_source=source)
        window.docks[dock].raise_()
        settle(window)
        save(grab_image(window), name)
    window.close()

    if "--compare-only" in sys.argv:  # just these three (the others are left as they are)
        for path in written:
            print(f"wrote {path.relative_to(ROOT)}")
        app.shutdown()
        return 0

    # 1) the main window at both sizes, the same moment of the same walk
    for (w, h), name in (
        ((1280, 800), "screenshot_main.png"),
        ((1920, 1080), "screenshot_main_1920.png"),
    ):
        window = window_at(w, h)
        open_clip(window, WALK)
        doc = window.document
        doc.set_time(1.2)
        doc.set_selection(doc.clip.skeleton.index("lHand"))
        window.reset_layout()
        settle(window)
        save(grab_image(window), name)
        window.close()

    # 2) the 3D view alone: every shell outlined on the 142-joint run; a front orthographic
    #    view with the error magnified x1000
    window = window_at(1920, 1080)
    open_clip(window, RUN)
    doc, vp = window.document, window.viewport
    doc.set_time(0.7)
    doc.set_selection(doc.clip.skeleton.index("CC_Base_L_Forearm"))
    doc.update_display(shells="all")
    settle(window)
    save(vp.scene.grabFramebuffer(), "view_shells_all.png")
    doc.update_display(shells="selected", magnify=1000.0)
    vp.set_view("front")
    settle(window)
    save(vp.scene.grabFramebuffer(), "view_front_magnified.png")
    window.close()

    # 3) the panels, on a long clip with hand and head overrides (where tuning happens)
    with tempfile.TemporaryDirectory() as tmp:
        long_clip = Path(tmp) / LONG_XZ.stem
        long_clip.write_bytes(lzma.decompress(LONG_XZ.read_bytes()))
        window = window_at(1920, 1080)
        rules = (JointOverride("*Hand*", precision=0.002), JointOverride("head", precision=0.02))
        open_clip(window, long_clip, overrides=rules)
        doc = window.document
        doc.set_selection(doc.clip.skeleton.index("lHand"))
        doc.set_time(5.0)
        window.reset_layout()
        settle(window)
        for key, name in (
            ("ErrorPlotPanel", "panel_error_plot.png"),
            ("ErrorHeatmapPanel", "panel_error_heatmap.png"),
            ("BitRatePanel", "panel_bitrates.png"),
            ("JointsPanel", "panel_joints.png"),
            ("SettingsPanel", "panel_settings.png"),
            ("StatsPanel", "panel_stats.png"),
        ):
            dock = window.docks[key]
            dock.raise_()
            for _ in range(10):
                app.processEvents()
            save(grab_image(dock), name)
        window.close()

    # 4) the skin: CesiumMan at its worst vertex with ACL's one 3 cm shell for every joint
    #    (the skin over budget where the shells say all is well), the same with the error
    #    magnified x100 in the solid style, and the skin report
    window = window_at(1920, 1080)
    open_clip(window, CESIUM)
    doc, vp = window.document, window.viewport
    stats = doc.result.stats
    doc.set_time(stats["vertex_worst_time"])
    doc.set_selection(stats["vertex_worst_joint"])
    window.reset_layout()
    window.docks["SkinReportPanel"].raise_()
    settle(window)
    save(vp.scene.grabFramebuffer(), "view_skin.png")
    save(grab_image(window.docks["SkinReportPanel"]), "panel_skin_report.png")
    doc.update_display(magnify=100.0, skin_style="solid", show_raw=False, show_lossy=False)
    vp.set_view("front")
    settle(window)
    save(vp.scene.grabFramebuffer(), "view_skin_magnified.png")
    window.close()

    graph_editor()
    # an additive clip at 1280x800: the chain drawn applied to its base, the base named in
    # the 3D view, the Stats sheet scrolled to its Bind pose row
    window = window_at(1280, 800)
    open_clip(window, ADDITIVE)
    window.reset_layout()
    doc = window.document
    doc.set_selection(doc.clip.num_joints - 1)
    doc.set_time(0.4)
    stats_panel = window.panels["StatsPanel"]
    stats_panel.sheet_scroll.ensureWidgetVisible(stats_panel.values["bind_mode"])
    settle(window)
    save(grab_image(window), "additive.png")
    window.close()
    for path in written:
        print(f"wrote {path.relative_to(ROOT)}")
    app.shutdown()  # let go of the display before a private X server is stopped
    return 0


if __name__ == "__main__":
    sys.exit(main())
