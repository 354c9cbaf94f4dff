"""Where the 3D view's camera looks, so the character stays in view through the whole clip.

Qt-free geometry in display space (Z up). Two ways to keep a clip in view:

- **follow root**: the camera's target rides along with the body's root (the hips) over the
  ground, at a fixed height; the distance fits the smallest sphere around that moving target
  that holds every joint at every sample. A walk across a room stays the same size on screen.
- **whole clip**: one fixed target and sphere holding every joint at every sample.

A sphere fits whatever the camera's orientation, so orbiting never loses the character, and
front / side / top views (orthographic or not) need no re-framing.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import radians, sin, tan

import numpy as np

Array = np.ndarray

MARGIN = 1.06  # the sphere is inflated by this much: poses between samples, line widths
MODES = ("follow", "clip", "selection", "free")
MODE_LABELS = {
    "follow": "Follow root",
    "clip": "Whole clip",
    "selection": "Follow selection",
    "free": "Free",
}

# named views: (azimuth, elevation) in degrees, pyqtgraph's convention (azimuth 0 looks from
# +X, -90 from -Y); characters face -Y in display space after the up-axis turn (+Z in Y-up
# files, the CMU / Maya / glTF convention), so "front" looks at their face
VIEWS = {
    "front": (-90.0, 0.0),
    "back": (90.0, 0.0),
    "right": (0.0, 0.0),
    "left": (180.0, 0.0),
    "top": (-90.0, 90.0),
    "bottom": (-90.0, -90.0),
    "perspective": (-60.0, 14.0),
}
ORTHO_VIEWS = ("front", "back", "right", "left", "top", "bottom")


@dataclass(frozen=True)
class Framing:
    """Targets (S, 3) per sample (all equal for a fixed camera) and the radius that keeps
    every joint of every sample inside a sphere around its sample's target."""

    targets: Array
    radius: float

    def target_at(self, t_samples: float) -> Array:
        """(3,) target at a fractional sample position (linear between samples)."""
        n = len(self.targets)
        x = min(max(float(t_samples), 0.0), n - 1.0)
        k = min(int(np.floor(x)), n - 1)
        a = x - k
        if k + 1 >= n:
            return self.targets[k].copy()
        return self.targets[k] * (1.0 - a) + self.targets[k + 1] * a


def body_root(parents: Array, body: Array) -> int:
    """The body joint nearest the top of the hierarchy (the hips of a biped)."""
    parents = np.asarray(parents)
    depth = np.zeros(len(parents), dtype=np.int64)
    for j, p in enumerate(parents):
        if p >= 0:
            depth[j] = depth[p] + 1
    body = np.asarray(body)
    return int(body[np.argmin(depth[body])])


def follow_framing(positions: Array, root: int) -> Framing:
    """Follow the root over the ground. positions (S, J, 3) display space (Z up)."""
    pos = np.asarray(positions, dtype=np.float64)
    z = pos[..., 2]
    height = 0.5 * (float(z.min()) + float(z.max()))
    targets = np.empty((len(pos), 3))
    targets[:, :2] = pos[:, root, :2]
    targets[:, 2] = height
    radius = float(np.linalg.norm(pos - targets[:, None, :], axis=-1).max())
    return Framing(targets, max(radius, 1e-3) * MARGIN)


def clip_framing(positions: Array) -> Framing:
    """One fixed target: the centre of the box around every joint at every sample."""
    pts = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    centre = 0.5 * (pts.min(axis=0) + pts.max(axis=0))
    radius = float(np.linalg.norm(pts - centre, axis=1).max())
    return Framing(np.broadcast_to(centre, (len(positions), 3)).copy(), max(radius, 1e-3) * MARGIN)


def fit_distance(radius: float, fov_deg: float, width: float, height: float, ortho: bool) -> float:
    """Camera distance at which a sphere of `radius` fills the view's shorter side.

    pyqtgraph's fov is horizontal; the vertical half-angle follows from the aspect ratio. In
    the orthographic view the half-width seen is distance * tan(fov / 2).
    """
    half_w = tan(radians(fov_deg) / 2.0)
    aspect = max(height, 1.0) / max(width, 1.0)
    half = min(half_w, half_w * aspect)  # tangent of the narrower half-angle
    if ortho:
        return radius / half
    return radius / sin(np.arctan(half))
