"""Per-joint precision, shell distance and rounding overrides chosen by name pattern.

Rules apply in order, later rules win, so `*Hand*` followed by `LeftHand` refines the left
hand alone. Patterns are shell globs matched case-insensitively against the joint name.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

import numpy as np

from codec.clip import Skeleton
from codec.limits import distance_problem
from codec.sampling import BASE_ROUNDING


@dataclass(frozen=True)
class JointOverride:
    """One rule; a None field leaves the value from earlier rules (or the global one)."""

    pattern: str
    precision: float | None = None
    shell_distance: float | None = None
    rounding: str | None = None

    def __post_init__(self) -> None:
        for name in ("precision", "shell_distance"):
            v = getattr(self, name)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, int | float | np.floating | np.integer):
                raise ValueError(f"override {self.pattern!r}: {name} must be a number, got {v!r}")
            if not (np.isfinite(v) and v > 0):
                raise ValueError(f"override {self.pattern!r}: {name} must be > 0, got {v}")
            problem = distance_problem(float(v))
            if problem:
                raise ValueError(f"override {self.pattern!r}: {name} {problem}")
        if self.rounding is not None and self.rounding not in BASE_ROUNDING:
            raise ValueError(
                f"override {self.pattern!r}: rounding {self.rounding!r} is not one of "
                f"{BASE_ROUNDING}"
            )

    def matches(self, names: tuple[str, ...]) -> np.ndarray:
        """(J,) bool: which joints this rule applies to.

        A name must start with the pattern's literal head (before its first * ? or [)
        before the pattern is compiled at all: a file of 20,000 rules that match nothing
        then costs string compares, not 20,000 regular expressions."""
        pat = self.pattern.lower()
        cut = min((i for i in (pat.find(c) for c in "*?[") if i >= 0), default=len(pat))
        head = pat[:cut]
        return np.array(
            [n.lower().startswith(head) and fnmatch.fnmatchcase(n.lower(), pat) for n in names],
            dtype=bool,
        )


@dataclass(frozen=True, eq=False)
class ResolvedJoints:
    """precision (J,), shell_distance (J,), rounding (J,) str, and which rule set each."""

    precision: np.ndarray
    shell_distance: np.ndarray
    rounding: np.ndarray
    overridden: np.ndarray


def resolve(
    skeleton: Skeleton,
    rules: list[JointOverride] | tuple[JointOverride, ...] = (),
    precision: float | None = None,
    shell_distance: float | None = None,
    rounding: str = "none",
) -> ResolvedJoints:
    """Per-joint values: the global value (or the skeleton's own), then every rule in order."""
    n = skeleton.num_joints
    prec = np.full(n, precision) if precision is not None else skeleton.precision.copy()
    shell = (
        np.full(n, shell_distance) if shell_distance is not None else skeleton.shell_distance.copy()
    )
    rnd = np.full(n, rounding, dtype=object)
    touched = np.zeros(n, dtype=bool)
    for rule in rules:
        sel = rule.matches(skeleton.names)
        if rule.precision is not None:
            prec[sel] = rule.precision
        if rule.shell_distance is not None:
            shell[sel] = rule.shell_distance
        if rule.rounding is not None:
            rnd[sel] = rule.rounding
        touched |= sel
    return ResolvedJoints(prec, shell, rnd.astype(str), touched)


def exact_pattern(name: str) -> str:
    """A glob that matches exactly `name` (case-insensitively), even when it holds *, ? or [."""
    return "".join(f"[{c}]" if c in "*?[]" else c for c in name)


def set_joint_override(
    rules: list[JointOverride] | tuple[JointOverride, ...],
    name: str,
    **fields: float | str | None,
) -> tuple[JointOverride, ...]:
    """Rules with one joint's exact-name rule changed by `fields` (None clears a field).

    The joint's rule moves to the end so that it wins over every pattern rule: an edit made on
    one joint must be what that joint gets. A rule left with no field is dropped.
    """
    unknown = set(fields) - {"precision", "shell_distance", "rounding"}
    if unknown:
        raise TypeError(f"unknown override fields {sorted(unknown)}")
    pattern = exact_pattern(name)
    old = [r for r in rules if r.pattern.lower() == pattern.lower()]
    rest = tuple(r for r in rules if r.pattern.lower() != pattern.lower())
    base = old[-1] if old else JointOverride(pattern)
    values = {
        "precision": base.precision,
        "shell_distance": base.shell_distance,
        "rounding": base.rounding,
        **fields,
    }
    rule = JointOverride(pattern, **values)  # type: ignore[arg-type]
    if rule.precision is None and rule.shell_distance is None and rule.rounding is None:
        return rest
    return (*rest, rule)
