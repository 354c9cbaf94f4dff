"""The character stays in view: every clip played to its end, under each camera; named views,
the orthographic toggle and the up axis (a Z-up clip stands upright)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

import codec
from app.model import camera
from app.model.document import Document
from app.model.up_axis import detect_up_axis, to_display, up_axis
from app.scene.viewport3d import Viewport3D
from codec.formats import format_of
from codec.model.clip import Clip
from codec.model.quat import from_matrix, mul
from tests.app.conftest import DATA

Array = np.ndarray

MAX_STEPS = 240  # poses checked per clip, spread evenly from the first to the last instant
VIEW_SIZE = (660, 420)  # about the 3D view of the window at 1280x800


def clip_files() -> list[Path]:
    """Every transform clip the readers open, in every format: tests/data holds a copy of
    each clip of ../shared/data. Scalar track lists and format references are not clips."""
    found = []
    for p in sorted(DATA.glob("*/*")):
        if p.parent.name == "hostile":  # made to be refused (tests/codec/formats/hostile_files)
            continue
        fmt = format_of(p)
        if fmt not in (None, "ssc", "sjson") or (fmt == "sjson" and p.name.startswith("cmu_")):
            found.append(p)
    return found


def _viewport(qtbot) -> tuple[Document, Viewport3D]:
    doc = Document()
    vp = Viewport3D(doc)
    qtbot.addWidget(vp)
    vp.show()
    qtbot.waitExposed(vp)
    vp.scene_box.resize(*VIEW_SIZE)  # the toolbar rows sit above the scene
    vp.resize(VIEW_SIZE[0], VIEW_SIZE[1] + vp.toolbar.sizeHint().height() * 2 + 8)
    qtbot.waitUntil(lambda: vp.scene.size() == vp.scene_box.size(), timeout=10_000)
    return doc, vp


def assert_played_in_view(doc: Document, vp: Viewport3D, label: str) -> Array:
    """Step from the first instant to the last (between samples too) and check every joint
    projects inside the view, in front of the camera. Returns the poses drawn (T, J, 3) at
    `play_times(doc)`."""
    w, h = vp.scene.width(), vp.scene.height()
    drawn = []
    for t in play_times(doc):
        doc.set_time(float(t))
        vp.sync()
        xy, depth = vp.project(vp.raw_positions)
        inside = (xy[:, 0] >= 0) & (xy[:, 0] <= w) & (xy[:, 1] >= 0) & (xy[:, 1] <= h)
        assert np.all(depth > 0) and np.all(inside), (
            f"{label}: at t={t:.3f} s joints "
            f"{[doc.clip.skeleton.names[j] for j in np.flatnonzero(~inside)][:5]} leave the view"
        )
        drawn.append(vp.raw_positions.copy())
    return np.stack(drawn)


def play_times(doc: Document) -> Array:
    """The instants checked: MAX_STEPS at most, four per sample on short clips."""
    return np.linspace(0.0, doc.duration, max(min(MAX_STEPS, 4 * doc.clip.num_samples), 2))


def assert_fixed_camera_holds_the_play(
    doc: Document, vp: Viewport3D, label: str, drawn: Array
) -> None:
    """A fixed camera (Whole clip) keeps every joint of every pose played (`drawn`, from
    assert_played_in_view) inside the view. The view is brought up to date at the first,
    middle and last instants and at two between: each time the same pose is drawn and the
    camera has not moved, so every pose is projected at once through that one camera (each
    pose drawn again would take a rebuild of the whole scene)."""
    times = play_times(doc)
    mvp = None
    for i in np.unique(np.linspace(0, len(times) - 1, 5).round().astype(int)):
        doc.set_time(float(times[i]))
        vp.sync()
        np.testing.assert_array_equal(vp.raw_positions, drawn[i], err_msg=label)
        if mvp is None:
            mvp = vp.scene.mvp()
        assert np.array_equal(vp.scene.mvp(), mvp), f"{label}: at t={times[i]:.3f} s it moved"
    w, h = vp.scene.width(), vp.scene.height()
    xy, depth = vp.project(drawn.reshape(-1, 3))
    xy, depth = xy.reshape(*drawn.shape[:2], 2), depth.reshape(drawn.shape[:2])
    inside = (xy[..., 0] >= 0) & (xy[..., 0] <= w) & (xy[..., 1] >= 0) & (xy[..., 1] <= h)
    ok = inside & (depth > 0)
    if not np.all(ok):
        i = int(np.flatnonzero(~ok.all(axis=1))[0])
        names = [doc.clip.skeleton.names[j] for j in np.flatnonzero(~ok[i])][:5]
        raise AssertionError(f"{label}: at t={times[i]:.3f} s joints {names} leave the view")


@pytest.mark.parametrize("path", clip_files(), ids=lambda p: p.name)
def test_every_clip_stays_in_view_to_its_end(path: Path, qtbot) -> None:
    doc, vp = _viewport(qtbot)
    doc.set_clip(codec.load_clip(path), path)
    assert doc.display.camera == "follow"  # the default
    drawn = assert_played_in_view(doc, vp, f"{path.name}, follow root")
    doc.update_display(camera="clip")
    assert_fixed_camera_holds_the_play(doc, vp, f"{path.name}, whole clip", drawn)
    vp.set_view("front")  # orthographic
    assert vp.scene.ortho
    assert_fixed_camera_holds_the_play(doc, vp, f"{path.name}, front ortho", drawn)


def test_follow_keeps_a_walk_large_and_centred(qtbot) -> None:
    """Following the root, a 4 m walk stays as big on screen at its end as at its start."""
    doc, vp = _viewport(qtbot)
    path = DATA / "bvh" / "cmu_02_02_walk_daz.bvh"
    doc.set_clip(codec.load_clip(path), path)
    heights = []
    for t in (0.0, doc.duration):
        doc.set_time(t)
        vp.sync()
        xy, _ = vp.project(vp.raw_positions)
        heights.append(np.ptp(xy[:, 1]))
        assert abs(xy[:, 0].mean() - vp.scene.width() / 2) < 0.2 * vp.scene.width()
    assert min(heights) > 0.55 * vp.scene.height()
    assert heights[1] == pytest.approx(heights[0], rel=0.25)
    doc.update_display(camera="clip")  # the whole walk in one frame: smaller
    doc.set_time(0.0)
    vp.sync()
    xy, _ = vp.project(vp.raw_positions)
    assert np.ptp(xy[:, 1]) < 0.8 * min(heights)


def test_real_playback_keeps_the_lossy_skeleton_in_view(ui, loaded, qtbot) -> None:
    """The window at 1280x800 plays a clip through its timeline; every frame drawn has every
    raw and lossy joint inside the view."""
    window = loaded
    ui.open(window, DATA / "bvh" / "cmu_02_03_run_ccrig.bvh")
    vp, doc = window.viewport, window.document
    bad: list[float] = []
    drawn: list[float] = []

    def check() -> None:
        w, h = vp.scene.width(), vp.scene.height()
        for pos in (vp.raw_positions, vp.lossy_positions):
            xy, depth = vp.project(pos)
            if not (np.all(depth > 0) and np.all((xy >= 0) & (xy <= (w, h)))):
                bad.append(vp.drawn_time)
        drawn.append(vp.drawn_time)

    vp.frame_drawn.connect(check)
    window.timeline.loop_box.setChecked(False)
    window.timeline.set_speed(1.0)
    for _ in range(30):  # played again until more than 10 distinct frames were seen: a busy
        # machine draws as few as 3 in one pass, the first and the last among them
        doc.set_time(0.0)
        window.timeline.play()
        qtbot.waitUntil(lambda: not window.timeline.playing, timeout=20_000)
        ui.draw(vp)
        if len(set(drawn)) > 10:
            break
    vp.frame_drawn.disconnect(check)
    assert doc.time == pytest.approx(doc.duration)
    assert len(set(drawn)) > 10 and max(drawn) == pytest.approx(doc.duration) and not bad


# --- named views, projection, gizmo --------------------------------------------------------


def test_view_keys_and_the_ortho_toggle(loaded, ui, qtbot) -> None:
    window, vp, doc = loaded, loaded.viewport, loaded.document
    window.activateWindow()  # shortcuts reach the active window
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)
    head, foot = (doc.clip.skeleton.index(n) for n in ("head", "rFoot"))
    QTest.keyClick(window, Qt.Key.Key_1)
    ui.draw(vp)
    assert vp.view_name == "front" and vp.scene.ortho
    assert window.ortho_action.isChecked()
    xy, _ = vp.project(vp.raw_positions)
    assert xy[head, 1] < xy[foot, 1]  # upright on screen
    QTest.keyClick(window, Qt.Key.Key_1, Qt.KeyboardModifier.KeypadModifier)  # the numpad too
    assert vp.view_name == "front"
    QTest.keyClick(window, Qt.Key.Key_3)
    ui.draw(vp)
    assert vp.view_name == "right" and vp.scene.opts["azimuth"] == 0.0
    QTest.keyClick(window, Qt.Key.Key_7)
    ui.draw(vp)
    assert vp.view_name == "top" and vp.scene.opts["elevation"] == 90.0
    QTest.keyClick(window, Qt.Key.Key_5)
    assert not vp.scene.ortho and not window.ortho_action.isChecked()
    ui.draw(vp)
    proj = vp.scene.mvp()
    assert proj[3, 2] != 0  # perspective: w depends on depth
    QTest.keyClick(window, Qt.Key.Key_5)
    assert vp.scene.ortho
    ui.draw(vp)
    assert np.allclose(vp.scene.mvp()[3], [0, 0, 0, 1])  # orthographic: w is 1
    QTest.keyClick(window, Qt.Key.Key_0)
    assert vp.view_name == "perspective" and not vp.scene.ortho


def test_the_axis_gizmo_is_drawn_in_the_corner(loaded, ui) -> None:
    vp = loaded.viewport
    ui.draw(vp)
    with_overlay = vp.grab_scene().astype(int)
    without = vp.grab_scene(overlay=False).astype(int)
    h = with_overlay.shape[0]
    corner = np.abs(with_overlay - without)[h - 100 :, :100, :3].sum(axis=-1) > 40
    assert corner.sum() > 300
    # the file's axes in their usual colours: a red X, a green Y, a blue Z
    px = with_overlay[h - 100 :, :100][corner][:, :3]
    red = (px[:, 0] > 180) & (px[:, 1] < 120)
    green = (px[:, 1] > 160) & (px[:, 0] < 160) & (px[:, 2] < 120)
    blue = (px[:, 2] > 200) & (px[:, 0] < 120)
    assert red.sum() > 20 and green.sum() > 20 and blue.sum() > 20


def test_fit_distance_holds_a_sphere_in_both_projections(qtbot) -> None:
    doc, vp = _viewport(qtbot)
    s = vp.scene
    rng = np.random.default_rng(4)
    for ortho in (False, True):
        s.ortho = ortho
        s.opts["distance"] = camera.fit_distance(50.0, s.opts["fov"], s.width(), s.height(), ortho)
        s.opts["azimuth"], s.opts["elevation"] = 33.0, 21.0
        d = rng.normal(size=(2000, 3))
        pts = 50.0 * d / np.linalg.norm(d, axis=1, keepdims=True)  # on the sphere
        xy, w = vp.project(pts)
        assert np.all(w > 0)
        assert xy.min() >= -0.5 and xy[:, 0].max() <= s.width() + 0.5
        assert xy[:, 1].max() <= s.height() + 0.5
        # and it is a fit, not a speck: the sphere spans the short side
        assert np.ptp(xy[:, 1]) > 0.95 * min(s.width(), s.height())


# --- up axis -------------------------------------------------------------------------------


def z_up_copy(clip: Clip) -> Clip:
    """The same motion written Z-up: every root turned +90 degrees about X (Y -> Z)."""
    turn = to_display("Y")  # (x, y, z) -> (x, -z, y)
    q = np.broadcast_to(from_matrix(turn), clip.rotations[:, 0].shape)
    rot = clip.rotations.copy()
    tr = clip.translations.copy()
    for r in np.flatnonzero(clip.skeleton.parents < 0):
        rot[:, r] = mul(q, rot[:, r])
        tr[:, r] = tr[:, r] @ turn.T
    return clip.replace(rotations=rot, translations=tr)


def test_a_z_up_clip_stands_upright(qtbot) -> None:
    path = DATA / "bvh" / "cmu_02_02_walk_daz.bvh"
    y_up = codec.load_clip(path)
    z_up = z_up_copy(y_up)
    assert detect_up_axis(y_up) == "Y" and detect_up_axis(z_up) == "Z"
    doc, vp = _viewport(qtbot)
    drawn = {}
    for name, clip in (("y", y_up), ("z", z_up)):
        doc.set_clip(clip, path.with_name(f"{name}.bvh"))
        doc.set_time(1.0)
        vp.sync()
        drawn[name] = vp.raw_positions.copy()
    assert vp.up == "Z" and "detected" in vp.up_reason
    np.testing.assert_allclose(drawn["z"], drawn["y"], atol=1e-6)  # the same upright pose
    head = y_up.skeleton.index("head")
    z = drawn["z"][:, 2]
    assert z[head] > z.min() + 0.8 * np.ptp(drawn["z"], axis=0).max()  # head on top, Z up
    # View > Up axis overrides the detection: told "Y", the Z-up clip lies down
    doc.update_display(up_axis="Y")
    vp.sync()
    assert vp.up == "Y" and "View" in vp.up_reason
    assert np.ptp(vp.raw_positions[:, 2]) < 0.6 * np.ptp(drawn["z"][:, 2])


def test_makehuman_bvh_is_z_up_and_gltf_is_declared_y_up() -> None:
    tpose = codec.load_clip(DATA / "bvh" / "makehuman_tpose.bvh")
    assert up_axis(tpose, "makehuman_tpose.bvh") == ("Z", "detected from the motion")
    fox = DATA / "gltf" / "Fox.glb"
    assert up_axis(codec.load_clip(fox), fox) == ("Y", "declared by the file")
    walk = codec.load_clip(DATA / "bvh" / "cmu_02_02_walk_daz.bvh")
    assert up_axis(walk, override="X") == ("X", "chosen in View > Up axis")


def test_up_axis_menu_goes_through_the_document(window) -> None:
    window.up_actions["Z"].trigger()
    assert window.document.display.up_axis == "Z"
    window.up_actions["auto"].trigger()
    assert window.document.display.up_axis == "auto"


def test_a_free_camera_stays_put_and_the_walk_leaves_it(qtbot) -> None:
    """The check above can fail: a camera left where the clip opened loses a 4 m walk."""
    doc, vp = _viewport(qtbot)
    path = DATA / "bvh" / "cmu_02_02_walk_daz.bvh"
    doc.update_display(camera="free")
    doc.set_clip(codec.load_clip(path), path)
    with pytest.raises(AssertionError, match="leave the view"):
        assert_played_in_view(doc, vp, "free camera")
