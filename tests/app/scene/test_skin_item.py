"""The skinned mesh in the 3D view: what is drawn against the codec's own skin error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import codec
from app.model import colors
from app.scene.skin_item import OPAQUE, STYLES, SkinLayer
from codec.measure.skinning import skin_vertices
from codec.model.mesh import skin_of

DATA = Path(__file__).resolve().parents[2] / "data"


def rotation_between(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
    """The rotation R best taking points a onto b (both (N, 3)) and the largest residual."""
    u, _, vt = np.linalg.svd(a.T @ b)
    r = (u @ vt).T
    return r, float(np.max(np.abs(a @ r.T - b)))


@pytest.fixture
def cesium(window, ui):
    ui.open(window, ui.data / "gltf" / "CesiumMan.glb")
    ui.draw(window.viewport)
    return window


def test_the_drawn_skin_is_the_codecs_at_a_sample(cesium, ui) -> None:
    doc, vp = cesium.document, cesium.viewport
    result = doc.result
    k = 17
    doc.set_time(k / doc.clip.sample_rate)
    ui.draw(vp)
    layer = vp.skin
    skin = skin_of(doc.clip.meshes)
    raw = skin_vertices(doc.clip.object_space()[k : k + 1], skin)[0]
    lossy = skin_vertices(result.lossy.object_space()[k : k + 1], skin)[0]
    # the view turns the file's axes for display: one rotation takes the codec's skin to it
    r, residual = rotation_between(raw, layer.raw_vertices)
    assert residual < 1e-6 and np.allclose(r @ r.T, np.eye(3))
    assert np.max(np.abs(lossy @ r.T - layer.lossy_vertices)) < 1e-6
    # the error on screen at a sample is the codec's measure at that sample
    assert np.allclose(layer.vertex_error, result.vertex_error.error[k], rtol=0, atol=1e-9)
    assert layer.vertex_error.max() > 0
    # coloured by its share of the strongest joint's precision, on the bones' scale
    want = result.vertex_error.error[k] / result.clip.skeleton.precision[skin.dominant_joint]
    assert np.allclose(layer.fraction, want)
    drawn = layer.lossy_item.colors
    assert np.allclose(drawn[:, :3], colors.error_colors(want)[:, :3], atol=1e-6)
    from app.model.error_scale import format_cm

    assert f"skin {format_cm(float(layer.vertex_error.max()))}" in vp.info.text()


def test_the_skin_follows_scrubbing_and_rounding(cesium, ui) -> None:
    doc, vp = cesium.document, cesium.viewport
    rate = doc.clip.sample_rate
    doc.set_rounding("floor")
    doc.set_time(20.4 / rate)
    ui.draw(vp)
    floored = vp.skin.raw_vertices.copy()
    assert np.allclose(vp.skin.vertex_error, doc.result.vertex_error.error[20], atol=1e-9)
    doc.set_rounding("ceil")
    ui.draw(vp)
    assert np.allclose(vp.skin.vertex_error, doc.result.vertex_error.error[21], atol=1e-9)
    doc.set_rounding("none")
    ui.draw(vp)
    assert not np.allclose(vp.skin.raw_vertices, floored)  # between samples now


def test_toggles_and_styles_reach_the_screen(cesium, ui) -> None:
    doc, vp = cesium.document, cesium.viewport
    controls = vp.skin_controls
    assert controls.isVisible()
    doc.update_display(show_raw=False, show_lossy=False, shells="none", skin_style="solid")
    ui.draw(vp)
    with_skin = vp.grab_scene()[..., :3].astype(int)
    assert vp.skin.lossy_item.visible() and vp.skin.raw_item.visible()
    assert vp.skin.lossy_item.gl_options is OPAQUE  # opaque in solid style
    controls.show_lossy.setChecked(False)
    controls.show_raw.setChecked(False)
    assert not doc.display.show_lossy_skin and not doc.display.show_raw_skin
    ui.draw(vp)
    without = vp.grab_scene()[..., :3].astype(int)
    changed = np.any(np.abs(with_skin - without) > 24, axis=-1)
    assert changed.sum() > 3000  # the character's body, a few thousand pixels at least
    assert not vp.skin.lossy_item.visible() and not vp.skin.raw_item.visible()
    for style in STYLES:
        controls.style_actions[style].trigger()
        assert doc.display.skin_style == style
        ui.draw(vp)
        assert vp.skin.lossy_item.wire == (style == "wireframe")


def test_magnified_lossy_skin_keeps_the_true_colours(qtbot) -> None:
    from app.scene.scene_view import SceneView

    clip = codec.load_clip(DATA / "gltf" / "Fox.glb", animation="Walk")
    scene = SceneView()  # never shown: the layer only fills its items' arrays
    layer = SkinLayer(scene)
    layer.set_meshes(clip.meshes)
    raw = clip.object_space()[3]
    lossy = raw.copy()
    lossy[:, :, 3] += np.array([0.01, 0.0, 0.0])  # every joint 0.01 cm off along x
    precision = np.full(clip.num_joints, 0.02)
    layer.update(raw, lossy, precision, True, True, magnify=1.0)
    plain, fraction = layer.lossy_vertices.copy(), layer.fraction.copy()
    assert np.allclose(layer.vertex_error, 0.01) and np.allclose(fraction, 0.5)
    layer.update(raw, lossy, precision, True, True, magnify=1000.0)
    offset = layer.lossy_vertices - layer.raw_vertices
    assert np.allclose(offset, 1000 * (plain - layer.raw_vertices))
    assert np.allclose(layer.lossy_vertices[:, 0] - layer.raw_vertices[:, 0], 10.0)
    assert np.allclose(layer.fraction, fraction)  # colours say the true error
    layer.update(raw, None, None, True, True)
    assert layer.vertex_error is None and not layer.lossy_item.visible()
    layer.set_meshes(())
    layer.update(raw, lossy, precision, True, True)
    assert not layer.raw_item.visible() and layer.skin is None
    scene.close()


def test_a_clip_without_mesh_draws_as_before(loaded, ui) -> None:
    vp = loaded.viewport
    assert loaded.document.clip.meshes == ()
    assert vp.skin.skin is None
    assert not vp.skin_controls.isVisible()
    assert not any(item.visible() for item in vp.skin.items)
    assert "skin" not in vp.info.text()
    assert loaded.docks["SkinReportPanel"].isHidden()


def test_the_magnifier_moves_the_lossy_skin_and_the_camera_frames_the_skin(cesium, ui) -> None:
    doc, vp = cesium.document, cesium.viewport
    k = 23
    doc.set_time(k / doc.clip.sample_rate)
    ui.draw(vp)
    raw, plain = vp.skin.raw_vertices.copy(), vp.skin.lossy_vertices.copy()
    fraction = vp.skin.fraction.copy()
    # the whole skin is on screen (the camera frames the skin, not only the joints)
    xy, w = vp.project(raw)
    assert np.all(w > 0)
    assert xy[:, 0].min() >= 0 and xy[:, 0].max() <= vp.scene.width()
    assert xy[:, 1].min() >= 0 and xy[:, 1].max() <= vp.scene.height()
    doc.update_display(magnify=100.0)
    ui.draw(vp)
    assert np.allclose(vp.skin.raw_vertices, raw)
    assert np.allclose(vp.skin.lossy_vertices, raw + 100.0 * (plain - raw), atol=1e-6)
    assert np.array_equal(vp.skin.fraction, fraction)  # the colours keep the true error
