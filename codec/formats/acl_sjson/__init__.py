"""ACL raw clips (`*.acl.sjson`): read versions 1 to 5 (`reader`), write version 5 (`writer`).

Reading covers the `clip` form (header, optional settings, bones, tracks), the `track_list`
form of `qvvf` transform tracks (read into a `Clip`), and scalar track lists (`float1f` ..
`vector4f`, read into a `ScalarTrackList`). Facts the code follows, from ACL's format
reference and reader:

- `is_binary_exact` clip files store every float as a quoted hex string of its IEEE-754
  float64 bit pattern (ACL writes `%X` of the 64-bit word); track lists store float32 bit
  patterns. Decimal numbers are also accepted in binary-exact files.
- Missing `rotations` / `translations` / `scales` hold the bone's bind value (the bind pose
  is the default of every sub-track). ACL's own reader fills identity instead; on every
  shared clip the two agree, because no bone that lacks a sub-track has a bind value for it.
- Precision comes from `settings.error_threshold` (v2+), or the v1 clip header's
  `error_threshold`, else 0.01; a bone's own `precision` key (not ACL's) wins when present.
- ACL's reader expects keys in the order its writer emits them, so the writer follows that
  order exactly; the reader here accepts any order.
- Every number must be one the codec can hold (codec.model.limits): values within float32's
  range, positive distances within it too, a sample rate of 1e-3 to 1e6 Hz; the message
  names the line. Bones without a track are filled from their bind pose, so
  `num_samples x bones` is checked against the file's transform budget before that fill
  is allocated (10,000 bones and one 3,000-row track would be 30 million transforms).

Writing uses binary-exact float64 hex by default, so write -> read gives back the same float64
arrays bit for bit; with `binary_exact=False` it writes shortest round-trip decimals (Python's
repr, up to 17 significant digits), which are exact too.
"""

from __future__ import annotations

import os

from codec.errors import ClipFormatError
from codec.formats.acl_sjson.reader import read_acl_sjson
from codec.formats.acl_sjson.writer import write_acl_sjson
from codec.formats.spec import FormatSpec
from codec.model.clip import Clip
from codec.model.scalar_tracks import ScalarTrackList
from codec.model.units import Units

__all__ = ["FORMAT", "read_acl_sjson", "write_acl_sjson"]


def read_clip(path: str | os.PathLike[str], data: bytes | None = None) -> Clip:
    """A transform clip of an ACL SJSON file; a scalar track list is refused by name."""
    result = read_acl_sjson(path, data=data)
    if isinstance(result, ScalarTrackList):
        raise ClipFormatError(
            path,
            f"is a scalar track list ({result.track_type}), not a transform clip; "
            "Shellscope inspects transform clips",
        )
    return result


def write_clip(clip: Clip, path: str | os.PathLike[str], **options: bool) -> list[str]:
    write_acl_sjson(clip, path, **options)
    return []


FORMAT = FormatSpec(
    name="sjson",
    label="ACL SJSON",
    extensions=(".acl.sjson", ".sjson"),
    read=read_clip,
    write=write_clip,
    write_options=("binary_exact",),
    units=Units("cm", 1.0, "assumed", reason="ACL SJSON declares no units; ACL's clips are in cm"),
)
