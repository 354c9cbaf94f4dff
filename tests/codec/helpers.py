"""Small hand-made clips and paths to the test data, shared by the codec tests."""

from __future__ import annotations

import lzma
import shutil
import tempfile
from pathlib import Path

import numpy as np

from codec.model import quat
from codec.model.clip import Clip, Skeleton

DATA = Path(__file__).resolve().parents[1] / "data"
_UNPACKED = Path(tempfile.mkdtemp(prefix="shellscope-test-clips-"))


def data_clip(name: str) -> Path:
    """Path of a test clip by file name; `.xz` copies are unpacked once per session."""
    plain = DATA / "acl" / name
    if plain.is_file():
        return plain
    packed = plain.with_name(name + ".xz")
    target = _UNPACKED / name
    if not target.is_file():
        with lzma.open(packed) as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
    return target


def chain_clip(
    num_samples: int = 40,
    num_joints: int = 4,
    seed: int = 0,
    bone: float = 10.0,
    amplitude: float = 0.6,
    scale: bool = False,
) -> Clip:
    """A single chain swinging smoothly about changing axes (cm units)."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, num_samples)[:, None]
    axes = rng.normal(size=(num_joints, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    phase = rng.uniform(0, 2 * np.pi, num_joints)
    angle = amplitude * np.sin(2 * np.pi * t + phase)  # (S, J)
    rot = quat.from_axis_angle(np.broadcast_to(axes, (num_samples, num_joints, 3)), angle)
    tr = np.zeros((num_samples, num_joints, 3))
    tr[:, 1:, 1] = bone
    tr[:, 0] = np.stack((np.sin(2 * np.pi * t[:, 0]) * 20, np.zeros(num_samples), t[:, 0] * 50), 1)
    sc = np.ones((num_samples, num_joints, 3))
    if scale:
        sc[:, 1, 0] = 1.0 + 0.5 * np.sin(3 * t[:, 0])
    names = [f"j{i}" for i in range(num_joints)]
    sk = Skeleton.create(names, [-1] + list(range(num_joints - 1)), bind_translations=tr[0])
    return Clip(sk, 30.0, rot, tr, sc, name="chain")


def random_hierarchy_clip(seed: int, num_joints: int = 8, num_samples: int = 50) -> Clip:
    """Random tree, random smooth motion, occasional scale: for property tests."""
    rng = np.random.default_rng(seed)
    parents = [-1] + [int(rng.integers(0, j)) for j in range(1, num_joints)]
    t = np.linspace(0, 1, num_samples)[:, None, None]
    freq = rng.uniform(0.2, 2.0, (1, num_joints, 1))
    axes = rng.normal(size=(1, num_joints, 3))
    axes /= np.linalg.norm(axes, axis=-1, keepdims=True)
    angle = rng.uniform(0, 2, (1, num_joints)) * np.sin(2 * np.pi * freq[..., 0] * t[..., 0])
    rot = quat.from_axis_angle(np.broadcast_to(axes, (num_samples, num_joints, 3)), angle)
    offsets = rng.normal(scale=8.0, size=(1, num_joints, 3))
    tr = offsets + rng.normal(scale=0.5, size=(1, num_joints, 3)) * np.sin(5 * t)
    sc = np.ones((num_samples, num_joints, 3))
    if rng.random() < 0.5:
        j = int(rng.integers(0, num_joints))
        sc[:, j] = 1 + 0.3 * np.sin(2 * np.pi * t[:, 0])
    sk = Skeleton.create([f"r{i}" for i in range(num_joints)], parents)
    return Clip(sk, 30.0, rot, tr, sc)


def keyed_clip(source: Clip, every: int = 6) -> Clip:
    """A hand-keyed clip made from a sampled one: every `every`-th sample (and the last) is a
    key, the samples between are rebuilt linearly from the two keys around them (rotations
    by nlerp on the shorter arc, what a runtime's linear interpolation does), so the source
    rate and sample count are kept. Keyframe stripping should find the keys again."""
    s = source.num_samples
    keys = np.unique(np.append(np.arange(0, s, every), s - 1))
    nxt = np.searchsorted(keys, np.arange(s), side="left")  # first key at or after each sample
    b = keys[nxt]
    a = keys[np.maximum(nxt - 1, 0)]
    a = np.where(b == np.arange(s), b, a)
    span = np.maximum(b - a, 1)
    alpha = ((np.arange(s) - a) / span)[:, None, None]
    rot = quat.nlerp(source.rotations[a], source.rotations[b], alpha)
    tr = source.translations[a] + (source.translations[b] - source.translations[a]) * alpha
    sc = source.scales[a] + (source.scales[b] - source.scales[a]) * alpha
    name = f"{source.name or 'clip'}_keys{every}_linear"
    return source.replace(rotations=rot, translations=tr, scales=sc, name=name)
