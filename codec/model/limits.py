"""What the codec can hold, and how much a file may make a reader build.

Numbers. The codec stores each animated sub-track's clip range as a float32 minimum and
extent, so every value must lie within half of float32's range for `max - min` to stay
finite: |value| <= MAX_VALUE (1.7e38). Precision and shell distance lie between MIN_DISTANCE
(float32's smallest normal number, 1.2e-38: below it a budget is a length float32 cannot
tell from zero, and 5e-324 divides to infinity) and the same bound (the error metric moves
points that far). Sample rates lie between
MIN_SAMPLE_RATE and MAX_SAMPLE_RATE (a frame time of 1 us to 1000 s): outside that a
duration or a sample time stops being a number the timeline can show.

Sizes. A clip is samples x joints transforms: 80 bytes each in float64, and about 0.3 KB
each while compressing (cmu_13_07 tiled to 512k transforms: 258 MB peak RSS, 93 MB before
compressing). A file may ask for at most `transform_budget(bytes)` of them: as many as it
has bytes on disk (a transform costs several bytes in every raw format), never fewer than
FREE_TRANSFORMS (a small file may hold a long static pose) and never more than
MAX_TRANSFORMS. Readers check the count before they allocate anything sized by it, so a
669-byte file cannot ask for ten million samples.

Native readers. usd-core and ufbx run in a child process (codec.formats.reader_process)
that may hold `reader_memory(bytes)` resident (400 MiB, plus 16 bytes per byte of file, at
most 4 GiB) inside an address space of READER_ADDRESS_SPACE more than that (usd-core reserves
~1 GB it never touches), and run for `reader_seconds(bytes)`. Before the native reader sees
a file, what it declares is checked: the arrays an FBX file declares and the sections of a
USD crate may hold at most `declared_bytes_budget(bytes)` (16 MiB, plus 16 bytes per byte
of file: the shared FBX files declare 1.6 to 4 bytes per byte of their .xz), and a mesh at most
MAX_MESH_ELEMENTS vertices or indices.

Files. Before a reader reads a byte, the file's size (on disk, and again once decompressed)
is checked against its format's cap (`codec.formats.spec.FormatSpec.max_bytes`): a clip the
codec can hold (MAX_TRANSFORMS transforms) fits well within it as every tool writes it (BVH
20-35 bytes a transform, ACL SJSON 160, .ssc at most 40), while a 20 GB file is refused in
the time a stat takes instead of being read (twice its size in memory) and then refused.

Units. A unit scale (FBX UnitScaleFactor, USD metersPerUnit) must be a positive number
between MIN_METERS_PER_UNIT and MAX_METERS_PER_UNIT: 0 collapses a clip to a point, a
negative one mirrors it, and beyond those a centimetre-precision budget means nothing.
"""

from __future__ import annotations

import math
import os

import numpy as np

MAX_VALUE = float(np.finfo(np.float32).max) / 2
MIN_DISTANCE = float(np.finfo(np.float32).tiny)
MIN_SAMPLE_RATE = 1e-3
MAX_SAMPLE_RATE = 1e6
FREE_TRANSFORMS = 1 << 18
MAX_TRANSFORMS = 1 << 22
# The skin error (codec.measure.vertex_error) skins every vertex at every sample and between them,
# about 1.3 million vertex-samples a second here (20,000 vertices x 2,611 samples: 39 s):
# a 640 KB glTF of 20,000 vertices and 262,144 samples would run for over an hour.
FREE_VERTEX_SAMPLES = 1 << 23
VERTEX_SAMPLES_PER_BYTE = 8
FREE_READER_MEMORY = 400 << 20
MAX_READER_MEMORY = 4 << 30
READER_ADDRESS_SPACE = 3 << 29  # 1.5 GiB of reservations on top of the resident limit
READER_SECONDS = 40.0
MAX_READER_SECONDS = 600.0
FREE_DECLARED_BYTES = 16 << 20
DECLARED_BYTES_PER_BYTE = 16
MAX_MESH_ELEMENTS = 1 << 25
MIN_METERS_PER_UNIT = 1e-6
MAX_METERS_PER_UNIT = 1e6
# each format's largest file, in bytes (FormatSpec.max_bytes)
MAX_BVH_BYTES = 256 << 20  # 64 bytes a transform for MAX_TRANSFORMS
MAX_SSC_BYTES = 256 << 20  # raw float32 (40 bytes a transform) for MAX_TRANSFORMS, and names
MAX_CLIP_BYTES = 512 << 20  # ACL SJSON, glTF, FBX, USD: text or meshes and textures beside


def transform_budget(file_bytes: int) -> int:
    """How many transforms (samples x joints) a file of `file_bytes` bytes may make."""
    return min(MAX_TRANSFORMS, max(FREE_TRANSFORMS, int(file_bytes)))


def file_bytes(path: object, data: bytes | None = None) -> int:
    """The size on disk of `path` (for a .gz/.xz/.zst file the compressed size, so a
    compression bomb gets no larger budget than its real size), else len(data)."""
    try:
        return os.stat(os.fspath(path)).st_size  # type: ignore[arg-type]
    except (OSError, TypeError, ValueError):
        return len(data) if data is not None else 0


def reader_memory(file_bytes: int) -> int:
    """Resident bytes a native reader's child process may use for a file of that size."""
    return min(MAX_READER_MEMORY, FREE_READER_MEMORY + 16 * int(file_bytes))


def reader_seconds(file_bytes: int) -> float:
    """Seconds a native reader may take on a file of that size (READER_SECONDS plus one
    per MB, at most MAX_READER_SECONDS)."""
    return min(MAX_READER_SECONDS, READER_SECONDS + int(file_bytes) / 1e6)


def declared_bytes_budget(file_bytes: int) -> int:
    """How many bytes the arrays or sections a file declares may inflate to."""
    return FREE_DECLARED_BYTES + DECLARED_BYTES_PER_BYTE * int(file_bytes)


def unit_problem(meters: float) -> str | None:
    """None for a usable size of one unit in metres, else what is wrong with it."""
    if not math.isfinite(meters) or meters <= 0:
        return "not a positive number (0 collapses the clip to a point, a negative one mirrors it)"
    if not MIN_METERS_PER_UNIT <= meters <= MAX_METERS_PER_UNIT:
        return f"outside {MIN_METERS_PER_UNIT:g}..{MAX_METERS_PER_UNIT:g} m per unit"
    return None


def vertex_sample_budget(file_bytes: int) -> int:
    """How many vertices x samples of skinned meshes a file of `file_bytes` bytes may ask
    the skin error to measure."""
    return max(FREE_VERTEX_SAMPLES, VERTEX_SAMPLES_PER_BYTE * int(file_bytes))


def over_budget(samples: int, joints: int, budget: int) -> str | None:
    """None when samples x joints fits `budget`, else the sentence saying why not."""
    if samples * joints <= budget:
        return None
    return (
        f"{samples} samples x {joints} joints = {samples * joints} transforms is over the "
        f"limit of {budget} for this file"
    )


def value_problem(value: float) -> str | None:
    """None for a value the codec can hold, else what is wrong with it."""
    if not math.isfinite(value):
        return f"{value!r} is not a finite number"
    if abs(value) > MAX_VALUE:
        return f"{value:g} is out of range: the codec holds at most {MAX_VALUE:.3g} (float32)"
    return None


def distance_problem(value: float) -> str | None:
    """None for a usable precision or shell distance, else what is wrong with it."""
    if not (math.isfinite(value) and value > 0):
        return f"{value!r} is not a positive number"
    if value < MIN_DISTANCE:
        return (
            f"{value:g} is too small: the codec holds at least {MIN_DISTANCE:.3g} "
            "(float32's smallest normal number)"
        )
    if value > MAX_VALUE:
        return f"{value:g} is out of range: the codec holds at most {MAX_VALUE:.3g} (float32)"
    return None


def rate_problem(rate: float) -> str | None:
    """None for a usable sample rate in Hz, else what is wrong with it."""
    if not (math.isfinite(rate) and rate > 0):
        return f"{rate!r} Hz is not a positive number"
    if not MIN_SAMPLE_RATE <= rate <= MAX_SAMPLE_RATE:
        return (
            f"{rate:g} Hz is outside {MIN_SAMPLE_RATE:g}..{MAX_SAMPLE_RATE:g} Hz "
            f"(a frame time of {1 / MAX_SAMPLE_RATE:g} to {1 / MIN_SAMPLE_RATE:g} s)"
        )
    return None


def first_out_of_range(values: np.ndarray) -> tuple[int, ...] | None:
    """Index of the first value that is not finite or beyond MAX_VALUE, or None.

    One pass over the array (an all-good check) and an argwhere only when something is bad."""
    a = np.asarray(values)
    with np.errstate(invalid="ignore"):
        good = np.abs(a) <= MAX_VALUE
    if good.all():
        return None
    return tuple(int(i) for i in np.argwhere(~good)[0])
