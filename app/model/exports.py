"""Exports of one compression: stats JSON, per-joint CSV, the lossy clip and a screenshot.

Qt-free so the command line (`app.model.headless`) writes exactly what the window writes (the
controller carries out the panels' export intents; a view grabs the PNG of a screenshot).
Every file is written whole or not at all (formats.atomic): an export that fails leaves the old
file in place. The numbers come from codec.result_tables and codec.measure.stats; this module
only lays them out as JSON and CSV.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from codec.formats.atomic import write_bytes, write_text
from codec.lossy_export import LossyFile
from codec.measure.stats import json_safe
from codec.model.clip import Clip
from codec.printable import csv_cell
from codec.result import Result
from codec.result_tables import (
    SKIN_REPORT_COLUMNS,
    joint_columns,
    joint_rows,
    skin_report_rows,
)
from codec.run_settings import RunSettings


def stats_dict(result: Result, settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """The codec's stats under ACL's key names, plus the settings block of the run that made
    them (codec.run_settings: `python -m codec compress CLIP --settings THIS.json` makes
    the same bytes again).

    Top-level keys are exactly `result.stats` (so tools reading ACL stats read ours); the
    settings go under "shellscope".
    """
    out = json_safe(dict(result.stats))
    out.setdefault("clip_name", result.clip.name)
    if settings is not None:
        out["shellscope"] = json_safe(settings)
    return out


def view_facts(
    clip: Clip, path: str | os.PathLike[str] | None, up_axis: str | None, rounding: str
) -> dict[str, Any]:
    """What the window shows a result with (the settings block's `view`; changes no byte):
    the up axis (View > Up axis, else declared by the file or read off the motion) and
    why, and the sample-time rounding."""
    from app.model.up_axis import up_axis as choose

    axis, why = choose(clip, path, up_axis if up_axis in ("X", "Y", "Z") else None)
    return {"up_axis": axis, "up_axis_from": why, "rounding": rounding}


def refuse_inputs(path: str | os.PathLike[str], inputs: Sequence[object]) -> None:
    """ValueError when `path` is one of `inputs` (the clip, its sidecar, an overrides file):
    an export never replaces a file it was made from."""
    target = os.path.realpath(path)
    for i in inputs:
        if i is None:
            continue
        same = target == os.path.realpath(os.fspath(i))  # type: ignore[arg-type]
        if not same and os.path.exists(path) and os.path.exists(os.fspath(i)):  # type: ignore
            same = os.path.samefile(path, os.fspath(i))  # type: ignore[arg-type]
        if same:
            raise ValueError(f"{path}: is the input file {i}; refusing to overwrite it")


def export_stats(
    path: str | os.PathLike[str],
    result: Result,
    settings: dict[str, Any] | None = None,
    inputs: Sequence[object] = (),
) -> Path:
    """Stats JSON (ACL key names) with the run's settings block, written whole or not at
    all; never over `inputs`."""
    refuse_inputs(path, inputs)
    text = json.dumps(stats_dict(result, settings), indent=2, allow_nan=False) + "\n"
    write_text(path, text)
    return Path(path)


def write_json(
    path: str | os.PathLike[str], data: dict[str, Any], inputs: Sequence[object] = ()
) -> Path:
    """Any JSON object (already JSON-safe), whole or not at all; never over `inputs`."""
    refuse_inputs(path, inputs)
    write_text(path, json.dumps(json_safe(data), indent=2, allow_nan=False) + "\n")
    return Path(path)


def _csv_text(columns: tuple[str, ...], rows: list[dict[str, Any]]) -> str:
    """CSV with floats in full precision, NaN (does not apply) as an empty cell, and names
    as data (codec.printable.csv_cell: never a formula, never a control character)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow(
            {
                k: ""
                if isinstance(v, float) and math.isnan(v)
                else repr(v)
                if isinstance(v, float)
                else csv_cell(v)
                if isinstance(v, str)
                else v
                for k, v in row.items()
            }
        )
    return buf.getvalue()


def export_skin_report_csv(path: str | os.PathLike[str], result: Result) -> Path:
    """The skin report (shell estimate against true vertex error per joint) as CSV."""
    if result.vertex_error is None:
        raise ValueError("the clip has no skinned mesh: there is no skin report")
    write_text(path, _csv_text(SKIN_REPORT_COLUMNS, skin_report_rows(result)))
    return Path(path)


def joint_csv_text(result: Result) -> str:
    """The per-joint CSV (codec.result_tables.joint_rows); NaN (a value that does not apply) is
    written as an empty cell."""
    return _csv_text(joint_columns(result), joint_rows(result))


def export_joint_csv(
    path: str | os.PathLike[str], result: Result, inputs: Sequence[object] = ()
) -> Path:
    """Per-joint CSV (floats written with full precision), whole or not at all; never over
    `inputs`."""
    refuse_inputs(path, inputs)
    write_text(path, joint_csv_text(result))
    return Path(path)


def export_lossy(
    path: str | os.PathLike[str],
    result: Result,
    source: str | os.PathLike[str] | None = None,
    inputs: Sequence[object] = (),
) -> LossyFile:
    """The decoded clip in the format the name asks for (`.acl.sjson`, `.bvh`, `.usda`,
    `.usdc`, `.usdz`); for `.glb` / `.gltf`, a copy of the `source` glTF with the clip's
    animation replaced by the lossy one (codec.formats.gltf_lossy); a USD `source` is copied
    the same way. Measured from the file's own values against the raw clip before it is
    written, and compressed again with tighter joints where the file's rounding would cross
    their precision (codec.lossy_export); its `summary()` says what was measured. Written
    whole or not at all (codec.formats.atomic); never over the `source` clip or `inputs`."""
    from codec.compression import compress
    from codec.lossy_export import Source, lossy_file

    refuse_inputs(path, [source, *inputs])
    read_as = result.clip.units  # a unit the user gave when opening is undone the same way
    units = read_as.unit if read_as is not None and read_as.chosen_by == "user" else None
    lossy = result.lossy

    def recompress(precision: np.ndarray) -> Clip:
        return compress(result.clip.with_skeleton_settings(precision), result.settings).lossy

    out = lossy_file(
        path,
        lossy,
        Source(source, lossy.name or None, units),
        reference=result.clip,
        recompress=recompress,
    )
    out.write()
    return out


def export_ssc(
    path: str | os.PathLike[str],
    result: Result,
    run: RunSettings,
    clip: Clip | None = None,
    inputs: Sequence[object] = (),
) -> Path:
    """The compressed file (.ssc) of the result, carrying the settings block that made it
    (`clip`: the clip as read, for the block's facts about it): what `python -m codec
    compress CLIP -o` writes for the same settings, byte for byte. Written whole or not at
    all; never over `inputs`."""
    refuse_inputs(path, inputs)
    if not str(path).lower().endswith(".ssc"):
        raise ValueError(f"{path}: a compressed clip is saved as .ssc")
    write_bytes(path, run.stamp(result.data, clip if clip is not None else result.clip))
    return Path(path)


def export_screenshot(
    path: str | os.PathLike[str], png: bytes, inputs: Sequence[object] = ()
) -> Path:
    """A PNG grabbed by a view (see app.scene.screenshot), whole or not at all; never over
    `inputs`."""
    refuse_inputs(path, inputs)
    if not png.startswith(b"\x89PNG\r\n\x1a\n"):
        raise ValueError("screenshot data is not a PNG image")
    write_bytes(path, png)
    return Path(path)
