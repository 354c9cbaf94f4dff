"""Size sanity: is the clip, in the unit it was read in, the size of a character?

Every budget Shellscope applies is a length (precision 0.01 cm, shells 3 cm), so a clip
read in the wrong unit is judged against a budget 100 or 1000 times too tight or too loose,
and nothing else looks wrong: the numbers are fine, only the character is the size of a
stadium (Fox.glb declares metres, as glTF must, but is authored in centimetre-sized numbers).
The only evidence of such a slip is the size itself, so it is measured and stated.

**The size** is the longest side of an axis-aligned bounding box (a standing rig's height,
a quadruped's length), the largest of three measures:

- the skeleton at its bind pose (every joint);
- the skeleton in motion: the most compact of up to MOTION_POSES evenly spaced poses. The
  most compact one, because a root left at the origin while the hips travel makes the box
  of a later pose as long as the walk; the bind pose alone can be degenerate (a format
  whose bind pose is all identity puts every joint at the origin);
- the skinned mesh at the skeleton's bind pose, when the clip has one (the mesh reaches
  past the joints: a tail tip, a nose). Skinned rather than as stored: a mesh's own
  vertices may be in another unit than the skeleton, the inverse bind matrices carrying
  the factor.

**The bounds** sit outside the sizes characters have and inside the sizes the usual unit
slips give. Characters run from a few centimetres (a mouse, a large insect) to about 20 m
(the largest game creatures); a human-sized rig (0.7-3 m) read with the unit off by 100
(centimetres taken as metres, or metres as centimetres) lands at 70-300 m or 0.7-3 cm, and
off by 1000 (millimetres) further still. So: below MIN_CM = 3 cm or above MAX_CM = 20 m
is reported. Slips by 10 or 2.54 (mm as cm, inches as cm) keep a character within
character sizes and cannot be told from its size. A size of zero (one joint, or every
joint at one point, and no mesh) says nothing and is not reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codec.model.clip import Clip
from codec.model.mesh import skin_of
from codec.model.pose_space import pose_matrices
from codec.model.transforms import compose
from codec.model.units import UNIT_CM, UNIT_WORDS, units_from_height

Array = np.ndarray

MIN_CM = 3.0  # smaller than any character: e.g. metres read as centimetres
MAX_CM = 2000.0  # larger than any character: e.g. centimetres read as metres
MOTION_POSES = 64  # poses measured of the motion: a hint needs no more, and stays cheap
TYPICAL_CM = 170.0  # the size a suggested unit aims at when no human-height range fits


@dataclass(frozen=True)
class CharacterSize:
    """What a clip measures, in centimetres (the clip's unit): `skeleton_cm` the larger of
    the bind pose's and the motion's extent, `mesh_cm` the skinned mesh's (None: no mesh);
    `size_cm` the largest, `measured` which one it is ("skeleton" or "skinned mesh");
    `diagonal_cm` that box's diagonal (a quadruped's nose-to-tail runs across it)."""

    skeleton_cm: float
    mesh_cm: float | None
    diagonal_cm: float = 0.0  # corner to corner of the box whose longest side is size_cm

    @property
    def size_cm(self) -> float:
        return max(self.skeleton_cm, self.mesh_cm or 0.0)

    @property
    def measured(self) -> str:
        return "skinned mesh" if (self.mesh_cm or 0.0) > self.skeleton_cm else "skeleton"

    @property
    def too_small(self) -> bool:
        return 0.0 < self.size_cm < MIN_CM

    @property
    def too_large(self) -> bool:
        return self.size_cm > MAX_CM


def extent(points: Array) -> Array:
    """Longest side of the bounding box of points (..., N, 3): shape (...,)."""
    return np.max(np.ptp(points, axis=-2), axis=-1)


def diagonal(points: Array) -> Array:
    """Corner-to-corner length of the bounding box of points (..., N, 3): shape (...,)."""
    return np.linalg.norm(np.ptp(points, axis=-2), axis=-1)


def character_size(clip: Clip) -> CharacterSize:
    """Measure `clip` (module docstring: bind pose, motion, skinned mesh)."""
    sk = clip.skeleton
    bind = pose_matrices(
        sk.bind_rotations[None], sk.bind_translations[None], sk.bind_scales[None], sk.parents
    )  # (1, J, 3, 4)
    picks = np.unique(np.linspace(0, clip.num_samples - 1, MOTION_POSES).round().astype(int))
    poses = pose_matrices(
        clip.rotations[picks], clip.translations[picks], clip.scales[picks], sk.parents
    )  # (P, J, 3, 4)
    compact = int(np.argmin(extent(poses[..., 3])))
    boxes = [bind[0, :, :, 3], poses[compact, :, :, 3]]  # (J, 3) each
    sides = [float(extent(b)) for b in boxes]
    skeleton = max(sides)
    diag = float(diagonal(boxes[int(np.argmax(sides))]))
    skin = skin_of(clip.meshes)
    mesh = None
    if skin is not None:
        palette = compose(bind[0, skin.palette_joint], skin.inverse_bind)  # (P, 3, 4)
        moved = np.zeros_like(skin.vertices)  # (V, 3)
        for k in range(skin.influence.shape[1]):  # at most 8 influence slots
            m = palette[skin.influence[:, k]]  # (V, 3, 4)
            at = np.einsum("vij,vj->vi", m[..., :3], skin.vertices) + m[..., 3]
            moved += skin.weights[:, k, None] * at
        mesh = float(extent(moved))
        if mesh > skeleton:
            diag = float(diagonal(moved))
    return CharacterSize(skeleton, mesh, diag)


def length_text(cm: float) -> str:
    """A length for a person to read: '5 mm', '35.2 cm', '1.41 m', '141 m', '2.3 km'."""
    for unit, size, below in (("mm", 0.1, 1.0), ("cm", 1.0, 100.0), ("m", 100.0, 1e5)):
        if cm < below:
            return f"{cm / size:.3g} {unit}"
    return f"{cm / 1e5:.3g} km"


def suggested_unit(clip: Clip, size: CharacterSize) -> str | None:
    """The `--units` name under which the clip's numbers make a character: the unit in
    which its skeleton is human-sized (the rule BVH's `auto` applies), else the one that
    brings the size nearest TYPICAL_CM within the bounds; None when no unit does."""
    to_cm = clip.units.to_cm if clip.units is not None else 1.0
    numbers = size.skeleton_cm / to_cm  # the skeleton's size in the file's own numbers
    human = units_from_height(numbers)
    if human is not None:
        return human[0]
    fits = [u for u, cm in UNIT_CM.items() if MIN_CM <= size.size_cm / to_cm * cm <= MAX_CM]
    if not fits:
        return None
    return min(fits, key=lambda u: abs(np.log(size.size_cm / to_cm * UNIT_CM[u] / TYPICAL_CM)))


def declared_text(clip: Clip) -> str:
    """How one unit of the file was taken: 'metres, as the format specifies'."""
    u = clip.units
    if u is None:
        return "centimetres (the reader states no unit)"
    how = {
        "file": "as the file declares",
        "format": "as the format specifies",
        "auto": "guessed from the skeleton's height",
        "user": "as given by --units",
        "assumed": "assumed, the file states none",
    }.get(u.chosen_by, u.chosen_by)
    return f"{u.unit_words}, {how}"


def size_warning(clip: Clip, size: CharacterSize | None = None) -> str | None:
    """One sentence when `clip` is no character's size (None when it is, or has no size):
    the size, what was measured, the unit the file was read in, and the `--units` that
    would make it a character's size."""
    size = size or character_size(clip)
    if not (size.too_small or size.too_large):
        return None
    what = "smaller" if size.too_small else "larger"
    measured = size.measured
    if size.diagonal_cm > 1.05 * size.size_cm:  # a long body lies across its box
        measured += f", longest side; {length_text(size.diagonal_cm)} corner to corner"
    if size.measured == "skinned mesh":
        measured += f"; skeleton {length_text(size.skeleton_cm)}"
    text = (
        f"size: the character measures {length_text(size.size_cm)} ({measured}), {what} than "
        f"any character ({length_text(MIN_CM)} to {length_text(MAX_CM)}) with one unit of "
        f"the file taken as {declared_text(clip)}."
    )
    unit = suggested_unit(clip, size)
    if unit is not None:
        to_cm = clip.units.to_cm if clip.units is not None else 1.0
        then = length_text(size.size_cm / to_cm * UNIT_CM[unit])
        text += (
            f" If its numbers are {UNIT_WORDS[unit]}, give --units {unit} (to python -m "
            f"codec compress, or shellscope): it then measures {then}."
        )
    else:
        text += " --units names what one unit of the file is."
    return text
