"""Writing a clip as an ACL version 5 file (`*.acl.sjson`), in ACL's key order.

ACL 2.1's reader takes a joint's own precision only in the `track_list` form (a `qvvf`
track's `precision` and `shell_distance`); the `clip` form has one precision for every bone
(`settings.error_threshold`) and a per-bone `vertex_distance`. So a clip whose joints share
one precision is written as a `clip` (binary-exact float64, ACL's regression format), and a
clip tuned joint by joint as a `track_list` of qvvf tracks with each joint's precision and
shell distance, which acl_compressor compresses as a raw clip with those values. That list
is written with decimals (is_binary_exact = false): ACL's binary-exact track lists hold
float32 bit patterns, while shortest round-trip decimals keep our float64 values exact and
ACL reads them as doubles cast to float, as it reads a clip's hex doubles. No `settings`
block there: in a track list it would replace acl_compressor's default compression settings.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from codec.formats import sjson
from codec.formats.acl_sjson.layout import WRITTEN_VERSION, clip_name
from codec.formats.atomic import write_text
from codec.model.clip import Clip

Array = np.ndarray


def write_acl_sjson(clip: Clip, path: str | Path, *, binary_exact: bool = True) -> None:
    """Write `clip` as an ACL version 5 file, atomically, in ACL's key order: a raw clip,
    or a qvvf track list when joint precisions differ (see the module docstring).

    Binary-exact clips hold float64 bit patterns as hex strings, so reading gives back the
    same arrays bit for bit; decimal files use shortest round-trip decimals (also exact).
    """
    write_text(path, acl_sjson_text(clip, path, binary_exact=binary_exact))


def acl_sjson_text(clip: Clip, path: str | Path, *, binary_exact: bool = True) -> str:
    """The text `write_acl_sjson` writes (`path` names the clip when it has no name)."""
    sk = clip.skeleton
    if len(set(sk.names)) != len(sk.names):
        raise ValueError("ACL SJSON identifies bones by name: joint names must be unique")
    if not np.all(sk.precision == sk.precision[0]):
        return _track_list_text(clip, path)
    fmt = _hex_rows if binary_exact else _decimal_rows
    out: list[str] = [f"version = {WRITTEN_VERSION}", ""]
    out += [
        "clip =",
        "{",
        f"\tname = {sjson.quote(clip.name or clip_name(path))}",
        f"\tnum_samples = {clip.num_samples}",
        f"\tsample_rate = {_number(clip.sample_rate)}",
        f"\tis_binary_exact = {'true' if binary_exact else 'false'}",
        '\tadditive_format = "none"',
        "}",
        "",
    ]
    out += [
        "settings =",
        "{",
        f"\terror_threshold = {sjson.format_float(sk.precision[0])}",
        "}",
        "",
    ]
    out += ["bones =", "["]
    for j, bname in enumerate(sk.names):
        p = int(sk.parents[j])
        out += [
            "\t{",
            f"\t\tname = {sjson.quote(bname)}",
            f"\t\tparent = {sjson.quote('' if p < 0 else sk.names[p])}",
            f"\t\tvertex_distance = {sjson.format_float(sk.shell_distance[j])}",
        ]
        for key, values, identity in (
            ("bind_rotation", sk.bind_rotations[j], (0.0, 0.0, 0.0, 1.0)),
            ("bind_translation", sk.bind_translations[j], (0.0, 0.0, 0.0)),
            ("bind_scale", sk.bind_scales[j], (1.0, 1.0, 1.0)),
        ):
            if not _bitwise_equal(values, identity):
                out.append(f"\t\t{key} = {fmt(values[None])[0]}")
        out.append("\t}")
    out += ["]", "", "tracks =", "["]
    for j, bname in enumerate(sk.names):
        out += ["\t{", f"\t\tname = {sjson.quote(bname)}"]
        for key, values in (
            ("rotations", clip.rotations),
            ("translations", clip.translations),
            ("scales", clip.scales),
        ):
            out += [f"\t\t{key} =", "\t\t["]
            out += ["\t\t\t" + row for row in fmt(values[:, j])]
            out.append("\t\t]")
        out.append("\t}")
    out.append("]")
    return "\n".join(out) + "\n"


def _track_list_text(clip: Clip, path: str | Path) -> str:
    """A version 5 qvvf track list: each joint's precision and shell distance, decimals."""
    sk = clip.skeleton
    num = sjson.format_float
    out: list[str] = [f"version = {WRITTEN_VERSION}", ""]
    out += [
        "track_list =",
        "{",
        f"\tname = {sjson.quote(clip.name or clip_name(path))}",
        f"\tnum_samples = {clip.num_samples}",
        f"\tsample_rate = {_number(clip.sample_rate)}",
        "\tis_binary_exact = false",
        "}",
        "",
        "tracks =",
        "[",
    ]
    rot, tr, sc = (
        np.asarray(a, dtype=np.float64) for a in (clip.rotations, clip.translations, clip.scales)
    )
    for j, bname in enumerate(sk.names):
        out += [
            "\t{",
            f"\t\tname = {sjson.quote(bname)}",
            '\t\ttype = "qvvf"',
            f"\t\tprecision = {num(sk.precision[j])}",
            f"\t\toutput_index = {j}",
        ]
        if sk.parents[j] >= 0:
            out.append(f"\t\tparent_index = {int(sk.parents[j])}")
        out.append(f"\t\tshell_distance = {num(sk.shell_distance[j])}")
        for key, values in (
            ("bind_rotation", sk.bind_rotations[j]),
            ("bind_translation", sk.bind_translations[j]),
            ("bind_scale", sk.bind_scales[j]),
        ):
            out.append(f"\t\t{key} = {_decimal_rows(values[None])[0]}")
        out += ["\t\tdata =", "\t\t["]
        r, t, s = (_decimal_rows(a[:, j]) for a in (rot, tr, sc))
        out += [f"\t\t\t[ {a}, {b}, {c} ]" for a, b, c in zip(r, t, s, strict=True)]
        out += ["\t\t]", "\t}"]
    out.append("]")
    return "\n".join(out) + "\n"


def _hex_rows(values: Array) -> list[str]:
    """Rows of `(N, W)` values as `[ "hex", ... ]` with ACL's float64 bit-pattern strings."""
    n, w = values.shape
    strings = sjson.hex_doubles(values)
    fmt = "[ " + ", ".join(['"{}"'] * w) + " ]"
    return [fmt.format(*strings[k * w : (k + 1) * w]) for k in range(n)]


def _decimal_rows(values: Array) -> list[str]:
    """Rows of `(N, W)` values as shortest round-trip decimals."""
    return ["[ " + ", ".join(sjson.format_float(v) for v in row) + " ]" for row in values.tolist()]


def _number(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else sjson.format_float(v)


def _bitwise_equal(values: Array, ref: tuple[float, ...]) -> bool:
    a = np.asarray(values, dtype=np.float64)
    return bool(np.array_equal(a.view(np.uint64), np.array(ref, dtype=np.float64).view(np.uint64)))
