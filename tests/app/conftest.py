"""App test set-up: shared GL contexts before any QApplication, QSettings of each test in its
own tmp path, and every Qt warning is a test failure (pytest-qt's qt_log_level_fail)."""

from __future__ import annotations

import os
import shutil
import weakref
from pathlib import Path

import pytest
from PySide6 import QtCore

# pyqtgraph compiles its shaders once per process: without shared contexts every GL view
# after the first one draws nothing. This must happen before the QApplication exists.
QtCore.QCoreApplication.setAttribute(QtCore.Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
QtCore.QCoreApplication.setOrganizationName("ShellscopeTests")
QtCore.QCoreApplication.setApplicationName("ShellscopeTests")
QtCore.QSettings.setDefaultFormat(QtCore.QSettings.Format.IniFormat)
os.environ.setdefault("PYOPENGL_PLATFORM", "glx")


@pytest.fixture(autouse=True)
def isolated_qsettings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every test starts with empty settings (recent files, window layout) of its own."""
    folder = tmp_path_factory.mktemp("qsettings")
    for scope in (QtCore.QSettings.Scope.UserScope, QtCore.QSettings.Scope.SystemScope):
        QtCore.QSettings.setPath(QtCore.QSettings.Format.IniFormat, scope, str(folder))
    return folder


WARM_UP_END_S = 120.0  # the first warm-up in a process loads every kernel (a loaded machine)


@pytest.fixture(autouse=True)
def controllers_stopped(monkeypatch: pytest.MonkeyPatch):
    """Every Controller a test made (a window's too) is shut down at its end, and its
    threads joined: the run in flight and the kernels' warm-up end here, not under the next
    test (tests/conftest.py's no_thread_left_running fails a test that leaves one)."""
    from app.controller import Controller

    made: list[tuple[weakref.ref, object]] = []
    init = Controller.__init__

    def recorded(self: Controller, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)
        made.append((weakref.ref(self), self._worker))  # weakly: tests drop controllers

    monkeypatch.setattr(Controller, "__init__", recorded)
    yield
    for ref, worker in made:
        ctl = ref()
        if ctl is not None and not ctl._closed.is_set():
            try:
                ctl.shutdown(timeout=5.0)
            except RuntimeError:  # its Qt side is gone; its threads are still ours
                pass
        # also for a controller dropped (its warm-up held it: that ended) or half shut down
        idle = worker.stop()  # type: ignore[attr-defined]
        left = [] if ctl is None else ctl.join_threads(WARM_UP_END_S)
        if idle is not None:
            idle.join(WARM_UP_END_S)
        left += [idle] if idle is not None and idle.is_alive() else []
        assert not left, f"a controller's threads did not end: {[t.name for t in left]}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))


# --- shared fixtures for the inspector tests ------------------------------------------------
DATA = Path(__file__).resolve().parents[1] / "data"
ACL_CLIP = DATA / "acl" / "cmu_09_02.acl.sjson"
RESULT_TIMEOUT_MS = 60_000
FRAME_TIMEOUT_MS = 30_000  # a frame comes; a loaded machine's llvmpipe takes its time


class FakeDialogs:
    """Canned answers for MainWindow's dialogs; records what was asked."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.animation: str | None = None
        self.animation_choices: list[list[str]] = []
        self.errors: list[tuple[str, str]] = []
        self.saves: list[str] = []  # the names a save dialog suggested
        self.discards: list[str] = []  # what quitting asked before dropping an edit
        self.discard_answer = True

    def open_path(self, parent: object, directory: str) -> str | None:
        return self.paths.pop(0) if self.paths else None

    def open_acl_path(self, parent: object, directory: str) -> str | None:
        return self.paths.pop(0) if self.paths else None

    def acl_compressor_path(self, parent: object, current: str) -> str | None:
        return self.paths.pop(0) if self.paths else None

    def save_path(self, parent: object, start: str, kinds: str) -> str | None:
        self.saves.append(start)
        return self.paths.pop(0) if self.paths else None

    def discard(self, parent: object, message: str) -> bool:
        self.discards.append(message)
        return self.discard_answer

    def choose_animation(self, parent: object, names: list[str]) -> str | None:
        self.animation_choices.append(list(names))
        return self.animation

    def error(self, parent: object, title: str, message: str) -> None:
        self.errors.append((title, message))


@pytest.fixture
def dialogs() -> FakeDialogs:
    return FakeDialogs()


@pytest.fixture
def window(qtbot, dialogs: FakeDialogs):
    from app.main_window import MainWindow

    w = MainWindow(dialogs=dialogs)  # type: ignore[arg-type]
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.close()


def open_through_ui(qtbot, window, dialogs: FakeDialogs, path: Path, **kwargs: object) -> None:
    """File > Open with the file dialog answering `path`; waits for the compression result."""
    dialogs.paths.append(str(path))
    with qtbot.waitSignal(window.controller.result_ready, timeout=RESULT_TIMEOUT_MS):
        assert window.open_file(**kwargs)


def draw(qtbot, viewport) -> None:
    """Bring the 3D view up to date with the document and wait for the frame on screen.

    A change can arrive after that frame and before the wait returns (a timer due in the same
    turn, such as a compare result): it scheduled a frame of its own, which is awaited
    without asking for one, so a change made where no frame follows (inside a paint) still
    fails here."""
    with qtbot.waitSignal(viewport.frame_drawn, timeout=FRAME_TIMEOUT_MS):
        viewport.invalidate()
    for _ in range(3):
        if not viewport._dirty:
            break
        with qtbot.waitSignal(viewport.frame_drawn, timeout=FRAME_TIMEOUT_MS):
            pass
    assert not viewport._dirty


class _LayoutRequests(QtCore.QObject):
    """Counts the layout requests delivered anywhere in the application."""

    count = 0

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.LayoutRequest:
            self.count += 1
        return False


def settle(qtbot, viewport=None, timeout: int = 10_000) -> None:
    """Wait until what was asked of the layout is done (a resize, View > Reset layout, a clip
    opened, a dock raised, a text changed): a turn of the event loop that delivers every
    event posted so far carries out no layout request any more, and the 3D view's GL window
    (when given its `viewport`) has its container's size. Tests that measure the layout
    measure only then: a fixed wait was too short on a loaded machine."""
    from PySide6.QtWidgets import QApplication

    app, layouts = QApplication.instance(), _LayoutRequests()

    def done() -> bool:
        layouts.count = 0
        QApplication.processEvents()
        QApplication.sendPostedEvents(None, QtCore.QEvent.Type.LayoutRequest)
        sized = viewport is None or viewport.scene.size() == viewport.scene_box.size()
        return layouts.count == 0 and sized

    app.installEventFilter(layouts)
    try:
        qtbot.waitUntil(done, timeout=timeout)
    finally:
        app.removeEventFilter(layouts)


@pytest.fixture
def acl_copy(tmp_path) -> Path:
    """The ACL test clip copied alone into the test's folder: the window saves a tuning
    sidecar beside the clip it edits, and tests/data must stay as the repository has it
    (two test processes read it at once)."""
    path = tmp_path / ACL_CLIP.name
    shutil.copy(ACL_CLIP, path)
    return path


@pytest.fixture
def loaded(qtbot, window, dialogs: FakeDialogs, acl_copy: Path):
    """The window with (a copy of) the ACL test clip open and compressed."""
    open_through_ui(qtbot, window, dialogs, acl_copy)
    draw(qtbot, window.viewport)
    return window


@pytest.fixture
def ui(qtbot, dialogs: FakeDialogs, acl_copy: Path):
    """The helpers above bound to this test's qtbot and dialogs."""
    from types import SimpleNamespace

    return SimpleNamespace(
        open=lambda window, path, **kw: open_through_ui(qtbot, window, dialogs, path, **kw),
        draw=lambda viewport: draw(qtbot, viewport),
        settle=lambda window: settle(qtbot, window.viewport),
        data=DATA,
        acl_clip=acl_copy,
    )
