"""A codec chooser's entries: a codec that cannot run here (acl-2.1 without ACL's
acl_compressor) stays listed, greyed, its tooltip saying why."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from app.model.comparison import codec_unavailable
from app.model.document import Document


def mark_unavailable(combo: QtWidgets.QComboBox, document: Document) -> None:
    """Grey out the entries of `combo` whose codec cannot run, with the reason as tooltip."""
    model = combo.model()
    if not isinstance(model, QtGui.QStandardItemModel):
        return
    for i in range(combo.count()):
        why = codec_unavailable(combo.itemText(i), document.acl_output)
        item = model.item(i)
        if item is None:
            continue
        item.setEnabled(why is None)
        tip = f"unavailable: {why}" if why else None
        combo.setItemData(i, tip, QtCore.Qt.ItemDataRole.ToolTipRole)
