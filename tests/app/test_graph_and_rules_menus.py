"""The window's menus reach the graph editor (View > Curves) and the rules (Rules)."""

from __future__ import annotations

from PySide6 import QtWidgets


def _menu(window, *path: str) -> QtWidgets.QMenu:
    menu: QtWidgets.QWidget = window.menuBar()
    for title in path:
        act = next(a for a in menu.actions() if a.text().replace("&", "") == title)
        menu = act.menu()
    return menu


def _act(menu: QtWidgets.QMenu, starts: str):
    return next(a for a in menu.actions() if a.text().replace("&", "").startswith(starts))


def test_curves_and_rules_from_the_menus(loaded) -> None:
    doc = loaded.document
    doc.set_selection(doc.clip.skeleton.index("rFoot") if "rFoot" in doc.clip.skeleton.names else 3)
    curves = loaded.panels["CurvesPanel"]
    view_curves = _menu(loaded, "View", "Curves")
    _act(view_curves, "Lossy").trigger()
    assert curves.error_mode and any(k.endswith(" B-raw") for k in curves.series)
    _act(view_curves, "Pin").trigger()
    assert curves.pinned == [doc.selection]
    rules = _menu(loaded, "Rules")
    joints = loaded.panels["JointsPanel"]
    presets = _act(rules, "Presets").menu()
    presets.aboutToShow.emit()
    _act(presets, "Fingers").trigger()
    assert doc.overrides and doc.overrides[-1].pattern.startswith("*Thumb*|*Index*")
    text = loaded.show_joint_source()
    assert text.startswith(doc.clip.skeleton.names[doc.selection] + ":")
    assert "(global)" in text or "rule 1" in text
    assert joints.source_label.text().replace("; ", "\n").replace(": ", ":\n", 1) == text
