"""An additive ACL SJSON clip in the window: the skeleton drawn is the pose a game sees (the
additive applied to its base, computed by hand from the file's own tracks), and the base is
named in the 3D view and the Stats sheet."""

from __future__ import annotations

import numpy as np

from codec.formats import sjson
from tests.codec.codecs.acl_style.test_bind_modes import ADDITIVE, _matrix, hand_world


def distances(points: np.ndarray) -> np.ndarray:
    """(J, J) distances between joints: the same in any frame the view draws in."""
    return np.linalg.norm(points[:, None] - points[None], axis=-1)


def test_an_additive_clip_shows_its_applied_pose_and_names_its_base(window, ui) -> None:
    ui.open(window, ADDITIVE)
    doc = sjson.parse(ADDITIVE.read_text())
    rate = float(doc["clip"]["sample_rate"])
    additive, world = hand_world(doc, "relative")
    k = 12
    window.document.set_time(k / rate)
    ui.draw(window.viewport)
    drawn = distances(np.asarray(window.viewport.raw_positions, dtype=float))
    applied = distances(world(additive)[k, :, :3, 3])
    np.testing.assert_allclose(drawn, applied, atol=1e-3)
    # the additive's own values are another pose: the check tells the two apart
    names = [b["name"] for b in doc["bones"]]
    local = _matrix(*(a[k] for a in additive))
    alone = local.copy()
    for j, b in enumerate(doc["bones"]):
        if b["parent"]:
            alone[j] = alone[names.index(b["parent"])] @ local[j]
    assert np.abs(distances(alone[:, :3, 3]) - applied).max() > 1.0
    base = f"applied to its base '{doc['clip']['additive_base_name']}'"
    assert any(base in line for line in window.viewport.clip_notes())
    row = window.panels["StatsPanel"].values["bind_mode"].text()
    assert f"played on its base '{doc['clip']['additive_base_name']}'" in row
