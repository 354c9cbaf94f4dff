"""Make hand-keyed-style clips from real ones: keep every k-th sample as a key, rebuild the
samples between from the keys, write the result as ACL SJSON (binary exact, xz-compressed).

    .venv/bin/python tools/make_keyed_clips.py [--out tests/data/keyed]

An animator's clip exported at the frame rate is made of keys and the in-betweens that the
curves put between them; these clips are made the same way from motion capture, so a codec
that can find the keys (ACL's keyframe stripping, the survey's keyreduce and curve codecs)
is measured on what it would meet in a game's hand-keyed library.

Keys: the samples 0, k, 2k, ... and always the last sample. In-betweens, per key interval:
- `linear`: translations and scales lerp, rotations nlerp (component lerp of the keys made
  continuous along the track, then normalised: ACL's interpolation);
- `catmull_rom`: every component (rotations' four, continuous along the track) follows a
  cubic Hermite curve through the keys with tangents (p[i+1] - p[i-1]) / (t[i+1] - t[i-1])
  (Catmull-Rom for evenly spaced keys; one-sided differences at the first and last key),
  rotations normalised afterwards.
Precision and shell distance are left to the reader's defaults (the source clips' own).
"""

from __future__ import annotations

import argparse
import hashlib
import lzma
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codec import load_clip  # noqa: E402
from codec.formats.acl_sjson import write_acl_sjson  # noqa: E402
from codec.model.clip import Clip  # noqa: E402

Array = np.ndarray
SOURCES = ROOT / "tests" / "data" / "acl"
# (source clip, key spacing, in-betweens)
RECIPES = (
    ("cmu_13_07", 6, "linear"),
    ("cmu_49_15", 6, "linear"),
    ("cmu_81_18_looping", 4, "linear"),
    ("cmu_13_07", 4, "catmull_rom"),
    ("cmu_49_15", 8, "catmull_rom"),
)


def key_indices(num_samples: int, spacing: int) -> Array:
    """(K,) the key samples: every `spacing`-th and the last."""
    keys = np.arange(0, num_samples, spacing)
    return keys if keys[-1] == num_samples - 1 else np.append(keys, num_samples - 1)


def continuous(q: Array) -> Array:
    """(K, J, 4) keys with each one on the previous one's hemisphere."""
    q = q.copy()
    for i in range(1, len(q)):
        flip = np.sum(q[i] * q[i - 1], axis=-1) < 0.0
        q[i, flip] *= -1.0
    return q


def linear(keys: Array, values: Array, num_samples: int) -> Array:
    """(S, J, C) samples between keys (K,) with values (K, J, C), lerped."""
    s = np.arange(num_samples)
    i = np.clip(np.searchsorted(keys, s, side="right") - 1, 0, len(keys) - 2)
    a = ((s - keys[i]) / (keys[i + 1] - keys[i]))[:, None, None]
    return values[i] + (values[i + 1] - values[i]) * a


def catmull_rom(keys: Array, values: Array, num_samples: int) -> Array:
    """(S, J, C) samples on the Hermite curve through the keys, finite-difference tangents."""
    t = keys.astype(np.float64)
    tangents = np.empty_like(values)
    tangents[1:-1] = (values[2:] - values[:-2]) / (t[2:] - t[:-2])[:, None, None]
    tangents[0] = (values[1] - values[0]) / (t[1] - t[0])
    tangents[-1] = (values[-1] - values[-2]) / (t[-1] - t[-2])
    s = np.arange(num_samples)
    i = np.clip(np.searchsorted(keys, s, side="right") - 1, 0, len(keys) - 2)
    h = (t[i + 1] - t[i])[:, None, None]
    u = ((s - t[i]) / (t[i + 1] - t[i]))[:, None, None]
    u2, u3 = u * u, u * u * u
    return (
        (2 * u3 - 3 * u2 + 1) * values[i]
        + (u3 - 2 * u2 + u) * h * tangents[i]
        + (-2 * u3 + 3 * u2) * values[i + 1]
        + (u3 - u2) * h * tangents[i + 1]
    )


def keyed(clip: Clip, spacing: int, kind: str) -> Clip:
    """The clip rebuilt from every `spacing`-th sample (and the last) by `kind`."""
    keys = key_indices(clip.num_samples, spacing)
    rebuild = linear if kind == "linear" else catmull_rom
    rot = rebuild(keys, continuous(clip.rotations[keys]), clip.num_samples)
    rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
    tr = rebuild(keys, clip.translations[keys], clip.num_samples)
    sc = rebuild(keys, clip.scales[keys], clip.num_samples)
    name = f"{clip.name}_keys{spacing}_{kind}"
    return clip.replace(rotations=rot, translations=tr, scales=sc, name=name, looping=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "keyed")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for source, spacing, kind in RECIPES:
        path = SOURCES / f"{source}.acl.sjson"
        if not path.is_file():
            path = path.with_name(path.name + ".xz")
        clip = load_clip(path)
        clip.name = source
        out = keyed(clip, spacing, kind)
        with tempfile.TemporaryDirectory() as tmp:
            plain = Path(tmp) / "clip.acl.sjson"
            write_acl_sjson(out, plain)
            data = plain.read_bytes()
        target = args.out / f"{out.name}.acl.sjson.xz"
        part = target.with_suffix(".part")
        part.write_bytes(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))
        part.replace(target)
        digest = hashlib.sha256(data).hexdigest()
        keys = len(key_indices(clip.num_samples, spacing))
        print(
            f"| keyed/{target.name} | {source} | {clip.num_samples} | {keys} | {kind} | {digest} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
