"""Override rules: order, patterns, exact-name edits."""

from __future__ import annotations

import numpy as np
import pytest

from codec.model.clip import Skeleton
from codec.tuning import JointOverride, exact_pattern, is_exact, resolve, set_joint_override


def _skeleton() -> Skeleton:
    names = ["root", "Spine", "LeftHand", "RightHand", "LeftHandIK", "odd[1]*"]
    return Skeleton.create(names, [-1, 0, 1, 1, 2, 0], precision=0.02, shell_distance=4.0)


def test_global_values_replace_the_skeletons_own() -> None:
    r = resolve(_skeleton(), (), 0.01, 3.0)
    assert np.all(r.precision == 0.01) and np.all(r.shell_distance == 3.0)
    r = resolve(_skeleton())
    assert np.all(r.precision == 0.02) and np.all(r.shell_distance == 4.0)
    assert not r.overridden.any() and set(r.rounding) == {"none"}


def test_later_rules_win_and_patterns_ignore_case() -> None:
    rules = [
        JointOverride("*hand*", precision=0.001),
        JointOverride("LeftHand", precision=0.005, rounding="floor"),
        JointOverride("*IK", shell_distance=10.0),
    ]
    r = resolve(_skeleton(), rules, 0.01, 3.0)
    assert r.precision.tolist() == [0.01, 0.01, 0.005, 0.001, 0.001, 0.01]
    assert r.shell_distance.tolist() == [3.0, 3.0, 3.0, 3.0, 10.0, 3.0]
    assert r.rounding.tolist() == ["none", "none", "floor", "none", "none", "none"]
    assert r.overridden.tolist() == [False, False, True, True, True, False]


def test_invalid_rules_are_refused() -> None:
    with pytest.raises(ValueError, match="precision"):
        JointOverride("x", precision=0.0)
    with pytest.raises(ValueError, match="rounding"):
        JointOverride("x", rounding="per_track")


def test_exact_pattern_matches_only_that_name() -> None:
    sk = _skeleton()
    assert JointOverride(exact_pattern("odd[1]*")).matches(sk.names).tolist() == [
        False,
        False,
        False,
        False,
        False,
        True,
    ]
    assert JointOverride(exact_pattern("LeftHand")).matches(sk.names).sum() == 1


def test_set_joint_override_updates_in_place_and_drops_empty_rules() -> None:
    rules = (JointOverride("LeftHand", precision=0.5), JointOverride("*Hand*", precision=0.1))
    out = set_joint_override(rules, "LeftHand", shell_distance=2.0)
    assert out == (
        JointOverride("LeftHand", precision=0.5, shell_distance=2.0),
        JointOverride("*Hand*", precision=0.1),
    )
    r = resolve(_skeleton(), out, 0.01, 3.0)
    assert r.precision[2] == 0.5  # the joint's own edit wins over the later pattern
    cleared = set_joint_override(out, "LeftHand", precision=None, shell_distance=None)
    assert cleared == (JointOverride("*Hand*", precision=0.1),)
    with pytest.raises(TypeError):
        set_joint_override(rules, "LeftHand", level="high")


def test_a_joints_own_value_wins_over_a_pattern_made_after_it() -> None:
    """The CC rig case: CC_Base_R_Ring3 given 0.002, then `*Ring?` = 0.005 added after it."""
    sk = Skeleton.create(["root", "CC_Base_R_Ring3", "CC_Base_R_Ring2"], [-1, 0, 1])
    rules = set_joint_override((), "CC_Base_R_Ring3", precision=0.002)
    rules = (*rules, JointOverride("*Ring?", precision=0.005))
    assert resolve(sk, rules, 0.01).precision.tolist() == [0.01, 0.002, 0.005]
    # the same whichever was made first, and among a joint's own rules the later wins
    late = (JointOverride("*Ring?", precision=0.005), JointOverride("cc_base_r_ring3", 0.003))
    assert resolve(sk, (*late, *rules), 0.01).precision.tolist() == [0.01, 0.002, 0.005]
    assert resolve(sk, (*rules, *late), 0.01).precision.tolist() == [0.01, 0.003, 0.005]


def test_exact_patterns_are_names_without_wildcards() -> None:
    assert is_exact("LeftHand") and is_exact(exact_pattern("odd[1]*")) and is_exact("[*]")
    assert not any(is_exact(p) for p in ("*Hand", "Hand?", "[ab]c", "a[]"))


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"precision": 1e308}, "precision 1e+308 is out of range"),
        ({"shell_distance": float("inf")}, "must be > 0"),
        ({"precision": True}, "must be a number"),
        ({"shell_distance": "3"}, "must be a number"),
    ],
)
def test_values_the_codec_cannot_hold_are_refused(fields: dict, words: str) -> None:
    with pytest.raises(ValueError) as info:
        JointOverride("x", **fields)
    assert words in str(info.value)
