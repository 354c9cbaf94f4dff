"""Library pieces on hand-made input: tuning precedence, the comparison, outputs, the report."""

from __future__ import annotations

import pytest

from codec.errors import SettingsError
from codec.library.compare import compare_rows
from codec.library.outputs import library_csv, worst_rows
from codec.library.report_html import joint_counts, library_html
from codec.library.rows import error_row
from codec.library.tuning import ClipTuning, LibrarySettings, read_rules_file
from codec.model.clip import Clip, Skeleton
from codec.tuning import JointOverride
from tests.codec.helpers import chain_clip


def _row(path, size, met=True, err=0.009, joint="hand"):
    return {
        "path": path, "animation": "", "joints": 2, "samples": 10, "duration": 1.0,
        "raw_size": 800, "compressed_size": size, "compression_ratio": 800 / size,
        "max_error": err, "precision": 0.01, "precision_met": met, "worst_joint": joint,
        "worst_time": 0.5, "codec": "acl-style", "compression_time": 0.1, "error": "",
    }  # fmt: skip


def _clip() -> Clip:
    clip = chain_clip(num_samples=3, num_joints=2)
    return clip.replace(skeleton=Skeleton.create(["root", "LeftHand"], [-1, 0]))


def test_sidecar_settings_and_rules_come_after_the_global_ones(tmp_path):
    clip_path = tmp_path / "walk.bvh"
    clip_path.write_text("")
    base = LibrarySettings(ClipTuning(precision=0.02, rules=(JointOverride("*Hand", 0.004),)))
    assert base.for_clip(clip_path) == base.tuning  # no sidecar
    (tmp_path / "walk.bvh.shellscope.json").write_text(
        '{"settings": {"precision": 0.03}, "overrides": [{"pattern": "root", "precision": 0.001}]}'
    )
    tuned = base.for_clip(clip_path)
    clip, _ = tuned.apply(_clip())
    assert clip.skeleton.precision.tolist() == [0.001, 0.004]
    assert base.fingerprint(clip_path) != LibrarySettings(sidecars=False).fingerprint(clip_path)
    (tmp_path / "walk.bvh.shellscope.json").write_text('{"overrides": [{"precision": 1}]}')
    with pytest.raises(SettingsError, match=r"walk.bvh.shellscope.json: overrides\[0\]"):
        read_rules_file(tmp_path / "walk.bvh.shellscope.json")


def test_compare_orders_regressions_first():
    old = [_row("a", 100), _row("b", 100), _row("c", 100), _row("gone", 5)]
    new = [_row("a", 90), _row("b", 100, met=False), _row("c", 130), _row("new", 1)]
    new.append(error_row("d", "", "d: broken"))
    old.append(_row("d", 50))
    status = [(e["path"], e["status"]) for e in compare_rows(old, new)]
    assert status == [
        ("c", "regressed"), ("b", "regressed"), ("d", "regressed"), ("a", "improved"),
        ("new", "new"), ("gone", "gone"),
    ]  # fmt: skip


def test_report_and_csv_hold_every_row_and_no_address():
    rows = [_row(f"clip{i}.bvh", 100 + i, met=i != 3, err=0.001 * i, joint=f"j{i % 2}")
            for i in range(1, 6)]  # fmt: skip
    rows.append(error_row("bad<x>.bvh", "", "bad<x>.bvh: line 2: no ROOT"))
    page = library_html(rows, "t")
    assert page.count('<tr class="over">') == 2  # in the worst clips and in the table
    assert "bad&lt;x&gt;.bvh: line 2: no ROOT" in page and "bad<x>" not in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in page and "src=" not in page
    assert joint_counts(rows) == [("j1", 3), ("j0", 2)]
    assert worst_rows(rows)[0]["path"] == "clip3.bvh"
    assert library_csv(rows).count("\n") == 7


def test_skin_strict_reaches_the_clips_with_a_mesh_and_changes_the_cache_key(tmp_path):
    from tests.codec.test_skin_strict import ball_rig

    clip_path = tmp_path / "ball.glb"
    clip_path.write_text("")
    strict = LibrarySettings(ClipTuning(skin_strict=True))
    assert strict.fingerprint(clip_path) != LibrarySettings().fingerprint(clip_path)
    _, settings = strict.for_clip(clip_path).apply(ball_rig())
    assert settings.skin_strict
    _, settings = strict.for_clip(clip_path).apply(_clip())  # no mesh: compressed as usual
    assert not settings.skin_strict
    (tmp_path / "ball.glb.shellscope.json").write_text('{"settings": {"skin_strict": true}}')
    _, settings = LibrarySettings().for_clip(clip_path).apply(ball_rig())
    assert settings.skin_strict  # a sidecar turns it on for its clip
