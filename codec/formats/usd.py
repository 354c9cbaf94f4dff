"""USD reader (.usd, .usda, .usdc, .usdz) through usd-core's UsdSkel schemas.

A clip is one UsdSkel Skeleton and the SkelAnimation bound to it (skel:animationSource, as
inherited down the namespace). Joint names are the last element of each joint path (the
whole path when that is not unique); parents come from the paths. The bind pose is the
Skeleton's restTransforms (or, without them, locals derived from its bindTransforms); joints
the animation does not list keep their rest transform, as UsdSkel says. The transform of the
prims above the Skeleton (its local-to-world, evaluated at every sample) is folded into the
root joints, so object space is the stage's world space. Time: the stage's
timeCodesPerSecond; when the animation's time samples lie on one uniform grid they are the
clip's samples, otherwise every time code is sampled (or `sample_rate`, with a warning).
The time samples stay on the clip as its authored curves (codec.model.authored_curves:
rotations slerp, translations and scales linear, as usd-core interpolates them), which give
the raw pose between samples; when the prims above the Skeleton are animated themselves the
clip is sampled data.
Units: the stage's metersPerUnit (USD's fallback, 0.01 m, when not authored) and upAxis.

usd-core runs in a child process (codec.formats.usd_worker, started through
codec.formats.reader_process under memory and time limits): `read_usd` and
`list_usd_animations` start it, the `*_in_process` functions below are what it runs. This
process never imports pxr, so a usd-core crash is an error line and the window's UI thread
never imports it while another thread imports numba.

Hostile files: before usd-core parses a crate, its table of contents and section counts are
checked (codec.formats.usd_crate); before the stage is composed, every layer it pulls in
(sublayers, references, payloads, recursively, and value clips' assets) must stay in the
clip's folder (no absolute path, no `..` out of it, no symbolic link out of it), be a
regular file when it exists (a FIFO named by a sublayer would block usd-core forever) and
not pull in a layer above it (a cycle); the number of samples x joints is checked against
the file's transform budget (codec.model.limits) before any sample is allocated; the stage's
timeCodesPerSecond must be a usable rate and its metersPerUnit a usable unit.
"""

from __future__ import annotations

import math
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from codec.errors import ClipFormatError
from codec.formats.compressed import inner_name
from codec.formats.input_paths import outside_problem
from codec.formats.key_grid import key_grid, nice_rate
from codec.formats.spec import FormatSpec
from codec.model import quat
from codec.model.authored_curves import AuthoredCurves, CurveGroup
from codec.model.clip import Clip, Skeleton
from codec.model.limits import (
    MAX_MESH_ELEMENTS,
    file_bytes,
    first_out_of_range,
    over_budget,
    rate_problem,
    transform_budget,
    unit_problem,
    value_problem,
)
from codec.model.mesh import SkinnedMesh, normalize_influences
from codec.model.transforms import compose, decompose, qvv_to_matrix
from codec.model.units import Units, unit_name_for_metres, user_units

Array = np.ndarray
MAX_LAYERS = 1000  # layers one stage may pull in


def _open(path: str | os.PathLike[str], data: bytes | None) -> Any:
    """The stage (ClipFormatError naming the file when usd-core cannot open it)."""
    from pxr import Sdf, Tf, Usd

    from codec.formats.usd_crate import check_crate

    check_crate(path, data)
    try:
        if data is None:
            stage = Usd.Stage.Open(_checked_layer(path, os.fspath(path)))
        elif inner_name(path).lower().endswith(".usda"):
            layer = Sdf.Layer.CreateAnonymous(".usda")
            if not layer.ImportFromString(data.decode("utf-8")):
                raise ClipFormatError(path, "not a readable USDA file")
            _check_layers(path, layer)
            stage = Usd.Stage.Open(layer)
        else:  # binary crate or package: usd-core reads those from a file only
            suffix = Path(inner_name(path)).suffix or ".usd"
            with tempfile.TemporaryDirectory(prefix="shellscope-usd-") as tmp:
                file = Path(tmp) / f"clip{suffix}"
                file.write_bytes(data)
                # flattened into memory: nothing is read from the file after it goes
                root = _checked_layer(path, str(file))
                stage = Usd.Stage.Open(Usd.Stage.Open(root).Flatten())
    except Tf.ErrorException as e:
        raise _usd_error(path, e) from None
    except UnicodeDecodeError as e:
        raise ClipFormatError(path, "a .usda file that is not UTF-8 text", offset=e.start) from None
    if stage is None:
        raise ClipFormatError(path, "not a readable USD file")
    return stage


def _checked_layer(path: object, file: str) -> Any:
    """The root layer of `file`, opened after `_check_layers` passed on it."""
    from pxr import Sdf

    layer = Sdf.Layer.FindOrOpen(file)
    if layer is None:
        raise ClipFormatError(path, "not a readable USD file")
    _check_layers(path, layer)
    return layer


def _check_layers(path: object, root: Any) -> None:
    """The clip's folder is the sandbox: ClipFormatError naming the reference when a layer
    `root` pulls in (sublayer, reference or payload, at any depth, or a value clip's asset)
    is an absolute path, leaves the clip's folder (`..`, or a symbolic link out of it), is
    not a regular file (a FIFO would block usd-core for ever) or pulls in a layer that pulls
    it in (a cycle). Missing layers are left to usd-core, which composes without them.
    Layers are opened one at a time, each only after its own reference passed."""
    from pxr import Sdf

    from codec.formats.usd_crate import check_crate

    sandbox = os.path.realpath(os.path.dirname(os.path.abspath(os.fspath(path))))  # type: ignore[arg-type]
    seen = {os.path.realpath(os.fspath(path))}  # type: ignore[arg-type]
    # (layer, its folder, the files above it on this branch)
    todo: list[tuple[Any, str, frozenset[str]]] = [(root, sandbox, frozenset(seen))]
    while todo:
        layer, folder, chain = todo.pop()
        shown = os.path.basename(layer.realPath or "") or inner_name(os.fspath(path))  # type: ignore[arg-type]
        for asset in _clip_assets(layer):
            _sandboxed(path, f"{shown}'s value clips use {asset!r}", asset, layer, folder, sandbox)
        for asset in layer.GetCompositionAssetDependencies():
            where = f"{shown} pulls in {asset!r}"
            real = _sandboxed(path, where, asset, layer, folder, sandbox)
            if real is None:
                continue
            if real in chain:
                raise ClipFormatError(path, f"{where}, which pulls it in again (a cycle)")
            if real in seen:
                continue
            seen.add(real)
            if len(seen) > MAX_LAYERS:
                raise ClipFormatError(path, f"pulls in more than {MAX_LAYERS} layers")
            check_crate(path, None, real)
            child = Sdf.Layer.FindOrOpen(real)
            if child is not None:
                todo.append((child, os.path.dirname(real), chain | {real}))


def _sandboxed(
    path: object, where: str, asset: str, layer: Any, folder: str, sandbox: str
) -> str | None:
    """The real path of an existing regular file `asset` names inside the sandbox (for a
    layer inside a package, `pkg.usdz[inner.usda]`, the package's file); None when it is
    missing or inside the package `layer` is in; ClipFormatError naming `where` otherwise.
    Whether a path is inside a package is usd-core's own parse of it, never a `[` anywhere
    in it: a folder may be named `take[1]`."""
    from pxr import Ar

    if os.path.isabs(asset) or asset.startswith("~") or re.match(r"[A-Za-z][\w+.-]*:", asset):
        raise ClipFormatError(
            path, f"{where}: an absolute path; only files in the clip's folder are read"
        )
    if Ar.IsPackageRelativePath(asset):
        asset = Ar.SplitPackageRelativePathOuter(asset)[0]  # the package file must pass
    elif Ar.IsPackageRelativePath(layer.ComputeAbsolutePath(asset)):
        if ".." not in Path(asset).parts:
            return None  # inside the package `layer` is in
    file = os.path.normpath(os.path.join(folder, asset))
    try:
        mode = os.stat(file).st_mode
    except OSError:
        mode = None
    problem = outside_problem(sandbox, file, "the clip's folder")
    if problem:  # the one rule of every input path (codec.formats.input_paths)
        raise ClipFormatError(path, f"{where}, which {problem}")
    if mode is None:
        return None
    real = os.path.realpath(file)
    if not stat.S_ISREG(mode):
        raise ClipFormatError(
            path, f"{where}, which is not a regular file (a directory, device or FIFO)"
        )
    return real


def _clip_assets(layer: Any) -> list[str]:
    """Every asset a layer's value clips name (assetPaths, manifestAssetPath and the
    templateAssetPath pattern): usd-core opens those as it reads values."""
    from pxr import Sdf

    found: list[str] = []

    def visit(spec_path: Any) -> None:
        if not spec_path.IsPrimPath():
            return
        spec = layer.GetPrimAtPath(spec_path)
        if not spec or not spec.HasInfo("clips"):
            return
        for clip_set in dict(spec.GetInfo("clips")).values():
            if not isinstance(clip_set, dict):
                continue
            for key in ("assetPaths", "manifestAssetPath", "templateAssetPath"):
                value = clip_set.get(key)
                if value is None:
                    continue
                items = [value] if isinstance(value, str | Sdf.AssetPath) else list(value)
                for item in items:
                    text = item.path if isinstance(item, Sdf.AssetPath) else str(item or "")
                    if text:
                        found.append(text)

    layer.Traverse(Sdf.Path.absoluteRootPath, visit)
    return found


def _first_line(e: Exception) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return (lines[-1] if lines else type(e).__name__)[:300]


_TF_ERROR = re.compile(
    r"Error in '[^']*' at line \d+ in file [^:]*: '(.*?)'\s*(?=Error in|$)", re.S
)


def _usd_error(path: object, e: Exception) -> ClipFormatError:
    """usd-core's first error as one line: a parse error with its line and column and what
    was expected, anything else by its message without C++ namespaces."""
    from codec.formats.reader_process import _NAMESPACE, _PARSE, parse_token_text, without_tokens

    text = str(e)
    for raw in text.splitlines():
        m = _PARSE.search(raw)
        if m:
            what = _NAMESPACE.sub("", m[3]).replace("parse error matching ", "expected ")
            tail = f" at {parse_token_text(m[4])}" if m[4] else ""
            tail += f" in <{m[5]}>" if m[5] else ""
            return ClipFormatError(path, f"column {m[2]}: {what}{tail}", line=int(m[1]))
    found = _TF_ERROR.findall(text)
    first = " ".join((found[0] if found else _first_line(e)).split())
    first = without_tokens(_NAMESPACE.sub("", first))[:300]
    return ClipFormatError(path, f"not a readable USD file ({first or type(e).__name__})")


def _skeletons(stage: Any) -> list[Any]:
    from pxr import Usd, UsdSkel

    prims = Usd.PrimRange.Stage(stage, Usd.TraverseInstanceProxies())
    return [UsdSkel.Skeleton(p) for p in prims if p.IsA(UsdSkel.Skeleton)]


def _animation_of(skel: Any) -> Any:
    from pxr import UsdSkel

    prim = UsdSkel.BindingAPI(skel.GetPrim()).GetInheritedAnimationSource()
    if prim and prim.IsA(UsdSkel.Animation):
        return UsdSkel.Animation(prim)
    return None


def list_usd_animations(path: str | os.PathLike[str], *, data: bytes | None = None) -> list[str]:
    """One entry per Skeleton: its prim path (the clip is the animation bound to it).
    Read by usd-core in a child process (codec.formats.usd_worker)."""
    from codec.formats.reader_process import run_reader

    out = run_reader(path, data, {"mode": "list", "name": os.fspath(path)}, **_WORKER)
    return [str(n) for n in out["skeletons"]]


def read_usd(
    path: str | os.PathLike[str],
    *,
    animation: str | int | None = None,
    sample_rate: float | None = None,
    units: str | None = None,
    data: bytes | None = None,
) -> Clip:
    """Read one Skeleton and its bound SkelAnimation into a clip in centimetres, with
    usd-core in a child process (codec.formats.usd_worker): a crash, an abort or a runaway
    allocation there is a ClipFormatError here.

    `animation`: a Skeleton path (as `list_usd_animations` gives), its name, its animation's
    path or name, an index, or None for the first Skeleton. `sample_rate` resamples at that
    rate; `units` overrides metersPerUnit (a name of codec.model.units.UNIT_CM).
    """
    from codec.formats.clip_arrays import clip_from_arrays
    from codec.formats.reader_process import run_reader

    if sample_rate is not None and rate_problem(float(sample_rate)):
        raise ValueError(f"sample_rate: {rate_problem(float(sample_rate))}")
    request = {
        "mode": "read",
        "name": os.fspath(path),
        "animation": animation,
        "sample_rate": sample_rate,
        "units": units,
    }
    return clip_from_arrays(run_reader(path, data, request, **_WORKER))


_WORKER = {"module": "codec.formats.usd_worker", "library": "usd-core"}


def list_usd_in_process(path: str | os.PathLike[str], *, data: bytes | None = None) -> list[str]:
    """`list_usd_animations` in this process (the worker's half)."""
    stage = _open(path, data)
    return [str(s.GetPath()) for s in _skeletons(stage)]


def _choose(path: object, skels: list[Any], animation: str | int | None) -> Any:
    if not skels:
        raise ClipFormatError(path, "the stage has no UsdSkel Skeleton prim")
    names = [str(s.GetPath()) for s in skels]
    if animation is None:
        return skels[0]
    if isinstance(animation, int):
        if not 0 <= animation < len(skels):
            raise ClipFormatError(path, f"skeleton index {animation} does not exist")
        return skels[animation]
    if animation in names:
        return skels[names.index(animation)]
    tails = [n.rsplit("/", 1)[-1] for n in names]
    anims = [_animation_of(s) for s in skels]
    anim_names = [str(a.GetPath()) if a else "" for a in anims]
    for keys in (tails, anim_names, [n.rsplit("/", 1)[-1] for n in anim_names]):
        if keys.count(animation) == 1:
            return skels[keys.index(animation)]
    raise ClipFormatError(
        path, f"no skeleton or animation named {animation!r}; the stage has {', '.join(names)}"
    )


def _joint_names(paths: list[str]) -> list[str]:
    tails = [p.rsplit("/", 1)[-1] for p in paths]
    return [t if tails.count(t) == 1 else p for t, p in zip(tails, paths, strict=True)]


def _parents(path: object, joints: list[str]) -> tuple[Array, Array]:
    """(order, parents): a parents-first order of the joints and the parents in it."""
    index = {j: i for i, j in enumerate(joints)}
    if len(index) != len(joints):
        raise ClipFormatError(path, "the Skeleton lists a joint path twice")
    raw = np.array([index.get(j.rsplit("/", 1)[0], -1) if "/" in j else -1 for j in joints])
    if np.all(raw < np.arange(len(joints))):  # already parents first: keep the file's order
        return np.arange(len(joints)), raw
    depth = np.array([j.count("/") for j in joints])
    order = np.argsort(depth, kind="stable")
    where = np.empty_like(order)
    where[order] = np.arange(len(order))
    parents = np.where(raw[order] >= 0, where[np.maximum(raw[order], 0)], -1)
    return order, parents


def _row_to_trs(m: Array) -> tuple[Array, Array, Array]:
    """USD's row-vector 4x4 matrices (..., 4, 4) as rotation, translation, scale."""
    return decompose(np.swapaxes(m, -1, -2)[..., :3, :])


def _times(
    path: object,
    stage: Any,
    anim: Any,
    rate: float | None,
    warnings: list[str],
    joints: int,
    budget: int,
) -> tuple[Array, float]:
    """The time codes to sample and the clip's rate in Hz; ClipFormatError when they would
    be more than `budget` samples x `joints` (checked before they are made)."""
    tcps = _time_codes_per_second(path, stage)
    attrs = [anim.GetTranslationsAttr(), anim.GetRotationsAttr(), anim.GetScalesAttr()]
    codes = np.unique(np.concatenate([np.array(a.GetTimeSamples(), dtype=float) for a in attrs]))
    if codes.size == 0:
        return np.array([math.nan]), rate or tcps  # nan: the default (unvarying) values
    first, last = float(codes[0]), float(codes[-1])
    grid = key_grid(codes)
    if grid is not None and rate_problem(tcps * grid[1]):
        grid = None  # samples too close or too far apart to be a clip's rate

    def within_budget(count: int, hz: float) -> int:
        problem = over_budget(count, joints, budget)
        if problem:
            raise ClipFormatError(
                path,
                f"{anim.GetPath()} spans time codes {first:g} to {last:g}: at {hz:g} Hz {problem}",
            )
        return count

    if rate is None and codes.size == 1:
        return codes, tcps
    if rate is None and grid is not None:
        start, per_code = grid
        count = within_budget(int(round((last - start) * per_code)) + 1, tcps * per_code)
        return start + np.arange(count) / per_code, nice_rate(tcps * per_code)
    if rate is None:
        rate = tcps
        warnings.append(
            f"the time samples are not uniformly spaced: every time code sampled ({tcps:g} Hz), "
            "so the samples are not all authored ones"
        )
    else:
        what = f"{tcps * grid[1]:g} Hz" if grid else "not uniformly spaced"
        warnings.append(f"resampled at {rate:g} Hz as asked; the time samples are {what}")
    count = within_budget(int(math.ceil((last - first) / tcps * rate - 1e-6)) + 1, rate)
    return first + np.arange(count) * tcps / rate, rate


def _time_codes_per_second(path: object, stage: Any) -> float:
    tcps = float(stage.GetTimeCodesPerSecond()) or 24.0
    problem = rate_problem(tcps)
    if problem:
        raise ClipFormatError(path, f"timeCodesPerSecond: {problem}")
    return tcps


def read_usd_in_process(
    path: str | os.PathLike[str],
    *,
    animation: str | int | None = None,
    sample_rate: float | None = None,
    units: str | None = None,
    data: bytes | None = None,
) -> Clip:
    """`read_usd` in this process: only the worker calls it, since usd-core may crash."""
    from pxr import Usd, UsdGeom

    if sample_rate is not None and rate_problem(float(sample_rate)):
        raise ValueError(f"sample_rate: {rate_problem(float(sample_rate))}")
    budget = transform_budget(file_bytes(path, data))
    stage = _open(path, data)
    skel = _choose(path, _skeletons(stage), animation)
    joints = [str(j) for j in (skel.GetJointsAttr().Get() or [])]
    if not joints:
        raise ClipFormatError(path, f"Skeleton {skel.GetPath()} has no joints")
    order, parents = _parents(path, joints)
    joints = [joints[i] for i in order]
    n = len(joints)
    rest = np.array(skel.GetRestTransformsAttr().Get() or [], dtype=np.float64)
    bind = np.array(skel.GetBindTransformsAttr().Get() or [], dtype=np.float64)
    warnings: list[str] = []
    if rest.shape == (n, 4, 4):
        rest = rest[order]
    elif bind.shape == (n, 4, 4):  # locals from the skel-space bind pose
        bind = bind[order]
        has = (parents >= 0)[:, None, None]
        parent_bind = np.where(has, bind[np.maximum(parents, 0)], np.eye(4))
        rest = bind @ np.linalg.inv(parent_bind)
        warnings.append("the Skeleton has no restTransforms: the bind pose gives the rest pose")
    else:
        raise ClipFormatError(
            path,
            f"Skeleton {skel.GetPath()} has neither restTransforms nor bindTransforms "
            f"for its {n} joints",
        )
    _check_values(path, f"Skeleton {skel.GetPath()} rest pose", rest)
    rest_r, rest_t, rest_s = _row_to_trs(rest)

    anim = _animation_of(skel)
    curves: AuthoredCurves | None = None
    if anim is None:
        warnings.append(f"Skeleton {skel.GetPath()} has no bound SkelAnimation: the rest pose")
        codes, rate = np.array([math.nan]), sample_rate or _time_codes_per_second(path, stage)
        rot, trans, scl = rest_r[None].copy(), rest_t[None].copy(), rest_s[None].copy()
        name = str(skel.GetPrim().GetName())
    else:
        codes, rate = _times(path, stage, anim, sample_rate, warnings, n, budget)
        rot, trans, scl = _animation_values(path, anim, joints, codes, rest_r, rest_t, rest_s)
        name = str(anim.GetPrim().GetName())
        curves = _curves(path, stage, anim, joints, codes[0], budget)
    unfolded = (rot[0].copy(), trans[0].copy(), scl[0].copy())

    # the prims above the skeleton, folded into the roots
    xformable = UsdGeom.Xformable(skel.GetPrim())
    above = np.array(
        [
            xformable.ComputeLocalToWorldTransform(
                Usd.TimeCode.Default() if math.isnan(c) else Usd.TimeCode(c)
            )
            for c in codes
        ],
        dtype=np.float64,
    )
    _check_values(path, f"the transform of the prims above {skel.GetPath()}", above)
    above_m = np.swapaxes(above, -1, -2)[:, :3, :]
    roots = np.flatnonzero(parents < 0)
    rest_above = np.swapaxes(
        np.array(xformable.ComputeLocalToWorldTransform(Usd.TimeCode.Default())), 0, 1
    )[:3]
    for j in roots:
        rot[:, j], trans[:, j], scl[:, j] = decompose(
            compose(above_m, qvv_to_matrix(rot[:, j], trans[:, j], scl[:, j]))
        )
        rest_r[j], rest_t[j], rest_s[j] = decompose(
            compose(rest_above, qvv_to_matrix(rest_r[j], rest_t[j], rest_s[j]))
        )

    curves = _fold_curves(curves, above_m, roots, unfolded)

    declared = _declared_units(stage)
    meters = float(UsdGeom.GetStageMetersPerUnit(stage))
    problem = unit_problem(meters)
    if problem and units in (None, "auto"):
        raise ClipFormatError(
            path, f"metersPerUnit {meters:g}: {problem}; give the units to read it in"
        )
    try:
        chosen = user_units(units, declared)
    except ValueError as e:
        raise ClipFormatError(path, str(e)) from None
    f = chosen.to_cm
    meshes = _skinned_meshes(skel, joints, order, f, warnings)
    skeleton = Skeleton.create(
        _joint_names(joints),
        parents,
        bind_rotations=quat.normalize(rest_r),
        bind_translations=rest_t * f,
        bind_scales=rest_s,
    )
    return Clip(
        skeleton=skeleton,
        sample_rate=float(rate),
        rotations=quat.ensure_continuity(quat.normalize(rot), axis=0),
        translations=trans * f,
        scales=scl,
        name=name or Path(inner_name(str(path))).stem,
        warnings=warnings,
        units=chosen,
        meshes=meshes,
        curves=None if curves is None else curves.scaled(f),
    )


def _curves(
    path: object, stage: Any, anim: Any, joints: list[str], first_code: float, budget: int
) -> AuthoredCurves | None:
    """The animation's time samples as authored curves (clip seconds: `first_code` is sample
    0; unfolded, stage units): rotations slerp and translations and scales linear between
    them, as usd-core interpolates them. (Held interpolation is a setting of an opened
    stage, not of the file: usd-core opens every stage linear, so a file cannot ask for
    it; a stage set to held is read as held.) An attribute without time samples is
    constant: its value stands at every sample."""
    from pxr import Usd

    if math.isnan(first_code):
        return None
    tcps = _time_codes_per_second(path, stage)
    held = stage.GetInterpolationType() == Usd.InterpolationTypeHeld
    anim_joints = [str(j) for j in (anim.GetJointsAttr().Get() or [])]
    where = {j: i for i, j in enumerate(joints)}
    pairs = [(a, where[j]) for a, j in enumerate(anim_joints) if j in where]
    if not pairs:
        return None
    src = np.array([a for a, _ in pairs], dtype=np.int64)
    dst = np.array([d for _, d in pairs], dtype=np.int64)
    groups = []
    channels = (
        (anim.GetRotationsAttr(), "rotation", 4),
        (anim.GetTranslationsAttr(), "translation", 3),
        (anim.GetScalesAttr(), "scale", 3),
    )
    for attr, kind, width in channels:
        keys = np.array(attr.GetTimeSamples(), dtype=np.float64)
        if keys.size == 0:
            continue
        problem = over_budget(keys.size, len(joints), budget)
        if problem:
            raise ClipFormatError(path, f"{attr.GetPath()} has {keys.size} time samples: {problem}")
        values = np.empty((keys.size, len(src), width))
        for k, c in enumerate(keys):  # one call per key: usd-core hands out one array per time
            a = np.array(attr.Get(Usd.TimeCode(c)), dtype=np.float64).reshape(-1, width)
            _check_values(path, f"{attr.GetPath()} at time {c:g}", a)
            if a.shape[0] != len(anim_joints):
                raise ClipFormatError(
                    path,
                    f"{attr.GetPath()} has {a.shape[0]} values at time {c:g} for "
                    f"{len(anim_joints)} joints",
                )
            values[k] = a[src]
        interp = "step" if held else ("slerp" if kind == "rotation" else "linear")
        groups.append(CurveGroup(kind, interp, dst, (keys - first_code) / tcps, values))
    return AuthoredCurves(tuple(groups)) if groups else None


def _fold_curves(
    curves: AuthoredCurves | None,
    above: Array,
    roots: Array,
    unfolded: tuple[Array, Array, Array],
) -> AuthoredCurves | None:
    """The curves with the prims above the skeleton (`above` (S, 3, 4) at every sample)
    folded into the animated roots, as their samples are; `unfolded` (J, 4|3) the roots'
    values before folding where a channel has no curve. None when those prims are animated
    themselves: their own time samples are not read, so the clip is then sampled data."""
    if curves is None:
        return None
    if not np.allclose(above, above[:1], rtol=0.0, atol=1e-12):
        return None
    animated = np.unique(np.concatenate([g.joints for g in curves.groups]))
    fold = np.intersect1d(animated, roots)
    if np.allclose(above[0], np.eye(3, 4), rtol=0.0, atol=1e-12) or fold.size == 0:
        return curves
    r, t, s = unfolded
    base = np.concatenate([r[fold], t[fold], s[fold]], axis=1)
    matrices = np.broadcast_to(above[0], (fold.size, 3, 4))
    return AuthoredCurves(curves.groups, fold, matrices, base)


def _animation_values(
    path: object,
    anim: Any,
    joints: list[str],
    codes: Array,
    rest_r: Array,
    rest_t: Array,
    rest_s: Array,
) -> tuple[Array, Array, Array]:
    """Local rotations (S, J, 4), translations and scales (S, J, 3) at `codes`."""
    from pxr import Usd

    anim_joints = [str(j) for j in (anim.GetJointsAttr().Get() or [])]
    where = {j: i for i, j in enumerate(joints)}
    pairs = [(a, where[j]) for a, j in enumerate(anim_joints) if j in where]
    src = np.array([a for a, _ in pairs], dtype=np.int64)
    dst = np.array([d for _, d in pairs], dtype=np.int64)
    s = len(codes)
    rot = np.broadcast_to(rest_r, (s, *rest_r.shape)).copy()
    trans = np.broadcast_to(rest_t, (s, *rest_t.shape)).copy()
    scl = np.broadcast_to(rest_s, (s, *rest_s.shape)).copy()
    channels = (
        (anim.GetRotationsAttr(), rot, 4),
        (anim.GetTranslationsAttr(), trans, 3),
        (anim.GetScalesAttr(), scl, 3),
    )
    for attr, out, width in channels:
        if not attr.HasValue():
            continue
        for k, c in enumerate(codes):
            value = attr.Get(Usd.TimeCode.Default() if math.isnan(c) else Usd.TimeCode(c))
            if value is None:
                continue
            a = np.array(value, dtype=np.float64).reshape(-1, width)
            _check_values(path, f"{attr.GetPath()} at time {c:g}", a)
            if a.shape[0] != len(anim_joints):
                raise ClipFormatError(
                    path,
                    f"{attr.GetPath()} has {a.shape[0]} values at time {c:g} for "
                    f"{len(anim_joints)} joints",
                )
            out[k, dst] = a[src]
    return rot, trans, scl


def _check_values(path: object, what: str, values: Array) -> None:
    """ClipFormatError naming `what` and the entry when a value is not one the codec can
    hold (codec.model.limits), before any maths turns it into NaN."""
    bad = first_out_of_range(values)
    if bad is not None:
        raise ClipFormatError(path, f"{what}, entry {bad[0]}: {value_problem(float(values[bad]))}")


def _declared_units(stage: Any) -> Units:
    from pxr import UsdGeom

    meters = float(UsdGeom.GetStageMetersPerUnit(stage))
    up = "+" + str(UsdGeom.GetStageUpAxis(stage))
    authored_mpu = stage.HasAuthoredMetadata("metersPerUnit")
    authored_up = stage.HasAuthoredMetadata("upAxis")
    return Units(
        unit=unit_name_for_metres(meters),
        to_cm=meters * 100.0,
        chosen_by="file" if authored_mpu else "format",
        declared=f"metersPerUnit {meters:g}" + ("" if authored_mpu else " (USD's fallback)"),
        up_axis=up,
        axes="" if authored_up else "upAxis not authored: USD's fallback",
    )


# --- skinned meshes ---------------------------------------------------------------------


def _skinned_meshes(
    skel: Any, joints: list[str], order: Array, factor: float, warnings: list[str]
) -> tuple[SkinnedMesh, ...]:
    """Every mesh UsdSkel binds to `skel` (under its SkelRoot), lengths times `factor`.

    UsdSkel skins in skeleton space: a point p goes to sum w (skelXform_j inv(bind_j))
    (geomBindTransform p), then through the skeleton's local-to-world, which the clip's roots
    already carry; so inverse_bind is inv(bindTransforms) and node_matrix geomBindTransform.
    The palette is the mesh's skel:joints when it has them, else the Skeleton's joints.
    A mesh that cannot be read is left out with a warning naming its prim."""
    from pxr import Usd, UsdSkel

    root_prim = skel.GetPrim().GetParent()
    while root_prim and not root_prim.IsA(UsdSkel.Root):
        root_prim = root_prim.GetParent()
    if not root_prim:
        return ()
    bind = np.array(skel.GetBindTransformsAttr().Get() or [], dtype=np.float64)
    n = len(joints)
    if bind.shape != (n, 4, 4):
        warnings.append(f"Skeleton {skel.GetPath()} has no bindTransforms: its meshes are left out")
        return ()
    ibm = np.linalg.inv(np.swapaxes(bind[order], -1, -2))[:, :3].copy()  # column vectors
    ibm[:, :, 3] *= factor
    clip_of_path = {p: i for i, p in enumerate(joints)}
    file_to_clip = np.empty(n, dtype=np.int64)
    file_to_clip[order] = np.arange(n)
    cache = UsdSkel.Cache()
    root = UsdSkel.Root(root_prim)
    predicate = Usd.TraverseInstanceProxies()
    cache.Populate(root, predicate)
    out: list[SkinnedMesh] = []
    for binding in cache.ComputeSkelBindings(root, predicate):
        if binding.GetSkeleton().GetPath() != skel.GetPath():
            continue
        for query in binding.GetSkinningTargets():
            prim = query.GetPrim()
            try:
                mesh = _mesh(query, clip_of_path, file_to_clip, ibm, factor, warnings)
            except (ValueError, IndexError) as e:
                warnings.append(f"skinned mesh {prim.GetPath()} left out: {e}")
                continue
            if mesh is not None:
                out.append(mesh)
    return tuple(out)


def _mesh(
    query: Any,
    clip_of_path: dict[str, int],
    file_to_clip: Array,
    ibm: Array,
    factor: float,
    warnings: list[str],
) -> SkinnedMesh | None:
    from pxr import UsdGeom

    prim = query.GetPrim()
    where = str(prim.GetPath())
    if not prim.IsA(UsdGeom.Mesh):
        return None
    mesh = UsdGeom.Mesh(prim)
    raw = [
        a.Get() or []
        for a in (
            mesh.GetPointsAttr(),
            mesh.GetFaceVertexCountsAttr(),
            mesh.GetFaceVertexIndicesAttr(),
        )
    ]
    if max(len(r) for r in raw) > MAX_MESH_ELEMENTS:  # before numpy copies and fans them
        raise ValueError(f"over {MAX_MESH_ELEMENTS:,} points or face indices")
    points = np.array(raw[0], dtype=np.float64).reshape(-1, 3)
    counts = np.array(raw[1], dtype=np.int64)
    indices = np.array(raw[2], dtype=np.int64)
    if len(points) == 0 or len(counts) == 0:
        return None
    if counts.sum() != len(indices) or np.any(counts < 3):
        raise ValueError("faceVertexCounts do not match faceVertexIndices")
    if indices.min() < 0 or indices.max() >= len(points):
        raise ValueError(f"a face refers to point {int(indices.max())} of {len(points)}")
    tris = _fan(counts, indices)
    if mesh.GetOrientationAttr().Get() == UsdGeom.Tokens.leftHanded:
        tris = tris[:, [0, 2, 1]]
    method = query.GetSkinningMethod()
    if method and str(method) != "classicLinear":
        warnings.append(f"{where}: skinned by {method}; measured with linear blend skinning")
    if query.HasBlendShapes():
        warnings.append(f"{where}: blend shapes are ignored (the skin is measured without them)")
    influences = query.ComputeJointInfluences()
    if not influences:
        raise ValueError("its joint influences cannot be computed")
    ji, jw = (np.array(a) for a in influences)
    k = query.GetNumInfluencesPerComponent()
    ji = ji.astype(np.int64).reshape(-1, k)
    jw = jw.astype(np.float64).reshape(-1, k)
    if query.GetInterpolation() == UsdGeom.Tokens.constant:  # rigid: one set for all
        ji, jw = np.repeat(ji[:1], len(points), 0), np.repeat(jw[:1], len(points), 0)
    if len(ji) != len(points):
        raise ValueError(f"{len(ji)} joint influences for {len(points)} points")
    order = query.GetJointOrder()
    if order:  # the mesh's own skel:joints
        names = [str(j) for j in order]
        missing = [j for j in names if j not in clip_of_path]
        if missing:
            raise ValueError(f"skel:joints names {missing[0]!r}, not a joint of the Skeleton")
        lookup = np.array([clip_of_path[j] for j in names], dtype=np.int64)
    else:
        lookup = file_to_clip
    bad = (ji < 0) | (ji >= len(lookup))
    if np.any(bad & (jw > 0)):
        raise ValueError(f"a joint index is outside the {len(lookup)} joints")
    infl, weights, notes = normalize_influences(np.where(bad, 0, ji), jw)
    warnings.extend(f"{where}: {m}" for m in notes)
    geom = np.array(query.GetGeomBindTransform(), dtype=np.float64).T[:3].copy()
    geom[:, 3] *= factor
    return SkinnedMesh(
        str(prim.GetName()), points * factor, tris, infl, weights, lookup, ibm[lookup], geom
    )


def _fan(counts: Array, indices: Array) -> Array:
    """(T, 3) triangles of polygons (counts (F,), indices): each polygon fanned from its
    first vertex, keeping its winding."""
    starts = np.cumsum(counts) - counts
    per = counts - 2
    face = np.repeat(np.arange(len(counts)), per)
    k = np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per)
    first = starts[face]
    return np.stack([indices[first], indices[first + k + 1], indices[first + k + 2]], axis=1)


FORMAT = FormatSpec(
    name="usd",
    label="USD",
    extensions=(".usd", ".usda", ".usdc", ".usdz"),
    read=read_usd,
    read_options=("animation", "sample_rate", "units"),
    multi_animation=True,
    list=list_usd_animations,
    read_imports=(
        "codec.formats.usd_crate",
        "codec.formats.reader_process",
        "codec.formats.clip_arrays",
    ),
)
