"""Bind pose modes, error compensation and additive clips (codec.codecs.acl_style.bind_modes).

The additive test checks our max error against an error computed here by hand, on the
base+additive poses, from the SJSON file's own numbers: quaternion products, ACL's relative /
additive0 / additive1 rules, object space and the shell points are written out below, not
taken from the code under test.
"""

from __future__ import annotations

import dataclasses
import re
import struct
from pathlib import Path

import numpy as np
import pytest

from codec.cli.compress import bind_line
from codec.codecs import container
from codec.codecs.acl_style.bind_modes import AppliedDecoder, BindModes, _base_of, compensated
from codec.codecs.acl_style.codec import CODEC
from codec.compression import compress
from codec.errors import CompressedFormatError
from codec.formats import load_clip, sjson
from codec.measure.error_metric import clip_errors
from codec.settings import CompressionSettings

DATA = Path(__file__).resolve().parents[3] / "data"
ADDITIVE = DATA / "acl" / "additive_relative_chain.acl.sjson"
FAST = {"supersample": 0, "skin_error": False}
BEST = {**FAST, "bind": "best"}


def _payload(result) -> bytes:
    return container.read(result.data).payload


@pytest.mark.parametrize(
    "path", [DATA / "acl" / "cmu_09_02.acl.sjson", DATA / "gltf" / "CesiumMan.glb"]
)
def test_best_is_the_smallest_strict_mode_and_never_larger_than_strip(path) -> None:
    clip = load_clip(path)
    best = compress(clip, CompressionSettings(**BEST))
    tried = best.details["bind_modes"]["tried"]
    assert set(tried) | set(best.details["bind_modes"]["screened"]) == {"strip", "none", "additive"}
    strict = {m: t["compressed_size"] for m, t in tried.items() if t["strict"]}
    assert "strip" in strict
    assert best.measurements.stats["compressed_size"] == min(strict.values())
    assert best.details["bind_mode"] == min(strict, key=strict.get)
    alone = compress(clip, CompressionSettings(bind="strip", **FAST))
    assert alone.measurements.stats["compressed_size"] == tried["strip"]["compressed_size"]
    assert best.measurements.stats["compressed_size"] <= tried["strip"]["compressed_size"]


@pytest.mark.parametrize(
    ("path", "animation", "screened"),
    [
        (DATA / "acl" / "cmu_09_02.acl.sjson", None, {"none"}),
        (DATA / "bvh" / "cmu_02_02_walk_daz.bvh", None, {"none", "additive"}),
        (DATA / "gltf" / "Fox.glb", "Walk", {"none", "additive"}),
    ],
)
def test_best_leaves_out_only_modes_that_are_no_smaller_than_strip(
    path, animation, screened
) -> None:
    """best's screen runs no compressor for a mode it leaves out: each such mode, encoded
    alone, is strict-and-no-smaller than strip or not strict, so best's size is unchanged."""
    clip = load_clip(path, **({"animation": animation} if animation else {}))
    best = CODEC.encode(clip, CompressionSettings(**BEST))
    modes = best.details["bind_modes"]
    assert set(modes["screened"]) == screened and "strip" in modes["tried"]
    strip = modes["tried"]["strip"]["compressed_size"]
    for mode in screened:
        alone = CODEC.encode(clip, CompressionSettings(bind=mode, **FAST))
        t = alone.details["bind_modes"]["tried"][mode]
        assert t["compressed_size"] >= strip or not t["strict"]
    assert best.details["bind_mode"] in modes["tried"]
    assert all(f"{m} not tried" in bind_line(best.details) for m in screened)


@pytest.mark.parametrize(
    ("path", "animation", "stop"),
    [
        (DATA / "gltf" / "Fox.glb", "Walk", 0),
        (DATA / "acl" / "cmu_09_02_multi_root.acl.sjson", None, 6),
        (DATA / "keyed" / "cmu_81_18_looping_keys4_linear.acl.sjson.xz", None, 197),
        (DATA / "keyed" / "cmu_13_07_keys6_linear.acl.sjson.xz", None, None),
        (DATA / "acl" / "cmu_09_02.acl.sjson", None, None),
    ],
    ids=["fox_walk", "multi_root", "keyed_looping", "keyed_strict", "cmu_09_02"],
)
def test_best_stops_an_additive_round_only_at_a_kept_keyframe_over_its_precision(
    path, animation, stop
) -> None:
    """Beside a strict strip, best stops the additive's round at a solved segment whose
    keyframe, kept whatever stripping does, is over a joint's precision on the applied pose.
    The same round run to its end without a judge keeps that keyframe, over the precision
    there (multi_root stops inside a segment where stripping removes nothing; the keyed
    clips strip, the first keyframes over the precision before stripping among them: the
    looping one stops past those, and the other's round ends strict); a round that is not
    stopped is the one best tried."""
    clip = load_clip(path, **({"animation": animation} if animation else {}))
    settings = CompressionSettings(**BEST)
    modes = BindModes(clip)
    best = modes.run(settings)
    why = best.details["bind_modes"]["screened"].get("additive", "")
    found = re.search(r"round stopped at sample (\d+)", why)
    assert (None if found is None else int(found.group(1))) == stop
    # the round best ran, on the compressor it made, to its end
    applied = settings.apply(clip)
    sk = applied.skeleton
    compressor = modes._compressors[("additive",)]
    target = compressor.clip.skeleton.with_settings(sk.precision, sk.shell_distance)
    inner = dataclasses.replace(settings, precision=None, shell_distance=None)
    whole = compressor.run(inner, skeleton=target)
    decoder = AppliedDecoder(whole.decoder.on_skeleton(sk), _base_of(applied, "additive"), sk)
    over = np.any(clip_errors(applied, decoder.decode_source()) > sk.precision, axis=1)
    if stop is None:
        tried = best.details["bind_modes"]["tried"]["additive"]
        assert tried["strict"] == (not over.any())
        assert tried["compressed_size"] == container.HEADER_SIZE + len(whole.payload)
    else:
        assert over[stop] and whole.decoder.retained[stop]
        assert best.details["bind_mode"] == "strip"


@pytest.mark.parametrize("mode", ["best", "auto"])
def test_best_and_auto_try_none_where_the_identity_holds_what_strip_stores(mode) -> None:
    """Joints held exactly at the identity under a bind pose that turns them: strip stores
    them as constants, none as nothing. The screen must let none through, and best (and
    auto, for which this is none's one case) keep it."""
    clip = load_clip(DATA / "acl" / "cmu_81_16_two_samples.acl.sjson")
    sk = clip.skeleton
    turned = np.arange(1, sk.num_joints, 3)
    rot = clip.rotations.copy()
    rot[:, turned] = [0.0, 0.0, 0.0, 1.0]
    bind = sk.bind_rotations.copy()
    bind[turned] = [np.sqrt(0.5), 0.0, 0.0, np.sqrt(0.5)]
    clip = clip.replace(skeleton=dataclasses.replace(sk, bind_rotations=bind), rotations=rot)
    best = CODEC.encode(clip, CompressionSettings(**{**FAST, "bind": mode}))
    modes = best.details["bind_modes"]
    assert "none" in modes["tried"] and "none" not in modes["screened"]
    assert best.details["bind_mode"] == "none"
    assert modes["tried"]["none"]["compressed_size"] < modes["tried"]["strip"]["compressed_size"]


@pytest.mark.parametrize(
    ("path", "animation", "best_keeps", "best_tries"),
    [
        (DATA / "acl" / "cmu_09_02.acl.sjson", None, "strip", {"strip", "additive"}),
        (DATA / "acl" / "cmu_81_16_two_samples.acl.sjson", None, "additive", {"strip", "additive"}),
        (DATA / "gltf" / "Fox.glb", "Survey", "strip", {"strip", "none"}),
    ],
    ids=["cmu_09_02", "two_samples", "fox_survey"],
)
def test_auto_is_strips_own_encoding_beside_a_strict_strip(
    path, animation, best_keeps, best_tries
) -> None:
    """The default, auto: beside a strict strip, where none's screen finds nothing the
    identity could hold, no other compressor runs: the payload is strip's, byte for byte,
    and the stats say what was left to best. best still tries them: the two-sample clip is
    the one of the 45 where that wins (additive, 6 B), Fox Survey's none is best's "closer
    default" try, which does not win."""
    clip = load_clip(path, **({"animation": animation} if animation else {}))
    assert CompressionSettings().bind == "auto"
    auto = CODEC.encode(clip, CompressionSettings(**FAST))
    modes = auto.details["bind_modes"]
    assert modes["asked"] == "auto" and set(modes["tried"]) == {"strip"}
    assert auto.details["bind_mode"] == "strip" and set(modes["screened"]) == {"none", "additive"}
    assert all("--bind best" in why for why in modes["screened"].values())
    strip = CODEC.encode(clip, CompressionSettings(bind="strip", **FAST))
    assert auto.payload == strip.payload
    best = CODEC.encode(clip, CompressionSettings(**BEST))
    assert set(best.details["bind_modes"]["tried"]) == best_tries
    assert best.details["bind_mode"] == best_keeps
    assert len(best.payload) <= len(auto.payload)


@pytest.mark.parametrize(
    "path",
    [
        DATA / "acl" / "cmu_09_02_with_zero_scale.acl.sjson",
        DATA / "acl" / "cmu_81_16_two_samples.acl.sjson",
        DATA / "gltf" / "Fox.glb",
        DATA / "bvh" / "cmu_02_03_run_ccrig.bvh",
    ],
    ids=lambda p: p.name.split(".")[0],
)
def test_autos_screen_finds_the_identitys_reach_as_bests_does(path) -> None:
    """auto's none screen measures the identity's reach in its own few reductions: the same
    bounds, bit for bit, as best's general form gives for the identity pose."""
    from codec.codecs.acl_style.bind_modes import _deviations, _identity_reach
    from codec.measure.shells import identity_strays
    from codec.model import additive

    clip = load_clip(path)
    distance = np.linspace(0.5, 7.0, clip.num_joints)
    low, _ = _deviations(clip, (additive.identity("additive0", clip.num_joints),), distance)
    np.testing.assert_array_equal(_identity_reach(*identity_strays(clip), distance), low[0])


@pytest.mark.parametrize(
    ("path", "animation", "bind"),
    [
        (DATA / "acl" / "cmu_81_16_two_samples.acl.sjson", None, "strip"),
        (DATA / "acl" / "cmu_81_18_looping.acl.sjson.xz", None, "none"),  # wraps
        (DATA / "gltf" / "Fox.glb", "Run", "strip"),  # keyframes stripped
        (DATA / "acl" / "cmu_09_02.acl.sjson", None, "additive"),  # applied to the bind pose
    ],
    ids=["two_samples", "looping", "fox_run_stripped", "additive"],
)
def test_a_modes_check_measures_what_the_decoded_clip_holds(path, animation, bind) -> None:
    """Each mode's strictness check measures its decoder's rows without making the decoded
    Clip: the same errors, bit for bit, as measuring decode_source."""
    from codec.codecs.acl_style.bind_modes import _worst_errors

    clip = load_clip(path, **({"animation": animation} if animation else {}))
    clip = CompressionSettings(**FAST).apply(clip)
    decoder = CODEC.encode(clip, CompressionSettings(bind=bind, **FAST)).decoder
    if "looping" in path.name:
        assert decoder.wrap
    if animation == "Run":
        assert not decoder.retained.all()
    expected = clip_errors(clip, decoder.decode_source(clip.name)).max(axis=0)
    np.testing.assert_array_equal(_worst_errors(clip, decoder), expected)


def test_auto_tries_every_mode_where_strip_misses_a_precision() -> None:
    """At a precision float32 samples cannot hold, strip is not strict: auto tries none and
    additive with their full rounds, as best does, and keeps the least over (additive)."""
    clip = load_clip(DATA / "acl" / "cmu_81_16_two_samples.acl.sjson")
    settings = CompressionSettings(precision=1e-6, **FAST)
    auto = CODEC.encode(clip, settings)
    best = CODEC.encode(clip, dataclasses.replace(settings, bind="best"))
    tried = auto.details["bind_modes"]["tried"]
    assert set(tried) == {"strip", "none", "additive"} and not tried["strip"]["strict"]
    assert auto.payload == best.payload and auto.details["bind_mode"] == "additive"


@pytest.mark.parametrize("bind", ["none", "additive"])
def test_each_mode_is_strict_and_its_file_decodes_to_the_same_poses(bind) -> None:
    clip = load_clip(DATA / "gltf" / "CesiumMan.glb")
    result = compress(clip, CompressionSettings(bind=bind, **FAST))
    assert result.details["bind_mode"] == bind
    errors = clip_errors(clip, result.decoder.decode_source())
    assert np.all(errors <= clip.skeleton.precision)
    read = CODEC.decode(_payload(result), clip.skeleton)
    np.testing.assert_array_equal(
        read.decode_source().rotations, result.decoder.decode_source().rotations
    )
    t = 0.37 * result.decoder.duration
    for rounding in ("none", "nearest"):
        a, b = read.sample(t, rounding), result.decoder.sample(t, rounding)
        np.testing.assert_array_equal(a.translations, b.translations)


def test_an_unknown_bind_code_is_refused_naming_the_byte() -> None:
    clip = load_clip(DATA / "acl" / "cmu_81_16_two_samples.acl.sjson")
    payload = bytearray(_payload(compress(clip, CompressionSettings(bind="none", **FAST))))
    word = struct.unpack_from("<I", payload, 16)[0]
    assert (word >> 25) & 0xF == 1
    struct.pack_into("<I", payload, 16, (word & ~(0xF << 25)) | (9 << 25))
    with pytest.raises(CompressedFormatError, match="bind code 9.*byte 16"):
        CODEC.decode(bytes(payload), clip.skeleton)


@pytest.mark.parametrize(
    "path",
    [
        DATA / "acl" / "cmu_09_02.acl.sjson",
        DATA / "acl" / "cmu_81_16_two_samples.acl.sjson",
        DATA / "gltf" / "CesiumMan.glb",
        DATA / "gltf" / "RiggedSimple.glb",
        ADDITIVE,
    ],
    ids=lambda p: p.name.split(".")[0],
)
def test_error_compensation_keeps_every_clip_strict(path) -> None:
    clip = load_clip(path)
    mode = "base-relative" if clip.additive is not None else "strip"
    encoded, strict = compensated(clip, CompressionSettings(**FAST), mode)
    errors = clip_errors(clip, encoded.decoder.decode_source())
    assert strict and np.all(errors <= clip.skeleton.precision)
    result = compress(clip, CompressionSettings(compensate=True, **FAST))
    comp = result.details["error_compensation"]
    assert comp["on"] and comp["kept"] == (comp["compressed_size"] < comp["plain_size"])
    lossy = clip_errors(clip, result.decoder.decode_source())
    assert np.all(lossy <= clip.skeleton.precision)


def test_compensation_that_is_not_strict_is_never_kept() -> None:
    """Under a zero-scaled parent no local value can correct a child: compensation does not
    reach the bound there in its rounds, and the clip keeps its plain, strict encoding."""
    clip = load_clip(DATA / "acl" / "cmu_09_02_with_zero_scale.acl.sjson")
    result = compress(clip, CompressionSettings(compensate=True, bind="strip", **FAST))
    comp = result.details["error_compensation"]
    assert not comp["strict"] and not comp["kept"]
    assert np.all(clip_errors(clip, result.decoder.decode_source()) <= clip.skeleton.precision)


# --- additive clips, checked by hand --------------------------------------------------------
def _qmul(a, b):
    """Hamilton product a * b of (..., 4) xyzw quaternions."""
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack(
        (
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ),
        axis=-1,
    )


def _matrix(q, t, s):
    """4x4 of rotation q, translation t, scale s (scale first)."""
    x, y, z, w = np.moveaxis(q / np.linalg.norm(q, axis=-1, keepdims=True), -1, 0)
    r = np.stack(
        (
            np.stack((1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)), -1),
            np.stack((2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)), -1),
            np.stack((2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)), -1),
        ),
        -2,
    )
    m = np.zeros((*q.shape[:-1], 4, 4))
    m[..., :3, :3] = r * s[..., None, :]
    m[..., :3, 3] = t
    m[..., 3, 3] = 1.0
    return m


def _applied(fmt, base, add):
    """ACL's rules: rotation = base * add; relative translation = base applied to the
    additive's (scaled) translation; additive0/1 add translations; scales multiply, additive1
    storing scale - 1."""
    (br, bt, bs), (ar, at, as_) = base, add
    rot = _qmul(br, ar)
    if fmt == "relative":
        v = at * bs
        mat = _matrix(br, np.zeros_like(bt), np.ones_like(bs))[..., :3, :3]
        tr = np.einsum("...ij,...j->...i", mat, v) + bt
    else:
        tr = at + bt
    sc = (1.0 + as_) * bs if fmt == "additive1" else as_ * bs
    return rot, tr, sc


def _hand_error(doc, fmt, lossy_add) -> float:
    """Max over samples and bones of the largest distance between the raw and lossy images
    of the three shell points (3 cm) in object space, on base+additive poses."""
    raw_add, world = hand_world(doc, fmt)
    raw_w, lossy_w = world(raw_add), world(lossy_add)
    points = np.array([[3.0, 0, 0, 1], [0, 3.0, 0, 1], [0, 0, 3.0, 1]])
    pr = np.einsum("sjab,pb->sjpa", raw_w, points)[..., :3]
    pl = np.einsum("sjab,pb->sjpa", lossy_w, points)[..., :3]
    return float(np.linalg.norm(pr - pl, axis=-1).max())


def hand_world(doc, fmt):
    """The SJSON document's additive tracks (rotations, translations, scales), each
    (S, J, 4|3), and a function from such tracks to object-space matrices (S, J, 4, 4) of
    the poses applied to the base (written from ACL's rules, not with our reader)."""
    bones = [b["name"] for b in doc["bones"]]
    parents = [bones.index(b["parent"]) if b["parent"] else -1 for b in doc["bones"]]
    s = int(doc["clip"]["num_samples"])
    nb = int(doc["clip"]["additive_base_num_samples"])

    def arrays(key, n):
        rows = {t["name"]: t for t in doc[key]}
        get = lambda name, k: np.array(rows[name][k], dtype=float)  # noqa: E731
        return [
            np.stack([get(b, k) for b in bones], axis=1)
            for k in ("rotations", "translations", "scales")
        ]

    raw_add = arrays("tracks", s)
    base = arrays("base_tracks", nb)
    # the base plays over the additive's duration: sample i sits at i / (s - 1) of it
    pos = np.arange(s) / (s - 1) * (nb - 1)
    k0 = np.floor(pos).astype(int)
    k1 = np.minimum(k0 + 1, nb - 1)
    a = (pos - k0)[:, None, None]
    r0, r1 = base[0][k0], base[0][k1]
    r1 = np.where(np.sum(r0 * r1, -1, keepdims=True) < 0, -r1, r1)
    br = r0 + (r1 - r0) * a
    br /= np.linalg.norm(br, axis=-1, keepdims=True)
    base_s = (
        br,
        base[1][k0] + (base[1][k1] - base[1][k0]) * a,
        base[2][k0] + (base[2][k1] - base[2][k0]) * a,
    )

    def world(add):
        local = _matrix(*_applied(fmt, base_s, add))
        out = np.empty_like(local)
        for j, p in enumerate(parents):
            out[:, j] = local[:, j] if p < 0 else out[:, p] @ local[:, j]
        return out

    return raw_add, world


@pytest.mark.parametrize("fmt", ["relative", "additive0", "additive1"])
def test_an_additive_clips_error_is_measured_on_base_plus_additive(tmp_path, fmt) -> None:
    text = ADDITIVE.read_text().replace(
        'additive_format = "relative"', f'additive_format = "{fmt}"'
    )
    # (additive1 reads the file's scales near 1 as 1 + x: doubled, a clip all the same)
    path = tmp_path / "clip.acl.sjson"
    path.write_text(text)
    doc = sjson.parse(text)
    clip = load_clip(path)
    assert clip.additive is not None and clip.additive.format == fmt
    result = compress(clip, CompressionSettings(**FAST))
    assert result.details["bind_mode"] == f"base-{fmt}"
    # the file holds the additive alone: decoding it without the base gives the additive
    alone = CODEC.decode(_payload(result), clip.skeleton).decode_source()
    lossy_add = (alone.rotations, alone.translations, alone.scales)
    want = _hand_error(doc, fmt, lossy_add)
    assert result.measurements.stats["max_error"] == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert want <= 0.01
    if fmt == "relative":  # between samples too: both sides blend the additive, then apply
        between = compress(clip, CompressionSettings(skin_error=False)).stats
        assert between["max_error_between_samples"] <= 0.01
    # and the raw clip is the applied pose: far from the additive values themselves
    file_values = np.array(doc["tracks"][1]["translations"], dtype=float)
    assert np.abs(clip.translations[:, 1] - file_values).max() > 1.0


def test_the_command_line_takes_the_bind_flags_and_says_what_they_did(tmp_path) -> None:
    import io
    import json

    from codec.cli import main

    out, err = io.StringIO(), io.StringIO()
    clip = DATA / "acl" / "cmu_81_16_two_samples.acl.sjson"
    args = ["compress", str(clip), "-o", str(tmp_path / "c.ssc"), "--bind", "none"]
    args += ["--compensate", "--clean-defaults", "0.0001", "--json", str(tmp_path / "s.json")]
    assert main(args, stdout=out, stderr=err) == 0, err.getvalue()
    stats = json.loads((tmp_path / "s.json").read_text())
    assert stats["bind_mode"] == "none" and stats["error_compensation"]["on"]
    assert stats["default_cleaning"]["tolerance"] == 0.0001
    assert stats["shellscope"]["bind"] == "none" and stats["shellscope"]["compensate"]
    assert "bind mode        none" in out.getvalue() and "cleaned" in out.getvalue()
