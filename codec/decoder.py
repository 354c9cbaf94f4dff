"""Decoding .ssc data: the whole clip at once, or one pose at any time and rounding."""

from __future__ import annotations

import numpy as np

from codec import ssc_format
from codec.clip import Clip, Skeleton
from codec.errors import ClipValidationError, CompressedFormatError
from codec.quantize import dequantize, rebuild_rotation, segment_range_decode
from codec.sampling import INTERPOLATIONS, Pose, blend, duration_of, sample_keys

Array = np.ndarray
LOOPING = ("clamp", "wrap")


class CompressedClip:
    """A decoded view of one .ssc file.

    Parsing unpacks every segment's integers once; `sample` then dequantises only the two
    samples it blends, and `decode_all` dequantises every sample in one batch. Default
    sub-tracks take the skeleton's bind pose (from the file's metadata, or given).
    """

    def __init__(self, parsed: ssc_format.ParsedFile, skeleton: Skeleton | None = None) -> None:
        enc = parsed.encoded
        sk = skeleton if skeleton is not None else parsed.skeleton
        if sk is None:
            raise CompressedFormatError("the file has no metadata block: pass the skeleton")
        if sk.num_joints != enc.num_joints:
            raise CompressedFormatError(
                f"skeleton has {sk.num_joints} joints, the data {enc.num_joints}"
            )
        self.encoded = enc
        self.skeleton = sk
        self.data = parsed.data
        self.compressed_size = parsed.compressed_size
        self.metadata_size = parsed.metadata_size
        self.sample_rate = enc.sample_rate
        self.num_samples = enc.num_samples
        self.wrap = enc.wrap
        self.duration = duration_of(enc.num_samples, enc.sample_rate, enc.wrap)
        self._build_tables()

    # --- tables built once ----------------------------------------------------------------
    def _build_tables(self) -> None:
        enc = self.encoded
        sizes = enc.segment_sizes
        ka = len(enc.animated)
        self._q = (
            np.concatenate(enc.samples, axis=0) if ka else np.zeros((self.num_samples, 0, 3))
        ).astype(np.uint32)
        rep = np.repeat(np.arange(enc.num_segments), sizes)
        self._rate = enc.bit_rates.astype(np.int64)[rep]  # (S, Ka)
        if enc.num_segments > 1:
            smin, sext = segment_range_decode(enc.seg_min, enc.seg_extent)
            self._seg_min, self._seg_ext = smin[rep], sext[rep]
        else:
            self._seg_min = self._seg_ext = None
        self._const = enc.seg_constant[rep]
        sk = self.skeleton
        rot = sk.bind_rotations.copy()
        tr = sk.bind_translations.copy()
        sc = sk.bind_scales.copy()
        consts = enc.constant_tracks
        for i, (j, k) in enumerate(consts):
            v = enc.constants[i]
            if k == 0:
                rot[j] = rebuild_rotation(v).astype(np.float64)
            elif k == 1:
                tr[j] = v
            else:
                sc[j] = v
        self._base = (rot, tr, sc)
        anim = enc.animated
        self._anim = [np.flatnonzero(anim[:, 1] == k) for k in range(3)]
        self._anim_joint = [anim[idx, 0] for idx in self._anim]

    def _values(self, rows: Array | slice) -> Array:
        """Dequantised animated values (n, Ka, 3) float32 of stored samples `rows`."""
        enc = self.encoded
        seg_min = None if self._seg_min is None else self._seg_min[rows]
        seg_ext = None if self._seg_ext is None else self._seg_ext[rows]
        return dequantize(
            self._q[rows], self._rate[rows], enc.clip_min, enc.clip_extent,
            seg_min, seg_ext, self._const[rows],
        )  # fmt: skip

    def _assemble(self, values: Array) -> tuple[Array, Array, Array]:
        """Full local arrays (n, J, 4|3) float64 from animated values (n, Ka, 3)."""
        n = values.shape[0]
        out = [np.repeat(b[None], n, axis=0) for b in self._base]
        ri, ti, si = self._anim
        if len(ri):
            out[0][:, self._anim_joint[0]] = rebuild_rotation(values[:, ri])
        if len(ti):
            out[1][:, self._anim_joint[1]] = values[:, ti]
        if len(si):
            out[2][:, self._anim_joint[2]] = values[:, si]
        return out[0], out[1], out[2]

    # --- public ---------------------------------------------------------------------------
    def decode_all(self) -> Clip:
        """Every stored sample as a Clip (S stored samples, `looping` when wrapping)."""
        rot, tr, sc = self._assemble(self._values(slice(None)))
        try:
            return Clip(self.skeleton, self.sample_rate, rot, tr, sc, looping=self.wrap)
        except ClipValidationError as e:  # only corrupt data decodes to an invalid clip
            raise CompressedFormatError(f"the data decodes to an invalid clip: {e}") from None

    def decode_source(self, name: str = "") -> Clip:
        """Every sample of the clip that was compressed: a wrapping clip's dropped last
        sample comes back as a copy of the first, so sample counts match the source."""
        c = self.decode_all()
        if not self.wrap:
            return c.replace(name=name)
        rot, tr, sc = (
            np.concatenate((a, a[:1]), axis=0) for a in (c.rotations, c.translations, c.scales)
        )
        return Clip(self.skeleton, self.sample_rate, rot, tr, sc, looping=True, name=name)

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
        if looping is not None and looping not in LOOPING:
            raise ValueError(f"unknown looping {looping!r}; use one of {LOOPING}")
        if interpolation not in INTERPOLATIONS:
            raise ValueError(f"unknown interpolation {interpolation!r}")
        wrap = self.wrap if looping is None else looping == "wrap"
        keys = sample_keys(
            t, self.sample_rate, self.num_samples, rounding, wrap, per_track, self.duration
        )
        rot, tr, sc = self._assemble(self._values(np.array([keys.first, keys.second])))
        return blend(
            Pose(rot[0], tr[0], sc[0]), Pose(rot[1], tr[1], sc[1]), keys.alpha, interpolation
        )


def decode(data: bytes, skeleton: Skeleton | None = None) -> CompressedClip:
    """Parse .ssc bytes (CompressedFormatError on anything wrong)."""
    return CompressedClip(ssc_format.read(data), skeleton)
