"""Undo and redo of the tuning: global settings and per-joint rules, as one linear history.

A tuning is two immutable values (`GlobalSettings`, a tuple of `JointOverride`), so the history
keeps whole states rather than commands: undoing never has to invert an edit, and what the
sidecar saves is exactly the state the history stands on. Qt-free so tests drive it without a
window; the controller applies its states to the document (app.controller.Controller.undo).

A burst of edits of one knob (a slider drag, a spin box held down) is one step: an edit that
carries the same `merge` key as the step before, within `MERGE_SECONDS` of the last one,
replaces that step's outcome instead of adding a step. A gesture the view can see begin and
end (a slider pressed, then released: `hold`, `seal`) is one step however long it pauses,
and the next one is a step of its own however soon it follows. Opening a clip starts a new
history (`reset`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from codec.tuning import GlobalSettings, JointOverride

MERGE_SECONDS = 1.0  # edits of one knob closer than this are one undo step
LIMIT = 500  # steps kept; the oldest are forgotten first


@dataclass(frozen=True)
class Tuning:
    """Everything the user tunes on a clip, the unit of undo and of the sidecar."""

    settings: GlobalSettings
    overrides: tuple[JointOverride, ...] = ()


@dataclass(frozen=True)
class _Step:
    label: str  # what the user did, for "Undo <label>"
    before: Tuning
    after: Tuning
    merge: str | None
    at: float


class TuningHistory:
    """A linear undo history of tunings; `current` is the tuning after the last done step."""

    def __init__(
        self,
        initial: Tuning,
        limit: int = LIMIT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self._limit = max(1, int(limit))
        self.reset(initial)

    def reset(self, initial: Tuning) -> None:
        """Forget every step: `initial` is where undo stops (a clip was opened)."""
        self._initial = initial
        self._done: list[_Step] = []
        self._undone: list[_Step] = []
        self._held: str | None = None

    @property
    def current(self) -> Tuning:
        return self._done[-1].after if self._done else self._initial

    def push(self, tuning: Tuning, label: str, merge: str | None = None) -> bool:
        """Record an edit whose outcome is `tuning`; False when it changes nothing. Any redo
        steps are dropped (a new edit after undo starts a new branch)."""
        before = self.current
        if tuning == before:
            return False
        now = self._clock()
        self._undone.clear()
        top = self._done[-1] if self._done else None
        if merge is not None and top is not None and top.merge == merge:
            if now - top.at <= MERGE_SECONDS or merge == self._held:
                self._done[-1] = _Step(top.label, top.before, tuning, merge, now)
                if tuning == top.before:  # dragged back to where it started: no step
                    self._done.pop()
                return True
        self._done.append(_Step(label, before, tuning, merge, now))
        if len(self._done) > self._limit:
            dropped = self._done.pop(0)
            self._initial = dropped.after
        return True

    def hold(self, merge: str) -> None:
        """A gesture on the knob `merge` began (a slider pressed): a step of its own, whose
        edits are one step however long it pauses, until `seal`."""
        self.seal()
        self._held = merge

    def seal(self) -> None:
        """The next edit starts a new step even if it touches the same knob (a gesture
        ended: the slider released)."""
        self._held = None
        if self._done:
            top = self._done[-1]
            self._done[-1] = _Step(top.label, top.before, top.after, None, top.at)

    def can_undo(self) -> bool:
        return bool(self._done)

    def can_redo(self) -> bool:
        return bool(self._undone)

    def undo_label(self) -> str | None:
        return self._done[-1].label if self._done else None

    def redo_label(self) -> str | None:
        return self._undone[-1].label if self._undone else None

    def undo(self) -> Tuning | None:
        """Step back; the tuning to apply, or None when there is nothing to undo."""
        if not self._done:
            return None
        step = self._done.pop()
        self._undone.append(step)
        return step.before

    def redo(self) -> Tuning | None:
        """Step forward again; the tuning to apply, or None when there is nothing to redo."""
        if not self._undone:
            return None
        step = self._undone.pop()
        self._done.append(_Step(step.label, step.before, step.after, None, step.at))
        return step.after

    def __len__(self) -> int:
        return len(self._done)
