"""A/B comparison of two compressions of the same clip: the Qt-free half of Compare.

Tuning is comparative, so the window can pin the result on screen as **A**; every later edit
(settings, rules, codec, level) produces the document's current result, which is **B**. This
module holds what A is (its result and the tuning that made it), the comparison's view
switches, the `--a` / `--b` variant specs of the command line, and the only place the app
reads which codecs exist and what a result's fields are called for the comparison views, so
that a codec-neutral result or a codec registry changes one file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from codec.model.sampling import ROUNDING_MODES, Pose
from codec.result_tables import KIND_NAMES
from codec.settings import LEVELS

if TYPE_CHECKING:
    from codec.model.clip import Clip
    from codec.result import Result
    from codec.tuning import JointOverride

DEFAULT_CODEC = "acl-style"
SIDES = ("A", "B")
PANEL_SOURCES = ("A", "B", "B-A")  # what the heat map and bit-rate panels draw
VARIANT_KEYS = ("codec", "precision", "shell", "level", "rounding")


# --- codecs: the one place the app learns which exist ------------------------------------
def registered_codecs() -> tuple[str, ...]:
    """Names `codec=` accepts, in menu order: the registry's codecs, then `auto`."""
    from codec.codecs import registry

    return (*registry.names(), registry.AUTO)


def codec_unavailable(name: str, acl_output: str | None = None) -> str | None:
    """Why codec `name` cannot compress here (acl-2.1 without acl_compressor), or None; an
    ACL output file being measured makes acl-2.1 available."""
    from codec.codecs import registry

    if name == registry.AUTO or (name == "acl-2.1" and acl_output):
        return None
    return registry.unavailable(name)


def check_codec(name: str) -> str:
    """`name` when it is a registered codec; ValueError naming the known ones otherwise."""
    known = registered_codecs()
    if name not in known:
        raise ValueError(f"unknown codec {name!r}; known codecs: {', '.join(known)}")
    return name


# --- result fields the comparison views read ----------------------------------------------
def stats_of(result: Result | None) -> dict[str, Any]:
    """The result's stats under ACL's key names ({} for none)."""
    return dict(result.stats) if result is not None else {}


def error_of(result: Result) -> np.ndarray:
    """(S, J) error on every joint's shell at every sample."""
    return np.asarray(result.error)


def lossy_clip_of(result: Result) -> Clip:
    """The decoded clip, sample for sample with the raw one."""
    return result.lossy


def segments_of(result: Result) -> np.ndarray:
    """(G, 2) first sample and sample count of every segment ((0, 2) for a codec without)."""
    costs = result.costs
    return np.zeros((0, 2), dtype=np.int64) if costs is None else np.asarray(costs.segments)


def bits_of(result: Result) -> np.ndarray | None:
    """(G, J, 3) bits per component per segment, -1 where not animated; None when the
    codec stores no bit rates."""
    costs = result.costs
    return None if costs is None else np.asarray(costs.bits_per_component)


def kinds_of(result: Result) -> np.ndarray | None:
    """(J, 3) TrackKind per joint and sub-track (default 0, constant 1, animated 2), or None."""
    costs = result.costs
    return None if costs is None else np.asarray(costs.kinds)


def stored_keys_of(result: Result, joint: int, sub_track: int) -> np.ndarray | None:
    """Sample indices (K,) the codec stores for one sub-track (0 rotation, 1 translation,
    2 scale): a result's own key list when its codec strips keys, else every sample of an
    animated sub-track, the first of a constant one, none of a default one; None when the
    result says nothing about it."""
    keys = getattr(result, "stored_keys", None)  # a key-reducing codec's detail
    if keys is not None:
        return np.asarray(keys[joint][sub_track], dtype=np.int64)
    kinds = kinds_of(result)
    if kinds is None:
        return None
    kind = int(kinds[joint, sub_track])
    if kind == 0:
        return np.zeros(0, dtype=np.int64)
    if kind == 1:
        return np.zeros(1, dtype=np.int64)
    retained = result.costs.retained if result.costs is not None else None
    if retained is not None:  # keyframe stripping: the stored keyframes only
        return np.flatnonzero(np.asarray(retained)).astype(np.int64)
    return np.arange(result.lossy.num_samples, dtype=np.int64)


def kind_name(result: Result, joint: int, sub_track: int) -> str | None:
    """'default', 'constant' or 'animated' for one sub-track; None when the codec does not say."""
    kinds = kinds_of(result)
    return None if kinds is None else KIND_NAMES[int(kinds[joint, sub_track])]


def codec_label(stats: dict[str, Any]) -> str:
    """The codec a result was asked for and, under auto, the one it chose: "auto → curve"."""
    codec = str(stats.get("codec", DEFAULT_CODEC))
    auto = stats.get("auto")
    return f"auto \u2192 {auto.get('chosen', codec)}" if isinstance(auto, dict) else codec


def auto_tried(stats: dict[str, Any]) -> list[tuple[str, int, bool, bool]]:
    """What auto tried, smallest first: (codec, compressed size in bytes, strict, chosen);
    empty for a result not made by auto."""
    auto = stats.get("auto")
    if not isinstance(auto, dict):
        return []
    rows = [
        (str(name), int(v.get("compressed_size", 0)), bool(v.get("strict", True)))
        for name, v in (auto.get("codecs") or {}).items()
    ]
    rows.sort(key=lambda r: (not r[2], r[1]))
    return [(n, size, strict, n == auto.get("chosen")) for n, size, strict in rows]


def auto_tried_text(stats: dict[str, Any], sep: str = "\n") -> str:
    """auto's candidates one a line: "acl-style  3,121 B  ← chosen", "wavelet  9,812 B (not
    strict)"."""
    lines = []
    for name, size, strict, chosen in auto_tried(stats):
        note = " \u2190 chosen" if chosen else "" if strict else " (not strict)"
        lines.append(f"{name} {size:,} B{note}")
    return sep.join(lines)


def settings_label(result: Result) -> str:
    """`codec · precision · level` of a result, for legends (auto: "auto → chosen")."""
    s = stats_of(result)
    sk = result.clip.skeleton
    p = np.asarray(sk.precision)
    prec = f"{float(p.min()):g}" if p.min() == p.max() else f"{p.min():g}..{p.max():g}"
    return f"{codec_label(s)} \u00b7 precision {prec} \u00b7 {s.get('level', '?')}"


# --- the --a / --b variant specs -----------------------------------------------------------
@dataclass(frozen=True)
class Variant:
    """One side of a command-line comparison: what differs from the clip's own tuning.

    precision, shell (a number, or 'mesh'), level, codec and rounding; None keeps the value
    the clip opened with."""

    codec: str | None = None
    precision: float | None = None
    shell: float | str | None = None
    level: str | None = None
    rounding: str | None = None

    def tuning(self) -> dict[str, Any]:
        """The GlobalSettings fields this variant sets."""
        out: dict[str, Any] = {}
        if self.precision is not None:
            out["precision"] = self.precision
        if self.level is not None:
            out["level"] = self.level
        if self.shell == "mesh":
            out["shell_from_mesh"] = True
        elif self.shell is not None:
            out["shell_distance"] = float(self.shell)
            out["shell_from_mesh"] = False
        return out


def parse_variant(text: str, flag: str = "--a") -> Variant:
    """`"precision=0.01 level=high"` (commas or spaces between) -> Variant; ValueError with
    one line naming the flag, the item and what was wrong."""
    values: dict[str, Any] = {}
    for item in text.replace(",", " ").split():
        key, eq, value = item.partition("=")
        key = key.strip().lower()
        if not eq or not value:
            raise ValueError(f"{flag}: {item!r} is not KEY=VALUE (keys: {', '.join(VARIANT_KEYS)})")
        if key not in VARIANT_KEYS:
            raise ValueError(f"{flag}: unknown key {key!r} (keys: {', '.join(VARIANT_KEYS)})")
        if key in values:
            raise ValueError(f"{flag}: {key} given twice")
        if key == "precision":
            values[key] = _number(flag, key, value)
        elif key == "shell":
            values[key] = "mesh" if value.lower() == "mesh" else _number(flag, key, value)
        elif key == "level":
            if value not in LEVELS:
                raise ValueError(f"{flag}: level {value!r} is not one of {', '.join(LEVELS)}")
            values[key] = value
        elif key == "rounding":
            if value not in ROUNDING_MODES:
                raise ValueError(
                    f"{flag}: rounding {value!r} is not one of {', '.join(ROUNDING_MODES)}"
                )
            values[key] = value
        else:
            try:
                values[key] = check_codec(value)
            except ValueError as e:
                raise ValueError(f"{flag}: {e}") from None
    return Variant(**values)


def _number(flag: str, key: str, value: str) -> float:
    try:
        v = float(value)
    except ValueError:
        raise ValueError(f"{flag}: {key} {value!r} is not a number") from None
    if not (np.isfinite(v) and v > 0):
        raise ValueError(f"{flag}: {key} must be a positive number, got {value}")
    return v


# --- the comparison state ------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Pinned:
    """A: a result and the tuning that produced it (so Swap can hand it back to the editor).

    rounding: A's own sample-time rounding, or None to follow the window's."""

    result: Result
    settings: Any  # app.model.document.GlobalSettings
    overrides: tuple[JointOverride, ...]
    codec: str
    rounding: str | None = None


@dataclass(frozen=True, eq=False)
class Comparison:
    """A (pinned) against B (the document's current result, sampled with the window's
    rounding), and what is drawn of them.

    show_a / show_b: the 3D view draws that side; panel_source: what the heat map and bit
    rates show ('A', 'B' or 'B-A')."""

    a: Pinned | None = None
    show_a: bool = True
    show_b: bool = True
    panel_source: str = "B"

    @property
    def active(self) -> bool:
        return self.a is not None

    def with_view(self, **changes: Any) -> Comparison:
        if changes.get("panel_source", self.panel_source) not in PANEL_SOURCES:
            raise ValueError(f"unknown panel source {changes['panel_source']!r}")
        return replace(self, **changes)


def pose_of(result: Result, t: float, rounding: str, **kwargs: Any) -> Pose:
    """A result's lossy pose at `t` under `rounding` (per_track, interpolation in kwargs)."""
    return result.decoder.sample(t, rounding, **kwargs)


def error_difference(a: Result, b: Result) -> np.ndarray | None:
    """(S, J) B's error minus A's, None when the two do not share a clip shape."""
    ea, eb = error_of(a), error_of(b)
    return eb - ea if ea.shape == eb.shape else None


def bits_difference(a: Result, b: Result) -> np.ndarray | None:
    """(G, J, 3) B's bits per component minus A's (0 where a side does not animate the
    sub-track) when both share their segments; None when the layouts differ (another level,
    or a codec without bit rates)."""
    ba, bb = bits_of(a), bits_of(b)
    if ba is None or bb is None or ba.shape != bb.shape:
        return None
    if not np.array_equal(segments_of(a), segments_of(b)):
        return None
    # a side that does not animate the sub-track there stores 0 bits per component
    return np.maximum(bb, 0) - np.maximum(ba, 0)


TIME_KEYS = ("worst_time", "worst_time_between_samples", "duration")  # times in the clip


def stat_change(key: str, a: Any, b: Any, rate: float | None = None) -> str:
    """B against A for one stats row: a signed difference and percentage for numbers, '' when
    not comparable or equal. A time in the clip (the worst time) moves by seconds and, given
    the sample `rate`, frames: a percentage of where it was is meaningless."""
    if isinstance(a, bool | np.bool_) or isinstance(b, bool | np.bool_):
        return "" if a == b else "changed"
    if not isinstance(a, int | float | np.number) or not isinstance(b, int | float | np.number):
        return "" if a == b else "changed"
    if a == b:
        return "="
    diff = float(b) - float(a)
    if key in TIME_KEYS:
        frames = f" ({diff * rate:+.4g} frames)" if rate else ""
        return f"{diff:+.4f} s{frames}".replace("+-", "-")
    pct = f" ({100.0 * diff / abs(float(a)):+.1f}%)" if a else ""
    return f"{diff:+.6g}{pct}"


def exported_pair(
    a: dict[str, Any], b: dict[str, Any], variants: tuple[Variant, Variant] | None = None
) -> dict[str, Any]:
    """The A/B stats JSON: the usual stats objects under `a` and `b`, and the numeric change
    of every key both hold."""
    change: dict[str, Any] = {}
    for key, va in a.items():
        vb = b.get(key)
        if isinstance(va, int | float) and isinstance(vb, int | float):
            if not isinstance(va, bool) and not isinstance(vb, bool):
                change[key] = vb - va
    out: dict[str, Any] = {"a": a, "b": b, "change": change}
    if variants is not None:
        out["variants"] = {
            side: {k: v for k, v in vars(var).items() if v is not None}
            for side, var in zip(("a", "b"), variants, strict=True)
        }
    return out
