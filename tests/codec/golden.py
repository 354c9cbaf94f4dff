"""The golden .ssc files: one small real clip compressed with fixed settings, pinned byte
for byte per container format version (tests/data/golden/ssc-vN/).

A change of the written bytes must be on purpose: `python tools/regen_golden.py` (or
`make golden`) writes the file of the current version again, after a format change.
Files of older versions stay, as long as the reader still reads their version.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from codec.codecs import container
from codec.compression import compress
from codec.formats import load_clip
from codec.settings import CompressionSettings

DATA = Path(__file__).resolve().parents[1] / "data"
GOLDEN = DATA / "golden"
CLIP = DATA / "acl" / "cmu_09_02.acl.sjson"  # 44 joints, 26 samples: every track kind
SETTINGS = CompressionSettings(level="highest", skin_error=False, supersample=0)


BIND_MODES = ("", "additive")  # "": the default (best, which keeps strip on this clip)


def golden_path(version: int = container.VERSION, bind: str = "") -> Path:
    """Where the golden file of container format `version` lives (`bind`: the one of that
    bind mode, a payload with its bind code set)."""
    return GOLDEN / f"ssc-v{version}" / ("cmu_09_02.ssc" if not bind else f"cmu_09_02_{bind}.ssc")


def golden_bytes(bind: str = "") -> bytes:
    """The whole .ssc file the current code writes for the golden clip (no sidecar: the
    clip's own precision and shell distance, so tuning edits do not move the bytes)."""
    settings = SETTINGS if not bind else replace(SETTINGS, bind=bind)
    return compress(load_clip(CLIP), settings).data
