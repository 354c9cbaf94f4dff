"""Tuning, one path for the command line and the window: the clip-wide settings, the
per-joint rules, the shells from the mesh, resolved into the clip the codec is given.

Precedence of the rules (the README's "Precedence" says the same): pattern rules apply in
order, later rules win; a joint's exact-name rule (a pattern without wildcards, which is what a
joint's own edit in the window makes) wins over every pattern rule, whatever the order the two
were made in; among exact-name rules for one joint the later wins. Patterns are shell globs
matched case-insensitively against the joint name, with `|` alternatives, `!` exclusions and
`re:` regular expressions (codec.name_pattern, the one matcher of every rule).
Which layers the rules and clip-wide settings come from (the clip's own values, its sidecar,
`--overrides`, flags) is codec.run_settings; `tuned_clip` applies what it resolves, the same
way everywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from codec.model.clip import Clip, Skeleton
from codec.model.limits import distance_problem
from codec.model.sampling import BASE_ROUNDING
from codec.name_pattern import NamePattern, pattern_problem
from codec.settings import LEVELS, CompressionSettings


@dataclass(frozen=True)
class JointOverride:
    """One rule; a None field leaves the value from earlier rules (or the global one)."""

    pattern: str
    precision: float | None = None
    shell_distance: float | None = None
    rounding: str | None = None

    def __post_init__(self) -> None:
        problem = pattern_problem(self.pattern) if isinstance(self.pattern, str) else None
        if problem:
            raise ValueError(problem)
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

    @cached_property
    def _compiled(self) -> NamePattern:
        return NamePattern(self.pattern)

    @property
    def exact(self) -> bool:
        """Whether the rule names one joint exactly (no wildcard): such a rule wins over
        every pattern rule, whatever their order."""
        return is_exact(self.pattern)

    def matches(self, names: tuple[str, ...]) -> np.ndarray:
        """(J,) bool: which joints this rule applies to (codec.name_pattern: linear in the
        pattern, whatever a tuning file holds)."""
        return np.array(self._compiled.matches_each(names), dtype=bool)


@dataclass(frozen=True, eq=False)
class ResolvedJoints:
    """precision (J,), shell_distance (J,), rounding (J,) str, whether a rule touched each
    joint (J,), and `source` (J, 3): the index in the rules given of the rule that set each
    joint's precision, shell distance and rounding, -1 where the global value stands (what
    the window shows as "which rule set this joint's value")."""

    precision: np.ndarray
    shell_distance: np.ndarray
    rounding: np.ndarray
    overridden: np.ndarray
    source: np.ndarray


def resolve(
    skeleton: Skeleton,
    rules: list[JointOverride] | tuple[JointOverride, ...] = (),
    precision: float | None = None,
    shell_distance: float | None = None,
    rounding: str = "none",
) -> ResolvedJoints:
    """Per-joint values: the global value (or the skeleton's own), then every pattern rule in
    order, then every exact-name rule in order (a joint's own value wins over patterns)."""
    n = skeleton.num_joints
    prec = np.full(n, precision) if precision is not None else skeleton.precision.copy()
    shell = (
        np.full(n, shell_distance) if shell_distance is not None else skeleton.shell_distance.copy()
    )
    rnd = np.full(n, rounding, dtype=object)
    touched = np.zeros(n, dtype=bool)
    source = np.full((n, 3), -1, dtype=np.int64)
    for k in application_order(rules):
        rule = rules[k]
        sel = rule.matches(skeleton.names)
        if rule.precision is not None:
            prec[sel] = rule.precision
            source[sel, 0] = k
        if rule.shell_distance is not None:
            shell[sel] = rule.shell_distance
            source[sel, 1] = k
        if rule.rounding is not None:
            rnd[sel] = rule.rounding
            source[sel, 2] = k
        touched |= sel
    return ResolvedJoints(prec, shell, rnd.astype(str), touched, source)


def application_order(rules: list[JointOverride] | tuple[JointOverride, ...]) -> list[int]:
    """The indices of `rules` in the order they apply: pattern rules as given, then
    exact-name rules as given, so that a joint's own value wins over every pattern (later
    applied wins)."""
    return [k for k, r in enumerate(rules) if not r.exact] + [
        k for k, r in enumerate(rules) if r.exact
    ]


_ESCAPED = re.compile(r"\[.\]")  # one character in brackets: `[*]` matches a literal *


def is_exact(pattern: str) -> bool:
    """True when `pattern` matches one name only: no `*`, `?`, `|`, no leading `!` or `re:`,
    and brackets only around a single character (how `exact_pattern` escapes a name holding
    * ? [ ] | or a leading !)."""
    if pattern.startswith(("!", "re:")):
        return False
    return not any(c in _ESCAPED.sub("", pattern) for c in "*?[|")


def exact_pattern(name: str) -> str:
    """A pattern that matches exactly `name` (case-insensitively), even when it holds *, ?, [,
    ], | or starts with ! or re: (codec.name_pattern's syntax)."""
    text = "".join(f"[{c}]" if c in "*?[]|" else c for c in name)
    if text.startswith("!"):
        return "[!]" + text[1:]
    if text.startswith("re:"):
        return "[r]" + text[1:]
    return text


def set_joint_override(
    rules: list[JointOverride] | tuple[JointOverride, ...],
    name: str,
    **fields: float | str | None,
) -> tuple[JointOverride, ...]:
    """Rules with one joint's exact-name rule changed by `fields` (None clears a field).

    The joint's rule keeps its place in the list (a new one goes last); being exact, it wins
    over every pattern rule, earlier or later (`resolve`). A rule left with no field is
    dropped.
    """
    unknown = set(fields) - {"precision", "shell_distance", "rounding"}
    if unknown:
        raise TypeError(f"unknown override fields {sorted(unknown)}")
    pattern = exact_pattern(name)
    same = [i for i, r in enumerate(rules) if r.pattern.lower() == pattern.lower()]
    rest = tuple(r for r in rules if r.pattern.lower() != pattern.lower())
    base = rules[same[-1]] if same else JointOverride(pattern)
    values = {
        "precision": base.precision,
        "shell_distance": base.shell_distance,
        "rounding": base.rounding,
        **fields,
    }
    rule = JointOverride(pattern, **values)  # type: ignore[arg-type]
    if rule.precision is None and rule.shell_distance is None and rule.rounding is None:
        return rest
    at = same[0] if same else len(rest)  # the place of its first rule, among the others
    return (*rest[:at], rule, *rest[at:])


@dataclass(frozen=True)
class GlobalSettings:
    """The clip-wide knobs of the settings panel (per-joint rules live in `overrides`).

    `precision` / `shell_distance` None: every joint keeps the clip's own value (an ACL SJSON
    clip's per-joint values; 0.01 cm and 3 cm for the formats that have none); a number is
    every joint's, before the rules. `codec`: the registry's name (or `auto`).
    `shell_from_mesh`: every joint's shell distance measured on the clip's skin
    (codec.measure.mesh_shells), `shell_distance` (or the clip's own) then being the value of
    joints no vertex hangs on; ignored for a clip without mesh. `skin_strict`: the skin
    itself within budget (CompressionSettings.skin_strict); also ignored without a mesh."""

    precision: float | None = None
    shell_distance: float | None = None
    level: str = "automatic"
    shell_from_mesh: bool = False
    strip_trivial: bool = True
    strip_proportion: float = 0.0
    strip_threshold: float = 0.0
    skin_strict: bool = False
    codec: str = "acl-style"
    bind: str = "auto"
    compensate: bool = False
    clean_defaults: float = 0.0

    def __post_init__(self) -> None:
        for name in ("precision", "shell_distance"):
            value = getattr(self, name)
            if value is None:
                continue
            problem = (
                distance_problem(float(value))
                if isinstance(value, int | float) and not isinstance(value, bool)
                else f"{value!r} is not a number"
            )
            if problem:
                raise ValueError(f"{name.replace('_', ' ')}: {problem}")
        if self.level not in LEVELS:
            raise ValueError(f"unknown level {self.level!r}")
        if not isinstance(self.codec, str):
            raise ValueError(f"codec: expected a codec's name, got {self.codec!r}")
        from codec.codecs import registry

        registry.chosen(self.codec)  # SettingsError naming the known codecs
        self.compression_settings()  # keyframe stripping values: SettingsError says what

    def compression_settings(
        self, codec: str | None = None, has_mesh: bool = True
    ) -> CompressionSettings:
        """What the codec is given (precision and shells reach it on the skeleton);
        skin-strict only for a clip with a mesh (`has_mesh`). `codec` None: the settings'."""
        return CompressionSettings(
            skin_strict=self.skin_strict and has_mesh,
            level=self.level,
            codec=codec or self.codec,
            strip_trivial=self.strip_trivial,
            strip_proportion=self.strip_proportion,
            strip_threshold=self.strip_threshold,
            bind=self.bind,
            compensate=self.compensate,
            clean_defaults=self.clean_defaults,
        )


def resolve_clip(
    clip: Clip,
    settings: GlobalSettings | None,
    rules: list[JointOverride] | tuple[JointOverride, ...] = (),
    mesh_shells: np.ndarray | None = None,
) -> ResolvedJoints:
    """Per-joint values of a clip under clip-wide settings and rules; `mesh_shells` (J,) the
    shells from its skin when the settings take them from there (see `shells_from_mesh`)."""
    if settings is None:
        return resolve(clip.skeleton, rules)
    if mesh_shells is not None:
        skeleton = clip.skeleton.with_settings(shell_distance=mesh_shells)
        return resolve(skeleton, rules, settings.precision, None)
    return resolve(clip.skeleton, rules, settings.precision, settings.shell_distance)


def shells_from_mesh(clip: Clip, settings: GlobalSettings | None) -> np.ndarray | None:
    """(J,) shell distances measured on the clip's skin when the settings ask for them and
    the clip has one (None otherwise); joints without vertices take settings.shell_distance."""
    if settings is None or not settings.shell_from_mesh or not clip.meshes:
        return None
    from codec.measure.mesh_shells import mesh_shell_distances

    return mesh_shell_distances(clip, settings.shell_distance)[0]


def tuned_clip(
    clip: Clip,
    settings: GlobalSettings | None,
    rules: list[JointOverride] | tuple[JointOverride, ...] = (),
    mesh_shells: np.ndarray | None = None,
) -> Clip:
    """The clip exactly as the codec should see it: per-joint precision and shell distance
    resolved (the clip itself when nothing changes them)."""
    if settings is None and not rules:
        return clip
    if mesh_shells is None:
        mesh_shells = shells_from_mesh(clip, settings)
    r = resolve_clip(clip, settings, rules, mesh_shells)
    sk = clip.skeleton
    if np.array_equal(r.precision, sk.precision) and np.array_equal(
        r.shell_distance, sk.shell_distance
    ):
        return clip
    return clip.with_skeleton_settings(r.precision, r.shell_distance)
