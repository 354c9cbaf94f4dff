"""The `python -m codec` command line, run in-process through `codec.cli.main`."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import codec
from codec.cli import main
from codec.codecs import container
from codec.model import transforms
from codec.settings import CompressionSettings

DATA = Path(__file__).resolve().parents[1] / "data"
CLIP = DATA / "acl" / "cmu_09_02.acl.sjson"
REPO = Path(__file__).resolve().parents[2]


def run(*argv: object) -> tuple[int, str, str]:
    """Run the CLI in-process; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def assert_one_line_error(err: str, *needles: str) -> None:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for n in needles:
        assert n in lines[0]


def shell_points_object(clip: codec.Clip, distance: float) -> np.ndarray:
    """(S, J, 3 coords, 3 points): object-space images of (d,0,0), (0,d,0), (0,0,d),
    composed here with 4x4 matrices, independently of the codec's object space."""
    local = transforms.qvv_to_matrix(clip.rotations, clip.translations, clip.scales)
    s, j = local.shape[:2]
    m = np.zeros((s, j, 4, 4))
    m[..., :3, :] = local
    m[..., 3, 3] = 1.0
    obj = np.empty_like(m)
    for k, p in enumerate(clip.skeleton.parents):
        obj[:, k] = m[:, k] if p < 0 else obj[:, p] @ m[:, k]
    pts = np.vstack((np.eye(3) * distance, np.ones((1, 3))))  # (4, 3) homogeneous columns
    return (obj @ pts)[..., :3, :]


@pytest.fixture(scope="module")
def compressed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """CLIP compressed once with `-o` and `--json -`: the .ssc path and the stats."""
    ssc = tmp_path_factory.mktemp("cli") / "clip.ssc"
    code, out, err = run("compress", CLIP, "-o", ssc, "--json", "-")
    assert code == 0, err
    return ssc, json.loads(out)  # only JSON on stdout


def test_help_runs_as_module() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "codec", "--help"], cwd=REPO, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    for command in ("compress", "decompress", "info", "stats", "bench"):
        assert command in proc.stdout


def test_json_stats_match_the_api(compressed: tuple[Path, dict]) -> None:
    ssc, stats = compressed
    result = codec.compress(codec.load_clip(CLIP), CompressionSettings())
    expected = json.loads(json.dumps(result.stats))
    assert set(stats) == {*expected, "shellscope"}  # the settings block that made them
    for key in (
        "raw_size",
        "compressed_size",
        "metadata_size",
        "file_size",
        "num_segments",
        "segments",
        "sub_tracks",
        "bit_rate_histogram",
        "worst_track",
        "level",
    ):
        assert stats[key] == expected[key], key
    assert stats["max_error"] == pytest.approx(expected["max_error"], rel=1e-12)
    # the file is the codec's, carrying the settings block (which the stats' sizes leave out)
    assert container.with_settings(ssc.read_bytes(), b"") == result.data
    assert json.loads(container.read(ssc.read_bytes()).settings) == stats["shellscope"]


def test_summary_without_output_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run("compress", CLIP, "--precision", "0.02", "--level", "medium")
    assert code == 0, err
    assert "compressed size" in out and "level medium" in out
    assert " cm at " in out and "between samples" in out
    assert "precision        0.02 cm, met: yes" in out
    assert not list(tmp_path.iterdir())  # nothing written without -o


def test_info_agrees_with_stats(compressed: tuple[Path, dict]) -> None:
    ssc, stats = compressed
    code, out, err = run("info", ssc)
    assert code == 0, err
    assert f"{stats['compressed_size']:,} B" in out and "bit rates" in out
    code, out, _ = run("info", ssc, "--json", "-")
    info = json.loads(out)
    assert info["magic"] == "SSCF" and info["has_metadata"]
    assert info["num_joints"] == stats["num_bones"]
    for key in (
        "compressed_size",
        "metadata_size",
        "file_size",
        "num_segments",
        "sub_tracks",
        "bit_rate_histogram",
    ):
        assert info[key] == stats[key], key
    assert info["settings"] == stats["shellscope"]
    assert info["settings_size"] == ssc.stat().st_size - stats["file_size"]
    assert [s["segment_size"] for s in info["segments"]] == [
        s["segment_size"] for s in stats["segments"]
    ]


def test_info_shows_every_setting_and_rule_and_no_raw_byte_of_a_crafted_block(
    tmp_path: Path,
) -> None:
    """`info` names every rule of the run that made the file (not a count), the stripping,
    units and rate; a crafted block's control characters are quoted, never printed."""
    rules = tmp_path / "rules.json"
    own = {"pattern": "lIndex2", "precision": 0.004}
    rules.write_text(json.dumps([own, {"pattern": "l*", "precision": 0.008, "rounding": "floor"}]))
    ssc = tmp_path / "x.ssc"
    code, _, err = run("compress", CLIP, "--overrides", rules, "--no-strip-trivial", "-o", ssc)
    assert code == 0, err
    code, out, err = run("info", ssc)
    assert code == 0, err
    assert 'rule 1           "lIndex2": precision 0.004\n' in out
    assert 'rule 2           "l*": precision 0.008, rounding floor\n' in out
    assert (
        "strip trivial off, proportion 0.0, threshold 0.0; units auto, sample rate the file's"
        in out
    )
    block = json.loads(container.read(ssc.read_bytes()).settings)
    block["rules"] = [{"pattern": "\x1b]0;pwned\x07", "precision": "\x1b[2J"}, 7]
    block["codec"], block["sample_rate"] = "\x1b[31m", "\x9b"
    crafted = tmp_path / "crafted.ssc"
    crafted.write_bytes(container.with_settings(ssc.read_bytes(), json.dumps(block).encode()))
    code, out, err = run("info", crafted)
    assert code == 0, err
    assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out
    assert 'rule 1           "\\u001b]0;pwned\\u0007": precision "\\u001b[2J"' in out
    assert "rule 2           7\n" in out


def test_decompress_sjson_gives_the_reported_error(
    compressed: tuple[Path, dict], tmp_path: Path
) -> None:
    ssc, stats = compressed
    out_path = tmp_path / "lossy.acl.sjson"
    code, _, err = run("decompress", ssc, "-o", out_path)
    assert code == 0, err
    raw = codec.load_clip(CLIP)
    lossy = codec.load_clip(out_path)
    assert lossy.skeleton.names == raw.skeleton.names
    assert lossy.num_samples == raw.num_samples
    diff = shell_points_object(raw, 3.0) - shell_points_object(lossy, 3.0)
    error = np.sqrt(np.sum(diff * diff, axis=-2)).max(axis=-1)  # (S, J)
    assert error.max() == pytest.approx(stats["max_error"], rel=1e-9)
    assert error.max() <= 0.01
    s, j = np.unravel_index(np.argmax(error), error.shape)
    assert j == stats["worst_track"]


def independent_max_error(raw: codec.Clip, lossy: codec.Clip) -> float:
    diff = shell_points_object(raw, 3.0) - shell_points_object(lossy, 3.0)
    return float(np.sqrt(np.sum(diff * diff, axis=-2)).max())


def test_decompress_of_a_wrapping_clip_restores_the_last_sample(tmp_path: Path) -> None:
    base = codec.load_clip(DATA / "acl" / "cmu_09_02.acl.sjson")
    arrays = [np.concatenate((a, a[:1])) for a in (base.rotations, base.translations, base.scales)]
    raw = codec.Clip(base.skeleton, base.sample_rate, *arrays, name="loop")
    src = tmp_path / "loop.acl.sjson"
    codec.save_clip(raw, src)
    code, out, err = run("compress", src, "-o", tmp_path / "loop.ssc", "--json", "-")
    assert code == 0, err
    stats = json.loads(out)
    assert stats["looping"] and stats["num_stored_samples"] == raw.num_samples - 1
    code, _, err = run("decompress", tmp_path / "loop.ssc", "-o", tmp_path / "out.acl.sjson")
    assert code == 0, err
    lossy = codec.load_clip(tmp_path / "out.acl.sjson")
    assert lossy.num_samples == raw.num_samples
    assert independent_max_error(raw, lossy) == pytest.approx(stats["max_error"], rel=1e-9)


def test_decompress_bvh(compressed: tuple[Path, dict], tmp_path: Path) -> None:
    ssc, _ = compressed
    out_path = tmp_path / "lossy.bvh"
    code, out, err = run("decompress", ssc, "-o", out_path)
    assert code == 0, err
    assert "Traceback" not in err
    bvh = codec.load_clip(out_path, units="cm")
    lossy = codec.load_clip(ssc)
    assert bvh.num_samples == lossy.num_samples
    common = [n for n in bvh.skeleton.names if n in lossy.skeleton.names]
    assert len(common) >= lossy.num_joints - 5
    bvh_obj = bvh.object_space()[..., 3]
    lossy_obj = lossy.object_space()[..., 3]
    for name in common:  # joint positions survive the text round trip
        a = bvh_obj[:, bvh.skeleton.index(name)]
        b = lossy_obj[:, lossy.skeleton.index(name)]
        assert np.abs(a - b).max() < 1e-3, name


def test_stats_folder_with_a_broken_file(tmp_path: Path) -> None:
    folder = tmp_path / "clips"
    (folder / "sub").mkdir(parents=True)
    shutil.copy(DATA / "acl" / "cmu_121_10_single_sample.acl.sjson", folder)
    shutil.copy(DATA / "acl" / "cmu_81_16_two_samples.acl.sjson", folder / "sub")
    (folder / "broken.bvh").write_text("HIERARCHY\nROOT hips\n{\n")
    (folder / "notes.txt").write_text("not a clip")
    csv_path = tmp_path / "rows.csv"
    code, out, err = run("stats", folder, "--csv", csv_path, "--jobs", "2")
    assert code == 0, err
    skipped = [line for line in err.splitlines() if line.startswith("skipped")]
    assert len(skipped) == 1 and "broken.bvh" in skipped[0]
    assert "[" + "#" * 30 + "] 3/3" in err
    assert "2 clips compressed, 1 skipped" in out and "p99" in out
    with open(csv_path, newline="") as f:
        rows = {r["name"]: r for r in csv.DictReader(f)}
    assert set(rows) == {
        "cmu_121_10_single_sample.acl.sjson",
        str(Path("sub") / "cmu_81_16_two_samples.acl.sjson"),
    }
    for row in rows.values():
        assert int(row["joints"]) == 44
        ratio = int(row["raw_size"]) / int(row["compressed_size"])
        assert float(row["compression_ratio"]) == pytest.approx(ratio)
        assert float(row["max_error"]) <= 0.01 and row["precision_met"] == "True"
    assert sorted(int(r["samples"]) for r in rows.values()) == [1, 2]


def test_stats_rows_of_a_codec_without_levels(tmp_path: Path) -> None:
    """Only acl-style chooses a level: a clip another codec compresses is a row all the same
    (stats once failed with an internal error, KeyError 'level', on every such clip)."""
    csv_path = tmp_path / "rows.csv"
    sjson = DATA / "acl" / "cmu_81_16_two_samples.acl.sjson"
    code, out, err = run("stats", sjson, "--codec", "subsample", "--csv", csv_path)
    assert code == 0, err
    with open(csv_path, newline="") as f:
        (row,) = csv.DictReader(f)
    assert row["level"] == "" and int(row["compressed_size"]) > 0
    assert row["precision_met"] == "True"


def test_bad_clip_file_exits_2_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "garbage.bvh"
    bad.write_text("MOTION\nFrames: x\n")
    code, out, err = run("compress", bad)
    assert code == 2 and out == ""
    assert_one_line_error(err, "garbage.bvh")


def test_bad_ssc_exits_2_naming_it(compressed: tuple[Path, dict], tmp_path: Path) -> None:
    ssc, _ = compressed
    cut = tmp_path / "cut.ssc"
    cut.write_bytes(ssc.read_bytes()[:-7])
    for command in (["info", cut], ["decompress", cut, "-o", tmp_path / "x.acl.sjson"]):
        code, _, err = run(*command)
        assert code == 2
        assert_one_line_error(err, "cut.ssc")
    assert not (tmp_path / "x.acl.sjson").exists()


def test_decompress_without_metadata_is_refused(tmp_path: Path) -> None:
    ssc = tmp_path / "bare.ssc"
    code, _, err = run(
        "compress",
        DATA / "acl" / "cmu_81_16_two_samples.acl.sjson",
        "--no-metadata",
        "-o",
        ssc,
        "--json",
        tmp_path / "s.json",
    )
    assert code == 0, err
    assert json.loads((tmp_path / "s.json").read_text())["metadata_size"] == 0
    code, _, err = run("decompress", ssc, "-o", tmp_path / "out.bvh")
    assert code == 2
    assert_one_line_error(err, "bare.ssc", "metadata")


@pytest.mark.parametrize("command", ["compress", "stats"])
def test_precision_zero_exits_2(command: str) -> None:
    code, out, err = run(command, CLIP, "--precision", "0")
    assert code == 2 and out == ""
    assert_one_line_error(err, "precision must be > 0")


def test_wrong_output_extension_exits_2(tmp_path: Path) -> None:
    code, _, err = run("compress", CLIP, "-o", tmp_path / "out.bvh")
    assert code == 2
    assert_one_line_error(err, ".ssc")


def test_warm_up_prepares_the_kernels_and_says_where_their_cache_is() -> None:
    from codec import jit

    code, out, err = run("warm-up")
    assert code == 0, err
    assert "kernels" in out and jit.cache_location() in out


def test_bench_runs_from_a_checkout_only(tmp_path: Path, monkeypatch) -> None:
    from codec.cli import bench

    monkeypatch.setattr(bench, "BENCH", tmp_path / "bench" / "codec_vs_acl.py")
    monkeypatch.delitem(sys.modules, bench.MODULE, raising=False)
    code, _, err = run("bench", "--no-processes")
    assert code == 2
    assert_one_line_error(err, "runs from a source checkout", "codec_vs_acl.py")


def test_bench_on_a_small_reference(tmp_path: Path) -> None:
    entry = {"compressed_size": 1147, "max_error": 3.4e-05, "compression_time_s_median": 1e-4}
    ref = tmp_path / "ref.json"
    ref.write_text(
        json.dumps({"clips": {"cmu_121_10_single_sample.acl.sjson": {"automatic": entry}}})
    )
    clip = DATA / "acl" / "cmu_121_10_single_sample.acl.sjson"
    args = ["bench", "--clips", clip, "--reference", ref, "--repeat", "1", "--no-processes"]
    code, out, err = run(*args, "--json", tmp_path / "bench.json")
    assert code == 0, err
    assert "cmu_121_10_single_sample" in out and "peak RSS" in out and "PASS" in out
    report = json.loads((tmp_path / "bench.json").read_text())
    row = report["clips"]["cmu_121_10_single_sample"]
    assert row["size_ratio"] == pytest.approx(row["compressed_size"] / 1147)
    assert row["sample_s_median"] > 0 and row["decode_all_s_median"] > 0
    assert row["acl_source"] == "reference"
    assert report["settings"]["bind"] == "auto" and "bind auto;" in out
    assert row["bind_mode"] == "strip" and row["bind_modes_tried"] == ["strip"]
    # --bind best races best's search: on the two-sample clip it keeps additive
    two = DATA / "acl" / "cmu_81_16_two_samples.acl.sjson"
    for bind, kept in (("auto", "strip"), ("best", "additive")):
        out_json = tmp_path / f"{bind}.json"
        code, out, err = run(*args[:2], two, *args[3:], "--bind", bind, "--json", out_json)
        assert code == 0, err
        assert f"bind {bind};" in out
        report = json.loads(out_json.read_text())
        assert report["settings"]["bind"] == bind
        assert report["clips"]["cmu_81_16_two_samples"]["bind_mode"] == kept
    code, _, err = run("bench", "--clips", tmp_path / "missing.acl.sjson")
    assert code == 2
    assert_one_line_error(err, "missing.acl.sjson", "no such clip")
    code, _, err = run("bench", "--clips", clip, "--peer", tmp_path / "nothing")
    assert code == 2
    assert_one_line_error(err, "nothing", "not an executable")


def test_compress_applies_the_sidecar_beside_the_clip_and_says_so(tmp_path: Path) -> None:
    """The command line takes a clip's tuning the way the window does: the sidecar's
    settings and rules, flags on top."""
    from codec.sidecar import save_sidecar
    from codec.tuning import GlobalSettings, JointOverride

    clip = tmp_path / "walk.acl.sjson"
    shutil.copy(CLIP, clip)
    code, plain, _ = run("compress", clip, "--json", tmp_path / "plain.json")
    assert code == 0 and "tuning" not in plain
    sidecar = save_sidecar(
        clip,
        GlobalSettings(precision=0.1, shell_distance=3.0, level="high"),
        [JointOverride("*hand*", precision=0.02)],
    )
    code, out, err = run("compress", clip, "--json", tmp_path / "tuned.json")
    assert code == 0, err
    notes = [line for line in out.splitlines() if "tuning" in line]
    assert notes == [f"  tuning           {sidecar} (1 rule)"]
    tuned = json.loads((tmp_path / "tuned.json").read_text())
    before = json.loads((tmp_path / "plain.json").read_text())
    assert tuned["compressed_size"] < before["compressed_size"]
    assert tuned["level"] == "high" and before["level"] == "highest"
    # the same as the window's path (the document resolves the same values)
    from app.model.document import Document

    loaded = codec.load_clip(clip)
    doc = Document()
    doc.set_clip(
        loaded, clip, [JointOverride("*hand*", precision=0.02)], GlobalSettings(0.1, 3.0, "high")
    )
    window = codec.compress(doc.compression_input(), CompressionSettings(level="high"))
    assert window.stats["compressed_size"] == tuned["compressed_size"]
    # a flag wins over the sidecar; JSON on stdout keeps the note on stderr
    code, out, err = run(
        "compress", clip, "--precision", "0.01", "--level", "highest", "--json", "-"
    )
    assert code == 0 and "tuning" in err and "tuning" not in out
    flagged = json.loads(out)
    assert flagged["level"] == "highest"
    # the hand rule still applies under the flags: looser hands than the plain run
    assert flagged["compressed_size"] <= before["compressed_size"]


def test_bench_codecs_all_measures_every_codec_on_the_given_clip(tmp_path: Path) -> None:
    from codec.codecs import registry

    out_json = tmp_path / "survey.json"
    code, out, err = run(
        "bench",
        "--codecs",
        "all",
        "--clips",
        DATA / "acl" / "cmu_09_02.acl.sjson",
        "--json",
        out_json,
    )
    assert code == 0, err
    report = json.loads(out_json.read_text())
    row = report["clips"]["cmu_09_02"]
    assert set(row["codecs"]) == {c.name for c in registry.chosen(registry.AUTO)}
    assert all(v["strict"] for v in row["codecs"].values())
    sizes = {n: v["size"] for n, v in row["codecs"].items()}
    assert row["best"] == min(sizes, key=sizes.get)
    assert "acl-style" in out and "keyreduce" in out and f"{sizes['curve']:,}" in out
