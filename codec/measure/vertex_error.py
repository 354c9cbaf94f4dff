"""The true error: how far every vertex of the skin moves between the raw and the lossy clip.

The codec budgets error on virtual shells (codec.measure.error_metric); nobody checks that estimate
against the real mesh. Here every vertex is skinned by the raw and by the lossy pose
(codec.measure.skinning) at every sample (rounding nearest, the poses `max_error` is measured at)
and between samples (rounding none, the same supersampled times as `error_between`, the raw
clip as the file interpolates it), and the distance between the two is the vertex's true error.

Per joint, the estimate is judged on the vertices the joint drives most (their strongest
influence): `ratio = shell max error / true max error` of those vertices, both at sample
times. A ratio under 1 means the shell under-estimates: the codec believes the joint is
within budget while its skin moves more. codec.measure.measure runs `skin_error` for every
codec alike: the lossy poses between samples come from the codec's decoder.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from codec.measure.mesh_shells import mesh_shell_distances
from codec.measure.skinning import chunks, pose_distances
from codec.model.mesh import Skin, skin_of
from codec.model.sampling import blend_samples, clip_between
from codec.model.transforms import object_space

if TYPE_CHECKING:
    from codec.codecs.base import Decoder
    from codec.model.clip import Clip

Array = np.ndarray


@dataclass(frozen=True, eq=False)
class JointHonesty:
    """Per joint (J,): how its shell error compares with the true error of its skin.

    vertices     vertices whose strongest influence is the joint
    shell_error  max shell error over the samples (result.error)
    vertex_error max true error of its vertices over the samples (NaN without vertices)
    worst_time   time of that vertex error (NaN without vertices)
    ratio        shell_error / vertex_error (inf when the vertices do not move, NaN without)
    mesh_shell   the shell distance the mesh gives (codec.measure.mesh_shells) and its source
    """

    vertices: Array
    shell_error: Array
    vertex_error: Array
    worst_time: Array
    ratio: Array
    mesh_shell: Array
    mesh_shell_source: Array

    @property
    def underestimates(self) -> Array:
        """(J,) True where the shell error is smaller than the true error of the skin."""
        return np.nan_to_num(self.ratio, nan=np.inf) < 1.0

    def order(self) -> Array:
        """Joint indices, under-estimating joints first, then by ratio, joints without
        vertices last: the report's default order."""
        key = np.where(np.isnan(self.ratio), np.inf, self.ratio)
        return np.lexsort((np.arange(len(key)), np.isnan(self.ratio), key))


KEEP_VALUES = 1 << 23  # the whole (S, V) error is kept up to this many values (64 MiB)


class ErrorSummary:
    """What the stats need of an (N, V) error array fed a chunk of rows at a time, in
    memory bounded by V and the 1 % largest values: each vertex's largest error and its
    row, each row's largest, the exact 99th percentile (numpy's linear rule, from the
    largest values only; `ranked` False skips it, for a caller that never asks) and, when
    small enough, the whole array."""

    def __init__(self, rows: int, vertices: int, keep: bool, ranked: bool = True) -> None:
        self.ranked = ranked
        n = rows * vertices
        self.size = n
        self.position = (n - 1) * 0.99
        self.needed = n - int(np.floor(self.position))  # values at and above the percentile
        self.vertex_max = np.full(vertices, -np.inf)
        self.vertex_row = np.zeros(vertices, dtype=np.int64)
        self.row_max = np.zeros(rows)
        self.top = np.zeros(0)
        self.full = np.empty((rows, vertices)) if keep else None

    def add(self, rows: slice, error: Array) -> None:
        self.row_max[rows] = error.max(axis=1)
        best = error.argmax(axis=0)
        value = error[best, np.arange(error.shape[1])]
        better = value > self.vertex_max
        self.vertex_max[better] = value[better]
        self.vertex_row[better] = best[better] + rows.start
        if self.ranked:  # the partition is most of a chunk's cost
            pool = np.concatenate([self.top, error.ravel()])
            if len(pool) > self.needed:
                pool = np.partition(pool, len(pool) - self.needed)[-self.needed :]
            self.top = pool
        if self.full is not None:
            self.full[rows] = error

    def percentile99(self) -> float:
        if not self.ranked:
            raise ValueError("this summary was made without its 99th percentile")
        top = np.sort(self.top)
        lo = top[0]
        hi = top[1] if len(top) > 1 else lo
        return float(lo + (hi - lo) * (self.position - np.floor(self.position)))


@dataclass(frozen=True, eq=False)
class VertexError:
    """The true skin error of one compression.

    At every sample (rounding nearest): `error` (S, V) (None for a clip so long and a mesh
    so large that it would pass KEEP_VALUES), `vertex_max` (V,) each vertex's largest and
    `vertex_sample` (V,) where, `sample_max` (S,) each sample's largest, `p99`. Between
    samples: between_times (N,), between_max (N,) the largest vertex error at each
    supersampled time and between_vertex (V,) each vertex's largest over them (empty when
    supersampling is off). precision (V,) the precision of each vertex's strongest joint
    (its budget); joints the per-joint honesty.
    """

    skin: Skin
    error: Array | None
    vertex_max: Array
    vertex_sample: Array
    sample_max: Array
    p99: float
    between_times: Array
    between_max: Array
    between_vertex: Array
    precision: Array
    joints: JointHonesty
    seconds: float


def blended_object_space(clip: Clip, ks: Array, alphas: Array) -> Array:
    """Object-space matrices (N, J, 3, 4) of poses blending samples ks and ks + 1 by alphas
    (N,) as ACL does (`blend_samples`: component lerp on the shorter arc, normalised; alpha
    0 is the sample)."""
    return object_space(*blend_samples(clip, ks, alphas), clip.skeleton.parents)


def _summarise(
    clip: Clip, lossy: Clip, ks: Array, alphas: Array, skin: Skin, keep: bool
) -> ErrorSummary:
    """The error at the poses blending samples ks, ks + 1 by alphas, a chunk at a time
    (object-space matrices too: a long clip never has them all at once)."""
    summary = ErrorSummary(len(ks), skin.num_vertices, keep)
    for rows in chunks(len(ks), skin):
        raw = blended_object_space(clip, ks[rows], alphas[rows])
        out = blended_object_space(lossy, ks[rows], alphas[rows])
        summary.add(rows, pose_distances(raw, out, skin))
    return summary


def _summarise_decoder(
    clip: Clip, decoder: Decoder, ks: Array, alphas: Array, times: Array, skin: Skin
) -> ErrorSummary:
    """The error between the raw poses at ks + alphas (the file's own curves between samples
    where the clip has them) and the decoder's poses at `times` (N,), a chunk at a time."""
    summary = ErrorSummary(len(ks), skin.num_vertices, keep=False, ranked=False)
    parents = clip.skeleton.parents
    for rows in chunks(len(ks), skin):
        raw = object_space(*clip_between(clip, ks[rows], alphas[rows]), parents)
        out = object_space(*decoder.sample_times(times[rows], "none"), parents)
        summary.add(rows, pose_distances(raw, out, skin))
    return summary


def skin_error(
    clip: Clip,
    lossy: Clip,
    shell_error: Array,
    decoder: Decoder,
    between_times: Array,
    supersample: int,
) -> VertexError | None:
    """The true skin error of a compression (None when the clip has no mesh): at the samples
    from the decoded clip `lossy`, between them (at `between_times`, empty when off) from
    the decoder. `shell_error` (S, J) the shell error at the samples."""
    start = time.perf_counter()
    skin = skin_of(clip.meshes)
    if skin is None:
        return None
    s = clip.num_samples
    keep = s * skin.num_vertices <= KEEP_VALUES
    at = _summarise(clip, lossy, np.arange(s), np.zeros(s), skin, keep)
    times = np.asarray(between_times)
    if times.size:
        ss = max(1, int(supersample))
        k = np.append(np.repeat(np.arange(s - 1), ss), s - 1)
        alpha = np.append(np.tile(np.arange(ss) / ss, s - 1), 0.0)
        between = _summarise_decoder(clip, decoder, k, alpha, times, skin)
        between_max, between_vertex = between.row_max, between.vertex_max
    else:
        between_max, between_vertex = np.zeros(0), np.zeros(0)
    precision = clip.skeleton.precision[skin.dominant_joint]
    honesty = _honesty(clip, shell_error, at.vertex_max, at.vertex_row, skin)
    return VertexError(
        skin,
        at.full,
        at.vertex_max,
        at.vertex_row,
        at.row_max,
        at.percentile99(),
        times,
        between_max,
        between_vertex,
        precision,
        honesty,
        time.perf_counter() - start,
    )


def _honesty(
    clip: Clip, shell_error: Array, vmax: Array, vsample: Array, skin: Skin
) -> JointHonesty:
    num = clip.num_joints
    owner = skin.dominant_joint
    counts = np.bincount(owner, minlength=num)
    joint_max = np.full(num, np.nan)
    worst_time = np.full(num, np.nan)
    for j in np.flatnonzero(counts):  # a loop over joints; vertices stay batched
        mine = np.flatnonzero(owner == j)
        v = mine[np.argmax(vmax[mine])]
        joint_max[j] = vmax[v]
        worst_time[j] = vsample[v] / clip.sample_rate
    shell = np.asarray(shell_error).max(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(joint_max > 0, shell / np.where(joint_max > 0, joint_max, 1.0), np.inf)
    ratio = np.where(np.isnan(joint_max), np.nan, ratio)
    dist, source = mesh_shell_distances(clip)
    return JointHonesty(counts, shell, joint_max, worst_time, ratio, dist, source)


def vertex_stats(ve: VertexError, clip: Clip) -> dict[str, Any]:
    """The stats keys of the true error (added to result.stats when the clip has a mesh)."""
    names = clip.skeleton.names
    skin = ve.skin
    v = int(np.argmax(ve.vertex_max))
    s_ = int(ve.vertex_sample[v])
    joint = int(skin.dominant_joint[v])
    over = ve.vertex_max > ve.precision
    h = ve.joints
    under = [int(j) for j in h.order() if h.underestimates[j]]
    rated = np.flatnonzero(~np.isnan(h.ratio))
    lowest = int(rated[np.argmin(h.ratio[rated])]) if len(rated) else -1
    stats: dict[str, Any] = {
        "num_meshes": len(skin.names),
        "num_vertices": skin.num_vertices,
        "num_triangles": int(len(skin.triangles)),
        "vertex_max_error": float(ve.vertex_max[v]),
        "vertex_error_p99": ve.p99,
        "vertex_worst_joint": joint,
        "vertex_worst_joint_name": names[joint],
        "vertex_worst_time": s_ / clip.sample_rate,
        "vertex_worst_vertex": v,
        "vertex_worst_mesh": skin.names[skin.mesh_of(v)],
        "vertex_precision_met": bool(not np.any(over)),
        "vertices_over_precision": int(np.sum(over)),
        "shell_underestimating_joints": [names[j] for j in under],
        "shell_to_vertex_ratio_min": float(h.ratio[lowest]) if lowest >= 0 else None,
        "shell_to_vertex_ratio_min_joint": names[lowest] if lowest >= 0 else None,
        "vertex_error_time": ve.seconds,
    }
    if ve.between_max.size:
        i = int(np.argmax(ve.between_max))
        vb = int(np.argmax(ve.between_vertex))
        stats["vertex_max_error_between_samples"] = float(ve.between_max[i])
        stats["vertex_worst_time_between_samples"] = float(ve.between_times[i])
        stats["vertex_worst_joint_between_samples"] = int(skin.dominant_joint[vb])
    else:
        stats["vertex_max_error_between_samples"] = stats["vertex_max_error"]
        stats["vertex_worst_time_between_samples"] = stats["vertex_worst_time"]
        stats["vertex_worst_joint_between_samples"] = joint
    return stats
