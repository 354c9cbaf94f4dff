"""What an ACL SJSON file may hold: versions, the two forms, the keys of each object."""

from __future__ import annotations

from pathlib import Path

from codec.formats.compressed import inner_name

SUPPORTED_VERSIONS = (1, 2, 3, 4, 5)
WRITTEN_VERSION = 5
ADDITIVE_FORMATS = ("none", "relative", "additive0", "additive1")
CLIP_TOP = ("version", "clip", "settings", "bones", "base_tracks", "tracks")
LIST_TOP = ("version", "track_list", "settings", "tracks")
CLIP_KEYS = (
    "name",
    "num_samples",
    "sample_rate",
    "error_threshold",
    "is_binary_exact",
    "additive_format",
    "additive_base_name",
    "additive_base_num_samples",
    "additive_base_sample_rate",
)
BONE_KEYS = (
    "name",
    "parent",
    "vertex_distance",
    "precision",
    "bind_rotation",
    "bind_translation",
    "bind_scale",
)
TRACK_KEYS = ("name", "rotations", "translations", "scales")
LIST_KEYS = ("name", "num_samples", "sample_rate", "is_binary_exact")
SCALAR_TRACK_KEYS = ("name", "type", "precision", "constant_threshold", "output_index", "data")
QVVF_TRACK_KEYS = (
    "name",
    "type",
    "precision",
    "constant_threshold",
    "output_index",
    "parent_index",
    "shell_distance",
    "constant_rotation_threshold_angle",
    "constant_translation_threshold",
    "constant_scale_threshold",
    "bind_rotation",
    "bind_translation",
    "bind_scale",
    "data",
)


def clip_name(path: object) -> str:
    """The clip name a file implies: its name without `.acl.sjson` (or `.gz` ...)."""
    name = inner_name(str(path))
    for suffix in (".acl.sjson", ".sjson"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return Path(name).stem
