"""Joint-name patterns (shell globs, case-insensitive), compiled and matched in linear time.

The rules of a tuning file (codec.tuning.JointOverride) select joints by patterns such as
`*Hand*`, `L*_Finger?` or `[LR]_Toe`: `*` any run of characters, `?` one character, `[...]`
one of a set (`[!...]` none of it, `a-z` a range; a `]` first in the set is one of its
members; a `[` without its `]` is an ordinary character), as fnmatch reads them.

A tuning file is untrusted input, and fnmatch is not linear in it: translating a pattern
looks for the `]` of every `[` anew, so 100,000 unclosed `[` (a 100 KB rule) take hours.
Here a pattern is read once, left to right, with the position of the next `]` known for
every position (one pass from the right), so compiling is linear in its length; matching
anchors the parts before the first and after the last `*` at the ends of the name and finds
each part between them at its leftmost place (which is exact for globs), so it never
backtracks. Patterns are bounded too (`pattern_problem`): MAX_LENGTH characters (an exact
pattern of a long USD joint path fits) and MAX_STARS wildcard runs, so a flood of rules
costs at most a few string searches per rule and joint.

A rule's pattern may hold several alternatives separated by `|` (`*Thumb*|*Index*`: either);
an alternative starting with `!` excludes (`*Hand*|!*Thumb*`: the hands but not the thumbs; a
pattern of exclusions only, such as `!*Toe*`, is every joint but those). `[|]` is a literal
`|` and a leading `[!]` a literal `!` (how `codec.tuning.exact_pattern` escapes a name).
An alternative starting with `re:` is a regular expression (codec.name_regex: a subset run
without backtracking, so it too is linear in the name), matched against the whole name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from codec.name_regex import NameRegex, regex_problem

MAX_LENGTH = 1024
MAX_STARS = 32


MAX_ALTERNATIVES = 32
REGEX = "re:"


def pattern_problem(pattern: str) -> str | None:
    """None for a pattern this module takes, else why not (one line, no quote of it)."""
    if len(pattern) > MAX_LENGTH:
        return f"the pattern is {len(pattern):,} characters long; at most {MAX_LENGTH:,}"
    if "|" not in pattern and not pattern.startswith(("!", REGEX, "[!]")):
        return _glob_problem(pattern)
    alternatives = split_alternatives(pattern)
    if len(alternatives) > MAX_ALTERNATIVES:
        return f"the pattern has {len(alternatives):,} alternatives; at most {MAX_ALTERNATIVES}"
    for k, (excluded, regex, text) in enumerate(alternatives, 1):
        where = f"alternative {k}" if len(alternatives) > 1 else "the pattern"
        if not text and not regex:
            return f"{where} is empty" + (" after its '!'" if excluded else "")
        problem = regex_problem(text) if regex else _glob_problem(text)
        if problem:
            return f"{where}: {problem}"
    return None


def _glob_problem(pattern: str) -> str | None:
    if pattern.count("*") <= MAX_STARS:  # no more runs than stars: the common case, in C
        return None
    stars = _star_runs(pattern)
    if stars > MAX_STARS:
        return f"the pattern has {stars:,} '*' wildcards; at most {MAX_STARS}"
    return None


def split_alternatives(pattern: str) -> list[tuple[bool, bool, str]]:
    """The pattern's alternatives as (excluded, regex, text): split at every `|` but `[|]`;
    a leading `!` excludes; `re:` takes the rest of the pattern as one regular expression;
    a leading `[!]` is a literal `!`. Linear in the pattern."""
    out: list[tuple[bool, bool, str]] = []
    i, n = 0, len(pattern)
    while True:
        excluded = pattern.startswith("!", i)
        i += excluded
        if pattern.startswith(REGEX, i):
            out.append((excluded, True, pattern[i + len(REGEX) :]))
            return out
        start, parts = i, []
        while i < n and pattern[i] != "|":
            if pattern.startswith("[|]", i):
                parts.append(pattern[start:i] + "|")
                i += 3
                start = i
            else:
                i += 1
        text = "".join(parts) + pattern[start:i]
        if text.startswith("[!]"):
            text = "!" + text[3:]  # a glob never reads a leading `!` itself: a literal
        out.append((excluded, False, text))
        if i >= n:
            return out
        i += 1  # past the `|`


_STARS = re.compile(r"\*+")


def _star_runs(pattern: str) -> int:
    return len(_STARS.findall(pattern)) if "*" in pattern else 0


@dataclass(frozen=True)
class _Set:
    """One character of a set: `members`, `ranges` (inclusive), or none of them (`negated`)."""

    members: frozenset[str]
    ranges: tuple[tuple[str, str], ...]
    negated: bool

    def has(self, c: str) -> bool:
        inside = c in self.members or any(lo <= c <= hi for lo, hi in self.ranges)
        return inside != self.negated


_ANY = None  # `?`: an atom that matches any one character
Atom = str | _Set | None
Part = str | tuple[Atom, ...]  # a plain string, or atoms when it holds `?` or a set


def _atoms(pattern: str) -> list[Atom | type[Ellipsis]]:
    """The pattern as atoms, `...` standing for a `*` run; linear in its length."""
    n = len(pattern)
    next_close = [-1] * (n + 1)
    for i in range(n - 1, -1, -1):
        next_close[i] = i if pattern[i] == "]" else next_close[i + 1]
    out: list[Atom | type[Ellipsis]] = []
    i = 0
    while i < n:
        c = pattern[i]
        if c == "*":
            if not out or out[-1] is not Ellipsis:
                out.append(Ellipsis)
            i += 1
        elif c == "?":
            out.append(_ANY)
            i += 1
        elif c == "[":
            k = i + 1
            negated = k < n and pattern[k] == "!"
            k += negated
            first = k
            if k < n and pattern[k] == "]":
                k += 1  # a `]` first in the set is a member
            end = next_close[k] if k <= n else -1
            if end < 0:
                out.append("[")  # no closing `]`: an ordinary character
                i += 1
                continue
            out.append(_parse_set(pattern[first:end], negated))
            i = end + 1
        else:
            out.append(c)
            i += 1
    return out


def _parse_set(body: str, negated: bool) -> _Set:
    members: set[str] = set()
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            if body[i] <= body[i + 2]:  # a reversed range holds nothing
                ranges.append((body[i], body[i + 2]))
            i += 3
        else:
            members.add(body[i])
            i += 1
    return _Set(frozenset(members), tuple(ranges), negated)


def _part(atoms: list[Atom]) -> Part:
    if all(isinstance(a, str) for a in atoms):
        return "".join(atoms)  # type: ignore[arg-type]
    return tuple(atoms)


def _at(part: Part, name: str, k: int) -> bool:
    """Whether `part` matches `name` at position k (the caller checked the length)."""
    if isinstance(part, str):
        return name.startswith(part, k)
    for a, c in zip(part, name[k : k + len(part)], strict=True):
        if a is _ANY:
            continue
        if isinstance(a, _Set):
            if not a.has(c):
                return False
        elif a != c:
            return False
    return True


def _find(part: Part, name: str, start: int, stop: int) -> int:
    """The leftmost k, start <= k and k + len(part) <= stop, where `part` matches; -1."""
    if isinstance(part, str):
        return name.find(part, start, stop)
    for k in range(start, stop - len(part) + 1):
        if _at(part, name, k):
            return k
    return -1


class _Glob:
    """One glob, compiled; `matches(name)` is case-insensitive, as tuning rules are."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        text = pattern.lower()
        if not any(c in text for c in "*?["):
            self._parts: tuple[Part, ...] = (text,)
        elif "[" not in text and "?" not in text:
            self._parts = tuple(text.split("*"))
        else:
            parts: list[Part] = []
            run: list[Atom] = []
            for atom in _atoms(text):
                if atom is Ellipsis:
                    parts.append(_part(run))
                    run = []
                else:
                    run.append(atom)  # type: ignore[arg-type]
            parts.append(_part(run))
            self._parts = tuple(parts)
        self._seen: tuple[Sequence[str], list[bool]] | None = None

    def matches(self, name: str) -> bool:
        parts = self._parts
        name = name.lower()
        first, last = parts[0], parts[-1]
        if len(parts) == 1:
            return len(name) == len(first) and _at(first, name, 0)
        n = len(name)
        if len(first) + len(last) > n:
            return False
        if not (_at(first, name, 0) and _at(last, name, n - len(last))):
            return False
        return self._middle(name)

    def matches_each(self, names: Sequence[str]) -> list[bool]:
        """`matches` of every name; the answer for the last sequence given is kept (the
        resolver asks again for the same skeleton's names on every recompression)."""
        seen = self._seen
        if seen is not None and seen[0] is names:
            return seen[1]
        low = _lowered(names)
        parts = self._parts
        if len(parts) > 1 and isinstance(parts[0], str) and isinstance(parts[-1], str):
            # for every name at once, in C: the length, the anchors, and the plain part that
            # must occur most often between them; most rules of a flood stop here
            first, last = parts[0], parts[-1]
            least = sum(len(p) for p in parts)
            plain = [p for p in parts[1:-1] if isinstance(p, str) and p]
            part = max(plain, key=plain.count) if plain else ""
            times = plain.count(part)
            out = [
                len(n) >= least
                and n.startswith(first)
                and n.endswith(last)
                and n.count(part, len(first), len(n) - len(last)) >= times
                for n in low
            ]
            if len(parts) > 2:
                out = [ok and self._middle(n) for ok, n in zip(out, low, strict=True)]
        else:
            out = [self.matches(n) for n in low]
        self._seen = (names, out)
        return out

    def _middle(self, name: str) -> bool:
        """The parts between the first and the last `*`, each at its leftmost place."""
        parts = self._parts
        pos, stop = len(parts[0]), len(name) - len(parts[-1])
        for part in parts[1:-1]:
            k = _find(part, name, pos, stop)
            if k < 0:
                return False
            pos = k + len(part)
        return True


_LOWERED: tuple[Sequence[str], list[str]] | None = None


def _lowered(names: Sequence[str]) -> list[str]:
    """The names in lower case (the last sequence's kept: every rule asks for the same)."""
    global _LOWERED
    if _LOWERED is None or _LOWERED[0] is not names:
        _LOWERED = (names, [n.lower() for n in names])
    return _LOWERED[1]


class NamePattern:
    """A compiled rule pattern (globs, `|` alternatives, `!` exclusions, `re:` regexes);
    `matches(name)` is case-insensitive, as tuning rules are."""

    def __init__(self, pattern: str) -> None:
        problem = pattern_problem(pattern)
        if problem:
            raise ValueError(problem)
        self.pattern = pattern
        self._single: _Glob | None = None
        self._some: list[_Glob | NameRegex] = []
        self._none: list[_Glob | NameRegex] = []
        if "|" not in pattern and not pattern.startswith(("!", REGEX, "[!]")):
            self._single = _Glob(pattern)  # the common case, as fast as before
            return
        for excluded, regex, text in split_alternatives(pattern):
            (self._none if excluded else self._some).append(
                NameRegex(text) if regex else _Glob(text)
            )

    def matches(self, name: str) -> bool:
        if self._single is not None:
            return self._single.matches(name)
        some = not self._some or any(p.matches(name) for p in self._some)
        return some and not any(p.matches(name) for p in self._none)

    def matches_each(self, names: Sequence[str]) -> list[bool]:
        """`matches` of every name (the resolver asks again for the same skeleton's names on
        every recompression: each glob keeps its last answer)."""
        if self._single is not None:
            return self._single.matches_each(names)
        out = [not self._some] * len(names)
        for p in self._some:
            out = [a or b for a, b in zip(out, p.matches_each(names), strict=True)]
        for p in self._none:
            out = [a and not b for a, b in zip(out, p.matches_each(names), strict=True)]
        return out
