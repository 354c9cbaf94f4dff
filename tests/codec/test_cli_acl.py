"""The command line's ACL 2.1: `stats RAW --acl-output FILE.acl --json`, `codecs` saying
when acl-2.1 cannot run, `compress --codec acl-2.1` without acl_compressor, `.acl` opened
as a clip."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

from codec.cli import main
from codec.codecs import acl_compressor_path
from codec.formats import load_clip, sjson

DATA = Path(__file__).resolve().parents[1] / "data"
RAW = DATA / "acl" / "cmu_09_02.acl.sjson"
ACL = DATA / "acl21" / "cmu_09_02.acl"


def run(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_stats_measures_acls_output_against_its_raw_clip(tmp_path: Path) -> None:
    out_json = tmp_path / "acl.json"
    code, out, err = run("stats", RAW, "--acl-output", ACL, "--json", out_json)
    assert code == 0, err
    s = json.loads(out_json.read_text())
    theirs = sjson.parse(ACL.with_suffix(".acl_stats").read_text())["runs"][0]
    assert s["codec"] == "acl-2.1" and s["num_bones"] == 44 and s["num_samples"] == 26
    assert s["acl_measure"]["max_error"] == theirs["max_error"]  # ACL's own number, to the bit
    assert s["acl_compressed_size"] == 3523 and s["acl_file_size"] == theirs["compressed_size"]
    assert s["worst_track_name"] == "rFoot" and s["sub_tracks"]["rotation"]["animated"] == 17
    assert "ACL's measure" in out and "0.0106768 cm at rFoot" in out


def test_stats_with_acl_output_refuses_what_does_not_fit(tmp_path: Path) -> None:
    code, _, err = run("stats", RAW, RAW, "--acl-output", ACL)
    assert code == 2 and "exactly one clip" in err
    bvh = DATA / "bvh" / "makehuman_tpose.bvh"
    code, _, err = run("stats", bvh, "--acl-output", ACL)
    assert code == 2 and "is not a joint of the clip" in err and "Traceback" not in err
    broken = tmp_path / "broken.acl"
    broken.write_bytes(ACL.read_bytes()[:100])
    code, _, err = run("stats", RAW, "--acl-output", broken)
    assert code == 2 and "broken.acl" in err and "header says 6316 bytes" in err


def test_acl_2_1_without_acl_compressor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(acl_compressor_path.ENV, raising=False)
    code, out, err = run("codecs")
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("acl-2.1"))
    assert "[unavailable: no acl_compressor given" in line
    code, _, err = run("compress", RAW, "--codec", "acl-2.1")
    assert code == 2 and "--codec acl-2.1 is unavailable" in err
    code, _, err = run("compress", RAW, "--codec", "acl-2.1", "--acl-compressor", "/no/such")
    assert code == 2 and "/no/such: no such file" in err


def test_an_acl_file_opens_as_the_clip_it_decodes_to() -> None:
    clip = load_clip(ACL)
    raw = load_clip(RAW)
    assert clip.skeleton.names == raw.skeleton.names and clip.num_samples == 26
    assert np.array_equal(clip.skeleton.parents, raw.skeleton.parents)
    assert np.abs(clip.translations - raw.translations).max() < 0.01
    assert clip.units is not None and "ACL's compressed tracks" in clip.units.reason
