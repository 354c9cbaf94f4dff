"""`python -m codec library` through codec.cli.main: outputs, --compare, --sweep, bad input."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

from codec.cli import main
from codec.library.rows import COLUMNS

DATA = Path(__file__).resolve().parents[2] / "data"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["library", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


def test_outputs_of_a_run_from_the_cache(library_dir, embedded, row_cache, tmp_path):
    j, c, h = tmp_path / "lib.json", tmp_path / "lib.csv", tmp_path / "lib.html"
    code, out, err = run(
        str(library_dir), "--cache", str(row_cache), "--json", str(j), "--csv", str(c),
        "--report", str(h),
    )  # fmt: skip
    assert code == 0, err
    assert "6 from the cache, 0 computed" in err  # no cluster was needed
    assert "8 clips: 5 compressed, 3 errors" not in out  # Fox is 3 rows, 2 files fail
    assert "8 clips: 6 compressed, 2 errors, 0 missed their precision" in out
    assert "broken/truncated.bvh" in out
    with open(c, newline="") as f:
        table = list(csv.reader(f))
    assert tuple(table[0]) == (*COLUMNS, "settings") and len(table) == 9
    data = json.loads(j.read_text())
    assert data["format"] == "shellscope-library" and data["totals"]["clips"] == 8
    assert [(r["path"], r["animation"]) for r in data["rows"]] == [
        (r["path"], r["animation"]) for r in embedded.rows
    ]
    page = h.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 3


def test_compare_lists_regressions_first(library_dir, embedded, row_cache, tmp_path):
    old_rows = [dict(r) for r in embedded.rows]
    walk = next(r for r in old_rows if r["animation"] == "Walk")
    walk["compressed_size"] -= 100  # it grew since
    rig = next(r for r in old_rows if r["path"] == "gltf/RiggedSimple.glb")
    rig["compressed_size"] += 50  # it shrank since
    old_rows = [r for r in old_rows if r["animation"] != "Run"]  # new since
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"format": "shellscope-library", "rows": old_rows}))
    new = tmp_path / "new.json"
    code, out, err = run(
        str(library_dir), "--cache", str(row_cache), "--compare", str(old), "--json", str(new)
    )
    assert code == 0, err
    entries = json.loads(new.read_text())["compare"]
    assert [(e["status"], e["animation"]) for e in entries[:3]] == [
        ("regressed", "Walk"),
        ("improved", "animation_0"),
        ("new", "Run"),
    ]
    assert entries[0]["size_change"] == 100
    lines = out.split("compared with", 1)[1].splitlines()
    assert "1 regressed, 1 improved, 1 new, 0 gone" in lines[0]
    assert lines[1].split()[0] == "regressed"


def test_sweep_reports_each_precision(cluster, tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(DATA / "gltf" / "RiggedSimple.glb", lib)
    shutil.copy(DATA / "acl" / "cmu_81_16_two_samples.acl.sjson", lib)
    address = cluster.client.scheduler.address  # --scheduler: the tests' own cluster
    code, out, err = run(str(lib), "--sweep", "0.05,0.002", "--scheduler", address,
                         "--no-cache", "--csv", "-")  # fmt: skip
    assert code == 0, err
    table = list(csv.DictReader(io.StringIO(out)))
    assert [r["sweep_precision"] for r in table] == ["0.05", "0.05", "0.002", "0.002"]
    size = {p: sum(int(r["compressed_size"]) for r in table if r["sweep_precision"] == p)
            for p in ("0.05", "0.002")}  # fmt: skip
    assert size["0.002"] > size["0.05"]
    assert all(float(r["precision"]) == float(r["sweep_precision"]) for r in table)


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    code, _, err = run(str(tmp_path / "nowhere"))
    assert code == 2 and "nowhere: no such file or folder" in err
    code, _, err = run(str(tmp_path), "--sweep", "0.01,fine")
    assert code == 2 and "--sweep: 'fine' is not a number" in err
    (tmp_path / "a.bvh").write_text("HIERARCHY\n")
    bad = tmp_path / "old.json"
    bad.write_text("[1, 2")
    code, _, err = run(str(tmp_path), "--compare", str(bad))
    assert code == 2 and "old.json: not a library JSON" in err and err.count("\n") == 1
