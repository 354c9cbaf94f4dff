"""Keyed clips of every kind against ACL 2.1: what `auto` keeps, how small, how strict, in one run.

    .venv/bin/python bench/keyed_codecs.py [--peer PATH] [--shared] [--kinds K,...]
                                           [--sources NAME:SPACING,...] [--json OUT]

Hand-keyed clips are made from the reference mocap by every generator of
tools/make_keyed_clips.py (linear, stepped, Catmull-Rom, Bezier with flat / auto / clamped
tangents), each with its keys at a regular spacing (per source clip, SOURCES) and at
irregular frames (gaps of 2 to 12 samples, a seeded draw per source). Each clip is compressed
by `auto` (every codec; the smallest strict encoding wins) at 0.01 cm on 3 cm shells, and by
ACL 2.1's own `acl_compressor` on the same clip written as ACL SJSON, in the same run (--peer,
default ../shared/tools/acl/acl_compressor when there). Per clip: the codec auto kept, its
size, ACL's, the ratio, whether every joint is within its precision at every sample (the
bytes decoded again, measured in float64), and the compression times of auto, of each codec
named in TIMED and of ACL. The target (issue 33): auto <= 0.5x ACL and strict on every clip.

Source clips come from tests/data (--shared: ../shared/data first).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import codec  # noqa: E402
from codec.cli.report_text import table  # noqa: E402
from codec.compression import compress  # noqa: E402
from codec.measure.error_metric import clip_errors  # noqa: E402
from codec.settings import CompressionSettings  # noqa: E402

# (source clip, its regular key spacing): three mocap takes, spacings across 2-12 samples
SOURCES = (("cmu_13_07", 3), ("cmu_49_15", 6), ("cmu_81_18_looping", 12))
TIMED = ("curve", "keyreduce", "acl-style")  # codecs whose own compression time is shown
TARGET = 0.5  # auto / ACL, every clip
SETTINGS = CompressionSettings(precision=0.01, shell_distance=3.0, skin_error=False, codec="auto")


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


MAKE = _load("make_keyed_clips", REPO / "tools" / "make_keyed_clips.py")
VS = _load("codec_vs_acl", REPO / "bench" / "codec_vs_acl.py")


def source_clip(name: str, shared: bool) -> Any:
    """A source clip by name, from ../shared/data (with `shared`) or tests/data."""
    folders = [REPO / "tests" / "data"]
    if shared:
        folders = [p / "shared" / "data" for p in REPO.parents if (p / "shared").is_dir()][:1]
        folders.append(REPO / "tests" / "data")
    clip = codec.load_clip(VS._find(name, folders).path)
    clip.name = name
    return clip


def keyed_clips(sources: list[tuple[str, int]], kinds: list[str], shared: bool):
    """(label, kind, spacing label, clip) for every source, kind and spacing."""
    for n, (name, spacing) in enumerate(sources):
        src = source_clip(name, shared)
        spacings = (
            (f"every {spacing}", MAKE.key_indices(src.num_samples, spacing)),
            ("irregular 2-12", MAKE.irregular_keys(src.num_samples, seed=33 + n)),
        )
        for kind in kinds:
            for label, keys in spacings:
                tag = label.replace(" ", "_")
                clip = MAKE.keyed_at(src, keys, kind, f"{name}_{kind}_{tag}")
                yield name, kind, label, len(keys), clip


def strict_from_bytes(result: Any) -> tuple[bool, float]:
    """Every joint within its precision at every sample, the bytes decoded again (float64)."""
    decoded = codec.decode(result.data).decode_source()
    err = clip_errors(result.clip, decoded).max(axis=0)
    return bool(np.all(err <= result.clip.skeleton.precision)), float(err.max())


def run_one(clip: Any, peer: Path | None, work: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    result = compress(clip, SETTINGS)
    seconds = time.perf_counter() - t0
    strict, err = strict_from_bytes(result)
    auto = result.stats["auto"]
    row: dict[str, Any] = {
        "chosen": auto["chosen"],
        "size": int(result.stats["compressed_size"]),
        "strict": strict,
        "max_error": err,
        "time": seconds,
        "codecs": auto["codecs"],
    }
    if peer is not None:
        spec = VS.BenchClip(clip.name, work / clip.name)  # not SJSON: written as such
        acl = VS.run_peer(peer, clip, spec, 1, work)
        row["acl"] = acl["acl_compressed_size"]
        row["acl_time"] = acl["acl_compression_time_s_median"]
    return row


def run(args: argparse.Namespace, say=print) -> dict[str, Any]:
    report: dict[str, Any] = {"clips": [], "peer": str(args.peer or "")}
    with tempfile.TemporaryDirectory(prefix="shellscope-keyed-") as tmp:
        for source, kind, spacing, keys, clip in keyed_clips(args.sources, args.kinds, args.shared):
            say(f"keyed: {clip.name}")
            row = run_one(clip, args.peer, Path(tmp))
            row.update(source=source, kind=kind, spacing=spacing, keys=keys, S=clip.num_samples)
            report["clips"].append(row)
    return report


def format_report(report: dict[str, Any]) -> str:
    head = ["source", "kind", "keys", "auto", "auto B", "ACL B", "auto/ACL", "strict"]
    head += [f"{n} B" for n in TIMED if n != "acl-style"]
    head += ["auto s", *(f"{n} s" for n in TIMED), "ACL s"]
    rows = [head]
    failed = []
    for r in report["clips"]:
        ratio = r["size"] / r["acl"] if r.get("acl") else None
        if ratio is None or ratio > TARGET or not r["strict"]:
            failed.append(f"{r['source']} {r['kind']} {r['spacing']}")
        codecs = r["codecs"]
        rows.append(
            [
                r["source"],
                r["kind"],
                f"{r['spacing']} ({r['keys']}/{r['S']})",
                r["chosen"],
                f"{r['size']:,}",
                f"{r['acl']:,}" if r.get("acl") else "-",
                f"{ratio:.3f}" if ratio is not None else "-",
                "yes" if r["strict"] else f"NO {r['max_error']:.5f}",
                *(
                    f"{codecs[n]['compressed_size']:,}" if n in codecs else "-"
                    for n in TIMED
                    if n != "acl-style"
                ),
                f"{r['time']:.2f}",
                *(f"{codecs[n]['compression_time']:.2f}" if n in codecs else "-" for n in TIMED),
                f"{r['acl_time']:.2f}" if r.get("acl") else "-",
            ]
        )
    out = [
        "precision 0.01 cm, shell distance 3 cm, level automatic; auto = the smallest strict "
        "of every codec; strict: decoded from the bytes, float64",
        table(rows, right=range(4, len(head))),
    ]
    by_kind: dict[str, list[float]] = {}
    for r in report["clips"]:
        if r.get("acl"):
            by_kind.setdefault(f"{r['kind']} {r['spacing'].split()[0]}", []).append(
                r["size"] / r["acl"]
            )
    summary = [["kind", "spacing", "auto/ACL min", "max"]]
    for key, ratios in by_kind.items():
        kind, spacing = key.split()
        summary.append([kind, spacing, f"{min(ratios):.3f}", f"{max(ratios):.3f}"])
    out += ["auto / ACL per kind of keyed clip", table(summary, right=(2, 3))]
    if not report["peer"]:
        out.append("no ACL compressor (--peer): sizes not compared")
    else:
        verdict = "PASS" if not failed else f"FAIL ({'; '.join(failed)})"
        out.append(f"target: auto <= {TARGET}x ACL and strict on every clip: {verdict}")
    return "\n".join(out)


def _peer() -> Path | None:
    """ACL's acl_compressor in ../shared beside the checkout, when it is there."""
    found = [p / "shared" / "tools" / "acl" / "acl_compressor" for p in REPO.parents]
    return next((p for p in found if p.is_file()), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", type=Path, default=_peer(), help="ACL's acl_compressor")
    parser.add_argument("--no-peer", action="store_true", help="do not run ACL")
    parser.add_argument("--shared", action="store_true", help="source clips from ../shared/data")
    parser.add_argument(
        "--kinds", type=lambda s: s.split(","), default=list(MAKE.KINDS), help="generators"
    )
    parser.add_argument(
        "--sources",
        type=lambda s: [(n, int(k)) for n, k in (p.split(":") for p in s.split(","))],
        default=list(SOURCES),
        help="NAME:SPACING,... source clips and their regular spacing",
    )
    parser.add_argument("--json", type=Path, help="write the report as JSON here")
    args = parser.parse_args(argv)
    if args.no_peer:
        args.peer = None
    report = run(args, say=lambda m: print(m, file=sys.stderr, flush=True))
    print(format_report(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    ok = report["peer"] and "PASS" in format_report(report).splitlines()[-1]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
