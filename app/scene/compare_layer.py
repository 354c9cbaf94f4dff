"""The 3D view while comparing: raw, A and B skeletons in three colour-blind-safe colours.

A layer over `Viewport3D` (its `after_rebuild` and `overlays` hooks), so the view itself
stays as it is: while a comparison is active the error-coloured lossy skeleton gives way to
A and B in flat colours from the Okabe-Ito palette (orange A, bluish-green B; raw keeps its
translucent blue), both drawn through the same error magnifier as the lossy skeleton, at
the document's time and under each side's rounding; a legend names them and says which are hidden.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6 import QtCore, QtGui

from app.model import colors
from app.model.comparison import settings_label
from app.model.skeleton_mesh import magnify
from app.scene.gl_items import ON_TOP, SOLID, SoupMesh, points, set_points

if TYPE_CHECKING:
    from app.scene.viewport3d import Viewport3D

# Okabe & Ito's palette, told apart under the common colour-vision deficiencies
SIDE_COLOURS = {"A": (0.90, 0.62, 0.00, 1.0), "B": (0.00, 0.62, 0.45, 1.0)}  # orange, green
RAW_COLOUR = (*colors.RAW[:3], 1.0)  # the raw ghost's blue


class CompareLayer:
    """Draws A and B into a Viewport3D's scene. Exposes `positions[side]` (J, 3), display
    space as drawn (magnified), for tests and tools."""

    def __init__(self, viewport: Viewport3D) -> None:
        self.viewport = viewport
        self.bones = {"A": SoupMesh(SOLID, 1), "B": SoupMesh(SOLID, 2)}
        self.joints = {"A": points(ON_TOP, 23), "B": points(ON_TOP, 24)}
        self.positions: dict[str, np.ndarray | None] = {"A": None, "B": None}
        for side in ("A", "B"):
            viewport.scene.addItem(self.bones[side])
            viewport.scene.addItem(self.joints[side])
            self.bones[side].setVisible(False)
            self.joints[side].setVisible(False)
        viewport.after_rebuild.append(self.update)
        viewport.overlays.append(self.paint_legend)
        viewport.document.comparison_changed.connect(viewport.invalidate)

    def _hide(self) -> None:
        for side in ("A", "B"):
            self.bones[side].setVisible(False)
            self.joints[side].setVisible(False)
            self.positions[side] = None

    def update(self) -> None:
        """After the view rebuilt raw and lossy: replace the lossy skeleton by A and B."""
        vp = self.viewport
        doc = vp.document
        c = doc.comparison
        raw = vp.raw_matrices
        if not c.active or raw is None or vp.lossy_mesh is None:
            self._hide()
            return
        vp.lossy_bones.setVisible(False)
        vp.lossy_joints.setVisible(False)
        view_rot = vp.scene.view_rotation()
        mesh = vp.lossy_mesh
        k = doc.display.magnify
        for side, shown_on in (("A", c.show_a), ("B", c.show_b)):
            got = doc.side_shown(side)
            if got is None:
                self.bones[side].setVisible(False)
                self.joints[side].setVisible(False)
                self.positions[side] = None
                continue
            mats = vp.rotation @ got[0]
            if k != 1.0:
                mats = magnify(raw, mats, k)
            self.positions[side] = mats[:, :, 3]
            rgba = np.broadcast_to(np.array(SIDE_COLOURS[side]), (mesh.num_bones, 4))
            tris, normals = mesh.posed(mats)
            self.bones[side].set_soup(tris, mesh.colors(normals, rgba, view_rot))
            n = len(mats)
            set_points(
                self.joints[side],
                mats[:, :, 3],
                np.broadcast_to(np.array(SIDE_COLOURS[side]), (n, 4)),
                6.0 if side == "B" else 8.0,
            )
            self.bones[side].setVisible(shown_on)
            self.joints[side].setVisible(shown_on)

    def legend_rows(self) -> list[tuple[tuple[float, ...], str, bool]]:
        """(colour, text, shown) per skeleton of the legend; none while not comparing."""
        doc = self.viewport.document
        c = doc.comparison
        if not c.active or c.a is None:
            return []
        b = doc.side_result("B")
        return [
            (RAW_COLOUR, "raw", doc.display.show_raw),
            (SIDE_COLOURS["A"], f"A  {settings_label(c.a.result)}", c.show_a),
            (
                SIDE_COLOURS["B"],
                f"B  {settings_label(b)}" if b is not None else "B  compressing\u2026",
                c.show_b,
            ),
        ]

    def legend_rect(self, fm: QtGui.QFontMetrics | None = None) -> QtCore.QRectF:
        """Where the legend's box goes: bottom right, clear of the axis gizmo (bottom left,
        where the legend used to cover it); `fm`: the painter's (the application font's)."""
        rows = self.legend_rows()
        if not rows:
            return QtCore.QRectF()
        fm = fm or QtGui.QFontMetrics(QtGui.QGuiApplication.font())
        h = fm.height() + 4
        width = max(fm.horizontalAdvance(text) for _, text, _ in rows) + 34
        scene = self.viewport.scene
        height = h * len(rows) + 6
        return QtCore.QRectF(scene.width() - 8 - width, scene.height() - 8 - height, width, height)

    def paint_legend(self, p: QtGui.QPainter) -> None:
        """A swatch and a line per skeleton (struck out when hidden), in `legend_rect`."""
        rows = self.legend_rows()
        if not rows:
            return
        fm = p.fontMetrics()
        h = fm.height() + 4
        box = self.legend_rect(fm)
        x0, y = box.left() + 4, box.top() + 4
        p.fillRect(box, QtGui.QColor(0, 0, 0, 120))
        for rgba, text, on in rows:
            colour = QtGui.QColor.fromRgbF(*rgba[:3], 1.0)
            p.fillRect(QtCore.QRectF(x0, y + 3, 18, h - 8), colour)
            font = p.font()
            font.setStrikeOut(not on)
            p.setFont(font)
            p.setPen(QtGui.QColor(235, 238, 242) if on else QtGui.QColor(150, 150, 150))
            p.drawText(QtCore.QPointF(x0 + 26, y + fm.ascent() + 1), text)
            y += h
        font = p.font()
        font.setStrikeOut(False)
        p.setFont(font)
