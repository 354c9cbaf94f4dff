"""The lossy glTF copy: the source file with one animation replaced, read back by our reader
and compared with the clip that was written; everything else left as it was."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from codec import ClipFormatError
from codec.formats.gltf import load_document, read_gltf
from codec.formats.gltf_lossy import write_lossy_gltf
from codec.model.transforms import object_space
from tests.codec.formats import gltf_validator

DATA = Path(__file__).resolve().parents[2] / "data" / "gltf"


def positions(clip) -> np.ndarray:
    return object_space(clip.rotations, clip.translations, clip.scales, clip.skeleton.parents)[
        ..., 3
    ]


def glb_json(path: Path) -> dict:
    data = path.read_bytes()
    assert data[:4] == b"glTF" and struct.unpack_from("<I", data, 8)[0] == len(data)
    n = struct.unpack_from("<I", data, 12)[0]
    return json.loads(data[20 : 20 + n])


def _view_bytes(doc, view: int) -> bytes:
    v = doc.gltf["bufferViews"][view]
    data = doc.buffer(v["buffer"], "buffer")
    return bytes(data[v.get("byteOffset", 0) : v.get("byteOffset", 0) + v["byteLength"]])


def resolved(path: Path) -> dict:
    """The file's JSON with every mesh and skin accessor index replaced by the accessor's
    values: the copy renumbers accessors, and what must not change is the data."""
    doc = load_document(path)
    g = json.loads(json.dumps(doc.gltf))

    def data(index: int) -> list:
        return doc.accessor(index, "accessor").tolist()

    for mesh in g.get("meshes", []):
        for prim in mesh["primitives"]:
            prim["attributes"] = {k: data(v) for k, v in prim["attributes"].items()}
            if "indices" in prim:
                prim["indices"] = data(prim["indices"])
    for skin in g.get("skins", []):
        skin["inverseBindMatrices"] = data(skin["inverseBindMatrices"])
    return g


def nudged(clip):
    """A stand-in for a lossy clip: every joint moved and turned a little, differently at
    every sample, so a writer that kept the old keys would be caught."""
    s, j = clip.num_samples, clip.num_joints
    wobble = np.sin(np.arange(s)[:, None, None] * 0.7 + np.arange(j)[None, :, None])
    rot = clip.rotations + 0.01 * wobble * np.array([1, -1, 0.5, 0])
    rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
    return clip.replace(rotations=rot, translations=clip.translations + 0.3 * wobble)


@pytest.mark.parametrize("suffix", [".glb", ".gltf"])
def test_cesium_man_copy_holds_the_lossy_clip_at_the_authored_times(
    tmp_path: Path, suffix: str
) -> None:
    source = DATA / "CesiumMan.glb"
    lossy = nudged(read_gltf(source))
    out = tmp_path / f"lossy{suffix}"
    assert write_lossy_gltf(source, lossy, out) == []
    back = read_gltf(out)
    assert (back.num_samples, back.sample_rate, back.warnings) == (48, 24.0, [])
    assert back.skeleton.names == lossy.skeleton.names
    gap = np.linalg.norm(positions(back) - positions(lossy), axis=-1)
    assert gap.max() < 1e-4  # cm: float32 storage of metres
    src = resolved(source)
    doc = resolved(out)
    for key in ("nodes", "skins", "meshes", "materials", "scenes", "textures", "samplers"):
        assert doc.get(key) == src.get(key), key
    image = load_document(out).gltf["images"][0]["bufferView"]  # the texture's bytes too
    assert _view_bytes(load_document(out), image) == _view_bytes(load_document(source), 8)
    assert len(doc["buffers"]) == 1
    if suffix == ".gltf":
        assert doc["buffers"][0]["uri"].startswith("data:application/octet-stream;base64,")
    assert "replaced by the lossy decode" in doc["asset"]["extras"]["shellscope"]


def test_fox_only_the_chosen_animation_changes(tmp_path: Path) -> None:
    source = DATA / "Fox.glb"
    lossy = nudged(read_gltf(source, animation="Walk"))
    out = tmp_path / "fox.lossy.glb"
    write_lossy_gltf(source, lossy, out)
    want = positions(lossy)
    gap = np.abs(positions(read_gltf(out, animation="Walk")) - want).max()
    assert gap < 1e-6 * np.abs(want).max()  # float32 storage; the fox is ~2,000 units wide
    for other in ("Survey", "Run"):
        a, b = read_gltf(out, animation=other), read_gltf(source, animation=other)
        assert np.array_equal(a.rotations, b.rotations)
        assert np.array_equal(a.translations, b.translations)


def test_which_animation_is_replaced(tmp_path: Path) -> None:
    """By name when given; else the one named like the clip; else the only one of the clip's
    length and rate; else the user must say."""
    source = DATA / "Fox.glb"
    survey = nudged(read_gltf(source, animation="Survey")).replace(name="fox")  # 83 at 24 Hz
    write_lossy_gltf(source, survey, tmp_path / "a.glb")
    assert np.allclose(
        read_gltf(tmp_path / "a.glb", animation="Survey").translations,
        survey.translations,
        atol=1e-3,
    )
    short = survey.replace(
        rotations=survey.rotations[:5],
        translations=survey.translations[:5],
        scales=survey.scales[:5],
    )
    with pytest.raises(ClipFormatError, match="say which one"):
        write_lossy_gltf(source, short, tmp_path / "b.glb")
    write_lossy_gltf(source, short, tmp_path / "b.glb", animation="Run")
    assert read_gltf(tmp_path / "b.glb", animation="Run").num_samples == 5


def test_a_resampled_clip_is_written_at_its_rate_and_said_so(tmp_path: Path) -> None:
    source = DATA / "CesiumMan.glb"
    clip = read_gltf(source, sample_rate=30)
    notes = write_lossy_gltf(source, clip, tmp_path / "x.glb")
    assert notes and "30 Hz" in notes[0]
    back = read_gltf(tmp_path / "x.glb")
    assert back.sample_rate == 30.0 and back.num_samples == clip.num_samples


def test_a_clip_of_another_skeleton_is_refused(tmp_path: Path) -> None:
    clip = read_gltf(DATA / "RiggedSimple.glb")
    with pytest.raises(ClipFormatError, match="not the clip's"):
        write_lossy_gltf(DATA / "CesiumMan.glb", clip, tmp_path / "x.glb")
    assert not (tmp_path / "x.glb").exists()


def test_khronos_validator_passes_every_lossy_copy_and_it_holds_what_it_uses(
    tmp_path: Path,
) -> None:
    """glTF-Validator: no error and no UNUSED_OBJECT on CesiumMan, each Fox animation and
    RiggedSimple (whose animated joint has a matrix); the source's own warnings may stay.
    No copy is larger than its source plus the new animation's data minus the old's."""
    cases = [("CesiumMan", None), ("Fox", "Survey"), ("Fox", "Walk"), ("Fox", "Run")]
    cases.append(("RiggedSimple", None))
    outs, sources = [], []
    for name, anim in cases:
        source = DATA / f"{name}.glb"
        clip = nudged(read_gltf(source, animation=anim))
        out = tmp_path / f"{name}_{anim}.glb"
        write_lossy_gltf(source, clip, out, animation=anim)
        outs.append(out)
        sources.append(source)
        old, new = animation_bytes(source, clip.name), animation_bytes(out, clip.name)
        assert out.stat().st_size <= source.stat().st_size - old + new + 256, name  # JSON
    reports = gltf_validator.validate(*sources, *outs)
    for source_report, report in zip(reports[: len(cases)], reports[len(cases) :], strict=True):
        assert report["numErrors"] == 0, report["messages"]
        assert "UNUSED_OBJECT" not in report["codes"], report["messages"]
        assert report["numWarnings"] <= source_report["numWarnings"], report["messages"]
    rigged = glb_json(outs[-1])["nodes"][3]
    assert "matrix" not in rigged and {"translation", "rotation", "scale"} <= rigged.keys()


def animation_bytes(path: Path, name: str) -> int:
    """What animation `name` takes in the file: the bytes of the accessors only it uses,
    and their JSON and its own (compact, as a .glb holds it)."""
    doc = load_document(path)
    g = doc.gltf
    names = [a.get("name", f"animation_{i}") for i, a in enumerate(g["animations"])]
    mine, others = set(), set()
    for i, anim in enumerate(g["animations"]):
        used = {s[k] for s in anim["samplers"] for k in ("input", "output")}
        (mine if names[i] == name else others).update(used)
    size = {5126: 4, 5125: 4, 5123: 2, 5121: 1}
    width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4, "MAT4": 16}
    data = sum(
        g["accessors"][a]["count"]
        * size[g["accessors"][a]["componentType"]]
        * width[g["accessors"][a]["type"]]
        for a in mine - others
    )
    parts = [g["animations"][names.index(name)], *(g["accessors"][a] for a in mine - others)]
    return data + sum(len(json.dumps(p, separators=(",", ":"))) for p in parts)


def test_a_joint_matrix_with_shear_is_refused_with_the_reason(tmp_path: Path) -> None:
    data = (DATA / "RiggedSimple.glb").read_bytes()
    n = struct.unpack_from("<I", data, 12)[0]
    g = json.loads(data[20 : 20 + n])
    g["nodes"][3]["matrix"] = [1, 0, 0, 0, 0.5, 1, 0, 0, 0, 0, 1, 0, 0, 2, 0, 1]  # shear
    text = json.dumps(g).encode()
    text += b" " * (-len(text) % 4)
    rest = data[20 + n :]
    sheared = tmp_path / "sheared.glb"
    sheared.write_bytes(
        b"glTF"
        + struct.pack("<II", 2, 20 + len(text) + len(rest))
        + struct.pack("<II", len(text), 0x4E4F534A)
        + text
        + rest
    )
    clip = read_gltf(sheared)
    with pytest.raises(ClipFormatError, match=r"nodes\[3\] \('Bone'\) has a matrix with shear"):
        write_lossy_gltf(sheared, clip, tmp_path / "x.glb")
    assert not (tmp_path / "x.glb").exists()
