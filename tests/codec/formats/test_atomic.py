"""codec.formats.atomic: a file is written whole or not at all, a run's files all or none, and no
temporary file survives a failure, an interruption or a writer killed outright."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from codec.formats import atomic

ROOT = Path(__file__).resolve().parents[3]

WRITER = """
import signal, sys, time
from codec.formats import atomic
# Ctrl-C's default, whatever the test runner inherited: a shell without job control starts
# background jobs with SIGINT ignored, and an ignored SIGINT stays ignored in the child
signal.signal(signal.SIGINT, signal.default_int_handler)
atomic.UNNAMED = {unnamed}
with atomic.exit_cleanly_on_signals(), atomic.all_or_none():
    atomic.write_text(sys.argv[1], "first new\\n")
    with atomic.atomic_open(sys.argv[2]) as f:
        f.write("second new\\n" * 100_000)
        f.flush()
        print("writing", flush=True)
        time.sleep(60)
"""


def _listing(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text()[:20] for p in sorted(folder.iterdir())}


def _start_writer(folder: Path, unnamed: bool) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER.format(unnamed=unnamed), "a.txt", "b.txt"],
        cwd=folder,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"writing\n"
    return proc


@pytest.mark.timeout(60)
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_a_writer_killed_mid_write_leaves_the_old_files_and_nothing_else(
    tmp_path: Path, sig: signal.Signals
) -> None:
    (tmp_path / "a.txt").write_text("first old\n")
    (tmp_path / "b.txt").write_text("second old\n")
    proc = _start_writer(tmp_path, unnamed=atomic.UNNAMED)
    proc.send_signal(sig)
    proc.wait(30)
    assert proc.returncode != 0
    assert _listing(tmp_path) == {"a.txt": "first old\n", "b.txt": "second old\n"}


@pytest.mark.timeout(60)
def test_named_temp_files_go_on_signals_and_a_killed_writers_at_the_next_write(
    tmp_path: Path,
) -> None:
    """Where the temp file must have a name (no O_TMPFILE), SIGTERM still removes it; one
    left by SIGKILL is removed by the next write of the same file."""
    (tmp_path / "b.txt").write_text("second old\n")
    proc = _start_writer(tmp_path, unnamed=False)
    names = {p.name for p in tmp_path.iterdir()}
    assert len(names) == 3  # b.txt and the two hidden temp files: a named temp is used
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    assert proc.returncode == 128 + signal.SIGTERM
    assert _listing(tmp_path) == {"b.txt": "second old\n"}

    proc = _start_writer(tmp_path, unnamed=False)
    proc.kill()
    proc.wait(30)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert len(left) == 3 and all(n.endswith(".tmp") for n in left if n != "b.txt")
    atomic.write_text(tmp_path / "b.txt", "third\n")
    atomic.write_text(tmp_path / "a.txt", "first\n")
    assert _listing(tmp_path) == {"a.txt": "first\n", "b.txt": "third\n"}


def test_all_or_none_writes_nothing_when_the_block_fails(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old")
    with pytest.raises(RuntimeError), atomic.all_or_none():
        atomic.write_text(tmp_path / "a.txt", "new")
        atomic.write_bytes(tmp_path / "b.bin", b"new")
        assert (tmp_path / "a.txt").read_text() == "old"  # staged, not yet in place
        raise RuntimeError("the run failed after its first outputs")
    assert _listing(tmp_path) == {"a.txt": "old"}


def test_all_or_none_writes_nothing_when_one_output_cannot_be_written(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old")
    with pytest.raises(OSError) as info, atomic.all_or_none():
        atomic.write_text(tmp_path / "a.txt", "new")
        atomic.write_text(tmp_path / "nodir" / "s.json", "{}")
    assert info.value.filename == str(tmp_path / "nodir" / "s.json")  # the user's path
    assert _listing(tmp_path) == {"a.txt": "old"}


def test_all_or_none_puts_every_file_in_place_at_the_end(tmp_path: Path) -> None:
    with atomic.all_or_none():
        atomic.write_text(tmp_path / "a.txt", "A")
        with atomic.atomic_open(tmp_path / "b.bin", "wb") as f:
            f.write(b"B")
        assert not (tmp_path / "a.txt").exists()
    assert _listing(tmp_path) == {"a.txt": "A", "b.bin": "B"}


def test_the_same_file_twice_in_one_run_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="written twice"), atomic.all_or_none():
        atomic.write_text(tmp_path / "a.txt", "1")
        atomic.write_text(tmp_path / "a.txt", "2")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("unnamed", [True, False])
def test_a_failed_write_names_the_users_path_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unnamed: bool
) -> None:
    monkeypatch.setattr(atomic, "UNNAMED", unnamed and atomic.UNNAMED)
    target = tmp_path / "out.txt"
    target.write_text("old")

    with pytest.raises(OSError) as info, atomic.atomic_open(target) as f:
        f.write("half")
        raise OSError(28, "No space left on device")
    assert info.value.filename == str(target) and info.value.strerror.startswith("No space")
    assert _listing(tmp_path) == {"out.txt": "old"}


def test_new_files_get_the_usual_permissions(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        atomic.write_text(tmp_path / "a.txt", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o644


def test_a_stale_temp_of_a_live_process_is_kept(tmp_path: Path) -> None:
    mine = tmp_path / f".a.txt.{os.getpid()}-0123abcd.tmp"
    mine.write_text("being written")
    other = tmp_path / ".a.txt.notours.tmp"
    other.write_text("not ours")
    atomic.write_text(tmp_path / "a.txt", "x")
    assert mine.exists() and other.exists()


def test_a_device_fifo_or_folder_is_never_replaced(tmp_path: Path) -> None:
    """Every write refuses a node that is not a regular file, naming the user's path."""
    import stat

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "to_null"
    link.symlink_to("/dev/null")
    for target in (Path("/dev/null"), fifo, tmp_path, link):
        with pytest.raises(OSError) as info:
            atomic.write_text(target, "x")
        assert info.value.filename == str(target)
        assert atomic.target_problem(target)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and link.is_symlink()
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_symlink_to_a_regular_file_is_followed(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    atomic.write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
