"""The compression pipeline: clip in, .ssc bytes, decoded clip, errors and stats out.

Order (ACL 2.1): dominant shells, loop detection, constant / default sub-tracks, rotation
layouts, clip ranges, segments with 8-bit segment ranges, bit rates per segment
(codec.optimizer), packing (codec.ssc_format). The lossy clip is then decoded from the
written bytes, so what we report is what a reader of the file gets.

When a joint cannot meet its precision, the constant and default sub-tracks on its chain
that are not exactly constant in the raw data are freed (made animated) and the clip is
encoded again, at most twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from codec import rotation_layout, ssc_format
from codec.affine import pack_qvv
from codec.bit_rates import TrackKind, segment_cost_bits
from codec.clip import Clip
from codec.constant_tracks import detect_kinds, exact_kinds
from codec.decoder import CompressedClip
from codec.error_metric import between_errors, clip_errors, shell_error
from codec.errors import Cancelled
from codec.optimizer import Hierarchy, SegmentProblem, optimize_segment
from codec.quantize import (
    F32,
    clip_range,
    constant_value,
    decode_params,
    normalize,
    segment_range,
    segment_range_decode,
    to_segment_space,
)
from codec.result import CompressionResult, DominantShells
from codec.segments import segment_table
from codec.settings import CompressionSettings, resolve_level
from codec.shells import dominant_shells
from codec.stats import build_stats
from codec.transforms import object_space
from codec.vertex_error import attach_vertex_error

Array = np.ndarray
Progress = Callable[[float, str], None]

__all__ = ["CompressionResult", "CompressionSettings", "compress"]

_ANIMATED = int(TrackKind.ANIMATED)


def _check(cancel: Callable[[], bool] | None) -> None:
    if cancel is not None and cancel():
        raise Cancelled("compression cancelled")


@dataclass(eq=False)
class _Clip:
    """The raw clip as the kernels take it: QVV rows (S, J, 10) and the hierarchy."""

    qvv: Array
    binds: tuple[Array, Array, Array]
    hierarchy: Hierarchy
    shell: Array
    precision: Array
    sample_rate: float

    @classmethod
    def of(cls, clip: Clip) -> _Clip:
        sk = clip.skeleton
        c = np.ascontiguousarray
        return cls(
            qvv=pack_qvv(clip.rotations, clip.translations, clip.scales),
            binds=(c(sk.bind_rotations), c(sk.bind_translations), c(sk.bind_scales)),
            hierarchy=Hierarchy.of(sk.parents),
            shell=c(sk.shell_distance, dtype=np.float64),
            precision=c(sk.precision, dtype=np.float64),
            sample_rate=clip.sample_rate,
        )


def compress(
    clip: Clip,
    settings: CompressionSettings | None = None,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
) -> CompressionResult:
    """Compress a clip; see the module docstring. Raises Cancelled when `cancel()` is True."""
    start = time.perf_counter()
    settings = settings or CompressionSettings()
    clip = settings.apply(clip)
    level = resolve_level(settings.level, clip)
    report = progress or (lambda f, m: None)

    def check() -> None:
        _check(cancel)

    sk = clip.skeleton
    S, J = clip.num_samples, clip.num_joints
    report(0.0, "analysing")
    raw = _Clip.of(clip)
    parents = raw.hierarchy.parents
    dom_dist, dom_prec = dominant_shells(raw.qvv, parents, raw.shell, raw.precision)
    check()

    wrap = False
    if settings.loop_optimization and S >= 2:
        q = raw.qvv[[0, -1]]
        ends = object_space(q[..., :4], q[..., 4:7], q[..., 7:], parents)
        wrap = bool(np.all(shell_error(ends[0], ends[1], raw.shell) <= raw.precision))
    stored = S - 1 if wrap else S
    table = segment_table(stored)

    exact = exact_kinds(raw.qvv, raw.binds)
    forced = np.zeros((J, 3), dtype=bool)
    for attempt in range(3):
        kinds, fixed, const_dropped = detect_kinds(
            raw.qvv, raw.binds, dom_dist, dom_prec, forced, exact
        )
        enc, seg_shells, stuck = _encode(
            raw, kinds, fixed, const_dropped, table, wrap, stored, level, report, check, attempt
        )
        if len(stuck) == 0:
            break
        # a constant or default sub-track on a failing chain is the only thing left to free,
        # unless the raw data holds it exactly constant (animating it cannot help)
        chain_mask = np.zeros(J, dtype=bool)
        for j in stuck:
            while j >= 0:
                chain_mask[j] = True
                j = parents[j]
        newly = chain_mask[:, None] & (kinds != _ANIMATED) & ~forced & (exact == _ANIMATED)
        if not np.any(newly):
            break
        forced |= newly

    report(0.95, "packing")
    data, compressed_size = ssc_format.write(enc, sk if settings.include_metadata else None)
    compressed = CompressedClip(ssc_format.read(data), sk)
    lossy = compressed.decode_source(clip.name)
    if clip.looping and not lossy.looping:
        lossy = lossy.replace(looping=True)
    error = clip_errors(clip, lossy)
    times_b, error_b = between_errors(clip, lossy, settings.supersample)
    anim = enc.animated
    bit_rates = np.full((len(table), J, 3), -1, dtype=np.int16)
    bit_rates[:, anim[:, 0], anim[:, 1]] = enc.bit_rates
    shells = DominantShells(dom_dist, dom_prec, seg_shells[0], seg_shells[1])
    elapsed = time.perf_counter() - start
    result = CompressionResult(
        clip=clip,
        settings=settings,
        data=data,
        compressed=compressed,
        lossy=lossy,
        kinds=kinds,
        bit_rates=bit_rates,
        segments=table,
        dominant_shells=shells,
        error=error,
        error_between_times=times_b,
        error_between=error_b,
    )
    result.stats = build_stats(result, level, compressed_size, elapsed)
    attach_vertex_error(result)  # the true skin error, when the clip has meshes
    report(1.0, "done")
    return result


def _stored_values(
    raw: _Clip, anim: Array, seg_dropped: Array, seg_of: Array, stored: int
) -> Array:
    """(stored, Ka, 4) float32: rotations signed so each segment's dropped component is
    >= 0, vectors x, y, z (and 0)."""
    values = np.zeros((stored, len(anim), 4), dtype=F32)
    for k, (lo, hi) in enumerate(((0, 4), (4, 7), (7, 10))):
        sel = np.flatnonzero(anim[:, 1] == k)
        if not len(sel):
            continue
        v = raw.qvv[:stored, anim[sel, 0], lo:hi]
        if k == 0:
            v = rotation_layout.signed(v, seg_dropped[seg_of][:, sel])
            values[:, sel] = v
        else:
            values[:, sel, :3] = v
    return values


def _encode(
    raw: _Clip,
    kinds: Array,
    fixed: tuple[Array, Array, Array],
    const_dropped: Array,
    table: Array,
    wrap: bool,
    stored: int,
    level: str,
    report: Progress,
    check: Callable[[], None],
    attempt: int,
) -> tuple[ssc_format.EncodedClip, tuple[Array, Array], Array]:
    """Layouts, ranges, segments and bit rates for given sub-track kinds -> EncodedClip."""
    h = raw.hierarchy
    S, J = raw.qvv.shape[:2]
    G = len(table)
    anim = np.argwhere(kinds == _ANIMATED)  # (Ka, 2), joint-major: the stored order
    consts = np.argwhere(kinds == TrackKind.CONSTANT)
    ka = len(anim)
    seg_of = np.repeat(np.arange(G), table[:, 1])

    is_rot = anim[:, 1] == 0
    clip_layout = np.full(ka, -1, dtype=np.int64)
    seg_dropped = np.full((G, ka), -1, dtype=np.int64)
    lay, per_seg = rotation_layout.choose(raw.qvv[:stored, anim[is_rot, 0], :4], table)
    clip_layout[is_rot] = lay
    seg_dropped[:, is_rot] = per_seg
    comps = rotation_layout.kept_components(seg_dropped)  # (G, Ka, 3)
    values = _stored_values(raw, anim, seg_dropped, seg_of, stored)
    kept = np.zeros((G, ka, 4), dtype=bool)
    np.put_along_axis(kept, comps, True, axis=-1)
    clip_min, clip_ext = clip_range(values, kept[seg_of])
    norm = normalize(values, clip_min, clip_ext)

    const_vals = np.zeros((len(consts), 3), dtype=F32)
    const_drop = np.full(len(consts), -1, dtype=np.int64)
    for i, (j, k) in enumerate(consts):
        if k == 0:
            d = int(const_dropped[j])
            q = rotation_layout.signed(raw.qvv[0, j, :4], np.array(d))
            const_vals[i] = q[rotation_layout.kept_components(np.array(d))]
            const_drop[i] = d
        else:
            const_vals[i] = raw.qvv[0, j, 4:7] if k == 1 else raw.qvv[0, j, 7:]

    # the optimiser takes tracks kind-major (rotations, translations, scales)
    order = np.argsort(anim[:, 1], kind="stable")
    track_joint = np.ascontiguousarray(anim[order, 0])
    track_kind = np.ascontiguousarray(anim[order, 1])
    base = pack_qvv(*fixed)

    multi = G > 1
    bit_rates = np.zeros((G, ka), dtype=np.uint8)
    seg_min = np.zeros((G, ka, 3), dtype=np.uint8)
    seg_ext = np.zeros((G, ka, 3), dtype=np.uint8)
    seg_const = np.zeros((G, ka, 3), dtype=np.uint16)
    samples: list[Array] = []
    seg_dist = np.zeros((G, J))
    seg_prec = np.zeros((G, J))
    stuck_all = np.zeros(J, dtype=bool)
    for g, (first, n) in enumerate(table):
        check()
        report(0.05 + 0.9 * (attempt * G + g) / (3 * G if attempt else G), f"segment {g + 1}/{G}")
        rows = np.arange(n)
        raw_rows = np.arange(first, first + n)
        if wrap and g == 0:  # the dropped last sample decodes as sample 0
            rows = np.append(rows, 0)
            raw_rows = np.append(raw_rows, S - 1)
        sd, sp = dominant_shells(raw.qvv, h.parents, raw.shell, raw.precision, rows=raw_rows)
        seg_dist[g], seg_prec[g] = sd, sp
        cg = comps[g][None]
        nseg = np.take_along_axis(norm[first : first + n], cg, axis=2)
        vseg = np.take_along_axis(values[first : first + n], cg, axis=2)
        if multi and ka:
            seg_min[g], seg_ext[g] = segment_range(nseg)
            smin, sext = segment_range_decode(seg_min[g], seg_ext[g])
            unit = to_segment_space(nseg, smin, sext)
        else:
            smin = np.zeros((ka, 3), dtype=F32)
            sext = np.ones((ka, 3), dtype=F32)
            unit = nseg
        if ka:
            seg_const[g] = constant_value(nseg)
        c = np.ascontiguousarray
        lay, dec = decode_params(
            comps[g][order],
            seg_dropped[g][order],
            clip_min[order],
            clip_ext[order],
            smin[order],
            sext[order],
            seg_const[g][order],
        )
        problem = SegmentProblem(
            rows=rows.astype(np.int64),
            raw=c(raw.qvv[raw_rows]),
            base=base,
            track_joint=track_joint,
            track_kind=track_kind,
            unit=c(unit[:, order]),
            raw_values=c(vseg[:, order]),
            lay=lay,
            dec=dec,
            cost=segment_cost_bits(int(n), multi),
            shell=raw.shell,
            precision=raw.precision,
            dom_dist=sd,
            dom_prec=sp,
        )
        rates, stuck, q = optimize_segment(problem, h, level)
        stuck_all |= stuck
        bit_rates[g, order] = rates
        qs = np.empty_like(q)
        qs[:, order] = q
        samples.append(qs)
    enc = ssc_format.EncodedClip(
        num_joints=J,
        num_samples=stored,
        sample_rate=raw.sample_rate,
        wrap=wrap,
        kinds=kinds,
        constants=const_vals,
        const_dropped=const_drop,
        clip_layout=clip_layout,
        clip_min=clip_min,
        clip_extent=clip_ext,
        segment_sizes=table[:, 1].copy(),
        bit_rates=bit_rates,
        seg_dropped=seg_dropped,
        seg_min=seg_min,
        seg_extent=seg_ext,
        seg_constant=seg_const,
        samples=samples,
    )
    return enc, (seg_dist, seg_prec), np.flatnonzero(stuck_all)
