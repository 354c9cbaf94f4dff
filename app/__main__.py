"""`shellscope [CLIP] [options]`: open the inspector, optionally save a screenshot and exit.

The screenshot modes wait for the compression to finish and for the 3D view to draw the
result before they grab the window (or the 3D view alone), so the picture is reproducible
from the command line. They ignore the remembered window layout, and they need no display:
without one they draw on a private Xvfb. Without a display and without a screenshot or an
export to make, there is nothing to show: one line says so and the exit code is 2.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path

from app.model.camera import MODES as CAMERA_MODES
from app.model.camera import VIEWS
from app.model.headless import add_export_arguments, run_headless, variants_from, wants_headless
from codec.cli.flags import add_bvh_positions_flag
from codec.model.sampling import ROUNDING_MODES
from codec.printable import printable_stream
from codec.settings import LEVELS

SCREENSHOT_TIMEOUT_MS = 180_000


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="shellscope",
        description="Inspect ACL-style compression of a skeletal animation clip.",
    )
    p.add_argument("clip", nargs="?", help="BVH, glTF/GLB, ACL SJSON or .ssc (default: bundled)")
    p.add_argument(
        "--animation", help="glTF animation, FBX animation stack or USD skeleton to open"
    )
    p.add_argument(
        "--units",
        choices=("auto", "mm", "cm", "dm", "m", "inch", "ft", "cmu"),
        help="what one unit of the file is (default auto: what the file declares; BVH: the "
        "unit in which the skeleton is human-sized)",
    )
    p.add_argument(
        "--sample-rate", type=float, metavar="HZ", help="resample glTF/FBX/USD at this rate"
    )
    add_bvh_positions_flag(p)
    p.add_argument("--precision", type=float, help="global precision in clip units")
    p.add_argument("--level", choices=LEVELS, help="compression level")
    p.add_argument("--time", type=float, default=None, help="time to show, in seconds")
    p.add_argument("--rounding", choices=ROUNDING_MODES, help="sample-time rounding mode")
    p.add_argument("--select", help="joint to select, by name or index")
    p.add_argument("--shells", choices=("all", "selected", "none"), help="dominant shells shown")
    p.add_argument(
        "--camera",
        choices=CAMERA_MODES,
        help="follow (the root; default), clip (the whole motion), selection, free",
    )
    p.add_argument("--view", choices=tuple(VIEWS), help="named view (front, side, top: ortho)")
    p.add_argument("--ortho", action="store_true", help="orthographic projection")
    p.add_argument(
        "--up-axis",
        choices=("auto", "X", "Y", "Z"),
        help="up axis of the clip (default auto: declared by the file or detected)",
    )
    p.add_argument(
        "--magnify",
        type=float,
        metavar="K",
        help="draw the lossy pose as raw + K (lossy - raw), K in 1..1000",
    )
    p.add_argument("--screenshot", metavar="PNG", help="save the window to PNG once drawn, exit")
    p.add_argument(
        "--screenshot-view", metavar="PNG", help="save the 3D view alone to PNG once drawn, exit"
    )
    p.add_argument("--size", help="window size WxH (default: the last session's, or 1280x800)")
    p.add_argument(
        "--acl-output",
        metavar="FILE.acl",
        help="show ACL 2.1's compressed output (acl_compressor -out=FILE.acl) measured against "
        "CLIP, its raw clip (codec acl-2.1: ACL's pose, bit rates and errors)",
    )
    add_export_arguments(p)  # --export-* (and --shell-distance, --overrides): no window
    return p.parse_args(argv)


def _select(window: object, spec: str) -> None:
    doc = window.document  # type: ignore[attr-defined]
    try:
        joint = doc.clip.skeleton.index(spec)
    except KeyError:
        if not spec.lstrip("-").isdigit():
            raise
        joint = int(spec)
    doc.set_selection(joint)


_PRIVATE_X: list[object] = []  # the Xvfb started for screenshots, stopped after Qt let go


def _need_display(args: argparse.Namespace) -> int | None:
    """Make sure Qt will find a display: the user's, or a private Xvfb for screenshots.
    Returns an exit code when there is none to be had."""
    from app.model.display import NoDisplayError, PrivateXServer, has_display, use_display

    if has_display():
        return None
    display = os.environ.get("DISPLAY")
    why = f"cannot reach the display {display!r}" if display else "no display (DISPLAY is not set)"
    if not (args.screenshot or args.screenshot_view):
        print(
            f"shellscope: {why}; without one use --screenshot PNG, --screenshot-view PNG "
            "or --export-stats/--export-csv/--export-lossy",
            file=sys.stderr,
        )
        return 2
    server = PrivateXServer(*_size(args.size or "1280x800"))
    try:
        use_display(server.start())
    except NoDisplayError as exc:
        print(f"shellscope: {why}, and {exc}", file=sys.stderr)
        return 2
    _PRIVATE_X.append(server)
    atexit.register(server.stop)  # also on an early return; stopping twice is harmless
    return None


def _log_uncaught() -> None:
    """Errors the window survives (a failing paint, a slot raising) go to stderr through the
    "shellscope" log; an exception Qt hands back to Python is logged the same way."""
    import logging

    logging.basicConfig(level=logging.WARNING, format="shellscope: %(levelname)s %(message)s")
    log = logging.getLogger("shellscope")

    def hook(kind: type[BaseException], error: BaseException, trace: object) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, error, trace)  # type: ignore[arg-type]
            return
        log.error("uncaught %s; the window carries on", kind.__name__, exc_info=error)

    sys.excepthook = hook


def _size(text: str) -> tuple[int, int]:
    w, h = (int(v) for v in text.lower().split("x"))
    if w < 0 or h < 0:
        raise ValueError("a negative size")
    return max(w, 320), max(h, 240)


MAX_SIZE = (3840, 2160)  # --size: a 4K window (786 MB to draw and grab here; 8K took 2.6 GB)


def flag_problem(args: argparse.Namespace) -> str | None:
    """The first flag whose value the inspector cannot hold (one line naming the flag), or
    an output (screenshot or export) that may not be written: checked before any work."""
    from codec.model.limits import distance_problem, rate_problem

    for flag, value in (("--precision", args.precision), ("--shell-distance", args.shell_distance)):
        if isinstance(value, float) and distance_problem(value):
            return f"{flag}: {distance_problem(value)}"
    if args.sample_rate is not None and rate_problem(args.sample_rate):
        return f"--sample-rate: {rate_problem(args.sample_rate)}"
    if args.time is not None and not math.isfinite(args.time):
        return f"--time: {args.time!r} is not a number of seconds"
    if args.magnify is not None and not 1.0 <= args.magnify <= 1000.0:
        return f"--magnify {args.magnify:g} is outside 1..1000"
    if args.size is not None:
        try:
            w, h = _size(args.size)
        except ValueError:
            return f"bad --size {args.size!r}, expected WxH"
        if w > MAX_SIZE[0] or h > MAX_SIZE[1]:
            return f"--size {w}x{h} is larger than {MAX_SIZE[0]}x{MAX_SIZE[1]}"
    if args.screenshot or args.screenshot_view or wants_headless(args):
        from app.model.headless import outputs_of_run

        return outputs_of_run(args, args.clip or str(_default_clip()))
    return None


def _default_clip() -> Path:
    return Path(__file__).resolve().parent.parent / "resources" / "cmu_09_02.acl.sjson"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # names from files are printed as data: no control character reaches the terminal
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = printable_stream(sys.stdout), printable_stream(sys.stderr)
    try:
        return _main(args)
    finally:
        sys.stdout, sys.stderr = streams


def _main(args: argparse.Namespace) -> int:
    shooting = bool(args.screenshot or args.screenshot_view)
    if args.acl_compressor:
        from codec.codecs import acl_compressor_path

        acl_compressor_path.configure(args.acl_compressor)  # this process and what it starts
    if args.acl_output and (wants_headless(args) or not args.clip):
        print(
            "shellscope: --acl-output needs CLIP, its raw clip, and shows in the window; "
            "its numbers without one: python -m codec stats CLIP --acl-output FILE.acl --json",
            file=sys.stderr,
        )
        return 2
    try:
        variants = variants_from(args)
    except ValueError as exc:
        print(f"shellscope: {exc}", file=sys.stderr)
        return 2
    problem = flag_problem(args)
    if problem:
        print(f"shellscope: {problem}", file=sys.stderr)
        return 2
    if wants_headless(args):
        code = run_headless(args)
        if code or not shooting:  # exports and a screenshot: the window follows the exports
            return code
    code = _need_display(args)
    if code is not None:
        return code
    _log_uncaught()
    if sys.platform.startswith("linux"):
        os.environ.setdefault("PYOPENGL_PLATFORM", "glx")
    from PySide6 import QtCore, QtWidgets

    # before the QApplication exists: every GL view shares pyqtgraph's compiled shaders
    QtCore.QCoreApplication.setAttribute(QtCore.Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    app.setOrganizationName("Shellscope")
    app.setApplicationName("Shellscope")
    from app.qt import gui_thread_gc

    gui_thread_gc.install()  # no thread but the GUI's collects cycles: see its docstring

    from app.main_window import DEFAULT_CLIP, Dialogs, MainWindow
    from app.scene import scene_view

    scene_view.KEEP_MSAA = shooting  # a saved picture keeps smooth edges even on software GL

    class CliDialogs(Dialogs):
        """Headless runs report to stderr instead of opening boxes nobody can close."""

        def error(self, parent: QtWidgets.QWidget, title: str, message: str) -> None:
            print(f"shellscope: {title}: {message}", file=sys.stderr)

        def choose_animation(self, parent: QtWidgets.QWidget, names: list[str]) -> str | None:
            print(
                f"shellscope: animations {names}; showing {names[0]!r} (choose with --animation)",
                file=sys.stderr,
            )
            return names[0]

    # a screenshot is reproducible: the default layout, and nothing remembered from it
    window = MainWindow(dialogs=CliDialogs() if shooting else None, remember_layout=not shooting)
    if args.size is not None or shooting or not window.layout_restored:
        window.resize(*_size(args.size or "1280x800"))
    # what start-up made (modules, classes, the window) lives as long as the process: out of
    # the collector's sight, so no collection walks it again (the first took 0.16 s a time)
    gc.freeze()
    doc = window.document
    from codec.cli.failures import CliError
    from codec.cli.flags import run_flags
    from codec.errors import ShellscopeError

    try:  # the clip's settings: codec.run_settings, with these flags on top
        flags = run_flags(args)
        if args.overrides:
            from codec.run_settings import read_tuning_layer

            read_tuning_layer(args.overrides, args.animation)
    except (CliError, ShellscopeError) as exc:
        print(f"shellscope: {exc}", file=sys.stderr)
        return 2
    if args.units:
        window.open_options["units"] = args.units
    if args.sample_rate:
        window.open_options["sample_rate"] = args.sample_rate
    if args.bvh_positions:
        window.set_bvh_positions(args.bvh_positions)  # nothing is open yet: only remembered

    try:
        display = {
            k: v
            for k, v in (
                ("up_axis", args.up_axis),
                ("camera", args.camera),
                ("magnify", args.magnify),
                ("shells", args.shells),
            )
            if v is not None
        }
        doc.update_display(**display)  # before opening: the clip is framed for them
    except ValueError as exc:
        print(f"shellscope: {exc}", file=sys.stderr)
        return 2
    pair = None
    if variants is not None:  # A's tuning goes in as the clip opens, B's once A is in
        from app.compare_run import PairRun

        pair = PairRun(window.controller, *variants)
        pair.start()
    path = Path(args.clip) if args.clip else DEFAULT_CLIP
    if not window.open_file(path, animation=args.animation, flags=flags, remember=not shooting):
        if shooting:  # an unreadable clip is bad input, as in the CLI and the exports
            return 2
        if args.clip:
            window.show()
            return app.exec()
    if args.acl_output and not window.open_acl_output(args.acl_output):
        if shooting:
            return 2
    if flags.shell_distance == "mesh" and doc.clip is not None and not doc.clip.meshes:
        print(
            f"shellscope: {path} has no skinned mesh: --shell-distance mesh is ignored",
            file=sys.stderr,
        )
    if flags.skin_strict and doc.clip is not None and not doc.clip.meshes:
        print(f"shellscope: {path} has no skinned mesh: --skin-strict is ignored", file=sys.stderr)
    try:
        if args.rounding:
            doc.set_rounding(args.rounding)
        if args.time is not None:
            doc.set_time(args.time)
        if args.select is not None:
            _select(window, args.select)
    except (KeyError, IndexError, ValueError) as exc:
        print(f"shellscope: {exc}", file=sys.stderr)
        return 2
    if args.view:
        window.viewport.set_view(args.view)
    if args.ortho:
        window.viewport.set_ortho(True)

    window.show()
    if shooting:
        shot = _screenshot_class()(window, args.screenshot, args.screenshot_view)
        if pair is not None:
            shot.ready = lambda: pair.done
            pair.finished.connect(shot.arm_later)
        shot.start()
    code = app.exec()
    if _PRIVATE_X:
        app.shutdown()  # Qt lets go of the display before its X server goes away
        for server in _PRIVATE_X:
            server.stop()  # type: ignore[attr-defined]
    return code


def _screenshot_class() -> type:
    from PySide6 import QtCore, QtWidgets

    from app.main_window import MainWindow

    class Screenshot(QtCore.QObject):
        """Waits for a result (or a failure), then two drawn frames, then grabs and quits."""

        def __init__(
            self, window: MainWindow, window_png: str | None, view_png: str | None
        ) -> None:
            super().__init__(window)
            self.window = window
            self.window_png = Path(window_png) if window_png else None
            self.view_png = Path(view_png) if view_png else None
            self.code = 0
            self._frames = 0
            self._armed = False
            self.ready: Callable[[], bool] = lambda: True  # e.g. an A/B pair compressed

        def arm_later(self) -> None:
            QtCore.QTimer.singleShot(0, self._arm)

        def start(self) -> None:
            c = self.window.controller
            c.result_ready.connect(self._arm)
            c.failed.connect(self._on_failed)
            QtCore.QTimer.singleShot(SCREENSHOT_TIMEOUT_MS, self._timeout)
            if not c.running:
                QtCore.QTimer.singleShot(0, self._arm)

        def _on_failed(self, message: str) -> None:
            print(f"shellscope: compression failed: {message}", file=sys.stderr)
            self.code = 1
            self._arm()

        def _timeout(self) -> None:
            print("shellscope: timed out waiting for the compression", file=sys.stderr)
            self.code = 1
            self._grab()

        def _arm(self) -> None:
            if self._armed or not (self.ready() or self.code):
                return
            self._armed = True
            vp = self.window.viewport
            vp.frame_drawn.connect(self._on_frame)
            vp.invalidate()

        def _on_frame(self) -> None:
            self._frames += 1
            if self._frames == 2:
                QtCore.QTimer.singleShot(50, self._grab)
            else:
                self.window.viewport.invalidate()

        def _save(self, image: object, path: Path) -> None:
            """PNG bytes written whole or not at all (codec.formats.atomic), never creating
            a folder: the path passed the outputs' check before any work."""
            from PySide6.QtCore import QBuffer, QByteArray, QIODevice

            from codec.formats.atomic import write_bytes

            data = QByteArray()
            buf = QBuffer(data)
            buf.open(QIODevice.OpenModeFlag.WriteOnly)
            try:
                if not image.save(buf, "PNG"):  # type: ignore[attr-defined]
                    raise OSError("Qt could not encode the picture as PNG")
                buf.close()
                write_bytes(path, bytes(data.data()))
            except OSError as e:
                print(f"shellscope: {path}: cannot write: {e.strerror or e}", file=sys.stderr)
                self.code = 1
            else:
                print(f"shellscope: wrote {path}", file=sys.stderr)

        def _grab(self) -> None:
            vp = self.window.viewport
            if self._armed:
                vp.frame_drawn.disconnect(self._on_frame)
            if self.window_png is not None:
                self._save(grab_window(self.window), self.window_png)
            if self.view_png is not None:
                self._save(vp.scene.grabFramebuffer(), self.view_png)
            self.window.close()
            QtWidgets.QApplication.instance().exit(self.code)  # type: ignore[union-attr]

    return Screenshot


def grab_window(window: object) -> object:
    """The whole window as a QImage, the 3D view drawn in (app.scene.screenshot.grab_image:
    QWidget.grab leaves the view's own GL window out)."""
    from app.scene.screenshot import grab_image

    return grab_image(window)  # type: ignore[arg-type]


if __name__ == "__main__":
    sys.exit(main())
