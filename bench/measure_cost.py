"""What measuring one edit's result costs, before and after the kept raw matrices and the
compiled blend, in one run: the window's three clips (bench/window_edits.py: 44, 142 and
212 joints) and reference clips (ACL SJSON, CesiumMan with its authored curves, a looping
clip).

    .venv/bin/python bench/measure_cost.py [--repeat N] [--codecs acl-style,subsample]

Each clip is opened in a `Compression` session and compressed once (as the window's first
run), then, alternating old and new N times (median ms):

- between: `between_errors` with the session's RawPoses (new) against the computation it
  replaced (old: the raw poses between samples kept but posed again beside the lossy ones,
  `array_errors`; acl-style's lossy poses blended by numpy's nlerp from its decoded rows);
- samples: `clip_errors` against the kept raw matrices (new) or posing both (old);
- measure: the whole `measure` of the new code (decode, both errors, stats); `measure old`
  is it with the old steps' time in place of the new ones;
- codec: the encoder's own time for that run (compression_time).

Every new figure is checked to equal the old one to the bit before it is timed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402

import codec  # noqa: E402
from codec.codecs.acl_style.decoder import DECODE_CHUNK, CompressedClip  # noqa: E402
from codec.compression import Compression  # noqa: E402
from codec.measure.error_metric import (  # noqa: E402
    array_errors,
    between_keys,
    clip_errors,
    pose_errors,
)
from codec.measure.measure import between_errors, measure  # noqa: E402
from codec.model.sampling import Pose, blend, clip_between, sample_keys_batch  # noqa: E402
from codec.settings import CompressionSettings  # noqa: E402

DATA = ROOT / "tests" / "data"
Array = np.ndarray


def reference_clips() -> list[Path]:
    import window_edits  # its CLIPS are the window's three rigs

    window = [p for _, p in window_edits.CLIPS]
    return window + [
        DATA / "acl" / "cmu_09_02.acl.sjson",
        DATA / "gltf" / "CesiumMan.glb",
        DATA / "acl" / "cmu_81_18_looping.acl.sjson.xz",
    ]


def old_sample_times(decoder, times: Array) -> tuple[Array, Array, Array]:
    """acl-style's sample_times before the compiled blend (numpy nlerp per batch)."""
    if not isinstance(decoder, CompressedClip):
        return decoder.sample_times(times, "none")
    first, second, alpha = sample_keys_batch(
        times, decoder.sample_rate, decoder.num_samples, "none", decoder.wrap, decoder.duration
    )
    n, nj = len(first), decoder.skeleton.num_joints
    out = (np.empty((n, nj, 4)), np.empty((n, nj, 3)), np.empty((n, nj, 3)))
    for lo in range(0, n, DECODE_CHUNK):
        hi = min(lo + DECODE_CHUNK, n)
        rows, at = np.unique(np.concatenate((first[lo:hi], second[lo:hi])), return_inverse=True)
        rot, tr, sc = decoder.decode_rows(rows)
        rot = rot / np.linalg.norm(rot, axis=-1, keepdims=True)
        a, b = at[: hi - lo], at[hi - lo :]
        pose = blend(Pose(rot[a], tr[a], sc[a]), Pose(rot[b], tr[b], sc[b]), alpha[lo:hi, None])
        for k in range(3):
            out[k][lo:hi] = pose[k]
    return out


def old_between(clip, decoder, supersample: int, raw: tuple[Array, Array, Array]) -> Array:
    """between_errors before: kept raw poses, both sides posed by array_errors."""
    ks, alphas = between_keys(clip.num_samples, supersample)
    times = (ks + alphas) / clip.sample_rate
    lossy = old_sample_times(decoder, times)
    n, sk = len(ks), clip.skeleton
    errors = array_errors(raw, lossy, np.arange(n), np.zeros(n), sk.parents, sk.shell_distance)
    return errors.astype(np.float32)


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return 1e3 * (time.perf_counter() - t)


def bench_clip(path: Path, codec_name: str, repeat: int) -> dict[str, float | str | int]:
    clip = codec.load_clip(path)
    session = Compression(clip)
    settings = CompressionSettings(codec=codec_name, skin_error=False)
    result = session.run(settings)  # the first run: raw matrices posed and kept
    c, dec, lossy = result.clip, result.decoder, result.lossy
    kept = session._raw_poses
    ss = settings.supersample
    ks, alphas = between_keys(c.num_samples, ss)
    raw = clip_between(c, ks, alphas)  # what the old RawPoses kept
    s = c.num_samples
    at_samples = kept.sample_matrices(c)
    assert np.array_equal(old_between(c, dec, ss, raw), between_errors(c, dec, ss, kept)[1])
    old_err = pose_errors(c, lossy, np.arange(s), np.zeros(s))
    assert np.array_equal(old_err, clip_errors(c, lossy, at_samples))
    sizes = (len(result.data), len(result.data))
    steps: dict[str, list[float]] = {k: [] for k in ("bo", "bn", "so", "sn", "m")}
    for _ in range(repeat):
        steps["bo"].append(timed(lambda: old_between(c, dec, ss, raw)))
        steps["bn"].append(timed(lambda: between_errors(c, dec, ss, kept)))
        steps["so"].append(timed(lambda: pose_errors(c, lossy, np.arange(s), np.zeros(s))))
        steps["sn"].append(timed(lambda: clip_errors(c, lossy, at_samples)))
        steps["m"].append(timed(lambda: measure(c, dec, settings, sizes, 0.0, None, kept)))
    med = {k: statistics.median(v) for k, v in steps.items()}
    return {
        "clip": path.name,
        "codec": codec_name,
        "joints": c.num_joints,
        "poses": len(ks),
        "between_old": med["bo"],
        "between_new": med["bn"],
        "samples_old": med["so"],
        "samples_new": med["sn"],
        "measure_new": med["m"],
        "measure_old": med["m"] - med["bn"] - med["sn"] + med["bo"] + med["so"],
        "codec_ms": 1e3 * float(result.stats["compression_time"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--codecs", default="acl-style", help="comma-separated codec names")
    args = parser.parse_args()
    from codec.warm_up import warm_up

    warm_up()
    head = f"{'clip':34} {'codec':10} {'J':>4} {'poses':>6}  {'between old':>11} {'new':>6} "
    head += f"{'x':>5}  {'samples old':>11} {'new':>5}  {'measure old':>11} {'new':>6} {'x':>5}"
    print("median ms over", args.repeat, "alternating runs; new == old to the bit (checked)")
    print(head + f"  {'codec':>7}")
    for codec_name in args.codecs.split(","):
        for path in reference_clips():
            r = bench_clip(path, codec_name, args.repeat)
            bo, bn, mo, mn = r["between_old"], r["between_new"], r["measure_old"], r["measure_new"]
            line = f"{r['clip']:34} {codec_name:10} {r['joints']:4} {r['poses']:6}  "
            line += f"{bo:11.2f} {bn:6.2f} {bo / bn:5.1f}  "  # type: ignore[operator]
            line += f"{r['samples_old']:11.2f} {r['samples_new']:5.2f}  "
            line += f"{mo:11.2f} {mn:6.2f} {mo / mn:5.1f}  {r['codec_ms']:7.1f}"  # type: ignore[operator]
            print(line, flush=True)


if __name__ == "__main__":
    main()
