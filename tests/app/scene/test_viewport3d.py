"""The 3D view: geometry maths, the drawn poses against the codec, picking, and pixels."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from app.model import colors
from app.model.picking import pick, project, ray_through
from app.model.skeleton_mesh import (
    BoneMesh,
    ShellMesh,
    body_joints,
    magnify,
    ring_lines,
    silhouette_circles,
    unit_sphere,
)
from app.model.up_axis import to_display
from codec.measure.error_metric import shell_error
from codec.model.transforms import object_space

# --- Qt-free maths ------------------------------------------------------------------------


def _look_at_mvp() -> np.ndarray:
    """A camera at z=10 looking down -z with a 90 degree frustum (near 1, far 100)."""
    n, f = 1.0, 100.0
    proj = np.array(
        [
            [1, 0, 0, 0],
            [0, 1, 0, 0],
            [0, 0, -(f + n) / (f - n), -2 * f * n / (f - n)],
            [0, 0, -1, 0],
        ]
    )
    view = np.eye(4)
    view[2, 3] = -10.0
    return proj @ view


def test_project_and_ray_agree() -> None:
    mvp = _look_at_mvp()
    pts = np.array([[0.0, 0.0, 0.0], [2.0, -1.0, 1.0]])
    xy, w = project(pts, mvp, 200, 100)
    assert xy[0].tolist() == pytest.approx([100, 50])
    assert np.all(w > 0)
    origin, d = ray_through(mvp, *xy[1], 200, 100)
    closest = origin + d * np.dot(pts[1] - origin, d)
    assert np.linalg.norm(closest - pts[1]) < 1e-6


def test_pick_takes_the_nearest_joint_within_tolerance() -> None:
    mvp = _look_at_mvp()
    pts = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 5.0], [3.0, 0.0, 0.0]])  # 0 and 1 overlap
    assert pick(pts, mvp, 100, 50, 200, 100) == 1  # same pixel: the one nearer the eye
    x, y = project(pts[2:], mvp, 200, 100)[0][0]
    assert pick(pts, mvp, x + 5, y - 5, 200, 100, tolerance=10) == 2
    assert pick(pts, mvp, x + 30, y, 200, 100, tolerance=10) is None
    behind = np.array([[0.0, 0.0, 20.0]])
    assert pick(behind, mvp, 100, 50, 200, 100) is None


def _chain_matrices() -> np.ndarray:
    rot = np.tile([0.0, 0.0, 0.0, 1.0], (3, 1))
    tr = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 10.0], [0.0, 0.0, 10.0]])
    return object_space(rot[None], tr[None], np.ones((1, 3, 3)), np.array([-1, 0, 1]))[0]


def test_bone_mesh_is_closed_and_faces_outward() -> None:
    m = _chain_matrices()
    mesh = BoneMesh(np.array([-1, 0, 1]), 0.1, 5.0, rest=m)
    tris = mesh.triangles(m).reshape(-1, 3, 3)
    assert tris.shape == (2 * 8, 3, 3)
    n = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    # outward: away from the bone's axis (the z axis here)
    radial = tris.mean(axis=1) * np.array([1, 1, 0])
    assert np.all(np.sum(n * radial, axis=1) > 0)
    rgba = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0]])
    cols = mesh.colors(mesh.normals(m), rgba, np.eye(3))
    assert cols.shape == (48, 4)
    assert np.all(cols[:24, 0] > cols[:24, 1] + 0.1) and np.all(cols[24:, 1] > cols[24:, 0] + 0.1)
    # lit: faces turned to the key light are brighter than faces turned away from it
    assert np.ptp(cols[:24, 0]) > 0.2


def test_bone_normals_are_computed_once_and_turned_with_the_bones() -> None:
    """The rest normals turned into a new pose equal the new faces' own normals."""
    rest = _chain_matrices()
    mesh = BoneMesh(np.array([-1, 0, 1]), 0.1, 5.0, rest=rest)
    stored = mesh.local_normals.copy()
    rng = np.random.default_rng(1)
    rot = rng.normal(size=(3, 4))
    rot /= np.linalg.norm(rot, axis=1, keepdims=True)
    tr = np.array([[5.0, -2.0, 1.0], [0.0, 0.0, 10.0], [0.0, 0.0, 10.0]])
    posed = object_space(rot[None], tr[None], np.ones((1, 3, 3)), np.array([-1, 0, 1]))[0]
    tris, normals = mesh.posed(posed)
    t = tris.reshape(-1, 3, 3).astype(np.float64)
    cross = np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])
    cross /= np.linalg.norm(cross, axis=1, keepdims=True)
    np.testing.assert_allclose(normals, cross, atol=1e-5)
    np.testing.assert_array_equal(mesh.local_normals, stored)  # nothing recomputed


def test_magnifier_scales_the_difference_and_keeps_raw_at_one() -> None:
    raw = _chain_matrices()
    lossy = raw.copy()
    lossy[:, :, 3] += 0.01
    np.testing.assert_allclose(magnify(raw, lossy, 1.0), lossy)
    np.testing.assert_allclose(magnify(raw, lossy, 1000.0)[:, :, 3] - raw[:, :, 3], 10.0)


def test_sphere_outline_is_where_the_view_grazes_the_sphere() -> None:
    eye = np.array([0.0, -100.0, 0.0])
    c, r = np.array([[0.0, 0.0, 0.0]]), np.array([30.0])
    pts = silhouette_circles(c, r, eye, None, 64).astype(np.float64)
    # every outline point is on the sphere, and the eye ray to it is tangent
    np.testing.assert_allclose(np.linalg.norm(pts, axis=1), 30.0, rtol=1e-5)
    np.testing.assert_allclose(np.sum((pts - eye) * pts, axis=1), 0.0, atol=1e-2)
    ortho = silhouette_circles(c, r, eye, np.array([0.0, 1.0, 0.0]), 64).astype(np.float64)
    np.testing.assert_allclose(ortho[:, 1], 0.0, atol=1e-5)  # the great circle facing the view
    inside = silhouette_circles(c, r, np.zeros(3), None, 64)
    assert len(inside) == 0


def test_sphere_faces_outward_and_shells_sort_far_to_near() -> None:
    s = unit_sphere(12, 8)
    n = np.cross(s[:, 1] - s[:, 0], s[:, 2] - s[:, 0])
    assert np.all(np.sum(n * s.mean(axis=1), axis=1) > 0)
    shells = ShellMesh(12, 8)
    eye = np.array([0.0, 0.0, 100.0])
    verts, cols = shells.build(
        np.array([[0.0, 0, 0], [0, 0, 50]]),
        np.array([1.0, 2.0]),
        np.array([[1, 0, 0, 0.2], [0, 1, 0, 0.2]]),
        eye,
    )
    depth = np.linalg.norm(verts.reshape(-1, 3, 3).mean(axis=1) - eye, axis=1)
    assert np.all(np.diff(depth) <= 1e-4)  # back to front
    # only the near half of each sphere is emitted
    full = 2 * len(s) * 3
    assert 0.4 * full < len(verts) < 0.6 * full and cols.shape == (len(verts), 4)
    tris = verts.reshape(-1, 3, 3)
    n = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    assert np.all(np.sum(n * (eye - tris.mean(axis=1)), axis=1) > 0)
    assert ring_lines(np.zeros((2, 3)), np.array([1.0, 3.0]), 16).shape == (2 * 3 * 16 * 2, 3)


def test_shell_error_is_the_farthest_shell_point() -> None:
    a = _chain_matrices()
    b = a.copy()
    b[2, :, 3] += [0.0, 0.3, 0.0]
    b[1, :, :3] = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])  # 90 degrees about x
    err = shell_error(a, b, np.array([1.0, 2.0, 3.0]))
    assert err[0] == 0 and err[2] == pytest.approx(0.3)
    assert err[1] == pytest.approx(2.0 * np.sqrt(2))


def test_a_far_motion_root_is_not_part_of_the_body() -> None:
    pos = np.array([[0.0, 0, 0], [100, 0, 90], [100, 0, 120], [100, 0, 60]])
    assert body_joints(np.array([-1, 0, 1, 1]), pos).tolist() == [1, 2, 3]
    near = pos.copy()
    near[0] = [100, 0, 88]
    assert body_joints(np.array([-1, 0, 1, 1]), near).tolist() == [0, 1, 2, 3]


# --- the drawn poses -----------------------------------------------------------------------


def expected_positions(doc, pose) -> np.ndarray:
    parents = doc.clip.skeleton.parents
    m = object_space(pose.rotations[None], pose.translations[None], pose.scales[None], parents)
    return m[0, :, :, 3] @ to_display("Y").T


def halfway(doc) -> float:
    rate = doc.clip.sample_rate
    return (doc.clip.num_samples // 2 + 0.5) / rate


def test_each_rounding_mode_draws_exactly_the_codecs_sample(loaded, ui) -> None:
    doc, vp = loaded.document, loaded.viewport
    doc.set_time(halfway(doc) + 0.1 / doc.clip.sample_rate)  # alpha 0.6
    result = doc.result
    drawn = {}
    for mode in ("floor", "ceil", "nearest", "none"):
        loaded.timeline.rounding_box.setCurrentText(mode)  # the UI path
        assert doc.rounding == mode
        ui.draw(vp)
        want = expected_positions(doc, result.decoder.sample(doc.time, mode))
        np.testing.assert_allclose(vp.lossy_positions, want, atol=1e-9)
        raw = doc.clip
        from codec.model.sampling import sample_dense

        raw_pose = sample_dense(
            raw.rotations, raw.translations, raw.scales, raw.sample_rate, doc.time, mode
        )
        np.testing.assert_allclose(vp.raw_positions, expected_positions(doc, raw_pose), atol=1e-9)
        drawn[mode] = vp.lossy_positions.copy()
    assert not np.allclose(drawn["floor"], drawn["ceil"])
    np.testing.assert_array_equal(drawn["nearest"], drawn["ceil"])  # alpha 0.6 rounds up
    assert not np.allclose(drawn["none"], drawn["floor"])


def test_per_track_rounding_uses_each_joints_mode(loaded, ui) -> None:
    doc, vp = loaded.document, loaded.viewport
    doc.set_time(halfway(doc))
    doc.set_selection(5)
    loaded.timeline.set_joint_rounding("ceil")  # the per-joint menu's action
    assert doc.rounding == "per_track"
    ui.draw(vp)
    modes = doc.per_track_rounding()
    assert modes[5] == "ceil" and modes[0] == "none"
    want = doc.result.decoder.sample(doc.time, "per_track", per_track=modes)
    np.testing.assert_allclose(vp.lossy_positions, expected_positions(doc, want), atol=1e-9)


def test_clicking_a_joint_selects_it(loaded, ui, qtbot) -> None:
    doc, vp = loaded.document, loaded.viewport
    assert doc.selection is None
    xy = np.array([[p.x(), p.y()] for p in map(vp.screen_position, range(doc.clip.num_joints))])
    d = np.linalg.norm(xy[:, None] - xy[None], axis=-1) + np.eye(len(xy)) * 1e9
    inside = (
        (xy[:, 0] > 5)
        & (xy[:, 1] > 5)
        & (xy[:, 0] < vp.scene.width() - 5)
        & (xy[:, 1] < vp.scene.height() - 5)
    )
    lonely = int(np.argmax(np.where(inside, d.min(axis=1), -1)))  # easiest joint to hit
    QTest.mouseClick(vp.scene, Qt.MouseButton.LeftButton, pos=vp.screen_position(lonely))
    qtbot.waitUntil(lambda: doc.selection == lonely, timeout=3000)
    ui.draw(vp)
    assert vp.marker.visible()
    np.testing.assert_allclose(vp.marker.pos[0], vp.raw_positions[lonely], atol=1e-4)
    assert doc.clip.skeleton.names[lonely] in vp.info.text()
    # a click on empty space keeps the selection
    corner = vp.scene.rect().topLeft() + QPoint(2, 2)
    assert vp.joint_at(corner.x(), corner.y()) is None
    QTest.mouseClick(vp.scene, Qt.MouseButton.LeftButton, pos=corner)
    assert doc.selection == lonely


# --- pixels --------------------------------------------------------------------------------


def blue_pixels(img: np.ndarray) -> int:
    r, g, b = (img[..., k].astype(int) for k in range(3))
    return int(np.sum((b > 80) & (b > r + 35) & (b > g + 20)))


def lossy_pixels(img: np.ndarray) -> int:
    """Light, unsaturated pixels: the lossy bones under budget (the neutral end of the scale)."""
    c = img[..., :3].astype(int)
    return int(np.sum((c.min(axis=-1) > 140) & (np.ptp(c, axis=-1) < 40)))


def test_both_skeleton_colours_are_on_screen_and_toggle(loaded, ui) -> None:
    doc, vp = loaded.document, loaded.viewport
    img = vp.grab_scene(overlay=False)
    assert blue_pixels(img) > 150 and lossy_pixels(img) > 150
    vp.show_raw.click()
    assert not doc.display.show_raw
    ui.draw(vp)
    img = vp.grab_scene(overlay=False)
    assert blue_pixels(img) < 20 and lossy_pixels(img) > 150
    vp.show_raw.click()
    vp.show_lossy.click()
    ui.draw(vp)
    img = vp.grab_scene(overlay=False)
    assert lossy_pixels(img) < 20 and blue_pixels(img) > 150


def test_shells_are_drawn_when_on_and_gone_when_off(loaded, ui) -> None:
    doc, vp = loaded.document, loaded.viewport
    doc.set_selection(doc.clip.skeleton.names.index("rForeArm"))
    vp.shells_mode.setCurrentText("none")
    ui.draw(vp)
    off = vp.grab_scene(overlay=False).astype(int)
    vp.shells_mode.setCurrentText("selected")
    assert doc.display.shells == "selected"
    ui.draw(vp)
    on = vp.grab_scene(overlay=False).astype(int)
    diff = np.abs(on - off)[..., :3].sum(axis=-1) > 12
    assert diff.sum() > 200  # a sphere of a few centimetres
    assert vp.shells.visible() and vp.own_shells.visible()
    # orange-ish where the shell lies over the background
    assert (on - off)[diff][:, 0].mean() > (on - off)[diff][:, 2].mean()
    vp.shells_mode.setCurrentText("all")
    ui.draw(vp)
    every = vp.grab_scene(overlay=False).astype(int)
    assert (np.abs(every - off)[..., :3].sum(axis=-1) > 12).sum() > diff.sum()
    vp.shells_mode.setCurrentText("none")
    ui.draw(vp)
    again = vp.grab_scene(overlay=False).astype(int)
    assert not vp.shells.visible()
    np.testing.assert_array_equal(again, off)


def test_floor_and_ceil_render_different_poses_and_nearest_one_of_them(loaded, ui) -> None:
    doc, vp = loaded.document, loaded.viewport
    doc.set_time(halfway(doc))
    images = {}
    for mode in ("floor", "ceil", "nearest"):
        doc.set_rounding(mode)
        ui.draw(vp)
        images[mode] = vp.grab_scene(overlay=False).astype(int)
    changed = lambda a, b: int((np.abs(a - b)[..., :3].sum(axis=-1) > 12).sum())  # noqa: E731
    assert changed(images["floor"], images["ceil"]) > 100
    assert (
        min(changed(images["nearest"], images["floor"]), changed(images["nearest"], images["ceil"]))
        == 0
    )


def test_frame_after_a_zoom_and_the_selection_camera(loaded, ui, qtbot) -> None:
    doc, vp = loaded.document, loaded.viewport
    ui.draw(vp)
    fitted = vp.scene.opts["distance"]
    for _ in range(5):  # the wheel zooms and stops the automatic distance
        QApplication.processEvents()  # a turn of the event loop between two wheel steps
        vp.scene.wheelEvent(_wheel(vp.scene, -600))
    ui.draw(vp)
    assert vp.scene.opts["distance"] > 2 * fitted
    vp.frame_all()
    ui.draw(vp)
    assert vp.scene.opts["distance"] == pytest.approx(fitted)
    xy, w = vp.project(vp.raw_positions)
    assert np.all(w > 0) and xy.min() >= 0
    assert np.all(xy[:, 0] <= vp.scene.width()) and np.all(xy[:, 1] <= vp.scene.height())
    hand = doc.clip.skeleton.index("lHand")
    doc.set_selection(hand)
    vp.camera_mode.setCurrentIndex(vp.camera_mode.findData("selection"))
    assert doc.display.camera == "selection"
    doc.set_time(doc.duration)
    ui.draw(vp)
    centre = np.array(vp.scene.opts["center"].toTuple())
    np.testing.assert_allclose(centre, vp.raw_positions[hand], atol=1e-3)


def _wheel(widget, delta: int):
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QWheelEvent

    c = QPointF(widget.width() / 2, widget.height() / 2)
    return QWheelEvent(
        c,
        widget.mapToGlobal(c),
        QPoint(0, 0),
        QPoint(0, delta),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )


def test_all_shells_stay_faint_so_the_character_shows_through(loaded, ui) -> None:
    """With every shell drawn the rings are faint (the more joints, the fainter), the selected
    joint's ring stays bright, and the skeleton's own pixels are barely touched."""
    from app.scene.viewport3d import all_shells_alpha

    doc, vp = loaded.document, loaded.viewport
    assert all_shells_alpha(4) == 0.5 and all_shells_alpha(400) == 0.1
    assert all_shells_alpha(25) > all_shells_alpha(100)
    vp.shells_mode.setCurrentText("none")
    ui.draw(vp)
    off = vp.grab_scene(overlay=False).astype(int)
    vp.shells_mode.setCurrentText("all")
    ui.draw(vp)
    every = vp.grab_scene(overlay=False).astype(int)
    rgba = np.asarray(vp.shell_outlines.color)
    full = colors.DOMINANT_SHELL_OUTLINE[3]
    assert rgba[:, 3].max() <= full * all_shells_alpha(doc.clip.num_joints) + 1e-6
    # a pixel under the rings changes by little: the character reads through them
    diff = np.abs(every - off)[..., :3].sum(axis=-1)
    touched = diff > 12
    assert touched.sum() > 200 and np.percentile(diff[touched], 90) < 150
    sel = doc.clip.skeleton.names.index("rForeArm")
    doc.set_selection(sel)
    ui.draw(vp)
    rgba = np.asarray(vp.shell_outlines.color)
    assert np.isclose(rgba[:, 3].max(), full)  # the selected joint's ring stands out


def test_a_new_result_keeps_the_raw_skeletons_buffers(loaded, ui) -> None:
    """A result changes the lossy skeleton only: the raw bones' triangles are not built and
    uploaded again for it; a new time (a new raw pose) builds them again."""
    import codec

    doc, vp = loaded.document, loaded.viewport
    ui.draw(vp)
    raw_tris = vp.raw_bones.vertexes
    lossy_tris = vp.lossy_bones.vertexes
    doc.set_result(codec.compress(doc.compression_input(), doc.result.settings))
    ui.draw(vp)
    assert vp.raw_bones.vertexes is raw_tris and vp.lossy_bones.vertexes is not lossy_tris
    doc.set_time(halfway(doc))
    ui.draw(vp)
    assert vp.raw_bones.vertexes is not raw_tris
    want = expected_positions(doc, doc.raw_pose())
    np.testing.assert_allclose(vp.raw_positions, want, atol=1e-9)
