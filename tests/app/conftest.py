"""App test set-up: shared GL contexts before any QApplication, isolated QSettings, and every
Qt warning is a test failure (pytest-qt's qt_log_level_fail)."""

from __future__ import annotations

import os
import tempfile

import pytest
from PySide6 import QtCore

# pyqtgraph compiles its shaders once per process: without shared contexts every GL view
# after the first one draws nothing. This must happen before the QApplication exists.
QtCore.QCoreApplication.setAttribute(QtCore.Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
QtCore.QCoreApplication.setOrganizationName("ShellscopeTests")
QtCore.QCoreApplication.setApplicationName("ShellscopeTests")
_SETTINGS_DIR = tempfile.mkdtemp(prefix="shellscope-qsettings-")
QtCore.QSettings.setDefaultFormat(QtCore.QSettings.Format.IniFormat)
QtCore.QSettings.setPath(
    QtCore.QSettings.Format.IniFormat, QtCore.QSettings.Scope.UserScope, _SETTINGS_DIR
)
os.environ.setdefault("PYOPENGL_PLATFORM", "glx")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
