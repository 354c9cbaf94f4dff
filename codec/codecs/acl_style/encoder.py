"""The acl-style encoder: clip in, payload bytes, their decoder and per-track costs out.

Order (ACL 2.1): dominant shells, loop detection, constant / default sub-tracks, rotation
layouts, clip ranges, segments with 8-bit segment ranges, bit rates per segment
(optimizer), keyframe stripping (keyframe_stripping), packing (layout). The decoder works
on exactly the arrays that were written, so what is measured (codec.measure) is what a
reader of the file gets.

When a joint cannot meet its precision, the constant and default sub-tracks on its chain
that are not exactly constant in the raw data are freed (made animated) and the clip is
encoded again, at most twice.

A `Compressor` keeps what does not depend on the settings (the hierarchy as the kernels take
it, the exactly constant sub-tracks) and every segment's solution keyed on a digest of that
segment's inputs, so tuning one clip again and again (the inspector's loop) redoes only
what changed; the result is the same as a fresh `compress`. Long clips optimise two
segments at once (the kernels release the GIL).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from codec.codecs.acl_style import keyframe_stripping, rotation_layout
from codec.codecs.acl_style import layout as ssc_format
from codec.codecs.acl_style.bit_rates import segment_cost_bits
from codec.codecs.acl_style.constant_tracks import (
    FirstSamples,
    detect_kinds,
    exact_kinds,
    stored_constants,
)
from codec.codecs.acl_style.decoder import CompressedClip, unit_decoded
from codec.codecs.acl_style.details import stats_details, track_costs
from codec.codecs.acl_style.keyframe_stripping import Stripping, StripSettings
from codec.codecs.acl_style.optimizer import (
    Hierarchy,
    SegmentProblem,
    TrackTable,
    optimize_segment,
)
from codec.codecs.acl_style.quantize import F32, in_stored_order, quantised
from codec.codecs.acl_style.segments import segment_table
from codec.codecs.base import Encoded, TrackKind
from codec.errors import Cancelled
from codec.measure.error_metric import (
    array_errors,
    ends_within,
    shell_error,
)
from codec.measure.shells import (
    DominantShells,
    ancestor_scale,
    dominant_shells,
    local_precision,
    segment_dominant_shells,
)
from codec.model.affine import pack_qvv
from codec.model.clip import Clip, Skeleton, exactly_unit
from codec.model.transforms import object_space
from codec.settings import CompressionSettings, resolve_level

Array = np.ndarray
Progress = Callable[[float, str], None]
# judge(rows (n,), decoded): a solved segment's stored samples as the encoding decodes them
# before any keyframe is stripped (local rotations (n, J, 4), translations, scales (n, J, 3));
# it may raise to stop the run (bind_modes: an additive over its precision at a kept one)
Judge = Callable[[Array, keyframe_stripping.Rows], None]

__all__ = ["Compressor", "encode"]

_ANIMATED = int(TrackKind.ANIMATED)
_MEMO_LIMIT = 4096  # segment solutions kept per clip
THREADS = 2  # segments optimised at once (the kernels release the GIL)
# below this many segments the calling thread solves a segment whenever a pool thread is
# busy (one pool thread at a time): on 2 cores a third runnable thread stalled its set-up of
# the next segments (Fox Survey, 5 segments: 3-8 % faster); longer clips keep both pool threads
# busy while it prepares (the jumps, 160 segments: 12 % slower otherwise)
CALLER_SOLVES = 16
THREADED_SEGMENTS = 4  # clips with fewer segments than this run on the calling thread
ATTEMPTS = 4  # encodings at most: the first, two with tighter budgets on failing chains, forced
TIGHTEN = 4.0  # how much a failing chain's constant and default budgets shrink per attempt
_POOL: ThreadPoolExecutor | None = None


def _idle(pending: deque) -> bool:
    """Whether no pool thread is solving one of the `pending` segments' problems."""
    return not any(isinstance(p[2], Future) and not p[2].done() for p in pending)


def _segment_pool() -> ThreadPoolExecutor | None:
    global _POOL
    if (os.cpu_count() or 1) < 2:
        return None
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="segment")
    return _POOL


def encode(
    clip: Clip,
    settings: CompressionSettings | None = None,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
) -> Encoded:
    """Encode a clip; see the module docstring. Raises Cancelled when `cancel()` is True."""
    return Compressor(clip).run(settings, progress, cancel)


@dataclass(frozen=True, eq=False)
class _Raw:
    """What a clip's compressions share whatever the settings: its hierarchy for the kernels,
    its exactly default or constant sub-tracks (constant_tracks.exact_kinds), how far its
    ancestors' scales stretch each joint's local errors, and its first samples as constants
    store them (constant_tracks.FirstSamples)."""

    hierarchy: Hierarchy
    exact: Array
    scale: Array  # (J,) codec.measure.shells.ancestor_scale
    first: FirstSamples


@dataclass(frozen=True, eq=False)
class _Framing:
    """Where a run's segments lie: table (G, 2) first stored sample and count of each,
    whether the clip wraps (its last sample, equal to the first, is not stored), the stored
    sample count, and each segment's dominant shells, distance and precision (G, J), the
    precision also as a bound in each parent's space (codec.measure.shells.local_precision)."""

    table: Array
    wrap: bool
    stored: int
    seg_dist: Array
    seg_prec: Array
    seg_local_prec: Array


@dataclass(frozen=True, eq=False)
class _Kinds:
    """How each sub-track is stored (constant_tracks.detect_kinds): kinds (J, 3), the
    values (rotations, translations, scales) of default and constant ones, the component
    each constant rotation drops (J,), and every joint's first rotation as a constant stores
    it (J, 3) float32."""

    kinds: Array
    fixed: tuple[Array, Array, Array]
    const_dropped: Array
    stored_rotations: Array


@dataclass(frozen=True, eq=False)
class _Shared:
    """What every segment's problem shares in one run: the fixed values of default and
    constant sub-tracks (J, 10), every joint's shell distance and precision (J,), every
    sample as QVV rows (S, J, 10), segment_cost_bits by segment size, the animated tracks."""

    base: Array
    shell: Array
    precision: Array
    raw: Array
    costs: dict[int, Array]
    tracks: TrackTable


@dataclass(eq=False)
class _Quantized:
    """The animated samples ready for the optimiser, in its track order: the rotation layouts
    (Ka,) for the clip and (G, Ka) per segment (-1: not a rotation), the stored components
    `values` (stored, Ka, 3) float32 and in segment space `unit`, the clip ranges (Ka, 4),
    the 8-bit segment ranges and constants (G, Ka, 3), and the decoding parameters (G, Ka, 4)
    and (G, Ka, 17) (codec.codecs.acl_style.quantize.decode_params)."""

    layout: Array
    dropped: Array
    values: Array
    unit: Array
    clip_min: Array
    clip_ext: Array
    seg_min: Array
    seg_ext: Array
    seg_const: Array
    lay: Array
    dec: Array

    def free_samples(self) -> None:
        """Let go of `values` and `unit`, a run's largest arrays, before packing."""
        self.values = self.unit = np.zeros((0, 0, 3), dtype=F32)


class Compressor:
    """Compresses one clip under changing settings, reusing what the settings leave alone."""

    def __init__(self, clip: Clip, bind: int = 0) -> None:
        """`bind`: the payload's bind code (layout.BIND_CODES): what the clip's skeleton's
        bind pose, its default values, stands for (bind_modes makes the clips of each)."""
        self.clip = clip
        self.bind = bind
        self._raw = _Raw(
            Hierarchy.of(clip.skeleton.parents),
            exact_kinds(clip),
            ancestor_scale(clip),
            FirstSamples.of(clip),
        )
        self._memo: dict[bytes, tuple[Array, Array, Array]] = {}
        self.segments_solved = 0  # how many segments the last run optimised (not reused)

    def run(
        self,
        settings: CompressionSettings | None = None,
        progress: Progress | None = None,
        cancel: Callable[[], bool] | None = None,
        skeleton: Skeleton | None = None,
        judge: Judge | None = None,
    ) -> Encoded:
        """Encode with `settings` (see `encode`); `skeleton` gives other per-joint
        precisions and shell distances (the same joints, parents and bind pose); `judge`
        sees each solved segment while no joint is stuck (Judge)."""
        settings = settings or CompressionSettings()
        clip = self.clip
        if skeleton is not None:
            clip = clip.with_skeleton(skeleton)
        clip = settings.apply(clip)
        level = resolve_level(settings.level, clip)
        report = progress or (lambda f, m: None)

        def check() -> None:
            if cancel is not None and cancel():
                raise Cancelled("compression cancelled")

        raw = self._raw
        report(0.0, "analysing")
        dom_dist, dom_prec = dominant_shells(clip)
        framing = _framing(clip, settings.loop_optimization, raw.scale, (dom_dist, dom_prec))
        # a lone segment's shells are the clip's: its local precisions too
        single = len(framing.table) == 1
        local_prec = framing.seg_local_prec[0] if single else local_precision(dom_prec, raw.scale)
        check()

        forced = np.zeros((clip.num_joints, 3), dtype=bool)
        split = np.ones(clip.num_joints)  # local budgets shared out on failing chains
        self.segments_solved = 0
        for attempt in range(ATTEMPTS):
            budget = local_prec / split if attempt else local_prec  # x / 1.0 is x
            found = detect_kinds(clip, dom_dist, budget, forced, raw.exact, raw.first)
            kinds = _Kinds(*found, raw.first.stored)
            enc, tables, stuck = self._encode(
                clip, kinds, framing, level, report, check, attempt, judge
            )
            if len(stuck) == 0:
                break
            # the constant and default sub-tracks on a failing chain each kept within the
            # budget, but their errors added up: share the budget out more tightly, and only
            # as a last resort animate them all (never one the raw data holds exactly
            # constant: animating it cannot help). Freeing a whole chain at once made a
            # looser precision cost more bytes than a tighter one.
            chain = clip.skeleton.with_ancestors(stuck)
            newly = chain[:, None] & (kinds.kinds != _ANIMATED) & ~forced
            newly &= raw.exact == _ANIMATED
            if not np.any(newly):
                break
            if attempt < ATTEMPTS - 2:
                split[chain] *= TIGHTEN
            else:
                forced |= newly

        report(0.93, "stripping keyframes")
        check()
        strip = StripSettings(
            settings.strip_trivial, settings.strip_proportion, settings.strip_threshold
        )
        stripping = _strip(
            clip, strip, enc, lambda: _decoded(clip, enc, tables, kinds.fixed, framing), framing
        )
        report(0.95, "packing")
        shells = DominantShells(dom_dist, dom_prec, framing.seg_dist, framing.seg_prec)
        enc.bind = self.bind
        while True:
            stored = _with_retained(enc, stripping)
            parsed = ssc_format.write(stored)
            decoder = CompressedClip(parsed, clip.skeleton, tables, kinds.fixed)
            if strip.destructive or stripping.num_stripped == 0:
                break
            # stripping measured the rebuild with the decoder's own arithmetic, so this does
            # not fire; should it, the segments concerned store every keyframe again. Only
            # the rebuilt keyframes are measured: the stored ones are the optimiser's
            error = _rebuilt_errors(clip, decoder, stripping.retained)
            safer = _unstrip_failing(error, clip.skeleton.precision, enc, stripping)
            if safer is None:
                break
            stripping = safer
        costs = track_costs(stored, shells, _segment_sizes(parsed))
        report(1.0, "done")
        return Encoded(
            payload=parsed.data,
            decoder=decoder,
            details=stats_details(stored, costs, level, stripping, strip),
            costs=costs,
        )

    def _encode(
        self,
        clip: Clip,
        kinds: _Kinds,
        framing: _Framing,
        level: str,
        report: Progress,
        check: Callable[[], None],
        attempt: int,
        judge: Judge | None = None,
    ) -> tuple[ssc_format.EncodedClip, tuple[Array, Array], Array]:
        """Layouts, ranges and bit rates of every segment for given sub-track kinds.

        Returns the encoding, its decoding parameters (G, Ka, 4) and (G, Ka, 17) (see
        quantize.decode_params), and the joints that cannot meet their precision.
        Works in the optimiser's track order (rotations, translations, scales) and stores in
        joint order; every array that grows with the samples is float32 or uint32.
        """
        tracks = TrackTable.of(kinds.kinds)
        if len(tracks.joint) == 0:  # a static pose: nothing to choose
            return _static(clip, kinds, framing)
        quant = _quantize(clip, tracks, framing)
        rates, q, stuck = self._optimise(
            clip, kinds, tracks, quant, framing, level, report, check, attempt, judge
        )
        enc, tables = _encoded(clip, kinds, tracks, quant, framing, rates, q)
        return enc, tables, stuck

    def _optimise(
        self,
        clip: Clip,
        kinds: _Kinds,
        tracks: TrackTable,
        quant: _Quantized,
        framing: _Framing,
        level: str,
        report: Progress,
        check: Callable[[], None],
        attempt: int,
        judge: Judge | None = None,
    ) -> tuple[Array, Array, Array]:
        """Bit rates (G, Ka) and packed samples (stored, Ka, 3), both in the optimiser's
        track order (`_encoded` stores them in the payload's), and the joints that cannot
        meet their precision: each segment solved by the optimiser (two at once on long
        clips) or taken from an earlier run with the same inputs. Frees `quant`'s sample
        arrays when done."""
        h = self._raw.hierarchy
        sk = clip.skeleton
        table = framing.table
        G = len(table)
        ka = len(tracks.joint)
        base = pack_qvv(*kinds.fixed)
        shell = np.ascontiguousarray(sk.shell_distance, dtype=np.float64)
        precision = np.ascontiguousarray(sk.precision, dtype=np.float64)
        shared = _Shared(
            base,
            shell,
            precision,
            pack_qvv(clip.rotations, clip.translations, clip.scales),
            {n: segment_cost_bits(n, G > 1) for n in set(table[:, 1].tolist())},
            tracks,
        )
        # a segment's samples, as stored, follow from the clip (this Compressor's), the kinds
        # and the layouts; its ranges are in `dec`: those, not the samples, are hashed
        common = hashlib.blake2b(  # what every segment's solution depends on, in one pass
            b"".join(
                (
                    kinds.kinds.tobytes(),
                    quant.dropped.tobytes(),
                    base.tobytes(),
                    shell.tobytes(),
                    precision.tobytes(),
                    np.array([framing.wrap, G]).tobytes(),
                    level.encode(),
                )
            ),
            digest_size=16,
        )

        rates = np.zeros((G, ka), dtype=np.int64)
        q = np.zeros((framing.stored, ka, 3), dtype=np.uint32)
        stuck_all = np.zeros(clip.num_joints, dtype=bool)
        pool = _segment_pool() if G >= THREADED_SEGMENTS else None
        Solved = tuple[Array, Array, Array]
        # (segment, key, solution or its future, whether it was solved in this run)
        pending: deque[tuple[int, bytes, Future | Solved, bool]] = deque()

        def take(g: int, key: bytes, solved: Future | Solved, fresh: bool) -> None:
            if isinstance(solved, Future):
                solved = solved.result()
            if fresh:
                self.segments_solved += 1
                if len(self._memo) >= _MEMO_LIMIT:
                    self._memo.clear()
                self._memo[key] = solved
            seg_rates, stuck, seg_q = solved
            stuck_all[:] |= stuck
            first, n = table[g]
            rates[g] = seg_rates
            q[first : first + n] = seg_q
            unjudged.append(g)
            if len(unjudged) >= max(1, judged):
                judge_unjudged()

        unjudged: list[int] = []  # solved segments the judge has not seen, in order
        judged = 0

        def judge_unjudged() -> None:
            """The judge sees each of `unjudged`, decoded in one pass: batches that double
            (1, 1, 2, 4, ...), so a long clip builds its encoding O(log G) times, not G."""
            nonlocal judged
            if judge is None or not unjudged or np.any(stuck_all):  # stuck: another attempt
                unjudged.clear()
                return
            lo = int(table[unjudged[0]][0])
            hi = int(table[unjudged[-1]][0] + table[unjudged[-1]][1])
            enc, tables = _encoded(clip, kinds, tracks, quant, framing, rates, q)
            decoded = _decoded(clip, enc, tables, kinds.fixed, framing, np.arange(lo, hi))
            for s in unjudged:
                first, n = (int(v) for v in table[s])
                part = tuple(v[first - lo : first - lo + n] for v in decoded)
                judge(np.arange(first, first + n), part)  # type: ignore[arg-type]
            judged += len(unjudged)
            unjudged.clear()

        try:
            for g in range(G):
                check()
                report(
                    0.05 + 0.9 * (attempt * G + g) / (ATTEMPTS * G if attempt else G),
                    f"segment {g + 1}/{G}" + (f", pass {attempt + 1}" if attempt else ""),
                )
                problem = _problem(clip, g, quant, framing, shared)
                key = _segment_key(common.copy(), g, problem)
                solved: Future | Solved | None = self._memo.get(key)
                fresh = solved is None
                if solved is None and pool is not None and (G >= CALLER_SOLVES or _idle(pending)):
                    solved = pool.submit(optimize_segment, problem, h, level)
                elif solved is None:  # a short clip: this thread is the other worker
                    solved = optimize_segment(problem, h, level)
                pending.append((g, key, solved, fresh))
                while pending and (
                    len(pending) > 2 * THREADS
                    or not isinstance(pending[0][2], Future)
                    or pending[0][2].done()
                ):
                    take(*pending.popleft())
            while pending:
                check()
                take(*pending.popleft())
            judge_unjudged()
        finally:
            for _, _, solved, _ in pending:  # a cancelled run leaves nothing running behind it
                if isinstance(solved, Future):
                    solved.cancel()
        quant.free_samples()
        return rates, q, stuck_all.nonzero()[0]


def _framing(
    clip: Clip, loop_optimization: bool, scale: Array, dom: tuple[Array, Array]
) -> _Framing:
    """Loop detection (a last sample equal to the first within every joint's precision is
    dropped and the clip wraps), the segments and their dominant shells. `dom` is the
    clip's dominant shells (distance, precision): a lone segment's, as its rows are every
    sample in order (the wrapped last one included)."""
    S = clip.num_samples
    wrap = loop_optimization and S >= 2 and _loops(clip)
    stored = S - 1 if wrap else S
    table = segment_table(stored)
    if len(table) == 1:
        seg_dist, seg_prec = dom[0][None].copy(), dom[1][None].copy()
    else:
        seg_dist, seg_prec = segment_dominant_shells(clip, table, wrap)
    local = local_precision(seg_prec, scale)
    return _Framing(table, wrap, stored, seg_dist, seg_prec, local)


def _loops(clip: Clip) -> bool:
    """Whether the last sample equals the first within every joint's precision (numpy's
    object space decides). The compiled comparison decides first where it is clear by more
    than rounding (error_metric.ends_within): almost always, in one call and without
    numpy's level-by-level batches."""
    sk = clip.skeleton
    c = np.ascontiguousarray
    poses = (c(clip.rotations), c(clip.translations), c(clip.scales))
    clear = ends_within(poses, sk.parents, sk.shell_distance, sk.precision)
    if clear >= 0:
        return bool(clear)
    ends = (clip.rotations[[0, -1]], clip.translations[[0, -1]], clip.scales[[0, -1]])
    exact = object_space(*ends, sk.parents)
    return bool(np.all(shell_error(exact[0], exact[1], sk.shell_distance) <= sk.precision))


def _quantize(clip: Clip, tracks: TrackTable, framing: _Framing) -> _Quantized:
    """Rotation layouts from each segment's smallest component magnitudes, the stored
    components of every sample, the clip and segment ranges, and the decoding parameters:
    every segment in one compiled pass (quantize.quantised)."""
    table = framing.table
    return _Quantized(
        *quantised(
            np.ascontiguousarray(clip.rotations),  # as the other kernels take a clip's arrays
            np.ascontiguousarray(clip.translations),
            np.ascontiguousarray(clip.scales),
            tracks.joint,  # the optimiser's order: rotations, translations, scales
            tracks.counts,
            np.ascontiguousarray(table[:, 0], dtype=np.int64),
            np.ascontiguousarray(table[:, 1], dtype=np.int64),
            float(rotation_layout.MIN_DROPPED),  # read now: bench/rotation_layouts.py sets it
        )
    )


def _problem(
    clip: Clip, g: int, quant: _Quantized, framing: _Framing, shared: _Shared
) -> SegmentProblem:
    """Segment g's inputs to the optimiser."""
    first, n = framing.table[g].tolist()
    span = slice(first, first + n)
    rows = np.arange(n)
    seg_raw = shared.raw[span]
    if framing.wrap and g == 0:  # the dropped last sample decodes as sample 0
        rows = np.append(rows, 0)
        seg_raw = shared.raw[np.append(np.arange(first, first + n), clip.num_samples - 1)]
    return SegmentProblem(
        rows=rows,
        raw=seg_raw,
        base=shared.base,
        tracks=shared.tracks,
        unit=quant.unit[span],
        raw_values=quant.values[span],
        lay=quant.lay[g],
        dec=quant.dec[g],
        cost=shared.costs[n],
        shell=shared.shell,
        precision=shared.precision,
        dom_dist=framing.seg_dist[g],
        dom_prec=framing.seg_local_prec[g],
    )


def _header(clip: Clip, kinds: _Kinds, framing: _Framing) -> dict[str, Any]:
    """The EncodedClip fields an animated and an all-constant clip fill alike: sizes,
    sub-track kinds, constant values and segment sizes."""
    values, layouts = stored_constants(
        kinds.kinds,
        kinds.stored_rotations,
        clip.translations[0],
        clip.scales[0],
        kinds.const_dropped,
    )
    return {
        "num_joints": clip.num_joints,
        "num_samples": framing.stored,
        "sample_rate": clip.sample_rate,
        "wrap": framing.wrap,
        "kinds": kinds.kinds,
        "constants": values,
        "const_dropped": layouts,
        "segment_sizes": framing.table[:, 1].copy(),
    }


def _encoded(
    clip: Clip,
    kinds: _Kinds,
    tracks: TrackTable,
    quant: _Quantized,
    framing: _Framing,
    rates: Array,
    q: Array,
) -> tuple[ssc_format.EncodedClip, tuple[Array, Array]]:
    """The encoding in stored order, and its decoding parameters."""
    per_track = (quant.layout, quant.clip_min, quant.clip_ext, quant.dropped, quant.seg_min)
    per_track += (quant.seg_ext, quant.seg_const, quant.lay, quant.dec)
    layout, c_min, c_ext, dropped, s_min, s_ext, s_const, lay, dec, rates, q = in_stored_order(
        tracks.inv, *per_track, rates, q
    )
    enc = ssc_format.EncodedClip(
        **_header(clip, kinds, framing),
        clip_layout=layout,
        clip_min=c_min,
        clip_extent=c_ext,
        bit_rates=rates,
        seg_dropped=dropped,
        seg_min=s_min,
        seg_extent=s_ext,
        seg_constant=s_const,
        samples=[q] if len(framing.table) == 1 else np.split(q, framing.table[1:, 0]),
    )
    return enc, (lay, dec)


def _static(
    clip: Clip, kinds: _Kinds, framing: _Framing
) -> tuple[ssc_format.EncodedClip, tuple[Array, Array], Array]:
    """The encoding of a clip whose sub-tracks are all default or constant."""
    table = framing.table
    g = len(table)
    enc = ssc_format.EncodedClip(
        **_header(clip, kinds, framing),
        clip_layout=np.zeros(0, np.int64),
        clip_min=np.zeros((0, 4), F32),
        clip_extent=np.zeros((0, 4), F32),
        bit_rates=np.zeros((g, 0), np.uint8),
        seg_dropped=np.zeros((g, 0), np.int64),
        seg_min=np.zeros((g, 0, 3), np.uint8),
        seg_extent=np.zeros((g, 0, 3), np.uint8),
        seg_constant=np.zeros((g, 0, 3), np.uint16),
        samples=[np.zeros((int(n), 0, 3), np.uint32) for n in table[:, 1]],
    )
    tables = (np.zeros((g, 0, 4), np.int64), np.zeros((g, 0, 17), F32))
    return enc, tables, np.zeros(0, np.int64)


def _decoded(
    clip: Clip,
    enc: ssc_format.EncodedClip,
    tables: tuple[Array, Array],
    base: tuple[Array, Array, Array],
    framing: _Framing,
    rows: Array | None = None,
) -> keyframe_stripping.Rows:
    """Every stored sample of the encoding, or `rows` (no keyframe stripped), as the decoder
    gives them (CompressedClip.decode_rows); decoded once for stripping and the lossy clip."""
    unwritten = ssc_format.ParsedPayload(enc, np.zeros(0), np.zeros(0), b"")
    decoder = CompressedClip(unwritten, clip.skeleton, tables, base)
    return decoder.decode_rows(np.arange(framing.stored) if rows is None else rows)


def _strip(
    clip: Clip,
    strip: StripSettings,
    enc: ssc_format.EncodedClip,
    decode: Callable[[], keyframe_stripping.Rows],
    framing: _Framing,
) -> Stripping:
    """The keyframes to strip (keyframe_stripping) from the encoding's decoded
    keyframes (`decode()`, called only when some could be stripped: short and static clips
    skip the decoding), measured against the raw clip with the decoder's own rebuild and
    the error measure's own arithmetic; nothing when it would not make the file smaller."""
    table, stored = framing.table, framing.stored
    none = keyframe_stripping.no_stripping(table, stored)
    # cheapest first: segments of at most two samples (a clip of one or two) have no
    # keyframe between two others to strip
    if not strip.enabled or max(table[:, 1].tolist()) <= 2 or len(enc.animated) == 0:
        return none
    decoded = decode()
    sk = clip.skeleton
    # the raw clip as a Clip made of its rows would hold them (a row at a time, as here)
    raw_rot = exactly_unit(clip.rotations)

    def errors_of(first: Array, second: Array, rows: Array, alpha: Array) -> Array:
        a = tuple(v[first] for v in decoded)
        b = tuple(v[second] for v in decoded)
        return row_errors(clip, raw_rot, rows, keyframe_stripping.rebuild(a, b, alpha))

    def screen(first: Array, second: Array, rows: Array, alpha: Array) -> Array:
        raw = (clip.rotations, clip.translations, clip.scales)
        return keyframe_stripping.surely_over(
            decoded, raw, sk.parents, sk.shell_distance, sk.precision, first, second, rows, alpha
        )

    def bounds(starts: Array, ends: Array) -> tuple[Array, Array]:
        raw = (clip.rotations, clip.translations, clip.scales)
        return keyframe_stripping.span_bounds(
            decoded, raw, sk.parents, sk.shell_distance, sk.precision, starts, ends
        )

    removals = keyframe_stripping.removal_order(table, sk.precision, errors_of, strip, screen)
    chosen = keyframe_stripping.choose(table, removals, strip, stored)
    if strip.trivial and not strip.destructive:
        chosen = keyframe_stripping.widen(table, sk.precision, errors_of, chosen, bounds)
    return chosen if _saves_bytes(enc, chosen) else none


def row_errors(
    clip: Clip, raw_rot: Array, rows: Array | None, lossy: keyframe_stripping.Rows
) -> Array:
    """(N, J) `clip_errors(raw rows, decoded_clip(lossy))` against the raw clip's samples
    `rows (N,)` (None: every sample, in order, not gathered), without the two clips:
    `lossy`'s rotations (taken over) made unit as a decoded Clip would make them, the raw
    ones `raw_rot (S, J, 4)`. Stripping and each bind mode's strictness check measure
    decoded rows this way."""
    rot, tr, sc = lossy
    sk = clip.skeleton
    if rows is None:
        raw = (raw_rot, clip.translations, clip.scales)
    else:
        raw = (raw_rot[rows], clip.translations[rows], clip.scales[rows])
    lossy = (unit_decoded(rot), tr, sc)
    at = np.arange(len(rot))
    return array_errors(raw, lossy, at, np.zeros(len(rot)), sk.parents, sk.shell_distance)


def _rebuilt_errors(clip: Clip, decoder: CompressedClip, retained: Array) -> Array:
    """(S, J) errors of the stripped keyframes as `decoder` (the written payload's) rebuilds
    them, 0 at the stored ones: all that `_unstrip_failing` reads, at a third of the cost
    of decoding and measuring the whole clip."""
    stripped = np.flatnonzero(~retained)
    error = np.zeros((len(retained), clip.num_joints))
    error[stripped] = row_errors(clip, clip.rotations, stripped, decoder.decode_rows(stripped))
    return error


def _segment_sizes(parsed: ssc_format.ParsedPayload) -> Array:
    """(G,) bytes of each segment as written (segments end the payload): what
    EncodedClip.segment_bytes counts, without counting again."""
    at = parsed.segment_offsets
    sizes = np.empty(len(at), dtype=np.int64)
    sizes[:-1] = at[1:] - at[:-1]  # np.diff(append=) cost more than a static clip's packing
    sizes[-1] = len(parsed.data) - ssc_format.HEADER_SIZE - at[-1]
    return sizes


def _with_retained(enc: ssc_format.EncodedClip, stripping: Stripping) -> ssc_format.EncodedClip:
    """The encoding storing only the retained keyframes (all of them: `enc` itself)."""
    if stripping.num_stripped == 0:
        return enc
    keep = np.split(stripping.retained, enc.segment_starts[1:])
    samples = [q[k] for q, k in zip(enc.samples, keep, strict=True)]
    return dataclasses.replace(enc, samples=samples, retained=stripping.retained)


def _saves_bytes(enc: ssc_format.EncodedClip, stripping: Stripping) -> bool:
    """Whether the keyframes stripped save more bytes than the keyframe masks cost."""
    if stripping.num_stripped == 0:
        return False
    after = _with_retained(enc, stripping).segment_bytes().sum()
    return bool(after < enc.segment_bytes().sum())


def _unstrip_failing(
    error: Array, precision: Array, enc: ssc_format.EncodedClip, stripping: Stripping
) -> Stripping | None:
    """`stripping` with every keyframe stored again in the segments where a rebuilt keyframe
    is over a joint's precision; None when there is none."""
    stored = len(stripping.retained)
    over = np.any(error[:stored] > precision, axis=1) & ~stripping.retained
    if not np.any(over):
        return None
    seg_of = np.repeat(np.arange(enc.num_segments), enc.segment_sizes)
    bad = np.zeros(enc.num_segments, dtype=bool)
    bad[seg_of[over]] = True
    retained = stripping.retained | bad[seg_of]
    fixed = Stripping(
        retained,
        np.where(bad, 0, stripping.stripped),
        np.where(bad, 0, stripping.trivial),
    )
    if not _saves_bytes(enc, fixed):
        table = np.stack((enc.segment_starts, enc.segment_sizes), axis=1)
        return keyframe_stripping.no_stripping(table, stored)
    return fixed


def _segment_key(digest: hashlib.blake2b, g: int, p: SegmentProblem) -> bytes:
    """What a segment's solution depends on besides `digest`'s clip-wide inputs (its raw
    and stored samples are fixed by those and the segment's index)."""
    parts = (np.array([g]), p.lay, p.dec, p.dom_dist, p.dom_prec)
    digest.update(b"".join(a.tobytes() for a in parts))
    return digest.digest()
