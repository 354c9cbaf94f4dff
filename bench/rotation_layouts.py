"""Which rotation encoding: the options measured by size at strict error, on the same clips.

Each option is a rule for the component an animated rotation drops
(acl_style.rotation_layout's rule at a threshold, rotation_layout.MIN_DROPPED, which the
encoder hands its quantisation kernel; constants keep w down to |w| 0.1, except under drop-w):

- drop-w: always w, as ACL 2.1 (and our format version 1) does;
- w-unless-small (ours): w while it stays >= T over the segment or clip, else the component
  whose smallest magnitude is largest, for T in 0.3, 0.5, 0.7;
- largest: always the component whose smallest magnitude is largest.

    .venv/bin/python bench/rotation_layouts.py [--shared]

Prints, per option, the total size and the clips that miss 0.01 cm, on ACL's eight reference
clips and the hard clips (boxing, Fox Walk / Run / Survey).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import codec_vs_acl as bench  # bench/, this script's own folder

from codec.codecs.acl_style import rotation_layout
from codec.compression import compress
from codec.formats import load_clip
from codec.settings import CompressionSettings

W = rotation_layout.W


# each option as the threshold of rotation_layout's rule (w while its smallest magnitude
# stays at or above it, else the largest): 0 always keeps w out, 2 never does
OPTIONS = {
    "drop-w (ACL, format 1)": 0.0,
    "w unless < 0.3": 0.3,
    "w unless < 0.5 (ours)": 0.5,
    "w unless < 0.7": 0.7,
    "largest": 2.0,
}


def main() -> None:
    shared = "--shared" in sys.argv[1:]
    names = (*bench.REFERENCE_CLIPS, *bench.HARD_CLIPS)
    specs = [
        c for c in bench.default_clips(shared) if c.name in {n.replace(":", "_") for n in names}
    ]
    clips = [
        (s.name, load_clip(s.path, **({"animation": s.animation} if s.animation else {})))
        for s in specs
    ]
    settings = CompressionSettings(precision=bench.PRECISION, shell_distance=bench.SHELL_DISTANCE)
    saved = rotation_layout.MIN_DROPPED, rotation_layout.choose_constant
    print(f"{'option':26s} {'reference B':>12s} {'hard B':>10s}  clips over 0.01 cm")
    try:
        for label, threshold in OPTIONS.items():
            rotation_layout.MIN_DROPPED = threshold
            rotation_layout.choose_constant = (
                (lambda v: np.full(len(v), W)) if threshold == 0.0 else saved[1]
            )
            ref = hard = 0
            over = []
            for name, clip in clips:
                s = compress(clip, settings).stats
                if name in bench.REFERENCE_CLIPS:
                    ref += s["compressed_size"]
                else:
                    hard += s["compressed_size"]
                if not s["precision_met"]:
                    over.append(f"{name} {s['max_error']:.4f}")
            print(f"{label:26s} {ref:12,d} {hard:10,d}  {', '.join(over) or 'none'}")
    finally:
        rotation_layout.MIN_DROPPED, rotation_layout.choose_constant = saved


if __name__ == "__main__":
    main()
