"""Check FBX and USD files the way the tests check the repository's: against another reader.

    .venv/bin/python tools/crosscheck.py FILE... [--compress] [--all-stacks]

For every file (and every FBX animation stack with --all-stacks) it prints what Shellscope
reads (joints, samples, rate, units) and the largest distance, over every joint and sample,
between Shellscope's world positions and an independent reader's: assimp (Debian's
libassimp5) for FBX, usd-core's own UsdSkel world transforms for USD. The bound is
0.05 cm. --compress also compresses each clip at the default settings and says whether
precision was met. Exit code 1 when any file is over the bound or could not be read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BOUND_CM = 0.05


def _fbx_bytes(path: Path) -> bytes:
    from codec.formats.compressed import compression_of, read_decompressed

    return read_decompressed(path) if compression_of(path) else path.read_bytes()


def check(path: Path, animation: str | None, compress: bool) -> bool:
    import numpy as np

    from codec import load_clip
    from codec.formats import format_of
    from codec.model.transforms import object_space

    clip = load_clip(path, animation=animation) if animation else load_clip(path)
    ours = object_space(clip.rotations, clip.translations, clip.scales, clip.skeleton.parents)
    ours = ours[..., 3]
    if format_of(path) == "fbx":
        from tests.codec.formats import assimp_reference

        theirs = assimp_reference.clip_joint_positions_cm(clip, _fbx_bytes(path), clip.name)
        reference = "assimp"
    else:
        from codec.formats import list_animations
        from tests.codec.formats import usd_reference

        skeleton = animation or list_animations(path)[0]
        codes = usd_reference.sample_codes(path, clip)
        theirs = usd_reference.clip_joint_positions_cm(path, skeleton, codes, clip)
        reference = "UsdSkel"
    gap = float(np.linalg.norm(ours - theirs, axis=-1).max())
    ok = gap <= BOUND_CM
    line = (
        f"{path.name} [{clip.name}]: {clip.num_joints} joints, {clip.num_samples} samples at "
        f"{clip.sample_rate:g} Hz; {clip.units.short() if clip.units else '?'}; "
        f"max |ours - {reference}| {gap:.3g} cm {'ok' if ok else 'OVER ' + str(BOUND_CM)}"
    )
    if compress:
        from codec.compression import compress as run
        from codec.settings import CompressionSettings

        stats = run(clip, CompressionSettings()).stats
        met = "met" if stats["precision_met"] else "NOT met"
        line += (
            f"; compressed {stats['compressed_size']:,} B, max error "
            f"{stats['max_error']:.4g} cm, precision {met}"
        )
    for w in clip.warnings:
        line += f"\n    warning: {w}"
    print(line, flush=True)
    return ok


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--compress", action="store_true", help="also compress each clip")
    parser.add_argument("--all-stacks", action="store_true", help="every FBX stack / USD skeleton")
    args = parser.parse_args(argv)
    from codec import ClipFormatError
    from codec.formats import list_animations

    bad = 0
    for path in args.files:
        try:
            names = list_animations(path) if args.all_stacks else [None]
            for name in names:
                bad += not check(path, name, args.compress)
        except (ClipFormatError, ValueError, OSError) as e:
            print(f"{path}: cannot check: {e}", flush=True)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
