"""Joint-name patterns: fnmatch's meaning, in linear time whatever the pattern holds."""

from __future__ import annotations

import fnmatch
import random
import time
from pathlib import Path

import numpy as np
import pytest

import codec
from codec.model.clip import Skeleton
from codec.name_pattern import MAX_LENGTH, MAX_STARS, NamePattern, _atoms, pattern_problem
from codec.name_regex import NameRegex, regex_problem
from codec.tuning import JointOverride, exact_pattern, is_exact, resolve


def _reversed_range(pattern: str) -> bool:
    """fnmatch drops a reversed range (z-a) by merging its neighbours, which can turn a
    following `!` into a negation: a quirk not kept here (a reversed range holds nothing)."""
    return any(
        pattern[i] > pattern[i + 2] for i in range(len(pattern) - 2) if pattern[i + 1] == "-"
    )


def test_matches_as_fnmatch_does_on_random_patterns() -> None:
    rng = random.Random(37)
    checked = 0
    for _ in range(15_000):
        pattern = "".join(rng.choice("ab*?[]!-cA^\\") for _ in range(rng.randint(0, 9)))
        name = "".join(rng.choice("abc-]![A^\\") for _ in range(rng.randint(0, 8)))
        if _reversed_range(pattern.lower()) or pattern.startswith(("!", "[!]")):
            continue  # a leading `!` excludes, a leading `[!]` is a literal `!` (rules' syntax)
        want = fnmatch.fnmatchcase(name.lower(), pattern.lower())
        assert NamePattern(pattern).matches(name) == want, (pattern, name)
        checked += 1
    assert checked > 10_000


@pytest.mark.parametrize(
    ("pattern", "yes", "no"),
    [
        ("*Hand*", ["LeftHand", "handle", "RightHandIndex1"], ["Hips", "Han"]),
        ("L*_Finger?", ["L_Finger1", "Left_FingerX"], ["L_Finger12", "R_Finger1"]),
        ("[LR]_Toe", ["L_Toe", "r_toe"], ["C_Toe", "LR_Toe"]),
        ("[!LR]_Toe", ["C_Toe"], ["L_Toe"]),
        ("[]]x", ["]x"], ["x"]),
        ("a[bc", ["a[bc"], ["ab", "abc"]),  # no closing ]: an ordinary [
        ("[*]", ["*"], ["a"]),  # exact_pattern's escape of a star
        ("*a*a*b", ["aab", "xaxaxb"], ["ab", "aba"]),
    ],
)
def test_globs_mean_what_they_meant(pattern: str, yes: list[str], no: list[str]) -> None:
    p = NamePattern(pattern)
    assert [p.matches(n) for n in yes] == [True] * len(yes)
    assert [p.matches(n) for n in no] == [False] * len(no)
    names = tuple(yes + no)
    assert p.matches_each(names) == [True] * len(yes) + [False] * len(no)


def test_patterns_are_bounded_in_length_and_wildcards() -> None:
    assert pattern_problem("[" * MAX_LENGTH) is None
    assert "100,000 characters" in pattern_problem("[" * 100_000)
    assert pattern_problem("*a" * MAX_STARS) is None
    assert f"{MAX_STARS + 1} '*' wildcards" in pattern_problem("*a" * (MAX_STARS + 1))
    assert pattern_problem("**a" * MAX_STARS) is None  # runs are counted, not stars
    with pytest.raises(ValueError, match="at most 1,024"):
        JointOverride("[" * 100_000, precision=0.5)


def test_unclosed_brackets_compile_in_linear_time() -> None:
    """fnmatch looks for the `]` of every `[` anew: 8,000 of them took 1.2 s, 100,000 hours.
    Here 4x the brackets take about 4x the time (16x when quadratic): a ratio in one run."""

    def best(n: int) -> float:
        times = []
        for _ in range(3):
            t = time.process_time()
            _atoms("[" * n)
            times.append(time.process_time() - t)
        return min(times)

    best(20_000)
    assert best(200_000) / best(50_000) < 8


def test_a_flood_of_rules_resolves_as_the_old_matcher_did() -> None:
    """Rules that match nothing, anchored ones and floating ones, resolved against the
    same answers fnmatch gives (the last rule that matches a joint wins)."""
    sk = Skeleton.create(
        ["Hips", "Spine", "LeftHand", "RightHand", "LeftHandIndex1"], [-1, 0, 1, 1, 2]
    )
    rules = [JointOverride(f"nope{i}*", 0.5) for i in range(2_000)]
    rules += [JointOverride("*Hand*", 0.002), JointOverride("Left*1", 0.001)]
    r = resolve(sk, rules, precision=0.01)
    assert r.precision.tolist() == [0.01, 0.01, 0.002, 0.002, 0.001]
    expect = np.array([[fnmatch.fnmatchcase(n.lower(), q.pattern.lower()) for n in sk.names]
                       for q in rules[-2:]])  # fmt: skip
    got = np.array([q.matches(sk.names) for q in rules[-2:]])
    assert np.array_equal(got, expect)


CCRIG = Path(__file__).resolve().parents[1] / "data" / "bvh" / "cmu_02_03_run_ccrig.bvh"


@pytest.mark.parametrize(
    ("pattern", "yes", "no"),
    [
        ("*Thumb*|*Index*", ["L_Thumb1", "r_index3"], ["L_Mid1", "Hand"]),
        ("!*Toe*", ["Hips", "LeftFoot"], ["LeftToeBase", "toe"]),
        ("*Foot*|*Toe*|!Left*", ["RightFoot", "RightToe"], ["LeftFoot", "Hips"]),
        ("[!]Hand", ["!hand"], ["Hand"]),  # a literal leading !, as exact_pattern writes it
        ("a[|]b", ["a|b"], ["a", "b"]),
        ("re:[LR]_(Thumb|Index)[0-9]+", ["l_thumb12", "R_Index1"], ["L_Mid1", "L_Thumb"]),
        ("re:.*Hand.*|!re:.*Index.*", ["LeftHand", "Handle"], ["xx"]),  # re: takes the rest
        (r"*Hand*|!re:.*Index\d", ["LeftHand"], ["LeftHandIndex1", "Hips"]),
    ],
)
def test_alternatives_exclusions_and_regexes(pattern: str, yes: list[str], no: list[str]) -> None:
    p = NamePattern(pattern)
    assert [p.matches(n) for n in yes + no] == [True] * len(yes) + [False] * len(no)
    assert p.matches_each(tuple(yes + no)) == [True] * len(yes) + [False] * len(no)


def test_fingers_but_not_toes_on_a_cc_rig() -> None:
    """The CC rig has Index fingers and IndexToes: alternation picks thumbs and index
    fingers, `!*Toe*` leaves the toes out (a glob alone matched `*Thumb*|*Index*` literally:
    nothing)."""
    names = codec.load_clip(CCRIG, units="cm").skeleton.names
    sk = Skeleton.create(list(names), [-1] + [0] * (len(names) - 1))
    r = resolve(sk, [JointOverride("*Thumb*|*Index*|!*Toe*", 0.001)], precision=0.01)
    picked = {n for n, p in zip(names, r.precision, strict=True) if p == 0.001}
    want = {n for n in names if ("Thumb" in n or "Index" in n) and "Toe" not in n}
    assert picked == want and len(want) == 16
    both = JointOverride("*Thumb*|*Index*").matches(names)
    assert int(both.sum()) == 20  # the four IndexToe joints too


def test_exact_patterns_of_names_holding_the_syntax_match_only_that_name() -> None:
    names = ("!root", "re:x", "a|b", "a", "b", "root", "rx")
    for name in names:
        pattern = exact_pattern(name)
        assert is_exact(pattern)
        assert NamePattern(pattern).matches_each(names) == [n == name for n in names]
    assert not is_exact("!root") and not is_exact("a|b") and not is_exact("re:a")


def test_regexes_are_linear_and_refuse_what_needs_backtracking() -> None:
    """`(a+)+$` on 30 a's and a b takes Python's re minutes; the automaton a name's length."""

    def best(n: int) -> float:
        r = NameRegex("(a+)+|(a|aa)*c")
        times = []
        for _ in range(3):
            t = time.process_time()
            assert not r.matches("a" * n + "b")
            times.append(time.process_time() - t)
        return min(times)

    best(200)
    assert best(4_000) / best(1_000) < 8  # 4x the name, about 4x the time
    for bad, why in [
        ("(?=a)", "look-arounds"),
        ("(a)\\1", "back-references"),
        ("a**", "repeat of a repeat"),
        ("(a", "without its ')'"),
        ("a{99}", "m <= n <= 32"),
        ("[z-a]", "reversed"),
    ]:
        assert why in regex_problem(bad), bad
        assert why in pattern_problem("re:" + bad)
        with pytest.raises(ValueError, match="regex"):
            JointOverride("*Hand*|re:" + bad, precision=0.5)
    assert "alternative 2 is empty" in pattern_problem("*Hand*||*Foot*")
    assert "empty after its '!'" in pattern_problem("!")
