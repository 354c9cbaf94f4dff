"""An independent USD reference for the tests: usd-core's own UsdSkel world transforms.

Shellscope's reader (codec.formats.usd) reads the Skeleton's and SkelAnimation's attributes
and composes the joints itself; here usd-core computes every joint's world transform
(UsdSkel.SkeletonQuery.ComputeJointWorldTransforms with a UsdGeom.XformCache), so a test
comparing the two checks our mapping of animation joints, rest fallbacks, parents and the
prims above the skeleton against the library's own evaluation.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def clip_joint_positions_cm(path: Path, skeleton: str, codes: list[float], clip) -> np.ndarray:
    """UsdSkel's world positions (S, J, 3) in cm of `clip`'s joints (matched by their names,
    the last element of the joint paths) at the stage time codes `codes`."""
    from pxr import Usd, UsdGeom, UsdSkel

    stage = Usd.Stage.Open(str(path))
    skel = UsdSkel.Skeleton(stage.GetPrimAtPath(skeleton))
    query = UsdSkel.Cache().GetSkelQuery(skel)
    paths = [str(j) for j in skel.GetJointsAttr().Get()]
    tails = [p.rsplit("/", 1)[-1] for p in paths]
    column = [tails.index(n) if n in tails else paths.index(n) for n in clip.skeleton.names]
    out = []
    for c in codes:
        world = np.array(query.ComputeJointWorldTransforms(UsdGeom.XformCache(c)))
        out.append(world[column, 3, :3])
    return np.array(out) * UsdGeom.GetStageMetersPerUnit(stage) * 100.0


def sample_codes(path: Path, clip) -> list[float]:
    """The time codes of `clip`'s samples: from the animation's first time sample (or the
    stage's start) at the clip's rate."""
    from pxr import Usd, UsdSkel

    stage = Usd.Stage.Open(str(path))
    tcps = stage.GetTimeCodesPerSecond()
    first = None
    for prim in stage.Traverse():
        if prim.IsA(UsdSkel.Animation) and prim.GetName() == clip.name:
            anim = UsdSkel.Animation(prim)
            samples = [
                t
                for a in (anim.GetTranslationsAttr(), anim.GetRotationsAttr(), anim.GetScalesAttr())
                for t in a.GetTimeSamples()
            ]
            first = min(samples) if samples else None
    if first is None:
        first = stage.GetStartTimeCode()
    return [first + k * tcps / clip.sample_rate for k in range(clip.num_samples)]
