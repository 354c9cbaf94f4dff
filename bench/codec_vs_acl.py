"""`python -m codec bench`: our codec against ACL 2.1, clip by clip, in one run.

Run from a checkout: `python -m codec bench [--peer PATH]` loads this module (codec.cli.bench);
it is a measuring instrument, not part of the shipped codec. The clips are the repository's
own copies (tests/data) unless told otherwise: ACL's eight regression clips (whose ACL
results ship with the repository), two long ones for speed (a 142-joint run and 2752 samples
of jumps) and the hard clips whose rotations pass near 180 degrees (boxing, Fox Walk / Run /
Survey). Per clip: our size, error and compression
time, decode times, and ACL's numbers. With `--peer PATH` ACL's own `acl_compressor` runs on
every clip in the same run (clips that are not ACL SJSON are written as such with our writer
first), so sizes, errors and times compare side by side; without it only the eight reference
clips have ACL numbers (from acl_reference.json, measured elsewhere). Two fresh processes
measure the first run (what a user meets after `pip install`: a fresh process, the kernels'
cache in place as the wheel carries it) and the peak memory of compressing the jumps.

Times, each the median of `repeat` runs taken in turn (ours, then ACL's process, then ours
again...), so a machine shared with other work slows both sides alike: our *encode* alone
(the codec's `encode`: bytes and decoder, as ACL's `compression_time` times its compressor),
our encode + measurement (`Compression.run`: the container, the error at and between
samples, the stats), ACL's own `compression_time`, and ACL's whole process (reading the
SJSON, compressing, measuring its error, writing its stats). Each of ours is set against
both of ACL's; the speed targets take encode against `compression_time` (like for like).
The first compression of each clip in this process is shown apart.

Nothing in the test suite needs ACL: `--peer` is a measuring instrument.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from codec.cli.report_text import table
from codec.errors import ShellscopeError

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
REFERENCE = DATA / "acl_reference.json"
PRECISION, SHELL_DISTANCE = 0.01, 3.0  # ACL's defaults, as in the reference runs

REFERENCE_CLIPS = (
    "cmu_09_02",
    "cmu_09_02_multi_root",
    "cmu_09_02_with_zero_scale",
    "cmu_121_10_single_sample",
    "cmu_81_16_two_samples",
    "cmu_49_15",
    "cmu_81_18_looping",
    "cmu_13_07",
)
SPEED_CLIPS = (*REFERENCE_CLIPS, "cmu_02_03_run_ccrig", "cmu_01_01_jumps")
HARD_CLIPS = ("assimp_boxing_toes", "Fox:Walk", "Fox:Run", "Fox:Survey")
COLD_CLIP = DATA / "gltf" / "CesiumMan.glb"  # the first run after `pip install` (issue 39)
MEMORY_CLIP = "cmu_01_01_jumps"

TARGET_REFERENCE_SIZE = 0.93  # x ACL, total over the eight reference clips
TARGET_HARD_SIZE = 1.05  # x ACL, each hard clip (while we meet the precision)
TARGET_TOTAL_TIME = 1.0  # encode x ACL's compression_time, total over SPEED_CLIPS (same run)
TARGET_CLIP_TIME = 1.5  # the same, every clip of at least LONG_SAMPLES samples
TARGET_SHORT_CLIP_TIME = 5.0  # the same, every clip of at most SHORT_SAMPLES samples
LONG_SAMPLES, SHORT_SAMPLES = 26, 2
TARGET_COLD_S = 3.0  # wall, a fresh process (kernels' cache in place) compressing COLD_CLIP
TARGET_RSS_MB = 150.0  # peak RSS of a process compressing MEMORY_CLIP

DECODE_BUDGET_S = 0.3  # time spent measuring decode_all per clip (at least 5 runs)
SAMPLE_COUNT = 300  # random times measured for sample(t)


class BenchError(ShellscopeError):
    """A clip, the reference or the peer cannot be found or run."""


@dataclass(frozen=True)
class BenchClip:
    """One clip of the bench: a name, a file and, for multi-animation files, its animation."""

    name: str
    path: Path
    animation: str | None = None


def _find(name: str, folders: list[Path]) -> BenchClip:
    stem, _, animation = name.partition(":")
    for folder in folders:
        for sub in ("acl", "bvh", "gltf", ""):
            for ext in (".acl.sjson", ".acl.sjson.xz", ".bvh", ".bvh.xz", ".glb"):
                path = folder / sub / f"{stem}{ext}"
                if path.is_file():
                    return BenchClip(name.replace(":", "_"), path, animation or None)
    raise BenchError(f"{name}: not found in {', '.join(str(f) for f in folders)}")


def default_clips(shared: bool = False) -> list[BenchClip]:
    """The bench's clips from tests/data, or from ../shared/data with `shared`."""
    folders = [DATA]
    if shared:
        up = [p / "shared" / "data" for p in REPO.parents if (p / "shared" / "data").is_dir()]
        if not up:
            raise BenchError(
                f"{REPO.parent / 'shared'}: no shared data folder beside the repository"
            )
        folders = [up[0], DATA]
    return [_find(n, folders) for n in (*SPEED_CLIPS, *HARD_CLIPS)]


def clips_from(specs: list[str]) -> list[BenchClip]:
    """Clips named on the command line: `FILE` or `FILE:ANIMATION`."""
    out = []
    for spec in specs:
        path, animation = spec, None
        if ":" in spec and not Path(spec).exists():
            path, animation = spec.rsplit(":", 1)
        p = Path(path)
        if not p.is_file():
            raise BenchError(f"{path}: no such clip file")
        stem = re.sub(
            r"(\.acl)?\.(sjson|bvh|glb|gltf|fbx|usdz?|usda|usdc)(\.(xz|gz|zst))?$", "", p.name
        )
        out.append(BenchClip(f"{stem}_{animation}" if animation else stem, p, animation))
    return out


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MB (ru_maxrss: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024


def _median_time(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


class _Ours:
    """Our side of one clip: the clip read once, then fresh encodes and fresh compressions
    (nothing carried over from one to the next) at ACL's default settings (level automatic,
    compression only: no skin analysis, which ACL has not)."""

    def __init__(self, clip_spec: BenchClip, bind: str = "auto") -> None:
        from codec.codecs import registry
        from codec.formats import load_clip
        from codec.settings import CompressionSettings

        kwargs = {"animation": clip_spec.animation} if clip_spec.animation else {}
        self.clip = load_clip(clip_spec.path, **kwargs)
        self.settings = CompressionSettings(
            precision=PRECISION, shell_distance=SHELL_DISTANCE, skin_error=False, bind=bind
        )
        self.codec = registry.get(self.settings.codec)
        self.encodes: list[float] = []
        self.compressions: list[float] = []
        self.cpu: list[float] = []
        self.result: Any = None

    def first(self) -> float:
        """The first compression of the clip in this process."""
        return _timed(self.compress)

    def compress(self) -> None:
        from codec.compression import Compression

        self.result = Compression(self.clip).run(self.settings)

    def once(self) -> None:
        """One encode and one compression, timed."""
        self.encodes.append(_timed(lambda: self.codec.encode(self.clip, self.settings)))
        c0 = time.process_time()
        self.compressions.append(_timed(self.compress))
        self.cpu.append(time.process_time() - c0)

    def numbers(self, rng: np.random.Generator) -> dict[str, Any]:
        """Sizes, errors and the medians; decode times measured now."""
        s = self.result.stats
        cc = self.result.decoder
        once = max(_median_time(cc.decode_all, 1), 1e-6)
        decode_s = _median_time(cc.decode_all, int(min(100, max(5, DECODE_BUDGET_S / once))))
        samples = [
            _median_time(lambda t=t: cc.sample(float(t), "none"), 1)
            for t in rng.uniform(0.0, cc.duration, SAMPLE_COUNT)
        ]
        return {
            "num_bones": s["num_bones"],
            "num_samples": s["num_samples"],
            "level": s["level"],
            "compressed_size": s["compressed_size"],
            "raw_size": s["raw_size"],
            "max_error": s["max_error"],
            "precision_met": s["precision_met"],
            "num_segments": s["num_segments"],
            "bind_mode": s.get("bind_mode"),
            "bind_modes_tried": list(s.get("bind_modes", {}).get("tried", {})),
            "encode_time_s_median": float(np.median(self.encodes)),
            "compression_time_s_median": float(np.median(self.compressions)),
            "compression_cpu_s_median": float(np.median(self.cpu)),
            "decode_all_s_median": decode_s,
            "sample_s_median": float(np.median(samples)),
        }


class _Peer:
    """ACL's side of one clip: `acl_compressor` run as a whole process, one run at a time;
    its own `compression_time` and the process's wall time."""

    def __init__(self, peer: Path, clip: Any, clip_spec: BenchClip, work: Path) -> None:
        from codec.formats.acl_sjson import write_acl_sjson
        from codec.formats.compressed import read_decompressed

        src = clip_spec.path
        if src.name.endswith((".acl.sjson.xz", ".acl.sjson.gz", ".acl.sjson.zst")):
            plain = work / f"{clip_spec.name}.acl.sjson"  # ACL reads the unmodified file
            plain.write_bytes(read_decompressed(src))
            src = plain
        elif not src.name.endswith(".acl.sjson"):  # another format: our reading of it, as SJSON
            src = work / f"{clip_spec.name}.acl.sjson"
            write_acl_sjson(clip.with_skeleton_settings(PRECISION, SHELL_DISTANCE), src)
        self.peer, self.src = peer, src
        self.stats_path = work / f"{clip_spec.name}.stats.sjson"
        self.runs: list[dict[str, float]] = []

    def once(self) -> None:
        t0 = time.perf_counter()
        done = subprocess.run(
            [str(self.peer), f"-acl={self.src}", f"-stats={self.stats_path}"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        wall = time.perf_counter() - t0
        if done.returncode != 0 or not self.stats_path.is_file():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise BenchError(f"{self.peer}: failed on {self.src} ({tail[0]})")
        text = self.stats_path.read_text(encoding="utf-8")
        run = {
            k: _sjson_number(text, k) for k in ("compressed_size", "compression_time", "max_error")
        }
        self.runs.append({**run, "process": wall})
        self.stats_path.unlink()

    def numbers(self) -> dict[str, Any]:
        return {
            "acl_compressed_size": int(self.runs[0]["compressed_size"]),
            "acl_max_error": self.runs[0]["max_error"],
            "acl_compression_time_s_median": float(
                np.median([r["compression_time"] for r in self.runs])
            ),
            "acl_process_s_median": float(np.median([r["process"] for r in self.runs])),
        }


def run_peer(peer: Path, clip: Any, clip_spec: BenchClip, repeat: int, work: Path) -> dict:
    """ACL's own numbers for a clip: `repeat` runs of acl_compressor, medians."""
    acl = _Peer(peer, clip, clip_spec, work)
    for _ in range(max(1, repeat)):
        acl.once()
    return acl.numbers()


def measure(
    clip_spec: BenchClip,
    repeat: int,
    rng: np.random.Generator,
    peer: Path | None = None,
    work: Path | None = None,
    bind: str = "auto",
) -> dict[str, Any]:
    """One clip: our numbers (acl-style's `bind` mode), and with `peer` ACL's, its runs
    taking turns with ours."""
    ours = _Ours(clip_spec, bind)
    first = ours.first()
    acl = None
    if peer is not None:
        acl = _Peer(peer, ours.clip, clip_spec, work or Path(tempfile.gettempdir()))
        acl.once()  # the clip's file in the page cache, as ours is in memory
        acl.runs.clear()
    for _ in range(repeat):
        ours.once()
        if acl is not None:
            acl.once()
    row = {"file": str(clip_spec.path), "animation": clip_spec.animation}
    row.update(ours.numbers(rng))
    row["first_compression_s"] = first
    if acl is not None:
        row.update(acl.numbers())
        row["acl_source"] = "peer"
    return row


def _sjson_number(text: str, key: str) -> float:
    m = re.search(rf"^\s*{key}\s*=\s*([-+0-9.eE]+)", text, re.MULTILINE)
    if not m:
        raise BenchError(f"the peer's stats have no {key}")
    return float(m.group(1))


def _child(code: str, env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=900,
    )
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise BenchError(f"child process failed: {done.stderr.strip().splitlines()[-1:]}")
    return wall, done.stdout.strip()


def cold_start(path: Path) -> dict[str, float]:
    """A user's first run after `pip install`: a fresh process that imports the codec,
    reads `path` and compresses it, the kernels loaded from their cache (filled here first,
    as a wheel carries it). Its wall and CPU seconds (imports, the cache's load, reading,
    compressing) and how many kernels it compiled (0 unless the cache misses one)."""
    from codec import warm_up

    warm_up.warm_up()  # every kernel in the cache, as `pip install .` builds it
    code = (
        "import codec, resource; from codec.compression import compress; "
        "from codec.warm_up import CompileCounter; c = CompileCounter()\n"
        f"with c.listening(): compress(codec.load_clip({str(path)!r}))\n"
        "u = resource.getrusage(resource.RUSAGE_SELF); print(u.ru_utime + u.ru_stime, c.count)"
    )
    wall, out = _child(code, {})
    cpu, compiled = out.splitlines()[-1].split()
    return {"wall_s": wall, "cpu_s": float(cpu), "compiled": int(compiled)}


def memory_peak(path: Path) -> float:
    """Peak RSS (MB) of a fresh process reading `path` and compressing it (warm JIT cache).

    Read from the child's own VmHWM: ru_maxrss survives exec on Linux, so it would report
    the forking parent's size."""
    code = (
        "import codec; from codec.compression import compress; "
        f"compress(codec.load_clip({str(path)!r})); "
        "print(next(int(x.split()[1]) for x in open('/proc/self/status') "
        "if x.startswith('VmHWM')) / 1024)"
    )
    _, out = _child(code, {})
    return float(out.splitlines()[-1])


# our times (keys of a clip's row) against ACL's, each ratio named
OUR_TIMES = {"encode": "encode_time_s_median", "compress": "compression_time_s_median"}
ACL_TIMES = {"acl": "acl_compression_time_s_median", "process": "acl_process_s_median"}


def _ratios(row: dict[str, Any]) -> dict[str, float]:
    """Every time ratio a row (or a total) has: encode_acl, encode_process, compress_acl..."""
    return {
        f"{o}_{a}": row[ok] / row[ak]
        for o, ok in OUR_TIMES.items()
        for a, ak in ACL_TIMES.items()
        if ok in row and row.get(ak)
    }


def run(
    clips: list[BenchClip] | None = None,
    repeat: int = 5,
    peer: str | Path | None = None,
    reference: str | Path | None = None,
    processes: bool = True,
    progress: Callable[[str], object] | None = None,
    bind: str = "auto",
) -> dict[str, Any]:
    """Benchmark the clips with acl-style's `bind` mode (auto: the codec's default); returns
    the report (JSON-ready dict)."""
    clips = clips if clips is not None else default_clips()
    say = progress or (lambda m: None)
    ref_path = Path(reference) if reference else REFERENCE
    try:
        ref = json.loads(ref_path.read_text(encoding="utf-8"))["clips"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise BenchError(f"{ref_path}: cannot read the ACL reference ({e})") from None
    peer_path = Path(peer) if peer else None
    if peer_path is not None and not (peer_path.is_file() and os.access(peer_path, os.X_OK)):
        raise BenchError(f"{peer_path}: not an executable (the ACL compressor, see its README)")
    rng = np.random.default_rng(1234)
    report: dict[str, Any] = {"clips": {}, "load_average_1min_start": _load()}
    with tempfile.TemporaryDirectory(prefix="shellscope-bench-") as tmp:
        for spec in clips:
            say(f"bench: {spec.name}" + (" (and ACL, in turns)" if peer_path else ""))
            row = measure(spec, repeat, rng, peer_path, Path(tmp), bind)
            acl = ref.get(f"{spec.name}.acl.sjson", {}).get("automatic")
            if peer_path is None and acl is not None:
                row["acl_compressed_size"] = acl["compressed_size"]
                row["acl_max_error"] = acl["max_error"]
                row["acl_compression_time_s_median"] = acl["compression_time_s_median"]
                row["acl_source"] = "reference"
            if "acl_compressed_size" in row:
                row["size_ratio"] = row["compressed_size"] / row["acl_compressed_size"]
                row.update(_ratios(row))
            report["clips"][spec.name] = row
    report["peak_rss_mb_this_process"] = peak_rss_mb()
    if processes:
        by_name = {c.name: c for c in clips}
        if COLD_CLIP.is_file():
            say(f"bench: first run ({COLD_CLIP.name} in a fresh process, kernels' cache in place)")
            report["first_run"] = cold_start(COLD_CLIP)
        if MEMORY_CLIP in by_name:
            say("bench: peak memory (fresh process)")
            report["memory_peak_mb"] = memory_peak(by_name[MEMORY_CLIP].path)
    report["settings"] = {
        "precision": PRECISION,
        "shell_distance": SHELL_DISTANCE,
        "level": "automatic",
        "bind": bind,
        "repeat": repeat,
        "peer": str(peer_path or ""),
    }
    report["load_average_1min"] = _load()
    report["totals"] = _totals(report["clips"])
    report["targets"] = _targets(report)
    report["all_pass"] = all(t["pass"] for t in report["targets"])
    return report


def _load() -> float | None:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def _totals(clips: dict[str, dict]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    groups = {"reference": REFERENCE_CLIPS, "speed": SPEED_CLIPS, "all": tuple(clips)}
    for label, names in groups.items():
        rows = [clips[n] for n in names if n in clips and "acl_compressed_size" in clips[n]]
        if not rows:
            continue
        total: dict[str, Any] = {
            "clips": len(rows),
            "compressed_size": sum(r["compressed_size"] for r in rows),
            "acl_compressed_size": sum(r["acl_compressed_size"] for r in rows),
        }
        total["size_ratio"] = total["compressed_size"] / total["acl_compressed_size"]
        for key in (*OUR_TIMES.values(), *ACL_TIMES.values()):
            if all(key in r for r in rows):
                total[key] = sum(r[key] for r in rows)
        total.update(_ratios(total))
        out[label] = total
    return out


def _targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    clips, totals = report["clips"], report["totals"]
    peer = report["settings"]["peer"] != ""
    out: list[dict[str, Any]] = []

    def check(label: str, value: float | None, limit: float, unit: str) -> None:
        out.append(
            {
                "target": label,
                "value": value,
                "limit": limit,
                "unit": unit,
                "pass": value is not None and value <= limit,
            }
        )

    ref_total = totals.get("reference")
    if ref_total and ref_total["clips"] == len(REFERENCE_CLIPS):
        check("size, 8 reference clips / ACL", ref_total["size_ratio"], TARGET_REFERENCE_SIZE, "x")
    worst = max((c["max_error"] for c in clips.values()), default=None)
    check("max error, every clip", worst, PRECISION, "cm")
    for name in ("assimp_boxing_toes", "Fox_Walk", "Fox_Run"):
        c = clips.get(name)
        if c is not None and peer:
            check(f"size {name} / ACL", c["size_ratio"], TARGET_HARD_SIZE, "x")
    speed = totals.get("speed")
    if peer and speed and speed["clips"] == len(SPEED_CLIPS):
        check(
            f"encode time, {len(SPEED_CLIPS)} clips / ACL compression_time",
            speed["encode_acl"],
            TARGET_TOTAL_TIME,
            "x",
        )
    timed = [n for n, c in clips.items() if peer and "encode_acl" in c]
    for kind, limit, pick in (
        (f">= {LONG_SAMPLES} samples", TARGET_CLIP_TIME, lambda n: n >= LONG_SAMPLES),
        (f"<= {SHORT_SAMPLES} samples", TARGET_SHORT_CLIP_TIME, lambda n: n <= SHORT_SAMPLES),
    ):
        names = [n for n in timed if pick(clips[n]["num_samples"])]
        if names:
            slowest = max(names, key=lambda n: clips[n]["encode_acl"])
            check(
                f"slowest clip of {kind}, encode / ACL ({slowest})",
                clips[slowest]["encode_acl"],
                limit,
                "x",
            )
    if "first_run" in report:
        check(
            f"first run, {COLD_CLIP.name} (wall)", report["first_run"]["wall_s"], TARGET_COLD_S, "s"
        )
    if "memory_peak_mb" in report:
        check(f"peak RSS compressing {MEMORY_CLIP}", report["memory_peak_mb"], TARGET_RSS_MB, "MB")
    return out


def _ms(row: dict[str, Any], key: str, digits: int = 1) -> str:
    return f"{row[key] * 1e3:.{digits}f}" if key in row else ""


def _x(row: dict[str, Any], key: str) -> str:
    return f"{row[key]:.2f}" if key in row else ""


def format_report(report: dict[str, Any]) -> str:
    """The report as aligned text: sizes and errors per clip, then times per clip (ours
    against ACL's), totals, targets with PASS / FAIL."""
    sizes = [
        ["clip", "J x S", "ours B", "ACL B", "size", "our err", "ACL err", "decode ms", "sample ms"]
    ]
    times = [
        [
            "clip",
            "J x S",
            "first ms",
            "encode ms",
            "+measure ms",
            "ACL ms",
            "ACL proc ms",
            "enc/ACL",
            "enc/proc",
            "all/ACL",
            "all/proc",
        ]
    ]
    for name, c in report["clips"].items():
        has = "acl_compressed_size" in c
        shape = f"{c['num_bones']}x{c['num_samples']}"
        sizes.append(
            [
                name,
                shape,
                f"{c['compressed_size']:,}",
                f"{c['acl_compressed_size']:,}" if has else "",
                f"{c['size_ratio']:.3f}" if has else "",
                f"{c['max_error']:.6f}" + ("" if c["precision_met"] else " !"),
                f"{c['acl_max_error']:.6f}" if has else "",
                _ms(c, "decode_all_s_median", 2),
                _ms(c, "sample_s_median", 3),
            ]
        )
        times.append([name, shape, _ms(c, "first_compression_s"), *_time_cells(c)])
    for label, t in report["totals"].items():
        head = [f"total ({label})", f"{t['clips']} clips"]
        sizes.append(
            [*head, f"{t['compressed_size']:,}", f"{t['acl_compressed_size']:,}"]
            + [f"{t['size_ratio']:.3f}", "", "", "", ""]
        )
        times.append([*head, "", *_time_cells(t)])
    s = report["settings"]
    source = f"ACL: {s['peer']} in this run" if s["peer"] else "ACL: reference results (8 clips)"
    lines = [
        f"precision {s['precision']} cm, shell distance {s['shell_distance']} cm, level "
        f"{s['level']}, bind {s.get('bind', 'auto')}; {source}",
        "",
        table(sizes, right=range(1, 9)),
        f"times: medians of {s['repeat']} runs taken in turns; encode = the codec's encode "
        "alone, +measure = encode and measurement (Compression.run); ACL ms = its own "
        "compression_time, ACL proc = its whole process; first = our first compression of "
        "the clip in this process",
        "",
        table(times, right=range(1, 11)).rstrip("\n"),
        f"peak RSS of this process {report['peak_rss_mb_this_process']:.0f} MB; "
        f"1-minute load average {_num(report.get('load_average_1min_start'))} at the start, "
        f"{_num(report['load_average_1min'])} at the end, on {os.cpu_count()} cores",
    ]
    if "first_run" in report:
        first = report["first_run"]
        lines.append(
            f"first run ({COLD_CLIP.name} in a fresh process, kernels' cache in place): "
            f"{first['wall_s']:.2f} s wall, {first['cpu_s']:.2f} s CPU, "
            f"{first['compiled']} kernels compiled"
        )
    if "memory_peak_mb" in report:
        lines.append(
            f"peak RSS compressing {MEMORY_CLIP} in a fresh process: "
            f"{report['memory_peak_mb']:.0f} MB"
        )
    lines += ["", "targets"]
    trows = []
    for tg in report["targets"]:
        v = tg["value"]
        trows.append(
            [
                tg["target"],
                "missing" if v is None else f"{v:.4g}",
                f"<= {tg['limit']:g} {tg['unit']}",
                "PASS" if tg["pass"] else "FAIL",
            ]
        )
    lines.append(table(trows, right=(1,)))
    lines.append("all targets met" if report["all_pass"] else "some targets FAILED")
    return "\n".join(lines) + "\n"


def _num(value: float | None) -> str:
    return "?" if value is None else f"{value:.1f}"


def _time_cells(row: dict[str, Any]) -> list[str]:
    """encode, +measure, ACL, ACL process (ms), then the four ratios."""
    return [
        _ms(row, "encode_time_s_median"),
        _ms(row, "compression_time_s_median"),
        _ms(row, "acl_compression_time_s_median"),
        _ms(row, "acl_process_s_median"),
        _x(row, "encode_acl"),
        _x(row, "encode_process"),
        _x(row, "compress_acl"),
        _x(row, "compress_process"),
    ]
