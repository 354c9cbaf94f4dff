"""Our lossy exports read by the tools they are made for, against our own decoding.

    .venv/bin/python bench/interop.py [--clips PATH[:ANIMATION]...] [--bpy PYTHON]
        [--acl ACL_COMPRESSOR] [--json FILE]

Every clip of tests/data (each glTF animation, each ACL reference clip, every BVH, FBX and
USD clip; --clips chooses) is compressed at 0.01 cm and exported as the window's Stats
panel and `shellscope --export-lossy` export it (app.model.exports.export_lossy: measured in the
file, tightened where its rounding would cross the precision): .bvh, .acl.sjson, .usda,
and .glb for a glTF source, .usdz for a USD one. Then each export is read by every external
reader available and the largest joint-position difference to our decoding of that export
(the clip the file holds) is printed in cm, with each validator's counts:

- Blender 5's own BVH and glTF importers, through the `bpy` wheel in a separate Python
  (--bpy, default /work/tools/bpy-venv/bin/python; never a project dependency), running
  bench/blender_reader.py: each joint's point as Blender poses it;
- assimp 5 (Debian's libassimp5, tests/codec/formats/assimp_reference.py): BVH and glTF
  node world positions, the node of each joint found by name;
- usd-core's own UsdSkel evaluation (SkeletonQuery.ComputeJointSkelTransforms and the
  Skeleton's local-to-world, in a child process) of the USD exports, and its validators
  (the errors and warnings `usdchecker` would print);
- Khronos glTF-Validator (npm, as the tests run it): errors, warnings and UNUSED_OBJECT;
- ACL 2.1's acl_compressor (--acl, default ../shared/tools/acl/acl_compressor when it
  exists) on every .acl.sjson: its max error, and per joint (-stat_exhaustive) how many
  joints are over their own precision; plus a clip tuned joint by joint (hands 0.002 cm,
  feet 0.5 cm) to show the per-joint values reach ACL.

A reader that is not there is a column saying so; nothing here is a test (the tests run
glTF-Validator and assimp only, as `make` installs them).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import codec  # noqa: E402
from app.model.exports import export_lossy  # noqa: E402
from codec.formats import format_of, list_animations, load_clip  # noqa: E402
from codec.formats.bvh import bvh_name  # noqa: E402
from codec.model.clip import Clip  # noqa: E402
from codec.model.transforms import object_space  # noqa: E402
from tests.codec.formats import assimp_reference, gltf_validator  # noqa: E402

DATA = ROOT / "tests" / "data"
BPY = Path("/work/tools/bpy-venv/bin/python")
ACL = ROOT.parent / "shared" / "tools" / "acl" / "acl_compressor"
BLENDER_SCRIPT = ROOT / "bench" / "blender_reader.py"


def positions(clip: Clip) -> np.ndarray:
    """Object-space joint positions (S, J, 3) in cm."""
    sk = clip.skeleton
    return object_space(clip.rotations, clip.translations, clip.scales, sk.parents)[..., 3]


def default_clips() -> list[tuple[Path, str | None]]:
    out: list[tuple[Path, str | None]] = []
    for path in sorted((DATA / "gltf").iterdir()):
        for name in list_animations(path):
            out.append((path, name))
    for folder in ("bvh", "fbx", "usd"):
        for path in sorted((DATA / folder).iterdir()):
            names = list_animations(path) if folder == "fbx" else [None]
            out.extend((path, n) for n in names[:1])
    for name in ("cmu_09_02", "cmu_13_07", "cmu_81_18_looping"):
        found = sorted((DATA / "acl").glob(f"{name}.acl.sjson*"))
        out.append((found[0], None))
    return out


def exports_of(path: Path) -> list[str]:
    fmt = format_of(path)
    out = [".bvh", ".acl.sjson", ".usda"]
    if fmt == "gltf":
        out.insert(0, ".glb")
    if fmt == "usd":
        out.insert(0, ".usdz")
    return out


# ------------------------------------------------------------------ external readers


def blender(jobs: list[dict], bpy: Path) -> dict[str, str]:
    """Run Blender's importers on every job at once; returns errors by output file."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(jobs, f)
    try:
        run = subprocess.run(
            [str(bpy), str(BLENDER_SCRIPT), f.name], capture_output=True, text=True, timeout=3600
        )
    finally:
        os.unlink(f.name)
    errors = {}
    for line in run.stdout.splitlines():
        if line.startswith("error "):
            where, _, what = line[6:].partition(": ")
            errors[where] = what
    if run.returncode:
        raise RuntimeError(run.stderr.strip()[-800:])
    return errors


def blender_job(file: Path, written: Clip, animation: str | None, out: Path) -> dict:
    """What bench/blender_reader.py needs for one export: joints, their bones, sample times."""
    if file.suffix == ".bvh":
        back = load_clip(file, units="cm")  # the file's own OFFSETs give each point's rest
        sk = back.skeleton
        rest = object_space(
            sk.bind_rotations[None], sk.bind_translations[None], sk.bind_scales[None], sk.parents
        )[0, :, :, 3]
        index = {n: k for k, n in enumerate(back.skeleton.names)}
        text = file.read_text()
        joints = []
        for name in (bvh_name(n) for n in written.skeleton.names):
            k = index[name]
            bone = f"JOINT {name}\n" in text or f"ROOT {name}\n" in text
            parent = back.skeleton.names[back.skeleton.parents[k]] if not bone else name
            joints.append({"bone": parent[:63], "rest": None if bone else rest[k].tolist()})
        times = (np.arange(written.num_samples) / written.sample_rate).tolist()
        return {
            "kind": "bvh",
            "path": str(file),
            "rate": written.sample_rate,
            "times": times,
            "joints": joints,
            "out": str(out),
        }
    from codec.formats.gltf import (
        animation_names,
        animation_timeline,
        animation_tracks,
        load_document,
        skin_joints,
    )

    doc = load_document(file)
    ai = animation_names(doc).index(animation)
    timeline = animation_timeline(animation_tracks(doc, ai, skin_joints(doc, 0).order, []), None)
    times = (timeline.start + np.arange(written.num_samples) / timeline.rate).tolist()
    joints = [{"bone": n, "rest": None} for n in written.skeleton.names]
    return {
        "kind": "gltf",
        "path": str(file),
        "animation": animation,
        "rate": timeline.rate,
        "times": times,
        "joints": joints,
        "out": str(out),
    }


def blender_positions(job: dict) -> np.ndarray:
    """Blender's world positions of a job's joints, in our axes and cm."""
    p = np.load(job["out"])["positions"]
    if job["kind"] == "gltf":  # Blender turns glTF's +Y up into +Z up, metres
        p = np.stack([p[..., 0], p[..., 2], -p[..., 1]], axis=-1) * 100.0
    return p


def assimp_positions(file: Path, written: Clip, times: np.ndarray) -> np.ndarray:
    """assimp's world positions of the joints' nodes (by name), in our axes and cm."""
    hint = {".bvh": b"bvh", ".glb": b"glb"}[file.suffix]
    data = file.read_bytes()
    names = assimp_reference.animation_names(data, hint)
    animation = written.name if written.name in names else names[0] if len(names) == 1 else None
    if animation is None:
        raise ValueError(f"assimp names the animations {names}")
    world = assimp_reference.world_positions(data, animation, times, hint)
    by_name: dict[str, np.ndarray] = {}
    for path, p in world.items():
        by_name.setdefault(path.rsplit("/", 1)[-1], p)
    scale = 100.0 if file.suffix == ".glb" else 1.0
    out = np.full((len(times), written.num_joints, 3), np.nan)
    for j, name in enumerate(written.skeleton.names):
        name = bvh_name(name) if file.suffix == ".bvh" else name
        if name in by_name:
            out[:, j] = by_name[name] * scale
    return out


USD_SCRIPT = r"""
import json, sys
import numpy as np
from pxr import Usd, UsdGeom, UsdSkel
from codec.formats.usd_lossy import compliance
path = sys.argv[1]
stage = Usd.Stage.Open(path)
skel = next(UsdSkel.Skeleton(p) for p in stage.Traverse() if p.IsA(UsdSkel.Skeleton))
query = UsdSkel.Cache().GetSkelQuery(skel)
anim = query.GetAnimQuery()
codes = sorted(set(anim.GetJointTransformTimeSamples()))
tokens = [str(t) for t in query.GetJointOrder()]
xf = UsdGeom.Xformable(skel.GetPrim())
out = []
for c in codes:
    t = Usd.TimeCode(c)
    skel_space = np.array(query.ComputeJointSkelTransforms(t))
    world = np.array(xf.ComputeLocalToWorldTransform(t))
    out.append((skel_space @ world)[:, 3, :3])
errors, warnings = compliance(path)
print(json.dumps({"joints": tokens, "positions": np.array(out).tolist(),
                  "meters": UsdGeom.GetStageMetersPerUnit(stage),
                  "errors": len(errors), "warnings": len(warnings),
                  "first_error": errors[0] if errors else ""}))
"""


def usd_reading(file: Path, written: Clip) -> tuple[np.ndarray, dict]:
    """usd-core's own evaluation of a USD export (a child process), in cm, and its
    validators' counts."""
    run = subprocess.run(
        [sys.executable, "-c", USD_SCRIPT, str(file)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    if run.returncode:
        raise RuntimeError(run.stderr.strip()[-500:])
    got = json.loads(run.stdout.splitlines()[-1])
    p = np.array(got["positions"]) * got["meters"] * 100.0
    tails = [t.rsplit("/", 1)[-1] for t in got["joints"]]
    out = np.full((p.shape[0], written.num_joints, 3), np.nan)
    for j, name in enumerate(written.skeleton.names):
        tail = name.rsplit("/", 1)[-1]
        cands = [k for k, t in enumerate(tails) if t in (tail, tail.replace(".", "_"))]
        if len(cands) == 1:
            out[:, j] = p[:, cands[0]]
    if written.num_joints == len(tails) and np.isnan(out).any():  # a new stage: our order
        out = p
    return out, got


def float32_floor(file: Path, animation: str) -> float:
    """What evaluating a glTF file's own float32 values in float32 (as Blender does) moves
    its joints, in cm: the local transforms multiplied down each chain in float32 against
    float64, in the file's metres. No reader of float32 can be nearer our decoding."""
    from codec.formats.gltf import read_gltf
    from codec.model import quat

    clip = read_gltf(file, animation=animation, scale_to_cm=False)
    sk = clip.skeleton

    def chain(dtype: type) -> np.ndarray:
        lin = quat.to_matrix(clip.rotations).astype(dtype) * clip.scales.astype(dtype)[..., None, :]
        tr = clip.translations.astype(dtype)
        world_lin = np.empty_like(lin)
        world_tr = np.empty_like(tr)
        for j, p in enumerate(sk.parents):  # a loop over joints, in hierarchy order
            if p < 0:
                world_lin[:, j], world_tr[:, j] = lin[:, j], tr[:, j]
            else:
                world_lin[:, j] = world_lin[:, p] @ lin[:, j]
                world_tr[:, j] = (world_lin[:, p] @ tr[:, j, :, None])[..., 0] + world_tr[:, p]
        return world_tr.astype(np.float64)

    return diff(chain(np.float32), chain(np.float64)) * 100.0


def acl_stats(file: Path, acl: Path) -> dict:
    """acl_compressor on an ACL SJSON file: its max error and, per joint, its largest
    error over the samples (-stat_exhaustive)."""
    from codec.formats.sjson import parse

    with tempfile.TemporaryDirectory() as tmp:
        stats = Path(tmp) / "stats.sjson"
        run = subprocess.run(
            [str(acl), f"-acl={file}", f"-stats={stats}", "-stat_exhaustive"],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if run.returncode or not stats.exists():
            raise RuntimeError(f"acl_compressor failed: {run.stdout.strip()[-300:]}")
        doc = parse(stats.read_text())
    result = doc["runs"][0]
    frames = [np.array(seg["error_per_frame_and_bone"], dtype=float) for seg in result["segments"]]
    per_bone = np.concatenate(frames).max(axis=0)
    return {
        "max_error": float(result["max_error"]),
        "per_bone": per_bone,
        "size": int(result["compressed_size"]),
    }


# ------------------------------------------------------------------ the run


def diff(a: np.ndarray, b: np.ndarray) -> float:
    d = np.linalg.norm(a - b, axis=-1)
    return float(np.nanmax(d)) if np.isfinite(d).any() else float("nan")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clips", nargs="*", help="PATH or PATH:ANIMATION (default: tests/data)")
    p.add_argument("--bpy", type=Path, default=BPY, help="a Python with the bpy wheel")
    p.add_argument("--acl", type=Path, default=ACL, help="ACL 2.1's acl_compressor")
    p.add_argument("--json", type=Path, help="write every row as JSON")
    args = p.parse_args()
    clips = default_clips()
    if args.clips:
        clips = [(Path(c.split(":")[0]), c.split(":")[1] if ":" in c else None) for c in args.clips]
    have_bpy = args.bpy.is_file()
    have_acl = args.acl.is_file()
    have_validator = gltf_validator.missing() is None
    print(f"Blender (bpy): {args.bpy if have_bpy else 'not found: --bpy PYTHON'}")
    print(f"acl_compressor: {args.acl if have_acl else 'not found: --acl PATH'}")
    print(f"glTF-Validator: {'installed' if have_validator else gltf_validator.missing()}")
    rows: list[dict] = []
    work = Path(tempfile.mkdtemp(prefix="shellscope-interop-"))
    jobs: list[tuple[dict, dict]] = []
    for path, animation in clips:
        opts = {"animation": animation} if animation else {}
        raw = load_clip(path, **opts)
        result = codec.compress(raw)
        label = path.name + (f":{animation}" if animation else "")
        for ext in exports_of(path):
            out = work / f"{len(rows):03d}{ext}"
            row = {"clip": label, "export": ext, "readers": {}}
            rows.append(row)
            t0 = time.perf_counter()
            try:
                made = export_lossy(out, result, source=path)
            except Exception as e:  # an export that cannot be made is a row too
                row["error"] = f"{type(e).__name__}: {e}"
                continue
            row["export_s"] = time.perf_counter() - t0
            row["in_file"] = float(made.measured.error.max())
            row["met"] = made.measured.met
            row["tightened"] = made.tightened
            row["size"] = out.stat().st_size
            ours = positions(made.clip)
            row["_ours"] = ours
            times = np.arange(made.clip.num_samples) / made.clip.sample_rate
            if ext in (".bvh", ".glb"):
                try:
                    if ext == ".glb":
                        from codec.formats.gltf import (
                            animation_names,
                            animation_timeline,
                            animation_tracks,
                            load_document,
                            skin_joints,
                        )

                        doc = load_document(out)
                        ai = animation_names(doc).index(made.clip.name)
                        order = skin_joints(doc, 0).order
                        tl = animation_timeline(animation_tracks(doc, ai, order, []), None)
                        times = tl.start + times
                    row["readers"]["assimp"] = diff(assimp_positions(out, made.clip, times), ours)
                except Exception as e:
                    row["readers"]["assimp"] = f"{type(e).__name__}: {e}"[:80]
                if have_bpy:
                    job = blender_job(out, made.clip, made.clip.name, out.with_suffix(".npz"))
                    jobs.append((job, row))
            if ext == ".glb":
                row["floor"] = float32_floor(out, made.clip.name)
            if ext == ".glb" and have_validator:
                (report,) = gltf_validator.validate(out)
                row["validator"] = (
                    f"glTF-Validator {report['numErrors']} errors, {report['numWarnings']} "
                    f"warnings, {report['codes'].get('UNUSED_OBJECT', 0)} UNUSED_OBJECT"
                )
            if ext.startswith(".usd"):
                try:
                    got, counts = usd_reading(out, made.clip)
                    row["readers"]["usd-core"] = diff(got, ours)
                    row["validator"] = (
                        f"usd-core validators {counts['errors']} errors, "
                        f"{counts['warnings']} warnings"
                    )
                except Exception as e:
                    row["readers"]["usd-core"] = f"{type(e).__name__}: {e}"[:80]
            if ext == ".acl.sjson" and have_acl:
                try:
                    st = acl_stats(out, args.acl)
                    prec = made.clip.skeleton.precision
                    over = int(np.sum(st["per_bone"] > prec))
                    row["acl"] = (
                        f"ACL max error {st['max_error']:.6f}, {over}/{len(prec)} joints over "
                        "their precision"
                    )
                except Exception as e:
                    row["acl"] = str(e)[:80]
            print(f"  {label} {ext}: done", file=sys.stderr)
    if jobs:
        errors = blender([j for j, _ in jobs], args.bpy)
        for job, row in jobs:
            if job["out"] in errors:
                row["readers"]["Blender"] = errors[job["out"]][:80]
            else:
                row["readers"]["Blender"] = diff(blender_positions(job), row["_ours"])
    tuned = acl_tuned(work, args.acl) if have_acl else None
    print_table(rows, tuned)
    if args.json:
        clean = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]
        args.json.write_text(json.dumps({"rows": clean, "acl_tuned": tuned}, indent=1))
    return 0


def acl_tuned(work: Path, acl: Path) -> dict:
    """cmu_09_02 tuned joint by joint (hands 0.002 cm, feet and toes 0.5 cm, the rest 0.01):
    written as a track list, does acl_compressor apply each joint's precision?"""
    from codec.tuning import GlobalSettings, JointOverride, tuned_clip

    raw = load_clip(DATA / "acl" / "cmu_09_02.acl.sjson")
    rules = (
        JointOverride("*Hand*", precision=0.002),
        JointOverride("*Foot*", precision=0.5),
        JointOverride("*Toe*", precision=0.5),
    )
    clip = tuned_clip(raw, GlobalSettings(), rules)
    result = codec.compress(clip)
    out = work / "tuned.acl.sjson"
    export_lossy(out, result)
    st = acl_stats(out, acl)
    uniform = work / "uniform.acl.sjson"
    export_lossy(uniform, codec.compress(raw))
    plain = acl_stats(uniform, acl)
    prec = clip.skeleton.precision
    names = clip.skeleton.names
    loose = prec == 0.5
    tight = prec == 0.002
    return {
        "form": "track_list" if "track_list =" in out.read_text() else "clip",
        "acl_max_error": st["max_error"],
        "acl_size": st["size"],
        "uniform_size": plain["size"],
        "uniform_max": plain["max_error"],
        "joints_over_own_precision": int(np.sum(st["per_bone"] > prec)),
        "loose_joints": [names[j] for j in np.flatnonzero(loose)],
        "loose_max": float(st["per_bone"][loose].max()),
        "tight_max": float(st["per_bone"][tight].max()),
        "rest_max": float(st["per_bone"][~loose & ~tight].max()),
    }


def print_table(rows: list[dict], tuned: dict | None) -> None:
    readers = ["Blender", "assimp", "usd-core"]
    print()
    print(
        "| clip | export | size (B) | in the file (cm) | "
        + " | ".join(f"{r} (cm)" for r in readers)
        + " | validator / ACL |"
    )
    print("|---|---|---:|---:|" + "---:|" * len(readers) + "---|")
    for r in rows:
        if "error" in r:
            print(
                f"| {r['clip']} | {r['export']} | | {r['error'][:90]} |"
                + " |" * len(readers)
                + " |"
            )
            continue
        cells = []
        for name in readers:
            v = r["readers"].get(name)
            cells.append("" if v is None else f"{v:.2e}" if isinstance(v, float) else str(v))
        note = r.get("validator") or r.get("acl") or ""
        if "floor" in r:
            note += f"; float32 floor {r['floor']:.2e} cm"
        flag = "" if r["met"] else " OVER"
        if r["tightened"]:
            flag += f" (tightened {r['tightened']})"
        print(
            f"| {r['clip']} | {r['export']} | {r['size']:,} | {r['in_file']:.6f}{flag} | "
            + " | ".join(cells)
            + f" | {note} |"
        )
    if tuned:
        print()
        print(
            f"ACL on cmu_09_02 tuned per joint ({tuned['form']} form): max error "
            f"{tuned['acl_max_error']:.6f} cm, {tuned['acl_size']:,} B (all at 0.01 cm: "
            f"{tuned['uniform_max']:.6f} cm, {tuned['uniform_size']:,} B); per joint: hands "
            f"(0.002 cm) {tuned['tight_max']:.6f}, feet/toes (0.5 cm) {tuned['loose_max']:.6f}, "
            f"others (0.01 cm) {tuned['rest_max']:.6f}; "
            f"{tuned['joints_over_own_precision']} joints over their own precision"
        )


if __name__ == "__main__":
    sys.exit(main())
