"""The file's own curves of a clip, one per animated sub-track, as the authored codec keeps them.

A glTF or USD clip carries the keys and interpolation it was read from (`Clip.curves`,
codec.model.authored_curves): groups of tracks sharing key times. The codec keeps each
sub-track's keys on one of a few shared key timelines and reads them exactly as the file
does (CurveGroup.evaluate: step, linear, slerp, cubic Hermite with tangents scaled by the key
interval, rotations normalised).

Folded joints (a glTF non-joint node or USD prims above the skeleton folded into the joint)
have curves that give the joint's transform before the fold. When the fold is a rotation
and a uniform positive scale, folding commutes with every interpolation (left-multiplying
quaternions by a unit quaternion, and an affine map of vectors, are linear and keep
slerp's angles), so the keys are folded and kept. Any track the file gives no curve for, or
whose (folded) keys do not give back its samples, is sampled data: its samples are its
keys, read linearly (nlerp for rotations), which is how the raw clip reads it between
samples too (codec.model.sampling.clip_between).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codec.model import quat
from codec.model.authored_curves import CurveGroup
from codec.model.clip import Clip

Array = np.ndarray

KIND_OF_SUB = ("rotation", "translation", "scale")
INTERPOLATIONS = ("step", "linear", "slerp", "cubic")  # the codes the payload stores
GRID_SLACK = 1e-9  # key times this close (relative) to a sample are on the grid
SAME = 1e-9  # a curve gives back its samples within this (relative; float64 folds)


@dataclass(frozen=True, eq=False)
class Source:
    """One sub-track's keys as the file reads them: on timeline `timeline` (its key
    times), values (K, C) and, for cubic, in / out tangents (K, C) per second."""

    interpolation: str
    timeline: int
    values: Array
    in_tangents: Array | None = None
    out_tangents: Array | None = None


@dataclass(frozen=True, eq=False)
class Sources:
    """The file's curve of every sub-track that has one {(joint, sub): Source} and the key
    timelines (K,) in clip seconds they share; timeline 0 is the sample grid, the keys of
    every sub-track without a curve."""

    timelines: list[Array]
    tracks: dict[tuple[int, int], Source]


def curve(sub: int, interpolation: str, times: Array, values: Array, tin, tout) -> CurveGroup:
    """One track's keys (K, C) (tangents (K, C) per second or None) at key times (K,) as the
    model's curve group, whose `evaluate` is the file's reading."""
    return CurveGroup(
        KIND_OF_SUB[sub],
        interpolation,
        np.zeros(1, np.int64),
        times,
        values[:, None],
        None if tin is None else tin[:, None],
        None if tout is None else tout[:, None],
    )


def _similarity(m: Array) -> tuple[Array, float] | None:
    """(rotation xyzw, scale) of a 3x3 that is a rotation times a uniform positive scale."""
    s = float(np.cbrt(np.linalg.det(m)))
    if not s > 0:
        return None
    r = m / s
    if not np.allclose(r @ r.T, np.eye(3), rtol=0.0, atol=1e-9):
        return None
    return quat.from_matrix(r), s


def _member(g: CurveGroup, at: int, fold: Array | None) -> tuple[Array, ...] | None:
    """Values and in / out tangents (K, C) (or None) of member `at` of a group, with the
    joint's fold (3, 4) applied; None when the fold is not a similarity."""
    parts = [g.values[:, at]]
    parts += [None if a is None else a[:, at] for a in (g.in_tangents, g.out_tangents)]
    if fold is None:
        return tuple(parts)
    sim = _similarity(fold[:, :3])
    if sim is None:
        return None
    r, s = sim
    if g.kind == "rotation":
        turned = [None if a is None else quat.mul(np.broadcast_to(r, a.shape), a) for a in parts]
    elif g.kind == "translation":
        turned = [None if a is None else a @ fold[:, :3].T for a in parts]
        turned[0] = turned[0] + fold[:, 3]
    else:
        turned = [None if a is None else a * s for a in parts]
    return tuple(turned)


def clip_sources(clip: Clip) -> Sources:
    """Every sub-track's file curve that gives back its samples (module docstring)."""
    grid = np.arange(clip.num_samples, dtype=np.float64) / clip.sample_rate
    timelines: list[Array] = [grid]
    tracks: dict[tuple[int, int], Source] = {}
    curves = clip.curves
    if curves is None:
        return Sources(timelines, tracks)
    folds = {int(j): m for j, m in zip(curves.fold_joints, curves.fold_matrices, strict=True)}
    samples = (clip.rotations, clip.translations, clip.scales)
    for g in curves.groups:
        sub = KIND_OF_SUB.index(g.kind)
        times = stored_times(g.times, clip.sample_rate)
        line = next((n for n, t in enumerate(timelines) if np.array_equal(t, times)), None)
        for at, j in enumerate(g.joints.tolist()):
            member = _member(g, at, folds.get(j))
            if member is None:
                continue
            got = curve(sub, g.interpolation, times, *member).evaluate(grid)[:, 0]
            if not _same(sub, got, samples[sub][:, j]):
                continue
            if line is None:
                line = len(timelines)
                timelines.append(times)
            tracks[(j, sub)] = Source(g.interpolation, line, *member)
    return Sources(timelines, tracks)


def on_grid(times: Array, rate: float) -> Array | None:
    """(K,) the sample indices of key times (K,) that all sit on the sample grid, else None."""
    pos = np.asarray(times, np.float64) * rate
    k = np.rint(pos)
    if np.all(np.abs(pos - k) <= GRID_SLACK * np.maximum(1.0, np.abs(pos))) and np.all(k >= 0):
        return k.astype(np.int64)
    return None


def stored_times(times: Array, rate: float) -> Array:
    """Key times (K,) as the payload gives them back: index / rate on the sample grid, the
    float64 seconds otherwise (what the encoder measures is what decodes)."""
    k = on_grid(times, rate)
    return np.asarray(times, np.float64) if k is None else k / rate


def _same(sub: int, got: Array, raw: Array) -> bool:
    """Whether values (S, C) are the samples `raw (S, C)` (rotations up to sign)."""
    if sub == 0:
        return bool(np.all(np.abs(np.abs(np.sum(got * raw, axis=-1)) - 1.0) <= SAME))
    return bool(np.all(np.abs(got - raw) <= SAME * (1.0 + np.abs(raw))))
