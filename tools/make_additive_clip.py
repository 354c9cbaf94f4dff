"""Write tests/data/acl/additive_relative_chain.acl.sjson: a small additive clip with its base.

Four bones in a chain (one with a non-unit scale), 24 samples at 30 Hz of smooth additive
motion, on a 7-sample base clip (the base plays over the additive's duration, so the base is
sampled between its samples): enough for every additive format's arithmetic to matter.
Run from the repository root: `.venv/bin/python tools/make_additive_clip.py`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

OUT = Path("tests/data/acl/additive_relative_chain.acl.sjson")
NAMES = ("root", "spine", "arm", "hand")
PARENTS = ("", "root", "spine", "arm")
BIND_T = ((0.0, 0.0, 0.0), (0.0, 40.0, 0.0), (12.0, 25.0, 0.0), (0.0, 28.0, 0.0))


def axis_angle(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    axis = axis / np.linalg.norm(axis)
    half = 0.5 * angle[:, None]
    return np.concatenate((np.sin(half) * axis, np.cos(half)), axis=1)


def rows(values: np.ndarray) -> str:
    return "\n".join("\t\t\t[ " + ", ".join(repr(float(v)) for v in row) + " ]" for row in values)


def track(name: str, rot: np.ndarray, tr: np.ndarray, sc: np.ndarray) -> str:
    return (
        f'\t{{\n\t\tname = "{name}"\n'
        f"\t\trotations =\n\t\t[\n{rows(rot)}\n\t\t]\n"
        f"\t\ttranslations =\n\t\t[\n{rows(tr)}\n\t\t]\n"
        f"\t\tscales =\n\t\t[\n{rows(sc)}\n\t\t]\n\t}}"
    )


def main() -> None:
    s, b = 24, 7
    t = np.linspace(0.0, 1.0, s)
    tb = np.linspace(0.0, 1.0, b)
    axes = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1], [1, 1, 0]], dtype=float)
    add, base = [], []
    for j in range(4):
        a_rot = axis_angle(axes[j], 0.3 * np.sin(2 * np.pi * t + j))
        a_tr = np.stack((np.sin(3 * t + j), 0.5 * np.cos(2 * t), 0.2 * t), axis=1) * (j + 1)
        a_sc = np.ones((s, 3)) + (0.1 * np.sin(2 * np.pi * t)[:, None] if j == 2 else 0.0)
        add.append((a_rot, a_tr, a_sc))
        b_rot = axis_angle(axes[(j + 1) % 4], 0.5 + 0.4 * tb * (j + 1))
        b_tr = np.tile(BIND_T[j], (b, 1)) + np.stack((tb, tb**2, 0 * tb), axis=1) * 3
        b_sc = np.ones((b, 3)) * (1.0 if j != 1 else 1.2)
        base.append((b_rot, b_tr, b_sc))
    bones = "\n".join(
        f'\t{{\n\t\tname = "{n}"\n\t\tparent = "{p}"\n\t\tvertex_distance = 3.0\n'
        f"\t\tbind_translation = [ {', '.join(repr(v) for v in bt)} ]\n\t}}"
        for n, p, bt in zip(NAMES, PARENTS, BIND_T, strict=True)
    )
    text = (
        "version = 5\n\nclip =\n{\n"
        '\tname = "additive_relative_chain"\n'
        f"\tnum_samples = {s}\n\tsample_rate = 30\n"
        '\tadditive_format = "relative"\n'
        '\tadditive_base_name = "base_chain"\n'
        f"\tadditive_base_num_samples = {b}\n\tadditive_base_sample_rate = 30\n}}\n\n"
        "settings =\n{\n\terror_threshold = 0.01\n}\n\n"
        f"bones =\n[\n{bones}\n]\n\n"
        "base_tracks =\n[\n"
        + "\n".join(track(n, *v) for n, v in zip(NAMES, base, strict=True))
        + "\n]\n\n"
        "tracks =\n[\n" + "\n".join(track(n, *v) for n, v in zip(NAMES, add, strict=True)) + "\n]\n"
    )
    OUT.write_text(text)


if __name__ == "__main__":
    main()
