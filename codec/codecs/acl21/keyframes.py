"""The values ACL 2.1 stores, turned back into float32 the way its decoder does.

Every operation is ACL's, in float32 and in its order (a multiply and an add are two
roundings: ACL 2.1 is built without fused multiply-add), so decoded values match ACL's to
the bit: a quantised component of N bits is q * (1 / (2^N - 1)); a segment range byte b is
b * (1 / 255); range reduction is value * extent + min, first the segment's then the clip's;
a 16-bit constant-in-segment value is v * (1 / 65535) (then the clip range); raw and
full-precision components are the float32s themselves. A drop-W rotation gets
w = sqrt(|1 - x x - y y - z z|) and is then normalised (ACL's debug decompression, which
`acl_compressor` measures with, always normalises).
"""

from __future__ import annotations

import numpy as np

from codec.codecs.acl21.layout import AclTracks

Array = np.ndarray
F32 = np.float32
ONE = F32(1.0)
INV_BITS = np.array([ONE] + [ONE / F32((1 << n) - 1) for n in range(1, 24)], dtype=F32)
INV_255 = ONE / F32(255.0)
INV_65535 = ONE / F32(65535.0)
CHUNK = 4096  # stored keyframes decoded at once: bounds the temporary arrays


def read_bits(data: Array, offsets: Array, widths: Array) -> Array:
    """Unsigned values of `widths` (0..32) bits at bit `offsets` (same shape), read from
    the top bit of each byte down; `data` (uint8) must hold 5 bytes past the last value."""
    byte = offsets >> 3
    shift = offsets & 7
    window = np.zeros(offsets.shape, dtype=np.uint64)
    for k in range(5):
        window = (window << np.uint64(8)) | data[byte + k].astype(np.uint64)
    down = (40 - shift - widths).astype(np.uint64)
    mask = (np.uint64(1) << widths.astype(np.uint64)) - np.uint64(1)
    return (window >> down) & mask


def from_positive_w(v: Array) -> Array:
    """Drop-W rotations (..., 4) float32 with x y z set: w rebuilt and the whole normalised,
    in place, as ACL does."""
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    w2 = ((ONE - x * x) - y * y) - z * z
    v[..., 3] = np.sqrt(np.abs(w2))
    return normalize(v)


def normalize(v: Array) -> Array:
    """Quaternions (..., 4) float32 normalised in place: ACL's dot, sqrt, reciprocal."""
    x, y, z, w = v[..., 0], v[..., 1], v[..., 2], v[..., 3]
    dot = ((x * x + y * y) + z * z) + w * w
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = ONE / np.sqrt(dot)
    v *= inv[..., None]
    return v


def constant_values(t: AclTracks) -> Array:
    """(Kc, 4) float32 constant sub-track values as decoded (rotations with w rebuilt)."""
    c = t.constants.copy()
    rot = t.constant_tracks[:, 1] == 0
    if t.rotation_format != "quatf_full" and np.any(rot):
        c[rot] = from_positive_w(c[rot])
    return c


def base_pose(t: AclTracks, defaults: Array) -> Array:
    """(J, 10) float32 local values of default and constant sub-tracks (rotation xyzw,
    translation, scale); animated sub-tracks hold their defaults until overwritten.
    `defaults` (J, 10): the default value of every track (the bind pose)."""
    pose = np.asarray(defaults, dtype=F32).copy()
    consts = constant_values(t)
    for k, (lo, width) in enumerate(((0, 4), (4, 3), (7, 3))):
        sel = t.constant_tracks[:, 1] == k
        pose[t.constant_tracks[sel, 0], lo : lo + width] = consts[sel, :width]
    return pose


def stored_keyframes(t: AclTracks) -> Array:
    """(R, Ka, 4) float32: every stored keyframe's animated sub-track values (R the
    keyframes the file stores, in clip order), decoded as ACL decodes them."""
    seg_of = np.repeat(np.arange(t.num_segments), t.segments[:, 1])[t.retained]
    first_row = np.cumsum(np.add.reduceat(t.retained.astype(np.int64), t.segments[:, 0]))
    first_row = np.concatenate(([0], first_row[:-1]))
    R, Ka = len(seg_of), len(t.animated)
    out = np.zeros((R, Ka, 4), dtype=F32)
    if Ka == 0:
        return out
    widths = t.widths()
    comp_bits = t.bits * widths  # (G, Ka) bits of each sub-track in one keyframe
    starts = np.cumsum(comp_bits, axis=1) - comp_bits  # (G, Ka) within the keyframe
    for lo in range(0, R, CHUNK):
        rows = np.arange(lo, min(lo + CHUNK, R))
        g = seg_of[rows]
        base = t.data_bits[g] + (rows - first_row[g]) * t.pose_bits[g]
        bits = t.bits[g]  # (n, Ka)
        comp = np.arange(4)
        offsets = base[:, None, None] + starts[g][:, :, None] + bits[:, :, None] * comp
        width = np.broadcast_to(bits[:, :, None], offsets.shape)
        live = comp < widths[:, None]  # (Ka, 4)
        q = read_bits(t.data, np.where(live, offsets, 0), np.where(live, width, 0))
        out[lo : lo + len(rows)] = _dequantise(t, q, bits, g)
    return out


def _dequantise(t: AclTracks, q: Array, bits: Array, g: Array) -> Array:
    """Values (n, Ka, 4) float32 of raw integers q (n, Ka, 4) at `bits` (n, Ka) per
    component in segments `g` (n,): ACL's arithmetic, range reductions and rotations."""
    raw = bits == 32
    v = np.where(raw[..., None], q.astype(np.uint32).view(F32), F32(0.0))
    quant = (bits > 0) & ~raw
    v = np.where(quant[..., None], q.astype(F32) * INV_BITS[np.minimum(bits, 23)][..., None], v)
    rng = t.segment_range[g].astype(np.uint32)  # (n, Ka, 6)
    const = (bits == 0) & t.variable  # constant in the segment: 16 bits in the range slot
    if np.any(const):
        rot = t.animated[:, 1] == 0
        hi = np.where(rot, 0, 1)[None, :, None]  # rotations: high byte first; others LE
        idx = np.arange(3)[None, None, :] * 2
        v16 = np.take_along_axis(rng, idx + hi, axis=2) << 8
        v16 |= np.take_along_axis(rng, idx + 1 - hi, axis=2)
        cval = v16.astype(F32) * INV_65535
        v[..., :3] = np.where(const[..., None], cval, v[..., :3])
    seg = quant & t.variable & (t.num_segments > 1)
    if np.any(seg):
        smin = rng[..., :3].astype(F32) * INV_255
        sext = rng[..., 3:].astype(F32) * INV_255
        v[..., :3] = np.where(seg[..., None], v[..., :3] * sext + smin, v[..., :3])
    clip = t.variable & ~raw  # constant-in-segment values are in the clip range too
    if np.any(clip):
        ranged = v[..., :3] * t.clip_extent + t.clip_min
        v[..., :3] = np.where(clip[..., None], ranged, v[..., :3])
    rot = t.animated[:, 1] == 0
    if t.rotation_format != "quatf_full" and np.any(rot):
        v[:, rot] = from_positive_w(v[:, rot])
    return v
