"""Decoding an acl-style payload: the whole clip at once, or one pose at any time and rounding.

Every sample of the source grid can be decoded: a stored keyframe from its bits, a stripped
one rebuilt from the stored keyframes around it (keyframe_stripping.rebuild). Sampling
rounds on the source grid first (floor, ceil and nearest pick source samples, as without
stripping) and then decodes or rebuilds those samples, so stepped playback still steps every
source frame and a stripped keyframe shows as its rebuild.
"""

from __future__ import annotations

import numpy as np

from codec.codecs.acl_style import layout as ssc_format
from codec.codecs.acl_style.bit_rates import has_segment_range
from codec.codecs.acl_style.constant_tracks import rebuild_rotations
from codec.codecs.acl_style.keyframe_stripping import Rows, assemble
from codec.codecs.acl_style.quantize import decode_params, decode_value, segment_range_decode
from codec.codecs.base import sample_keys_of
from codec.errors import ClipValidationError, CompressedFormatError
from codec.jit import inlined, kernel
from codec.model import additive
from codec.model.clip import UNIT_EXACT, Clip, Skeleton, exactly_unit
from codec.model.pose_blend import blend_rows
from codec.model.sampling import (
    Pose,
    blend,
    duration_of,
    sample_keys_batch,
)

Array = np.ndarray
DECODE_CHUNK = 256  # samples decoded per batch: bounds the temporary arrays
KEEP_ROWS = 1 << 17  # stored samples x joints whose decoded poses a decoder keeps (10 MB)
F32 = np.float32


class CompressedClip:
    """A decoded view of one acl-style payload (codec.codecs.base.Decoder).

    Parsing unpacks every segment's integers once; `sample` then dequantises only the two
    samples it blends, and `decode_all` dequantises every sample in one batch. Default
    sub-tracks take the skeleton's bind pose. The sample grid is the stored one: a wrapping
    clip stores S - 1 samples and its last blends back into the first.
    """

    codec_name = "acl-style"

    def __init__(
        self,
        parsed: ssc_format.ParsedPayload,
        skeleton: Skeleton,
        tables: tuple[Array, Array] | None = None,
        base: tuple[Array, Array, Array] | None = None,
    ) -> None:
        """`tables`: the decoding parameters (G, Ka, 4) and (G, Ka, 17) when the caller has
        them already (the compressor), see codec.codecs.acl_style.quantize.decode_params;
        `base`: the pose of the default and constant sub-tracks, rotations (J, 4),
        translations and scales (J, 3) float64 (bind values, constants as decoded), when the
        caller has it (the compressor)."""
        enc = parsed.encoded
        sk = skeleton
        if sk.num_joints != enc.num_joints:
            raise CompressedFormatError(
                f"skeleton has {sk.num_joints} joints, the data {enc.num_joints}"
            )
        self.encoded = enc
        self.skeleton = sk
        self.data = parsed.data
        self.sample_rate = enc.sample_rate
        self.num_samples = enc.num_samples
        self.wrap = enc.wrap
        self.duration = duration_of(enc.num_samples, enc.sample_rate, enc.wrap)
        self._build_tables(tables, base)
        # every stored sample decoded and normalised, once decode_all has run (small clips):
        # what sample_times blends, so measuring between samples decodes nothing again
        self._rows: tuple[Array, Array, Array] | None = None

    # --- tables built once ----------------------------------------------------------------
    def _build_tables(
        self, tables: tuple[Array, Array] | None, base: tuple[Array, Array, Array] | None
    ) -> None:
        enc = self.encoded
        sizes = enc.segment_sizes
        ka = len(enc.clip_layout)
        self._q = np.ascontiguousarray(
            np.concatenate(enc.samples, axis=0) if ka else np.zeros((self.num_samples, 0, 3)),
            dtype=np.uint32,
        )
        if len(sizes) == 1:  # stored sample -> its segment
            self._seg_of = np.zeros(self.num_samples, dtype=np.int64)
        else:
            self._seg_of = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
        self.retained = enc.retained_mask()  # (S,) which keyframes the file stores
        if enc.retained is None:  # stored sample -> row of self._q
            self._packed = np.arange(len(self.retained), dtype=np.int64)
        else:
            self._packed = np.cumsum(self.retained) - 1
        self._rate = np.ascontiguousarray(enc.bit_rates, dtype=np.int64)
        if tables is None:
            smin, sext = segment_range_decode(enc.seg_min, enc.seg_extent)
            ranged = has_segment_range(self._rate, enc.num_segments > 1)[..., None]
            tables = decode_params(
                enc.stored_components(),
                enc.seg_dropped,
                enc.clip_min,
                enc.clip_extent,
                np.where(ranged, smin, F32(0.0)),
                np.where(ranged, sext, F32(1.0)),
                enc.seg_constant,
            )
        self._lay, self._dec = tables
        self._base = self._base_pose() if base is None else base
        anim = enc.animated
        self._track_joint = np.ascontiguousarray(anim[:, 0], dtype=np.int64)
        self._track_sub = np.ascontiguousarray(anim[:, 1], dtype=np.int64)

    def on_skeleton(self, skeleton: Skeleton) -> CompressedClip:
        """This decoder giving its clips `skeleton` (the same joints and parents; the
        default values stay those it was made with): a bind mode's encoding of a clip whose
        bind pose it replaced, handed back under the clip's own skeleton."""
        out = object.__new__(type(self))  # copy.copy, without its reduce protocol's detour
        out.__dict__.update(self.__dict__)
        out.skeleton = skeleton
        return out

    def _base_pose(self) -> tuple[Array, Array, Array]:
        """The default values (the bind pose, or the identity: the payload's bind code)
        with the constant sub-tracks' decoded values in their place."""
        enc = self.encoded
        rot, tr, sc = (a.copy() for a in default_pose(enc.bind, self.skeleton))
        consts = enc.constant_tracks
        is_rot = consts[:, 1] == 0
        if np.any(is_rot):
            rot[consts[is_rot, 0]] = rebuild_rotations(
                enc.constants[is_rot], enc.const_dropped[is_rot]
            )
        tr[consts[consts[:, 1] == 1, 0]] = enc.constants[consts[:, 1] == 1]
        sc[consts[consts[:, 1] == 2, 0]] = enc.constants[consts[:, 1] == 2]
        return rot, tr, sc

    def decode_rows(self, rows: Array) -> tuple[Array, Array, Array]:
        """Stored samples `rows (n,)` as local rotations (n, J, 4), translations and scales
        (n, J, 3), float64 of the float32 values a runtime decodes (rotations as decoded,
        not yet renormalised); a stripped keyframe is rebuilt from its stored neighbours."""
        rows = np.asarray(rows, dtype=np.int64)
        if self.encoded.retained is None:
            return self._decode_kept(rows)
        return assemble(self.retained, rows, self._decode_kept)

    def _decode_kept(self, rows: Array) -> tuple[Array, Array, Array]:
        """`decode_rows` of stored keyframes only (compiled: quantize.decode_value on every
        animated sub-track of every row, numpy's decode_values to the bit)."""
        n, sk = len(rows), self.skeleton
        out = (np.empty((n, sk.num_joints, 4)), np.empty((n, sk.num_joints, 3)))
        out = (*out, np.empty((n, sk.num_joints, 3)))
        _decode_rows(
            self._q,
            self._q.view(F32),
            self._packed,
            self._seg_of,
            np.ascontiguousarray(rows, dtype=np.int64),
            self._rate,
            self._lay,
            self._dec,
            self._track_joint,
            self._track_sub,
            *self._base,
            *out,
        )
        return out

    def clip_of(self, rot: Array, tr: Array, sc: Array, looping: bool, name: str = "") -> Clip:
        """A Clip of decoded local arrays (see `decoded_clip`)."""
        return decoded_clip(self.skeleton, self.sample_rate, (rot, tr, sc), looping, name)

    # --- public ---------------------------------------------------------------------------
    def decode_all(self) -> Clip:
        """Every stored sample as a Clip (S stored samples, `looping` when wrapping). A small
        clip's rows are kept for `sample_times` (they depend on the payload alone)."""
        return self._decoded(np.arange(self.num_samples), self.wrap, "")

    def decode_source(self, name: str = "") -> Clip:
        """Every sample of the clip that was compressed: a wrapping clip's dropped last
        sample comes back as the first decoded again, so sample counts match the source.
        One Clip made (its checks are most of a long clip's decoding time)."""
        rows = np.arange(self.num_samples + (1 if self.wrap else 0))
        rows[self.num_samples :] = 0
        return self._decoded(rows, self.wrap, name)

    def _decoded(self, rows: Array, looping: bool, name: str) -> Clip:
        """The Clip of stored samples `rows (n,)`, which begin with every stored sample in
        order; those are kept for `sample_times` when the clip is small."""
        rot, tr, sc = self.decode_rows(rows)
        stored = self.num_samples
        keep = self._rows is None and stored * rot.shape[1] <= KEEP_ROWS
        if keep:
            with np.errstate(invalid="ignore", divide="ignore"):  # corrupt: clip_of says so
                unit = rot[:stored] / np.linalg.norm(rot[:stored], axis=-1, keepdims=True)
            rows_kept = (unit, tr[:stored].copy(), sc[:stored].copy())  # the clip owns tr, sc
        clip = self.clip_of(rot, tr, sc, looping=looping, name=name)
        if keep:
            self._rows = rows_kept
        return clip

    def sample(
        self,
        t: float,
        rounding: str = "nearest",
        looping: str | None = None,
        per_track: Array | list[str] | None = None,
        interpolation: str = "nlerp",
    ) -> Pose:
        """Pose at time `t` (seconds) under a rounding mode.

        looping: None keeps the file's behaviour, 'clamp' holds the last sample, 'wrap'
        blends the last sample into the first. per_track: (J,) base modes for 'per_track'.
        interpolation: 'nlerp' (ACL) or 'slerp' for rotations.
        """
        keys = sample_keys_of(self, t, rounding, looping, per_track, interpolation)
        rot, tr, sc = self.decode_rows(np.array([keys.first, keys.second]))
        rot = rot / np.linalg.norm(rot, axis=-1, keepdims=True)
        return blend(
            Pose(rot[0], tr[0], sc[0]), Pose(rot[1], tr[1], sc[1]), keys.alpha, interpolation
        )

    def sample_times(self, times: Array, rounding: str = "none") -> tuple[Array, Array, Array]:
        """Rotations (N, J, 4), translations and scales (N, J, 3) float64 at times (N,),
        blended by nlerp as `sample` does, in batches of DECODE_CHUNK times. Each stored
        sample a batch needs is decoded once (supersampled times share their two samples),
        or none when `decode_all` has kept every sample; the compiled blend
        (codec.model.pose_blend) gives numpy's nlerp to the bit without its (N, J, 4)
        temporaries."""
        first, second, alpha = sample_keys_batch(
            times, self.sample_rate, self.num_samples, rounding, self.wrap, self.duration
        )
        n, nj = len(first), self.skeleton.num_joints
        out = (np.empty((n, nj, 4)), np.empty((n, nj, 3)), np.empty((n, nj, 3)))
        if self._rows is not None:  # every stored sample decoded already (decode_all)
            return blend_rows(self._rows, first, second, alpha, out)
        for lo in range(0, n, DECODE_CHUNK):
            hi = min(lo + DECODE_CHUNK, n)
            rows, at = np.unique(np.concatenate((first[lo:hi], second[lo:hi])), return_inverse=True)
            rot, tr, sc = self.decode_rows(rows)  # each row alone: the same values as ever
            rot = rot / np.linalg.norm(rot, axis=-1, keepdims=True)
            part = (out[0][lo:hi], out[1][lo:hi], out[2][lo:hi])
            blend_rows((rot, tr, sc), at[: hi - lo], at[hi - lo :], alpha[lo:hi], part)
        return out


_decode_value = inlined(decode_value)


@kernel
def _decode_rows(
    q,
    qf,
    packed,
    seg_of,
    rows,
    rate,
    lay,
    dec,
    track_joint,
    track_sub,
    b_rot,
    b_tr,
    b_sc,
    rot,
    tr,
    sc,
):
    """rot (n, J, 4), tr and sc (n, J, 3) = the stored samples `rows (n,)`: the base pose
    (bind or constant values) with every animated sub-track decoded from its integers q
    (R, T, 3) (qf: the same bits as float32, for raw rates) at row packed[s] of segment
    seg_of[s], by the segment's rate, lay and dec (G, T, ...)."""
    out4 = np.zeros(4, dtype=np.float32)
    for i in range(rows.shape[0]):
        s = rows[i]
        g = seg_of[s]
        row = packed[s]
        for j in range(b_rot.shape[0]):
            for c in range(4):
                rot[i, j, c] = b_rot[j, c]
            for c in range(3):
                tr[i, j, c] = b_tr[j, c]
                sc[i, j, c] = b_sc[j, c]
        for k in range(track_joint.shape[0]):
            out4[3] = 0.0
            _decode_value(q[row, k], qf[row, k], rate[g, k], lay[g, k], dec[g, k], out4)
            j = track_joint[k]
            sub = track_sub[k]
            if sub == 0:
                for c in range(4):
                    rot[i, j, c] = out4[c]
            elif sub == 1:
                for c in range(3):
                    tr[i, j, c] = out4[c]
            else:
                for c in range(3):
                    sc[i, j, c] = out4[c]


def normalise(rot: Array) -> None:
    """Decoded rotations (..., 4) divided by their float64 length, in place (corrupt data
    divides by zero: the Clip made of them says so)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        rot /= np.sqrt(np.einsum("...i,...i->...", rot, rot))[..., None]


def unit_decoded(rot: Array) -> Array:
    """Decoded rotations (n, J, 4), taken over, as the Clip made of them holds them:
    `normalise`, then codec.model.clip.exactly_unit (the very array: it is fresh). One
    compiled pass where numpy's einsum sums the squares in the order the kernel does
    (SUMS_PAIRWISE), else numpy's own steps; the same bits either way."""
    if SUMS_PAIRWISE and rot.ndim == 3 and rot.flags.c_contiguous and rot.dtype == np.float64:
        _unit_rows(rot.reshape(-1, 4), UNIT_EXACT)
        return rot
    normalise(rot)
    return exactly_unit(rot)


@kernel
def _unit_rows(rot, unit_exact):
    """`unit_decoded` of rows (N, 4) in place: each divided by its length, then again by
    the new length where that is off 1 by more than unit_exact (exactly_unit's test)."""
    for i in range(rot.shape[0]):
        for step in range(2):
            x, y, z, w = rot[i, 0], rot[i, 1], rot[i, 2], rot[i, 3]
            n = np.sqrt((x * x + z * z) + (y * y + w * w))  # numpy's einsum, here
            if step == 1 and not abs(n - 1.0) > unit_exact:
                break
            for c in range(4):
                rot[i, c] = rot[i, c] / n


def _sums_pairwise() -> bool:
    """Whether numpy's einsum("...i,...i->...") sums a quaternion's squares as
    (x² + z²) + (y² + w²), as its SIMD reduction does on x86-64 (another CPU may fuse
    multiply-adds or add in turn): checked once per process on rows whose sums those orders
    round apart, in the shapes decoding hands it."""
    rng = np.random.default_rng(20261129)
    for shape in ((1, 1, 4), (2, 44, 4), (26, 7, 4), (300, 3, 4)):
        q = rng.normal(size=shape) * rng.uniform(0.1, 10.0, (*shape[:-1], 1))
        x, y, z, w = (q[..., c] for c in range(4))
        if not np.array_equal(np.einsum("...i,...i->...", q, q), (x * x + z * z) + (y * y + w * w)):
            return False
    return True


SUMS_PAIRWISE = _sums_pairwise()


def decoded_clip(
    skeleton: Skeleton, sample_rate: float, rows: Rows, looping: bool, name: str = ""
) -> Clip:
    """A Clip of decoded local arrays (from `decode_rows`, taken over: rotations are made
    unit in float64 in place, the way codec.model.clip.Clip would on a copy)."""
    rot, tr, sc = rows
    normalise(rot)
    try:
        return Clip(skeleton, sample_rate, rot, tr, sc, looping=looping, name=name)
    except ClipValidationError as e:  # only corrupt data decodes to an invalid clip
        raise CompressedFormatError(f"the data decodes to an invalid clip: {e}") from None


def default_pose(code: int, skeleton: Skeleton) -> tuple[Array, Array, Array]:
    """(J, ...) what default sub-tracks hold under a payload's bind code (layout.BIND_CODES):
    the bind pose (strip), or the identity of the stored values' space."""
    name = ssc_format.BIND_CODES[code]
    if name == "strip":
        return skeleton.bind_rotations, skeleton.bind_translations, skeleton.bind_scales
    fmt = "additive1" if name == "base-additive1" else "additive0"
    return additive.identity(fmt, skeleton.num_joints)


def decode(payload: bytes, skeleton: Skeleton) -> CompressedClip:
    """Parse an acl-style payload (CompressedFormatError on anything wrong)."""
    return CompressedClip(ssc_format.read(payload), skeleton)
