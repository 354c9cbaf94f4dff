"""Settings panel: shows the document's settings; every edit is an intent the controller
applies (the document changes, a recompression follows, the sidecar is saved)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.model.error_scale import format_cm
from app.views.settings import SettingsPanel, precision_to_slider, slider_to_precision
from codec.sidecar import load_sidecar, sidecar_path
from codec.tuning import GlobalSettings
from tests.app.panel_helpers import Recompressions, attach, make_document, make_result


def test_log_slider_mapping() -> None:
    assert slider_to_precision(precision_to_slider(0.01)) == 0.01
    assert slider_to_precision(precision_to_slider(0.0005)) == pytest.approx(0.0005, rel=0.012)
    assert precision_to_slider(1e-9) == 0 and slider_to_precision(0) == 0.0001
    assert slider_to_precision(precision_to_slider(10.0)) == 10.0


def test_model_changes_update_the_knobs(qtbot) -> None:
    doc = make_document()
    panel = SettingsPanel(doc)
    qtbot.addWidget(panel)
    counter = Recompressions(doc)
    doc.set_settings(GlobalSettings(precision=0.002, shell_distance=6.0, level="high"))
    assert panel.precision.value() == 0.002 and panel.shell.value() == 6.0
    assert panel.slider.value() == precision_to_slider(0.002)
    assert panel.level.currentText() == "high"
    assert counter.count == 1  # the model's own change, nothing echoed back by the panel


def test_edits_update_the_model_and_trigger_a_recompression(qtbot, tmp_path: Path) -> None:
    doc = make_document(path=tmp_path / "walk.bvh")
    panel = SettingsPanel(doc)
    qtbot.addWidget(panel)
    intents = []
    panel.settings_edited.connect(intents.append)
    panel.slider.setValue(precision_to_slider(0.2))
    assert intents == [{"precision": 0.2}] and doc.settings.precision is None  # a view alone
    assert doc.global_precision() == 0.01  # the clip's own, which the panel showed
    ctl = attach(doc, panel)
    counter = Recompressions(doc)
    panel.slider.setValue(precision_to_slider(0.1))
    assert doc.settings.precision == 0.1 and panel.precision.value() == 0.1
    panel.precision.setValue(0.0042)
    assert doc.settings.precision == 0.0042
    assert panel.slider.value() == precision_to_slider(0.0042)
    panel.shell.setValue(4.5)
    assert doc.settings.shell_distance == 4.5
    panel.level.setCurrentText("medium")
    assert doc.settings.level == "medium"
    assert counter.count == 4
    qtbot.waitUntil(lambda: sidecar_path(doc.path).exists())  # once the edits settle
    assert load_sidecar(doc.path)[0] == GlobalSettings(0.0042, 4.5, "medium")
    assert ctl.save_tuning() is None  # nothing left to save


def test_shows_the_change_against_the_previous_result(qtbot) -> None:
    doc = make_document()
    panel = SettingsPanel(doc)
    qtbot.addWidget(panel)
    assert "no previous result" in panel.change.text()
    doc.set_result(make_result(doc.compression_input(), scale=0.5, bits_shift=2))
    text = panel.change.text()
    assert "+80 B (+8.0 %)" in text
    assert "size \u0394" in text and "max error \u0394" in text  # a change, not the value
    assert format_cm(-0.5 * make_result().stats["max_error"], signed=True) in text
    assert "→ highest" in panel.resolved.text()


@pytest.mark.parametrize("error", [None, "boom"])
def test_status_line(qtbot, error: str | None) -> None:
    from app.model.document import Status

    doc = make_document()
    panel = SettingsPanel(doc)
    qtbot.addWidget(panel)
    doc.set_status(Status(running=error is None, message="Compressing…", error=error))
    assert ("boom" if error else "Compressing") in panel.status.text()


def test_keyframe_stripping_knobs_edit_the_model_warn_and_persist(qtbot, tmp_path: Path) -> None:
    doc = make_document(path=tmp_path / "walk.bvh")
    panel = SettingsPanel(doc)
    qtbot.addWidget(panel)
    attach(doc, panel)
    assert panel.strip_trivial.isChecked() and panel.strip_warning.text() == ""
    assert not panel.form.isRowVisible(panel.strip_warning)  # no empty gap above Bind pose
    panel.strip_trivial.setChecked(False)
    assert doc.settings.strip_trivial is False
    assert doc.settings.compression_settings().strip_trivial is False
    panel.strip_proportion.setValue(25)  # shown in %
    assert doc.settings.strip_proportion == 0.25
    assert "destructive" in panel.strip_warning.text()
    assert panel.form.isRowVisible(panel.strip_warning)
    panel.strip_threshold.setValue(0.5)
    assert doc.settings.compression_settings().strip_threshold == 0.5
    panel.strip_proportion.setValue(0.0)
    panel.strip_threshold.setValue(0.0)
    assert panel.strip_warning.text() == ""
    panel.strip_proportion.setValue(30)
    qtbot.waitUntil(lambda: sidecar_path(doc.path).exists())
    qtbot.waitUntil(lambda: load_sidecar(doc.path)[0] == doc.settings)
    saved = load_sidecar(doc.path)[0]
    assert saved.strip_trivial is False and saved.strip_proportion == 0.3


def test_the_codec_chooser_compresses_with_the_chosen_codec_and_shows_autos_pick(qtbot) -> None:
    import codec
    from app.controller import Controller
    from app.model.document import Document
    from tests.codec.helpers import DATA

    doc = Document()
    ctl = Controller(doc, debounce_ms=10)
    panel = SettingsPanel(doc)
    qtbot.addWidget(panel)
    panel.codec_requested.connect(ctl.set_codec)
    assert panel.codec.findText("auto") >= 0 and panel.codec.currentText() == "acl-style"
    clip = codec.load_clip(DATA / "keyed" / "cmu_49_15_keys6_linear.acl.sjson.xz")
    with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
        ctl.open_clip(clip)
    assert doc.result.codec_name == "acl-style" and panel.codec_pick.text() == ""
    with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
        panel.codec.setCurrentText("auto")
    assert doc.codec == "auto" and doc.result.stats["auto"]["chosen"] == doc.result.codec_name
    chosen, tried = doc.result.codec_name, doc.result.stats["auto"]["codecs"]
    size = tried[chosen]["compressed_size"]
    assert chosen != "acl-style"
    assert panel.codec_pick.text() == f"→ {chosen}, {size:,} B of {len(tried)} tried"
    tip = panel.codec_pick.toolTip()  # every candidate with its size
    assert all(f"{n} {v['compressed_size']:,} B" in tip for n, v in tried.items())
    assert f"{chosen} {size:,} B \u2190 chosen" in tip
    from app.model.comparison import settings_label  # the legends (Compare's B): auto and its pick

    assert settings_label(doc.result).startswith(f"auto \u2192 {chosen} \u00b7 ")
    from app.views.stats import StatsPanel

    stats = StatsPanel(doc)
    qtbot.addWidget(stats)
    stats.when_shown.shown()
    assert stats.values["codec"].text().startswith(f"auto \u2192 {chosen}<br>")
    ctl.shutdown()


def test_the_skin_strict_switch_is_hidden_without_a_mesh(qtbot) -> None:
    doc = make_document()
    assert not doc.clip.meshes
    panel = SettingsPanel(doc)
    qtbot.addWidget(panel)
    panel.show()
    assert not panel.form.isRowVisible(panel.skin_strict) and not panel.skin_strict.isVisible()
    # a saved skin-strict on a clip without a mesh is not handed to the codec
    doc.set_settings(GlobalSettings(skin_strict=True))
    assert not panel.skin_strict.isVisible()
    assert not doc.settings.compression_settings(has_mesh=False).skin_strict


def test_the_skin_strict_switch_compresses_the_skin_within_budget(qtbot, tmp_path: Path) -> None:
    from app.controller import Controller
    from app.model.document import Document
    from tests.codec.test_skin_strict import ball_rig

    doc = Document()
    ctl = Controller(doc, debounce_ms=10)
    panel = SettingsPanel(doc)
    qtbot.addWidget(panel)
    panel.show()
    panel.settings_edited.connect(ctl.edit_settings)
    with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
        ctl.open_clip(ball_rig(), tmp_path / "ball.glb")
    assert panel.skin_strict.isVisible() and not panel.skin_strict.isChecked()
    assert "skin_strict" not in doc.result.stats
    assert doc.result.stats["vertex_max_error"] > 0.01  # the ball's shells let its skin move
    with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
        panel.skin_strict.setChecked(True)
    assert doc.settings.skin_strict
    stats = doc.result.stats
    assert stats["skin_strict"]["met"] and stats["vertex_max_error"] <= 0.01
    # destructive stripping cannot be set while it is on
    assert not panel.strip_proportion.isEnabled() and not panel.strip_threshold.isEnabled()
    qtbot.waitUntil(lambda: sidecar_path(doc.path).exists())
    qtbot.waitUntil(lambda: load_sidecar(doc.path, "chain")[0] == doc.settings)
    assert load_sidecar(doc.path, "chain")[0].skin_strict  # saved with the animation's tuning
    ctl.shutdown()


def test_the_bind_pose_control_compresses_each_way_and_says_what_best_kept(qtbot) -> None:
    """Issue 34 in the window: Settings' Bind pose (auto by default: strip here, the others
    left to best) names the mode kept; best keeps additive on the two-sample clip, where it
    is smallest; choosing strip or compensate recompresses that way; the Stats row lists
    what each mode cost."""
    import codec
    from app.controller import Controller
    from app.model.document import Document
    from app.views.stats import StatsPanel
    from tests.codec.helpers import DATA

    doc = Document()
    ctl = Controller(doc, debounce_ms=10)
    panel = SettingsPanel(doc)
    stats = StatsPanel(doc)
    for w in (panel, stats):
        qtbot.addWidget(w)
        ctl.attach(w)  # the edits go through the controller, as in the window
    stats.when_shown.shown()
    clip = codec.load_clip(DATA / "acl" / "cmu_81_16_two_samples.acl.sjson")
    try:
        with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
            ctl.open_clip(clip)
        assert panel.bind.currentText() == "auto" and doc.settings.bind == "auto"
        auto = doc.result.stats
        assert auto["bind_mode"] == "strip" and set(auto["bind_modes"]["tried"]) == {"strip"}
        assert panel.bind_pick.text() == "→ strip"
        assert stats.values["bind_mode"].text() == (
            "strip; none, additive not run (auto: --bind best tries them)"
        )
        with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
            panel.bind.setCurrentText("best")
        assert doc.settings.bind == "best"
        best = doc.result.stats
        tried = best["bind_modes"]["tried"]
        assert (
            best["bind_mode"]
            == "additive"
            == min(
                (m for m in tried if tried[m]["strict"]), key=lambda m: tried[m]["compressed_size"]
            )
        )
        assert panel.bind_pick.text() == "→ additive"
        row = stats.values["bind_mode"].text()
        assert row.startswith("additive (vs ") and f"{tried['strip']['compressed_size']:,} B" in row
        with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
            panel.bind.setCurrentText("strip")
        assert doc.settings.bind == "strip" and doc.result.stats["bind_mode"] == "strip"
        assert doc.result.stats["compressed_size"] == tried["strip"]["compressed_size"]
        assert panel.bind_pick.text() == "→ strip"
        with qtbot.waitSignal(ctl.result_ready, timeout=60_000):
            panel.compensate.setChecked(True)
        compensation = doc.result.stats["error_compensation"]
        assert doc.settings.compensate and compensation["on"]
        assert ("compensated" in stats.values["bind_mode"].text()) == bool(compensation["on"])
    finally:
        ctl.shutdown()
