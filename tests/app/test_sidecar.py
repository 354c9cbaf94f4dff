"""The sidecar round trip and its error messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codec.sidecar import (
    SidecarError,
    load_sidecar,
    read_sidecar_file,
    save_sidecar,
    sidecar_path,
    sidecar_text,
)
from codec.tuning import GlobalSettings, JointOverride

RULES = (
    JointOverride("*Hand*", precision=0.001),
    JointOverride("root", shell_distance=20.0, rounding="floor"),
    JointOverride("*IK*", precision=0.5, shell_distance=1.0, rounding="nearest"),
)


def test_sidecar_sits_beside_the_clip_under_its_whole_name(tmp_path: Path) -> None:
    assert sidecar_path(tmp_path / "walk.acl.sjson") == tmp_path / "walk.acl.sjson.shellscope.json"


def test_round_trip(tmp_path: Path) -> None:
    clip = tmp_path / "walk.bvh"
    settings = GlobalSettings(precision=0.002, shell_distance=5.0, level="high")
    written = save_sidecar(clip, settings, RULES)
    assert written == sidecar_path(clip)
    assert load_sidecar(clip) == (settings, RULES)
    data = json.loads(written.read_text())
    assert data["clip"] == "walk.bvh" and data["overrides"][0] == {
        "pattern": "*Hand*",
        "precision": 0.001,
    }
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_no_sidecar_means_nothing_to_apply(tmp_path: Path) -> None:
    assert load_sidecar(tmp_path / "x.bvh") == (None, ())


def test_a_bare_rule_list_is_an_overrides_file(tmp_path: Path) -> None:
    f = tmp_path / "rules.json"
    f.write_text('[{"pattern": "*Hand*", "precision": 0.001}]')
    assert read_sidecar_file(f) == (None, (JointOverride("*Hand*", precision=0.001),))


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ('{"overrides": [\n  {"pattern": "a",}\n]}', "line 2 column 19"),
        ('{"overrides": [{"pattern": "a"}, {"pattern": "b", "precision": -1}]}', "overrides[1]"),
        ('{"overrides": [{"pattern": "a", "precision": "x"}]}', "overrides[0].precision"),
        ('{"overrides": [{"pattern": "a", "rounding": "sometimes"}]}', "overrides[0]"),
        ('{"overrides": [{"pattern": "a", "colour": 1}]}', "overrides[0]"),
        ('{"overrides": [{"precision": 0.1}]}', "overrides[0].pattern"),
        ('{"settings": {"level": "max"}}', "settings"),
        ('{"version": 7}', "version"),
        ('"hello"', "top level"),
    ],
)
def test_a_broken_sidecar_names_the_file_and_the_place(
    tmp_path: Path, text: str, place: str
) -> None:
    clip = tmp_path / "walk.bvh"
    sidecar_path(clip).write_text(text)
    with pytest.raises(SidecarError) as e:
        load_sidecar(clip)
    assert str(sidecar_path(clip)) in str(e.value) and place in str(e.value)
    assert e.value.place.startswith(place)


# ------------------------------------------------------------------ hostile sidecars


@pytest.mark.parametrize(
    ("text", "place", "words"),
    [
        ("[" * 50_000 + "]" * 50_000, "top level", "nested too deeply"),
        (
            '{"settings": {"precision": ' + "[" * 500 + "]" * 500 + "}}",
            "settings.precision",
            "[[...]]",
        ),
        ('{"settings": {"precision": 1e308}}', "settings", "1e+308 is out of range"),
        ('[{"pattern": "a", "shell_distance": 1e39}]', "top level[0]", "out of range"),
        ("\xff\xfe", "byte 0", "not UTF-8"),
    ],
)
def test_a_hostile_sidecar_is_one_sidecar_error_naming_the_file(
    tmp_path: Path, text: str, place: str, words: str
) -> None:
    clip = tmp_path / "walk.bvh"
    sidecar_path(clip).write_bytes(text.encode("latin-1"))
    with pytest.raises(SidecarError) as e:
        load_sidecar(clip)
    message = str(e.value)
    assert "\n" not in message and len(message) < 400
    assert message.startswith(f"{sidecar_path(clip)}: {place}")
    assert words in message


@pytest.mark.timeout(30)
def test_an_overrides_file_that_is_a_fifo_or_a_folder_is_refused_without_blocking(
    tmp_path: Path,
) -> None:
    import os

    os.mkfifo(tmp_path / "rules.json")
    with pytest.raises(SidecarError, match=r"rules\.json: file: is not a regular file"):
        read_sidecar_file(tmp_path / "rules.json")
    with pytest.raises(SidecarError, match="file: is a folder, not a file"):
        read_sidecar_file(tmp_path)


def test_an_unreadable_sidecar_names_the_file_and_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a user without the right to read it (simulated: the tests may run as root, who
    may read anything)."""
    import os

    clip = tmp_path / "walk.bvh"
    sidecar_path(clip).write_text("[]")
    real_open = os.open

    def denied(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(file).endswith(".shellscope.json"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(SidecarError) as e:
        load_sidecar(clip)
    assert str(e.value) == f"{sidecar_path(clip)}: file: cannot read: Permission denied"


def test_shells_from_the_mesh_are_saved_only_when_on(tmp_path: Path) -> None:
    clip = tmp_path / "fox.glb"
    on = GlobalSettings(shell_distance=2.0, shell_from_mesh=True)
    written = save_sidecar(clip, on, ())
    assert json.loads(written.read_text())["settings"]["shell_from_mesh"] is True
    assert load_sidecar(clip) == (on, ())
    off = GlobalSettings(shell_distance=2.0)
    save_sidecar(clip, off, ())
    assert "shell_from_mesh" not in json.loads(written.read_text())["settings"]
    assert load_sidecar(clip) == (off, ())
    written.write_text(json.dumps({"settings": {"shell_from_mesh": "yes"}}))
    with pytest.raises(SidecarError, match="settings.shell_from_mesh"):
        load_sidecar(clip)


# ------------------------------------------------------------------ per animation
def test_each_animation_of_a_file_keeps_its_own_tuning_and_old_sidecars_still_read(
    tmp_path: Path,
) -> None:
    fox = tmp_path / "Fox.glb"
    walk = (GlobalSettings(precision=0.002), (JointOverride("*Head*", precision=0.001),))
    survey = (GlobalSettings(level="high"), ())
    save_sidecar(fox, *walk, animation="Walk")
    assert load_sidecar(fox, "Walk") == walk
    assert load_sidecar(fox, "Survey") == (None, ())  # nothing of Walk's leaks to Survey
    save_sidecar(fox, *survey, animation="Survey")
    assert load_sidecar(fox, "Walk") == walk and load_sidecar(fox, "Survey") == survey
    data = json.loads(sidecar_path(fox).read_text())
    assert data["version"] == 2 and sorted(data["animations"]) == ["Survey", "Walk"]
    # a version-1 sidecar of a multi-animation file: every animation reads it until it has
    # its own entry, and writing one animation keeps it for the others
    old = GlobalSettings(precision=0.05)
    sidecar_path(fox).write_text(sidecar_text("Fox.glb", old, ()))
    assert json.loads(sidecar_path(fox).read_text())["version"] == 1
    assert load_sidecar(fox, "Walk") == (old, ()) == load_sidecar(fox, "Run")
    save_sidecar(fox, *walk, animation="Walk")
    assert load_sidecar(fox, "Walk") == walk and load_sidecar(fox, "Run") == (old, ())
    # a single-clip format keeps the version-1 layout, whatever the clip calls itself
    bvh = tmp_path / "walk.bvh"
    save_sidecar(bvh, *walk, animation="walk")
    data = json.loads(sidecar_path(bvh).read_text())
    assert data["version"] == 1 and "animations" not in data
    assert load_sidecar(bvh, "walk") == walk == load_sidecar(bvh)


def test_a_broken_animation_entry_names_its_place(tmp_path: Path) -> None:
    fox = tmp_path / "Fox.glb"
    sidecar_path(fox).write_text(
        '{"version": 2, "animations": {"Walk": {"settings": {"precision": "x"}}}}'
    )
    with pytest.raises(SidecarError) as e:
        load_sidecar(fox, "Walk")
    assert "animations['Walk'].settings.precision" in str(e.value)
