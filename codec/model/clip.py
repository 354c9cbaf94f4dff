"""The data model: a skeleton and a clip of dense local QVV samples.

Both validate on construction so that everything downstream (codec, views) can trust shapes,
finiteness and hierarchy order without checking again.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from codec.errors import ClipValidationError
from codec.model import quat, topology
from codec.model.additive import AdditiveBase
from codec.model.authored_curves import AuthoredCurves
from codec.model.limits import MAX_VALUE
from codec.model.mesh import SkinnedMesh
from codec.model.transforms import object_space
from codec.model.units import Units

Array = np.ndarray

DEFAULT_PRECISION = 0.01  # clip units (cm for ACL's clips)
DEFAULT_SHELL_DISTANCE = 3.0
UNIT_QUAT_TOLERANCE = 1e-3
UNIT_EXACT = 2.0**-50  # a float64 unit quaternion's length is within this of 1


def _first_bad(mask: Array) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(mask)[0])


@functools.lru_cache(maxsize=64)
def _depths_of(parents: bytes) -> Array:
    depth = topology.depths(np.frombuffer(parents, dtype=np.int64))
    depth.setflags(write=False)
    return depth


@dataclass(frozen=True, eq=False)
class Skeleton:
    """Joint hierarchy, bind pose and per-joint precision settings.

    names (J,), parents (J,) with -1 for roots and every parent before its children,
    bind_rotations (J, 4) xyzw, bind_translations (J, 3), bind_scales (J, 3),
    precision (J,) and shell_distance (J,) in clip units.
    """

    names: tuple[str, ...]
    parents: Array
    bind_rotations: Array
    bind_translations: Array
    bind_scales: Array
    precision: Array
    shell_distance: Array

    def __post_init__(self) -> None:
        names = tuple(str(n) for n in self.names)
        n = len(names)
        object.__setattr__(self, "names", names)
        if n == 0:
            raise ClipValidationError("a skeleton needs at least one joint")
        parents = np.asarray(self.parents, dtype=np.int64).reshape(-1)
        if parents.shape != (n,):
            raise ClipValidationError(f"parents has {parents.size} entries for {n} joints")
        bad = (parents >= np.arange(n)) | (parents < -1)
        if np.any(bad):
            j = int(np.flatnonzero(bad)[0])
            raise ClipValidationError(
                f"joint {j} ({names[j]!r}) has parent {parents[j]}: parents must come first"
            )
        parents.setflags(write=False)
        object.__setattr__(self, "parents", parents)
        for attr, width in (("bind_rotations", 4), ("bind_translations", 3), ("bind_scales", 3)):
            a = np.array(getattr(self, attr), dtype=np.float64)
            if a.shape != (n, width):
                raise ClipValidationError(f"{attr} has shape {a.shape}, expected {(n, width)}")
            if not np.all(np.isfinite(a)):
                j = _first_bad(~np.isfinite(a))[0]
                raise ClipValidationError(f"{attr} of joint {j} ({names[j]!r}) is not finite")
            if attr == "bind_rotations":
                norm = np.sqrt(np.sum(a * a, axis=-1, keepdims=True))
                if np.any(np.abs(norm - 1.0) > UNIT_QUAT_TOLERANCE):
                    j = _first_bad(np.abs(norm[:, 0] - 1.0) > UNIT_QUAT_TOLERANCE)[0]
                    raise ClipValidationError(
                        f"bind rotation of joint {j} ({names[j]!r}) is not a unit quaternion"
                    )
                a /= np.where(np.abs(norm - 1.0) > UNIT_EXACT, norm, 1.0)
            a.setflags(write=False)
            object.__setattr__(self, attr, a)
        for attr in ("precision", "shell_distance"):
            object.__setattr__(self, attr, self._per_joint(attr, getattr(self, attr)))

    def _per_joint(self, attr: str, value: Array | float) -> Array:
        """A validated read-only (J,) copy of a per-joint setting (precision, shell distance)."""
        n = len(self.names)
        one = isinstance(value, float | int) and not isinstance(value, bool)
        if one and 0 < value <= MAX_VALUE:  # one valid number (every encode sets one)
            a = np.empty(n)
            a.fill(value)
            a.setflags(write=False)
            return a
        if isinstance(value, np.ndarray) and value.shape == (n,):
            a = value.astype(np.float64)  # a copy; broadcast_to's view cost more than it
        else:
            a = np.array(np.broadcast_to(value, (n,)), dtype=np.float64)
        if not (a.min() > 0 and a.max() <= MAX_VALUE):  # NaN fails both, infinities one
            ok = np.isfinite(a) & (a > 0) & (a <= MAX_VALUE)
            j = _first_bad(~ok)[0]
            raise ClipValidationError(
                f"{attr} of joint {j} ({self.names[j]!r}) is {a[j]}: it must be > 0 and at "
                f"most {MAX_VALUE:.3g}"
            )
        a.setflags(write=False)
        return a

    @classmethod
    def create(
        cls,
        names: list[str] | tuple[str, ...],
        parents: Array | list[int],
        bind_rotations: Array | None = None,
        bind_translations: Array | None = None,
        bind_scales: Array | None = None,
        precision: float | Array = DEFAULT_PRECISION,
        shell_distance: float | Array = DEFAULT_SHELL_DISTANCE,
    ) -> Skeleton:
        """Skeleton with identity defaults for whatever is not given."""
        n = len(names)
        return cls(
            names=tuple(names),
            parents=np.asarray(parents),
            bind_rotations=quat.identity((n,)) if bind_rotations is None else bind_rotations,
            bind_translations=np.zeros((n, 3)) if bind_translations is None else bind_translations,
            bind_scales=np.ones((n, 3)) if bind_scales is None else bind_scales,
            precision=np.broadcast_to(precision, (n,)),
            shell_distance=np.broadcast_to(shell_distance, (n,)),
        )

    @property
    def num_joints(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        """Joint index by exact name (KeyError names the joint when absent)."""
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"no joint named {name!r}") from None

    # --- topology (codec.model.topology), computed once per skeleton ---------------------------
    def children(self, joint: int) -> Array:
        """Indices of the joint's children, ascending."""
        return topology.children(self.parents, joint)

    @cached_property
    def depths(self) -> Array:
        """(J,) number of ancestors of every joint (0 for a root); read-only, shared by every
        skeleton of the same hierarchy (each compression's settings make a fresh one)."""
        parents = np.ascontiguousarray(self.parents, dtype=np.int64)
        return _depths_of(parents.tobytes())

    def depth_levels(self) -> list[Array]:
        """Joint indices grouped by depth, roots first (a level composes in one batch)."""
        return self._depth_levels

    @cached_property
    def _depth_levels(self) -> list[Array]:
        return topology.depth_levels(self.parents)

    def longest_chain(self) -> int:
        """Number of joints on the longest root-to-leaf chain."""
        return self._longest_chain

    @cached_property
    def _longest_chain(self) -> int:
        return int(self.depths.max()) + 1

    def chains(self) -> list[list[int]]:
        """Every joint's chain, its root first and the joint last."""
        return topology.chains(self.parents)

    def subtrees(self) -> list[list[int]]:
        """Every joint's subtree, the joint first and its descendants in index order."""
        return topology.subtrees(self.parents)

    def hierarchy_order(self) -> Array:
        """(J,) joints depth first, children under their parent in index order."""
        return self._hierarchy_order

    @cached_property
    def _hierarchy_order(self) -> Array:
        order = topology.hierarchy_order(self.parents)
        order.setflags(write=False)
        return order

    def _copy(self) -> Skeleton:
        """A shallow copy sharing this skeleton's topology caches, its depths and longest
        chain computed here first (every compression's settings copy asks for them: once
        per skeleton)."""
        self._longest_chain  # noqa: B018 (cached properties: computed into self.__dict__)
        out = object.__new__(type(self))  # copy.copy, without its reduce protocol's detour
        out.__dict__.update(self.__dict__)
        return out

    def with_settings_of(self, other: Skeleton) -> Skeleton:
        """Copy with `other`'s per-joint precision and shell distance (the same number of
        joints), validated when `other` was made: not again (every bind mode of every
        encode makes one)."""
        if len(other.names) != len(self.names):
            raise ValueError(f"{len(other.names)} joints' settings for {len(self.names)} joints")
        out = self._copy()
        object.__setattr__(out, "precision", other.precision)
        object.__setattr__(out, "shell_distance", other.shell_distance)
        return out

    def with_ancestors(self, joints: Array) -> Array:
        """(J,) bool: the given joints (indices or a mask) and all their ancestors."""
        return topology.with_ancestors(self.parents, joints)

    def with_settings(
        self, precision: Array | float | None = None, shell_distance: Array | float | None = None
    ) -> Skeleton:
        """Copy with new per-joint precision and/or shell distance. Only those are validated
        again: the joints, hierarchy and bind pose are this skeleton's, already validated (a
        codec re-tunes precisions many times per clip), and so are its cached topology."""
        out = self._copy()
        if precision is not None:
            object.__setattr__(out, "precision", self._per_joint("precision", precision))
        if shell_distance is not None:
            value = self._per_joint("shell_distance", shell_distance)
            object.__setattr__(out, "shell_distance", value)
        return out


def exactly_unit(rot: Array, norm: Array | None = None) -> Array:
    """Rotations (..., 4) as a Clip stores them: unit in float64, so float32 sources and
    decoded files mean one rotation each however a reader turns them into matrices. Those
    whose length `norm (...)` is off 1 by more than UNIT_EXACT are divided by it (in a copy);
    the others, already unit, are left bit for bit (the very array when all are)."""
    if norm is None:
        norm = np.sqrt(np.einsum("...i,...i->...", rot, rot))
    off = np.abs(norm - 1.0) > UNIT_EXACT
    if np.any(off):
        rot = rot.copy()
        rot[off] /= norm[off][:, None]
    return rot


@dataclass(eq=False)
class Clip:
    """A skeleton animated by dense local transforms at a uniform sample rate.

    rotations (S, J, 4) xyzw, translations (S, J, 3), scales (S, J, 3), all float64.
    `warnings` collects what a reader tolerated (e.g. a frame count that disagreed);
    `units` what the file declared about units and axes and what the reader chose (None when
    the clip was not read from a file); `meshes` the skinned meshes bound to the skeleton
    (codec.model.mesh; empty for formats and files without a skin). `euler_orders`: per joint
    the order of the file's Euler rotation channels ("ZXY": Z outermost), empty when the file
    stores quaternions or matrices, so views can show angles as the animator keyed them.
    `curves`: the file's own keys and interpolation (codec.model.authored_curves), which give
    the raw pose between samples; None for sampled data (the samples are the data, blended
    between as the codec does). Replacing the samples drops them unless new ones are given.
    `additive`: the base an additive clip plays on (codec.model.additive; ACL SJSON's
    `base_tracks`); the samples are then the applied pose, what a game sees and what every
    error is measured on, and codecs store the additive alone.
    """

    skeleton: Skeleton
    sample_rate: float
    rotations: Array
    translations: Array
    scales: Array
    looping: bool = False
    name: str = ""
    warnings: list[str] = field(default_factory=list)
    units: Units | None = None
    meshes: tuple[SkinnedMesh, ...] = ()
    euler_orders: tuple[str, ...] = ()
    curves: AuthoredCurves | None = None
    additive: AdditiveBase | None = None

    def __post_init__(self) -> None:
        sk = self.skeleton
        names = sk.names
        rate = float(self.sample_rate)
        if not (np.isfinite(rate) and rate > 0):
            raise ClipValidationError(f"sample rate {self.sample_rate} must be a positive number")
        self.sample_rate = rate
        j = sk.num_joints
        # float64 arrays are taken as they are (no copy): a clip never writes to them
        rot = np.asarray(self.rotations, dtype=np.float64)
        if rot.ndim != 3 or rot.shape[1:] != (j, 4):
            raise ClipValidationError(f"rotations have shape {rot.shape}, expected (S, {j}, 4)")
        s = rot.shape[0]
        if s < 1:
            raise ClipValidationError("a clip needs at least one sample")
        tr = np.asarray(self.translations, dtype=np.float64)
        sc = np.asarray(self.scales, dtype=np.float64)
        for label, a in (("translations", tr), ("scales", sc)):
            if a.shape != (s, j, 3):
                raise ClipValidationError(f"{label} have shape {a.shape}, expected {(s, j, 3)}")
        for label, a in (("rotation", rot), ("translation", tr), ("scale", sc)):
            if not np.isfinite(a).all():  # the mask only when something is wrong
                si, ji, _ = _first_bad(~np.isfinite(a))
                raise ClipValidationError(
                    f"{label} of joint {ji} ({names[ji]!r}) at sample {si} is not finite "
                    f"({a[si, ji].tolist()})"
                )
        norm = np.sqrt(np.einsum("...i,...i->...", rot, rot))
        norm_err = np.abs(norm - 1.0)
        if norm_err.max() > UNIT_QUAT_TOLERANCE:
            si, ji = _first_bad(norm_err > UNIT_QUAT_TOLERANCE)
            raise ClipValidationError(
                f"rotation of joint {ji} ({names[ji]!r}) at sample {si} is not a unit quaternion "
                f"(length {1 + norm_err[si, ji]:.6g})"
            )
        rot = exactly_unit(rot, norm)
        self.rotations, self.translations, self.scales = rot, tr, sc
        self.looping = bool(self.looping)
        self.meshes = tuple(self.meshes)
        for m in self.meshes:
            if m.palette_joint.max() >= j:
                raise ClipValidationError(
                    f"mesh {m.name!r} is bound to joint {int(m.palette_joint.max())}, the "
                    f"skeleton has {j}"
                )
        if self.curves is not None and self.curves.max_joint >= j:
            raise ClipValidationError(
                f"authored curves name joint {self.curves.max_joint}, the skeleton has {j}"
            )

    @property
    def num_samples(self) -> int:
        return int(self.rotations.shape[0])

    @property
    def num_joints(self) -> int:
        return self.skeleton.num_joints

    @property
    def duration(self) -> float:
        return (self.num_samples - 1) / self.sample_rate

    @property
    def has_scale(self) -> bool:
        return bool(np.any(self.scales != 1.0) or np.any(self.skeleton.bind_scales != 1.0))

    def object_space(self) -> Array:
        """Object-space matrices `(S, J, 3, 4)` of every sample."""
        return object_space(self.rotations, self.translations, self.scales, self.skeleton.parents)

    def replace(self, **changes: object) -> Clip:
        """Copy with some fields changed (validated again). New samples or a new rate
        without new `curves` drop the curves: they described the old samples."""
        resampled = {"rotations", "translations", "scales", "sample_rate"} & changes.keys()
        if resampled and "curves" not in changes:
            changes["curves"] = None
        return replace(self, **changes)

    def with_skeleton(self, skeleton: Skeleton) -> Clip:
        """Copy under `skeleton`, which may only change per-joint settings (precision, shell
        distance): other joints, parents or bind pose would make the samples mean another pose."""
        old = self.skeleton
        same = skeleton.names == old.names and all(  # `is`: a with_settings copy's own arrays
            getattr(skeleton, a) is getattr(old, a)
            or np.array_equal(getattr(skeleton, a), getattr(old, a))
            for a in ("parents", "bind_rotations", "bind_translations", "bind_scales")
        )
        if not same:
            raise ValueError("the skeleton must have the clip's joints, parents and bind pose")
        return self._under(skeleton)

    def with_skeleton_settings(
        self, precision: Array | float | None = None, shell_distance: Array | float | None = None
    ) -> Clip:
        return self._under(self.skeleton.with_settings(precision, shell_distance))

    def _under(self, skeleton: Skeleton) -> Clip:
        """This clip under `skeleton` (the same joints and bind pose, checked by the caller):
        the same samples, meshes and curves, valid as they were, so not validated again."""
        out = object.__new__(type(self))  # copy.copy, without its reduce protocol's detour
        out.__dict__.update(self.__dict__)
        out.skeleton = skeleton
        return out
