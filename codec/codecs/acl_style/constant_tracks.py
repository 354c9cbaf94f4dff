"""Constant and default sub-tracks: what can be stored as one value, or as nothing.

A sub-track is *default* when the bind value in its place keeps the local error on the
joint's dominant shell within the dominant precision at every sample, *constant* when its
first sample (as stored: float32, rotations rebuilt like the decoder does) does. The three
sub-tracks of a joint are decided in turn (rotation, translation, scale), each on top of
the earlier replacements, so their combination is checked too.

A sub-track that is exactly constant (or exactly the bind value) in the raw data is always
stored as such: storing it per sample cannot bring it closer, so no budget, however tight,
makes it animated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codec.codecs.acl_style import quantize, rotation_layout
from codec.codecs.acl_style.rotation_layout import MIN_DROPPED_CONSTANT
from codec.codecs.base import TrackKind
from codec.jit import helper, kernel
from codec.model.affine import qvv_matrix, shell_error
from codec.model.clip import Clip

Array = np.ndarray
F32 = np.float32

_DEFAULT = int(TrackKind.DEFAULT)
_CONSTANT = int(TrackKind.CONSTANT)
_ANIMATED = int(TrackKind.ANIMATED)


@kernel
def _decide(
    rot, tr, sc, bind, const, dropped, dom_dist, dom_prec, forced, exact, kinds, f_rot, f_tr, f_sc
):
    """kinds (J, 3) by the tests of the module docstring, and the fixed values f_rot (J, 4),
    f_tr and f_sc (J, 3): each sub-track's constant value where constant, its bind value
    elsewhere. rot / tr / sc the raw samples, bind / const (J, 10) QVV rows, dropped (J,)
    the dropped component of each first rotation as a constant (made -1 where the rotation
    is not constant), dom_dist and dom_prec (J,) dominant distance and precision."""
    trial = np.zeros(10)
    use = np.zeros(3, dtype=np.bool_)
    v10 = np.empty((2, 10))
    mats = np.empty((2, 12))
    raw = v10[0]
    for j in range(rot.shape[1]):
        for k in range(3):
            use[k] = False
        for k in range(3):
            lo = 0 if k == 0 else (4 if k == 1 else 7)
            hi = 4 if k == 0 else (7 if k == 1 else 10)
            kind = _ANIMATED
            if exact[j, k] == _DEFAULT:
                kind = _DEFAULT
            elif forced[j, k]:
                kind = _CONSTANT if exact[j, k] == _CONSTANT else _ANIMATED
            else:
                use[k] = True
                for option in range(2):  # default (bind), then constant (first sample)
                    if option == 1 and exact[j, k] == _CONSTANT:
                        kind = _CONSTANT
                        break
                    for c in range(lo, hi):
                        trial[c] = bind[j, c] if option == 0 else const[j, c]
                    ok = True
                    for s in range(rot.shape[0]):  # within at every sample? stop at a miss
                        for c in range(4):
                            raw[c] = rot[s, j, c]
                        for c in range(3):
                            raw[4 + c] = tr[s, j, c]
                            raw[7 + c] = sc[s, j, c]
                        for c in range(10):
                            v10[1, c] = (
                                trial[c] if use[0 if c < 4 else (1 if c < 7 else 2)] else raw[c]
                            )
                        qvv_matrix(raw, mats[0])
                        qvv_matrix(v10[1], mats[1])
                        if shell_error(mats[0], mats[1], dom_dist[j]) > dom_prec[j]:
                            ok = False
                            break
                    if ok:
                        kind = _DEFAULT if option == 0 else _CONSTANT
                        break
                use[k] = False
            kinds[j, k] = kind
            if kind != _ANIMATED:
                use[k] = True
                for c in range(lo, hi):
                    trial[c] = bind[j, c] if kind == _DEFAULT else const[j, c]
            out = f_rot[j] if k == 0 else (f_tr[j] if k == 1 else f_sc[j])
            for c in range(lo, hi):
                out[c - lo] = const[j, c] if kind == _CONSTANT else bind[j, c]
        if kinds[j, 0] != _CONSTANT:
            dropped[j] = -1


@kernel
def _constants_of(first, dropped, stored, values):
    """`constant_rotations` row by row (first (K, 4) float64 -> dropped (K,), stored (K, 3)
    float32, values (K, 4) float64): the arithmetic of rotation_layout.choose_constant and
    `rebuild_rotations`, operation for operation (float32 rebuild with its sums in index
    order, then a float64 length whose squares add x, y, z, w in turn as numpy's sum over
    four does). One call instead of some thirty numpy ones: a compressor makes it per clip,
    and on a one-sample clip that was an eighth of the encode."""
    q = np.empty(4, dtype=np.float32)
    zero = np.float32(0.0)
    for j in range(first.shape[0]):
        d = 3
        if not abs(first[j, 3]) >= MIN_DROPPED_CONSTANT:  # the largest, the first of ties
            d = 0
            for c in range(1, 4):
                if abs(first[j, c]) > abs(first[j, d]):
                    d = c
        flip = first[j, d] < 0.0
        for c in range(4):
            q[c] = np.float32(-first[j, c] if flip else first[j, c])
        i = 0
        for c in range(4):
            if c != d:
                stored[j, i] = q[c]
                i += 1
        q[d] = zero
        rest = np.float32(1.0) - (((q[0] * q[0] + q[1] * q[1]) + q[2] * q[2]) + q[3] * q[3])
        if rest < zero:
            rest = zero
        q[d] = np.float32(np.sqrt(np.float64(rest)))  # float32's root, correctly rounded
        sq = ((q[0] * q[0] + q[1] * q[1]) + q[2] * q[2]) + q[3] * q[3]
        n = np.float64(np.float32(np.sqrt(np.float64(sq))))
        for c in range(4):
            q[c] = np.float32(np.float64(q[c]) / n)  # float32's quotient, correctly rounded
        length = 0.0
        for c in range(4):
            length += np.float64(q[c]) * np.float64(q[c])
        length = np.sqrt(length)
        for c in range(4):
            values[j, c] = np.float64(q[c]) / length
        dropped[j] = d


def constant_rotations(first: Array) -> tuple[Array, Array, Array]:
    """How rotations (K, 4) are stored as constants: dropped component (K,), the three kept
    float32 values (K, 3), and what they decode to (K, 4) float64 (as `rebuild_rotations`
    decodes the stored values)."""
    k = len(first)
    dropped = np.empty(k, dtype=np.int64)
    stored = np.empty((k, 3), dtype=F32)
    values = np.empty((k, 4))
    _constants_of(np.ascontiguousarray(first, dtype=np.float64), dropped, stored, values)
    return dropped, stored, values


def rebuild_rotations(stored: Array, dropped: Array) -> Array:
    """Decoded rotations (K, 4) of three kept float32 components (K, 3): unit in float64,
    as codec.model.clip.Clip stores every rotation."""
    q = np.zeros((len(stored), 4), dtype=F32)
    np.put_along_axis(q, rotation_layout.kept_components(dropped), stored.astype(F32), axis=-1)
    return _unit_rotations(q, dropped)


def _unit_rotations(q: Array, dropped: Array) -> Array:
    """Float32 quaternions (K, 4) with their dropped component (K,) at 0, rebuilt as the
    decoder does, then made unit in float64."""
    q = quantize.rebuild_rotations(q, np.asarray(dropped, dtype=np.int64)).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # corrupt files: caught downstream
        return q / np.sqrt(np.sum(q * q, axis=-1, keepdims=True))


@helper
def _still_same(a, b, flags, s, signed):
    """Clear flags (J, 2) [constant, default] of the joints whose sub-track sample s of
    a (S, J, C) differs from its first sample, or from its bind value b (J, C); returns how
    many flags are left."""
    left = 0
    for j in range(a.shape[1]):
        for f in range(2):
            if not flags[j, f]:
                continue
            eq = True
            neg = signed
            for c in range(a.shape[2]):
                ref = a[0, j, c] if f == 0 else b[j, c]
                eq = eq and a[s, j, c] == ref
                neg = neg and a[s, j, c] == -ref
            flags[j, f] = eq or neg
            left += flags[j, f]
    return left


@kernel
def _exact(rot, tr, sc, b_rot, b_tr, b_sc, out):
    """out (J, 3): `exact_kinds` of the rotations, translations and scales, sample by sample
    in memory order until every sub-track differs from its first sample and its bind."""
    flags = np.ones((3, rot.shape[1], 2), dtype=np.bool_)
    left = np.full(3, rot.shape[1] * 2)
    for s in range(rot.shape[0]):
        if left[0]:
            left[0] = _still_same(rot, b_rot, flags[0], s, True)
        if left[1]:
            left[1] = _still_same(tr, b_tr, flags[1], s, False)
        if left[2]:
            left[2] = _still_same(sc, b_sc, flags[2], s, False)
        if left[0] + left[1] + left[2] == 0:
            break
    for j in range(rot.shape[1]):
        for k in range(3):
            const, default = flags[k, j, 0], flags[k, j, 1]
            out[j, k] = _DEFAULT if default else (_CONSTANT if const else _ANIMATED)


def exact_kinds(clip: Clip) -> Array:
    """(J, 3): DEFAULT where a sub-track equals its bind value at every sample, CONSTANT where
    it equals its first sample, ANIMATED otherwise (rotations up to sign)."""
    sk = clip.skeleton
    out = np.empty((clip.num_joints, 3), dtype=np.int64)
    c = np.ascontiguousarray
    _exact(
        c(clip.rotations),
        c(clip.translations),
        c(clip.scales),
        c(sk.bind_rotations, dtype=np.float64),
        c(sk.bind_translations, dtype=np.float64),
        c(sk.bind_scales, dtype=np.float64),
        out,
    )
    return out


@dataclass(frozen=True, eq=False)
class FirstSamples:
    """Every joint's sub-tracks held at their first sample as a constant stores them, and
    at the bind pose: what the constant and default tests try, settings-free (a
    compressor makes it once per clip). dropped (J,) each rotation's dropped component,
    stored (J, 3) float32 the kept rotation components as written, const10 the decoded
    constants (rotations, float32 translations and scales, in float64) and bind10 the bind
    pose, both as QVV rows (J, 10) for the kernels."""

    dropped: Array
    stored: Array
    const10: Array
    bind10: Array

    @classmethod
    def of(cls, clip: Clip) -> FirstSamples:
        sk = clip.skeleton
        n = clip.num_joints
        dropped, stored = np.empty(n, dtype=np.int64), np.empty((n, 3), dtype=F32)
        const10, bind10 = np.empty((2, n, 10))
        c = np.ascontiguousarray
        _first_samples(
            c(clip.rotations[0]),
            c(clip.translations[0]),
            c(clip.scales[0]),
            c(sk.bind_rotations, dtype=np.float64),
            c(sk.bind_translations, dtype=np.float64),
            c(sk.bind_scales, dtype=np.float64),
            dropped,
            stored,
            const10,
            bind10,
        )
        return cls(dropped, stored, const10, bind10)


@kernel
def _first_samples(rot, tr, sc, b_rot, b_tr, b_sc, dropped, stored, const10, bind10):
    """FirstSamples' arrays of the first sample's rotations (J, 4), translations and scales
    (J, 3) and the bind pose: the rotations as `constant_rotations` stores and decodes them,
    translations and scales rounded to float32 (as stored) and back."""
    values = np.empty((rot.shape[0], 4))
    _constants_of(rot, dropped, stored, values)
    for j in range(rot.shape[0]):
        for c in range(4):
            const10[j, c] = values[j, c]
            bind10[j, c] = b_rot[j, c]
        for c in range(3):
            const10[j, 4 + c] = np.float64(np.float32(tr[j, c]))
            const10[j, 7 + c] = np.float64(np.float32(sc[j, c]))
            bind10[j, 4 + c] = b_tr[j, c]
            bind10[j, 7 + c] = b_sc[j, c]


def detect_kinds(
    clip: Clip,
    dom_dist: Array,
    dom_prec: Array,
    forced: Array,
    exact: Array,
    first: FirstSamples | None = None,
) -> tuple[Array, tuple[Array, Array, Array], Array]:
    """Kinds (J, 3) uint8, the fixed value of every joint per sub-track (bind where default,
    the decoded constant where constant, unused where animated) and the dropped component of
    each constant rotation (J,) (-1 where not constant).

    `forced (J, 3)` keeps sub-tracks animated unless they are exactly constant; `exact`
    comes from `exact_kinds`; `first` is `FirstSamples.of(clip)` when the caller has it.
    """
    first = FirstSamples.of(clip) if first is None else first
    kinds = np.empty((clip.num_joints, 3), dtype=np.uint8)
    n = clip.num_joints
    fixed = (np.empty((n, 4)), np.empty((n, 3)), np.empty((n, 3)))
    const_dropped = first.dropped.copy()
    c = np.ascontiguousarray
    _decide(
        c(clip.rotations),
        c(clip.translations),
        c(clip.scales),
        first.bind10,
        first.const10,
        const_dropped,
        c(dom_dist, dtype=np.float64),
        c(dom_prec, dtype=np.float64),
        np.asarray(forced, np.bool_),
        np.asarray(exact, np.int64),
        kinds,
        *fixed,
    )
    return kinds, fixed, const_dropped


def stored_constants(
    kinds: Array, rotations: Array, translations: Array, scales: Array, dropped: Array
) -> tuple[Array, Array]:
    """What the payload stores of the constant sub-tracks of kinds (J, 3), joint-major:
    values (Kc, 3) float32 (a rotation's kept components `rotations` (J, 3) float32 as
    FirstSamples stores them, the first sample's translation or scale (J, 3) rounded to
    float32) and each one's dropped component (Kc,) (`dropped` (J,) for a rotation, -1)."""
    n = kinds.shape[0] * 3
    values, layouts = np.empty((n, 3), dtype=F32), np.empty(n, dtype=np.int64)
    c = np.ascontiguousarray
    count = _stored_constants(
        c(kinds, dtype=np.uint8),
        c(rotations, dtype=F32),
        c(translations, dtype=np.float64),
        c(scales, dtype=np.float64),
        c(dropped, dtype=np.int64),
        values,
        layouts,
    )
    return values[:count], layouts[:count]


@kernel
def _stored_constants(kinds, rotations, translations, scales, dropped, values, layouts):
    """`stored_constants` into values (J * 3, 3) and layouts (J * 3,); returns how many."""
    n = 0
    for j in range(kinds.shape[0]):
        for k in range(3):
            if kinds[j, k] != _CONSTANT:
                continue
            for c in range(3):
                if k == 0:
                    values[n, c] = rotations[j, c]
                elif k == 1:
                    values[n, c] = np.float32(translations[j, c])
                else:
                    values[n, c] = np.float32(scales[j, c])
            layouts[n] = dropped[j] if k == 0 else -1
            n += 1
    return n
