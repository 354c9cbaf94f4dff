"""The complete settings of one run, resolved in one place for every caller.

The window (when a clip opens and for every compression), `python -m codec compress`,
`stats`, `library` (in every worker), `shellscope --export-*`, Compare and every export ask
this module, and nothing else, what a run compresses with:

    (clip file, animation, its sidecar, flags) --resolve_run--> RunSettings
    RunSettings --tuned_clip, compression_settings--> what codec.compress is given
    RunSettings --block--> the versioned settings block every output carries
    a settings block, stats JSON, library row or sidecar --read_settings--> RunSettings

Precedence, lowest first (the README's "Precedence of settings" says the same, once):

1. the clip's own values: every joint's precision and shell distance as the file holds
   them (ACL SJSON's per-joint values; 0.01 cm and 3 cm for formats without any), codec
   acl-style, level automatic, trivial keyframe stripping on;
2. the clip's sidecar `CLIP.shellscope.json` (its animation's entry, else the file-wide
   tuning): each setting it holds replaces 1's, and its rules;
3. `--overrides FILE`: each setting it holds replaces 2's, its rules come after 2's;
4. flags (`--codec`, `--precision`, `--shell-distance`, `--level`, `--skin-strict`, the
   keyframe-stripping flags): each replaces what it names.

`--settings FILE` stands for 1-3 at once: the complete settings a run was made with. The
rules of every layer, in that order: pattern rules apply in order, a later one wins; a
joint's exact-name rule wins over every pattern, whatever the order (codec.tuning.resolve).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from codec.errors import SettingsError
from codec.model.clip import Clip
from codec.settings import LEVELS, CompressionSettings
from codec.tuning import (
    GlobalSettings,
    JointOverride,
    ResolvedJoints,
    resolve_clip,
    shells_from_mesh,
)

FORMAT = "shellscope-settings"
VERSION = 1
MESH = "mesh"  # --shell-distance mesh
_RULE_KEYS = ("pattern", "precision", "shell_distance", "rounding")
# every key of a block; the tuning ones must all be there (a block is complete), the others
# (what was read, what the window showed) are facts about the run that change no byte
_REQUIRED = (
    "format",
    "version",
    "shellscope",
    "animation",
    "units",
    "sample_rate",
    "codec",
    "level",
    "precision",
    "shell_distance",
    "shell_from_mesh",
    "rules",
    "skin_strict",
    "keyframe_stripping",
    "loop_optimization",
    "include_metadata",
)
_OPTIONAL = ("read", "view")
# tuning keys added after version 1 blocks were written: a block without one ran with the
# value given here (bind pose stripping was the only mode before bind modes existed)
_DEFAULTED = {"bvh_positions": "auto", "bind": "strip", "compensate": False, "clean_defaults": 0.0}
BVH_POSITIONS = ("auto", "add", "replace")  # how a BVH's non-root position channels read
_STRIP_KEYS = ("strip_trivial", "proportion", "threshold")


class SettingsFileError(SettingsError):
    """A settings block (or the file holding it) that cannot be used: names the file, the
    key and what was wrong, on one line."""

    def __init__(self, path: str | os.PathLike[str], place: str, message: str) -> None:
        self.path, self.place = str(path), place
        super().__init__(f"{self.path}: {place}: {message}" if place else f"{path}: {message}")


def shellscope_version() -> str:
    """The installed Shellscope's version (pyproject's), "unknown" when not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("shellscope")
    except PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class Flags:
    """What a command line (or a caller) gives; None: not given, the layers below decide.

    `shell_distance` is a number or "mesh" (every joint's from the skinned mesh);
    `overrides` a tuning file (a sidecar or a list of rules) layered over the sidecar;
    `settings` a file holding a run's complete settings (in place of layers 1-3)."""

    codec: str | None = None
    precision: float | None = None
    shell_distance: float | str | None = None
    level: str | None = None
    skin_strict: bool | None = None
    strip_trivial: bool | None = None
    strip_proportion: float | None = None
    strip_threshold: float | None = None
    bind: str | None = None
    compensate: bool | None = None
    clean_defaults: float | None = None
    loop_optimization: bool | None = None
    include_metadata: bool | None = None
    animation: str | None = None
    units: str | None = None
    sample_rate: float | None = None
    bvh_positions: str | None = None
    overrides: str | None = None
    settings: str | None = None

    def __post_init__(self) -> None:
        if self.bvh_positions == "auto":  # the reader's own choice: as if not given
            object.__setattr__(self, "bvh_positions", None)

    def tuning_changes(self) -> dict[str, Any]:
        """The GlobalSettings fields these flags set."""
        out: dict[str, Any] = {
            k: getattr(self, k)
            for k in (
                "codec",
                "precision",
                "level",
                "skin_strict",
                "strip_trivial",
                "strip_proportion",
                "strip_threshold",
                "bind",
                "compensate",
                "clean_defaults",
            )
            if getattr(self, k) is not None
        }
        if self.shell_distance == MESH:
            out["shell_from_mesh"] = True
        elif self.shell_distance is not None:
            out["shell_distance"] = float(self.shell_distance)
            out["shell_from_mesh"] = False
        return out


@dataclass(frozen=True)
class RunSettings:
    """Everything one run is made with: the tuning (clip-wide settings and rules), how the
    clip is read (animation, units, sample rate) and the .ssc's options. `sources`: the
    tuning files it came from (for the line saying so; not a setting)."""

    tuning: GlobalSettings = field(default_factory=GlobalSettings)
    rules: tuple[JointOverride, ...] = ()
    animation: str | None = None
    units: str | None = None  # the reader's option; None: auto
    sample_rate: float | None = None  # the reader's resampling rate; None: the file's
    bvh_positions: str | None = None  # a BVH's non-root position channels; None: auto
    loop_optimization: bool = True
    include_metadata: bool = True
    sources: tuple[str, ...] = field(default=(), compare=False)

    # --- reading ----------------------------------------------------------------------
    def reader_options(self) -> dict[str, Any]:
        """The options codec.formats.load_clip reads the clip with (only those set)."""
        opts: dict[str, Any] = {}
        if self.animation is not None:
            opts["animation"] = self.animation
        if self.units is not None:
            opts["units"] = self.units
        if self.sample_rate is not None:
            opts["sample_rate"] = self.sample_rate
        if self.bvh_positions is not None:
            opts["bvh_positions"] = self.bvh_positions
        return opts

    # --- what the codec gets ----------------------------------------------------------
    def mesh_shells(self, clip: Clip) -> np.ndarray | None:
        """(J,) shells from the clip's skin when the tuning takes them from there."""
        return shells_from_mesh(clip, self.tuning)

    def joints(self, clip: Clip, mesh_shells: np.ndarray | None = None) -> ResolvedJoints:
        """Every joint's precision, shell distance and rounding (`mesh_shells`: computed
        once by the caller that keeps them, else here)."""
        if mesh_shells is None:
            mesh_shells = self.mesh_shells(clip)
        return resolve_clip(clip, self.tuning, self.rules, mesh_shells)

    def tuned_clip(self, clip: Clip, mesh_shells: np.ndarray | None = None) -> Clip:
        """The clip exactly as the codec sees it: every joint's values resolved."""
        r = self.joints(clip, mesh_shells)
        sk = clip.skeleton
        if np.array_equal(r.precision, sk.precision) and np.array_equal(
            r.shell_distance, sk.shell_distance
        ):
            return clip
        return clip.with_skeleton_settings(r.precision, r.shell_distance)

    def compression_settings(self, clip: Clip | None = None) -> CompressionSettings:
        """What codec.compress is given; skin-strict only for a clip with a skinned mesh (a
        library mixes both; `mesh_problem` says when one clip cannot take it)."""
        has_mesh = clip is None or bool(clip.meshes)
        return replace(
            self.tuning.compression_settings(has_mesh=has_mesh),
            loop_optimization=self.loop_optimization,
            include_metadata=self.include_metadata,
        )

    def mesh_problem(self, clip: Clip) -> str | None:
        """Why these settings cannot run on this one clip as asked (None: they can): shells
        from the mesh or skin-strict on a clip without a skinned mesh."""
        if clip.meshes:
            return None
        if self.tuning.skin_strict:
            return "--skin-strict: the clip has no skinned mesh (glTF, FBX and USD skins have one)"
        if self.tuning.shell_from_mesh:
            return "--shell-distance mesh: the clip has no skinned mesh"
        return None

    def compress(self, clip: Clip, **kwargs: Any) -> Any:
        """codec.compress of the clip under these settings (kwargs: progress, cancel)."""
        import codec

        return codec.compress(self.tuned_clip(clip), self.compression_settings(clip), **kwargs)

    def with_flags(self, flags: Flags) -> RunSettings:
        """These settings with `flags` on top (layer 4): each flag replaces what it names."""
        changes = flags.tuning_changes()
        try:
            tuning = replace(self.tuning, **changes) if changes else self.tuning
        except ValueError as e:
            raise SettingsError(str(e)) from None
        out = replace(self, tuning=tuning)
        for name in (
            "loop_optimization",
            "include_metadata",
            "units",
            "sample_rate",
            "bvh_positions",
        ):
            if getattr(flags, name) is not None:
                out = replace(out, **{name: getattr(flags, name)})
        if out.units == "auto":
            out = replace(out, units=None)
        return out

    # --- the block --------------------------------------------------------------------
    def block(self, clip: Clip | None = None, view: dict[str, Any] | None = None) -> dict:
        """The versioned settings block: every setting of the run (enough to make the same
        bytes again), what was read when `clip` is given, and what the window showed
        (`view`: up axis, rounding; changes no byte)."""
        t = self.tuning
        out: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "shellscope": shellscope_version(),
            "animation": self.animation,
            "units": self.units or "auto",
            "sample_rate": self.sample_rate,
            "bvh_positions": self.bvh_positions or "auto",
            "codec": t.codec,
            "level": t.level,
            "precision": t.precision,
            "shell_distance": t.shell_distance,
            "shell_from_mesh": t.shell_from_mesh,
            "rules": [rule_json(r) for r in self.rules],
            "skin_strict": t.skin_strict,
            "keyframe_stripping": {
                "strip_trivial": t.strip_trivial,
                "proportion": t.strip_proportion,
                "threshold": t.strip_threshold,
            },
            "loop_optimization": self.loop_optimization,
            "include_metadata": self.include_metadata,
            "bind": t.bind,
            "compensate": t.compensate,
            "clean_defaults": t.clean_defaults,
        }
        if clip is not None:
            out["read"] = read_facts(clip)
        if view:
            out["view"] = dict(view)
        return out

    def block_text(self, clip: Clip | None = None) -> str:
        """The block as compact JSON (what a .ssc and a CSV cell hold)."""
        return json.dumps(self.block(clip), separators=(",", ":"), allow_nan=False)

    def stamp(self, data: bytes, clip: Clip | None = None) -> bytes:
        """A .ssc file carrying this block (payload and metadata unchanged)."""
        from codec.codecs import container

        return container.with_settings(data, self.block_text(clip).encode("utf-8"))


def rule_json(rule: JointOverride) -> dict[str, Any]:
    """A rule as sidecars and blocks write it (fields that are set only)."""
    return {k: getattr(rule, k) for k in _RULE_KEYS if getattr(rule, k) is not None}


def read_facts(clip: Clip) -> dict[str, Any]:
    """What the reader made of the file (changes no byte when given again): the clip's name,
    the unit its numbers were taken as, the declared up axis, its sample rate and shape."""
    units = clip.units
    return {
        "clip": clip.name,
        "unit": units.unit if units is not None else "cm",
        "up_axis": units.up_axis if units is not None else None,
        "sample_rate": float(clip.sample_rate),
        "joints": int(clip.num_joints),
        "samples": int(clip.num_samples),
    }


# --- resolving ------------------------------------------------------------------------
Layer = tuple[dict[str, Any], tuple[JointOverride, ...]]


def read_tuning_layer(path: str | os.PathLike[str], animation: str | None = None) -> Layer:
    """One tuning file as a layer (the settings it holds, its rules); SettingsError naming
    the file and the place."""
    from codec.sidecar import read_layer

    return read_layer(path, animation)


def resolve_run(
    clip_path: str | os.PathLike[str],
    animation: str | None = None,
    flags: Flags | None = None,
    *,
    sidecar: bool = True,
    overrides: Layer | None = None,
) -> RunSettings:
    """The complete settings of a run on one clip (see the module docstring for the order).

    `animation`: the clip's animation (its name as read, `Clip.name`), which picks its own
    entry of a multi-animation file's sidecar. `sidecar`: whether the clip's sidecar counts
    (`library --no-sidecars`). `overrides`: the `--overrides` layer already read (a library
    reads it once for every clip). SettingsError (naming the file and the place) for a
    tuning file that cannot be used or settings that cannot go together."""
    from codec.sidecar import animation_key, sidecar_path

    flags = flags or Flags()
    key = animation_key(clip_path, animation)
    if flags.settings:
        base = read_settings(flags.settings, clip_path, key)
        base = replace(base, animation=key, sources=(str(flags.settings),))
        return base.with_flags(flags)
    given: dict[str, Any] = {}
    rules: tuple[JointOverride, ...] = ()
    sources: list[str] = []
    layers: list[tuple[str, Layer]] = []
    side = sidecar_path(clip_path)
    if sidecar and side.is_file():
        layers.append((str(side), read_tuning_layer(side, key)))
    if overrides is None and flags.overrides:
        overrides = read_tuning_layer(flags.overrides, key)
    if overrides is not None:
        layers.append((str(flags.overrides or "--overrides"), overrides))
    for source, (settings, more) in layers:
        given.update(settings)
        rules += more
        sources.append(source)
    try:
        tuning = GlobalSettings(**given)
    except (TypeError, ValueError) as e:  # each file was fine alone; together they are not
        raise SettingsError(f"{' + '.join(sources)}: {e}") from None
    run = RunSettings(tuning, rules, animation=key, sources=tuple(sources))
    return run.with_flags(flags)


def resolve_reader(clip_path: str | os.PathLike[str], flags: Flags | None = None) -> dict:
    """The reader options of a run before its clip is read: the flags', else those of the
    `--settings` file (its animation, units and sample rate)."""
    flags = flags or Flags()
    opts: dict[str, Any] = {}
    if flags.settings:
        opts = read_settings(flags.settings, clip_path, flags.animation).reader_options()
    for name in ("animation", "units", "sample_rate", "bvh_positions"):
        if getattr(flags, name) is not None:
            opts[name] = getattr(flags, name)
    return opts


# --- reading a block back -----------------------------------------------------------------
def read_settings(
    path: str | os.PathLike[str],
    clip_path: str | os.PathLike[str] | None = None,
    animation: str | None = None,
) -> RunSettings:
    """The settings a file holds: a settings block, a stats JSON (window, `compress --json`,
    `--export-stats`), a library JSON or CSV (the row of `clip_path` and `animation`), one
    library row, a .ssc carrying its block, or a sidecar (that tuning over the defaults).
    SettingsFileError naming the file and the key for anything unusable."""
    path = Path(path)
    name = path.name.lower()
    if name.endswith(".ssc"):
        return _from_ssc(path)
    if name.endswith(".csv"):
        return _from_csv(path, clip_path, animation)
    data = _read_json(path)
    if isinstance(data, dict) and data.get("format") == FORMAT:
        return from_block(data, path)
    if isinstance(data, dict) and isinstance(data.get("shellscope"), dict):
        return from_block(data["shellscope"], path, "shellscope")
    if isinstance(data, dict) and {"a", "b", "change"} <= set(data):
        raise SettingsFileError(
            path,
            "top level",
            "an A/B stats JSON holds two runs: give a.json "
            "or b.json of one side (its 'a' or 'b' object)",
        )
    if isinstance(data, dict) and data.get("format") in ("shellscope-library", "shellscope-stats"):
        rows = data.get("rows")
        if not isinstance(rows, list):
            raise SettingsFileError(path, "rows", "expected a list of rows")
        i = _pick_row(path, rows, clip_path, animation)
        return from_block(rows[i].get("settings"), path, f"rows[{i}].settings")
    if isinstance(data, dict) and "path" in data and "settings" in data:
        return from_block(data["settings"], path, "settings")
    if isinstance(data, list) or (isinstance(data, dict) and _is_sidecar(data)):
        from codec.sidecar import animation_key

        key = animation_key(clip_path, animation) if clip_path is not None else animation
        settings, rules = read_tuning_layer(path, key)
        try:
            tuning = GlobalSettings(**settings)
        except (TypeError, ValueError) as e:
            raise SettingsFileError(path, "settings", str(e)) from None
        return RunSettings(tuning, rules, animation=key, sources=(str(path),))
    raise SettingsFileError(
        path,
        "top level",
        "not a settings block, stats JSON, library row or sidecar (no 'shellscope' block)",
    )


def _is_sidecar(data: dict[str, Any]) -> bool:
    return data.get("format") == "shellscope-sidecar" or (
        "format" not in data and bool({"settings", "overrides", "animations"} & set(data))
    )


MAX_FILE = 256 << 20  # a library JSON of many thousand rows stays far below


def _read_text(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_FILE:
            raise SettingsFileError(path, "", "too large for a settings file")
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise SettingsFileError(path, "", f"cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise SettingsFileError(path, f"byte {e.start}", "not UTF-8 text") from None


def _read_json(path: Path) -> Any:
    text = _read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise SettingsFileError(path, f"line {e.lineno} column {e.colno}", e.msg) from None
    except RecursionError:
        raise SettingsFileError(path, "top level", "nested too deeply") from None


def _from_ssc(path: Path) -> RunSettings:
    from codec.codecs import container
    from codec.errors import CompressedFormatError

    try:
        frame = container.read(path.read_bytes())
    except OSError as e:
        raise SettingsFileError(path, "", f"cannot read: {e.strerror or e}") from None
    except CompressedFormatError as e:
        raise SettingsFileError(path, "", str(e)) from None
    if not frame.settings:
        raise SettingsFileError(path, "", "the file carries no settings block")
    try:
        data = json.loads(frame.settings.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SettingsFileError(path, "settings block", f"not JSON ({e})") from None
    return from_block(data, path, "settings block")


def _from_csv(
    path: Path, clip_path: str | os.PathLike[str] | None, animation: str | None
) -> RunSettings:
    rows = list(csv.DictReader(io.StringIO(_read_text(path))))
    if rows and "settings" not in rows[0]:
        raise SettingsFileError(path, "header", "no 'settings' column (a library CSV has one)")
    i = _pick_row(path, rows, clip_path, animation)
    place = f"row {i + 2}"  # the header is line 1
    try:
        data = json.loads(rows[i]["settings"] or "null")
    except json.JSONDecodeError as e:
        raise SettingsFileError(path, f"{place}.settings", f"not JSON ({e.msg})") from None
    return from_block(data, path, f"{place}.settings")


def _pick_row(
    path: Path,
    rows: list[Any],
    clip_path: str | os.PathLike[str] | None,
    animation: str | None,
) -> int:
    """The index of the row of `clip_path` (its path ends the clip's) and `animation`."""
    found = [i for i, r in enumerate(rows) if isinstance(r, dict) and r.get("settings")]
    if clip_path is not None:
        clip = Path(clip_path).resolve().as_posix()
        found = [i for i in found if clip.endswith("/" + _row_path(rows[i]))]
    if animation is not None:
        found = [i for i in found if animation in _row_animations(rows[i])]
    if len(found) == 1:
        return found[0]
    what = f"{clip_path}" + (f" [{animation}]" if animation else "")
    if not found:
        raise SettingsFileError(path, "rows", f"no row with settings for {what or 'a clip'}")
    anims = sorted({str(rows[i].get("animation") or "") for i in found})
    raise SettingsFileError(
        path,
        "rows",
        f"{len(found)} rows for {what} (animations {', '.join(anims)}): give --animation",
    )


def _row_path(row: dict[str, Any]) -> str:
    """A row's clip, relative to its library's folder (a `stats` row calls it `name`)."""
    return str(row.get("path", row.get("name", ""))).lstrip("/")


def _row_animations(row: dict[str, Any]) -> set[str | None]:
    """The names a row's animation goes by: the library's label (a USD skeleton's path) and
    the clip's own name in its settings block (what the sidecar keys it by)."""
    settings = row.get("settings")
    own = settings.get("animation") if isinstance(settings, dict) else None
    if isinstance(settings, str):  # a CSV cell
        try:
            own = json.loads(settings).get("animation")
        except (json.JSONDecodeError, AttributeError):
            own = None
    return {row.get("animation") or None, own}


def from_block(data: Any, path: str | os.PathLike[str], place: str = "") -> RunSettings:
    """RunSettings from a settings block, checked strictly: every tuning key present, no
    unknown key, every value of its type and range. SettingsFileError names the key."""
    at = lambda key: f"{place}.{key}" if place else key  # noqa: E731
    if not isinstance(data, dict):
        raise SettingsFileError(path, place or "top level", "expected a settings object")
    extra = sorted(set(data) - set(_REQUIRED) - set(_OPTIONAL) - set(_DEFAULTED))
    if extra:
        raise SettingsFileError(path, at(extra[0]), f"unknown key (known: {', '.join(_REQUIRED)})")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise SettingsFileError(path, at(missing[0]), "missing: a settings block holds every key")
    if data["format"] != FORMAT:
        raise SettingsFileError(path, at("format"), f"expected {FORMAT!r}, got {data['format']!r}")
    if data["version"] != VERSION or isinstance(data["version"], bool):
        raise SettingsFileError(
            path, at("version"), f"this Shellscope reads version {VERSION}, not {data['version']!r}"
        )

    def expect(key: str, ok: bool, what: str, value: Any = None) -> None:
        if not ok:
            shown = data.get(key) if value is None else value
            raise SettingsFileError(path, at(key), f"expected {what}, got {_short(shown)}")

    def number(key: str, value: Any, nullable: bool = True) -> float | None:
        if value is None and nullable:
            return None
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        expect(
            key, ok and math.isfinite(value), "a number" + (" or null" if nullable else ""), value
        )
        return float(value)

    for key in ("shell_from_mesh", "skin_strict", "loop_optimization", "include_metadata"):
        expect(key, isinstance(data[key], bool), "true or false")
    expect("shellscope", isinstance(data["shellscope"], str), "a version string")
    expect("codec", isinstance(data["codec"], str), "a codec's name")
    expect("level", data["level"] in LEVELS, f"one of {', '.join(LEVELS)}")
    expect("animation", data["animation"] is None or isinstance(data["animation"], str),
           "an animation's name or null")  # fmt: skip
    from codec.model.units import USER_UNITS

    expect("units", data["units"] in USER_UNITS, f"one of {', '.join(USER_UNITS)}")
    positions = data.get("bvh_positions", "auto")  # a block from before the option: auto
    expect("bvh_positions", positions in BVH_POSITIONS, f"one of {', '.join(BVH_POSITIONS)}",
           positions)  # fmt: skip
    from codec.settings import BIND_MODES

    bind = data.get("bind", _DEFAULTED["bind"])
    expect("bind", bind in BIND_MODES, f"one of {', '.join(BIND_MODES)}", bind)
    compensate = data.get("compensate", _DEFAULTED["compensate"])
    expect("compensate", isinstance(compensate, bool), "true or false", compensate)
    clean_defaults = number("clean_defaults", data.get("clean_defaults", 0.0), nullable=False)
    rate = number("sample_rate", data["sample_rate"])
    if rate is not None:
        expect("sample_rate", rate > 0, "a positive rate in Hz or null")
    strip = data["keyframe_stripping"]
    expect("keyframe_stripping", isinstance(strip, dict) and set(strip) == set(_STRIP_KEYS),
           f"an object with {', '.join(_STRIP_KEYS)}")  # fmt: skip
    expect("keyframe_stripping.strip_trivial", isinstance(strip["strip_trivial"], bool),
           "true or false", strip["strip_trivial"])  # fmt: skip
    proportion = number("keyframe_stripping.proportion", strip["proportion"], nullable=False)
    threshold = number("keyframe_stripping.threshold", strip["threshold"], nullable=False)
    for key in _OPTIONAL:
        expect(key, key not in data or isinstance(data[key], dict), "an object")
    from codec.sidecar import SidecarError, parse_rules

    try:
        rules = parse_rules(path, at("rules"), data["rules"])
    except SidecarError as e:
        message = str(e)[len(f"{e.path}: {e.place}: ") :]
        raise SettingsFileError(path, e.place, message) from None
    from codec.codecs import registry
    from codec.model.limits import distance_problem

    try:
        registry.chosen(data["codec"])
    except SettingsError as e:
        raise SettingsFileError(path, at("codec"), str(e)) from None
    distances = {k: number(k, data[k]) for k in ("precision", "shell_distance")}
    for key, value in distances.items():
        problem = None if value is None else distance_problem(value)
        expect(key, value is None or (value > 0 and not problem), "a positive distance in cm")
    values = {
        "codec": data["codec"],
        "level": data["level"],
        "precision": distances["precision"],
        "shell_distance": distances["shell_distance"],
        "shell_from_mesh": data["shell_from_mesh"],
        "skin_strict": data["skin_strict"],
        "bind": bind,
        "compensate": compensate,
        "clean_defaults": clean_defaults,
        "strip_trivial": strip["strip_trivial"],
        "strip_proportion": proportion,
        "strip_threshold": threshold,
    }
    try:
        tuning = GlobalSettings(**values)
    except (TypeError, ValueError) as e:
        raise SettingsFileError(path, place or "top level", str(e)) from None
    units = data["units"]
    return RunSettings(
        tuning,
        rules,
        animation=data["animation"],
        units=None if units == "auto" else units,
        sample_rate=rate,
        bvh_positions=None if positions == "auto" else positions,
        loop_optimization=data["loop_optimization"],
        include_metadata=data["include_metadata"],
        sources=(str(path),),
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
