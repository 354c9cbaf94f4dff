"""The one check of every output (codec.formats.output_paths) and atomic writes of long names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codec.formats import atomic
from codec.formats.output_paths import SIDECAR_SUFFIX, output_problem, outputs_problem
from codec.sidecar import SUFFIX


def test_the_sidecar_suffix_is_the_sidecars() -> None:
    assert SIDECAR_SUFFIX == SUFFIX


def test_an_output_is_never_an_input_a_sidecar_or_a_node(tmp_path: Path) -> None:
    clip = tmp_path / "walk.bvh"
    clip.write_text("x")
    os.link(clip, tmp_path / "hard.bvh")
    os.symlink(clip, tmp_path / "soft.bvh")
    os.mkfifo(tmp_path / "pipe.png")
    cases = {
        clip: "is the input file",
        tmp_path / "hard.bvh": "is the input file",
        tmp_path / "soft.bvh": "is the input file",
        tmp_path / "walk.bvh.shellscope.json": "is a tuning sidecar",
        tmp_path / "other.glb.SHELLSCOPE.JSON": "is a tuning sidecar",
        tmp_path / "pipe.png": "not a regular file",
        Path("/dev/null"): "not a regular file",
        tmp_path: "is a folder",
        tmp_path / "new" / "shot.png": "no such folder",
        tmp_path / ("x" * 252 + ".png"): "the file name is 256 bytes long",
    }
    for path, words in cases.items():
        problem = output_problem(path, [clip])
        assert problem and words in problem, (path, problem)
    assert output_problem(tmp_path / "shot.png", [clip]) is None
    assert not (tmp_path / "new").exists()


def test_two_outputs_that_are_one_file_are_refused(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    problem = outputs_problem([str(a), "-", None, str(tmp_path / "." / "a.json")], [])
    assert problem == f"{tmp_path / '.' / 'a.json'}: given twice as an output (also as {a})"


@pytest.mark.parametrize("unnamed", [True, False])
def test_a_name_the_file_system_takes_is_written_whatever_its_length(
    tmp_path: Path, unnamed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 245-byte name: its temp file's name would pass 255 bytes; it is shortened."""
    monkeypatch.setattr(atomic, "UNNAMED", unnamed)
    target = tmp_path / ("é" * 120 + "x.ssc")
    assert len(os.fsencode(target.name)) == 245
    atomic.write_text(target, "whole")
    assert target.read_text() == "whole" and os.listdir(tmp_path) == [target.name]
