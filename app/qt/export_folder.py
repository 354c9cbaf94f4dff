"""Where the export dialogs start: the folder of the last export, remembered per user.

Exports go to one place (a build folder, a review folder), not beside each clip: every save
dialog (Stats' exports, the skin report's CSV, File > Save compressed) starts in the folder
the last export went to, kept in the user's QSettings across sessions; before the first
export (or when that folder is gone) the clip's own folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings

KEY = "exports/folder"


def export_folder(clip_path: str | os.PathLike[str] | None) -> Path:
    """The folder a save dialog starts in."""
    saved = QSettings().value(KEY, "")
    if saved and Path(str(saved)).is_dir():
        return Path(str(saved))
    return Path(clip_path).parent if clip_path is not None else Path.cwd()


def remember_export(path: str | os.PathLike[str]) -> None:
    """A file was exported to `path`: its folder is where the next dialog starts."""
    QSettings().setValue(KEY, str(Path(path).resolve().parent))
