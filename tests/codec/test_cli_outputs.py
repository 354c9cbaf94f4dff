"""`python -m codec`'s outputs: checked before any work, written together only when the
whole run succeeded, never over an input, no temp file left; exit codes 0 / 1 / 2 with one
line on stderr naming the user's path."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import codec
from codec.cli import main
from tests.codec.formats import hostile_files as hf

DATA = Path(__file__).resolve().parents[1] / "data"
CLIP = DATA / "acl" / "cmu_09_02.acl.sjson"
ROOT = Path(__file__).resolve().parents[2]


def run(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def one_line(err: str, *needles: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    shutil.copy(CLIP, tmp_path / "clip.acl.sjson")
    (tmp_path / "out.ssc").write_bytes(b"old ssc")
    (tmp_path / "s.json").write_text("old json")
    return tmp_path


def test_a_later_output_that_cannot_be_written_stops_the_run_before_any_write(work: Path) -> None:
    before = listing(work)
    code, out, err = run(
        "compress",
        work / "clip.acl.sjson",
        "-o",
        work / "out.ssc",
        "--json",
        work / "nodir" / "s.json",
    )
    assert code == 2 and out == ""
    one_line(err, f"{work / 'nodir' / 's.json'}: cannot write", "no such folder")
    assert listing(work) == before


@pytest.mark.parametrize(
    "args",
    [
        ["compress", "{ssc}", "-o", "{ssc}"],
        ["compress", "{clip}", "-o", "{link}"],
        ["info", "{ssc}", "--json", "{ssc}"],
        ["decompress", "{gssc}", "-o", "{glb}", "--source", "{glb}"],
        ["decompress", "{gssc}", "-o", "{glb}"],  # the source found beside the .ssc
        ["stats", "{dir}", "--csv", "{clip}"],
    ],
)
def test_an_output_onto_an_input_is_refused(work: Path, args: list[str]) -> None:
    ssc = work / "real.ssc"
    ssc.write_bytes(codec.compress(codec.load_clip(CLIP)).data)
    shutil.copy(DATA / "gltf" / "RiggedSimple.glb", work / "rs.glb")
    (work / "rs.ssc").write_bytes(codec.compress(codec.load_clip(work / "rs.glb")).data)
    os.symlink(work / "clip.acl.sjson", work / "link.ssc")  # the clip under another name
    names = {
        "ssc": ssc,
        "clip": work / "clip.acl.sjson",
        "link": work / "link.ssc",
        "dir": work,
        "gssc": work / "rs.ssc",
        "glb": work / "rs.glb",
    }
    before = listing(work)
    code, _, err = run(*[a.format(**names) for a in args])
    assert code == 2
    one_line(err, "is the input file", "refusing to overwrite it")
    assert listing(work) == before


def test_two_outputs_that_are_one_file_are_refused(work: Path) -> None:
    before = listing(work)
    code, _, err = run(
        "compress", work / "clip.acl.sjson", "-o", work / "out.ssc", "--json", work / "out.ssc"
    )
    assert code == 2
    one_line(err, "given twice as an output")
    assert listing(work) == before


@pytest.mark.parametrize("name", ["gltf_far_key", "bvh_value_beyond_float32", "ssc_shell_huge"])
def test_a_hostile_input_writes_nothing(work: Path, name: str) -> None:
    build, words = hf.CASES[name]
    folder = work / "in"
    folder.mkdir()
    path = build(folder)
    before = listing(work)
    code, _, err = run("compress", path, "-o", work / "out.ssc", "--json", work / "s.json")
    assert code == 2
    one_line(err, str(path), words[0])
    assert listing(work) == before


def test_a_run_that_fails_on_valid_input_exits_1_and_writes_nothing(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import codec.compression

    real = codec.compression.compress

    def broken(clip, settings, **kw):  # type: ignore[no-untyped-def]
        result = real(clip, settings, **kw)
        result.stats["max_error"] = float("nan")
        return result

    monkeypatch.setattr(codec.compression, "compress", broken)
    before = listing(work)
    code, out, err = run(
        "compress", work / "clip.acl.sjson", "-o", work / "out.ssc", "--json", work / "s.json"
    )
    assert code == 1 and out == ""
    one_line(err, "failed:", "max error is nan, not a finite number", "nothing written")
    assert listing(work) == before

    monkeypatch.setattr(
        codec.compression,
        "compress",
        lambda *a, **k: (_ for _ in ()).throw(RuntimeError("bug")),
    )
    code, _, err = run("compress", work / "clip.acl.sjson", "-o", work / "out.ssc")
    assert code == 1
    one_line(err, "internal error (RuntimeError: bug)")
    assert listing(work) == before


def test_a_successful_run_writes_every_output(work: Path) -> None:
    code, out, err = run(
        "compress", work / "clip.acl.sjson", "-o", work / "out.ssc", "--json", work / "s.json"
    )
    assert code == 0, err
    assert (work / "out.ssc").read_bytes()[:4] == b"SSCF"
    assert (work / "s.json").read_text().startswith("{")
    assert sorted(p.name for p in work.iterdir()) == ["clip.acl.sjson", "out.ssc", "s.json"]


@pytest.mark.parametrize(
    ("flag", "value", "words"),
    [
        ("--shell-distance", "1e308", "--shell-distance: 1e+308 is out of range"),
        ("--precision", "1e39", "--precision: 1e+39 is out of range"),
        ("--sample-rate", "1e9", "--sample-rate: 1e+09 Hz is outside"),
    ],
)
def test_settings_the_codec_cannot_hold_exit_2(flag: str, value: str, words: str) -> None:
    code, out, err = run("compress", CLIP, flag, value)
    assert code == 2 and out == ""
    one_line(err, words)


def test_an_output_folder_that_is_a_file_or_a_folder_target(work: Path) -> None:
    code, _, err = run("compress", work / "clip.acl.sjson", "-o", work / "clip.acl.sjson" / "x.ssc")
    assert code == 2
    one_line(err, "x.ssc: cannot write: no such folder")
    (work / "d.ssc").mkdir()
    code, _, err = run("compress", work / "clip.acl.sjson", "-o", work / "d.ssc")
    assert code == 2
    one_line(err, "d.ssc: cannot write: is a folder")


def _catches_sigterm(pid: int) -> bool:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    return False


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("sig", "delay"),
    [(signal.SIGTERM, 0.1), (signal.SIGKILL, 0.1), (signal.SIGKILL, 0.4), (signal.SIGKILL, 0.8)],
)
def test_a_cli_killed_mid_run_leaves_whole_files_and_no_temp_file(
    work: Path, sig: signal.Signals, delay: float
) -> None:
    """Killed at some point of its run: each output is the old file or the whole new one,
    and nothing else appears (a write interrupted inside codec.formats.atomic at a chosen moment is
    tests/codec/formats/test_atomic.py's)."""
    shutil.copy(DATA / "acl" / "cmu_13_07.acl.sjson.xz", work / "long.acl.sjson.xz")
    before = listing(work)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "codec",
            "compress",
            "long.acl.sjson.xz",
            "-o",
            "out.ssc",
            "--json",
            "s.json",
            "--level",
            "highest",
        ],
        cwd=work,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.monotonic() + 30
    while not _catches_sigterm(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.01)  # until main() has set its handlers (the imports come first)
    time.sleep(delay)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    after = listing(work)
    assert sorted(after) == sorted(before)  # no temp file, nothing new
    if proc.returncode == 0:  # it had finished before the signal came
        return
    assert proc.returncode in (-signal.SIGKILL, 128 + signal.SIGTERM), err
    if sig == signal.SIGTERM:
        one_line(err.decode(), "python -m codec compress: terminated")
    for name in ("out.ssc", "s.json"):
        if after[name] != before[name]:  # killed between the renames: the whole new file
            assert codec.decode(after[name]) if name == "out.ssc" else json.loads(after[name])


@pytest.mark.timeout(30)
@pytest.mark.parametrize("command", ["info", "decompress"])
def test_a_fifo_named_like_an_ssc_is_refused_without_blocking(tmp_path: Path, command: str) -> None:
    os.mkfifo(tmp_path / "x.ssc")
    extra = ["-o", tmp_path / "x.bvh"] if command == "decompress" else []
    code, _, err = run(command, tmp_path / "x.ssc", *extra)
    assert code == 2
    one_line(err, "x.ssc: is not a regular file")


@pytest.mark.parametrize("kind", ["device", "fifo", "socket", "folder", "dangling link"])
def test_json_over_a_node_that_is_not_a_regular_file_is_refused(work: Path, kind: str) -> None:
    """A rename would replace the node with a regular file (it once turned /dev/full into
    one): --json and -o refuse it in one line and the node stays what it was."""
    import socket
    import stat

    target = work / "node"
    if kind == "device":
        target = Path("/dev/null")
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(target))
    elif kind == "folder":
        target.mkdir()
    else:
        target.symlink_to(work / "nothing.json")
    mode = os.lstat(target).st_mode
    code, _, err = run("compress", work / "clip.acl.sjson", "--json", target)
    assert code == 2
    one_line(err, f"{target}: ")
    assert os.lstat(target).st_mode == mode
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_link_to_a_regular_file_writes_the_file_and_keeps_the_link(work: Path) -> None:
    (work / "link.json").symlink_to(work / "s.json")
    code, _, err = run("compress", work / "clip.acl.sjson", "--json", work / "link.json")
    assert code == 0, err
    assert (work / "link.json").is_symlink()
    assert json.loads((work / "s.json").read_text())["compressed_size"] > 0
