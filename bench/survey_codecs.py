"""The survey's codecs against acl-style and ACL 2.1, clip by clip, in one run.

    .venv/bin/python bench/survey_codecs.py [--peer PATH] [--hard] [--json OUT] [CLIP ...]

Per clip and codec (subsample, keyreduce, curve, wavelet, and today's acl-style through
`codec.compress`): the size at strict error (precision 0.01, shell distance 3, ACL's
defaults), whether every joint is within its precision at every sample (decoded from the
bytes, float64), the compression time, the time to build a decoder from the bytes and the
time to sample one pose (median over SAMPLE_COUNT random times, rounding none). `best` is
the smallest strict size of all five (what `--codec auto` would keep), and its ratio to
ACL's. ACL 2.1's own `acl_compressor` runs on every clip in the same run with `--peer` (by
default the one in ../shared/tools/acl when it is there). Clips: ACL's eight reference clips
and the keyed clips of tests/data/keyed (tools/make_keyed_clips.py), plus the hard clips
with `--hard`, or the files named.

Sizes: a survey codec's size is its payload; acl-style's is today's whole .ssc
(`compressed_size`), as codec_vs_acl.py reports it.
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

from codec.cli.report_text import table  # noqa: E402
from codec.codecs import container, registry  # noqa: E402

DATA = REPO / "tests" / "data"
SAMPLE_COUNT = 200
# our codecs (acl-2.1 is ACL itself: the survey's peer column, not one of them)
CODECS = tuple(c for c in registry.chosen(registry.AUTO) if c.name != registry.DEFAULT)
NAMES = ("acl-style", *(c.name for c in CODECS))
TARGETS = {"linear": 0.9, "catmull_rom": 0.6}  # best / ACL on keyed clips (issue 21)


def _vs_acl():
    """bench/codec_vs_acl.py, for its clip list and its way of running ACL."""
    spec = importlib.util.spec_from_file_location(
        "codec_vs_acl", REPO / "bench" / "codec_vs_acl.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["codec_vs_acl"] = module
    spec.loader.exec_module(module)
    return module


def _sample_time(decoder: Any, rng: np.random.Generator) -> float:
    times = []
    for t in rng.uniform(0.0, decoder.duration, SAMPLE_COUNT):
        t0 = time.perf_counter()
        decoder.sample(float(t), "none")
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def measure(clip: Any, rng: np.random.Generator) -> dict[str, dict[str, Any]]:
    """Every codec's numbers on one clip."""
    from codec.compression import compress
    from codec.settings import CompressionSettings

    settings = CompressionSettings(precision=0.01, shell_distance=3.0, skin_error=False)
    out: dict[str, dict[str, Any]] = {}
    t0 = time.perf_counter()
    r = compress(clip, settings)
    elapsed = time.perf_counter() - t0
    out["acl-style"] = {
        "size": int(r.stats["compressed_size"]),
        "strict": bool(r.stats["precision_met"]),
        "max_error": float(r.stats["max_error"]),
        "compress_s": elapsed,
        "decoder_s": None,  # its decoder is built inside compress
        "sample_s": _sample_time(r.decoder, rng),
    }
    for c in CODECS:
        t0 = time.perf_counter()
        enc = c.encode(clip, settings)
        elapsed = time.perf_counter() - t0
        t1 = time.perf_counter()
        decoder = c.decode(enc.payload, clip.skeleton)
        build = time.perf_counter() - t1
        out[c.name] = {
            "size": container.HEADER_SIZE + len(enc.payload),  # as compressed_size counts
            "strict": bool(enc.details["strict"]),
            "max_error": float(enc.details["max_error"]),
            "compress_s": elapsed,
            "decoder_s": build,
            "sample_s": _sample_time(decoder, rng),
            "details": {k: v for k, v in enc.details.items() if not isinstance(v, list)},
        }
    return out


def run(specs: list[Any], peer: Path | None, say=print) -> dict[str, Any]:
    from codec.formats import load_clip

    vs = _vs_acl()
    rng = np.random.default_rng(1234)
    report: dict[str, Any] = {"clips": {}, "peer": str(peer or "")}
    with tempfile.TemporaryDirectory(prefix="shellscope-survey-") as tmp:
        for spec in specs:
            say(f"survey: {spec.name}")
            kwargs = {"animation": spec.animation} if spec.animation else {}
            clip = load_clip(spec.path, **kwargs)
            row: dict[str, Any] = {"codecs": measure(clip, rng), "samples": clip.num_samples}
            if peer is not None:
                row["acl"] = vs.run_peer(peer, clip, spec, 1, Path(tmp))["acl_compressed_size"]
            strict = {n: v["size"] for n, v in row["codecs"].items() if v["strict"]}
            row["best"] = min(strict, key=strict.get) if strict else None
            report["clips"][spec.name] = row
    return report


def format_report(report: dict[str, Any]) -> str:
    clips = report["clips"]
    head = ["clip", "S", *NAMES, "best", "ACL 2.1", "best/ACL", "acl-style/ACL"]
    rows = [head]
    totals = {n: 0 for n in (*NAMES, "best", "acl")}
    all_strict = {n: True for n in NAMES}
    for name, row in clips.items():
        cells = [name, str(row["samples"])]
        for n in NAMES:
            v = row["codecs"][n]
            cells.append(f"{v['size']:,}" + ("" if v["strict"] else " (not strict)"))
            totals[n] += v["size"]
            all_strict[n] &= v["strict"]
        best = row["best"]
        best_size = row["codecs"][best]["size"] if best else 0
        totals["best"] += best_size
        cells.append(f"{best} {best_size:,}" if best else "none")
        acl = row.get("acl")
        if acl:
            totals["acl"] += acl
            cells += [
                f"{acl:,}",
                f"{best_size / acl:.3f}x",
                f"{row['codecs']['acl-style']['size'] / acl:.3f}x",
            ]
        else:
            cells += ["", "", ""]
        rows.append(cells)
    total = ["total", ""]
    for n in NAMES:
        total.append(f"{totals[n]:,}" + ("" if all_strict[n] else " (not all strict)"))
    total.append(f"{totals['best']:,}")
    if totals["acl"]:
        total += [
            f"{totals['acl']:,}",
            f"{totals['best'] / totals['acl']:.3f}x",
            f"{totals['acl-style'] / totals['acl']:.3f}x",
        ]
    else:
        total += ["", "", ""]
    rows.append(total)
    out = ["Size at strict error, bytes (precision 0.01, shell 3; best = smallest strict)", ""]
    out.append(table(rows, right=range(1, len(head))))
    trows = [["clip", *(f"{n} compress / decoder / sample" for n in NAMES)]]
    for name, row in clips.items():
        trows.append(
            [name]
            + [
                f"{v['compress_s']:.2f} s / "
                + ("-" if v["decoder_s"] is None else f"{v['decoder_s'] * 1e3:.1f} ms")
                + f" / {v['sample_s'] * 1e6:.0f} us"
                for v in (row["codecs"][n] for n in NAMES)
            ]
        )
    out += ["Times: compression (s), decoder from bytes (ms), one pose (us, median)", ""]
    out.append(table(trows, right=range(1, len(NAMES) + 1)))
    checks = []
    for name, row in clips.items():
        kind = next((k for k in TARGETS if name.endswith(k)), None)
        if kind and row.get("acl") and row["best"]:
            ratio = row["codecs"][row["best"]]["size"] / row["acl"]
            checks.append(
                f"{name}: best {ratio:.3f}x ACL (target <= {TARGETS[kind]}x) "
                + ("met" if ratio <= TARGETS[kind] else "MISSED")
            )
    if checks:
        out += ["Keyed-clip targets (issue 21)", "", *checks, ""]
    return "\n".join(out)


def default_specs(hard: bool) -> list[Any]:
    vs = _vs_acl()
    specs = [vs._find(n, [DATA]) for n in vs.REFERENCE_CLIPS]
    specs += vs.clips_from([str(p) for p in sorted((DATA / "keyed").glob("*.acl.sjson.xz"))])
    if hard:
        specs += [vs._find(n, [DATA]) for n in vs.HARD_CLIPS]
    return specs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clips", nargs="*", help="clip files (FILE or FILE:ANIMATION)")
    parser.add_argument("--peer", type=Path, help="ACL's acl_compressor (default: ../shared's)")
    parser.add_argument("--no-peer", action="store_true", help="do not run ACL")
    parser.add_argument("--hard", action="store_true", help="add the hard clips")
    parser.add_argument("--json", type=Path, help="write the report as JSON here")
    args = parser.parse_args(argv)
    peer = args.peer
    if peer is None and not args.no_peer:
        found = [p / "shared/tools/acl/acl_compressor" for p in REPO.parents]
        peer = next((p for p in found if p.is_file()), None)
    specs = _vs_acl().clips_from(args.clips) if args.clips else default_specs(args.hard)
    report = run(specs, peer, say=lambda m: print(m, file=sys.stderr, flush=True))
    print(format_report(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
