"""Make hand-keyed-style clips from real ones: keep every k-th sample as a key, rebuild the
samples between from the keys, write the result as ACL SJSON (binary exact, xz-compressed).

    .venv/bin/python tools/make_keyed_clips.py [--out tests/data/keyed]

An animator's clip exported at the frame rate is made of keys and the in-betweens that the
curves put between them; these clips are made the same way from motion capture, so a codec
that can find the keys (ACL's keyframe stripping, the survey's keyreduce and curve codecs)
is measured on what it would meet in a game's hand-keyed library.

Keys: the samples 0, k, 2k, ... and always the last sample (`key_indices`), or at irregular
frames with gaps of 2 to 12 samples drawn from a seeded generator (`irregular_keys`). Every
channel is one curve per component through its keys (rotations: the quaternion's four, made
continuous along the keys and normalised after, as a DCC tool keying quaternions does);
between two keys, by `kind`:
- `linear`: translations and scales lerp, rotations nlerp (component lerp of the keys made
  continuous along the track, then normalised: ACL's interpolation);
- `stepped`: every key holds until the next one (a DCC tool's stepped keys);
- `catmull_rom`: every component follows a cubic Hermite curve through the keys with
  tangents (p[i+1] - p[i-1]) / (t[i+1] - t[i-1]) (Catmull-Rom for evenly spaced keys;
  one-sided differences at the first and last key);
- `bezier_flat`, `bezier_auto`, `bezier_clamped`: a cubic Bezier per key interval whose
  handles sit a third of the interval from their key in time (unweighted tangents: the curve
  is the cubic Hermite of the keys with the handles' slopes), the slopes being
  flat: zero at every key (ease in / ease out, Maya's flat tangents);
  auto: Blender's automatic handles, the direction halfway between the unit vectors towards
  the two neighbour keys in the (frame, value) plane (so the slope depends on the value's
  scale and on both distances), flat at the first and last key;
  clamped: auto, but flat at a key that is a local extreme of its neighbours and limited to
  three times the smaller neighbouring secant, so the curve never overshoots its keys
  (Blender's auto-clamped handles, Maya's clamped / auto tangents).
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
    return hermite(keys, values, tangents, num_samples)


def hermite(keys: Array, values: Array, tangents: Array, num_samples: int) -> Array:
    """(S, J, C) samples of the cubic Hermite segments between keys (K,) with values and
    tangents per sample (K, J, C)."""
    t = keys.astype(np.float64)
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


KINDS = ("linear", "stepped", "catmull_rom", "bezier_flat", "bezier_auto", "bezier_clamped")
GAPS = (2, 12)  # irregular keys: gaps between keys, inclusive


def irregular_keys(num_samples: int, seed: int, gaps: tuple[int, int] = GAPS) -> Array:
    """(K,) key samples 0 .. num_samples - 1 with gaps drawn uniformly from `gaps` (a seeded
    generator: the same keys every run); the last gap is kept within `gaps` too."""
    rng = np.random.default_rng(seed)
    lo, hi = gaps
    keys = [0]
    while True:
        nxt = keys[-1] + int(rng.integers(lo, hi + 1))
        if nxt >= num_samples - 1:
            break
        keys.append(nxt)
    keys.append(num_samples - 1)
    if len(keys) > 2 and keys[-1] - keys[-2] < lo:  # too short a last gap: move its start
        keys[-2] = keys[-1] - lo
        if keys[-2] - keys[-3] < lo:
            del keys[-2]
    return np.unique(np.asarray(keys, dtype=np.int64))


def stepped(keys: Array, values: Array, num_samples: int) -> Array:
    """(S, J, C) samples holding each key's value until the next key."""
    i = np.clip(np.searchsorted(keys, np.arange(num_samples), side="right") - 1, 0, len(keys) - 1)
    return values[i].copy()


def bezier_slopes(keys: Array, values: Array, rule: str) -> Array:
    """(K, J, C) slopes per frame of the Bezier handles at the keys (module docstring)."""
    m = np.zeros_like(values)
    if rule == "flat" or len(keys) < 3:
        return m
    t = keys.astype(np.float64)[:, None, None]
    da, db = t[1:-1] - t[:-2], t[2:] - t[1:-1]  # frames to the previous / next key
    va, vb = values[1:-1] - values[:-2], values[2:] - values[1:-1]
    la, lb = np.hypot(da, va), np.hypot(db, vb)
    m[1:-1] = (va / la + vb / lb) / (da / la + db / lb)
    if rule == "clamped":
        sa, sb = va / da, vb / db
        extreme = sa * sb <= 0.0
        limit = 3.0 * np.minimum(np.abs(sa), np.abs(sb))
        m[1:-1] = np.where(extreme, 0.0, np.clip(m[1:-1], -limit, limit))
    return m


def bezier(keys: Array, values: Array, num_samples: int, rule: str) -> Array:
    """(S, J, C) samples of the unweighted Bezier curves through the keys: per interval the
    cubic Hermite of its two keys with the handles' slopes (`bezier_slopes`)."""
    return hermite(keys, values, bezier_slopes(keys, values, rule), num_samples)


def rebuilt(keys: Array, values: Array, num_samples: int, kind: str) -> Array:
    """(S, J, C) the in-betweens of `kind` through keys (K,) with values (K, J, C)."""
    if kind == "linear":
        return linear(keys, values, num_samples)
    if kind == "catmull_rom":
        return catmull_rom(keys, values, num_samples)
    if kind == "stepped":
        return stepped(keys, values, num_samples)
    if kind.startswith("bezier_"):
        return bezier(keys, values, num_samples, kind.removeprefix("bezier_"))
    raise ValueError(f"unknown in-betweens {kind!r}; expected one of {KINDS}")


def keyed_at(clip: Clip, keys: Array, kind: str, name: str) -> Clip:
    """The clip rebuilt from its samples at `keys` (K,) ascending (first and last sample
    among them) by `kind` (KINDS)."""
    rot = rebuilt(keys, continuous(clip.rotations[keys]), clip.num_samples, kind)
    rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
    tr = rebuilt(keys, clip.translations[keys], clip.num_samples, kind)
    sc = rebuilt(keys, clip.scales[keys], clip.num_samples, kind)
    return clip.replace(rotations=rot, translations=tr, scales=sc, name=name, looping=False)


def keyed(clip: Clip, spacing: int, kind: str) -> Clip:
    """The clip rebuilt from every `spacing`-th sample (and the last) by `kind`."""
    keys = key_indices(clip.num_samples, spacing)
    return keyed_at(clip, keys, kind, f"{clip.name}_keys{spacing}_{kind}")


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
