"""What a library run compresses each clip with: codec.run_settings, as the window and
`compress` resolve it, from the run's flags, its `--overrides` file and each clip's sidecar.

The order is the one everywhere (codec.run_settings): the clip's own values, its sidecar
`CLIP.shellscope.json` (its animation's entry), the `--overrides` file (read once, for every
clip), then the flags (`--precision`, `--shell-distance`, `--level`, `--codec`,
`--skin-strict`; a sweep's precision). A joint's exact-name value, from the sidecar or the
rules file, wins over every pattern. So a clip tuned in the window gives in the library the
bytes it gave in the window.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from codec.errors import SettingsError
from codec.run_settings import Flags, Layer, RunSettings, read_tuning_layer, resolve_run

_MAX_SIDECAR = 16 << 20


@dataclass(frozen=True)
class LibrarySettings:
    """A run's settings: its flags (tuning, reader options and the `--overrides` file, an
    absolute path the workers read with each clip's animation) and whether the clips'
    sidecars count."""

    flags: Flags = field(default_factory=Flags)
    sidecars: bool = True
    # an export run (the library window's "Export selected"): each compressed clip's .ssc
    # written into this folder; `export_only`: the (file name, animation) rows to export of a
    # multi-animation file (empty: all). Never part of the cache key: export runs are uncached
    export_to: str | None = None
    export_only: tuple[tuple[str, str], ...] = ()

    def with_precision(self, precision: float) -> LibrarySettings:
        """A sweep's run: the global precision is a flag, so it wins over each sidecar's
        (a joint's own value in a sidecar still wins over it)."""
        return replace(self, flags=replace(self.flags, precision=precision))

    @property
    def reader(self) -> dict[str, Any]:
        """codec.formats.load_clip's options of every clip (the animation is per row)."""
        return {
            k: getattr(self.flags, k)
            for k in ("units", "sample_rate", "bvh_positions")
            if getattr(self.flags, k) is not None
        }

    def for_clip(self, path: str | os.PathLike[str], animation: str | None = None) -> RunSettings:
        """The complete settings of one clip (SettingsError naming the sidecar and the place
        when it cannot be used)."""
        return resolve_run(path, animation, self.flags, sidecar=self.sidecars)

    def fingerprint(self, path: str | os.PathLike[str]) -> str:
        """The settings of one file, as text for the cache key: the hash of the complete
        settings block every clip of it starts from (flags, rules file, reader options,
        Shellscope's version), and of its sidecar's and rules file's bytes (which hold each
        animation's own tuning). A settings file that cannot be used is a key of its own (the
        worker makes its error row)."""
        try:
            block = resolve_run(path, None, replace(self.flags, overrides=None), sidecar=False)
            text = json.dumps(block.block(), sort_keys=True)
        except SettingsError as e:
            text = f"unusable: {e}"
        side = _tuning_bytes(sidecar_path(path) if self.sidecars else None)
        rules = _tuning_bytes(self.flags.overrides)
        data = {
            "settings": hashlib.sha256(text.encode()).hexdigest(),
            "sidecar": hashlib.sha256(side).hexdigest() if side is not None else "",
            "overrides": hashlib.sha256(rules).hexdigest() if rules is not None else "",
        }
        if ACL_21 in text or any(ACL_21.encode() in b for b in (side, rules) if b is not None):
            data["acl_compressor"] = compressor_identity()  # its rows are its output
        return json.dumps(data, sort_keys=True)


ACL_21 = '"acl-2.1"'  # the codec that runs ACL's acl_compressor, as a settings file names it


def compressor_identity() -> str:
    """Which acl_compressor acl-2.1's rows come from: the sha256 of the configured program's
    bytes (another build at the same path is another compressor), or why there is none."""
    from codec.codecs import acl_compressor_path

    path = acl_compressor_path.configured()
    if not path:
        return "none"
    try:
        info = os.stat(path)
    except OSError as e:
        return f"unreadable: {e.strerror}"
    return _program_hash(path, info.st_size, info.st_mtime_ns)


@lru_cache(maxsize=8)
def _program_hash(path: str, size: int, mtime_ns: int) -> str:
    """sha256 of a program's bytes, once per (path, size, time) a run sees."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _tuning_bytes(path: str | os.PathLike[str] | None) -> bytes | None:
    """A tuning file's bytes, read once for its hash and what it names (None without one)."""
    if path is None or not Path(path).is_file():
        return None
    with open(path, "rb") as f:
        return f.read(_MAX_SIDECAR)


def sidecar_path(clip_path: str | os.PathLike[str]) -> Path:
    from codec.sidecar import sidecar_path as beside

    return beside(clip_path)


def read_rules_file(path: str | os.PathLike[str]) -> Layer:
    """A rules file (a sidecar or a bare JSON list of rules) as the `--overrides` layer:
    (the clip-wide settings it holds, possibly none; its rules). SettingsError naming the
    file and the place for anything unusable."""
    return read_tuning_layer(path)
