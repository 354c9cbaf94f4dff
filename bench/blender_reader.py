"""Blender's own importers reading our exports: run by Blender's Python (the `bpy` wheel).

`bench/interop.py` starts this script in a separate interpreter that has `bpy` (a venv
outside the repository, e.g. /work/tools/bpy-venv; never a project dependency) and reads
its answer. It imports nothing from the project.

    BPY_PYTHON bench/blender_reader.py JOBS.json

JOBS.json: a list of {"kind": "bvh" | "gltf", "path": FILE, "animation": NAME or null,
"rate": Hz, "times": [seconds...], "joints": [{"bone": NAME, "rest": [x, y, z] or null}, ...],
"out": OUT.npz}, each answered in its OUT.npz (or an "error" line on stdout): `positions`
(times, joints, 3), each joint's point in Blender's world space at
each time, as Blender poses it: the bone's deformation (its pose matrix times its inverse
rest matrix) applied to the joint's rest point, which is the bone's head unless `rest`
gives one (a BVH End Site rides on its parent's bone). BVH is imported without axis
conversion and at scale 1 (world = the file's own axes and unit); glTF as Blender always
imports it (metres, +Y up turned +Z up). `missing`: joints whose bone Blender did not make.
"""

from __future__ import annotations

import json
import math
import sys

import bpy  # type: ignore[import-not-found]
import numpy as np
from mathutils import Vector  # type: ignore[import-not-found]


def _reset() -> None:
    bpy.ops.wm.read_factory_settings(use_empty=True)


def _armature():
    arms = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    if not arms:
        raise SystemExit("the importer made no armature")
    return max(arms, key=lambda o: len(o.data.bones))


def _import_bvh(job: dict, scene) -> float:
    """Import a BVH at the file's own axes and unit; returns frames per second of time."""
    bpy.ops.import_anim.bvh(
        filepath=job["path"],
        global_scale=1.0,
        frame_start=1,
        use_fps_scale=False,
        update_scene_fps=False,
        update_scene_duration=True,
        use_cyclic=False,
        rotate_mode="NATIVE",
        axis_forward="Y",
        axis_up="Z",
    )
    return float(job["rate"])


def _import_gltf(job: dict, scene) -> float:
    bpy.ops.import_scene.gltf(filepath=job["path"])
    arm = _armature()
    name = job.get("animation")
    if name:
        action = bpy.data.actions.get(name)
        if action is None and len(bpy.data.actions) == 1:  # an unnamed glTF animation
            action = bpy.data.actions[0]
        if action is None:
            found = [a.name for a in bpy.data.actions]
            raise SystemExit(f"no action {name!r} after import (found {found})")
        arm.animation_data.action = action
        slots = getattr(action, "slots", None)
        if slots:
            arm.animation_data.action_slot = slots[0]
    return scene.render.fps / scene.render.fps_base


def read(job: dict) -> None:
    _reset()
    scene = bpy.context.scene
    # the scene runs at the clip's rate, so every sample is a whole frame
    scene.render.fps = max(1, round(float(job["rate"])))
    scene.render.fps_base = scene.render.fps / float(job["rate"])
    if job["kind"] == "bvh":
        frame_of = _import_bvh(job, scene)
        first = 1.0
    else:
        frame_of = _import_gltf(job, scene)
        first = 0.0
    arm = _armature()
    bones = arm.data.bones
    joints = job["joints"]
    missing = [j["bone"] for j in joints if j["bone"] not in bones]
    rests = []
    for j in joints:
        if j["bone"] not in bones:
            rests.append(None)
        elif j.get("rest") is not None:
            rests.append(Vector(j["rest"]))
        else:
            rests.append(bones[j["bone"]].head_local.copy())
    times = job["times"]
    out = np.full((len(times), len(joints), 3), np.nan)
    for k, t in enumerate(times):
        frame = first + t * frame_of
        whole = math.floor(frame + 1e-6)
        scene.frame_set(whole, subframe=max(0.0, frame - whole))
        world = arm.matrix_world
        deform = {}
        for i, j in enumerate(joints):
            if rests[i] is None:
                continue
            d = deform.get(j["bone"])
            if d is None:
                pb = arm.pose.bones[j["bone"]]
                d = world @ pb.matrix @ bones[j["bone"]].matrix_local.inverted()
                deform[j["bone"]] = d
            out[k, i] = d @ rests[i]
    np.savez(job["out"], positions=out, missing=np.array(missing, dtype=str))


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        jobs = json.load(f)
    for job in jobs:
        try:
            read(job)
        except Exception as e:  # one file Blender cannot read does not stop the others
            print(f"error {job['out']}: {type(e).__name__}: {e}", flush=True)


if __name__ == "__main__":
    main()
