"""codec.formats.reader_zygote: every file is read in a process of its own, forked from one
zygote per reader module: a crash ends that reader only, a file changed on disk between two
reads is read afresh (nothing of an earlier read is kept), and a zygote that died is started
again."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from codec.errors import ClipFormatError
from codec.formats import load_clip
from codec.formats.reader_process import run_reader
from codec.formats.reader_zygote import Zygote, live_zygotes
from tests.codec.formats import hostile_files as hf

MODULE = "tests.codec.formats.misbehaving_reader"


def _zygote(module: str) -> Zygote:
    (z,) = [z for z in live_zygotes() if z.module == module]
    return z


def _crash(path: Path) -> None:
    with pytest.raises(ClipFormatError, match="crashed while reading clip.usdc: SIGSEGV"):
        run_reader(path, None, {"how": "segv"}, module=MODULE, library="usd-core")


def test_a_crash_ends_its_reader_and_the_zygote_forks_the_next(tmp_path: Path) -> None:
    path = tmp_path / "clip.usdc"
    path.write_bytes(b"x")
    _crash(path)
    zygote = _zygote(MODULE)
    _crash(path)
    assert _zygote(MODULE) is zygote and zygote.alive()
    assert not list(zygote.folder.iterdir())  # each reader's TMPDIR went with it


def test_a_usd_file_changed_on_disk_is_read_afresh(tmp_path: Path) -> None:
    path = hf.usda_text(tmp_path, "clip.usda", last=2)
    assert load_clip(path).num_samples == 3
    hf.usda_text(tmp_path, "clip.usda", last=5)
    assert load_clip(path).num_samples == 6


def test_a_zygote_that_died_is_started_again(tmp_path: Path) -> None:
    path = hf.usda_text(tmp_path, "clip.usda")
    load_clip(path)
    zygote = _zygote("codec.formats.usd_worker")
    zygote.proc.send_signal(signal.SIGKILL)
    zygote.proc.wait()
    assert load_clip(path).num_samples == 3
    again = _zygote("codec.formats.usd_worker")
    assert again is not zygote and again.alive()


@pytest.mark.timeout(60)
def test_an_idle_zygote_ends_and_the_next_file_starts_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A zygote gives its memory back after IDLE_S without a request; a read after it (and
    one sent just as it ends) is served by a new one."""
    from codec.formats import reader_zygote

    path = tmp_path / "clip.usdc"
    path.write_bytes(b"x")
    for z in live_zygotes():
        if z.module == MODULE:
            z.close()
    monkeypatch.setattr(reader_zygote, "IDLE_S", 1.0)
    _crash(path)
    zygote = _zygote(MODULE)
    assert zygote.proc.wait(10.0) == 0  # ended by itself, idle
    assert not zygote.folder.exists()
    _crash(path)
    again = _zygote(MODULE)
    assert again is not zygote and again.alive()
    for _ in range(5):  # requests landing just as the zygote times out
        time.sleep(0.95)
        _crash(path)
