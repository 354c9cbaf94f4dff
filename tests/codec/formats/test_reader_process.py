"""codec.formats.reader_process on real misbehaving children (tests.codec.formats.
misbehaving_reader) and on the real readers: a crash, an abort, a runaway allocation or a
hang of the child is one line naming the file, its stderr noise stays out of the message,
and the memory and time limits hold."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from codec.errors import ClipFormatError
from codec.formats import load_clip
from codec.formats.reader_process import run_reader, useful_noise
from codec.formats.reader_zygote import readers_usage
from codec.model import limits
from tests.codec.formats import hostile_files as hf

MODULE = "tests.codec.formats.misbehaving_reader"


def _refusal(tmp_path: Path, how: str, **kwargs: object) -> str:
    path = tmp_path / "clip.usdc"
    path.write_bytes(b"x")
    with pytest.raises(ClipFormatError) as info:
        run_reader(path, None, {"how": how}, module=MODULE, library="usd-core", **kwargs)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message, message
    assert "_ReportErrors" not in message  # the child's 2,000 lines of noise stay out
    return message


def test_a_segfault_names_the_file_and_the_signal(tmp_path: Path) -> None:
    message = _refusal(tmp_path, "segv")
    assert message.endswith("usd-core crashed while reading clip.usdc: SIGSEGV")


def test_an_abort_carries_the_fatal_error_reason(tmp_path: Path) -> None:
    message = _refusal(tmp_path, "abort")
    assert message.endswith(
        "usd-core crashed while reading clip.usdc: SIGABRT (Dereferenced an invalid SdfPrimSpec)"
    )


@pytest.mark.timeout(60)
def test_a_runaway_allocation_is_stopped_near_the_memory_limit(tmp_path: Path) -> None:
    before = readers_usage()[1]
    message = _refusal(tmp_path, "grow")
    assert "usd-core needed more than 400 MB of memory" in message or "out of memory" in message
    peak = readers_usage()[1]  # the readers' RUSAGE_CHILDREN (they are the zygote's children)
    if peak > before:  # this child set the record: it is the child's own peak
        assert peak / 1024 < 500, f"{peak / 1024:.0f} MB"


@pytest.mark.timeout(60)
def test_a_hang_is_stopped_after_the_time_limit(tmp_path: Path) -> None:
    start = time.monotonic()
    message = _refusal(tmp_path, "sleep", seconds=1.0)
    assert message.endswith("usd-core took over 1 s; it was stopped")
    assert time.monotonic() - start < 10


def test_limits_scale_with_the_file_but_stay_bounded() -> None:
    assert limits.reader_memory(0) == limits.FREE_READER_MEMORY
    assert limits.reader_memory(1 << 40) == limits.MAX_READER_MEMORY
    assert limits.reader_seconds(1 << 40) == limits.MAX_READER_SECONDS
    assert limits.declared_bytes_budget(1000) == limits.FREE_DECLARED_BYTES + 16_000


def test_useful_noise_keeps_a_parse_error_and_drops_banners() -> None:
    noise = (
        "Warning: in _ReportErrors at line 3326 of stage.cpp -- whatever\n"
        "\tError in 'x::_RaiseErrorPEGTL' at line 48 in file t.h : '/a/b.usda:7:1: parse "
        "error matching pxrInternal_v0_26_11__pxrReserved__::Sdf_TextFileFormatParser::"
        "ListValueClose at '}' in </a.x>\n"
    )
    assert useful_noise(noise) == "line 7, column 1: expected ListValueClose at '}' in </a.x>"
    assert useful_noise("Warning: in _ReportErrors at line 1 of stage.cpp -- x\n") == ""


@pytest.mark.parametrize("name", ["usd_nested_xforms", "usd_crate_invalid_spec"])
def test_real_usd_crashes_are_one_line(name: str, tmp_path: Path) -> None:
    build, words = hf.NATIVE_CASES[name]
    path = build(tmp_path)
    with pytest.raises(ClipFormatError) as info:
        load_clip(path)
    assert "\n" not in str(info.value)
    for word in words:
        assert word in str(info.value)


def test_a_valid_clip_still_reads_through_the_child() -> None:
    clip = load_clip(hf.HOSTILE_DATA.parent / "usd" / "CesiumMan.usdz")
    assert (clip.num_joints, clip.num_samples, len(clip.meshes)) == (19, 48, 1)


@pytest.mark.timeout(60)
def test_without_a_warm_start_each_file_gets_a_fresh_interpreter_and_the_same_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the platform cannot fork a zygote's reader (no pidfds: macOS), the reader is a
    fresh `python -m module` with the same limits and messages, its TMPDIR removed."""
    import tempfile

    from codec.formats import reader_zygote

    monkeypatch.setattr(reader_zygote, "WARM_START", False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    zygotes, usage = reader_zygote.live_zygotes(), readers_usage()
    spawned = tmp_path / "files"
    spawned.mkdir()
    assert _refusal(spawned, "segv").endswith("usd-core crashed while reading clip.usdc: SIGSEGV")
    assert _refusal(spawned, "abort").endswith("(Dereferenced an invalid SdfPrimSpec)")
    assert _refusal(spawned, "sleep", seconds=1.0).endswith(
        "usd-core took over 1 s; it was stopped"
    )
    clip = load_clip(hf.HOSTILE_DATA.parent / "usd" / "CesiumMan.usdz")
    assert (clip.num_joints, clip.num_samples, len(clip.meshes)) == (19, 48, 1)
    assert reader_zygote.live_zygotes() == zygotes  # none started for these reads
    assert readers_usage() == usage  # and no zygote's reader ran them
    assert [p.name for p in tmp_path.iterdir()] == ["files"]  # every reader's TMPDIR removed
