"""Stats panel: shows every stat of the result, links jump, exports write files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from app.model.error_scale import format_cm, round_up
from app.views.stats import StatsPanel
from tests.app.panel_helpers import Recompressions, attach, make_document, make_result


def test_shows_every_stat_and_the_histogram(qtbot) -> None:
    doc = make_document(with_result=False)
    panel = StatsPanel(doc)
    qtbot.addWidget(panel)
    assert panel.values["compressed_size"].text() == "–"
    assert not panel.export_buttons["stats"].isEnabled()
    doc.set_result(make_result(doc.compression_input()))
    s = doc.result.stats
    v = {k: label.text() for k, label in panel.values.items()}
    assert v["raw_size"] == "7.8 KiB (8,000 B)" and v["compressed_size"] == "1000 B"
    assert v["compression_ratio"] == "8.00 : 1"
    assert v["max_error"] == format_cm(s["max_error"], digits=5) == "30e\u22123 cm"
    assert "LeftHand" in v["worst_track"] and "1.0333 s" in v["worst_time"]
    assert v["num_segments"] == "3" and v["compression_time"] == "12.3 ms"
    assert v["precision_met"].endswith("no</span> (at samples)")
    between = panel.values["max_error_between_samples"].toolTip()
    assert "not held to the budget, which is checked at the samples" in between
    assert panel.track_counts[("rotation", "animated")].text() == "4"
    assert panel.track_counts[("scale", "default")].text() == "5"
    assert panel.histogram_data == {int(k): c for k, c in s["bit_rate_histogram"].items()}
    assert "no previous result" in panel.change.text()
    doc.set_result(make_result(doc.compression_input(), bits_shift=-1))
    assert "−40 B" in panel.change.text() or "-40 B" in panel.change.text()


def test_worst_links_select_and_jump(qtbot) -> None:
    doc = make_document()
    counter = Recompressions(doc)
    panel = StatsPanel(doc)
    qtbot.addWidget(panel)
    panel.values["worst_track"].linkActivated.emit("joint:2")
    assert doc.selection == 2
    doc.set_selection(None)
    panel.values["worst_time"].linkActivated.emit(f"worst:{31 / 30!r}")
    assert doc.selection == 2 and doc.time == 31 / 30
    between = panel.values["worst_time_between_samples"]
    t = doc.result.stats["worst_time_between_samples"]
    assert f"{t:.4f} s" in between.text() and "time:" in between.text()
    between.linkActivated.emit("time:0.5")
    assert doc.time == 0.5
    assert counter.count == 0


def test_export_buttons_write_files_or_say_why_not(qtbot, tmp_path: Path) -> None:
    doc = make_document()
    panel = StatsPanel(doc)
    qtbot.addWidget(panel)
    asked = []
    panel.export_requested.connect(lambda *a: asked.append(a))
    assert panel.export_to("stats", tmp_path / "s.json") is None  # a view writes nothing itself
    assert asked == [("stats", str(tmp_path / "s.json"), None)] and not list(tmp_path.iterdir())
    attach(doc, panel)
    out = panel.export_to("stats", tmp_path / "s.json")
    assert json.loads(out.read_text())["compressed_size"] == 1000
    assert panel.export_to("csv", tmp_path / "j.csv").read_text().startswith("joint,name")
    panel.show()
    qtbot.waitExposed(panel)
    png = panel.export_to("screenshot", tmp_path / "shot.png")
    assert png.read_bytes().startswith(b"\x89PNG")
    assert panel.export_to("stats", tmp_path / "no" / "s.json") is None
    assert "Export failed" in panel.export_error.text()
    # the next dialog starts where the last export went, not beside the clip
    out_dir = tmp_path / "exports"
    out_dir.mkdir()
    assert panel.export_to("csv", out_dir / "j.csv") is not None
    assert panel.suggestion("stats")[0] == out_dir.resolve() / "clip.stats.json"
    # a "Wrote ..." line that wraps does not move the buttons
    panel.resize(300, 600)
    button = panel.export_buttons["stats"]
    qtbot.waitUntil(lambda: button.isVisible())
    panel.show_export("csv", "j.csv", "")
    QApplication.processEvents()
    before = button.mapTo(panel, button.rect().topLeft())
    deep = Path(out_dir, *(f"a_long_folder_name_{i}" for i in range(6)), "j.csv")
    panel.show_export("csv", str(deep), "")
    QApplication.processEvents()
    assert panel.export_error.height() > 30  # it wrapped, within the panel's width
    assert panel.export_error.width() <= panel.width()
    assert button.mapTo(panel, button.rect().topLeft()) == before


def test_stats_panel_equals_the_codec_command_line_on_cmu_13_07(qtbot) -> None:
    import codec
    from app.controller import Controller
    from app.model.document import Document
    from tests.codec.helpers import data_clip

    clip_path = data_clip("cmu_13_07.acl.sjson")

    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "codec",
            "compress",
            str(clip_path),
            "--json",
            "-",
            "--precision",
            "0.01",
            "--shell-distance",
            "3",
            "--level",
            "automatic",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    want = json.loads(cli.stdout)
    doc = Document()
    controller = Controller(doc, debounce_ms=20)
    panel = StatsPanel(doc)
    qtbot.addWidget(panel)
    with qtbot.waitSignal(controller.result_ready, timeout=60_000):
        controller.open_clip(codec.load_clip(clip_path), clip_path)
    got = doc.result.stats
    assert got["compressed_size"] == want["compressed_size"]
    assert got["max_error"] == want["max_error"]
    assert f"{want['compressed_size']:,} B" in panel.values["compressed_size"].text()
    assert panel.values["max_error"].text() == format_cm(want["max_error"], digits=5)
    assert float(panel.values["max_error"].text().split()[0].replace("\u2212", "-")) == (
        pytest.approx(want["max_error"], rel=1e-4)
    )


def test_the_histogram_fits_each_new_results_bit_rates(qtbot) -> None:
    """The histogram's axes are set only when a result's ranges differ from the last ones,
    and then fit it: every bar inside the view."""
    doc = make_document(with_result=False)
    panel = StatsPanel(doc)
    qtbot.addWidget(panel)
    for shift in (0, 0, 6, -2):
        doc.set_result(make_result(doc.compression_input(), bits_shift=shift))
        data = panel.histogram_data
        (x0, x1), (y0, y1) = panel.histogram.getViewBox().viewRange()
        assert x0 <= min(data) - 0.5 and max(data) + 0.5 <= x1, (shift, data, x0, x1)
        assert y0 <= 0 and max(data.values()) <= y1
        # a round end (1, 1.2, 1.5, 2 ... x 10^k), kept while the counts move a little
        end = round_up(max(data.values()) * 1.05)
        assert end <= y1 <= 1.1 * end, (data, y1)
