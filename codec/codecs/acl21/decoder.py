"""Sampling ACL 2.1's compressed tracks at any time, under every rounding mode, as ACL does.

Time to keyframes, in float32 as ACL computes it: the time is clamped to the clip
((samples - 1) / rate, one sample more when wrapping), `index = t * rate`, the first
keyframe is its integer part and alpha the rest; the second is the next one (the last
again when clamping, the first when wrapping past the end). Rounding snaps alpha: floor to
0, ceil to 1 (always: at a sample time ceil is the next sample), nearest to
floor(alpha + 0.5), none keeps it. With keyframes stripped, the snapped position is then
found between the nearest stored keyframes around it and alpha recomputed there, so a
stripped keyframe shows as the blend ACL rebuilds it with. Per-track rounding keeps alpha
and lets each track take the earlier keyframe (floor), the later one (ceil), the nearer one
(nearest) or the blend (none), ACL's per-track caches.

Blending is ACL's float32 arithmetic: rotations `a + (b' - a) alpha` written as
`b' alpha + (a - a alpha)`, b' negated when the dot product is negative (or -0), then
normalised; translations and scales the same lerp; alpha exactly 0 or 1 takes that keyframe
as decoded. Default sub-tracks take the skeleton's bind pose (ACL's caller supplies them);
constant ones their stored value.
"""

from __future__ import annotations

import numpy as np

from codec.codecs.acl21 import keyframes
from codec.codecs.acl21.keyframes import F32, ONE, normalize
from codec.codecs.acl21.layout import AclTracks
from codec.codecs.base import check_sample_options
from codec.errors import ClipValidationError, CompressedFormatError
from codec.model.clip import Clip, Skeleton
from codec.model.sampling import (
    BASE_ROUNDING,
    ROUNDING_MODES,
    Pose,
    blend,
    duration_of,
)

Array = np.ndarray
CHUNK = 512  # times sampled at once: bounds the (N, tracks, 4) temporaries
_SLOT = np.array([0, 4, 7])  # where rotation, translation and scale start in a (.., 10) pose
_MODE = {m: i for i, m in enumerate(BASE_ROUNDING)}  # none 0, floor 1, ceil 2, nearest 3
LERP, FIRST, SECOND = 0, 1, 2  # how a track takes its two keyframes


def bind_defaults(skeleton: Skeleton) -> Array:
    """(J, 10) float32 default value of every track: the bind pose in float32, as ACL keeps
    the default values of the binary-exact track list Shellscope gives it."""
    sk = skeleton
    return np.concatenate((sk.bind_rotations, sk.bind_translations, sk.bind_scales), axis=1).astype(
        F32
    )


def default_values(tracks: AclTracks, skeleton: Skeleton) -> Array:
    """(J, 10) float32 what default sub-tracks decode to: ACL's stored default values when
    it kept them, the identity (scale 1, or 0 for additive clips) when it says they are
    trivial, else the bind pose (ACL's caller supplies it)."""
    stored = tracks.metadata.defaults
    if stored is not None:
        return np.asarray(stored, dtype=F32)
    if tracks.trivial_defaults:
        out = np.zeros((tracks.num_tracks, 10), dtype=F32)
        out[:, 3] = 1.0
        out[:, 7:] = tracks.default_scale
        return out
    return bind_defaults(skeleton)


class AclDecoder:
    """A decoder (codec.codecs.base.Decoder) over one ACL 2.1 compressed track list.

    Every stored keyframe is decoded once (float32, ACL's arithmetic); sampling then blends
    two of them per time. The sample grid is the stored one: a wrapping clip stores S - 1
    samples and its last blends back into the first."""

    codec_name = "acl-2.1"

    def __init__(
        self, tracks: AclTracks, skeleton: Skeleton, defaults: Array | None = None
    ) -> None:
        """`defaults` (J, 10): the default value of every track (rotation xyzw, translation,
        scale); by default the ones ACL stored with the tracks, else the identity when ACL
        says they are trivial, else the skeleton's bind pose."""
        if skeleton.num_joints != tracks.num_tracks:
            raise CompressedFormatError(
                f"the skeleton has {skeleton.num_joints} joints, the ACL data "
                f"{tracks.num_tracks} tracks"
            )
        self.tracks = tracks
        self.skeleton = skeleton
        self.sample_rate = float(tracks.sample_rate)
        self.num_samples = tracks.num_samples
        self.wrap = tracks.wrap
        self.duration = duration_of(self.num_samples, self.sample_rate, self.wrap)
        self.retained = tracks.retained
        self._rate = F32(tracks.sample_rate)
        if defaults is None:
            defaults = default_values(tracks, skeleton)
        self._base = keyframes.base_pose(tracks, defaults)  # (J, 10)
        self._stored = keyframes.stored_keyframes(tracks)  # (R, Ka, 4)
        self._row = np.cumsum(tracks.retained) - 1  # keyframe -> stored row
        k = np.arange(self.num_samples)
        kept = np.flatnonzero(tracks.retained)
        self._prev = kept[np.searchsorted(kept, k, side="right") - 1]
        self._next = kept[np.minimum(np.searchsorted(kept, k, side="left"), len(kept) - 1)]
        anim = tracks.animated
        self._joint = anim[:, 0]
        self._sub = anim[:, 1]

    # --- time to keyframes ----------------------------------------------------------------
    def keys(
        self, times: Array, rounding: str, wrap: bool | None = None
    ) -> tuple[Array, Array, Array]:
        """First and second keyframe (N,) and alpha (N,) float32 for times (N,) seconds
        under a base rounding mode or 'per_track' (alpha kept), stripped keyframes found."""
        if rounding not in ROUNDING_MODES:
            raise ValueError(f"unknown rounding mode {rounding!r}; expected {ROUNDING_MODES}")
        wrap = self.wrap if wrap is None else wrap
        S = self.num_samples
        span = S + 1 if wrap else S
        duration = F32(span - 1) / self._rate if span > 1 else F32(0.0)
        t = np.clip(np.asarray(times, dtype=np.float64).reshape(-1), 0.0, None).astype(F32)
        t = np.minimum(t, duration)
        index = t * self._rate
        k0 = np.minimum(index.astype(np.int64), S if wrap else S - 1)
        if wrap:
            past = k0 > S - 1  # the repeated first sample, with full weight
            index = np.where(past, F32(0.0), index)
            k0 = np.where(past, 0, k0)
            k1 = np.where(past | (k0 + 1 >= S), 0, k0 + 1)
        else:
            k1 = np.minimum(k0 + 1, S - 1)
        alpha = index - k0.astype(F32)
        if rounding == "floor":
            alpha = np.zeros_like(alpha)
        elif rounding == "ceil":
            alpha = np.ones_like(alpha)
        elif rounding == "nearest":
            alpha = np.floor(alpha + F32(0.5))
        if not self.tracks.has_stripped:
            return k0, k1, alpha
        at = alpha + k0.astype(F32)
        s0 = self._prev[k0]
        s1 = self._next[k1]
        gap = (s1 - s0).astype(F32)
        with np.errstate(divide="ignore", invalid="ignore"):
            inside = (at - s0.astype(F32)) / np.where(gap > 0, gap, ONE)
        alpha = np.where(s0 == s1, F32(0.0), np.where(s0 < s1, inside, at - s0.astype(F32)))
        return s0, s1, alpha.astype(F32)

    def _alphas(self, alpha: Array, rounding: str, per_track: object) -> tuple[Array, Array]:
        """The alpha (N, J) float32 each track blends with, and how (N, J) int8: LERP, or
        FIRST / SECOND for the keyframe itself. Rounding none always blends (ACL normalises
        the blend even at alpha 0); floor, ceil and nearest take the keyframe they snapped
        to, or with stripped keyframes blend between the stored ones around it (the rebuild
        a game's decompression gives); per-track rounding takes each track's own: floor the
        earlier keyframe, ceil the later, nearest the nearer, none the blend."""
        n, J = len(alpha), self.skeleton.num_joints
        alphas = np.broadcast_to(alpha[:, None], (n, J))
        if rounding != "per_track":
            if rounding == "none" or self.tracks.has_stripped:
                return alphas, np.full((n, J), LERP, dtype=np.int8)
            how = np.where(alpha == 0, FIRST, SECOND).astype(np.int8)
            return alphas, np.broadcast_to(how[:, None], (n, J))
        if per_track is None:
            raise ValueError("rounding 'per_track' needs a mode per joint")
        modes = np.asarray(per_track)
        if modes.shape != (J,) or np.any(~np.isin(modes, BASE_ROUNDING)):
            raise ValueError(f"per-track rounding needs one of {BASE_ROUNDING} per joint")
        code = np.array([_MODE[m] for m in modes.tolist()])
        near = np.where(alpha[:, None] < F32(0.5), FIRST, SECOND)
        how = np.select([code == 1, code == 2, code == 3], [FIRST, SECOND, near], LERP)
        return alphas, how.astype(np.int8)

    # --- blending -------------------------------------------------------------------------
    def _poses(self, k0: Array, k1: Array, alphas: Array, how: Array) -> Array:
        """(N, J, 10) float32 local poses from keyframes k0 and k1 (N,): default and
        constant sub-tracks as they are, animated ones blended by alphas (N, J) or taken
        whole where `how` (N, J) says FIRST or SECOND."""
        n = len(k0)
        out = np.repeat(self._base[None], n, axis=0)
        if len(self._joint) == 0:
            return out
        a = self._stored[self._row[k0]]  # (N, Ka, 4)
        b = self._stored[self._row[k1]]
        alpha = alphas[:, self._joint][..., None]  # (N, Ka, 1)
        pick = how[:, self._joint][..., None]
        rot = self._sub == 0
        v = _lerp(a, b, alpha)
        if np.any(rot):
            v[:, rot] = _nlerp(a[:, rot], b[:, rot], alpha[:, rot])
        v = np.where(pick == FIRST, a, np.where(pick == SECOND, b, v))
        for k, width in enumerate((4, 3, 3)):
            sel = self._sub == k
            lo = _SLOT[k]
            out[:, self._joint[sel], lo : lo + width] = v[:, sel, :width]
        return out

    def poses_at(
        self,
        times: Array,
        rounding: str = "none",
        per_track: object = None,
        wrap: bool | None = None,
    ) -> Array:
        """(N, J, 10) float32 local poses at times (N,) seconds, ACL's output exactly."""
        times = np.asarray(times, dtype=np.float64).reshape(-1)
        out = np.empty((len(times), self.skeleton.num_joints, 10), dtype=F32)
        for lo in range(0, len(times), CHUNK):
            k0, k1, alpha = self.keys(times[lo : lo + CHUNK], rounding, wrap)
            alphas, how = self._alphas(alpha, rounding, per_track)
            out[lo : lo + len(k0)] = self._poses(k0, k1, alphas, how)
        return out

    def grid(self) -> Array:
        """(S, J, 10) float32 the pose at every sample of the stored grid (nearest: each
        sample itself, or for a stripped keyframe the blend ACL rebuilds it with)."""
        S = self.num_samples
        k = np.arange(S)
        out = np.empty((S, self.skeleton.num_joints, 10), dtype=F32)
        for lo in range(0, S, CHUNK):
            ks = k[lo : lo + CHUNK]
            if self.tracks.has_stripped:
                nxt = np.where(ks + 1 >= S, 0 if self.wrap else S - 1, ks + 1)
                s0, s1 = self._prev[ks], self._next[nxt]
                gap = np.maximum(s1 - s0, 1).astype(F32)
                alpha = np.where(
                    s0 == s1,
                    F32(0.0),
                    np.where(s0 < s1, (ks - s0).astype(F32) / gap, (ks - s0).astype(F32)),
                ).astype(F32)
                how = LERP
            else:
                s0 = s1 = ks
                alpha = np.zeros(len(ks), dtype=F32)
                how = FIRST
            shape = (len(ks), self.skeleton.num_joints)
            alphas = np.broadcast_to(alpha[:, None], shape)
            out[lo : lo + len(ks)] = self._poses(s0, s1, alphas, np.full(shape, how, np.int8))
        return out

    # --- the Decoder interface ------------------------------------------------------------
    def sample(
        self,
        t: float,
        rounding: str = "nearest",
        looping: str | None = None,
        per_track: Array | list[str] | None = None,
        interpolation: str = "nlerp",
    ) -> Pose:
        """Pose at time `t` (seconds) under a rounding mode; looping None keeps the file's,
        'clamp' or 'wrap' override it; interpolation 'nlerp' (ACL) or 'slerp'."""
        check_sample_options(looping, interpolation)
        wrap = None if looping is None else looping == "wrap"
        if interpolation == "nlerp":
            p = self.poses_at(np.array([t]), rounding, per_track, wrap)[0].astype(np.float64)
            return _pose(p)
        k0, k1, alpha = self.keys(np.array([t]), rounding, wrap)
        alphas, how = self._alphas(alpha, rounding, per_track)
        weight = np.where(how == FIRST, 0.0, np.where(how == SECOND, 1.0, alphas))[0]
        first = np.full_like(how, FIRST)
        a = _pose(self._poses(k0, k0, alphas, first)[0].astype(np.float64))
        b = _pose(self._poses(k1, k1, alphas, first)[0].astype(np.float64))
        return blend(a, b, weight.astype(np.float64), "slerp")

    def sample_times(self, times: Array, rounding: str = "none") -> tuple[Array, Array, Array]:
        """Rotations (N, J, 4), translations and scales (N, J, 3) float64 at times (N,), the
        rotations made unit in float64 (as `sample` and the decoded clip have them)."""
        p = self.poses_at(times, rounding).astype(np.float64)
        rot = p[..., :4] / np.linalg.norm(p[..., :4], axis=-1, keepdims=True)
        return rot, p[..., 4:7], p[..., 7:]

    def decode_all(self) -> Clip:
        """Every sample of the stored grid as a Clip (`looping` when wrapping)."""
        return self._clip(self.grid(), self.wrap)

    def decode_source(self, name: str = "") -> Clip:
        """Every sample of the clip that was compressed: a wrapping clip's dropped last
        sample comes back as a copy of the first, so sample counts match the source."""
        g = self.grid()
        if self.wrap:
            g = np.concatenate((g, g[:1]), axis=0)
        return self._clip(g, self.wrap, name)

    def _clip(self, g: Array, looping: bool, name: str = "") -> Clip:
        p = g.astype(np.float64)
        rot = p[..., :4]
        with np.errstate(invalid="ignore", divide="ignore"):
            rot = rot / np.linalg.norm(rot, axis=-1, keepdims=True)
        try:
            return Clip(
                self.skeleton,
                self.sample_rate,
                rot,
                p[..., 4:7].copy(),
                p[..., 7:].copy(),
                looping=looping,
                name=name,
            )
        except ClipValidationError as e:  # only corrupt data decodes to an invalid clip
            raise CompressedFormatError(f"the ACL data decodes to an invalid clip: {e}") from None


def _pose(p: Array) -> Pose:
    rot = p[:, :4] / np.linalg.norm(p[:, :4], axis=-1, keepdims=True)
    return Pose(rot, p[:, 4:7].copy(), p[:, 7:].copy())


def _lerp(a: Array, b: Array, alpha: Array) -> Array:
    """ACL's lerp in float32: b alpha + (a - a alpha)."""
    return b * alpha + (a - a * alpha)


def _nlerp(a: Array, b: Array, alpha: Array) -> Array:
    """ACL's quaternion lerp (..., 4) float32: the end negated when the dot product's sign
    bit is set, lerped, normalised."""
    dot = ((a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1]) + a[..., 2] * b[..., 2]) + a[..., 3] * b[
        ..., 3
    ]
    b = np.where(np.signbit(dot)[..., None], -b, b)
    return normalize(_lerp(a, b, alpha))
