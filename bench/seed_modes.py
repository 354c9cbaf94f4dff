"""Bind pose modes and error compensation (seeds 003 and 001) on the bench's clips, beside
ACL 2.1's own bind modes, in one run.

    .venv/bin/python bench/seed_modes.py [--peer PATH] [--json OUT] [CLIP ...]

Per clip: acl-style's compressed size under `--bind strip | none | additive | best`, whether
each is strict (every joint within 0.01 cm at every sample, our measure), its compress time;
in-place error compensation of best's mode run until strict (its size against best's, at the
same strict bound: codec.codecs.acl_style.bind_modes.compensated); and
acl_compressor's size under its default (bind pose stripping), `-bind_rel`, `-bind_add0` and
`-bind_add1`, with ACL's own max error (its measure; ACL does not promise a bound). Sizes are
exact; times are this run's, on a shared machine: compare them only within one run.
acl_compressor is a measuring instrument: without it (`--peer`, else
$SHELLSCOPE_ACL_COMPRESSOR, else ../shared/tools/acl/acl_compressor) its columns are empty.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.codec_vs_acl import (
    HARD_CLIPS,
    PRECISION,
    REFERENCE_CLIPS,
    SHELL_DISTANCE,
    BenchClip,
    _find,
    _Peer,
    _sjson_number,
    clips_from,
)
from codec.cli.report_text import table

REPO = Path(__file__).resolve().parents[1]
RIG_CLIPS = ("cmu_02_03_run_ccrig", "makehuman_face_poseunits")  # the CC rig, the face rig
EXTRA_CLIPS = ("additive_relative_chain",)  # an additive clip with its base (ACL reads both)
OURS = ("strip", "none", "additive", "best")
ACL_MODES = {"strip": (), "rel": ("-bind_rel",), "add0": ("-bind_add0",), "add1": ("-bind_add1",)}


def bench_clips() -> list[BenchClip]:
    names = (*REFERENCE_CLIPS, *HARD_CLIPS, *RIG_CLIPS, *EXTRA_CLIPS)
    return [_find(n, [REPO / "tests" / "data"]) for n in names]


def peer_path(given: str | None) -> str | None:
    import os

    from codec.codecs import acl_compressor_path

    for path in (given, os.environ.get("SHELLSCOPE_ACL_COMPRESSOR"),
                 str(REPO.parent / "shared" / "tools" / "acl" / "acl_compressor")):  # fmt: skip
        if path and acl_compressor_path.problem(path) is None:
            return path
    return None


def ours(clip: Any, bind: str, compensate: bool = False) -> dict[str, Any]:
    import codec
    from codec.settings import CompressionSettings

    settings = CompressionSettings(
        bind=bind, compensate=compensate, supersample=0, skin_error=False,
        precision=PRECISION, shell_distance=SHELL_DISTANCE,
    )  # fmt: skip
    start = time.perf_counter()
    result = codec.compress(clip, settings)
    seconds = time.perf_counter() - start
    s = result.measurements.stats
    return {
        "size": int(s["compressed_size"]),
        "max_error": float(s["max_error"]),
        "strict": bool(s["max_error"] <= PRECISION),
        "time": seconds,
        "chosen": result.details.get("bind_mode"),
        "compensation": result.details.get("error_compensation"),
    }


def ours_compensated(clip: Any, mode: str) -> dict[str, Any]:
    """In-place compensation of `mode`, run to strictness (no early stop): its size, its
    max error measured on the decoded clip, its time."""
    from codec.codecs.acl_style.bind_modes import compensated
    from codec.codecs.container import HEADER_SIZE
    from codec.measure.error_metric import clip_errors
    from codec.settings import CompressionSettings

    settings = CompressionSettings(supersample=0, skin_error=False)
    start = time.perf_counter()
    encoded, strict = compensated(clip, settings, mode)
    seconds = time.perf_counter() - start
    error = float(clip_errors(clip, encoded.decoder.decode_source()).max())
    return {
        "size": HEADER_SIZE + len(encoded.payload),
        "max_error": error,
        "strict": bool(strict and error <= PRECISION),
        "time": seconds,
    }


def acl(source: Path, peer: str, extra: tuple[str, ...], work: Path) -> dict[str, Any]:
    """One acl_compressor run on an SJSON clip (as bench/codec_vs_acl.py gives it)."""
    stats = work / "stats.sjson"
    stats.unlink(missing_ok=True)
    done = subprocess.run(
        [peer, f"-acl={source}", f"-stats={stats}", *extra],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if done.returncode != 0 or not stats.is_file():
        return {"error": (done.stderr or done.stdout or "no output").strip()[-60:]}
    text = stats.read_text(encoding="utf-8")
    return {k: _sjson_number(text, k) for k in ("compressed_size", "compression_time", "max_error")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clips", nargs="*", help="FILE or FILE:ANIMATION (default: the bench's)")
    ap.add_argument("--peer", help="acl_compressor")
    ap.add_argument("--json", help="write every number here")
    args = ap.parse_args(argv)
    from codec.formats import load_clip
    from codec.warm_up import warm_up

    warm_up()
    clips = clips_from(args.clips) if args.clips else bench_clips()
    peer = peer_path(args.peer)
    rows: dict[str, dict[str, Any]] = {}
    work = Path(tempfile.mkdtemp(prefix="seed-modes-"))
    for bc in clips:
        clip = load_clip(bc.path, animation=bc.animation) if bc.animation else load_clip(bc.path)
        clip = clip.with_skeleton_settings(PRECISION, SHELL_DISTANCE)
        row: dict[str, Any] = {m: ours(clip, m) for m in OURS}
        row["compensated"] = ours_compensated(clip, row["best"]["chosen"])
        if peer is not None:
            source = _Peer(Path(peer), clip, bc, work).src
            row["acl"] = {m: acl(source, peer, extra, work) for m, extra in ACL_MODES.items()}
        rows[bc.name] = row
        print(f"{bc.name}: " + ", ".join(f"{m} {row[m]['size']}" for m in OURS), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    print()
    print(render(rows))
    return 0


def _cell(r: dict[str, Any]) -> str:
    if "error" in r:
        return "failed"
    if "compressed_size" in r:  # ACL's: * where its own measure is over the precision
        mark = "" if r["max_error"] <= PRECISION else "*"
        return f"{int(r['compressed_size']):,}{mark}"
    return f"{r['size']:,}" + ("" if r["strict"] else "*")


def render(rows: dict[str, dict[str, Any]]) -> str:
    """The table: sizes (B; * over 0.01 cm by that codec's measure), the mode best kept,
    compensation's size and change, times (s, this run: our whole compress of strip and of
    best, ACL's own compression_time of its default), ACL's sizes per mode."""
    head = ["clip", *OURS, "best is", "compensated", "vs best", "t strip", "t best",
            "ACL strip", "ACL rel", "ACL add0", "ACL add1", "t ACL"]  # fmt: skip
    body = []
    totals = dict.fromkeys(OURS, 0)
    for name, row in rows.items():
        comp = row["compensated"]
        plain = row["best"]["size"]
        change = f"{100.0 * (comp['size'] - plain) / plain:+.1f}%"
        comp_cell = _cell(comp)
        acl_cells = [_cell(row["acl"][m]) if "acl" in row else "" for m in ACL_MODES]
        t_acl = row.get("acl", {}).get("strip", {}).get("compression_time")
        acl_cells.append(f"{t_acl:.3f}" if t_acl is not None else "")
        body.append([name, *(_cell(row[m]) for m in OURS), row["best"]["chosen"], comp_cell,
                     change, f"{row['strip']['time']:.2f}", f"{row['best']['time']:.2f}",
                     *acl_cells])  # fmt: skip
        for m in OURS:
            totals[m] += row[m]["size"]
    body.append(["total", *(f"{totals[m]:,}" for m in OURS), *[""] * (len(head) - 5)])
    return table([head, *body], right=range(1, len(head)))


if __name__ == "__main__":
    raise SystemExit(main())
