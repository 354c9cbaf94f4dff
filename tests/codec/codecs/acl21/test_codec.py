"""acl-2.1 as a codec: the process handling around acl_compressor, tested against a stub
that plays its part (the real tool is a measuring instrument CI does not have): what it is
given, its failures, hangs and cancellation, and a codec that is unavailable without it."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from codec.codecs import acl_compressor_path, registry
from codec.codecs.acl21 import compressor
from codec.codecs.acl21.codec import CODEC, AclOutput
from codec.errors import Cancelled, CompressedFormatError, SettingsError
from codec.formats import load_clip
from codec.settings import CompressionSettings
from tests.codec.codecs.acl21.helpers import FIXTURES, acl_stats, fixture, raw_clip

STUB = """#!{python}
import json, os, shutil, sys, time
args = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
log = os.environ["STUB_LOG"]
shutil.copy(args["-acl"], log + ".input.acl.sjson")
with open(log + ".part", "w") as f:
    json.dump({{"argv": sys.argv[1:], "cwd": os.getcwd(), "pid": os.getpid(),
               "mode": os.stat(os.getcwd()).st_mode}}, f)
os.replace(log + ".part", log)  # whole when it appears
mode = os.environ["STUB_MODE"]
if mode == "fail":
    print("Error on line 3 column 4: A closing }} is expected here")
    sys.exit(255)
if mode == "hang":
    time.sleep(60)
if mode == "copy":
    shutil.copy(os.environ["STUB_OUTPUT"], args["-out"])
    shutil.copy(os.environ["STUB_STATS"], args["-stats"])
"""


@pytest.fixture
def stub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "acl_compressor"
    path.write_text(STUB.format(python=sys.executable))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("STUB_LOG", str(tmp_path / "log.json"))
    monkeypatch.setenv("STUB_OUTPUT", str(FIXTURES / "cmu_09_02.acl"))
    monkeypatch.setenv("STUB_STATS", str(FIXTURES / "cmu_09_02.acl_stats"))
    monkeypatch.setenv("STUB_MODE", "copy")
    monkeypatch.setenv(acl_compressor_path.ENV, str(path))
    return tmp_path


def log(folder: Path) -> dict:
    return json.loads((folder / "log.json").read_text())


def test_the_codec_runs_acl_compressor_on_the_tuned_clip_and_reads_its_output(stub: Path) -> None:
    clip = raw_clip("cmu_09_02.acl")
    precision = clip.skeleton.precision.copy()
    shells = clip.skeleton.shell_distance.copy()
    precision[39], shells[39] = 0.002, 5.0  # rFoot tuned
    tuned = clip.with_skeleton_settings(precision, shells)
    enc = CODEC.encode(tuned, CompressionSettings(codec="acl-2.1", level="highest"))
    seen = log(stub)
    assert "-level=highest" in seen["argv"] and any(a.startswith("-out=") for a in seen["argv"])
    # a private folder, gone afterwards
    assert stat.S_IMODE(seen["mode"]) == 0o700 and not Path(seen["cwd"]).exists()
    given = load_clip(str(stub / "log.json") + ".input.acl.sjson")  # what ACL was given
    assert given.skeleton.names == clip.skeleton.names
    assert np.array_equal(given.skeleton.parents, clip.skeleton.parents)
    assert given.skeleton.precision[39] == np.float32(0.002) and given.skeleton.precision[0] == (
        np.float32(0.01)
    )
    assert given.skeleton.shell_distance[39] == 5.0
    np.testing.assert_array_equal(given.translations, clip.translations.astype(np.float32))
    # ACL's bytes without metadata (ACL's own size), its stats, its measure
    assert len(enc.payload) == 3523 and enc.details["acl_compressed_size"] == 3523
    assert enc.details["acl_stats"]["max_error"] == acl_stats("cmu_09_02.acl")["max_error"]
    assert enc.costs is not None and enc.costs.bit_rates.shape == (1, 44, 3)
    again = CODEC.decode(enc.payload, clip.skeleton)
    np.testing.assert_array_equal(again.grid(), enc.decoder.grid())


def test_a_failing_compressor_says_what_it_said(stub: Path, monkeypatch) -> None:
    monkeypatch.setenv("STUB_MODE", "fail")
    with pytest.raises(compressor.CompressorError, match="status 255: Error on line 3"):
        CODEC.encode(raw_clip("cmu_09_02.acl"), CompressionSettings(codec="acl-2.1"))
    monkeypatch.setenv("STUB_MODE", "silent")
    with pytest.raises(compressor.CompressorError, match="wrote no output"):
        CODEC.encode(raw_clip("cmu_09_02.acl"), CompressionSettings(codec="acl-2.1"))


@pytest.mark.parametrize("how", ["timeout", "cancel"])
def test_a_hanging_compressor_is_stopped(stub: Path, monkeypatch, how: str) -> None:
    monkeypatch.setenv("STUB_MODE", "hang")
    path = os.environ[acl_compressor_path.ENV]
    start = time.monotonic()
    clip = raw_clip("cmu_09_02.acl")
    if how == "timeout":
        with pytest.raises(compressor.CompressorError, match="took more than 3 s"):
            compressor.run(clip, path, timeout=3.0)
    else:  # cancelled once the stub is running (a loaded machine starts it slowly)
        with pytest.raises(Cancelled):
            compressor.run(clip, path, cancelled=(stub / "log.json").exists)
    assert time.monotonic() - start < 20
    pid = log(stub)["pid"]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped
    assert not Path(log(stub)["cwd"]).exists()


def test_without_acl_compressor_the_codec_is_listed_as_unavailable(monkeypatch) -> None:
    monkeypatch.delenv(acl_compressor_path.ENV, raising=False)
    assert "acl-2.1" in registry.names()
    assert "no acl_compressor given" in (registry.unavailable("acl-2.1") or "")
    assert registry.unavailable("acl-style") is None
    assert "acl-2.1" not in [c.name for c in registry.chosen(registry.AUTO)]
    with pytest.raises(SettingsError, match="acl-2.1 is unavailable: no acl_compressor"):
        CODEC.encode(raw_clip("cmu_09_02.acl"), CompressionSettings(codec="acl-2.1"))
    monkeypatch.setenv(acl_compressor_path.ENV, "/nonexistent/acl_compressor")
    assert "no such file" in (registry.unavailable("acl-2.1") or "")
    monkeypatch.chdir("/")  # a relative path is kept absolute: Dask workers run elsewhere
    acl_compressor_path.configure("bin/true")
    assert acl_compressor_path.configured() == "/bin/true"


def test_an_output_file_must_match_the_clip() -> None:
    out = AclOutput(fixture("cmu_09_02.acl"), "cmu_09_02.acl")
    bvh = load_clip(Path(__file__).resolve().parents[3] / "data" / "bvh" / "makehuman_tpose.bvh")
    with pytest.raises(CompressedFormatError, match=r"cmu_09_02\.acl: ACL track '09_02' is not a"):
        out.encode(bvh, CompressionSettings(codec="acl-2.1"))
    c = raw_clip("cmu_09_02.acl")
    shorter = c.replace(
        rotations=c.rotations[:20], translations=c.translations[:20], scales=c.scales[:20]
    )
    with pytest.raises(CompressedFormatError, match="holds 26 samples, the clip 20"):
        out.encode(shorter, CompressionSettings(codec="acl-2.1"))
    with pytest.raises(CompressedFormatError, match="sampled at 24 Hz, the clip at 30 Hz"):
        out.encode(c.replace(sample_rate=30.0), CompressionSettings(codec="acl-2.1"))
