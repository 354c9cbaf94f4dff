"""curve: a clip keyed by any of the animators' generators (tools/make_keyed_clips.py: linear,
stepped, Catmull-Rom, Bezier flat / auto / clamped; keys every 3 samples or at irregular
frames 4 to 12 apart) is found as it was keyed: the track mode, the keys as knots, the
tangent rule alone; strict from the bytes. A clip that was not keyed (motion capture) has no
key candidates.

Irregular keys 2 or 3 samples apart are not asked to come out exactly: a cubic segment of
two or three samples fits anything, so other knot sets fit as well (bench/keyed_codecs.py
measures those clips' sizes)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from codec.codecs.curve import CurveCodec
from codec.codecs.curve.fitter import KEYED_SHARE
from codec.codecs.curve.keys import clip_keys
from codec.codecs.curve.tangents import MODES
from codec.model import quat
from codec.model.clip import Clip, Skeleton
from tests.codec.codecs import survey_checks as checks

CODEC = CurveCodec()
S = 61


def _make_keyed_clips():
    path = Path(__file__).resolve().parents[4] / "tools" / "make_keyed_clips.py"
    spec = importlib.util.spec_from_file_location("make_keyed_clips", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_keyed_clips", module)
    spec.loader.exec_module(module)
    return module


MAKE = _make_keyed_clips()
KEY_SETS = {
    "every_3": MAKE.key_indices(S, 3),
    "irregular_4-12": MAKE.irregular_keys(S, seed=3, gaps=(4, 12)),
}


def smooth_chain() -> Clip:
    """A three-joint chain moving like a take: the middle joint turns about a tilted axis and
    the root wanders in x and y, each a sum of seeded sines (no two tracks alike)."""
    rng = np.random.default_rng(33)
    t = np.linspace(0.0, 2.0, S)[:, None]

    def wave() -> np.ndarray:
        f, p, a = rng.uniform(0.5, 2.0, 3), rng.uniform(0, 6.3, 3), rng.uniform(0.2, 1.0, 3)
        return (a * np.sin(f * 2 * np.pi * t / 2.0 + p)).sum(axis=1)

    rot = np.tile(quat.identity((1, 3)), (S, 1, 1))
    axis = np.array([0.3, 0.2, 1.0]) / np.linalg.norm([0.3, 0.2, 1.0])
    rot[:, 1] = quat.from_axis_angle(axis, wave())
    tr = np.zeros((S, 3, 3))
    tr[:, 0, 0], tr[:, 0, 1] = 10.0 * wave(), 10.0 * wave()
    tr[:, 1:, 1] = 20.0
    sk = Skeleton.create(["root", "mid", "tip"], [-1, 0, 1], bind_translations=tr[0])
    return Clip(sk, 30.0, rot, tr, np.ones((S, 3, 3)), name="chain")


@pytest.mark.parametrize("spacing", list(KEY_SETS))
@pytest.mark.parametrize(
    ("kind", "mode", "rule"),
    [
        ("stepped", "step", None),
        ("linear", "linear", None),
        ("catmull_rom", "cubic", "catmull_rom"),
        ("bezier_flat", "cubic", "flat"),
        ("bezier_auto", "cubic", "auto"),
        ("bezier_clamped", "cubic", "clamped"),
    ],
)
def test_every_kind_of_keys_is_found_as_it_was_keyed(
    kind: str, mode: str, rule: str | None, spacing: str
) -> None:
    keys = KEY_SETS[spacing]
    clip = checks.SETTINGS.apply(MAKE.keyed_at(smooth_chain(), keys, kind, kind))
    enc = CODEC.encode(clip, checks.SETTINGS)
    lossy = CODEC.decode(enc.payload, clip.skeleton).decode_source()
    assert np.all(checks.outsider_errors(clip, lossy) <= clip.skeleton.precision)
    assert enc.details["strict"] is True
    tracks = CODEC.decode(enc.payload, clip.skeleton).tracks
    # the middle joint's rotation and the root's x and y translations
    assert {(t.joint, t.sub) for t in tracks} == {(1, 0), (0, 1)}
    for t in tracks:
        assert MODES[t.mode] == mode, (t.joint, t.sub)
        assert t.keys.tolist() == keys.tolist(), (t.joint, t.sub)
    if rule is not None:
        assert enc.details["tangent_rules"][rule] == 2
        assert enc.details["tangent_corrections"] == 0


def test_a_regular_key_grid_is_found_whole_and_irregular_keys_are_candidates() -> None:
    keys = KEY_SETS["every_3"]
    found = clip_keys(MAKE.keyed_at(smooth_chain(), keys, "bezier_auto", "auto"), KEYED_SHARE)
    assert found is not None and np.flatnonzero(found).tolist() == keys.tolist()
    keys = KEY_SETS["irregular_4-12"]
    found = clip_keys(MAKE.keyed_at(smooth_chain(), keys, "linear", "linear"), KEYED_SHARE)
    assert found is not None and found.sum() > 2  # both tracks agree on a key or more
    assert set(np.flatnonzero(found)) <= set(keys.tolist())  # and on nothing but keys


def test_motion_capture_has_no_key_candidates() -> None:
    mocap = checks.strict_window(checks.load("acl/cmu_09_02.acl.sjson"))
    assert clip_keys(mocap, KEYED_SHARE) is None
