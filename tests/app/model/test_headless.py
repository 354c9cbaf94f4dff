"""The no-window export path: same numbers as codec.compress, sidecar and overrides applied."""

from __future__ import annotations

import argparse
import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

import codec
from app.model.document import Document
from app.model.headless import add_export_arguments, run_headless, wants_headless
from codec.settings import CompressionSettings
from codec.sidecar import save_sidecar
from codec.tuning import GlobalSettings, JointOverride

DATA = Path(__file__).parents[2] / "data" / "acl"
CLIP = DATA / "cmu_09_02.acl.sjson"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="shellscope")
    p.add_argument("clip", nargs="?")
    p.add_argument("--precision", type=float)  # as app/__main__.py has them
    p.add_argument("--animation")
    add_export_arguments(p)
    return p


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_headless(_parser().parse_args(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _expected(path: Path, settings: GlobalSettings, rules=()) -> codec.Result:
    doc = Document()
    doc.set_clip(codec.load_clip(path), path, rules, settings)
    return codec.compress(doc.compression_input(), CompressionSettings(level=settings.level))


def test_flags_are_added_once() -> None:
    p = _parser()
    args = p.parse_args(
        ["x.bvh", "--export-csv", "j.csv", "--level", "high", "--shell-distance", "2"]
    )
    assert wants_headless(args) and args.level == "high" and args.shell_distance == 2.0
    assert not wants_headless(p.parse_args(["x.bvh"]))


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("headless")
    code, out, err = _run(
        [
            str(CLIP),
            "--precision",
            "0.02",
            "--export-stats",
            str(tmp / "s.json"),
            "--export-csv",
            str(tmp / "j.csv"),
            "--export-lossy",
            str(tmp / "l.acl.sjson"),
        ]
    )
    assert code == 0, err
    return tmp, out


def test_exports_parse_back_to_the_codecs_numbers(exported: tuple[Path, str]) -> None:
    tmp, out = exported
    want = _expected(CLIP, GlobalSettings(precision=0.02))
    stats = json.loads((tmp / "s.json").read_text())
    for key in (
        "compressed_size",
        "raw_size",
        "compression_ratio",
        "max_error",
        "worst_track",
        "worst_time",
        "error_p99",
        "num_segments",
        "sub_tracks",
        "bit_rate_histogram",
    ):
        assert stats[key] == want.stats[key], key
    block = stats["shellscope"]
    assert block["level"] == "automatic" and block["precision"] == 0.02
    assert block["read"]["clip"] == "09_02" and block["view"]["rounding"] == "none"
    rows = list(csv.DictReader((tmp / "j.csv").open()))
    np.testing.assert_array_equal([float(r["max_error"]) for r in rows], want.error.max(axis=0))
    np.testing.assert_array_equal([float(r["precision"]) for r in rows], 0.02)
    lossy = codec.load_clip(tmp / "l.acl.sjson")
    np.testing.assert_allclose(lossy.rotations, want.lossy.rotations, atol=1e-6)
    np.testing.assert_allclose(lossy.translations, want.lossy.translations, atol=1e-5)
    assert "wrote" in out and f"{want.stats['compressed_size']} B" in out
    # the lossy file's own error, measured from it against the raw clip, is said
    assert "in the file: max error" in out and "every joint within its precision" in out


def test_sidecar_and_overrides_file_are_applied(tmp_path: Path) -> None:
    clip = tmp_path / CLIP.name
    clip.write_bytes(CLIP.read_bytes())
    rules = (JointOverride("*Hand*", precision=0.001),)
    save_sidecar(clip, GlobalSettings(precision=0.05, level="medium"), rules)
    code, out, err = _run([str(clip), "--export-stats", str(tmp_path / "a.json")])
    assert code == 0, err
    assert "shellscope.json" in out
    want = _expected(clip, GlobalSettings(precision=0.05, level="medium"), rules)
    assert (
        json.loads((tmp_path / "a.json").read_text())["compressed_size"]
        == (want.stats["compressed_size"])
    )
    other = tmp_path / "rules.json"  # over the sidecar: its settings win, its rules follow
    other.write_text('{"settings": {"level": "high"}, "overrides": [{"pattern": "*Nope*"}]}')
    code, _, err = _run(
        [str(clip), "--overrides", str(other), "--export-stats", str(tmp_path / "b.json")]
    )
    assert code == 0 and "matches no joint" in err
    b = json.loads((tmp_path / "b.json").read_text())
    want = _expected(clip, GlobalSettings(precision=0.05, level="high"), rules)
    assert b["compressed_size"] == want.stats["compressed_size"]
    assert b["shellscope"]["rules"] == [
        {"pattern": "*Hand*", "precision": 0.001},
        {"pattern": "*Nope*"},
    ]


def test_failures_leave_no_files_and_say_why(tmp_path: Path) -> None:
    code, _, err = _run([str(tmp_path / "none.bvh"), "--export-stats", str(tmp_path / "s.json")])
    assert code == 2 and "none.bvh" in err
    bad = tmp_path / "rules.json"
    bad.write_text("[{]")
    code, _, err = _run([str(CLIP), "--overrides", str(bad), "--export-stats", "s.json"])
    assert code == 2 and "rules.json: line 1" in err
    code, _, err = _run([str(CLIP), "--export-stats", str(tmp_path / "missing" / "s.json")])
    assert code == 2 and "s.json" in err
    code, _, err = _run(["--export-stats", "s.json"])
    assert code == 2 and "need a CLIP" in err
    assert [p.name for p in tmp_path.iterdir()] == ["rules.json"]


# ------------------------------------------------------------------ failed runs write nothing


def _one_line(err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for n in needles:
        assert n in lines[0], (n, lines[0])


def _listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "clip.acl.sjson").write_bytes(CLIP.read_bytes())
    (tmp_path / "S.json").write_text("old stats")
    (tmp_path / "rules.json").write_text('[{"pattern": "*Hand*", "precision": 0.002}]')
    return tmp_path


@pytest.mark.parametrize(
    "argv",
    [
        ["--export-stats", "{S}", "--export-lossy", "{bad}"],  # an export it cannot make
        ["--export-stats", "{clip}"],  # onto the clip itself
        ["--export-lossy", "{clip}"],
        ["--export-stats", "{S}", "--export-csv", "{S}"],
        ["--overrides", "{rules}", "--export-csv", "{rules}"],
        ["--export-stats", "{S}", "--export-csv", "{nodir}"],
    ],
)
def test_a_bad_export_path_exits_2_before_any_work_and_changes_nothing(
    work: Path, argv: list[str]
) -> None:
    names = {
        "S": work / "S.json",
        "bad": work / "bad.txt",
        "clip": work / "clip.acl.sjson",
        "rules": work / "rules.json",
        "nodir": work / "nodir" / "j.csv",
    }
    before = _listing(work)
    code, out, err = _run([str(work / "clip.acl.sjson"), *[a.format(**names) for a in argv]])
    assert code == 2 and out == "", err
    _one_line(err, "shellscope: ")
    assert _listing(work) == before


def test_an_export_failing_mid_run_exits_1_and_leaves_the_earlier_ones_unwritten(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import app.model.headless

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise ValueError("ACL SJSON identifies bones by name: joint names must be unique")

    monkeypatch.setattr(app.model.headless, "export_lossy", broken)
    before = _listing(work)
    code, _, err = _run(
        [
            str(work / "clip.acl.sjson"),
            "--export-stats",
            str(work / "S.json"),
            "--export-csv",
            str(work / "j.csv"),
            "--export-lossy",
            str(work / "l.acl.sjson"),
        ]
    )
    assert code == 1
    _one_line(err, "clip.acl.sjson: failed (ValueError: ACL SJSON identifies bones")
    assert _listing(work) == before


def test_a_non_finite_error_is_a_failed_run(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = codec.compress

    def inf_error(*args, **kwargs):  # type: ignore[no-untyped-def]
        result = real(*args, **kwargs)
        result.stats["max_error"] = float("inf")
        return result

    monkeypatch.setattr(codec, "compress", inf_error)
    before = _listing(work)
    code, _, err = _run([str(work / "clip.acl.sjson"), "--export-stats", str(work / "S.json")])
    assert code == 1
    _one_line(err, "max error is inf, not a finite number: nothing written")
    assert _listing(work) == before


@pytest.mark.parametrize("name", ["sjson_many_bones", "bvh_frame_time_huge", "gltf_uri_fifo"])
def test_a_hostile_clip_exits_2_in_one_line(work: Path, name: str) -> None:
    from tests.codec.formats import hostile_files as hf

    build, words = hf.CASES[name]
    folder = work / "in"
    folder.mkdir()
    path = build(folder)
    before = _listing(work)
    code, _, err = _run([str(path), "--export-stats", str(work / "S.json")])
    assert code == 2
    _one_line(err, str(path), words[0])
    assert _listing(work) == before


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("[" * 100_000 + "]" * 100_000, "top level: nested too deeply"),
        ('[{"pattern": "*", "precision": 1e308}]', "precision 1e+308 is out of range"),
        ('{"settings": {"shell_distance": 1e39}}', "shell distance: 1e+39 is out of range"),
    ],
)
def test_a_hostile_overrides_file_exits_2_in_one_line(work: Path, content: str, words: str) -> None:
    (work / "rules.json").write_text(content)
    code, _, err = _run(
        [
            str(work / "clip.acl.sjson"),
            "--overrides",
            str(work / "rules.json"),
            "--export-stats",
            str(work / "S.json"),
        ]
    )
    assert code == 2
    _one_line(err, "rules.json", words)
    assert (work / "S.json").read_text() == "old stats"


@pytest.mark.parametrize(("flag", "value"), [("--precision", "1e308"), ("--shell-distance", "0")])
def test_settings_the_codec_cannot_hold_exit_2(work: Path, flag: str, value: str) -> None:
    code, _, err = _run(
        [str(work / "clip.acl.sjson"), flag, value, "--export-stats", str(work / "S.json")]
    )
    assert code == 2
    _one_line(err, "shellscope: ", flag.lstrip("-").replace("-", " "))
    assert (work / "S.json").read_text() == "old stats"


@pytest.mark.parametrize(
    ("error", "code", "word"), [("term", 143, "terminated"), ("int", 130, "interrupted")]
)
def test_a_run_stopped_by_a_signal_is_one_line_and_writes_nothing(
    work: Path, monkeypatch: pytest.MonkeyPatch, error: str, code: int, word: str
) -> None:
    from codec.formats import atomic

    def stopped(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise atomic.Terminated(143) if error == "term" else KeyboardInterrupt

    monkeypatch.setattr(codec, "compress", stopped)
    before = _listing(work)
    got, _, err = _run([str(work / "clip.acl.sjson"), "--export-stats", str(work / "S.json")])
    assert got == code
    _one_line(err, f"shellscope: {word}")
    assert _listing(work) == before


def test_shell_distance_mesh_without_a_window(tmp_path: Path) -> None:
    from codec.measure.mesh_shells import mesh_shell_distances
    from codec.result_tables import SKIN_JOINT_COLUMNS

    fox = Path(__file__).parents[2] / "data" / "gltf" / "Fox.glb"
    parser = _parser()
    args = parser.parse_args(
        [
            str(fox),
            "--animation",
            "Walk",
            "--shell-distance",
            "mesh",
            "--export-csv",
            str(tmp_path / "j.csv"),
            "--export-stats",
            str(tmp_path / "s.json"),
        ]
    )
    err_io = io.StringIO()
    code = run_headless(args, io.StringIO(), err_io)
    assert code == 0, err_io.getvalue()
    rows = list(csv.DictReader((tmp_path / "j.csv").open()))
    want, _ = mesh_shell_distances(codec.load_clip(fox, animation="Walk"), 3.0)
    got = np.array([float(r["shell_distance"]) for r in rows])
    np.testing.assert_allclose(got, want)
    assert len(np.unique(got)) > len(got) // 2  # a shell per joint, not one for all
    assert set(SKIN_JOINT_COLUMNS) <= set(rows[0])
    ratios = [r["shell_to_vertex_ratio"] for r in rows]
    assert sum(1 for r in ratios if r not in ("", "inf")) >= len(rows) // 2
    stats = json.loads((tmp_path / "s.json").read_text())
    assert stats["vertex_max_error"] > 0 and "vertex_worst_joint" in stats
    # a clip without mesh cannot take its shells from one: said, and nothing written
    code, _, err = _run(
        [str(CLIP), "--shell-distance", "mesh", "--export-csv", str(tmp_path / "a.csv")]
    )
    assert code == 2 and "no skinned mesh" in err and not (tmp_path / "a.csv").exists()
    assert _parser().parse_args(["x", "--shell-distance", "MESH"]).shell_distance == "mesh"


def test_skin_strict_without_a_window(tmp_path: Path) -> None:
    fox = Path(__file__).parents[2] / "data" / "gltf" / "Fox.glb"
    stats_path = tmp_path / "s.json"
    code, _, err = _run(
        [str(fox), "--animation", "Walk", "--skin-strict", "--export-stats", str(stats_path)]
    )
    assert code == 0, err
    stats = json.loads(stats_path.read_text())
    assert stats["skin_strict"]["met"] and stats["vertex_max_error"] <= 0.01
    # a clip without a mesh: said in one line, exit 2, nothing written
    code, _, err = _run([str(CLIP), "--skin-strict", "--export-stats", str(tmp_path / "a.json")])
    assert code == 2 and not (tmp_path / "a.json").exists()
    assert err.strip().count("\n") == 0 and "--skin-strict: the clip has no skinned mesh" in err


def test_a_flood_of_unmatched_rules_is_summarised(tmp_path: Path) -> None:
    """20,000 rules that match no joint: two named, the rest counted on one line."""
    rules = tmp_path / "rules.json"
    many = [{"pattern": f"nope{i}*", "precision": 0.5} for i in range(20_000)]
    rules.write_text(json.dumps(many))
    code, _, err = _run(
        [str(CLIP), "--overrides", str(rules), "--export-stats", str(tmp_path / "s.json")]
    )
    assert code == 0, err
    lines = err.strip().splitlines()
    assert lines == [
        "shellscope: warning: rule 'nope0*' matches no joint",
        "shellscope: warning: rule 'nope1*' matches no joint",
        "shellscope: warning: 19,998 more rules match no joint",
    ]


@pytest.mark.parametrize("kind", ["device", "fifo", "folder", "link to a device"])
def test_an_export_over_a_device_fifo_or_folder_is_refused(tmp_path: Path, kind: str) -> None:
    import os

    target = {"device": Path("/dev/null"), "folder": tmp_path}.get(kind, tmp_path / "t.json")
    if kind == "fifo":
        os.mkfifo(target)
    if kind == "link to a device":
        target.symlink_to("/dev/null")
    code, _, err = _run([str(CLIP), "--export-stats", str(target)])
    assert code == 2
    assert err.strip().splitlines() == [f"shellscope: {target}: " + err.split(": ", 2)[2].strip()]
    assert "cannot write" in err
    assert Path("/dev/null").is_char_device()


def test_each_animation_uses_its_own_sidecar_entry(tmp_path: Path) -> None:
    """Fox's sidecar tunes Walk only: Walk is compressed with it, Run with the defaults."""
    fox = tmp_path / "Fox.glb"
    fox.write_bytes((CLIP.parents[1] / "gltf" / "Fox.glb").read_bytes())
    walk = GlobalSettings(precision=0.002)
    save_sidecar(fox, walk, (), animation="Walk")
    for name, settings in (("Walk", walk), ("Run", GlobalSettings())):
        out = tmp_path / f"{name}.json"
        code, _, err = _run([str(fox), "--animation", name, "--export-stats", str(out)])
        assert code == 0, err
        doc = Document()
        doc.set_clip(codec.load_clip(fox, animation=name), fox, (), settings)
        want = codec.compress(doc.compression_input(), CompressionSettings(level=settings.level))
        assert json.loads(out.read_text())["compressed_size"] == want.stats["compressed_size"]
