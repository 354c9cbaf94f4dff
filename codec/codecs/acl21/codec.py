"""`acl-2.1` as a codec: ACL 2.1's own `acl_compressor` run on the clip (AclCodec), or ACL's
output read from a file made elsewhere (AclOutput), measured as every codec is.

Either way the bytes are ACL's, matched to the clip by track name (ACL's track order may
differ from the clip's; a name either side lacks, another hierarchy or another length is an
error naming it), decoded as ACL decodes them (codec.codecs.acl21.decoder) and described by
ACL's own headers (codec.codecs.acl21.details). A run of the compressor stores ACL's buffer
without its optional metadata (names, parents, descriptions: the .ssc frame keeps the
skeleton), which is ACL's own compressed size; a file read as it is keeps them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from codec.codecs import acl_compressor_path
from codec.codecs.acl21 import compressor, layout
from codec.codecs.acl21.decoder import AclDecoder
from codec.codecs.acl21.details import stats_details, track_costs
from codec.codecs.acl21.layout import AclTracks
from codec.codecs.base import Encoded, Progress
from codec.errors import CompressedFormatError, SettingsError
from codec.measure.acl_metric import acl_max_error, normalize_deterministic
from codec.measure.shells import DominantShells, dominant_shells, segment_dominant_shells
from codec.model.clip import Clip, Skeleton
from codec.settings import CompressionSettings

NAME = "acl-2.1"
CODEC_ID = 21
ACL_STATS = ("compressed_size", "max_error", "worst_track", "worst_time", "compression_time")


class AclCodec:
    """ACL 2.1 itself: acl_compressor run on the clip with the tuning's per-joint precision
    and shell distance, its level and keyframe stripping."""

    name = NAME
    description = (
        "ACL 2.1 itself: acl_compressor (--acl-compressor PATH or SHELLSCOPE_ACL_COMPRESSOR) "
        "run on the clip, its bytes decoded as ACL does"
    )
    codec_id = CODEC_ID
    in_auto = False  # an external program, and not held to the precision: never auto's pick

    def unavailable(self) -> str | None:
        """None when acl_compressor can run, else why the codec cannot."""
        return acl_compressor_path.problem(acl_compressor_path.configured())

    def encode(
        self,
        clip: Clip,
        settings: CompressionSettings,
        progress: Progress | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> Encoded:
        path = acl_compressor_path.configured()
        why = acl_compressor_path.problem(path)
        if why:
            raise SettingsError(f"codec {NAME} is unavailable: {why}")
        assert path is not None
        if progress is not None:
            progress(0.0, "ACL 2.1: acl_compressor")
        run = compressor.run(
            clip,
            path,
            settings.level,
            settings.strip_proportion,
            settings.strip_threshold,
            cancelled,
        )
        extra: dict[str, Any] = {
            "acl_compressor": path,
            "acl_level": settings.level,
            "acl_stats": {k: run.stats[k] for k in ACL_STATS if k in run.stats},
        }
        notes = []
        if not settings.strip_trivial:
            notes.append("acl_compressor always strips trivial keyframes")
        if not settings.loop_optimization:
            notes.append("acl_compressor always optimises loops")
        if notes:
            extra["acl_notes"] = notes
        return encoded(run.data, clip, extra)

    def decode(self, payload: bytes, skeleton: Skeleton) -> AclDecoder:
        tracks = matched(layout.read(payload), skeleton)
        return AclDecoder(tracks, skeleton)

    def describe(self, payload: bytes) -> dict[str, Any]:
        """What `info` shows of a payload: ACL's headers."""
        return stats_details(layout.read(payload))


class AclOutput(AclCodec):
    """ACL's compressed output from a file (`acl_compressor -out=FILE.acl`, a game's
    export): the same codec, its bytes fixed; tuning changes what is measured, not them.
    ACL's own measure of it starts from the raw rotations normalised as ACL's reader of
    `clip` SJSON files normalises them (acl_compressor's usual input)."""

    def __init__(self, data: bytes, source: str = "") -> None:
        self.data = bytes(data)
        self.source = source
        self.tracks = layout.read(self.data)  # CompressedFormatError before any clip is read
        self.description = f"ACL 2.1's compressed output{f' ({source})' if source else ''}"

    def unavailable(self) -> str | None:
        return None

    def check(self, clip: Clip) -> None:
        """CompressedFormatError naming the file and what does not fit `clip` (its joints,
        hierarchy, length or rate), before any decoding."""
        try:
            fits(matched(self.tracks, clip.skeleton), clip)
        except CompressedFormatError as e:
            where = f"{self.source}: " if self.source else ""
            raise CompressedFormatError(f"{where}{e} ({clip.name or 'the clip'})") from None

    def encode(
        self,
        clip: Clip,
        settings: CompressionSettings,
        progress: Progress | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> Encoded:
        extra = {"acl_output": self.source} if self.source else {}
        try:
            return encoded(self.data, clip, extra, read_normalised=True)
        except CompressedFormatError as e:
            where = f"{self.source}: " if self.source else ""
            raise CompressedFormatError(f"{where}{e} ({clip.name or 'the clip'})") from None


def matched(tracks: AclTracks, skeleton: Skeleton) -> AclTracks:
    """`tracks` renumbered to the skeleton's joints by name (as they are when the file
    names none); CompressedFormatError naming what does not match."""
    names = tracks.metadata.track_names
    J = skeleton.num_joints
    if names is None:
        if tracks.num_tracks != J:
            raise CompressedFormatError(
                f"the ACL data holds {tracks.num_tracks} tracks and no names; the clip has "
                f"{J} joints"
            )
        return tracks
    index = {n: j for j, n in enumerate(skeleton.names)}
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise CompressedFormatError(f"the ACL data names two tracks {dup!r}")
    missing = [n for n in names if n not in index]
    if missing:
        raise CompressedFormatError(
            f"ACL track {missing[0]!r} is not a joint of the clip"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
        )
    if len(names) != J:
        absent = [n for n in skeleton.names if n not in set(names)]
        raise CompressedFormatError(
            f"joint {absent[0]!r} of the clip has no ACL track"
            + (f" (and {len(absent) - 1} more)" if len(absent) > 1 else "")
        )
    order = np.array([index[n] for n in names], dtype=np.int64)
    out = layout.reorder(tracks, order)
    parents = out.metadata.parents
    if parents is not None:
        diff = np.flatnonzero(parents != skeleton.parents)
        if len(diff):
            j = int(diff[0])

            def name(p: int) -> str:
                return "no parent" if p < 0 else f"parent {skeleton.names[p]!r}"

            raise CompressedFormatError(
                f"joint {skeleton.names[j]!r} has {name(int(parents[j]))} in the ACL data and "
                f"{name(int(skeleton.parents[j]))} in the clip"
            )
    return out


def fits(tracks: AclTracks, clip: Clip) -> None:
    """CompressedFormatError unless `tracks` (matched to the clip's joints) hold the clip's
    samples at its rate."""
    S = tracks.num_samples + (1 if tracks.wrap else 0)
    if S != clip.num_samples:
        raise CompressedFormatError(
            f"the ACL data holds {S} samples, the clip {clip.num_samples}"
            + (" (ACL dropped the last one to wrap)" if tracks.wrap else "")
        )
    if np.float32(tracks.sample_rate) != np.float32(clip.sample_rate):
        raise CompressedFormatError(
            f"the ACL data is sampled at {tracks.sample_rate:g} Hz, the clip at "
            f"{clip.sample_rate:g} Hz"
        )


def encoded(
    data: bytes, clip: Clip, extra: dict[str, Any] | None = None, read_normalised: bool = False
) -> Encoded:
    """ACL's bytes as an encoding of `clip`: matched to its joints, its length and rate
    checked, decoded, with ACL's details (of the file as given) and per-track costs
    (dominant shells: Shellscope's estimate on the raw clip, for the views). The payload
    is ACL's buffer without its metadata (ACL's own compressed size) when its tracks are in
    the clip's joint order, else as given (its names say which track is which joint).
    `read_normalised`: ACL read the raw rotations normalising them (its `clip` SJSON form),
    which ACL's own measure then starts from."""
    full = layout.read(data)
    tracks = matched(full, clip.skeleton)
    fits(tracks, clip)
    # ACL's own measure starts from ACL's default values (its metadata keeps them); the
    # payload's decoder, like a game's, from the bind pose the clip supplies
    measured = acl_measure(AclDecoder(tracks, clip.skeleton), clip, read_normalised)
    payload = bytes(data)
    if tracks is full:  # the clip's order: the frame's skeleton names the tracks
        payload = layout.without_metadata(data, full)
        tracks = layout.read(payload)
    decoder = AclDecoder(tracks, clip.skeleton)
    distance, precision = dominant_shells(clip)
    seg_distance, seg_precision = segment_dominant_shells(clip, tracks.segments, tracks.wrap)
    shells = DominantShells(distance, precision, seg_distance, seg_precision)
    details = stats_details(full)
    details["acl_measure"] = measured
    details.update(extra or {})
    return Encoded(payload, decoder, details, track_costs(tracks, shells))


def acl_measure(decoder: AclDecoder, clip: Clip, read_normalised: bool = False) -> dict[str, Any]:
    """ACL's own measure of its pose against the clip (codec.measure.acl_metric): the
    `max_error` / `worst_track` / `worst_time` acl_compressor and a game's log report,
    computed as ACL computes them; it equals ACL's to the bit when ACL read these very
    float32 values (`read_normalised`: with its rotations normalised as its reader of
    `clip` SJSON files does)."""
    sk = clip.skeleton
    rot = normalize_deterministic(clip.rotations) if read_normalised else clip.rotations
    raw = np.concatenate((rot, clip.translations, clip.scales), axis=-1)
    error, joint, time = acl_max_error(
        raw,
        decoder.poses_at,
        clip.sample_rate,
        sk.parents,
        sk.shell_distance,
        decoder.tracks.has_stripped,
    )
    return {
        "max_error": error,
        "worst_track": joint,
        "worst_track_name": sk.names[joint],
        "worst_time": time,
    }


CODEC = AclCodec()
