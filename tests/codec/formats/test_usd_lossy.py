"""Lossy USD exports: a copy of a USD source with its SkelAnimation replaced, or a new stage;
each passes usd-core's own validators and reads back through our reader (in its child)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from codec.formats import load_clip
from codec.formats.usd import read_usd
from codec.formats.usd_lossy import write_lossy_usd
from codec.model.transforms import object_space

DATA = Path(__file__).resolve().parents[2] / "data"
ROOT = Path(__file__).resolve().parents[3]


def positions(clip) -> np.ndarray:
    sk = clip.skeleton
    return object_space(clip.rotations, clip.translations, clip.scales, sk.parents)[..., 3]


def nudged(clip):
    """Every joint turned and moved a little, differently at every sample."""
    s, j = clip.num_samples, clip.num_joints
    wobble = np.sin(np.arange(s)[:, None, None] * 0.7 + np.arange(j)[None, :, None])
    rot = clip.rotations + 0.01 * wobble * np.array([1, -1, 0.5, 0])
    rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
    return clip.replace(rotations=rot, translations=clip.translations + 0.3 * wobble)


def validator_errors(path: Path) -> list[str]:
    """usd-core's validators on `path`, run in a child (pxr stays out of this process)."""
    code = (
        "import json, sys; from codec.formats.usd_lossy import compliance; "
        "print(json.dumps(compliance(sys.argv[1])[0]))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, cwd=ROOT
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.splitlines()[-1])


@pytest.mark.parametrize("suffix", [".usdz", ".usda"])
def test_a_usd_source_is_copied_with_its_animation_replaced(tmp_path: Path, suffix: str) -> None:
    source = DATA / "usd" / "CesiumMan.usdz"
    lossy = nudged(read_usd(source))
    out = tmp_path / f"lossy{suffix}"
    notes = write_lossy_usd(lossy, out, source=source)
    assert any("varname" in n for n in notes)  # the source's outdated token, upgraded
    back = read_usd(out)
    assert (back.num_samples, back.sample_rate, back.skeleton.names) == (
        48,
        24.0,
        lossy.skeleton.names,
    )
    assert np.abs(np.linalg.norm(positions(back) - positions(lossy), axis=-1)).max() < 1e-4
    assert back.meshes and back.meshes[0].num_vertices == read_usd(source).meshes[0].num_vertices
    assert validator_errors(source) and validator_errors(out) == []
    if suffix == ".usdz":  # the texture travels in the package, after the root layer
        names = zipfile.ZipFile(out).namelist()
        assert names[0].endswith(".usdc") and any(n.endswith(".jpg") for n in names)
    else:  # a .usda points into the source package, relative to its own folder
        text = out.read_text()
        assert "CesiumMan.usdz[0/CesiumMan_img0.jpg]@" in text and "@/" not in text


def test_another_source_makes_a_new_stage(tmp_path: Path) -> None:
    lossy = nudged(load_clip(DATA / "gltf" / "RiggedSimple.glb"))
    out = tmp_path / "rigged.usdc"
    notes = write_lossy_usd(lossy, out, source=DATA / "gltf" / "RiggedSimple.glb")
    assert notes == ["renamed 1 joint(s) whose names are not USD identifiers"]  # Bone.001
    back = read_usd(out)
    assert back.skeleton.names == tuple(n.replace(".", "_") for n in lossy.skeleton.names)
    assert np.array_equal(back.skeleton.parents, lossy.skeleton.parents)
    assert back.sample_rate == lossy.sample_rate and back.units.unit == "cm"
    assert back.units.up_axis == "+Y"
    assert np.abs(np.linalg.norm(positions(back) - positions(lossy), axis=-1)).max() < 1e-4
    assert validator_errors(out) == []
