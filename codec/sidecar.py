"""The per-clip tuning file `CLIP.shellscope.json`, kept beside the clip (codec.tuning applies it).

A tech animator tunes precision once per clip; the sidecar makes that tuning come back when the
clip is opened again and lets the command lines use it (`python -m codec compress CLIP`,
`shellscope CLIP --export-...`): codec.run_settings reads it for every one of them. Qt-free.

Who reads and writes it: the main window (and `shellscope --export-*`) reads it when a clip
opens, through codec.run_settings.resolve_run (a `SidecarError` is shown to the user and the
clip opens without it); the controller writes it once the user's tuning edits settle
(app.controller.Controller.save_tuning).

Layout (version 1, a file holding one clip: BVH, ACL SJSON, .ssc)::

    {"format": "shellscope-sidecar", "version": 1, "clip": "walk.acl.sjson",
     "settings": {"precision": 0.01, "shell_distance": 3.0, "level": "automatic"},
     "overrides": [{"pattern": "*Hand*", "precision": 0.001}, ...]}

A glTF, FBX or USD file holds several animations (Fox: Survey, Walk, Run; an FBX: one per
stack) and each is tuned on its own (version 2)::

    {"format": "shellscope-sidecar", "version": 2, "clip": "Fox.glb",
     "animations": {"Walk": {"settings": {...}, "overrides": [...]}, "Run": {...}}}

An animation without an entry takes the file-wide "settings" / "overrides" if there are any
(what a version-1 sidecar of such a file holds, so older sidecars still read).

"settings" also holds `"shell_from_mesh": true` when shell distances come from the clip's
mesh, and the keyframe stripping settings `"strip_trivial"` (true or false),
`"strip_proportion"` and `"strip_threshold"` (numbers), `"skin_strict": true` (the skin
itself within budget, codec.settings) and `"codec"` (the registry's name) when they differ
from the defaults (each written only then, so sidecars of other clips read as before).
`"precision"` and `"shell_distance"` are written when set: without them every joint keeps
the clip's own value (an ACL SJSON clip's per-joint values).

Which layer wins (the clip's own values, this file, `--overrides`, flags) and how rules
decide a joint (a joint's exact-name rule wins over every pattern) is codec.run_settings'
and codec.tuning's. A file holding only the "overrides" list (or a bare list of rules) is
accepted as an overrides file for `--overrides FILE`.
"""

from __future__ import annotations

import json
import os
import reprlib
from pathlib import Path
from typing import Any

from codec.errors import SettingsError
from codec.formats.atomic import write_text
from codec.tuning import GlobalSettings, JointOverride

SUFFIX = ".shellscope.json"
FORMAT = "shellscope-sidecar"
VERSION = 2  # the newest layout this module reads; it writes 1 unless there are animations
VERSIONS = (1, 2)
_RULE_KEYS = ("pattern", "precision", "shell_distance", "rounding")
_SETTING_KEYS = (
    "precision",
    "shell_distance",
    "level",
    "shell_from_mesh",
    "strip_trivial",
    "strip_proportion",
    "strip_threshold",
    "skin_strict",
    "codec",
)
_OPTIONAL_KEYS = _SETTING_KEYS[3:]  # written only when not the default
_CLIP_OWN_KEYS = ("precision", "shell_distance")  # written only when set (null: the clip's own)


class SidecarError(SettingsError):
    """A sidecar or overrides file that cannot be used; names the file and the place in it."""

    def __init__(self, path: str | os.PathLike[str], place: str, message: str) -> None:
        self.path = str(path)
        self.place = place
        super().__init__(f"{self.path}: {place}: {message}")


def sidecar_path(clip_path: str | os.PathLike[str]) -> Path:
    """`walk.acl.sjson` -> `walk.acl.sjson.shellscope.json` (the whole clip file name is kept,
    so `walk.bvh` and `walk.acl.sjson` in one folder keep their own tuning)."""
    p = Path(clip_path)
    return p.with_name(p.name + SUFFIX)


MAX_SIZE = 16 << 20  # bytes; a sidecar is a few hundred
_SHOW = reprlib.Repr()
_SHOW.maxlevel, _SHOW.maxstring, _SHOW.maxother, _SHOW.maxlist, _SHOW.maxdict = 2, 40, 40, 4, 4


def _show(value: Any) -> str:
    """A short repr for messages: a hostile value may be a huge or deeply nested list."""
    return _SHOW.repr(value)


def _read_json(path: Path) -> Any:
    """The file's JSON; SidecarError naming the file for anything unusable: missing,
    unreadable, not a regular file (a FIFO would block), too large, not UTF-8, not JSON,
    a number longer than any setting holds, or nested too deeply to parse
    (codec.formats.input_paths: read with a cap, never blocking)."""
    from codec.formats.input_paths import InputRefused, load_json, read_capped

    try:
        return load_json(read_capped(path, MAX_SIZE, "sidecar"))
    except InputRefused as e:
        raise SidecarError(path, e.place or "file", e.reason) from None


def _rule(path: Path, place: str, item: Any) -> JointOverride:
    if not isinstance(item, dict):
        raise SidecarError(path, place, f"expected an object, got {type(item).__name__}")
    extra = set(item) - set(_RULE_KEYS)
    if extra:
        raise SidecarError(path, place, f"unknown keys {sorted(extra)}; expected {_RULE_KEYS}")
    pattern = item.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise SidecarError(path, f"{place}.pattern", "expected a non-empty string")
    for key in ("precision", "shell_distance"):
        v = item.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int | float)):
            raise SidecarError(path, f"{place}.{key}", f"expected a number or null, got {_show(v)}")
    rounding = item.get("rounding")
    if rounding is not None and not isinstance(rounding, str):
        raise SidecarError(path, f"{place}.rounding", f"expected a string, got {_show(rounding)}")
    try:
        return JointOverride(pattern, item.get("precision"), item.get("shell_distance"), rounding)
    except ValueError as e:
        raise SidecarError(path, place, str(e)) from None


def _rules(path: Path, place: str, items: Any) -> tuple[JointOverride, ...]:
    if not isinstance(items, list):
        raise SidecarError(path, place, f"expected a list of rules, got {type(items).__name__}")
    return tuple(_rule(path, f"{place}[{i}]", item) for i, item in enumerate(items))


def parse_rules(path: str | os.PathLike[str], place: str, items: Any) -> tuple[JointOverride, ...]:
    """A JSON list of rules, checked as a sidecar's are (SidecarError naming the place)."""
    return _rules(Path(path), place, items)


def _settings(path: Path, data: Any, place: str = "settings") -> GlobalSettings | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise SidecarError(path, place, f"expected an object, got {type(data).__name__}")
    extra = set(data) - set(_SETTING_KEYS)
    if extra:
        raise SidecarError(path, place, f"unknown keys {sorted(extra)}")
    for key in ("precision", "shell_distance", "strip_proportion", "strip_threshold"):
        v = data.get(key)
        if key in data and (isinstance(v, bool) or not isinstance(v, int | float)):
            raise SidecarError(path, f"{place}.{key}", f"expected a number, got {_show(v)}")
    for key in ("shell_from_mesh", "strip_trivial", "skin_strict"):
        flag = data.get(key, False)
        if not isinstance(flag, bool):
            raise SidecarError(path, f"{place}.{key}", f"expected true or false: {_show(flag)}")
    if "codec" in data and not isinstance(data["codec"], str):
        shown = _show(data["codec"])
        raise SidecarError(path, f"{place}.codec", f"expected a codec's name: {shown}")
    try:
        return GlobalSettings(**data)
    except (TypeError, ValueError) as e:
        raise SidecarError(path, place, str(e)) from None


Tuning = tuple[GlobalSettings | None, tuple[JointOverride, ...]]


def animation_key(clip_path: str | os.PathLike[str], animation: str | None) -> str | None:
    """The name a clip's tuning is kept under in its sidecar: the animation's name for the
    formats that hold several (glTF, FBX, USD), None (file-wide) for the others."""
    from codec.formats import format_of, multi_animation

    try:
        fmt = format_of(clip_path)
    except Exception:  # an unknown kind of file holds one clip
        return None
    return animation if multi_animation(fmt) and animation else None


def _document(path: Path) -> dict[str, Any] | list[Any]:
    """The checked top level of a sidecar: a dict (format, version, keys) or a list of rules."""
    data = _read_json(path)
    if isinstance(data, list):
        return data
    if not isinstance(data, dict):
        raise SidecarError(path, "top level", "expected an object or a list of rules")
    fmt = data.get("format", FORMAT)
    if fmt != FORMAT:
        raise SidecarError(path, "format", f"expected {FORMAT!r}, got {_show(fmt)}")
    version = data.get("version", 1)
    if version not in VERSIONS:
        raise SidecarError(
            path, "version", f"this Shellscope reads versions 1 and 2, not {_show(version)}"
        )
    extra = set(data) - {"format", "version", "clip", "settings", "overrides", "animations"}
    if extra:
        raise SidecarError(path, "top level", f"unknown keys {sorted(extra)}")
    return data


def _tuning(path: Path, place: str, data: dict[str, Any]) -> Tuning:
    prefix = f"{place}." if place else ""
    settings = _settings(path, data.get("settings"), f"{prefix}settings")
    return settings, _rules(path, f"{prefix}overrides", data.get("overrides", []))


def _animations(path: Path, data: dict[str, Any]) -> dict[str, Tuning]:
    items = data.get("animations", {})
    if not isinstance(items, dict):
        raise SidecarError(path, "animations", f"expected an object, got {type(items).__name__}")
    out = {}
    for name, entry in items.items():
        place = f"animations[{name!r}]"
        if not isinstance(entry, dict):
            raise SidecarError(path, place, f"expected an object, got {type(entry).__name__}")
        extra = set(entry) - {"settings", "overrides"}
        if extra:
            raise SidecarError(path, place, f"unknown keys {sorted(extra)}")
        out[name] = _tuning(path, place, entry)
    return out


def read_sidecar_file(path: str | os.PathLike[str], animation: str | None = None) -> Tuning:
    """Parse one sidecar (or overrides) file; SidecarError on anything unusable. With
    `animation`, that animation's own tuning when the file has one (else the file-wide)."""
    path = Path(path)
    data = _document(path)
    if isinstance(data, list):
        return None, _rules(path, "top level", data)
    animations = _animations(path, data)
    file_wide = _tuning(path, "", data)
    if animation is not None and animation in animations:
        return animations[animation]
    return file_wide


Layer = tuple[dict[str, Any], tuple[JointOverride, ...]]


def read_layer(path: str | os.PathLike[str], animation: str | None = None) -> Layer:
    """What one tuning file says, for layering (codec.run_settings): the clip-wide settings
    it holds (only the keys it has, checked as `read_sidecar_file` checks them) and its rules;
    with `animation`, that animation's own entry when the file has one."""
    path = Path(path)
    data = _document(path)
    if isinstance(data, list):
        return {}, _rules(path, "top level", data)
    entry, place = data, ""
    if animation is not None and animation in _animations(path, data):
        entry, place = data["animations"][animation], f"animations[{animation!r}]"
    else:
        _animations(path, data)  # checked even when unused
    _, rules = _tuning(path, place, entry)  # every value checked
    return dict(entry.get("settings") or {}), rules


def load_sidecar(clip_path: str | os.PathLike[str], animation: str | None = None) -> Tuning:
    """The tuning saved for a clip: (settings or None, overrides); (None, ()) without a
    sidecar. `animation`: the name of the clip's animation (see `animation_key`)."""
    path = sidecar_path(clip_path)
    if not path.is_file():
        return None, ()
    return read_sidecar_file(path, animation_key(clip_path, animation))


def _tuning_json(settings: GlobalSettings | None, overrides: Any) -> dict[str, Any]:
    rules = [{k: getattr(r, k) for k in _RULE_KEYS if getattr(r, k) is not None} for r in overrides]
    data: dict[str, Any] = {}
    if settings is not None:
        data["settings"] = {k: getattr(settings, k) for k in _SETTING_KEYS}
        default = GlobalSettings()
        for k in _OPTIONAL_KEYS:
            if getattr(settings, k) == getattr(default, k):
                del data["settings"][k]
        for k in _CLIP_OWN_KEYS:
            if getattr(settings, k) is None:
                del data["settings"][k]
    data["overrides"] = rules
    return data


def sidecar_text(
    clip_name: str,
    settings: GlobalSettings | None,
    overrides: tuple[JointOverride, ...] | list,
    animations: dict[str, Tuning] | None = None,
) -> str:
    """The JSON text of a sidecar (fixed key order keeps version-control diffs small): the
    file-wide tuning, and with `animations` each animation's own (version 2)."""
    data: dict[str, Any] = {"format": FORMAT, "version": 2 if animations else 1, "clip": clip_name}
    if settings is not None or overrides or not animations:
        data.update(_tuning_json(settings, overrides))
    if animations:
        data["animations"] = {name: _tuning_json(*animations[name]) for name in sorted(animations)}
    return json.dumps(data, indent=2) + "\n"


def save_sidecar(
    clip_path: str | os.PathLike[str],
    settings: GlobalSettings | None,
    overrides: tuple[JointOverride, ...] | list[JointOverride],
    animation: str | None = None,
    also: tuple[str, ...] = (),
) -> Path:
    """Write the clip's sidecar whole or not at all; returns its path. With `animation` (a
    glTF, FBX or USD file's animation) only that animation's entry changes: the other
    animations' and any file-wide tuning already there are kept (a sidecar that cannot be
    read is replaced). `also`: more animations of the file given the same tuning, in the same
    write (the window's "Apply this tuning to all animations")."""
    path = sidecar_path(clip_path)
    key = animation_key(clip_path, animation)
    keys = [k for k in (key, *(animation_key(clip_path, a) for a in also)) if k is not None]
    if key is None:
        text = sidecar_text(Path(clip_path).name, settings, overrides)
    else:
        file_settings: GlobalSettings | None = None
        file_rules: tuple[JointOverride, ...] = ()
        animations: dict[str, Tuning] = {}
        if path.is_file():
            try:
                data = _document(path)
                if isinstance(data, dict):
                    animations = _animations(path, data)
                    file_settings, file_rules = _tuning(path, "", data)
            except SidecarError:
                pass  # unusable (the user was told when the clip opened): start afresh
        for k in keys:
            animations[k] = (settings, tuple(overrides))
        text = sidecar_text(Path(clip_path).name, file_settings, file_rules, animations)
    write_text(path, text)
    return path


def append_rules(
    clip_path: str | os.PathLike[str],
    rules: tuple[JointOverride, ...] | list[JointOverride],
    animation: str | None = None,
) -> Path:
    """Add `rules` after the clip's own (its animation's entry for a multi-animation file):
    the library's "apply a rule set" to a row, read back by codec.run_settings like any
    sidecar. SidecarError when the sidecar there cannot be read (it is left as it is)."""
    settings, own = load_sidecar(clip_path, animation)
    return save_sidecar(clip_path, settings, (*own, *rules), animation)
