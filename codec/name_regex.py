"""Regular expressions for joint names (`re:` rules), matched without backtracking.

A tuning file is untrusted, and Python's `re` backtracks: `(a+)+$` against forty `a`s and a
`b` runs for minutes. Here a regular expression is compiled to a Thompson automaton and run
over the name keeping the set of states it may be in, so matching costs at most (states x
name length), whatever the expression. The subset this takes: literals, `.`, classes
`[a-z]` / `[^...]`, the escapes `\\d \\w \\s \\D \\W \\S` and escaped punctuation, groups
`(...)` / `(?:...)`, alternation `|`, and the quantifiers `* + ?` and `{m}`, `{m,}`, `{m,n}`
(m, n at most MAX_REPEAT; a lazy `?` after one changes nothing, a match being yes or no).
It matches the whole name, case-insensitively, as globs do; `^` and `$` are allowed at the
ends only (they say nothing more). Back-references and look-arounds, which no automaton can
run, are refused with a message saying so, as are expressions of more than MAX_STATES states.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

MAX_REPEAT = 32
MAX_STEPS = 4096  # the steps of the lazily built DFA kept per expression
MAX_STATES = 512  # a flood of rules stays cheap: a few ms per rule and skeleton
_ESCAPES: dict[str, Callable[[str], bool]] = {
    "d": str.isdigit,
    "w": lambda c: c.isalnum() or c == "_",
    "s": str.isspace,
}


class _Regex:
    """A parsed expression as a Thompson automaton: state k is ('char', test, next),
    ('split', a, b) or ('match',)."""

    def __init__(self, text: str) -> None:
        self.text, self.i = text, 0
        self.states: list[tuple] = []
        if text.startswith("^"):
            self.i = 1
        start, ends = self._alternation()
        if self.i < len(text) and text[self.i] == "$" and self.i == len(text) - 1:
            self.i += 1
        if self.i < len(text):
            self._fail(f"unexpected {text[self.i]!r}")
        match = self._add(("match",))
        self._patch(ends, match)
        self.start = start

    def _fail(self, what: str) -> None:
        raise ValueError(f"regex at character {self.i + 1}: {what}")

    def _add(self, state: tuple) -> int:
        if len(self.states) >= MAX_STATES:
            raise ValueError(f"regex: more than {MAX_STATES:,} states, its repeats spelt out")
        self.states.append(state)
        return len(self.states) - 1

    def _patch(self, ends: list[tuple[int, int]], to: int) -> None:
        """Point every dangling exit (state, slot) at `to`."""
        for k, slot in ends:
            s = list(self.states[k])
            s[slot] = to
            self.states[k] = tuple(s)

    # a fragment is (start state, dangling exits); an empty one is (None, [])
    def _alternation(self) -> tuple[int, list]:
        start, ends = self._sequence()
        while self.i < len(self.text) and self.text[self.i] == "|":
            self.i += 1
            other, more = self._sequence()
            split = self._add(("split", start, other))
            start, ends = split, ends + more
        return start, ends

    def _sequence(self) -> tuple[int, list]:
        """Atoms in a row; an empty sequence is one state that matches nothing consumed."""
        pieces: list[tuple[int, list]] = []
        while self.i < len(self.text) and self.text[self.i] not in "|)":
            if self.text[self.i] == "$" and self.i == len(self.text) - 1:
                break
            pieces.append(self._repeat())
        if not pieces:
            empty = self._add(("split", None, None))
            return empty, [(empty, 1), (empty, 2)]
        start, ends = pieces[0]
        for nxt, nxt_ends in pieces[1:]:
            self._patch(ends, nxt)
            ends = nxt_ends
        return start, ends

    def _repeat(self) -> tuple[int, list]:
        at = self.i
        frag = self._atom()
        text = self.text
        if self.i < len(text) and text[self.i] in "*+?{":
            lo, hi = self._quantifier()
            if self.i < len(text) and text[self.i] == "?":
                self.i += 1  # lazy: the same yes or no
            if self.i < len(text) and text[self.i] in "*+{":
                self._fail("a repeat of a repeat: put the first in a group")
            frag = self._repeated(at, lo, hi)
        return frag

    def _quantifier(self) -> tuple[int, int | None]:
        c = self.text[self.i]
        self.i += 1
        if c != "{":
            return {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
        close = self.text.find("}", self.i)
        if close < 0:
            self._fail("a '{' without its '}'")
        body = self.text[self.i : close].split(",")
        try:
            lo = int(body[0])
            hi = lo if len(body) == 1 else (None if body[1] == "" else int(body[1]))
        except ValueError:
            self._fail("a repeat count must be {m}, {m,} or {m,n}")
        if len(body) > 2 or lo > MAX_REPEAT or (hi is not None and not lo <= hi <= MAX_REPEAT):
            self._fail(f"a repeat count must be {{m}}, {{m,}} or {{m,n}}, m <= n <= {MAX_REPEAT}")
        self.i = close + 1
        return lo, hi

    def _repeated(self, at: int, lo: int, hi: int | None) -> tuple[int, list]:
        """The atom at text[at] repeated: parsed again for every copy, so each copy has states
        of its own (the first parse's are left unreachable)."""
        copies: list[tuple[int, list]] = []

        def copy() -> tuple[int, list]:
            keep = self.i
            self.i = at
            frag = self._atom()
            self.i = keep
            return frag

        for _ in range(lo):
            copies.append(copy())
        if hi is None:
            body, body_ends = copy()
            loop = self._add(("split", body, None))
            self._patch(body_ends, loop)
            copies.append((loop, [(loop, 2)]))
        else:
            for _ in range(hi - lo):
                body, body_ends = copy()
                opt = self._add(("split", body, None))
                copies.append((opt, [*body_ends, (opt, 2)]))
        if not copies:
            empty = self._add(("split", None, None))
            return empty, [(empty, 1), (empty, 2)]
        start, ends = copies[0]
        for nxt, nxt_ends in copies[1:]:
            self._patch(ends, nxt)
            ends = nxt_ends
        return start, ends

    def _atom(self) -> tuple[int, list]:
        text = self.text
        c = text[self.i]
        if c == "(":
            self.i += 1
            if text.startswith("?:", self.i):
                self.i += 2
            elif text.startswith("?", self.i):
                self._fail("look-arounds and named groups cannot be run without backtracking")
            frag = self._alternation()
            if self.i >= len(text) or text[self.i] != ")":
                self._fail("a '(' without its ')'")
            self.i += 1
            return frag
        if c in "*+?{":
            self._fail(f"{c!r} repeats nothing")
        if c in ")^$":
            self._fail(f"{c!r} is allowed at the ends only" if c != ")" else "a ')' without '('")
        if c == "[":
            test = self._class()
        elif c == "\\":
            test = self._escape()
        else:
            self.i += 1
            test = (lambda _c: True) if c == "." else _literal(c)
        k = self._add(("char", test, None))
        return k, [(k, 2)]

    def _escape(self) -> Callable[[str], bool]:
        self.i += 1
        if self.i >= len(self.text):
            self._fail("a '\\' at the end")
        c = self.text[self.i]
        self.i += 1
        if c.lower() in _ESCAPES:
            test = _ESCAPES[c.lower()]
            return test if c.islower() else (lambda ch: not test(ch))
        if c.isalnum():
            self._fail(f"'\\{c}' is not taken (back-references; letter escapes but d w s)")
        return _literal(c)

    def _class(self) -> Callable[[str], bool]:
        text = self.text
        self.i += 1
        negated = text.startswith("^", self.i)
        self.i += negated
        tests: list[Callable[[str], bool]] = []
        chars: set[str] = set()
        ranges: list[tuple[str, str]] = []
        first = True
        while True:
            if self.i >= len(text):
                self._fail("a '[' without its ']'")
            c = text[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if c == "\\":
                esc = self._escape()
                tests.append(esc)
                continue
            self.i += 1
            if text.startswith("-", self.i) and self.i + 1 < len(text) and text[self.i + 1] != "]":
                hi = text[self.i + 1]
                self.i += 2
                if hi < c:
                    self._fail(f"the range {c}-{hi} is reversed")
                ranges.append((c, hi))
            else:
                chars.add(c)
        low = {ch.lower() for ch in chars}

        def test(ch: str) -> bool:
            inside = ch.lower() in low or any(
                lo <= x <= hi for lo, hi in ranges for x in (ch, ch.lower(), ch.upper())
            )
            inside = inside or any(t(ch) for t in tests)
            return inside != negated

        return test


def _literal(c: str) -> Callable[[str], bool]:
    low = c.lower()
    return lambda ch: ch.lower() == low


def regex_problem(text: str) -> str | None:
    """None for an expression NameRegex takes, else why not (one line)."""
    try:
        _Regex(text)
    except ValueError as e:
        return str(e)
    return None


class NameRegex:
    """A compiled `re:` expression; `matches(name)` true when it matches the whole name."""

    def __init__(self, text: str) -> None:
        regex = _Regex(text)
        self.pattern = text
        self._states = regex.states
        self._start = self._closure({regex.start})
        self._steps: dict[tuple[frozenset[int], str], frozenset[int]] = {}

    def _closure(self, states: set[int]) -> frozenset[int]:
        """`states` and every state reachable from them without reading a character."""
        todo, seen = list(states), set(states)
        while todo:
            s = self._states[todo.pop()]
            if s[0] == "split":
                for nxt in s[1:]:
                    if nxt is not None and nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
        return frozenset(k for k in seen if self._states[k][0] != "split")

    def matches(self, name: str) -> bool:
        """Run the automaton over the name; each (state set, character) step is computed
        once and kept (a lazily built DFA: a rig's names share their prefixes)."""
        current = self._start
        states, steps = self._states, self._steps
        for ch in name:
            key = (current, ch)
            nxt = steps.get(key)
            if nxt is None:
                step = {
                    states[k][2] for k in current if states[k][0] == "char" and states[k][1](ch)
                }
                nxt = self._closure(step) if step else frozenset()
                if len(steps) >= MAX_STEPS:  # memory stays bounded whatever the names
                    steps.clear()
                steps[key] = nxt
            if not nxt:
                return False
            current = nxt
        return any(states[k][0] == "match" for k in current)

    def matches_each(self, names: Sequence[str]) -> list[bool]:
        return [self.matches(n) for n in names]
