"""ACL 2.1 in the window: its own output measured against the raw clip (File > Open ACL
output, --acl-output), what the panels show of it, and acl-2.1 in the codec choosers when
no acl_compressor is given."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from codec.codecs import acl_compressor_path
from tests.app.conftest import DATA, RESULT_TIMEOUT_MS

ACL = DATA / "acl21" / "cmu_09_02.acl"


def _menu_texts(window, title: str) -> list[str]:
    menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions()}
    return [a.text().replace("&", "") for a in menus[title].actions()]


def test_acls_output_is_shown_against_the_raw_clip(qtbot, loaded, dialogs) -> None:
    assert "Open ACL output\u2026" in _menu_texts(loaded, "File")
    doc = loaded.document
    dialogs.paths.append(str(ACL))
    with qtbot.waitSignal(loaded.controller.result_ready, timeout=RESULT_TIMEOUT_MS):
        assert loaded.open_acl_output()  # through its file dialog
    r = doc.result
    assert r is not None and r.codec_name == "acl-2.1" and doc.codec == "acl-2.1"
    assert doc.acl_output == str(ACL) and "ACL output cmu_09_02.acl" in loaded.windowTitle()
    # ACL's own headers: 17 animated rotations and 1 animated translation in one segment
    costs = r.costs
    assert costs is not None and costs.bit_rates.shape == (1, 44, 3)
    assert int(np.sum(costs.kinds[:, 0] == 2)) == 17 and int(np.sum(costs.kinds[:, 1] == 2)) == 1
    assert r.stats["acl_measure"]["max_error"] == pytest.approx(0.0106768, abs=1e-7)
    loaded.docks["BitRatePanel"].raise_()  # a panel behind a tab draws once shown
    QApplication.processEvents()
    bits = loaded.panels["BitRatePanel"]
    assert bits.bits is not None and np.array_equal(bits.bits, costs.bits_per_component)
    # the settings panel's codec chooser offers acl-2.1 now (the file is the codec)
    box = loaded.panels["SettingsPanel"].codec
    i = box.findText("acl-2.1")
    assert box.currentText() == "acl-2.1" and box.model().item(i).isEnabled()
    # tuning changes what is measured, not ACL's bytes
    with qtbot.waitSignal(loaded.controller.result_ready, timeout=RESULT_TIMEOUT_MS):
        doc.update_settings(shell_distance=6.0)
    assert np.array_equal(doc.result.decoder.grid(), r.decoder.grid())  # the same poses
    assert doc.result.stats["max_error"] > r.stats["max_error"]  # on farther shells


def test_a_file_that_does_not_fit_is_refused_and_the_result_stays(
    qtbot, loaded, dialogs, tmp_path
) -> None:
    doc = loaded.document
    shown = doc.result
    other = DATA / "acl21" / "cmu_81_18_looping.acl"  # another take, its root named 81_18
    assert not loaded.open_acl_output(other)
    assert (
        dialogs.errors and "ACL track '81_18' is not a joint of the clip" in (dialogs.errors[-1][1])
    )
    broken = tmp_path / "broken.acl"
    broken.write_bytes(ACL.read_bytes()[:500])
    assert not loaded.open_acl_output(broken)
    assert "broken.acl" in dialogs.errors[-1][1]
    assert doc.result is shown and doc.codec == "acl-style" and doc.acl_output is None


def test_opening_another_clip_drops_acls_output(qtbot, loaded, ui) -> None:
    with qtbot.waitSignal(loaded.controller.result_ready, timeout=RESULT_TIMEOUT_MS):
        assert loaded.open_acl_output(ACL)
    ui.open(loaded, DATA / "bvh" / "cmu_02_02_walk_daz.bvh")
    doc = loaded.document
    assert doc.acl_output is None and doc.codec == "acl-style"
    assert doc.result.codec_name == "acl-style" and "ACL output" not in loaded.windowTitle()


def test_acl_2_1_is_greyed_with_the_reason_until_a_compressor_is_given(
    qtbot, loaded, dialogs, monkeypatch, tmp_path
) -> None:
    monkeypatch.delenv(acl_compressor_path.ENV, raising=False)
    panel = loaded.panels["SettingsPanel"]
    panel.refresh_codecs()
    box = panel.codec
    i = box.findText("acl-2.1")
    assert i >= 0 and not box.model().item(i).isEnabled()
    assert "no acl_compressor given" in box.itemData(i, 3)  # ToolTipRole
    assert box.model().item(box.findText("acl-style")).isEnabled()
    assert "ACL 2.1 compressor\u2026" in _menu_texts(loaded, "Compression")
    tool = tmp_path / "acl_compressor"
    tool.write_text(f"#!{sys.executable}\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    dialogs.paths.append(str(tool))
    loaded.choose_acl_compressor()
    assert os.environ[acl_compressor_path.ENV] == str(tool)
    assert box.model().item(i).isEnabled() and not box.itemData(i, 3)
    assert loaded.qsettings.value("acl/compressor") == str(tool)
    monkeypatch.delenv(acl_compressor_path.ENV)


def test_the_command_line_opens_acls_output(tmp_path: Path) -> None:
    import subprocess

    shot = tmp_path / "acl.png"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            str(DATA / "acl" / "cmu_09_02.acl.sjson"),
            "--acl-output",
            str(ACL),
            "--screenshot",
            str(shot),
            "--size",
            "900x600",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "QT_QPA_PLATFORM": "xcb"},
    )
    assert done.returncode == 0, done.stderr
    assert shot.stat().st_size > 10_000
    done = subprocess.run(
        [sys.executable, "-m", "app", "--acl-output", str(ACL), "--screenshot", str(shot)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "--acl-output needs CLIP" in done.stderr
