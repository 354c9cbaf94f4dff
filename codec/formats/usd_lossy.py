"""Lossy USD exports (.usda, .usdc, .usdz) with usd-core, written in a child process.

The stage: for a USD source, a copy of the source stage (composed and flattened into one
layer, so sublayers and references come along) with the clip's SkelAnimation replaced by
the lossy clip: its joints set to the Skeleton's, its translations, rotations and scales
time samples written at the source's own time codes (first time code + k x
timeCodesPerSecond / rate), in the stage's unit, with the prims above the Skeleton unfolded
from the roots again (the reader folds them in). For any other source, a new stage holding
the clip alone: a SkelRoot `/Clip`, a Skeleton (joint paths from the names; restTransforms
the bind pose, bindTransforms its object space) and its bound SkelAnimation, in
centimetres (metersPerUnit 0.01), up axis as the clip declared it (Y when it declared none),
timeCodesPerSecond the clip's rate. UsdSkel stores translations and rotations as float32
and scales as float16 (half), so a scale that is not one is stored to 11 bits.

A .usdz is packaged with UsdUtils.CreateNewUsdzPackage, which takes every file the stage
uses (a source package's textures) into it; a .usda or .usdc keeps its asset paths, made
relative to the output's folder. Every export is checked by usd-core's own
UsdUtils.ComplianceChecker before it is handed back: a file the checker fails is an error,
never written.

Why a child process (codec.formats.usd_worker, mode "write", through
codec.formats.reader_process): usd-core can abort on bad input, and importing pxr while
another thread imports numba can deadlock; this process never imports pxr.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from codec.errors import ClipFormatError
from codec.formats.atomic import write_bytes
from codec.model import quat
from codec.model.clip import Clip
from codec.model.transforms import compose, decompose, object_space, qvv_to_matrix

Array = np.ndarray
USD_SUFFIXES = (".usda", ".usdc", ".usdz")


def lossy_usd_bytes(
    clip: Clip,
    out: str | os.PathLike[str],
    *,
    source: str | os.PathLike[str] | None = None,
    animation: str | int | None = None,
    units: str | None = None,
) -> tuple[bytes, list[str]]:
    """The bytes of `out` (.usda, .usdc or .usdz by its suffix): a copy of the USD `source`
    with the clip's SkelAnimation replaced (`animation` and `units` as the source was read),
    or, for `source` None or not USD, a new stage of the clip. Returns the bytes and notes;
    ClipFormatError naming the file when usd-core fails or its compliance checker does."""
    from codec.formats import format_of
    from codec.formats.clip_arrays import clip_to_npz
    from codec.formats.reader_process import run_reader

    suffix = Path(out).suffix.lower()
    if suffix not in USD_SUFFIXES:
        raise ValueError(f"{out}: a USD export is .usda, .usdc or .usdz")
    usd_source = source is not None and format_of(source) == "usd"
    request = {
        "mode": "write",
        "name": os.fspath(source if usd_source else out),  # type: ignore[arg-type]
        "out": os.path.abspath(out),
        "source": os.path.abspath(source) if usd_source else None,  # type: ignore[arg-type]
        "animation": animation,
        "units": units,
    }
    answer = run_reader(
        out,
        clip_to_npz(clip.replace(meshes=(), curves=None)),
        request,
        module="codec.formats.usd_worker",
        library="usd-core",
        doing="writing",
    )
    notes = [str(n) for n in answer["notes"]]
    return answer["data"].tobytes(), notes


def write_lossy_usd(
    clip: Clip,
    out: str | os.PathLike[str],
    *,
    source: str | os.PathLike[str] | None = None,
    animation: str | int | None = None,
    units: str | None = None,
) -> list[str]:
    """Write `lossy_usd_bytes` to `out`, whole or not at all; returns the notes."""
    data, notes = lossy_usd_bytes(clip, out, source=source, animation=animation, units=units)
    write_bytes(out, data)
    return notes


# ----------------------------------------------------------------- the child's half (pxr)


def write_usd_in_process(
    clip: Clip, out: str, source: str | None, animation: str | int | None, units: str | None
) -> tuple[bytes, list[str]]:
    """`lossy_usd_bytes` in this process: only the worker calls it, since usd-core may
    abort. Returns the file's bytes and notes; ClipFormatError when the checker fails it."""
    notes: list[str] = []
    inherited: list[str] = []
    if source is not None:
        inherited = compliance(source)[0]
        stage = _copied_stage(clip, source, animation, units, notes)
        _upgrade_varname(stage, notes)
    else:
        stage = _new_stage(clip, notes)
    suffix = Path(out).suffix.lower()
    with tempfile.TemporaryDirectory(prefix="shellscope-usd-out-") as tmp:
        layer = stage.GetRootLayer()
        if suffix == ".usdz":
            _unpack_assets(layer, Path(tmp))
            inner = Path(tmp) / (Path(out).stem + ".usdc")
            layer.Export(str(inner))
            packed = Path(tmp) / Path(out).name
            _usdz(inner, packed)
            file = packed
        else:
            _relative_assets(layer, Path(out).parent)
            file = Path(tmp) / Path(out).name
            layer.Export(str(file))
        _check_compliance(out, file, inherited, notes)
        data = file.read_bytes()
    return data, notes


def _usdz(layer_file: Path, packed: Path) -> None:
    from pxr import UsdUtils

    if not UsdUtils.CreateNewUsdzPackage(str(layer_file), str(packed)):
        raise ClipFormatError(packed.name, "usd-core could not make the .usdz package")


def compliance(file: str | os.PathLike[str]) -> tuple[list[str], list[str]]:
    """usd-core's own checks of a USD file, as `usdchecker` runs them: every validator of its
    UsdValidation registry (core, UsdGeom, UsdSkel, UsdShade, usdz packaging ...; the
    successor of UsdUtils.ComplianceChecker, which usd-core 26 no longer has). Returns
    (errors, warnings), each "NAME: message". In a process that may import pxr only."""
    from pxr import Usd, UsdValidation

    stage = Usd.Stage.Open(os.fspath(file))
    validators = UsdValidation.ValidationRegistry().GetOrLoadAllValidators()
    found = UsdValidation.ValidationContext(validators).Validate(stage)
    errors, warnings = [], []
    for e in found:
        kind = e.GetType()
        text = f"{e.GetName()}: {' '.join(e.GetMessage().split())}"
        if kind == UsdValidation.ValidationErrorType.Error:
            errors.append(text)
        elif kind == UsdValidation.ValidationErrorType.Warn:
            warnings.append(text)
    return errors, warnings


def _check_compliance(out: str, file: Path, inherited: list[str], notes: list[str]) -> None:
    """ClipFormatError when usd-core's validators find an error in the export that is not
    one of the source's own (`inherited`), which the notes count."""
    errors, _ = compliance(file)
    ours = [e for e in errors if e not in inherited]
    if ours:
        raise ClipFormatError(
            out, f"usd-core's validators fail the export ({len(ours)}): {ours[0][:300]}"
        )
    if errors:
        notes.append(
            f"{len(errors)} error(s) of usd-core's validators come from the source: "
            f"{errors[0][:200]}"
        )


def _upgrade_varname(stage: Any, notes: list[str]) -> None:
    """UsdPrimvarReader's `inputs:varname` as a string: USD 20.11 changed it from a token, and
    usd-core's validators fail older files that still author a token (CesiumMan.usdz)."""
    from pxr import Sdf

    upgraded = 0
    for prim in stage.Traverse():
        attr = prim.GetAttribute("inputs:varname")
        shader_id = prim.GetAttribute("info:id")
        if not (attr and shader_id and str(shader_id.Get() or "").startswith("UsdPrimvarReader")):
            continue
        if attr.GetTypeName() != Sdf.ValueTypeNames.Token:
            continue
        value = attr.Get()
        prim.RemoveProperty("inputs:varname")
        prim.CreateAttribute("inputs:varname", Sdf.ValueTypeNames.String).Set(str(value or ""))
        upgraded += 1
    if upgraded:
        notes.append(
            f"{upgraded} UsdPrimvarReader inputs:varname written as a string, not the source's "
            "token (USD 20.11 changed its type; usd-core's validators require it)"
        )


_ABSOLUTE_ASSET = re.compile(r"^/")


def _relative_assets(layer: Any, folder: Path) -> None:
    """Absolute asset paths (a flattened stage anchors them) made relative to `folder`."""
    from pxr import Sdf

    def visit(path: Any) -> None:
        if not path.IsPropertyPath():
            return
        spec = layer.GetPropertyAtPath(path)
        if spec is None or not hasattr(spec, "default"):
            return
        value = spec.default
        if isinstance(value, Sdf.AssetPath) and _ABSOLUTE_ASSET.match(value.path):
            spec.default = Sdf.AssetPath(_relative(value.path, folder))

    layer.Traverse(Sdf.Path.absoluteRootPath, visit)


def _unpack_assets(layer: Any, folder: Path) -> None:
    """Files a flattened stage takes from inside a package (`/abs/clip.usdz[0/skin.jpg]`)
    copied into `folder` under their own name and pointed at there, so the new package holds
    the texture itself rather than the whole source package nested in it."""
    import zipfile

    from pxr import Sdf

    def visit(path: Any) -> None:
        spec = layer.GetPropertyAtPath(path) if path.IsPropertyPath() else None
        value = getattr(spec, "default", None) if spec is not None else None
        if not isinstance(value, Sdf.AssetPath) or "[" not in value.path:
            return
        outer, _, inner = value.path.partition("[")
        inner = inner.rstrip("]")
        if "[" in inner or ".." in Path(inner).parts or Path(inner).is_absolute():
            return  # a package in a package, or a name that would leave the folder: kept
        with zipfile.ZipFile(outer) as package:
            data = package.read(inner)
        target = folder / inner
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        spec.default = Sdf.AssetPath(inner)

    layer.Traverse(Sdf.Path.absoluteRootPath, visit)


def _relative(asset: str, folder: Path) -> str:
    """`asset` (absolute, maybe `package.usdz[inner]`) relative to `folder`."""
    outer, bracket, inner = asset.partition("[")
    rel = os.path.relpath(outer, folder)
    return rel.replace(os.sep, "/") + (bracket + inner if bracket else "")


def _copied_stage(
    clip: Clip, source: str, animation: str | int | None, units: str | None, notes: list[str]
) -> Any:
    """The source stage flattened into one layer, the clip's SkelAnimation replaced."""
    from pxr import Usd, UsdGeom, UsdSkel, Vt

    from codec.formats.usd import (
        _animation_of,
        _choose,
        _declared_units,
        _open,
        _parents,
        _skeletons,
        _time_codes_per_second,
    )
    from codec.model.units import user_units

    stage = Usd.Stage.Open(_open(source, None).Flatten())
    # Flatten's doc names the source by its absolute path; the copy says what it is instead
    stage.GetRootLayer().documentation = (
        f"{Path(source).name} with its SkelAnimation replaced by a lossy decode (Shellscope)"
    )
    skel = _choose(source, _skeletons(stage), animation)
    tokens = [str(j) for j in (skel.GetJointsAttr().Get() or [])]
    order, parents = _parents(source, tokens)
    if len(tokens) != clip.num_joints or not np.array_equal(parents, clip.skeleton.parents):
        raise ClipFormatError(
            source,
            f"Skeleton {skel.GetPath()} has {len(tokens)} joints, the clip {clip.num_joints}: "
            "is this the clip's source file?",
        )
    anim = _animation_of(skel)
    if anim is None:
        anim = UsdSkel.Animation.Define(stage, skel.GetPath().AppendChild("LossyAnimation"))
        binding = UsdSkel.BindingAPI.Apply(skel.GetPrim())
        binding.CreateAnimationSourceRel().SetTargets([anim.GetPath()])
        notes.append("the Skeleton had no SkelAnimation: one was added")
    tcps = _time_codes_per_second(source, stage)
    attrs = (anim.GetTranslationsAttr(), anim.GetRotationsAttr(), anim.GetScalesAttr())
    authored = [t for a in attrs for t in a.GetTimeSamples()]
    first = min(authored) if authored else 0.0
    codes = first + np.arange(clip.num_samples) * tcps / clip.sample_rate
    f = user_units(units, _declared_units(stage)).to_cm

    # the clip's joint k is the Skeleton's joint order[k]; unfold the prims above the roots
    rot, trans, scl = clip.rotations.copy(), clip.translations / f, clip.scales.copy()
    xformable = UsdGeom.Xformable(skel.GetPrim())
    above = np.array(
        [xformable.ComputeLocalToWorldTransform(Usd.TimeCode(float(c))) for c in codes],
        dtype=np.float64,
    )
    inv_above = np.linalg.inv(np.swapaxes(above, -1, -2))[:, :3, :]
    for j in np.flatnonzero(clip.skeleton.parents < 0):
        local = compose(inv_above, qvv_to_matrix(rot[:, j], trans[:, j], scl[:, j]))
        rot[:, j], trans[:, j], scl[:, j] = decompose(local)
    back = np.empty_like(order)
    back[order] = np.arange(len(order))  # Skeleton joint -> clip joint
    rot, trans, scl = rot[:, back], trans[:, back], scl[:, back]

    anim.CreateJointsAttr().Set(Vt.TokenArray(tokens))
    _samples(anim, codes, quat.normalize(rot), trans, scl)
    stage.SetStartTimeCode(float(codes[0]))
    stage.SetEndTimeCode(float(max(codes[-1], stage.GetEndTimeCode())))
    return stage


def _samples(anim: Any, codes: Array, rot: Array, trans: Array, scl: Array) -> None:
    """Replace the animation's translations, rotations and scales by time samples at
    `codes` (one per sample: usd-core sets time samples one at a time)."""
    from pxr import Usd, Vt

    for attr, values, kind in (
        (anim.CreateTranslationsAttr(), trans.astype(np.float32), Vt.Vec3fArray),
        (anim.CreateRotationsAttr(), rot.astype(np.float32), Vt.QuatfArray),
        (anim.CreateScalesAttr(), scl.astype(np.float16), Vt.Vec3hArray),
    ):
        attr.Clear()
        for k, code in enumerate(codes):
            attr.Set(kind.FromNumpy(np.ascontiguousarray(values[k])), Usd.TimeCode(float(code)))


def _new_stage(clip: Clip, notes: list[str]) -> Any:
    """A stage of the clip alone: SkelRoot /Clip, its Skeleton and bound SkelAnimation."""
    from pxr import Gf, Sdf, Usd, UsdGeom, UsdSkel, Vt

    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageMetersPerUnit(stage, 0.01)
    up = (clip.units.up_axis or "").lstrip("+-") if clip.units is not None else ""
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z if up == "Z" else UsdGeom.Tokens.y)
    if up not in ("Y", "Z"):
        notes.append("the clip declares no Y or Z up axis: the stage says Y up")
    stage.SetTimeCodesPerSecond(float(clip.sample_rate))
    stage.SetFramesPerSecond(float(clip.sample_rate))
    stage.SetStartTimeCode(0.0)
    stage.SetEndTimeCode(float(clip.num_samples - 1))
    root = UsdSkel.Root.Define(stage, "/Clip")
    stage.SetDefaultPrim(root.GetPrim())
    skel = UsdSkel.Skeleton.Define(stage, "/Clip/Skeleton")
    tokens = joint_paths(clip.skeleton.names, clip.skeleton.parents)
    renamed = sum(
        t.rsplit("/", 1)[-1] != n for t, n in zip(tokens, clip.skeleton.names, strict=True)
    )
    if renamed:
        notes.append(f"renamed {renamed} joint(s) whose names are not USD identifiers")
    sk = clip.skeleton
    local = qvv_to_matrix(sk.bind_rotations, sk.bind_translations, sk.bind_scales)
    world = object_space(sk.bind_rotations, sk.bind_translations, sk.bind_scales, sk.parents)

    def matrices(m: Array) -> Any:
        full = np.zeros((len(m), 4, 4))
        full[:, :3, :] = m
        full[:, 3, 3] = 1.0
        return Vt.Matrix4dArray([Gf.Matrix4d(x.T.tolist()) for x in full])

    skel.CreateJointsAttr().Set(Vt.TokenArray(tokens))
    skel.CreateRestTransformsAttr().Set(matrices(local))
    skel.CreateBindTransformsAttr().Set(matrices(world))
    anim = UsdSkel.Animation.Define(stage, "/Clip/Skeleton/Animation")
    anim.CreateJointsAttr().Set(Vt.TokenArray(tokens))
    UsdSkel.BindingAPI.Apply(skel.GetPrim()).CreateAnimationSourceRel().SetTargets(
        [Sdf.Path("/Clip/Skeleton/Animation")]
    )
    codes = np.arange(clip.num_samples, dtype=np.float64)
    _samples(anim, codes, quat.normalize(clip.rotations), clip.translations, clip.scales)
    return stage


def joint_paths(names: tuple[str, ...], parents: Array) -> list[str]:
    """UsdSkel joint paths for a hierarchy: each name made a valid, unique identifier among
    its siblings, prefixed by its parent's path."""
    from pxr import Tf

    paths: list[str] = []
    taken: dict[int, set[str]] = {}
    for j, name in enumerate(names):
        p = int(parents[j])
        base = Tf.MakeValidIdentifier(name) or "joint"
        siblings = taken.setdefault(p, set())
        cand, k = base, 1
        while cand in siblings:
            k += 1
            cand = f"{base}_{k}"
        siblings.add(cand)
        paths.append(cand if p < 0 else f"{paths[p]}/{cand}")
    return paths


def usd_answer(request: dict, data: bytes) -> bytes:
    """The worker's answer to a "write" request: the .npz of the file's bytes and notes."""
    from codec.formats.clip_arrays import clip_from_arrays

    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        clip = clip_from_arrays({k: npz[k] for k in npz.files})
    out, notes = write_usd_in_process(
        clip, request["out"], request.get("source"), request.get("animation"), request.get("units")
    )
    buf = io.BytesIO()
    np.savez(buf, data=np.frombuffer(out, dtype=np.uint8), notes=np.array(notes, dtype=str))
    return buf.getvalue()
