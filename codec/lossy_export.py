"""Lossy exports that keep the precision in the file a user opens, not only in our decoding.

An export writes the decoded clip in another tool's format: ACL SJSON, BVH, a copy of the
source glTF, or USD. Most of these store less than our float64 decoding: glTF and USD hold
float32 (USD scales float16), BVH six decimals. So the figure that counts is measured from
the file's own values: the bytes about to be written are read back by our own reader (the
float32 values as written, in the file's unit, through the same code a user's clip goes
through) and their shell error against the reference clip is measured exactly as the codec
measures it (codec.measure.error_metric.clip_errors: every joint on its own shell at every
sample). When that crosses a joint's precision and the caller can compress again (it has the
raw clip), the crossing joints' precisions are tightened by the share they are over and the
clip is compressed again, up to TIGHTEN_ROUNDS times: the file then keeps the promise the
stats make. The joints' own precisions are what the file says (ACL SJSON writes them), never
the tightened ones. Where a format cannot hold the clip at all (BVH has no scale), tightening
cannot help; the measured figure says so.

The file is written whole or not at all, and only after it has been measured.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from codec.errors import ClipFormatError
from codec.measure.error_metric import clip_errors
from codec.model.clip import Clip

Array = np.ndarray
TIGHTEN_ROUNDS = 6  # compressions at most after the first (one or two on the clips here)
WRITTEN = ("sjson", "bvh", "gltf", "usd")  # the formats a lossy clip is exported to
EXTENSIONS = ".acl.sjson, .bvh, .glb, .gltf, .usda, .usdc or .usdz"


def export_format(path: str | os.PathLike[str]) -> str | None:
    """The format a lossy export to `path` writes, or None when it writes none (a .gz
    ending or a .usd, whose encoding is ambiguous, included)."""
    from codec.formats import format_of

    name = os.fspath(path).lower()
    if name.endswith((".gz", ".xz", ".zst")):
        return None
    fmt = format_of(path)
    if fmt == "usd" and not name.endswith((".usda", ".usdc", ".usdz")):
        return None
    return fmt if fmt in WRITTEN else None


@dataclass(frozen=True)
class Source:
    """What a lossy export copies or undoes: the clip file it came from (glTF and USD
    exports copy it), and the `animation` and `units` it was read with."""

    path: str | os.PathLike[str] | None = None
    animation: str | int | None = None
    units: str | None = None


@dataclass(frozen=True)
class Measured:
    """The file's own error: `error` (J,) the largest over the samples of each joint's shell
    error, read back from the file, against `against` ("the raw clip" or "our decoding");
    `precision` (J,) each joint's budget; `names` the joints."""

    error: Array
    precision: Array
    names: tuple[str, ...]
    against: str
    decoding: Array  # (J,) our decoding's own error against the same reference

    @property
    def worst(self) -> int:
        return int(np.argmax(self.error / self.precision))

    @property
    def met(self) -> bool:
        return bool(np.all(self.error <= self.precision))

    def over(self) -> list[int]:
        return [int(j) for j in np.flatnonzero(self.error > self.precision)]

    def line(self) -> str:
        """One line for the user: the figure, where, and whether every joint is in budget."""
        j = self.worst
        text = (
            f"in the file: max error {self.error.max():.6g} cm against {self.against} "
            f"({self.names[j]}: {self.error[j]:.6g} of its {self.precision[j]:.6g} cm)"
        )
        if self.met:
            return text + ", every joint within its precision"
        over = self.over()
        storage = float(np.max(self.error[over] - self.decoding[over]))
        return text + (
            f", {len(over)} joint(s) over their precision (the file's own storage adds up to "
            f"{storage:.3g} cm)"
        )


@dataclass
class LossyFile:
    """A lossy export, measured and ready to write: `data` for `path`, the writer's `notes`,
    the `measured` error of the file's own values, how many joints were `tightened`, and the
    decoded `clip` the file holds (a tightened one when joints were tightened)."""

    path: Path
    data: bytes
    notes: list[str]
    measured: Measured
    clip: Clip
    tightened: int = 0
    rounds: int = 0

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def summary(self) -> list[str]:
        """What the user is told about the file: the measured figure, then the tightening."""
        out = [self.measured.line()]
        if self.tightened:
            out.append(
                f"tightened {self.tightened} joint(s) and compressed again ({self.rounds} "
                "round(s)) so the file's float32 values stay within precision"
            )
        return out

    def write(self) -> Path:
        from codec.formats.atomic import write_bytes

        write_bytes(self.path, self.data)
        return self.path


def render(clip: Clip, path: str | os.PathLike[str], source: Source) -> tuple[bytes, list[str]]:
    """The bytes of the lossy export of `clip` to `path` (its extension chooses the format)
    and the writer's notes. glTF needs `source.path` (the copy is of it)."""
    fmt = export_format(path)
    if fmt == "sjson":
        from codec.formats.acl_sjson.writer import acl_sjson_text

        return acl_sjson_text(clip, path).encode(), []
    if fmt == "bvh":
        from codec.formats.bvh import bvh_text

        text, notes = bvh_text(clip)
        return text.encode(), notes
    if fmt == "gltf":
        from codec.formats.gltf_lossy import lossy_gltf_bytes

        assert source.path is not None  # lossy_file checked it
        return lossy_gltf_bytes(
            source.path, clip, path, animation=source.animation or clip.name, units=source.units
        )
    if fmt == "usd":
        from codec.formats.usd_lossy import lossy_usd_bytes

        return lossy_usd_bytes(
            clip, path, source=source.path, animation=source.animation, units=source.units
        )
    raise ValueError(f"{path}: a lossy export is written as {EXTENSIONS}")


def read_back(
    data: bytes, path: str | os.PathLike[str], clip: Clip, source: Source, name: str
) -> Clip:
    """The exported file's clip as our reader reads it (in cm), its joints in `clip`'s order.
    `name` is the animation the export wrote (glTF: the one it replaced)."""
    from codec.formats.acl_sjson import read_clip
    from codec.formats.bvh import bvh_name, read_bvh
    from codec.formats.gltf import read_gltf
    from codec.formats.usd import read_usd

    fmt = export_format(path)
    if fmt == "sjson":
        back = read_clip(path, data=data)
    elif fmt == "bvh":
        back = read_bvh(path, units="cm", data=data)
        return _by_name(back, clip, [bvh_name(n) for n in clip.skeleton.names])
    elif fmt == "gltf":
        back = read_gltf(path, data=data, animation=name, units=source.units)
    else:
        written = source.path is not None and Path(source.path).suffix.lower().startswith(".usd")
        back = read_usd(
            path,
            data=data,
            animation=source.animation if written else None,
            units=source.units if written else None,
        )
    if back.num_joints != clip.num_joints or not np.array_equal(
        back.skeleton.parents, clip.skeleton.parents
    ):
        raise ClipFormatError(path, "reads back with another skeleton than the clip written")
    return back


def _by_name(back: Clip, clip: Clip, names: list[str]) -> Clip:
    """`back`'s joints put in `clip`'s order by name (`names`: clip's joints as written)."""
    where = {n: k for k, n in enumerate(back.skeleton.names)}
    missing = [n for n in names if n not in where]
    if missing or len(names) != back.num_joints:
        raise ClipFormatError(
            back.name or "export", f"reads back without joint {missing[0] if missing else '?'}"
        )
    order = np.array([where[n] for n in names])
    return Clip(
        skeleton=clip.skeleton,
        sample_rate=back.sample_rate,
        rotations=back.rotations[:, order],
        translations=back.translations[:, order],
        scales=back.scales[:, order],
        name=back.name,
    )


def measure_file(reference: Clip, back: Clip, decoded: Clip, against: str) -> Measured:
    """The file's error against `reference` (J,), with our decoding's beside it."""
    if back.num_samples != reference.num_samples:
        raise ClipFormatError(
            back.name or "export",
            f"reads back with {back.num_samples} samples, the clip has {reference.num_samples}",
        )
    sk = reference.skeleton
    return Measured(
        error=clip_errors(reference, back).max(axis=0),
        precision=sk.precision.copy(),
        names=sk.names,
        against=against,
        decoding=clip_errors(reference, decoded).max(axis=0),
    )


def lossy_file(
    path: str | os.PathLike[str],
    lossy: Clip,
    source: Source,
    *,
    reference: Clip | None = None,
    recompress: Callable[[Array], Clip] | None = None,
) -> LossyFile:
    """The lossy export of `lossy` to `path`, measured from the file's own values against
    `reference` (the raw clip; None: against `lossy` itself, which measures only what the
    file's storage loses), every joint's budget being `lossy`'s precision. `recompress(p)`,
    when given, compresses the raw clip again with per-joint precisions `p` (J,) and returns
    the new decoding: then joints the file's rounding puts over budget are tightened."""
    against = "the raw clip" if reference is not None else "our decoding"
    reference = lossy if reference is None else reference.with_skeleton(lossy.skeleton)
    units = reference.units if reference.units is not None else lossy.units
    name = lossy.name
    if export_format(path) == "gltf":
        from codec.formats import format_of
        from codec.formats.gltf_lossy import pick_animation

        if source.path is None or format_of(source.path) != "gltf":
            raise ValueError("a lossy glTF is a copy of the source glTF: open a .glb/.gltf clip")
        name = pick_animation(source.path, lossy, source.animation or lossy.name)  # type: ignore[arg-type]
        source = Source(source.path, name, source.units)
    budget = lossy.skeleton.precision
    current, precision = lossy, budget.copy()
    tightened: set[int] = set()
    rounds = 0
    while True:
        written = current.with_skeleton(lossy.skeleton).replace(units=units, name=lossy.name)
        data, notes = render(written, path, source)
        back = read_back(data, path, lossy, source, name)
        measured = measure_file(reference, back, current, against)
        over = measured.over()
        if not over or recompress is None or rounds >= TIGHTEN_ROUNDS:
            break
        # what the file adds to our decoding's error is its storage; a joint whose storage
        # alone takes half its budget (BVH without scale) is not helped by a tighter codec.
        # Otherwise the codec gets the budget less one and a half times that storage (a
        # joint's storage is its chain's rounding, which tightening the joint alone keeps),
        # or less the share it is over, whichever is tighter
        storage = np.maximum(measured.error[over] - measured.decoding[over], 0.0)
        if np.any(storage > 0.5 * budget[over]):
            break
        by_share = precision[over] * budget[over] / measured.error[over] * 0.98
        precision[over] = np.minimum(by_share, budget[over] - 1.5 * storage)
        tightened.update(over)
        rounds += 1
        current = recompress(precision)
    return LossyFile(Path(path), data, notes, measured, written, len(tightened), rounds)
