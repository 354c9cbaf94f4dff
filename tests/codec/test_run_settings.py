"""codec.run_settings: the one order of precedence, the settings block and reading it back."""

from __future__ import annotations

import io
import json
import zlib
from pathlib import Path

import numpy as np
import pytest

from codec.cli import main
from codec.codecs import container
from codec.errors import CompressedFormatError, SettingsError
from codec.model.clip import Skeleton
from codec.run_settings import (
    Flags,
    RunSettings,
    SettingsFileError,
    from_block,
    read_settings,
    resolve_run,
)
from codec.sidecar import save_sidecar
from codec.tuning import GlobalSettings, JointOverride
from tests.codec.helpers import chain_clip

ACL = Path(__file__).resolve().parents[1] / "data" / "acl" / "cmu_09_02.acl.sjson"


def _clip():
    clip = chain_clip(num_samples=3, num_joints=3)
    sk = Skeleton.create(
        ["root", "LeftHand", "RightHand"], [-1, 0, 1], precision=[0.01, 0.02, 0.03]
    )
    return clip.replace(skeleton=sk)


def test_each_layer_replaces_what_it_names_and_a_joints_own_value_wins(tmp_path: Path) -> None:
    clip_path = tmp_path / "walk.bvh"
    clip = _clip()
    # 1. nothing said: the clip's own per-joint values, acl-style, automatic
    run = resolve_run(clip_path)
    assert run.tuning == GlobalSettings() and run.sources == ()
    assert run.tuned_clip(clip).skeleton.precision.tolist() == [0.01, 0.02, 0.03]
    # 2. the sidecar: its settings and rules; a joint's own value, made first, still wins
    own = JointOverride("lefthand", precision=0.004)
    save_sidecar(clip_path, GlobalSettings(precision=0.05, level="high", codec="subsample"),
                 (own, JointOverride("*Hand", precision=0.002)))  # fmt: skip
    run = resolve_run(clip_path)
    assert (run.tuning.level, run.tuning.codec) == ("high", "subsample")
    assert run.tuned_clip(clip).skeleton.precision.tolist() == [0.05, 0.004, 0.002]
    # 3. --overrides over it: its settings win, its rules come after the sidecar's
    over = tmp_path / "rules.json"
    over.write_text(
        '{"settings": {"level": "medium"}, "overrides": [{"pattern": "*", "precision": 0.1}]}'
    )
    run = resolve_run(clip_path, flags=Flags(overrides=str(over)))
    assert (run.tuning.level, run.tuning.precision, run.tuning.codec) == (
        "medium",
        0.05,
        "subsample",
    )
    assert run.tuned_clip(clip).skeleton.precision.tolist() == [0.1, 0.004, 0.1]
    assert run.sources == (str(tmp_path / "walk.bvh.shellscope.json"), str(over))
    # 4. flags over everything they name
    run = resolve_run(
        clip_path, flags=Flags(precision=0.2, codec="acl-style", shell_distance="mesh")
    )
    assert (run.tuning.precision, run.tuning.codec, run.tuning.level) == (0.2, "acl-style", "high")
    assert run.tuning.shell_from_mesh and run.tuning.shell_distance is None
    assert not resolve_run(clip_path, flags=Flags(shell_distance=2.5)).tuning.shell_from_mesh
    # without the sidecar (library --no-sidecars)
    assert resolve_run(clip_path, sidecar=False).tuning == GlobalSettings()


def test_each_animation_of_a_file_takes_its_own_sidecar_entry(tmp_path: Path) -> None:
    fox = tmp_path / "Fox.glb"
    save_sidecar(fox, GlobalSettings(shell_from_mesh=True), (), "Walk")
    save_sidecar(fox, GlobalSettings(precision=0.02), (JointOverride("b_*", 0.5),), "Run")
    assert resolve_run(fox, "Walk").tuning.shell_from_mesh
    run = resolve_run(fox, "Run")
    assert run.tuning.precision == 0.02 and len(run.rules) == 1 and run.animation == "Run"
    assert resolve_run(fox, "Survey").tuning == GlobalSettings()  # none of its own
    # "Apply this tuning to all animations": one write gives Run's tuning to the others too
    rules = (JointOverride("b_*", 0.5),)
    save_sidecar(fox, GlobalSettings(precision=0.02), rules, "Run", also=("Walk", "Survey"))
    for name in ("Walk", "Run", "Survey"):
        run = resolve_run(fox, name)
        assert run.tuning.precision == 0.02 and run.rules == rules, name


def test_the_block_reads_back_to_the_same_settings_and_says_what_was_read() -> None:
    run = RunSettings(
        GlobalSettings(precision=0.003, shell_from_mesh=True, strip_proportion=0.1, codec="auto"),
        (JointOverride("*Hand*", 0.001, 2.0, "floor"), JointOverride("root", shell_distance=9.0)),
        animation="Walk",
        units="m",
        sample_rate=30.0,
        include_metadata=False,
    )
    block = run.block(_clip(), {"rounding": "floor"})
    assert block["format"] == "shellscope-settings" and block["version"] == 1
    assert block["read"] == {"clip": "chain", "unit": "cm", "up_axis": None, "sample_rate": 30.0,
                             "joints": 3, "samples": 3}  # fmt: skip
    again = from_block(json.loads(json.dumps(block)), "x.json")
    assert again == run and again.block(_clip(), {"rounding": "floor"}) == block
    assert again.reader_options() == {"animation": "Walk", "units": "m", "sample_rate": 30.0}


def _block() -> dict:
    return RunSettings().block()


@pytest.mark.parametrize(
    ("change", "place", "words"),
    [
        ({"precision": "abc"}, "shellscope.precision", "expected a number or null, got 'abc'"),
        ({"precision": -1}, "shellscope.precision", "a positive distance"),
        ({"level": "max"}, "shellscope.level", "expected one of lowest"),
        ({"codec": "zip"}, "shellscope.codec", "unknown codec 'zip'"),
        ({"version": 2}, "shellscope.version", "reads version 1, not 2"),
        ({"colour": 1}, "shellscope.colour", "unknown key"),
        ({"skin_strict": "yes"}, "shellscope.skin_strict", "expected true or false"),
        ({"keyframe_stripping": {"strip_trivial": True}}, "shellscope.keyframe_stripping",
         "an object with strip_trivial, proportion, threshold"),
        ({"rules": [{"pattern": "a", "precision": "x"}]}, "shellscope.rules[0].precision",
         "expected a number"),
        ({"units": "furlong"}, "shellscope.units", "expected one of auto"),
        ({"bvh_positions": "both"}, "shellscope.bvh_positions", "expected one of auto, add"),
        ({"bind": "twice"}, "shellscope.bind", "expected one of auto, best, strip"),
        ({"compensate": 1}, "shellscope.compensate", "expected true or false"),
    ],
)  # fmt: skip
def test_a_bad_block_is_one_line_naming_the_file_and_the_key(
    tmp_path: Path, change: dict, place: str, words: str
) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"compressed_size": 1, "shellscope": {**_block(), **change}}))
    with pytest.raises(SettingsFileError) as e:
        read_settings(path)
    assert str(e.value).startswith(f"{path}: {place}: ") and words in str(e.value)
    assert "\n" not in str(e.value)
    out, err = io.StringIO(), io.StringIO()  # the command line says the same, exit 2
    assert main(["compress", str(ACL), "--settings", str(path)], stdout=out, stderr=err) == 2
    assert f"{path}: {place}: " in err.getvalue() and err.getvalue().count("\n") == 1


def test_bind_modes_are_settings_and_older_blocks_read_as_strip() -> None:
    """--bind, --compensate and --clean-defaults change the bytes, so the block holds them;
    a block written before bind modes existed ran with bind pose stripping alone."""
    flags = Flags(bind="additive", compensate=True, clean_defaults=0.002)
    run = RunSettings().with_flags(flags)
    block = run.block()
    assert (block["bind"], block["compensate"], block["clean_defaults"]) == (
        "additive",
        True,
        0.002,
    )
    settings = from_block(block, "x.json").compression_settings()
    assert (settings.bind, settings.compensate, settings.clean_defaults) == (
        "additive",
        True,
        0.002,
    )
    assert RunSettings().block()["bind"] == "auto"
    for key in ("bind", "compensate", "clean_defaults"):
        del block[key]
    old = from_block(block, "x.json").compression_settings()
    assert (old.bind, old.compensate, old.clean_defaults) == ("strip", False, 0.0)


def test_how_a_bvh_was_read_is_a_setting_and_older_blocks_read_as_auto(tmp_path) -> None:
    """--bvh-positions changes what a BVH means (issue 31), so the block says it and
    `--settings` reads the clip that way again; a block written before it reads as auto."""
    run = RunSettings().with_flags(Flags(bvh_positions="replace"))
    block = run.block()
    assert block["bvh_positions"] == "replace"
    assert from_block(block, "x.json").reader_options() == {"bvh_positions": "replace"}
    assert RunSettings().with_flags(Flags(bvh_positions="auto")).block()["bvh_positions"] == "auto"
    del block["bvh_positions"]
    assert from_block(block, "x.json").reader_options() == {}
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"shellscope": run.block()}))
    from codec.run_settings import resolve_reader

    assert resolve_reader("clip.bvh", Flags(settings=str(path))) == {"bvh_positions": "replace"}
    assert resolve_reader("clip.bvh", Flags(settings=str(path), bvh_positions="add")) == {
        "bvh_positions": "add"
    }


def test_a_missing_key_is_named(tmp_path: Path) -> None:
    block = _block()
    del block["rules"]
    with pytest.raises(SettingsFileError, match=r"s.json: rules: missing"):
        from_block(block, tmp_path / "s.json")


def test_a_sidecar_is_settings_too_and_other_files_are_refused(tmp_path: Path) -> None:
    side = tmp_path / "tuning.json"
    side.write_text('{"settings": {"precision": 0.02}, "overrides": [{"pattern": "a"}]}')
    run = read_settings(side)
    assert run.tuning.precision == 0.02 and run.rules == (JointOverride("a"),)
    (tmp_path / "other.json").write_text('{"hello": 1}')
    with pytest.raises(SettingsFileError, match="no 'shellscope' block"):
        read_settings(tmp_path / "other.json")
    (tmp_path / "rows.csv").write_text("path,animation\nx.bvh,\n")
    with pytest.raises(SettingsFileError, match="no 'settings' column"):
        read_settings(tmp_path / "rows.csv")
    bare = tmp_path / "bare.ssc"
    bare.write_bytes(container.write(0, b"payload").data)
    with pytest.raises(SettingsFileError, match="carries no settings block"):
        read_settings(bare)


def test_the_ssc_carries_the_block_after_its_metadata_and_checks_its_length() -> None:
    sk = _clip().skeleton
    plain = container.write(3, b"\x01payload", sk)
    text = RunSettings().block_text().encode()
    stamped = container.with_settings(plain.data, text)
    frame = container.read(stamped)
    assert frame.settings == text and frame.payload == b"\x01payload"
    assert frame.metadata_size == plain.metadata_size and frame.compressed_size == 28
    np.testing.assert_array_equal(frame.skeleton.precision, sk.precision)
    assert container.with_settings(stamped, b"") == plain.data  # and back
    # a length that runs past the payload (CRC made right) is refused, not read
    forged = bytearray(container.write(3, b"\x01payload", None, b"x").data)
    forged[-4:] = (999).to_bytes(4, "little")
    forged[8:12] = zlib.crc32(bytes(forged[12:])).to_bytes(4, "little")
    with pytest.raises(CompressedFormatError, match="settings block of 999 bytes"):
        container.read(bytes(forged))


def test_flags_that_name_nothing_change_nothing_and_a_bad_mix_names_the_files(tmp_path) -> None:
    run = RunSettings(GlobalSettings(level="high"))
    assert run.with_flags(Flags()) == run
    side = tmp_path / "x.bvh.shellscope.json"
    side.write_text('{"settings": {"skin_strict": true}}')
    over = tmp_path / "o.json"
    over.write_text('{"settings": {"strip_proportion": 0.5}}')
    with pytest.raises(SettingsError, match=r"x.bvh.shellscope.json \+ .*o.json: .*skin-strict"):
        resolve_run(tmp_path / "x.bvh", flags=Flags(overrides=str(over)))
