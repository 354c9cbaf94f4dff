"""curve: knots found where a clip was keyed with Catmull-Rom, strict from the bytes on every
real clip, every rounding mode, corrupt payloads refused."""

from __future__ import annotations

import numpy as np
import pytest

from codec.codecs.curve import CurveCodec
from codec.codecs.curve.tangents import MODES
from tests.codec.codecs import survey_checks as checks
from tests.codec.helpers import DATA

CODEC = CurveCodec()


def test_identity() -> None:
    checks.check_identity(CODEC)


MOCAP_SAMPLES = 120  # a mocap take's first 4 s: the same check, a third of the fitting
REFERENCE = "acl/cmu_09_02.acl.sjson"  # round trip, rounding, corrupt payloads and strict share it


def _samples(item: str) -> int:
    """Keyed clips whole (their keys are found across the whole clip); a motion-capture take
    on its first MOCAP_SAMPLES samples: the curve codec fits mocap with the same knot
    placement on every window, and no more of the take shows anything new (the strict
    check of every codec on longer windows: tests/codec/codecs/acl_style/test_strict.py;
    whole takes: bench/survey_codecs.py)."""
    return checks.STRICT_SAMPLES if item.startswith("keyed/") else MOCAP_SAMPLES


def test_round_trip_real_and_hand_made() -> None:
    checks.check_round_trip(CODEC, checks.window(REFERENCE))
    checks.check_round_trip(CODEC, checks.chain_clip(np.sin(np.linspace(0.0, 4.0, 40))))


def test_a_catmull_rom_keyed_track_keeps_exactly_its_keys() -> None:
    """A track made the way tools/make_keyed_clips.py makes one (Hermite segments through
    keys every 5 samples, finite-difference tangents): the knots are the keys."""
    keys = np.arange(0, 46, 5)
    rng = np.random.default_rng(5)
    kv = rng.uniform(-1.0, 1.0, len(keys))
    t = keys.astype(float)
    m = np.empty_like(kv)
    m[1:-1] = (kv[2:] - kv[:-2]) / (t[2:] - t[:-2])
    m[0], m[-1] = (kv[1] - kv[0]) / 5.0, (kv[-1] - kv[-2]) / 5.0
    s = np.arange(46)
    i = np.minimum(s // 5, len(keys) - 2)
    u = (s - t[i]) / 5.0
    values = (
        (2 * u**3 - 3 * u**2 + 1) * kv[i]
        + (u**3 - 2 * u**2 + u) * 5.0 * m[i]
        + (-2 * u**3 + 3 * u**2) * kv[i + 1]
        + (u**3 - u**2) * 5.0 * m[i + 1]
    )
    clip = checks.chain_clip(values)
    enc = CODEC.encode(clip, checks.SETTINGS)
    assert enc.details["strict"]
    dec = CODEC.decode(enc.payload, clip.skeleton)
    knots = {(t.joint, t.sub): t.keys.tolist() for t in dec.tracks}
    assert knots[(0, 1)] == keys.tolist()  # the root's x translation, 10 * values


def test_knots_every_four_are_found_on_a_keyed_clip() -> None:
    enc = checks.encoded(CODEC, checks.window("keyed/cmu_13_07_keys4_catmull_rom.acl.sjson.xz"))
    assert enc.details["strict"]
    assert enc.details["num_knots"] / enc.details["num_animated_tracks"] <= 74  # the keys


@pytest.mark.parametrize("item", checks.STRICT_IDS)
def test_strict_on_every_real_clip_from_the_bytes(item: str) -> None:
    checks.check_strict(CODEC, item, _samples(item))


def test_every_rounding_mode() -> None:
    checks.check_rounding(CODEC, checks.window(REFERENCE))


def test_corrupt_and_truncated_payloads_are_refused() -> None:
    checks.check_corrupt(CODEC, checks.window(REFERENCE))


def test_a_layout_1_payload_decodes_as_it_did() -> None:
    """tests/data/golden/curve-v1: the payload the curve codec wrote before issue 33 (every
    track Catmull-Rom, values in a range) for the chain of test_round_trip, and the poses its
    own decoder gave: still read, to the same poses, within the precision."""
    folder = DATA / "golden" / "curve-v1"
    payload = (folder / "chain.curve").read_bytes()
    assert payload[0] == 1
    clip = checks.SETTINGS.apply(checks.chain_clip(np.sin(np.linspace(0.0, 4.0, 40))))
    lossy = CODEC.decode(payload, clip.skeleton).decode_source()
    expected = np.load(folder / "chain_decoded.npz")
    for name in ("rotations", "translations", "scales"):
        np.testing.assert_allclose(getattr(lossy, name), expected[name], rtol=0, atol=1e-12)
    assert np.all(checks.outsider_errors(clip, lossy) <= clip.skeleton.precision)


def test_a_knot_at_every_sample_is_never_held_between_samples() -> None:
    """A zig-zag track needs a knot at every sample in any mode; stepped and linear then cost
    the same bits, and the tie goes to linear: between two samples the curve moves from one
    to the next as the raw clip does (a held step jumped by the whole difference: CesiumMan's
    left thigh was 15 degrees off at a quarter sample before its next sample)."""
    values = np.array([0.0, 0.6, 0.1, 0.9, 0.3, 0.8])
    clip = checks.chain_clip(values)
    enc = CODEC.encode(clip, checks.SETTINGS)
    assert enc.details["strict"]
    dec = CODEC.decode(enc.payload, clip.skeleton)
    assert all(MODES[t.mode] != "step" for t in dec.tracks)
    _, tr, _ = dec.sample_times(np.array([0.5]) / clip.sample_rate)
    assert tr[0, 0, 0] == pytest.approx(3.0, abs=0.5)  # root x halfway from 0 to 6 (held: 0)
