"""The compression pipeline: clip in, .ssc bytes, decoded clip, errors and stats out.

Order (ACL 2.1): dominant shells, loop detection, constant / default sub-tracks, clip
ranges, segments with 8-bit segment ranges, bit rates per segment (codec.optimizer),
packing (codec.ssc_format). The lossy clip is then decoded from the written bytes, so what
we report is what a reader of the file gets.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from codec import quat, ssc_format
from codec.clip import Clip
from codec.decoder import CompressedClip
from codec.error_metric import shell_error
from codec.errors import Cancelled
from codec.optimizer import SegmentOptimizer, SegmentProblem
from codec.quantize import (
    F32,
    clip_range,
    constant_value,
    dequantize,
    encode,
    normalize,
    positive_w,
    rebuild_rotation,
    segment_range,
    segment_range_decode,
)
from codec.result import (
    NUM_BIT_RATES,
    CompressionResult,
    DominantShells,
    TrackKind,
)
from codec.segments import segment_table
from codec.settings import CompressionSettings, resolve_level
from codec.shells import dominant_shells
from codec.stats import build_stats
from codec.transforms import depth_levels, local_to_object, qvv_to_matrix

Array = np.ndarray
Progress = Callable[[float, str], None]

__all__ = ["CompressionResult", "CompressionSettings", "compress"]


def _stored_constant(values: Array, kind: int) -> Array:
    """What a constant sub-track decodes to: sample 0 as float32 (rotation W rebuilt)."""
    v = values.astype(F32)
    if kind == 0:
        return rebuild_rotation(positive_w(v)[..., :3]).astype(np.float64)
    return v.astype(np.float64)


def detect_kinds(
    clip: Clip, raw_local: Array, dom_dist: Array, dom_prec: Array, forced: Array
) -> tuple[Array, list[Array]]:
    """(J, 3) TrackKind per sub-track, and the fixed values (J, 4|3) used for each kind.

    A sub-track is default (bind value) or constant (sample 0) when replacing it keeps the
    local error on the dominant shell within the dominant precision at every sample. The
    three kinds are decided in turn, each on top of the earlier replacements, so a joint's
    combined replacement is checked too. `forced (J, 3)` bool keeps sub-tracks animated.
    """
    sk = clip.skeleton
    arrays = [clip.rotations, clip.translations, clip.scales]
    current = [a.copy() for a in arrays]
    binds = [sk.bind_rotations, sk.bind_translations, sk.bind_scales]
    kinds = np.full((clip.num_joints, 3), TrackKind.ANIMATED, dtype=np.uint8)
    fixed = [b.copy() for b in binds]
    for k in range(3):
        options = [
            (TrackKind.DEFAULT, binds[k]),
            (TrackKind.CONSTANT, _stored_constant(arrays[k][0], k)),
        ]
        decided = forced[:, k].copy()
        for kind, value in options:
            trial = list(current)
            trial[k] = np.broadcast_to(value[None], arrays[k].shape)
            err = shell_error(raw_local, qvv_to_matrix(*trial), dom_dist).max(axis=0)
            ok = (err <= dom_prec) & ~decided
            kinds[ok, k] = kind
            fixed[k][ok] = value[ok]
            current[k][:, ok] = value[ok]
            decided |= ok
    return kinds, fixed


def _check(cancel: Callable[[], bool] | None) -> None:
    if cancel is not None and cancel():
        raise Cancelled("compression cancelled")


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
    parents = sk.parents
    levels = depth_levels(parents)
    S, J = clip.num_samples, clip.num_joints  # noqa: N806
    report(0.0, "analysing")
    raw_local = qvv_to_matrix(clip.rotations, clip.translations, clip.scales)
    raw_obj = local_to_object(raw_local, parents, levels)
    dom_dist, dom_prec = dominant_shells(raw_local, parents, sk.shell_distance, sk.precision)
    check()

    wrap = False
    if settings.loop_optimization and S >= 2:
        loop_err = shell_error(raw_obj[0], raw_obj[-1], sk.shell_distance)
        wrap = bool(np.all(loop_err <= sk.precision))
    stored = S - 1 if wrap else S
    table = segment_table(stored)
    G = len(table)  # noqa: N806

    forced = np.zeros((J, 3), dtype=bool)
    for attempt in range(3):
        kinds, fixed = detect_kinds(clip, raw_local, dom_dist, dom_prec, forced)
        enc, seg_shells, stuck = _encode(
            clip, kinds, fixed, table, wrap, stored, raw_local, raw_obj, levels,
            level, report, check, attempt,
        )  # fmt: skip
        if len(stuck) == 0:
            break
        # a constant or default sub-track on a failing chain is the only thing left to free
        chain_mask = np.zeros(J, dtype=bool)
        for j in stuck:
            while j >= 0:
                chain_mask[j] = True
                j = parents[j]
        newly = chain_mask[:, None] & (kinds != TrackKind.ANIMATED) & ~forced
        if not np.any(newly):
            break
        forced |= newly

    report(0.95, "packing")
    data, compressed_size = ssc_format.write(enc, sk if settings.include_metadata else None)
    compressed = CompressedClip(ssc_format.read(data), sk)
    lossy = compressed.decode_source(clip.name)
    if clip.looping and not lossy.looping:
        lossy = lossy.replace(looping=True)
    lossy_obj = lossy.object_space()
    error = shell_error(raw_obj, lossy_obj, sk.shell_distance)
    times_b, error_b = _error_between(clip, lossy, settings.supersample)
    anim = enc.animated
    bit_rates = np.full((G, J, 3), -1, dtype=np.int16)
    bit_rates[:, anim[:, 0], anim[:, 1]] = enc.bit_rates
    shells = DominantShells(dom_dist, dom_prec, seg_shells[0], seg_shells[1])
    elapsed = time.perf_counter() - start
    result = CompressionResult(
        clip=clip, settings=settings, data=data, compressed=compressed, lossy=lossy,
        kinds=kinds, bit_rates=bit_rates, segments=table, dominant_shells=shells,
        error=error, error_between_times=times_b, error_between=error_b,
    )  # fmt: skip
    result.stats = build_stats(result, level, compressed_size, elapsed)
    report(1.0, "done")
    return result


def _error_between(clip: Clip, lossy: Clip, supersample: int) -> tuple[Array, Array]:
    """Errors (N, J) at `supersample` times per sample interval, rounding none."""
    S = clip.num_samples  # noqa: N806
    if supersample <= 0 or S < 2:
        return np.zeros(0), np.zeros((0, clip.num_joints))
    frac = np.arange(supersample) / supersample
    k = np.repeat(np.arange(S - 1), supersample)
    alpha = np.tile(frac, S - 1)
    k = np.append(k, S - 2)
    alpha = np.append(alpha, 1.0)
    times = (k + alpha) / clip.sample_rate
    a = alpha[:, None, None]

    def pose_at(c: Clip) -> Array:
        rot = quat.nlerp(c.rotations[k], c.rotations[k + 1], a)
        tr = c.translations[k] + (c.translations[k + 1] - c.translations[k]) * a
        sc = c.scales[k] + (c.scales[k + 1] - c.scales[k]) * a
        return local_to_object(qvv_to_matrix(rot, tr, sc), c.skeleton.parents)

    err = shell_error(pose_at(clip), pose_at(lossy), clip.skeleton.shell_distance)
    return times, err


def _encode(
    clip: Clip,
    kinds: Array,
    fixed: list[Array],
    table: Array,
    wrap: bool,
    stored: int,
    raw_local: Array,
    raw_obj: Array,
    levels: list[Array],
    level: str,
    report: Progress,
    check: Callable[[], None],
    attempt: int,
) -> tuple[ssc_format.EncodedClip, tuple[Array, Array], Array]:
    """Ranges, segments and bit rates for given sub-track kinds -> EncodedClip."""
    sk = clip.skeleton
    S, J = clip.num_samples, clip.num_joints  # noqa: N806
    G = len(table)  # noqa: N806
    anim = np.argwhere(kinds == TrackKind.ANIMATED)  # (Ka, 2)
    consts = np.argwhere(kinds == TrackKind.CONSTANT)
    rot_pos = positive_w(clip.rotations[:stored])
    components = [rot_pos[..., :3], clip.translations[:stored], clip.scales[:stored]]
    values = np.zeros((stored, len(anim), 3), dtype=F32)
    for k in range(3):
        sel = anim[:, 1] == k
        values[:, sel] = components[k][:, anim[sel, 0]].astype(F32)
    const_vals = np.zeros((len(consts), 3), dtype=F32)
    for k in range(3):
        sel = consts[:, 1] == k
        const_vals[sel] = components[k][0, consts[sel, 0]].astype(F32)
    clip_min, clip_ext = clip_range(values) if len(anim) else (np.zeros((0, 3), F32),) * 2
    norm = normalize(values, clip_min, clip_ext)

    ka = len(anim)
    bit_rates = np.zeros((G, ka), dtype=np.uint8)
    seg_min = np.zeros((G, ka, 3), dtype=np.uint8)
    seg_ext = np.zeros((G, ka, 3), dtype=np.uint8)
    seg_const = np.zeros((G, ka, 3), dtype=np.uint16)
    samples: list[Array] = []
    seg_dist = np.zeros((G, J))
    seg_prec = np.zeros((G, J))
    stuck_all: list[int] = []
    multi = G > 1
    cand_sel = [np.flatnonzero(anim[:, 1] == k) for k in range(3)]
    for g, (first, n) in enumerate(table):
        check()
        report(0.05 + 0.9 * (attempt * G + g) / (3 * G if attempt else G), f"segment {g + 1}/{G}")
        idx = np.arange(first, first + n)
        rows = np.arange(n)
        raw_rows = idx
        if wrap and g == 0:  # the dropped last sample decodes as sample 0
            rows = np.append(rows, 0)
            raw_rows = np.append(raw_rows, S - 1)
        seg_local = raw_local[raw_rows]
        sd, sp = dominant_shells(seg_local, sk.parents, sk.shell_distance, sk.precision)
        seg_dist[g], seg_prec[g] = sd, sp
        nseg = norm[first : first + n]
        if multi and ka:
            seg_min[g], seg_ext[g] = segment_range(nseg)
            smin, sext = segment_range_decode(seg_min[g], seg_ext[g])
        else:
            smin = sext = None
        if ka:
            seg_const[g] = constant_value(nseg)
        raw_seg = values[first : first + n]
        cands = np.zeros((NUM_BIT_RATES, n, ka, 3), dtype=F32)
        for r in range(NUM_BIT_RATES):
            rates = np.full(ka, r)
            q = encode(nseg, raw_seg, rates, seg_min[g] if multi else None, seg_ext[g])
            cands[r] = dequantize(q, rates, clip_min, clip_ext, smin, sext, seg_const[g])
        candidates = [
            rebuild_rotation(cands[:, :, cand_sel[0]]).astype(np.float64),
            cands[:, :, cand_sel[1]].astype(np.float64),
            cands[:, :, cand_sel[2]].astype(np.float64),
        ]
        problem = SegmentProblem(
            raw_local=seg_local, raw_obj=raw_obj[raw_rows],
            raw_rot=clip.rotations[raw_rows], raw_tr=clip.translations[raw_rows],
            raw_sc=clip.scales[raw_rows], rows=rows, num_samples=int(n),
            candidates=candidates, cand_joint=[anim[s, 0] for s in cand_sel],
            cand_index=cand_sel, base_rot=fixed[0], base_tr=fixed[1], base_sc=fixed[2],
            parents=sk.parents, levels=levels, shell=sk.shell_distance,
            precision=sk.precision, dom_dist=sd, dom_prec=sp, multi_segment=multi,
        )  # fmt: skip
        opt = SegmentOptimizer(problem, level, check)
        stuck_all.extend(int(j) for j in opt.run())
        seg_rates = np.zeros(ka, dtype=np.int64)
        for t, (kind, pos) in enumerate(opt.tracks):
            seg_rates[cand_sel[kind][pos]] = opt.rates[t]
        bit_rates[g] = seg_rates
        samples.append(encode(nseg, raw_seg, seg_rates, seg_min[g] if multi else None, seg_ext[g]))
    enc = ssc_format.EncodedClip(
        num_joints=J, num_samples=stored, sample_rate=clip.sample_rate, wrap=wrap,
        kinds=kinds, constants=const_vals, clip_min=clip_min, clip_extent=clip_ext,
        segment_sizes=table[:, 1].copy(), bit_rates=bit_rates, seg_min=seg_min,
        seg_extent=seg_ext, seg_constant=seg_const, samples=samples,
    )  # fmt: skip
    return enc, (seg_dist, seg_prec), np.unique(np.array(stuck_all, dtype=np.int64))
