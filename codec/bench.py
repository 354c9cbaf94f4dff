"""`python -m codec bench`: our codec against ACL's reference numbers on the shared clips.

Per clip of `acl_reference.json`: our compressed size and ACL's (level automatic), their
ratio, both max errors, our compression time (median of `repeat` runs), decode_all time and
single-pose sample time (medians of many runs); then totals, peak RSS and the issue's targets
with PASS / FAIL. Timings are single-threaded, in this process.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from codec.errors import ShellscopeError

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REFERENCE = REPO.parent / "shared" / "reference" / "acl_reference.json"
DEFAULT_CLIPS = REPO.parent / "shared" / "data" / "acl"
PRECISION, SHELL_DISTANCE = 0.01, 3.0  # ACL's defaults, as in the reference runs

TARGET_CLIP = "cmu_13_07.acl.sjson"
TARGET_COMPRESS_S = 2.0
TARGET_DECODE_ALL_S = 0.050
TARGET_SAMPLE_S = 0.0003
TARGET_RSS_MB = 500.0
TARGET_TOTAL_RATIO = 1.05
TARGET_CLIP_RATIO = 1.15

DECODE_BUDGET_S = 0.5  # time spent measuring decode_all per clip (at least 5 runs)
SAMPLE_COUNT = 1000  # random times measured for sample(t)


class BenchError(ShellscopeError):
    """The reference file or a clip of it cannot be found or read."""


def _median_time(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MB (ru_maxrss: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024


def bench_clip(path: Path, repeat: int, rng: np.random.Generator) -> dict[str, Any]:
    """Our numbers for one clip at the default settings (level automatic)."""
    from codec.compressor import compress
    from codec.formats import load_clip
    from codec.settings import CompressionSettings

    clip = load_clip(path)
    settings = CompressionSettings(precision=PRECISION, shell_distance=SHELL_DISTANCE)
    times, cpu, result = [], [], None
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        result = compress(clip, settings)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    assert result is not None
    s = result.stats
    cc = result.compressed
    cc.decode_all()  # warm up
    t0 = time.perf_counter()
    cc.decode_all()
    once = max(time.perf_counter() - t0, 1e-6)
    decode_s = _median_time(cc.decode_all, int(min(200, max(5, DECODE_BUDGET_S / once))))
    sample_times = np.empty(SAMPLE_COUNT)
    for i, t in enumerate(rng.uniform(0.0, cc.duration, SAMPLE_COUNT)):
        t0 = time.perf_counter()
        cc.sample(float(t), "none")
        sample_times[i] = time.perf_counter() - t0
    return {
        "num_bones": s["num_bones"],
        "num_samples": s["num_samples"],
        "level": s["level"],
        "compressed_size": s["compressed_size"],
        "max_error": s["max_error"],
        "precision_met": s["precision_met"],
        "num_segments": s["num_segments"],
        "compression_time_s_median": float(np.median(times)),
        "compression_cpu_s_median": float(np.median(cpu)),
        "decode_all_s_median": decode_s,
        "sample_s_median": float(np.median(sample_times)),
    }


def run(
    clips_dir: str | Path | None = None,
    reference: str | Path | None = None,
    repeat: int = 3,
    progress: Callable[[str], object] | None = None,
) -> dict[str, Any]:
    """Benchmark every clip of the reference file; returns the report (JSON-ready dict).

    Raises BenchError when the reference or a clip is missing, ClipFormatError when a clip
    cannot be read.
    """
    ref_path = Path(reference) if reference else DEFAULT_REFERENCE
    clip_dir = Path(clips_dir) if clips_dir else DEFAULT_CLIPS
    try:
        ref = json.loads(ref_path.read_text(encoding="utf-8"))["clips"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise BenchError(f"{ref_path}: cannot read the ACL reference ({e})") from None
    if not clip_dir.is_dir():
        raise BenchError(f"{clip_dir}: no such folder of ACL clips (use --clips DIR)")
    rng = np.random.default_rng(1234)
    clips: dict[str, dict[str, Any]] = {}
    for name, levels in ref.items():
        path = clip_dir / name
        if not path.is_file():
            raise BenchError(f"{path}: clip of the ACL reference is missing (use --clips DIR)")
        if progress:
            progress(f"bench: {name}")
        ours = bench_clip(path, repeat, rng)
        acl = levels["automatic"]
        ours["acl_compressed_size"] = acl["compressed_size"]
        ours["acl_max_error"] = acl["max_error"]
        ours["acl_compression_time_s_median"] = acl["compression_time_s_median"]
        ours["size_ratio"] = ours["compressed_size"] / acl["compressed_size"]
        clips[name] = ours
    total = sum(c["compressed_size"] for c in clips.values())
    acl_total = sum(c["acl_compressed_size"] for c in clips.values())
    rss = peak_rss_mb()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    target = clips.get(TARGET_CLIP)
    targets = []

    def check(label: str, value: float | None, limit: float, unit: str, scale: float = 1) -> None:
        ok = value is not None and value <= limit
        targets.append(
            {
                "target": label,
                "value": value,
                "limit": limit,
                "unit": unit,
                "scale": scale,
                "pass": bool(ok),
            }
        )

    worst_size = max(clips.values(), key=lambda c: c["size_ratio"])
    worst_err = max(clips.values(), key=lambda c: c["max_error"])
    check("total size / ACL total", total / acl_total, TARGET_TOTAL_RATIO, "x")
    check("largest clip size / ACL", worst_size["size_ratio"], TARGET_CLIP_RATIO, "x")
    check(
        f"compress {TARGET_CLIP} (automatic)",
        target and target["compression_time_s_median"],
        TARGET_COMPRESS_S,
        "ms",
        1e3,
    )
    check(
        f"decode_all {TARGET_CLIP}",
        target and target["decode_all_s_median"],
        TARGET_DECODE_ALL_S,
        "ms",
        1e3,
    )
    check(
        f"sample(t) {TARGET_CLIP} ({target and target['num_bones']} joints)",
        target and target["sample_s_median"],
        TARGET_SAMPLE_S,
        "ms",
        1e3,
    )
    check("peak RSS", rss, TARGET_RSS_MB, "MB")
    check("max error, worst clip", worst_err["max_error"], PRECISION, "cm")
    return {
        "settings": {
            "precision": PRECISION,
            "shell_distance": SHELL_DISTANCE,
            "level": "automatic",
            "repeat": repeat,
        },
        "clips": clips,
        "total": {
            "compressed_size": total,
            "acl_compressed_size": acl_total,
            "size_ratio": total / acl_total,
        },
        "peak_rss_mb": rss,
        "load_average_1min": load,
        "targets": targets,
        "all_pass": all(t["pass"] for t in targets),
    }


def format_report(report: dict[str, Any]) -> str:
    """The report as aligned text: one row per clip, totals, targets with PASS / FAIL."""
    from codec.cli import table

    head = [
        "clip",
        "samples",
        "level",
        "ours B",
        "ACL B",
        "ours/ACL",
        "our err",
        "ACL err",
        "compress ms",
        "cpu ms",
        "ACL ms",
        "decode_all ms",
        "sample ms",
    ]
    rows = [head]
    for name, c in report["clips"].items():
        rows.append(
            [
                name.removesuffix(".acl.sjson"),
                str(c["num_samples"]),
                c["level"],
                f"{c['compressed_size']:,}",
                f"{c['acl_compressed_size']:,}",
                f"{c['size_ratio']:.3f}",
                f"{c['max_error']:.6f}",
                f"{c['acl_max_error']:.6f}",
                f"{c['compression_time_s_median'] * 1e3:.1f}",
                f"{c['compression_cpu_s_median'] * 1e3:.1f}",
                f"{c['acl_compression_time_s_median'] * 1e3:.1f}",
                f"{c['decode_all_s_median'] * 1e3:.3f}",
                f"{c['sample_s_median'] * 1e3:.4f}",
            ]
        )
    t = report["total"]
    total = ["total", "", "", f"{t['compressed_size']:,}", f"{t['acl_compressed_size']:,}"]
    rows.append(total + [f"{t['size_ratio']:.3f}"] + [""] * (len(head) - 6))
    s = report["settings"]
    load = report.get("load_average_1min")
    lines = [
        f"precision {s['precision']} cm, shell distance {s['shell_distance']} cm, level "
        f"{s['level']}; compression wall and cpu time = median of {s['repeat']} runs (ACL ms: "
        "measured elsewhere, only a rough guide)",
        "",
        table(rows, right=range(1, 13)),
        f"peak RSS {report['peak_rss_mb']:.1f} MB"
        + ("" if load is None else f"; 1-minute load average at the end {load:.2f}"),
        "",
        "targets",
    ]
    trows = []
    for tg in report["targets"]:
        v = tg["value"]
        shown = "missing" if v is None else f"{v * tg['scale']:.4g}"
        trows.append(
            [
                tg["target"],
                shown,
                f"<= {tg['limit'] * tg['scale']:g} {tg['unit']}",
                "PASS" if tg["pass"] else "FAIL",
            ]
        )
    lines.append(table(trows, right=(1,)))
    lines.append("all targets met" if report["all_pass"] else "some targets FAILED")
    return "\n".join(lines) + "\n"
