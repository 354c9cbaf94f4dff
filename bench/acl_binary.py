"""ACL 2.1's own output read by Shellscope, checked against ACL's own numbers, clip by clip.

    .venv/bin/python bench/acl_binary.py [--peer PATH] [--shared] [--levels automatic,highest]
                                         [--json FILE]

For every ACL clip (tests/data/acl and tests/data/keyed; with --shared ../shared/data/acl)
and every CMU BVH clip (tests/data/bvh, written as ACL SJSON), at each level, ACL's
`acl_compressor` (--peer, default ../shared/tools/acl/acl_compressor) writes its compressed
tracks (`-out`) and its stats (`-stat_exhaustive`). Shellscope then reads the bytes
(codec.codecs.acl21), decodes them, and measures them with ACL's own measure
(codec.measure.acl_metric):

- per sample and joint: against ACL's `error_per_frame_and_bone` (its two-point measure
  without scale, or three with scale; its compressor's own samples, which ignore stripped
  keyframes: those are compared at the keyframes it stored), within 1e-4 cm or 1 %;
- `max_error`, `worst_track`, `worst_time` of the run: against ours, equal (to the bit);
- sub-track counts and the compressed size from the headers: against the stats.

The table lists each run; `ours` is Shellscope's own measure (three points, float64 affine)
of the same decoding. Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import lzma
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from codec.cli.report_text import table  # noqa: E402
from codec.codecs.acl21 import layout  # noqa: E402
from codec.codecs.acl21.codec import matched  # noqa: E402
from codec.codecs.acl21.decoder import AclDecoder  # noqa: E402
from codec.codecs.acl21.details import stats_details  # noqa: E402
from codec.formats import load_clip, sjson  # noqa: E402
from codec.formats.acl_sjson import write_acl_sjson  # noqa: E402
from codec.measure import acl_metric  # noqa: E402
from codec.measure.error_metric import clip_errors  # noqa: E402
from codec.model.clip import Clip  # noqa: E402

PEERS = [up / "shared" / "tools" / "acl" / "acl_compressor" for up in REPO.parents[:2]]
PEER = next((p for p in PEERS if p.is_file()), None)
SHARED = next((up / "shared" / "data" for up in REPO.parents[:2] if (up / "shared").is_dir()), None)
DATA = REPO / "tests" / "data"
TOLERANCE = 1e-4  # cm, or
RELATIVE = 0.01  # of ACL's value
KINDS = ("default", "constant", "animated")
SUBS = ("rotation", "translation", "scale")


def sources(shared: bool) -> list[Path]:
    """Every ACL clip and CMU BVH clip to check (ACL's scalar track lists and its commented
    format reference are not clips acl_compressor compresses)."""
    acl = (SHARED / "acl") if shared and SHARED else DATA / "acl"
    found = sorted(acl.glob("*.acl.sjson*")) + sorted((DATA / "keyed").glob("*.acl.sjson*"))
    found = [p for p in found if not p.name.startswith(("track_list", "format_reference"))]
    bvh = (SHARED / "bvh") if shared and SHARED else DATA / "bvh"
    return found + sorted(bvh.glob("cmu_*.bvh*"))


def as_acl_sjson(path: Path, work: Path) -> tuple[Path, Clip]:
    """An ACL SJSON file acl_compressor reads for `path`, and the clip Shellscope reads."""
    clip = load_clip(path)
    name = path.name.removesuffix(".xz")
    target = work / (name.split(".")[0] + ".acl.sjson")
    if name.endswith(".acl.sjson"):
        data = lzma.decompress(path.read_bytes()) if path.suffix == ".xz" else path.read_bytes()
        target.write_bytes(data)
    else:  # a BVH clip, in centimetres, as ACL's clip form
        write_acl_sjson(clip, target)
        clip = load_clip(target)
    return target, clip


def run_acl(peer: Path, source: Path, level: str, work: Path) -> tuple[bytes, dict, float]:
    out, stats = work / "out.acl", work / "stats.sjson"
    args = [str(peer), f"-acl={source}", f"-out={out}", f"-stats={stats}", "-stat_exhaustive"]
    if level != "automatic":
        args.append(f"-level={level}")
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, timeout=1800)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"acl_compressor failed: {done.stdout.strip()[-200:]}")
    run = sjson.parse(stats.read_text(), stats)["runs"][0]
    return out.read_bytes(), dict(run), seconds


def check(clip: Clip, data: bytes, run: dict) -> dict:
    """One run's checks: ours against ACL's."""
    full = layout.read(data)
    tracks = matched(full, clip.skeleton)
    decoder = AclDecoder(tracks, clip.skeleton)  # ACL's stored default values
    sk = clip.skeleton
    rot = acl_metric.normalize_deterministic(clip.rotations)  # as ACL read the clip form
    raw = np.concatenate((rot, clip.translations, clip.scales), axis=-1)
    # per sample and joint, at the keyframes ACL's compressor kept
    grid = decoder.grid()
    times = acl_metric.sample_times(clip.num_samples, clip.sample_rate)[: len(grid)]
    scale = bool(run["has_scale"])
    ours = acl_metric.acl_errors(
        acl_metric.raw_samples(raw, clip.sample_rate, times, "nearest"),
        grid,
        sk.parents,
        sk.shell_distance,
        scale=scale,
        points=3 if scale else 2,
    )
    theirs = np.concatenate(
        [np.asarray(s["error_per_frame_and_bone"], float) for s in run["segments"]]
    ).reshape(-1, clip.num_joints)[: len(grid)]
    kept = tracks.retained[: len(theirs)]
    diff = np.abs(ours[: len(theirs)] - theirs)[kept]
    rel = diff / np.maximum(theirs[: len(kept)][kept], 1e-30)
    within = (diff <= TOLERANCE) | (rel <= RELATIVE)
    # the run's max_error / worst_track / worst_time, ACL's measure of our decoding
    error, joint, when = acl_metric.acl_max_error(
        raw, decoder.poses_at, clip.sample_rate, sk.parents, sk.shell_distance, full.has_stripped
    )
    d = stats_details(full)
    counts_ok = all(
        d[f"num_{k}_{s}_tracks"] == run[f"num_{k}_{s}_tracks"] for k in KINDS for s in SUBS
    )
    own = clip_errors(clip, decoder.decode_source(clip.name))
    return {
        "samples": int(clip.num_samples),
        "joints": int(clip.num_joints),
        "stripped": int(full.num_samples - full.retained.sum()),
        "looping": bool(full.wrap),
        "per_sample_max_diff": float(diff.max()),
        "per_sample_within": bool(within.all()),
        "per_sample_outside": int((~within).sum()),
        "max_error": error,
        "acl_max_error": float(run["max_error"]),
        "worst": sk.names[joint],
        "worst_equal": joint == run["worst_track"],
        "time": when,
        "time_equal": when == float(run["worst_time"]),
        "max_equal": error == float(run["max_error"]),
        "counts_equal": counts_ok,
        "size": int(full.size),
        "size_equal": full.size == run["compressed_size"],
        "tracks_size": int(d["acl_compressed_size"]),
        "ours_max_error": float(own.max()),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--peer", default=str(PEER) if PEER else None, help="acl_compressor")
    p.add_argument("--shared", action="store_true", help="the ACL clips of ../shared/data")
    p.add_argument("--levels", default="automatic,highest", help="ACL levels, comma-separated")
    p.add_argument("--json", metavar="FILE", help="every number as JSON")
    args = p.parse_args(argv)
    if not args.peer or not Path(args.peer).is_file():
        print("no acl_compressor: give --peer PATH (see ../shared/tools/acl/README.md)")
        return 2
    levels = args.levels.split(",")
    rows, report, failed = [], {}, 0
    for path in sources(args.shared):
        for level in levels:
            with tempfile.TemporaryDirectory(prefix="shellscope-acl-bench-") as tmp:
                work = Path(tmp)
                source, clip = as_acl_sjson(path, work)
                data, run, _ = run_acl(Path(args.peer), source, level, work)
                r = check(clip, data, run)
            name = path.name.split(".")[0]
            report[f"{name}@{level}"] = r
            ok = all(r[k] for k in ("per_sample_within", "max_equal", "worst_equal"))
            ok = ok and all(r[k] for k in ("time_equal", "counts_equal", "size_equal"))
            failed += not ok
            rows.append(
                [
                    name,
                    level,
                    f"{r['samples']}x{r['joints']}",
                    f"{r['stripped']}" + (" L" if r["looping"] else ""),
                    f"{r['per_sample_max_diff']:.1e}" + ("" if r["per_sample_within"] else " !"),
                    f"{r['max_error']:.7f}",
                    f"{r['acl_max_error']:.7f}",
                    "=" if r["max_equal"] else f"{r['max_error'] - r['acl_max_error']:+.1e}",
                    r["worst"] + ("" if r["worst_equal"] else " !"),
                    f"{r['time']:.4f}" + ("" if r["time_equal"] else " !"),
                    "=" if r["counts_equal"] else "!",
                    f"{r['size']:,}" + ("" if r["size_equal"] else " !"),
                    f"{r['tracks_size']:,}",
                    f"{r['ours_max_error']:.6f}",
                ]
            )
    head = [
        "clip",
        "level",
        "SxJ",
        "stripped",
        "per-sample diff",
        "max error",
        "ACL's",
        "",
        "worst joint",
        "worst t",
        "counts",
        "size",
        "tracks",
        "ours (3 pts)",
    ]
    print(table([head, *rows], right=(2, 3, 4, 5, 6, 9, 11, 12, 13)))
    print(
        f"{len(rows) - failed} of {len(rows)} runs agree with ACL's stats "
        f"(per sample within {TOLERANCE:g} cm or {RELATIVE:.0%}; max error, worst joint and "
        "time equal; sub-track counts and size equal)"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
