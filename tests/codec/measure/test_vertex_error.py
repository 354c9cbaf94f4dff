"""The true skin error, checked against an independent per-vertex reference on the real clips.

The reference reads the GLB itself (JSON and BIN chunks, accessors, inverse bind matrices),
builds world matrices with its own 4x4 maths from the clip's local transforms, and skins one
vertex at a time: nothing is shared with model.mesh, measure.skinning or
model.transforms. Between samples the raw pose is the file's own curve (glTF LINEAR: slerp
for rotations), evaluated here from the file's channels with the reference's own slerp.
"""

from __future__ import annotations

import json
import struct
from functools import cache
from pathlib import Path

import numpy as np
import pytest

import codec
from codec.measure.vertex_error import skin_error
from codec.model.clip import Clip
from tests.codec.helpers import chain_clip, data_clip

GLTF = Path(__file__).resolve().parents[2] / "data" / "gltf"
TOLERANCE_CM = 1e-5

# the stats keys a compression had before meshes existed: a clip without a mesh keeps
# exactly these
MESHLESS_KEYS = {
    "bind_mode",
    "bind_modes",
    "error_compensation",
    "warnings",
    "clip_name",
    "codec",
    "raw_size",
    "compressed_size",
    "metadata_size",
    "file_size",
    "compression_ratio",
    "compression_time",
    "duration",
    "num_samples",
    "num_stored_samples",
    "num_stripped_keyframes",
    "num_trivial_keyframes",
    "keyframe_stripping",
    "num_bones",
    "sample_rate",
    "looping",
    "has_scale",
    "level",
    "requested_level",
    "rotation_format",
    "translation_format",
    "scale_format",
    "max_error",
    "worst_track",
    "worst_track_name",
    "worst_time",
    "error_p99",
    "precision_met",
    "joints_over_precision",
    "max_error_between_samples",
    "worst_track_between_samples",
    "worst_time_between_samples",
    "num_segments",
    "segmenting",
    "segments",
    "sub_tracks",
    "bit_rate_histogram",
}
VERTEX_KEYS = {
    "vertex_max_error",
    "vertex_error_p99",
    "vertex_worst_joint",
    "vertex_worst_joint_name",
    "vertex_worst_time",
    "vertex_worst_vertex",
    "vertex_worst_mesh",
    "vertex_precision_met",
    "vertices_over_precision",
    "shell_underestimating_joints",
    "shell_to_vertex_ratio_min",
    "shell_to_vertex_ratio_min_joint",
    "vertex_error_time",
    "vertex_max_error_between_samples",
    "vertex_worst_time_between_samples",
    "vertex_worst_joint_between_samples",
    "num_meshes",
    "num_vertices",
    "num_triangles",
}


# ------------------------------------------------------------ the independent reference


def glb(path: Path) -> tuple[dict, bytes]:
    data = path.read_bytes()
    n = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20 : 20 + n])
    m = struct.unpack_from("<I", data, 20 + n)[0]
    return doc, data[28 + n : 28 + n + m]


def accessor(doc: dict, blob: bytes, index: int) -> np.ndarray:
    acc = doc["accessors"][index]
    view = doc["bufferViews"][acc["bufferView"]]
    dtype = np.dtype({5121: "<u1", 5123: "<u2", 5125: "<u4", 5126: "<f4"}[acc["componentType"]])
    width = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}[acc["type"]]
    stride = view.get("byteStride") or dtype.itemsize * width
    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    rows = [np.frombuffer(blob, dtype, width, start + i * stride) for i in range(acc["count"])]
    out = np.array(rows, dtype=np.float64)
    if acc.get("normalized"):
        out /= np.iinfo(dtype).max
    return out


def quat_matrix(q: np.ndarray) -> np.ndarray:
    x, y, z, w = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def worlds(rot: np.ndarray, tr: np.ndarray, sc: np.ndarray, parents: np.ndarray) -> np.ndarray:
    """(N, J, 4, 4) world matrices, one joint after another."""
    n, j = rot.shape[:2]
    local = np.tile(np.eye(4), (n, j, 1, 1))
    local[..., :3, :3] = quat_matrix(rot) * sc[..., None, :]
    local[..., :3, 3] = tr
    out = np.empty_like(local)
    for k in range(j):
        out[:, k] = local[:, k] if parents[k] < 0 else out[:, parents[k]] @ local[:, k]
    return out


def slerp(a: np.ndarray, b: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Spherical interpolation on the shorter arc, (..., 4) by s (..., 1)."""
    d = np.sum(a * b, -1, keepdims=True)
    b = np.where(d < 0, -b, b)
    theta = np.arccos(np.clip(np.abs(d), 0.0, 1.0))
    sin = np.sin(theta)
    tiny = sin < 1e-9
    wa = np.where(tiny, 1 - s, np.sin((1 - s) * theta) / np.where(tiny, 1, sin))
    wb = np.where(tiny, s, np.sin(s * theta) / np.where(tiny, 1, sin))
    q = wa * a + wb * b
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def authored(name: str, animation: str | None, clip: Clip, times: np.ndarray) -> np.ndarray:
    """World matrices (N, J, 4, 4) of the raw clip at clip `times` (N,) from the file's own
    LINEAR channels (rotations slerp, vectors lerp, ends held; float32 key times on the
    sample grid when the keys are the samples); joints without a channel keep the clip's
    first sample. Only for files without nodes folded into a joint (Fox)."""
    doc, blob = glb(GLTF / name)
    anims = doc["animations"]
    anim = next(a for a in anims if a.get("name") == animation) if animation else anims[0]
    by_node = {n: clip.skeleton.index(doc["nodes"][n]["name"]) for n in doc["skins"][0]["joints"]}
    n = len(times)
    rot = np.repeat(clip.rotations[:1], n, 0)
    tr = np.repeat(clip.translations[:1], n, 0)
    sc = np.repeat(clip.scales[:1], n, 0)
    inputs = [accessor(doc, blob, s["input"])[:, 0] for s in anim["samplers"]]
    start = min(float(t.min()) for t in inputs)
    for ch in anim["channels"]:
        sampler = anim["samplers"][ch["sampler"]]
        assert sampler.get("interpolation", "LINEAR") == "LINEAR"
        path, node = ch["target"]["path"], ch["target"].get("node")
        if node not in by_node or path not in ("rotation", "translation", "scale"):
            continue
        keys = inputs[ch["sampler"]]
        if not any("resampled" in w for w in clip.warnings):  # keys on the sample grid
            keys = start + np.rint((keys - start) * clip.sample_rate) / clip.sample_rate
        values = accessor(doc, blob, sampler["output"])
        t = times + start
        i = np.clip(np.searchsorted(keys, t, side="right") - 1, 0, len(keys) - 2)
        s = np.clip((t - keys[i]) / (keys[i + 1] - keys[i]), 0.0, 1.0)[:, None]
        j = by_node[node]
        if path == "rotation":
            v = values / np.linalg.norm(values, axis=1, keepdims=True)
            rot[:, j] = slerp(v[i], v[i + 1], s)
        elif path == "translation":
            tr[:, j] = (values[i] + (values[i + 1] - values[i]) * s) * 100.0  # metres -> cm
        else:
            sc[:, j] = values[i] + (values[i + 1] - values[i]) * s
    return worlds(rot, tr, sc, clip.skeleton.parents)


def raw_between(name: str, animation: str | None, clip: Clip, k, alpha) -> np.ndarray:
    """The raw clip's world matrices between samples as the file interpolates it: from the
    file's channels (Fox), or, for CesiumMan (its keys are its samples and its root's folded
    node only turns it), the slerp and lerp of its samples."""
    if name.startswith("Fox"):
        out = authored(name, animation, clip, (k + alpha) / clip.sample_rate)
        at = alpha == 0  # at a sample: the sample itself (the file's float32 key times)
        out[at] = worlds(
            clip.rotations[k[at]],
            clip.translations[k[at]],
            clip.scales[k[at]],
            clip.skeleton.parents,
        )
        return out
    return blended(clip, k, alpha, spherical=True)


def blended(clip: Clip, k: np.ndarray, alpha: np.ndarray, spherical: bool = False) -> np.ndarray:
    """World matrices of poses between samples k and k + 1 (ACL's nlerp, or slerp when
    `spherical`; alpha 0 exact)."""
    a, b = clip.rotations[k], clip.rotations[np.minimum(k + 1, clip.num_samples - 1)]
    al = alpha[:, None, None]
    sign = np.where(np.sum(a * b, -1, keepdims=True) < 0, -1.0, 1.0)
    q = slerp(a, b, al) if spherical else a + (b * sign - a) * al
    q = np.where(al == 0, a, q / np.linalg.norm(q, axis=-1, keepdims=True))
    nxt = np.minimum(k + 1, clip.num_samples - 1)
    tr = clip.translations[k] + (clip.translations[nxt] - clip.translations[k]) * al
    sc = clip.scales[k] + (clip.scales[nxt] - clip.scales[k]) * al
    return worlds(q, tr, sc, clip.skeleton.parents)


@cache
def reference_skin(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """(positions (V, 4) homogeneous cm, skin joint names per influence (V, 4),
    weights (V, 4), inverse bind (V, 4, 4, 4) cm) of the file's one skinned mesh."""
    doc, blob = glb(GLTF / name)
    node = next(n for n in doc["nodes"] if "skin" in n and "mesh" in n)
    skin = doc["skins"][node["skin"]]
    prim = doc["meshes"][node["mesh"]]["primitives"][0]
    attrs = prim["attributes"]
    pos = accessor(doc, blob, attrs["POSITION"]) * 100.0  # metres -> cm
    joints = accessor(doc, blob, attrs["JOINTS_0"]).astype(int)
    weights = accessor(doc, blob, attrs["WEIGHTS_0"])
    ibm = accessor(doc, blob, skin["inverseBindMatrices"]).reshape(-1, 4, 4).transpose(0, 2, 1)
    ibm[:, :3, 3] *= 100.0
    names = [doc["nodes"][n]["name"] for n in skin["joints"]]
    return np.c_[pos, np.ones(len(pos))], joints, weights, (ibm, names)


def reference_errors(name: str, raw: np.ndarray, lossy: np.ndarray, clip: Clip) -> np.ndarray:
    """(N, V) vertex errors between world matrices raw and lossy (N, J, 4, 4), vertex by
    vertex."""
    pos, joints, weights, (ibm, names) = reference_skin(name)
    to_clip = [clip.skeleton.index(n) for n in names]
    out = np.empty((raw.shape[0], len(pos)))
    for v in range(len(pos)):
        a = np.zeros((raw.shape[0], 4))
        b = np.zeros((raw.shape[0], 4))
        for k in range(4):
            if weights[v, k] == 0:
                continue
            j = joints[v, k]
            local = ibm[j] @ pos[v]
            a += weights[v, k] * (raw[:, to_clip[j]] @ local)
            b += weights[v, k] * (lossy[:, to_clip[j]] @ local)
        out[:, v] = np.linalg.norm(a[:, :3] - b[:, :3], axis=1)
    return out


# ------------------------------------------------------------------------------ the tests

CASES = [("Fox.glb", "Survey"), ("Fox.glb", "Walk"), ("Fox.glb", "Run"), ("CesiumMan.glb", None)]


@cache
def compressed(name: str, animation: str | None):
    clip = codec.load_clip(GLTF / name, animation=animation)
    return clip, codec.compress(clip)


@pytest.mark.parametrize("name, animation", CASES)
def test_vertex_error_matches_a_per_vertex_reference(name: str, animation: str | None) -> None:
    clip, result = compressed(name, animation)
    ve = result.vertex_error
    assert ve is not None and ve.error.shape == (clip.num_samples, clip.meshes[0].num_vertices)
    lossy = result.lossy
    sk = clip.skeleton
    raw_w = worlds(clip.rotations, clip.translations, clip.scales, sk.parents)
    lossy_w = worlds(lossy.rotations, lossy.translations, lossy.scales, sk.parents)
    want = reference_errors(name, raw_w, lossy_w, clip)
    assert want.max() > 1e-3  # a real error to compare, not zeros
    assert np.max(np.abs(ve.error - want)) < TOLERANCE_CM
    s = result.stats
    assert abs(s["vertex_max_error"] - want.max()) < TOLERANCE_CM
    assert abs(s["vertex_error_p99"] - np.percentile(want, 99)) < TOLERANCE_CM
    worst_s, worst_v = np.unravel_index(np.argmax(want), want.shape)
    assert s["vertex_worst_time"] == pytest.approx(worst_s / clip.sample_rate)
    _, joints, weights, (_, names) = reference_skin(name)
    strongest = names[joints[worst_v, np.argmax(weights[worst_v])]]
    assert s["vertex_worst_joint_name"] == strongest == sk.names[s["vertex_worst_joint"]]

    # between samples: the same supersampled times as the joint error
    ss = result.settings.supersample
    n = clip.num_samples
    k = np.append(np.repeat(np.arange(n - 1), ss), n - 1)
    alpha = np.append(np.tile(np.arange(ss) / ss, n - 1), 0.0)
    raw_b = raw_between(name, animation, clip, k, alpha)
    between = reference_errors(name, raw_b, blended(lossy, k, alpha), clip)
    assert np.allclose(ve.between_times, result.error_between_times)
    assert np.max(np.abs(ve.between_max - between.max(axis=1))) < TOLERANCE_CM
    assert np.max(np.abs(ve.between_vertex - between.max(axis=0))) < TOLERANCE_CM
    assert abs(s["vertex_max_error_between_samples"] - between.max()) < TOLERANCE_CM


@pytest.mark.parametrize("name, animation", CASES)
def test_per_joint_ratio_of_shell_to_true_error(name: str, animation: str | None) -> None:
    clip, result = compressed(name, animation)
    ve = result.vertex_error
    h = ve.joints
    owner = ve.skin.dominant_joint
    for j in range(clip.num_joints):
        mine = owner == j
        assert h.vertices[j] == mine.sum()
        shell = result.error[:, j].max()
        assert h.shell_error[j] == shell
        if not mine.any():
            assert np.isnan(h.ratio[j]) and not h.underestimates[j]
            continue
        true = ve.error[:, mine].max()
        assert h.vertex_error[j] == true
        assert h.ratio[j] == pytest.approx(shell / true)
        assert h.underestimates[j] == (shell < true)
    under = [clip.skeleton.names[j] for j in np.flatnonzero(h.underestimates)]
    assert sorted(result.stats["shell_underestimating_joints"]) == sorted(under)
    # listed worst first
    listed = [clip.skeleton.index(n) for n in result.stats["shell_underestimating_joints"]]
    assert list(h.ratio[listed]) == sorted(h.ratio[listed])


@pytest.mark.parametrize("name, animation", CASES)
def test_stats_keys_in_json(name: str, animation: str | None, capsys) -> None:
    from codec.cli import main

    args = ["compress", str(GLTF / name), "--json", "-"]
    if animation:
        args += ["--animation", animation]
    assert main(args) == 0
    stats = json.loads(capsys.readouterr().out)
    assert VERTEX_KEYS <= set(stats)
    clip, result = compressed(name, animation)
    ve = result.vertex_error
    # the JSON names the vertex, joint and time of the largest true error, worked out here
    v = int(np.argmax(ve.vertex_max))
    assert stats["vertex_max_error"] == float(ve.vertex_max[v]) > 0
    assert stats["vertex_worst_vertex"] == v
    skin = ve.skin  # the joint of the vertex's strongest influence
    joint = int(skin.palette_joint[skin.influence[v, np.argmax(skin.weights[v])]])
    assert stats["vertex_worst_joint"] == joint
    assert stats["vertex_worst_joint_name"] == clip.skeleton.names[joint]
    assert stats["vertex_worst_time"] == pytest.approx(ve.vertex_sample[v] / clip.sample_rate)
    assert stats["vertex_precision_met"] == bool(np.all(ve.vertex_max <= ve.precision))


@pytest.mark.parametrize(
    "clip",
    [
        pytest.param(lambda: codec.load_clip(data_clip("cmu_09_02.acl.sjson")), id="acl"),
        pytest.param(
            lambda: codec.load_clip(GLTF.parent / "bvh" / "makehuman_tpose.bvh"), id="bvh"
        ),
        pytest.param(chain_clip, id="hand-made"),
    ],
)
def test_a_clip_without_mesh_is_left_as_it_was(clip) -> None:
    c = clip()
    assert c.meshes == ()
    result = codec.compress(c)
    assert set(result.stats) == MESHLESS_KEYS
    assert result.vertex_error is None
    assert _skin_error(result) is None


@pytest.mark.parametrize("rows, vertices, step", [(1, 1, 1), (7, 5, 3), (50, 40, 7), (101, 13, 64)])
def test_the_streaming_summary_is_exact(rows: int, vertices: int, step: int) -> None:
    from codec.measure.vertex_error import ErrorSummary

    a = np.random.default_rng(rows).gamma(2.0, size=(rows, vertices))
    a[rows // 2, 0] = a.max() + 1.0  # one clear worst
    kept = ErrorSummary(rows, vertices, keep=True)
    lean = ErrorSummary(rows, vertices, keep=False)
    for start in range(0, rows, step):
        part = slice(start, min(start + step, rows))
        kept.add(part, a[part])
        lean.add(part, a[part])
    assert np.array_equal(kept.full, a) and lean.full is None
    for s in (kept, lean):
        assert s.percentile99() == pytest.approx(float(np.percentile(a, 99)), rel=1e-12)
        assert np.array_equal(s.vertex_max, a.max(axis=0))
        assert np.array_equal(s.vertex_row, a.argmax(axis=0))
        assert np.array_equal(s.row_max, a.max(axis=1))
        assert len(s.top) <= max(1, int(np.ceil(0.01 * a.size)) + 1)
    unranked = ErrorSummary(rows, vertices, keep=False, ranked=False)  # between samples
    for start in range(0, rows, step):
        part = slice(start, min(start + step, rows))
        unranked.add(part, a[part])
    assert np.array_equal(unranked.vertex_max, a.max(axis=0))
    assert np.array_equal(unranked.vertex_row, a.argmax(axis=0))
    assert np.array_equal(unranked.row_max, a.max(axis=1))
    with pytest.raises(ValueError, match="99th percentile"):
        unranked.percentile99()


def test_a_long_clip_keeps_its_stats_without_the_whole_error(monkeypatch) -> None:
    from codec.measure import skinning, vertex_error

    clip, result = compressed("CesiumMan.glb", None)
    whole = result.vertex_error
    monkeypatch.setattr(vertex_error, "KEEP_VALUES", 1000)
    monkeypatch.setattr(skinning, "CHUNK_VALUES", 12 * clip.meshes[0].num_vertices * 5)
    lean = _skin_error(result)
    assert lean.error is None and whole.error is not None
    assert np.array_equal(lean.vertex_max, whole.error.max(axis=0))
    assert np.array_equal(lean.sample_max, whole.error.max(axis=1))
    assert lean.p99 == pytest.approx(float(np.percentile(whole.error, 99)), rel=1e-12)
    assert np.allclose(lean.between_max, whole.between_max, rtol=0, atol=1e-12)
    a, b = vertex_error.vertex_stats(lean, clip), vertex_error.vertex_stats(whole, clip)
    a.pop("vertex_error_time"), b.pop("vertex_error_time")
    assert a == pytest.approx(b)


def _skin_error(result: codec.Result) -> object:
    """The skin error of a result measured again (codec.measure.measure's step)."""
    return skin_error(
        result.clip,
        result.lossy,
        result.error,
        result.decoder,
        result.error_between_times,
        result.settings.supersample,
    )
