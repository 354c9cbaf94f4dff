"""The clip as `acl_compressor` reads it: an ACL SJSON `qvvf` track list, the form that
carries a precision and a shell distance per track (the `clip` form has one precision).

Binary exact: every number is the hex of its float32 bits, which is what ACL keeps of any
value it reads (a decimal would be parsed to a double and rounded to the same float32), so
ACL compresses exactly the clip Shellscope measures against, rounded to float32. Tracks are
in the clip's joint order (parents first), parents by index, bind pose as default values;
keys in the order ACL's reader expects them.
"""

from __future__ import annotations

import numpy as np

from codec.formats import sjson
from codec.model.clip import Clip

Array = np.ndarray
VERSION = 5


def hex32(values: Array) -> list[str]:
    """ACL's binary-exact spelling of float32 values: the hex of their bits."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).ravel()
    return [f'"{b:08X}"' for b in bits.tolist()]


def _row(values: Array) -> str:
    return "[ " + ", ".join(hex32(values)) + " ]"


def track_list_text(clip: Clip, name: str | None = None) -> str:
    """The whole SJSON text of `clip` as a binary-exact qvvf track list: per track its name,
    parent index, precision, shell distance, bind pose and one [rotation, translation,
    scale] row per sample."""
    sk = clip.skeleton
    out = [
        f"version = {VERSION}",
        "",
        "track_list =",
        "{",
        f"\tname = {sjson.quote(name if name is not None else clip.name or 'clip')}",
        f"\tnum_samples = {clip.num_samples}",
        f"\tsample_rate = {sjson.format_float(float(np.float32(clip.sample_rate)))}",
        "\tis_binary_exact = true",
        "}",
        "",
        "tracks =",
        "[",
    ]
    rows = np.concatenate((clip.rotations, clip.translations, clip.scales), axis=-1)
    rows = rows.astype(np.float32)
    for j, joint in enumerate(sk.names):
        p = int(sk.parents[j])
        out += [
            "\t{",
            f"\t\tname = {sjson.quote(joint)}",
            '\t\ttype = "qvvf"',
            f"\t\tprecision = {hex32(np.array([sk.precision[j]]))[0]}",
        ]
        if p >= 0:  # ACL reads the keys in this order
            out.append(f"\t\tparent_index = {p}")
        out += [
            f"\t\tshell_distance = {hex32(np.array([sk.shell_distance[j]]))[0]}",
            f"\t\tbind_rotation = {_row(sk.bind_rotations[j])}",
            f"\t\tbind_translation = {_row(sk.bind_translations[j])}",
            f"\t\tbind_scale = {_row(sk.bind_scales[j])}",
            "\t\tdata =",
            "\t\t[",
        ]
        track = rows[:, j]
        out += [f"\t\t\t[ {_row(r[:4])}, {_row(r[4:7])}, {_row(r[7:])} ]" for r in track]
        out += ["\t\t]", "\t}"]
    out.append("]")
    return "\n".join(out) + "\n"
