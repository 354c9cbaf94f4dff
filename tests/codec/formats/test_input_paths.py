"""One rule for every input path (codec.formats.input_paths): inside the folder it was given
in once links are resolved, compared by components; read only as a regular file, capped."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from codec.formats.input_paths import (
    InputRefused,
    described,
    inside,
    load_json,
    outside_problem,
    read_capped,
)


def test_inside_compares_components_not_string_prefixes(tmp_path: Path) -> None:
    (tmp_path / "clips").mkdir()
    (tmp_path / "clips-old").mkdir()
    assert inside(tmp_path / "clips", tmp_path / "clips" / "a" / ".." / "b.bvh")
    assert not inside(tmp_path / "clips", tmp_path / "clips-old" / "b.bvh")
    assert not inside(tmp_path / "clips", tmp_path / "clips" / ".." / "clips-old" / "b.bvh")
    assert outside_problem(tmp_path / "clips", tmp_path / "x.bvh") == (
        "is outside the folder it was given in; not read"
    )


def test_links_are_resolved_both_ways(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "secret").write_text("x")
    os.symlink(tmp_path / "elsewhere" / "secret", tmp_path / "lib" / "out.bvh")
    os.symlink(tmp_path / "lib" / "real.bvh", tmp_path / "lib" / "in.bvh")
    assert "a symbolic link to a file outside the library" in outside_problem(
        tmp_path / "lib", tmp_path / "lib" / "out.bvh", "the library"
    )
    assert outside_problem(tmp_path / "lib", tmp_path / "lib" / "in.bvh") is None
    os.symlink(tmp_path / "lib", tmp_path / "link-to-lib")  # a folder given through a link
    assert inside(tmp_path / "link-to-lib", tmp_path / "link-to-lib" / "in.bvh")


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind", ["fifo", "device", "folder", "too large", "missing"])
def test_read_capped_reads_only_a_regular_file_within_its_cap(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "entry.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        os.symlink("/dev/zero", path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "too large":
        with open(path, "wb") as f:
            f.truncate(5 << 20)
    with pytest.raises(InputRefused) as info:
        read_capped(path, 4 << 20, "cache entry")
    assert {"fifo": "regular file", "device": "regular file", "folder": "folder",
            "too large": "larger than any cache entry (4 MiB at most)",
            "missing": "no such file"}[kind] in str(info.value)  # fmt: skip


def test_a_fifo_that_appears_after_the_check_does_not_block(tmp_path: Path) -> None:
    """The open is non-blocking and the descriptor checked again: a FIFO swapped in between
    is refused, never waited on."""
    path = tmp_path / "entry.json"
    path.write_text("{}")
    real_open = os.open

    def swap(*args, **kwargs):  # the race, made certain
        path.unlink()
        os.mkfifo(path)
        return real_open(*args, **kwargs)

    done: list[BaseException] = []

    def run() -> None:
        os.open = swap  # type: ignore[assignment]
        try:
            read_capped(path, 1024)
        except InputRefused as e:
            done.append(e)
        finally:
            os.open = real_open  # type: ignore[assignment]

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(10)
    assert done and "regular file" in str(done[0])


@pytest.mark.parametrize(
    ("text", "place", "words"),
    [
        ('{"a": ' + "1" * 4000 + "}", "line 1 column 7", "a number of 4,000 digits"),
        ('{\n "a": -' + "9" * 5000 + "}", "line 2 column 8", "5,000 digits"),
        ("[" * 200_000 + "]" * 200_000, "top level", "nested too deeply"),
        ('{"a": 1,}', "line 1 column 9", "Expecting property name"),
    ],
)
def test_load_json_names_the_place_of_what_no_setting_holds(text, place, words) -> None:
    with pytest.raises(InputRefused) as info:
        load_json(text.encode())
    assert info.value.place == place and words in info.value.reason


def test_load_json_reads_what_a_setting_holds() -> None:
    data = load_json(b'{"p": 0.01, "n": ' + b"9" * 300 + b', "x": NaN}')
    assert data["p"] == 0.01 and data["n"] == int("9" * 300) and data["x"] != data["x"]


def test_described_names_only_the_formats_own_words() -> None:
    assert described("HIERARCHY", ("HIERARCHY",)) == "'HIERARCHY'"
    assert described("root:$6$x") == "other text (9 characters)"
    assert described("1e5") == "a number"
    assert described("") == "nothing"
