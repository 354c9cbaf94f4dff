"""Authored curves: how the file itself interpolates a clip between its keys.

A clip's samples are dense and uniform (codec.model.clip); between two samples something must
say what the raw pose is. For sampled data (BVH, ACL SJSON, FBX as read today) the samples
are the data and between them the codec's own reading is the natural one: nlerp for
rotations (ACL's), lerp for translations and scales (codec.model.sampling). Keyed formats
say more: glTF samplers are LINEAR (rotations by slerp), STEP or CUBICSPLINE, and USD
interpolates quaternion time samples by slerp, vectors linearly, or holds every value
when the stage's interpolation is "held". Between keys the nlerp of two samples is a curve
the file never had (two USD keys 150 degrees and 1.25 s apart: nlerp is 3.7 degrees off a
third of the way, 0.19 cm on a 3 cm shell), and an error measured between samples would
measure the lossy clip against it. So a reader of a keyed format keeps its keys here and
the raw clip is evaluated exactly by them between samples; the lossy clip keeps its codec's
interpolation.

Exact, not resampled: the keys are at hand, evaluating them costs one search and one gather
per group of tracks, and a finer resampling would still be a polyline of the true curve.

Model:
- `CurveGroup`: the keys of one or more tracks of one kind (rotation, translation, scale)
  that share their key times and their interpolation: joints (T,), times (K,) in clip
  seconds (sample k is at k / sample_rate), values (K, T, C) and, for cubic, in and out
  tangents (K, T, C) per second. glTF makes one group per sampler (tracks sharing an input
  accessor merge); USD one per animation attribute (every joint of it at once).
- `AuthoredCurves`: the groups plus the folds: a joint whose file transform sits under
  transforms the reader folded into it (glTF's non-joint nodes, USD's prims above the
  skeleton) is evaluated from its own curves (its `fold_base` value where a channel has
  none) and then multiplied by its fold matrix, exactly as the reader folded its samples.
- Tracks without a curve are sampled data: the caller's blend of the samples stands there.

Interpolations ("step", "linear", "slerp", "cubic"): linear is a component lerp
(normalised for rotations: nlerp), slerp is spherical on the shorter arc, step holds a key
until the next one, cubic is glTF's Hermite spline (tangents times the key interval,
rotations normalised). Before the first key and after the last the end key holds.

Everything is numpy arrays, so a clip with curves pickles (the library's cache, Dask) and
crosses a reader's child process as named arrays (`to_arrays` / `from_arrays`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from codec.errors import ClipValidationError
from codec.model import quat
from codec.model.transforms import compose, decompose, qvv_to_matrix

Array = np.ndarray

KINDS = {"rotation": 4, "translation": 3, "scale": 3}
INTERPOLATIONS = ("step", "linear", "slerp", "cubic")


def _frozen(a: Array) -> Array:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class CurveGroup:
    """Keys of the tracks of one kind that share key times and interpolation.

    joints (T,) int, times (K,) non-decreasing clip seconds, values (K, T, C) with C 4 (xyzw)
    for rotations and 3 otherwise; in_tangents and out_tangents (K, T, C) per second for
    "cubic", else None.
    """

    kind: str
    interpolation: str
    joints: Array
    times: Array
    values: Array
    in_tangents: Array | None = None
    out_tangents: Array | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ClipValidationError(f"curve kind {self.kind!r} is not one of {tuple(KINDS)}")
        if self.interpolation not in INTERPOLATIONS:
            raise ClipValidationError(
                f"curve interpolation {self.interpolation!r} is not one of {INTERPOLATIONS}"
            )
        if self.interpolation == "slerp" and self.kind != "rotation":
            raise ClipValidationError(f"slerp is for rotations, not {self.kind}")
        width = KINDS[self.kind]
        joints = np.asarray(self.joints, dtype=np.int64).reshape(-1)
        times = np.array(self.times, dtype=np.float64).reshape(-1)
        values = np.array(self.values, dtype=np.float64)
        k, t = times.shape[0], joints.shape[0]
        if k < 1 or t < 1:
            raise ClipValidationError("a curve group needs at least one key and one track")
        if values.shape != (k, t, width):
            raise ClipValidationError(
                f"{self.kind} curve values have shape {values.shape}, expected {(k, t, width)}"
            )
        if not (np.all(np.isfinite(times)) and np.all(np.isfinite(values))):
            raise ClipValidationError(f"{self.kind} curve keys are not finite")
        if np.any(np.diff(times) < 0):
            raise ClipValidationError(f"{self.kind} curve key times are not increasing")
        if len(np.unique(joints)) != t or np.any(joints < 0):
            raise ClipValidationError(f"{self.kind} curve group names a joint twice or < 0")
        tangents = (self.in_tangents, self.out_tangents)
        if self.interpolation == "cubic":
            if any(a is None for a in tangents):
                raise ClipValidationError("a cubic curve needs in and out tangents")
            tangents = tuple(np.array(a, dtype=np.float64) for a in tangents)  # type: ignore[arg-type]
            for a in tangents:
                assert a is not None
                if a.shape != values.shape or not np.all(np.isfinite(a)):
                    raise ClipValidationError(
                        f"{self.kind} curve tangents must be finite, shape {values.shape}"
                    )
                _frozen(a)
        else:
            tangents = (None, None)
        if self.kind == "rotation" and self.interpolation != "cubic":
            values = quat.normalize(values)
        object.__setattr__(self, "joints", _frozen(joints))
        object.__setattr__(self, "times", _frozen(times))
        object.__setattr__(self, "values", _frozen(values))
        object.__setattr__(self, "in_tangents", tangents[0])
        object.__setattr__(self, "out_tangents", tangents[1])

    def evaluate(self, t: Array) -> Array:
        """Values (N, T, C) of every track of the group at clip times `t` (N,)."""
        t = np.asarray(t, dtype=np.float64).reshape(-1)
        times, v = self.times, self.values
        k = times.shape[0]
        rotation = self.kind == "rotation"
        if k == 1:
            out = np.broadcast_to(v[0], (t.shape[0], *v.shape[1:])).copy()
            return quat.normalize(out) if rotation else out
        i = np.clip(np.searchsorted(times, t, side="right") - 1, 0, k - 2)
        dt = times[i + 1] - times[i]
        safe_dt = np.where(dt > 0, dt, 1.0)
        s = np.clip((t - times[i]) / safe_dt, 0.0, 1.0)
        s = np.where(dt > 0, s, (t >= times[i + 1]).astype(np.float64))
        a, b = v[i], v[i + 1]  # (N, T, C)
        sc = s[:, None, None]
        if self.interpolation == "step":
            out = np.where(sc >= 1.0, b, a)
            return quat.normalize(out) if rotation else out
        if self.interpolation == "slerp":
            return quat.slerp(a, b, sc)
        if self.interpolation == "linear":
            if rotation:
                return quat.nlerp(a, b, sc)
            return a + (b - a) * sc
        assert self.in_tangents is not None and self.out_tangents is not None
        s2, s3 = sc * sc, sc * sc * sc
        d = dt[:, None, None]
        out = (
            (2 * s3 - 3 * s2 + 1) * a
            + (s3 - 2 * s2 + sc) * d * self.out_tangents[i]
            + (-2 * s3 + 3 * s2) * b
            + (s3 - s2) * d * self.in_tangents[i + 1]
        )
        return quat.normalize(out) if rotation else out

    def scaled(self, factor: float) -> CurveGroup:
        """The group with lengths times `factor` (translations only change)."""
        if self.kind != "translation" or factor == 1.0:
            return self
        tangents = [
            None if a is None else a * factor for a in (self.in_tangents, self.out_tangents)
        ]
        return CurveGroup(
            self.kind,
            self.interpolation,
            self.joints,
            self.times,
            self.values * factor,
            tangents[0],
            tangents[1],
        )


@dataclass(frozen=True)
class Track:
    """One authored track as a reader finds it: joint, kind, interpolation, times (K,),
    values (K, C) and, for cubic, in and out tangents (K, C) per second."""

    joint: int
    kind: str
    interpolation: str
    times: Array
    values: Array
    in_tangents: Array | None = None
    out_tangents: Array | None = None


def groups_of(tracks: Iterable[Track]) -> tuple[CurveGroup, ...]:
    """Tracks merged into groups by kind, interpolation and identical key times (a loop
    over tracks: a glTF file's channels mostly share a few input accessors)."""
    buckets: dict[tuple[str, str, bytes], list[Track]] = {}
    for tr in tracks:
        key = (tr.kind, tr.interpolation, np.asarray(tr.times, dtype=np.float64).tobytes())
        buckets.setdefault(key, []).append(tr)
    out = []
    for (kind, interp, _), members in buckets.items():

        def stack(name: str, members: list[Track] = members) -> Array | None:
            parts = [getattr(m, name) for m in members]
            return None if parts[0] is None else np.stack(parts, axis=1)

        out.append(
            CurveGroup(
                kind,
                interp,
                np.array([m.joint for m in members]),
                members[0].times,
                stack("values"),  # type: ignore[arg-type]
                stack("in_tangents"),
                stack("out_tangents"),
            )
        )
    return tuple(out)


@dataclass(frozen=True, eq=False)
class AuthoredCurves:
    """The file's own curves of a clip (see the module docstring).

    groups: the curve groups (no kind of one joint in two groups). fold_joints (F,) int,
    fold_matrices (F, 3, 4): joint fold_joints[f]'s curves give its transform before the
    reader multiplied it by fold_matrices[f]; fold_base (F, 10): that joint's unfolded
    rotation xyzw, translation, scale where a channel has no curve.
    """

    groups: tuple[CurveGroup, ...]
    fold_joints: Array = None  # type: ignore[assignment]
    fold_matrices: Array = None  # type: ignore[assignment]
    fold_base: Array = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        groups = tuple(self.groups)
        if not groups:
            raise ClipValidationError("authored curves need at least one curve group")
        fj = np.zeros(0, np.int64) if self.fold_joints is None else self.fold_joints
        fj = np.asarray(fj, dtype=np.int64).reshape(-1)
        f = fj.shape[0]
        fm = np.zeros((0, 3, 4)) if self.fold_matrices is None else self.fold_matrices
        fb = np.zeros((0, 10)) if self.fold_base is None else self.fold_base
        fm = np.array(fm, dtype=np.float64)
        fb = np.array(fb, dtype=np.float64)
        if fm.shape != (f, 3, 4) or fb.shape != (f, 10):
            raise ClipValidationError(
                f"folds: matrices {fm.shape} and base {fb.shape} for {f} joints"
            )
        if not (np.all(np.isfinite(fm)) and np.all(np.isfinite(fb))):
            raise ClipValidationError("fold matrices or base values are not finite")
        if len(np.unique(fj)) != f:
            raise ClipValidationError("a joint is folded twice")
        for kind in KINDS:
            joints = [g.joints for g in groups if g.kind == kind]
            if joints and len(np.unique(np.concatenate(joints))) != sum(len(j) for j in joints):
                raise ClipValidationError(f"a joint's {kind} has two curves")
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "fold_joints", _frozen(fj))
        object.__setattr__(self, "fold_matrices", _frozen(fm))
        object.__setattr__(self, "fold_base", _frozen(fb))

    @property
    def max_joint(self) -> int:
        """The largest joint index any curve or fold names."""
        every = [g.joints for g in self.groups] + [self.fold_joints]
        return int(max(int(j.max()) for j in every if j.size))

    def covered(self, kind: str, num_joints: int) -> Array:
        """(J,) bool: the joints whose `kind` the curves give (a folded joint: every kind)."""
        out = np.zeros(num_joints, dtype=bool)
        for g in self.groups:
            if g.kind == kind:
                out[g.joints] = True
        out[self.fold_joints] = True
        return out

    def evaluate(
        self, times: Array, rotations: Array, translations: Array, scales: Array
    ) -> tuple[Array, Array, Array]:
        """Local transforms at clip times `times` (N,): copies of `rotations` (N, J, 4),
        `translations` and `scales` (N, J, 3) (the sampled data's reading) with every track
        the curves give replaced by the curve, folded joints folded."""
        times = np.asarray(times, dtype=np.float64).reshape(-1)
        n = times.shape[0]
        out = {
            "rotation": np.array(rotations, dtype=np.float64),
            "translation": np.array(translations, dtype=np.float64),
            "scale": np.array(scales, dtype=np.float64),
        }
        fj = self.fold_joints
        if fj.size:  # folded joints start from their unfolded base, then take their curves
            base = self.fold_base
            out["rotation"][:, fj] = base[None, :, 0:4]
            out["translation"][:, fj] = base[None, :, 4:7]
            out["scale"][:, fj] = base[None, :, 7:10]
        for g in self.groups:
            out[g.kind][:, g.joints] = g.evaluate(times)
        rot, tr, sc = out["rotation"], out["translation"], out["scale"]
        if fj.size:
            local = qvv_to_matrix(rot[:, fj], tr[:, fj], sc[:, fj])
            full = compose(
                np.broadcast_to(self.fold_matrices, (n, *self.fold_matrices.shape)), local
            )
            rot[:, fj], tr[:, fj], sc[:, fj] = decompose(full)
        return rot, tr, sc

    def scaled(self, factor: float) -> AuthoredCurves:
        """The curves with lengths times `factor` (a change of units)."""
        if factor == 1.0:
            return self
        fm = self.fold_matrices.copy()
        fm[:, :, 3] *= factor
        fb = self.fold_base.copy()
        fb[:, 4:7] *= factor
        return AuthoredCurves(
            tuple(g.scaled(factor) for g in self.groups), self.fold_joints, fm, fb
        )

    def shifted(self, seconds: float) -> AuthoredCurves:
        """The curves with every key `seconds` later."""
        groups = tuple(
            CurveGroup(
                g.kind,
                g.interpolation,
                g.joints,
                g.times + seconds,
                g.values,
                g.in_tangents,
                g.out_tangents,
            )
            for g in self.groups
        )
        return AuthoredCurves(groups, self.fold_joints, self.fold_matrices, self.fold_base)

    # --- as named arrays (a reader's child process hands its clip over this way) -------------
    def to_arrays(self, prefix: str = "curves_") -> dict[str, Array]:
        """Named arrays `from_arrays` reads back (no pickles: numbers and fixed strings)."""
        out: dict[str, Array] = {
            f"{prefix}count": np.array(len(self.groups)),
            f"{prefix}fold_joints": self.fold_joints,
            f"{prefix}fold_matrices": self.fold_matrices,
            f"{prefix}fold_base": self.fold_base,
        }
        for i, g in enumerate(self.groups):
            p = f"{prefix}{i}_"
            out[p + "kind"] = np.array(g.kind)
            out[p + "interpolation"] = np.array(g.interpolation)
            out[p + "joints"] = g.joints
            out[p + "times"] = g.times
            out[p + "values"] = g.values
            if g.in_tangents is not None and g.out_tangents is not None:
                out[p + "in_tangents"] = g.in_tangents
                out[p + "out_tangents"] = g.out_tangents
        return out

    @classmethod
    def from_arrays(
        cls, arrays: Mapping[str, Array], prefix: str = "curves_"
    ) -> AuthoredCurves | None:
        """The curves `to_arrays` wrote, None when there are none."""
        if f"{prefix}count" not in arrays:
            return None
        groups = []
        for i in range(int(arrays[f"{prefix}count"])):
            p = f"{prefix}{i}_"
            groups.append(
                CurveGroup(
                    str(arrays[p + "kind"]),
                    str(arrays[p + "interpolation"]),
                    arrays[p + "joints"],
                    arrays[p + "times"],
                    arrays[p + "values"],
                    arrays[p + "in_tangents"] if p + "in_tangents" in arrays else None,
                    arrays[p + "out_tangents"] if p + "out_tangents" in arrays else None,
                )
            )
        return cls(
            tuple(groups),
            arrays[f"{prefix}fold_joints"],
            arrays[f"{prefix}fold_matrices"],
            arrays[f"{prefix}fold_base"],
        )
