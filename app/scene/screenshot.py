"""Pictures of widgets with the 3D view in them, for `app.model.exports.export_screenshot`, the
`--screenshot` flag and the docs' pictures.

The 3D view is a GL window of its own (app.scene.scene_view), and `QWidget.grab()` leaves a
native child window out: `grab_image` draws the scene where its container is.
"""

from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QRect
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QWidget


def grab_image(widget: QWidget) -> QImage:
    """`widget` as drawn now, with every 3D view shown inside it (or it itself) drawn in."""
    from app.scene.viewport3d import Viewport3D  # the views import this module's callers

    image = widget.grab().toImage()
    hosts = widget.findChildren(Viewport3D)
    if isinstance(widget, Viewport3D):
        hosts.append(widget)
    painter: QPainter | None = None
    for host in hosts:
        box = host.scene_box
        if not box.isVisible() or box.width() <= 0 or box.height() <= 0:
            continue
        scene = host.scene.render_image()
        if scene.isNull():
            continue
        if painter is None:
            painter = QPainter(image)
        top_left = box.mapTo(widget, QPoint(0, 0)) if box is not widget else QPoint(0, 0)
        painter.drawImage(QRect(top_left, box.size()), scene)
    if painter is not None:
        painter.end()
    return image


def grab_png(widget: QWidget) -> bytes:
    """PNG bytes of `grab_image(widget)`."""
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    if not grab_image(widget).save(buf, "PNG"):
        raise RuntimeError("Qt could not encode the screenshot as PNG")
    buf.close()
    return bytes(data.data())
