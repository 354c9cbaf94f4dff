"""What a library run compresses with: global settings, a rules file and per-clip sidecars.

Later wins, as in the window: the clip's own defaults, then the global flags (`--precision`,
`--shell-distance`, `--level`), then the rules file (`--overrides`: name-pattern rules), then
the clip's sidecar `CLIP.shellscope.json` (its settings replace the global ones for that
clip, its rules come after the rules file's). A clip tuned by hand keeps its tuning when the
project defaults change, which is what a sweep of the defaults should show.

The sidecar layout is the window's (app/sidecar.py writes it); it is read here too because
the codec never imports the app.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from codec.errors import SettingsError
from codec.model.clip import Clip
from codec.settings import LEVELS, CompressionSettings
from codec.tuning import JointOverride, resolve

SIDECAR_SUFFIX = ".shellscope.json"
_MAX_SIDECAR = 16 << 20


@dataclass(frozen=True)
class ClipTuning:
    """One clip's settings: level, global precision / shell distance (None: the clip's own),
    and the rules applied after them in order."""

    level: str = "automatic"
    precision: float | None = None
    shell_distance: float | None = None
    rules: tuple[JointOverride, ...] = ()

    def settings(self) -> CompressionSettings:
        return CompressionSettings(level=self.level)

    def apply(self, clip: Clip) -> tuple[Clip, CompressionSettings]:
        """The clip with every joint's precision and shell distance resolved, and the
        settings to compress it with."""
        r = resolve(clip.skeleton, self.rules, self.precision, self.shell_distance)
        return clip.with_skeleton_settings(r.precision, r.shell_distance), self.settings()


@dataclass(frozen=True)
class LibrarySettings:
    """A run's settings: the global tuning, whether sidecars count, and reader options."""

    tuning: ClipTuning = field(default_factory=ClipTuning)
    sidecars: bool = True
    reader: tuple[tuple[str, Any], ...] = ()  # (option, value) for codec.formats.load_clip

    def with_precision(self, precision: float) -> LibrarySettings:
        return replace(self, tuning=replace(self.tuning, precision=precision))

    def for_clip(self, path: str | os.PathLike[str]) -> ClipTuning:
        """The tuning of one clip: the global one, with its sidecar's on top when there is
        one (SettingsError naming the sidecar and the place when it cannot be used)."""
        if not self.sidecars:
            return self.tuning
        side = sidecar_path(path)
        if not side.is_file():
            return self.tuning
        return merge_sidecar(self.tuning, side)

    def fingerprint(self, path: str | os.PathLike[str]) -> str:
        """What the settings of one clip are, as text for the cache key: the global tuning,
        the reader options and its sidecar's bytes."""
        side = sidecar_path(path)
        side_hash = ""
        if self.sidecars and side.is_file():
            side_hash = hashlib.sha256(side.read_bytes()[:_MAX_SIDECAR]).hexdigest()
        t = self.tuning
        data = {
            "level": t.level,
            "precision": t.precision,
            "shell_distance": t.shell_distance,
            "rules": [[r.pattern, r.precision, r.shell_distance, r.rounding] for r in t.rules],
            "sidecar": side_hash,
            "reader": [list(kv) for kv in self.reader],
            "codec_settings": repr(t.settings()),
        }
        return json.dumps(data, sort_keys=True)


def sidecar_path(clip_path: str | os.PathLike[str]) -> Path:
    p = Path(clip_path)
    return p.with_name(p.name + SIDECAR_SUFFIX)


def _fail(path: Path, place: str, message: str) -> SettingsError:
    return SettingsError(f"{path}: {place}: {message}")


def read_rules_file(
    path: str | os.PathLike[str],
) -> tuple[dict[str, Any], tuple[JointOverride, ...]]:
    """A sidecar or a bare JSON list of rules: (its settings, possibly empty; its rules).
    SettingsError naming the file and the place for anything unusable."""
    path = Path(path)
    try:
        if path.stat().st_size > _MAX_SIDECAR:
            raise _fail(path, "file", "too large for a tuning file")
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise _fail(path, "file", f"cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise _fail(path, f"byte {e.start}", "not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise _fail(path, f"line {e.lineno} column {e.colno}", e.msg) from None
    if isinstance(data, list):
        return {}, _rules(path, "top level", data)
    if not isinstance(data, dict):
        raise _fail(path, "top level", "expected an object or a list of rules")
    settings = data.get("settings") or {}
    if not isinstance(settings, dict):
        raise _fail(path, "settings", f"expected an object, got {type(settings).__name__}")
    for key in ("precision", "shell_distance"):
        v = settings.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int | float) or v <= 0):
            raise _fail(path, f"settings.{key}", f"expected a positive number, got {v!r}")
    if settings.get("level", "automatic") not in LEVELS:
        raise _fail(path, "settings.level", f"expected one of {LEVELS}")
    return settings, _rules(path, "overrides", data.get("overrides", []))


def _rules(path: Path, place: str, items: Any) -> tuple[JointOverride, ...]:
    if not isinstance(items, list):
        raise _fail(path, place, f"expected a list of rules, got {type(items).__name__}")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("pattern"), str):
            raise _fail(path, f"{place}[{i}]", "expected an object with a 'pattern' string")
        try:
            out.append(
                JointOverride(
                    item["pattern"],
                    item.get("precision"),
                    item.get("shell_distance"),
                    item.get("rounding"),
                )
            )
        except (TypeError, ValueError) as e:
            raise _fail(path, f"{place}[{i}]", str(e)) from None
    return tuple(out)


def merge_sidecar(base: ClipTuning, side: Path) -> ClipTuning:
    """`base` with a sidecar's settings replacing its globals and its rules appended."""
    settings, rules = read_rules_file(side)
    return ClipTuning(
        level=settings.get("level", base.level),
        precision=settings.get("precision", base.precision),
        shell_distance=settings.get("shell_distance", base.shell_distance),
        rules=base.rules + rules,
    )
