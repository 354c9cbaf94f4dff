"""Strict precision, checked the way an outsider would: every real clip, decoded from the
written bytes, evaluated in float64 with explicit 4x4 matrices and explicit shell points,
never through the optimiser's arithmetic (codec.model.affine, codec.measure.error_metric)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

import codec
from codec.codecs.base import TrackKind
from codec.compression import Compression, compress
from codec.errors import CompressedFormatError
from codec.formats import list_animations
from codec.settings import CompressionSettings
from tests.codec.helpers import DATA

SUFFIXES = (".bvh", ".glb", ".acl.sjson", ".fbx", ".usdz", ".usd", ".usda", ".usdc")


def _clips(root: Path) -> list[tuple[Path, str | None]]:
    out: list[tuple[Path, str | None]] = []
    for path in sorted(root.rglob("*")):
        name = path.name.removesuffix(".xz")
        if not name.endswith(SUFFIXES) or {"licenses", "hostile"} & set(
            path.relative_to(root).parts
        ):
            continue
        if name.endswith(".acl.sjson") and ("track_list" in name or "format_reference" in name):
            continue  # scalar track lists and the commented format reference: not clips
        if name.startswith("additive_"):
            continue  # the file holds the additive alone: test_bind_modes checks it on its base
        if name.endswith((".glb", ".fbx", ".usdz")):
            out += [(path, a) for a in list_animations(path)]
        else:
            out.append((path, None))
    return out


def _id(item: tuple[Path, str | None]) -> str:
    path, animation = item
    return f"{path.parent.name}/{path.name}" + (f":{animation}" if animation else "")


def world_points(rot: np.ndarray, tr: np.ndarray, sc: np.ndarray, parents, shell) -> np.ndarray:
    """(S, J, 3 points, 3) object-space shell points, from 4x4 matrices built here."""
    q = rot / np.linalg.norm(rot, axis=-1, keepdims=True)
    x, y, z, w = np.moveaxis(q, -1, 0)
    m = np.zeros((*q.shape[:-1], 4, 4))
    m[..., 0, 0], m[..., 0, 1], m[..., 0, 2] = (
        1 - 2 * (y * y + z * z),
        2 * (x * y - z * w),
        2 * (x * z + y * w),
    )
    m[..., 1, 0], m[..., 1, 1], m[..., 1, 2] = (
        2 * (x * y + z * w),
        1 - 2 * (x * x + z * z),
        2 * (y * z - x * w),
    )
    m[..., 2, 0], m[..., 2, 1], m[..., 2, 2] = (
        2 * (x * z - y * w),
        2 * (y * z + x * w),
        1 - 2 * (x * x + y * y),
    )
    m[..., :3, :3] *= sc[..., None, :]
    m[..., :3, 3] = tr
    m[..., 3, 3] = 1.0
    world = m.copy()
    for j, p in enumerate(parents):
        if p >= 0:
            world[:, j] = world[:, p] @ m[:, j]
    pts = np.zeros((len(parents), 3, 4))
    pts[:, :, 3] = 1.0
    pts[:, [0, 1, 2], [0, 1, 2]] = np.asarray(shell)[:, None]
    return np.einsum("sjab,jpb->sjpa", world, pts)[..., :3]


def independent_max_error(raw: codec.Clip, data: bytes) -> np.ndarray:
    """(J,) worst error of every joint over every sample of `raw`, from the file's bytes."""
    lossy = codec.decode(data, raw.skeleton).decode_all()
    n = lossy.num_samples
    rows = np.append(np.arange(n), 0) if n < raw.num_samples else np.arange(n)  # a wrap
    sk = raw.skeleton
    a = world_points(raw.rotations, raw.translations, raw.scales, sk.parents, sk.shell_distance)
    b = world_points(
        lossy.rotations[rows],
        lossy.translations[rows],
        lossy.scales[rows],
        sk.parents,
        sk.shell_distance,
    )
    return np.linalg.norm(a - b, axis=-1).max(axis=(0, 2))


CLIPS = _clips(DATA)  # a copy of every clip of ../shared/data (tests/data/SOURCES.md)


@pytest.mark.parametrize("item", CLIPS, ids=[_id(c) for c in CLIPS])
def test_every_real_clip_meets_its_precision_in_float64(item) -> None:
    path, animation = item
    options = {"animation": animation} if animation else {}
    clip = codec.load_clip(path, **options)
    result = compress(clip, CompressionSettings(precision=0.01, shell_distance=3.0))
    err = independent_max_error(result.clip, result.data)
    assert np.all(err <= result.clip.skeleton.precision), (
        f"{result.clip.skeleton.names[int(np.argmax(err))]}: {err.max():.9f}"
    )
    assert result.stats["precision_met"]
    # the stats say the same number as the outsider, to float64 rounding
    assert err.max() == pytest.approx(result.stats["max_error"], rel=1e-9, abs=1e-12)


def _hard_rotations(kind: str) -> codec.Clip:
    """Made-up chains whose rotations no real clip here has in this form: every sample's
    sign flipped at random, joints spinning through 720 degrees (w crosses zero four
    times), a wobble around 180 degrees, white-noise rotations, and a 40-joint chain held
    near 180 degrees everywhere."""
    from codec.model import quat
    from codec.model.clip import Skeleton

    rng = np.random.default_rng(sum(map(ord, kind)))
    s, n = {"noise": (40, 8), "deep": (60, 40)}.get(kind, (90, 12))
    t = np.linspace(0.0, 3.0, s)[:, None]
    axes = rng.normal(size=(1, n, 3))
    axes = np.broadcast_to(axes / np.linalg.norm(axes, axis=-1, keepdims=True), (s, n, 3))
    phase = rng.uniform(0.0, 6.0, (1, n))
    if kind == "noise":
        rot = rng.normal(size=(s, n, 4))
        rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
    elif kind == "spin":
        rot = quat.from_axis_angle(axes, t * rng.uniform(2.0, 4.2, (1, n)))
    elif kind == "near_180":
        rot = quat.from_axis_angle(axes, np.pi + 0.002 * np.sin(3.0 * t + phase))
    elif kind == "deep":
        rot = quat.from_axis_angle(axes, np.pi - 0.3 * np.abs(np.sin(2.0 * t + phase)))
    else:  # "flips": smooth motion, each sample stored as q or -q at random
        rot = quat.from_axis_angle(axes, 1.2 * np.sin(t * rng.uniform(0.5, 2.0, (1, n)) + phase))
        rot = np.where(rng.random((s, n, 1)) < 0.5, -rot, rot)
    tr = np.zeros((s, n, 3))
    tr[:, 1:, 1] = 8.0
    names = [f"j{i}" for i in range(n)]
    skeleton = Skeleton.create(names, [-1, *range(n - 1)], bind_translations=tr[0])
    return codec.Clip(skeleton, 30.0, rot, tr, np.ones((s, n, 3)), name=kind)


@pytest.mark.parametrize("kind", ["flips", "spin", "near_180", "noise", "deep"])
def test_made_up_hard_rotations_meet_their_precision_in_float64(kind: str) -> None:
    clip = _hard_rotations(kind)
    result = compress(clip)
    err = independent_max_error(result.clip, result.data)
    assert err.max() <= 0.01, f"{err.max():.9f}"
    assert result.stats["compressed_size"] < result.stats["raw_size"]


def test_the_clip_list_covers_every_format() -> None:
    names = {p.name.removesuffix(".xz").split(".", 1)[1] for p, _ in CLIPS}
    assert {"bvh", "glb", "acl.sjson", "fbx", "usdz"} <= names
    assert sum(1 for p, a in CLIPS if p.name == "Fox.glb" and p.is_relative_to(DATA)) == 3


def test_an_unreachable_budget_keeps_the_closest_result_and_costs_no_more_than_raw() -> None:
    """0.00001 cm is below what float32 storage holds on a 44-joint human: some joints
    cannot meet it. They are named, their chain keeps the closest result, nothing that is
    exactly constant in the raw data is stored per sample, and the size stays under raw."""
    clip = codec.load_clip(DATA / "acl" / "cmu_13_07.acl.sjson.xz")
    r = compress(clip, CompressionSettings(precision=0.00001))
    s = r.stats
    assert not s["precision_met"] and s["joints_over_precision"]
    assert s["compressed_size"] <= s["raw_size"]
    assert s["max_error"] < 0.0001  # the closest result, not something far away
    for k, a in enumerate((clip.rotations, clip.translations, clip.scales)):
        same = np.all(a == a[:1], axis=-1)
        if k == 0:
            same |= np.all(a == -a[:1], axis=-1)
        constant = np.all(same, axis=0)
        assert not np.any(constant & (r.costs.kinds[:, k] == TrackKind.ANIMATED)), k
    # and at the default budget the same clip meets it with far fewer bytes
    assert compress(clip).stats["compressed_size"] < s["compressed_size"] / 2


def test_files_of_format_version_1_are_refused_in_one_line() -> None:
    data = bytearray(compress(codec.load_clip(DATA / "acl" / "cmu_09_02.acl.sjson")).data)
    struct.pack_into("<H", data, 4, 1)
    struct.pack_into("<I", data, 8, zlib.crc32(bytes(data[12:])))
    with pytest.raises(CompressedFormatError) as info:
        codec.decode(bytes(data))
    message = str(info.value)
    assert "version 1" in message and "compress the clip again" in message
    assert "\n" not in message


def test_a_compressor_reused_across_settings_gives_a_fresh_compress_bytes() -> None:
    clip = codec.load_clip(DATA / "acl" / "cmu_49_15.acl.sjson.xz")
    c = Compression(clip)
    settings = [
        CompressionSettings(precision=0.01),
        CompressionSettings(precision=0.02),
        CompressionSettings(precision=0.01, level="highest"),
        CompressionSettings(precision=0.01),
    ]
    for s in settings:
        assert c.run(s).data == compress(clip, s).data
    assert c.segments_solved == 0  # the last settings were seen before: nothing re-optimised
    sk = clip.skeleton
    tight = sk.with_settings(precision=np.where(np.arange(sk.num_joints) == 20, 0.004, 0.01))
    strip = CompressionSettings(bind="strip")  # one mode: its segments alone are counted
    r = c.run(strip, skeleton=tight)
    assert r.data == compress(clip.replace(skeleton=tight), strip).data
    assert c.segments_solved == len(r.costs.segments)  # one joint's budget enters every segment
