"""What a library run compresses with: global settings, a rules file and per-clip sidecars.

Later wins, as in the window: the clip's own defaults, then the global flags (`--precision`,
`--shell-distance`, `--level`), then the rules file (`--overrides`: name-pattern rules), then
the clip's sidecar `CLIP.shellscope.json` (its settings replace the global ones for that
clip, its rules come after the rules file's). A clip tuned by hand keeps its tuning when the
project defaults change, which is what a sweep of the defaults should show.

The sidecar is read by codec/sidecar.py, the reader the window and `compress` use.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from codec.errors import SettingsError
from codec.formats.input_paths import read_capped
from codec.model.clip import Clip
from codec.settings import CompressionSettings
from codec.tuning import JointOverride, resolve

SIDECAR_SUFFIX = ".shellscope.json"
_MAX_SIDECAR = 16 << 20


@dataclass(frozen=True)
class ClipTuning:
    """One clip's settings: level, global precision / shell distance (None: the clip's own),
    and the rules applied after them in order; `skin_strict` for the clips with a skinned
    mesh (the others compress as usual: a library mixes both)."""

    level: str = "automatic"
    precision: float | None = None
    shell_distance: float | None = None
    rules: tuple[JointOverride, ...] = ()
    codec: str = "acl-style"
    skin_strict: bool = False

    def settings(self) -> CompressionSettings:
        return CompressionSettings(level=self.level, codec=self.codec, skin_strict=self.skin_strict)

    def apply(self, clip: Clip) -> tuple[Clip, CompressionSettings]:
        """The clip with every joint's precision and shell distance resolved, and the
        settings to compress it with."""
        r = resolve(clip.skeleton, self.rules, self.precision, self.shell_distance)
        settings = self.settings()
        if settings.skin_strict and not clip.meshes:
            settings = replace(settings, skin_strict=False)
        return clip.with_skeleton_settings(r.precision, r.shell_distance), settings


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
            side_hash = hashlib.sha256(read_capped(side, _MAX_SIDECAR, "sidecar")).hexdigest()
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
    from codec.sidecar import sidecar_path as beside

    return beside(clip_path)


def read_rules_file(
    path: str | os.PathLike[str],
) -> tuple[dict[str, Any], tuple[JointOverride, ...]]:
    """A sidecar or a bare JSON list of rules, read by codec.sidecar as the window and
    `compress` read it: (its clip-wide settings that were written, possibly empty; its
    rules). SettingsError naming the file and the place for anything unusable."""
    from codec.sidecar import SidecarError, read_sidecar_file

    try:
        settings, rules = read_sidecar_file(path)
    except SidecarError as e:
        raise SettingsError(str(e)) from None
    if settings is None:
        return {}, rules
    keys = ("precision", "shell_distance", "level")
    out = {k: getattr(settings, k) for k in keys}
    if settings.skin_strict:
        out["skin_strict"] = True
    return out, rules


def merge_sidecar(base: ClipTuning, side: Path) -> ClipTuning:
    """`base` with a sidecar's settings replacing its globals and its rules appended."""
    settings, rules = read_rules_file(side)
    return ClipTuning(
        level=settings.get("level", base.level),
        precision=settings.get("precision", base.precision),
        shell_distance=settings.get("shell_distance", base.shell_distance),
        rules=base.rules + rules,
        codec=base.codec,
        skin_strict=settings.get("skin_strict", base.skin_strict),
    )
