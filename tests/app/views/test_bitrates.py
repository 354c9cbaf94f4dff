"""Bit-rate heat map: draws the result, tells what a cell means, and clicks drive the document."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from app.views.bitrates import BitRatePanel
from tests.app.panel_helpers import Recompressions, make_document, make_result


def test_a_new_result_updates_the_map(qtbot) -> None:
    doc = make_document(with_result=False)
    panel = BitRatePanel(doc)
    qtbot.addWidget(panel)
    assert panel.bits.shape == (0, 0, 3)
    doc.set_result(make_result(doc.compression_input()))
    assert panel.bits.shape == (3, 5, 3)
    before = panel.joint_bits(2)
    doc.set_result(make_result(doc.compression_input(), bits_shift=2))
    assert panel.joint_bits(2) == before + 2 * 3  # rotation, 3 segments
    assert "joints" in panel.summary.text()


def test_a_codec_without_bit_rates_says_so(qtbot) -> None:
    doc = make_document(with_result=False)
    panel = BitRatePanel(doc)
    qtbot.addWidget(panel)
    result = make_result(doc.compression_input())
    result.codec_name, result.costs = "keyreduce", None
    doc.set_result(result)
    assert panel.bits.shape == (0, 0, 3)
    assert panel.summary.text() == "keyreduce is not a bit-rate codec: it has no bit rates to show."
    panel.resize(500, 300)
    panel.canvas.grab()  # paints the same sentence instead of the map, without failing
    doc.set_result(make_result(doc.compression_input()))
    assert panel.bits.shape == (3, 5, 3) and "joints" in panel.summary.text()


def test_tooltips_name_bits_bytes_samples_and_error(qtbot) -> None:
    doc = make_document()
    panel = BitRatePanel(doc)
    qtbot.addWidget(panel)
    c = panel.canvas
    text = c.tooltip_text(1, 2, 0)
    assert "LeftHand" in text and "12 bits per component" in text
    assert ", 54 bytes" in text  # 12 bits * 3 components * 12 samples / 8
    assert "samples 16–27" in text and f"{doc.result.error[16:28, 2].max():.5g}" in text
    assert "default" in c.tooltip_text(0, 2, 2) and "constant:" in c.tooltip_text(0, 4, 0)
    assert "constant in this segment" in c.tooltip_text(2, 0, 0)


def test_clicking_a_cell_selects_the_joint_and_jumps_to_the_segment(qtbot) -> None:
    doc = make_document()
    counter = Recompressions(doc)
    panel = BitRatePanel(doc)
    qtbot.addWidget(panel)
    panel.resize(600, 300)
    panel.show()
    qtbot.waitExposed(panel)
    c = panel.canvas
    rect = c.cell_rect(2, 3, 1)  # RightHand, translation, segment 2
    assert c.cell_at(rect.center()) == (2, 3, 1)
    qtbot.mouseClick(c, Qt.MouseButton.LeftButton, pos=rect.center())
    assert doc.selection == 3 and doc.time == 28 / 30
    qtbot.mouseClick(
        c, Qt.MouseButton.LeftButton, pos=QPoint(10, c.cell_rect(0, 1, 0).center().y())
    )
    assert doc.selection == 1 and doc.time == 28 / 30  # the name selects only
    assert counter.count == 0  # looking never recompresses
