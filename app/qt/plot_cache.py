"""Plot items drawn once into a pixmap, shared by the plots of several panels."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtWidgets import QGraphicsItem


def cache_drawings(items: Iterable[QGraphicsItem]) -> None:
    """Draw each of a plot's `items` once into a pixmap and copy it until the item changes.

    pyqtgraph paints every item in Python, each time any part of the plot under it is
    repainted: an axis (its ticks, labels and the grid across the plot) played back from a
    QPicture cost 1-1.5 ms, each curve and line a call into Python that waits for the
    interpreter while a compression runs beside it. Cached, a moved budget line or a new
    curve repaints that item alone, the others are copied (a line moved keeps its pixmap)."""
    for item in items:
        item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
