"""Writing a clip as an ACL version 5 raw clip (`*.acl.sjson`), in ACL's key order."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from codec.formats import sjson
from codec.formats.acl_sjson.layout import WRITTEN_VERSION, clip_name
from codec.formats.atomic import write_text
from codec.model.clip import Clip

Array = np.ndarray


def write_acl_sjson(clip: Clip, path: str | Path, *, binary_exact: bool = True) -> None:
    """Write `clip` as an ACL version 5 raw clip, atomically, in ACL's key order.

    Binary-exact files hold float64 bit patterns as hex strings, so reading gives back the
    same arrays bit for bit; decimal files use shortest round-trip decimals (also exact).
    ACL's clip form has one precision for the clip (`settings.error_threshold`): when joint
    precisions differ, the smallest is written and a comment says so.
    """
    sk = clip.skeleton
    if len(set(sk.names)) != len(sk.names):
        raise ValueError("ACL SJSON identifies bones by name: joint names must be unique")
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
    precision = sk.precision
    if not np.all(precision == precision[0]):
        out.append("// Shellscope: joint precisions differ; error_threshold holds the smallest")
    out += [
        "settings =",
        "{",
        f"\terror_threshold = {sjson.format_float(precision.min())}",
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
    write_text(path, "\n".join(out) + "\n")


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
