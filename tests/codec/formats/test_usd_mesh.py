"""Skinned meshes read from USD: against UsdSkel's own skinning, the glTF twin, and by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import codec
from codec.measure.skinning import skin_vertices
from codec.model.mesh import skin_of

DATA = Path(__file__).resolve().parents[2] / "data"
USDZ = DATA / "usd" / "CesiumMan.usdz"


def usdskel_points(path: Path, codes: list[float]) -> np.ndarray:
    """(N, V, 3) world points in cm as UsdSkel itself skins them at time codes `codes`."""
    from pxr import Gf, Usd, UsdGeom, UsdSkel, Vt

    stage = Usd.Stage.Open(str(path))
    root = next(UsdSkel.Root(p) for p in stage.Traverse() if p.IsA(UsdSkel.Root))
    cache = UsdSkel.Cache()
    cache.Populate(root, Usd.TraverseInstanceProxies())
    (binding,) = cache.ComputeSkelBindings(root, Usd.TraverseInstanceProxies())
    skel_query = cache.GetSkelQuery(binding.GetSkeleton())
    (target,) = binding.GetSkinningTargets()
    points = UsdGeom.Mesh(target.GetPrim()).GetPointsAttr().Get()
    out = []
    for c in codes:
        xforms = skel_query.ComputeSkinningTransforms(Usd.TimeCode(c))
        pts = Vt.Vec3fArray(points)
        assert target.ComputeSkinnedPoints(xforms, pts, Usd.TimeCode(c))
        to_world = UsdGeom.Xformable(binding.GetSkeleton().GetPrim()).ComputeLocalToWorldTransform(
            Usd.TimeCode(c)
        )
        world = [to_world.Transform(Gf.Vec3d(p)) for p in pts]
        out.append(np.array(world, dtype=np.float64) * 100.0)  # metres -> cm
    return np.array(out)


def test_cesium_man_skins_as_usdskel_does() -> None:
    clip = codec.load_clip(USDZ)
    (mesh,) = clip.meshes
    assert mesh.num_vertices == 3273 and len(mesh.triangles) == 4672
    ours = skin_vertices(clip.object_space(), skin_of(clip.meshes))
    codes = [1.0, 12.0, 24.0, 48.0]  # samples 0, 11, 23, 47 are time codes 1..48
    theirs = usdskel_points(USDZ, codes)
    # UsdSkel skins in float32: agree to its precision on a 1.5 m character
    assert np.max(np.abs(ours[[0, 11, 23, 47]] - theirs)) < 1e-3


def test_usd_and_gltf_cesium_man_skin_alike() -> None:
    usd = codec.load_clip(USDZ)
    gltf = codec.load_clip(DATA / "gltf" / "CesiumMan.glb")
    a = skin_vertices(usd.object_space(), skin_of(usd.meshes))
    b = skin_vertices(gltf.object_space(), skin_of(gltf.meshes))
    assert a.shape == b.shape
    # the same vertices in the same order, two files, two readers
    assert np.max(np.linalg.norm(a - b, axis=-1)) < 1e-3


@pytest.mark.parametrize("units, factor", [("m", 1.0), ("mm", 0.001)])
def test_units_scale_the_usd_mesh(units: str, factor: float) -> None:
    cm = codec.load_clip(USDZ)
    other = codec.load_clip(USDZ, units=units)
    assert np.allclose(other.meshes[0].vertices * 100.0, cm.meshes[0].vertices * factor * 100.0)


def hand_stage(tmp_path: Path, extra: str = "") -> Path:
    text = f"""#usda 1.0
(
    metersPerUnit = 0.01
    upAxis = "Y"
)
def SkelRoot "Root"
{{
    def Skeleton "Skel" (prepend apiSchemas = ["SkelBindingAPI"])
    {{
        uniform token[] joints = ["hip", "hip/knee"]
        uniform matrix4d[] bindTransforms = [
            ((1,0,0,0),(0,1,0,0),(0,0,1,0),(0,0,0,1)),
            ((1,0,0,0),(0,1,0,0),(0,0,1,0),(0,10,0,1))]
        uniform matrix4d[] restTransforms = [
            ((1,0,0,0),(0,1,0,0),(0,0,1,0),(0,0,0,1)),
            ((1,0,0,0),(0,1,0,0),(0,0,1,0),(0,10,0,1))]
    }}
    def Mesh "Leg" (prepend apiSchemas = ["SkelBindingAPI"])
    {{
        point3f[] points = [(0,0,0), (1,0,0), (1,12,0), (0,12,0), (0,12,1)]
        int[] faceVertexCounts = [4, 3]
        int[] faceVertexIndices = [0, 1, 2, 3, 2, 4, 3]
        matrix4d primvars:skel:geomBindTransform = ((1,0,0,0),(0,1,0,0),(0,0,1,0),(5,0,0,1))
        int[] primvars:skel:jointIndices = [0, 0, 0, 0, 0, 1, 1, 0, 1, 0] (
            elementSize = 2
            interpolation = "vertex"
        )
        float[] primvars:skel:jointWeights = [1, 0, 1, 0, 0.5, 0.5, 1, 0, 1, 0] (
            elementSize = 2
            interpolation = "vertex"
        )
        rel skel:skeleton = </Root/Skel>
        {extra}
    }}
}}
"""
    path = tmp_path / "leg.usda"
    path.write_text(text)
    return path


def test_hand_built_stage(tmp_path: Path) -> None:
    clip = codec.load_clip(hand_stage(tmp_path))
    (mesh,) = clip.meshes
    assert mesh.name == "Leg" and mesh.num_vertices == 5
    # the quad fanned into two triangles, the triangle kept, windings kept
    assert mesh.triangles.tolist() == [[0, 1, 2], [0, 2, 3], [2, 4, 3]]
    assert np.allclose(mesh.node_matrix[:, 3], [5, 0, 0])  # geomBindTransform (cm here)
    assert np.allclose(mesh.inverse_bind[1, :, 3], [0, -10, 0])  # inverse of knee's bind
    want = np.zeros((5, 2))
    np.add.at(want, (np.arange(5)[:, None].repeat(2, 1), mesh.joints), mesh.weights)
    assert np.allclose(want, [[1, 0], [1, 0], [0.5, 0.5], [0, 1], [0, 1]])


def test_left_handed_meshes_flip_their_winding(tmp_path: Path) -> None:
    clip = codec.load_clip(hand_stage(tmp_path, 'uniform token orientation = "leftHanded"'))
    assert clip.meshes[0].triangles.tolist() == [[0, 2, 1], [0, 3, 2], [2, 3, 4]]


def test_bad_influences_leave_the_mesh_out(tmp_path: Path) -> None:
    path = hand_stage(tmp_path)
    path.write_text(
        path.read_text().replace("[0, 0, 0, 0, 0, 1, 1, 0, 1, 0]", "[0, 0, 0, 0, 0, 7, 1, 0, 1, 0]")
    )
    clip = codec.load_clip(path)
    assert clip.meshes == ()
    assert any("/Root/Leg" in w and "left out" in w for w in clip.warnings)
