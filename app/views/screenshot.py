"""PNG bytes of a widget, for `app.exports.export_screenshot` and the docs' panel pictures."""

from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtWidgets import QWidget


def grab_png(widget: QWidget) -> bytes:
    """The widget as drawn now (GL children included, Qt composes them into the grab)."""
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    if not widget.grab().save(buf, "PNG"):
        raise RuntimeError("Qt could not encode the screenshot as PNG")
    buf.close()
    return bytes(data.data())
