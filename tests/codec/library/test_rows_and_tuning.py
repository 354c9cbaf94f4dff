"""Library pieces on hand-made input: tuning precedence, the comparison, outputs, the report."""

from __future__ import annotations

import pytest

from codec.errors import SettingsError
from codec.library.compare import compare_rows
from codec.library.outputs import library_csv, worst_rows
from codec.library.report_html import joint_counts, library_html
from codec.library.rows import error_row
from codec.library.tuning import LibrarySettings, read_rules_file
from codec.model.clip import Clip, Skeleton
from codec.run_settings import Flags
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


def test_flags_win_over_the_sidecar_and_joint_values_over_patterns(tmp_path):
    clip_path = tmp_path / "walk.bvh"
    clip_path.write_text("")
    rules = tmp_path / "rules.json"
    rules.write_text('[{"pattern": "*Hand", "precision": 0.004}]')
    base = LibrarySettings(Flags(precision=0.02, overrides=str(rules)))
    run = base.for_clip(clip_path)  # no sidecar
    assert run.tuning.precision == 0.02 and run.rules == (JointOverride("*Hand", 0.004),)
    (tmp_path / "walk.bvh.shellscope.json").write_text(
        '{"settings": {"precision": 0.03, "level": "high"}, '
        '"overrides": [{"pattern": "lefthand", "precision": 0.001}]}'
    )
    run = base.for_clip(clip_path)
    # the flag's precision wins over the sidecar's, the sidecar's level stands; the joint's
    # own value (an exact name, in the sidecar) wins over the rules file's later pattern
    assert run.tuning.precision == 0.02 and run.tuning.level == "high"
    assert run.tuned_clip(_clip()).skeleton.precision.tolist() == [0.02, 0.001]
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
    strict = LibrarySettings(Flags(skin_strict=True))
    assert strict.fingerprint(clip_path) != LibrarySettings().fingerprint(clip_path)
    assert strict.for_clip(clip_path).compression_settings(ball_rig()).skin_strict
    # no mesh: compressed as usual
    assert not strict.for_clip(clip_path).compression_settings(_clip()).skin_strict
    (tmp_path / "ball.glb.shellscope.json").write_text('{"settings": {"skin_strict": true}}')
    run = LibrarySettings().for_clip(clip_path)
    assert run.compression_settings(ball_rig()).skin_strict  # a sidecar turns it on for its clip
