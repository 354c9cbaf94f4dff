"""Skin-strict against the shells: size, true vertex error and time on the skinned clips.

For every clip: the default shells (3 cm), shells from the mesh (`--shell-distance mesh`)
and `--skin-strict`, at one precision. Prints the compressed size, the true vertex error
(codec.measure.vertex_error, the largest over the samples), whether every vertex met its
budget, the compression time (`compression_time`: skin-strict's rounds included), the wall
time of the whole run (measuring included), and skin-strict's size over the mesh-shell one.

    .venv/bin/python bench/skin_strict.py [--precision P] [--clips FILE[:ANIMATION]...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codec.compression import compress
from codec.formats import load_clip
from codec.measure.mesh_shells import with_mesh_shells
from codec.model.clip import Clip
from codec.settings import CompressionSettings
from codec.warm_up import warm_up

REPO = Path(__file__).resolve().parents[1]
GLTF = REPO / "tests" / "data" / "gltf"
CLIPS = [f"{GLTF / 'Fox.glb'}:Walk", f"{GLTF / 'Fox.glb'}:Survey", str(GLTF / "CesiumMan.glb")]
VARIANTS = ("default 3 cm", "mesh", "skin-strict")


def load(spec: str) -> tuple[str, Clip]:
    """(a short name, the clip) of FILE[:ANIMATION]."""
    path, _, animation = spec.partition(":")
    clip = load_clip(path, **({"animation": animation} if animation else {}))
    return Path(path).stem + (f" {animation}" if animation else ""), clip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--precision", type=float, default=0.01)
    p.add_argument("--clips", nargs="+", default=CLIPS, metavar="FILE[:ANIMATION]")
    args = p.parse_args(argv)
    warm_up()
    print(
        f"{'clip':<16}{'shells':<14}{'size (B)':>9}{'vertex max (cm)':>17}{'met':>5}"
        f"{'compress (s)':>14}{'wall (s)':>10}{'rounds':>8}"
    )
    for spec in args.clips:
        name, clip = load(spec)
        sizes = {}
        for label in VARIANTS:
            given = with_mesh_shells(clip) if label == "mesh" else clip
            settings = CompressionSettings(
                precision=args.precision, skin_strict=label == "skin-strict"
            )
            start = time.perf_counter()
            s = compress(given, settings).stats
            wall = time.perf_counter() - start
            sizes[label] = s["compressed_size"]
            rounds = s["skin_strict"]["rounds"] if "skin_strict" in s else ""
            print(
                f"{name:<16}{label:<14}{s['compressed_size']:>9,}{s['vertex_max_error']:>17.6f}"
                f"{'yes' if s['vertex_precision_met'] else 'NO':>5}"
                f"{s['compression_time']:>14.3f}{wall:>10.2f}{rounds!s:>8}"
            )
        print(f"{'':<16}skin-strict / mesh: {sizes['skin-strict'] / sizes['mesh']:.3f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
