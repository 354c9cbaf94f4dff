"""Keyed clips against ACL 2.1: what keyframe stripping saves, side by side in one run.

    .venv/bin/python bench/keyframe_stripping.py [--peer PATH] [--repeat N]

Hand-keyed clips are made from the repository's CMU clips the way tests do it
(tests.codec.helpers.keyed_clip: every k-th sample is a key, the samples between are rebuilt
linearly), written as ACL SJSON and compressed by us (stripping on, and off) and by ACL's
own `acl_compressor` (--peer, default ../shared/tools/acl/acl_compressor when there) at
0.01 cm, 3 cm shells. Per clip: our size with and without stripping, ACL's, the ratio, the
keyframes each strips (and finds trivial), our max error measured from the decoded bytes,
and the compression times. Target: ours <= 1.0x ACL on the linear keys-every-6 clips.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import codec  # noqa: E402
from codec.cli.report_text import table  # noqa: E402
from codec.compression import compress  # noqa: E402
from codec.formats.acl_sjson import write_acl_sjson  # noqa: E402
from codec.measure.error_metric import clip_errors  # noqa: E402
from codec.settings import CompressionSettings  # noqa: E402
from tests.codec.helpers import data_clip, keyed_clip  # noqa: E402

# ../shared beside a checkout (or beside the folder of a worktree)
PEERS = [up / "shared" / "tools" / "acl" / "acl_compressor" for up in REPO.parents[:2]]
PEER = next((p for p in PEERS if p.is_file()), None)
# (source clip, key spacing, counts towards the target)
CLIPS = (
    ("cmu_13_07.acl.sjson", 6, True),
    ("cmu_49_15.acl.sjson", 6, True),
    ("cmu_81_18_looping.acl.sjson", 6, False),
    ("cmu_13_07.acl.sjson", 4, False),
    ("cmu_49_15.acl.sjson", 3, False),
)
TARGET = 1.0  # x ACL, each target clip


def acl_numbers(peer: Path, path: Path, work: Path) -> dict[str, float]:
    """ACL's size, time and stripping counts for one clip (its detailed stats)."""
    stats = work / (path.name + ".stats.sjson")
    done = subprocess.run(
        [str(peer), f"-acl={path}", f"-stats={stats}", "-stat_detailed"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0 or not stats.is_file():
        raise SystemExit(f"{peer} failed on {path}: {(done.stderr or done.stdout).strip()}")
    text = stats.read_text(encoding="utf-8")

    def first(key: str) -> float:
        m = re.search(rf"^\s*{key}\s*=\s*([-+0-9.eE]+)", text, re.MULTILINE)
        if not m:
            raise SystemExit(f"ACL's stats for {path} have no {key}")
        return float(m.group(1))

    return {
        k: first(k)
        for k in (
            "compressed_size",
            "compression_time",
            "num_stripped_keyframes",
            "num_trivial_keyframes",
        )
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", type=Path, default=PEER, help="ACL's acl_compressor")
    parser.add_argument("--repeat", type=int, default=3, help="compressions per clip (median)")
    args = parser.parse_args(argv)
    on = CompressionSettings(precision=0.01, shell_distance=3.0, skin_error=False)
    off = CompressionSettings(
        precision=0.01, shell_distance=3.0, skin_error=False, strip_trivial=False
    )
    rows = [
        [
            "clip",
            "S",
            "ours B",
            "no strip B",
            "ACL B",
            "ours/ACL",
            "stripped",
            "ACL stripped",
            "max err (bytes)",
            "ours ms",
            "no strip ms",
            "ACL ms",
        ]
    ]
    failed = []
    with tempfile.TemporaryDirectory(prefix="shellscope-keyed-") as tmp:
        work = Path(tmp)
        for name, every, target in CLIPS:
            clip = keyed_clip(codec.load_clip(data_clip(name)), every)
            label = f"{name.split('.')[0]} keys {every} linear"
            times = {}
            for key, settings in (("on", on), ("off", off)):
                runs = []
                for _ in range(max(1, args.repeat)):
                    t = time.perf_counter()
                    result = compress(clip, settings)
                    runs.append(time.perf_counter() - t)
                times[key] = (float(np.median(runs)), result)
            ours, plain = times["on"][1], times["off"][1]
            decoded = codec.decode(ours.data).decode_source()
            err = float(clip_errors(ours.clip, decoded).max())
            acl = {}
            if args.peer is not None:
                path = work / f"{clip.name}.acl.sjson"
                write_acl_sjson(clip.with_skeleton_settings(0.01, 3.0), path)
                acl = acl_numbers(args.peer, path, work)
            size = ours.stats["compressed_size"]
            ratio = size / acl["compressed_size"] if acl else None
            if target and (ratio is None or ratio > TARGET or err > 0.01):
                failed.append(label)
            s = ours.stats
            rows.append(
                [
                    label,
                    str(clip.num_samples),
                    f"{size:,}",
                    f"{plain.stats['compressed_size']:,}",
                    f"{int(acl['compressed_size']):,}" if acl else "-",
                    f"{ratio:.3f}" if ratio is not None else "-",
                    f"{s['num_stripped_keyframes']} ({s['num_trivial_keyframes']})",
                    f"{int(acl['num_stripped_keyframes'])} ({int(acl['num_trivial_keyframes'])})"
                    if acl
                    else "-",
                    f"{err:.6f}",
                    f"{times['on'][0] * 1000:.1f}",
                    f"{times['off'][0] * 1000:.1f}",
                    f"{acl['compression_time'] * 1000:.1f}" if acl else "-",
                ]
            )
    print(
        "precision 0.01 cm, shell distance 3 cm, level automatic; stripped (trivial); "
        f"times: median of {args.repeat}"
    )
    print(table(rows, right=range(1, 12)), end="")
    if args.peer is None:
        print("no ACL compressor (--peer): sizes not compared")
        return 1
    verdict = "PASS" if not failed else f"FAIL ({', '.join(failed)})"
    print(f"target: ours <= {TARGET:.1f}x ACL and strict on the keys-every-6 clips: {verdict}")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
