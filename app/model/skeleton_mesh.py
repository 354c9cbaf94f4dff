"""Qt-free geometry of the 3D view: solid bones, shell spheres and their outlines.

Everything is batched over joints with numpy so one frame costs a handful of array ops, and
the outputs are flat triangle soups (N * 3 vertices) that a single GL mesh draws as is.
Lighting (studio lights fixed to the camera) is baked into per-face colours from normals that
are computed once per skeleton and only turned with the bones, so normals never reach the GPU.
"""

from __future__ import annotations

import numpy as np

Array = np.ndarray

# Y-up clips (BVH, glTF) are shown Z-up like the grid: (x, y, z) -> (x, -z, y).
Y_UP_TO_Z_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])


def bone_pairs(parents: Array, joints: Array | None = None) -> tuple[Array, Array]:
    """(children, parents) of every bone: one per joint that has a parent, both ends among
    `joints` (default: all)."""
    parents = np.asarray(parents)
    keep = parents >= 0
    if joints is not None:
        inside = np.zeros(len(parents), dtype=bool)
        inside[joints] = True
        keep &= inside & inside[np.maximum(parents, 0)]
    child = np.flatnonzero(keep)
    return child, parents[child]


def body_joints(parents: Array, positions: Array) -> Array:
    """Joints worth framing and drawing bones between: all but a root that sits far from its
    only child (the ground-level motion root of many rigs, which would dwarf the body).

    positions (J, 3) of one pose.
    """
    parents = np.asarray(parents)
    keep = np.ones(len(parents), dtype=bool)
    for root in np.flatnonzero(parents < 0):
        kids = np.flatnonzero(parents == root)
        if len(kids) != 1 or len(parents) < 3:
            continue
        rest = np.flatnonzero(parents >= 0)
        extent = float(np.ptp(positions[rest], axis=0).max()) if len(rest) else 0.0
        if np.linalg.norm(positions[kids[0]] - positions[root]) > 0.35 * extent:
            keep[root] = False
    return np.flatnonzero(keep)


def _unit(v: Array, fallback: Array) -> Array:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.where(n > 1e-12, v / np.where(n > 1e-12, n, 1.0), fallback)


class BoneMesh:
    """Octahedral bones (the shape DCC tools use) for a fixed skeleton: 8 faces per bone.

    The cross-section is oriented by the parent's object rotation, so twist is visible.
    `radius_fraction` of the bone length, capped at `max_radius` (clip units). Face normals
    are worked out once, in each bone's own frame (along, across, across) from the rest
    lengths; a frame only turns them with the bone (`normals`), it never recomputes them.
    """

    FACES = 8

    def __init__(
        self,
        parents: Array,
        radius_fraction: float,
        max_radius: float,
        joints: Array | None = None,
        rest: Array | None = None,
    ) -> None:
        self.child, self.parent = bone_pairs(parents, joints)
        self.radius_fraction = radius_fraction
        self.max_radius = max_radius
        self.local_normals = self._local_normals(rest)

    @property
    def num_bones(self) -> int:
        return len(self.child)

    def _radius(self, length: Array) -> Array:
        return np.minimum(length * self.radius_fraction, self.max_radius)

    def _local_normals(self, rest: Array | None) -> Array:
        """(B, 8, 3) unit face normals in (along, u, w) coordinates of each bone's frame."""
        if rest is not None and self.num_bones:
            pos = np.asarray(rest)[:, :, 3]
            length = np.linalg.norm(pos[self.child] - pos[self.parent], axis=1)
        else:
            length = np.ones(self.num_bones)
        length = np.maximum(length, 1e-9)
        r = np.maximum(self._radius(length), 1e-9 * length)
        local = np.stack([np.zeros_like(length), np.zeros_like(length), np.zeros_like(length)], -1)
        ring = np.stack(
            [np.stack([0.2 * length, r * cu, r * cw], -1) for cu, cw in _RING], axis=1
        )  # (B, 4, 3)
        nxt = np.roll(ring, -1, axis=1)
        head = np.broadcast_to(local[:, None], ring.shape)
        tail = np.broadcast_to(np.stack([length, 0 * length, 0 * length], -1)[:, None], ring.shape)
        tris = np.concatenate([np.stack([head, nxt, ring], 2), np.stack([tail, ring, nxt], 2)], 1)
        n = np.cross(tris[:, :, 1] - tris[:, :, 0], tris[:, :, 2] - tris[:, :, 0])
        return n / np.maximum(np.linalg.norm(n, axis=-1, keepdims=True), 1e-12)

    def frames(self, matrices: Array) -> tuple[Array, Array, Array, Array, Array]:
        """Head (B, 3), bone vector v (B, 3) and the orthonormal frame d, u, w (B, 3) each."""
        pos = matrices[:, :, 3]
        a, b = pos[self.parent], pos[self.child]
        v = b - a
        d = _unit(v, np.array([0.0, 0.0, 1.0]))
        axes = np.swapaxes(matrices[self.parent, :, :3], 1, 2)  # (B, 3 columns, 3)
        axes = _unit(axes, np.eye(3))
        pick = np.argmin(np.abs(np.einsum("bkc,bc->bk", axes, d)), axis=1)
        ref = axes[np.arange(len(pick)), pick]
        u = _unit(ref - np.sum(ref * d, axis=1, keepdims=True) * d, np.array([1.0, 0.0, 0.0]))
        w = np.cross(d, u)
        return a, v, d, u, w

    def posed(self, matrices: Array) -> tuple[Array, Array]:
        """Vertices (B * 8 * 3, 3) float32 of outward-facing counter-clockwise triangles, and
        face normals (B * 8, 3): the rest normals turned into each bone's current frame (no
        cross products)."""
        a, v, d, u, w = self.frames(matrices)
        length = np.linalg.norm(v, axis=1)
        r = self._radius(length)[:, None, None]
        c = a + v * 0.2
        cu, cw = np.array(_RING).T[:, None, :, None]  # (1, 4, 1) each
        ring = c[:, None] + r * (cu * u[:, None] + cw * w[:, None])  # (B, 4, 3)
        nxt = np.roll(ring, -1, axis=1)
        head = np.broadcast_to(a[:, None], ring.shape)
        tail = np.broadcast_to((a + v)[:, None], ring.shape)
        # around d the ring turns u -> w (counter-clockwise seen from the tail)
        near = np.stack([head, nxt, ring], axis=2)  # (B, 4, 3 verts, 3)
        far = np.stack([tail, ring, nxt], axis=2)
        tris = np.concatenate([near, far], axis=1)  # (B, 8, 3, 3)
        n = self.local_normals
        normals = n[..., 0:1] * d[:, None] + n[..., 1:2] * u[:, None] + n[..., 2:3] * w[:, None]
        return tris.reshape(-1, 3).astype(np.float32), normals.reshape(-1, 3)

    def triangles(self, matrices: Array) -> Array:
        """(B * 8 * 3, 3) float32 vertices, outward-facing counter-clockwise triangles."""
        return self.posed(matrices)[0]

    def normals(self, matrices: Array) -> Array:
        """(B * 8, 3) face normals of the bones posed by `matrices`."""
        return self.posed(matrices)[1]

    def colors(
        self, normals: Array, bone_rgba: Array, view_rotation: Array, ghost: bool = False
    ) -> Array:
        """(B * 24, 4) float32 lit flat colours from per-bone RGBA (B, 4) and face normals.

        `ghost` makes faces seen edge-on more opaque than faces seen head-on, so a translucent
        bone reads as an outline and whatever is inside keeps its own colour.
        """
        face_rgba = np.repeat(np.asarray(bone_rgba, dtype=np.float64), self.FACES, axis=0)
        lit = shade(face_rgba, normals, view_rotation, ghost)
        return np.repeat(lit.astype(np.float32), 3, axis=0)


_RING = ((1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0))  # (u, w) of the 4 ring corners

# studio lights fixed to the camera (view space: x right, y up, +z towards the eye), the way
# DCC viewports light their solid mode: a key from the upper left, a soft fill from the right
KEY = np.array([-0.45, 0.55, 0.70]) / np.linalg.norm([-0.45, 0.55, 0.70])
FILL = np.array([0.70, -0.15, 0.55]) / np.linalg.norm([0.70, -0.15, 0.55])
HALF = (KEY + np.array([0.0, 0.0, 1.0])) / np.linalg.norm(KEY + np.array([0.0, 0.0, 1.0]))
AMBIENT, KEY_LIGHT, FILL_LIGHT, SPECULAR, SHININESS, RIM = 0.30, 0.62, 0.22, 0.28, 28.0, 0.22


def shade(rgba: Array, normals: Array, view_rotation: Array, ghost: bool = False) -> Array:
    """(F, 4) lit colours of faces with base colours (F, 4) and unit world normals (F, 3).

    view_rotation (3, 3) turns world directions into view space. Lambert key and fill,
    a Blinn highlight and a rim that brightens silhouettes, so form reads on any background.
    """
    n = np.asarray(normals, dtype=np.float64) @ np.asarray(view_rotation, dtype=np.float64).T
    facing = np.abs(n[:, 2])
    diffuse = KEY_LIGHT * np.clip(n @ KEY, 0.0, None) + FILL_LIGHT * np.clip(n @ FILL, 0.0, None)
    spec = SPECULAR * np.clip(n @ HALF, 0.0, None) ** SHININESS
    rim = RIM * (1.0 - facing) ** 2
    out = np.array(rgba, dtype=np.float64)
    out[:, :3] = out[:, :3] * (AMBIENT + diffuse + rim)[:, None] + spec[:, None]
    np.clip(out[:, :3], 0.0, 1.0, out=out[:, :3])
    if ghost:
        out[:, 3] *= np.clip(0.35 + 1.5 * (1.0 - facing), 0.0, 2.0)
        np.clip(out[:, 3], 0.0, 1.0, out=out[:, 3])
    return out


def magnify(raw: Array, lossy: Array, k: float) -> Array:
    """raw + k (lossy - raw) for matrices (..., 3, 4): the lossy pose with its error made k
    times larger, so a 0.01 cm error shows at k = 1000 as 10 cm."""
    return raw + float(k) * (lossy - raw)


def unit_sphere(segments: int = 12, rings: int = 8) -> Array:
    """(T, 3, 3) triangles of a UV sphere of radius 1, outward counter-clockwise."""
    theta = np.linspace(0.0, np.pi, rings + 1)
    phi = np.linspace(0.0, 2.0 * np.pi, segments + 1)
    st, ct = np.sin(theta), np.cos(theta)
    grid = np.stack(
        [
            st[:, None] * np.cos(phi)[None],
            st[:, None] * np.sin(phi)[None],
            np.repeat(ct[:, None], segments + 1, 1),
        ],
        axis=-1,
    )  # (rings + 1, segments + 1, 3), from the north pole down
    tris = []
    for i in range(rings):
        for j in range(segments):
            p00, p01 = grid[i, j], grid[i, j + 1]
            p10, p11 = grid[i + 1, j], grid[i + 1, j + 1]
            if i > 0:
                tris.append((p00, p10, p01))
            if i < rings - 1:
                tris.append((p01, p10, p11))
    return np.array(tris, dtype=np.float64)


class ShellMesh:
    """Translucent spheres as one triangle soup, faces sorted back to front every frame.

    Only faces turned towards the eye are emitted (each sphere shows its near half once), and
    the faces of all spheres are sorted together so nested and overlapping shells blend in
    depth order.
    """

    def __init__(self, segments: int = 12, rings: int = 8) -> None:
        self.template = unit_sphere(segments, rings).astype(np.float32)  # (T, 3, 3)
        centroid = self.template.mean(axis=1)
        self.face_normals = centroid / np.linalg.norm(centroid, axis=1, keepdims=True)
        self.face_centres = centroid

    @property
    def faces_per_sphere(self) -> int:
        return len(self.template)

    def build(
        self, centres: Array, radii: Array, rgba: Array, eye: Array, max_facing: float = 1.0
    ) -> tuple[Array, Array]:
        """Vertices (F*3, 3) and colours (F*3, 4) float32 of the spheres' near faces.

        The alpha of `rgba` (N, 4) rises towards the silhouette so each sphere reads as a
        ball rather than a flat disc. `max_facing` < 1 also drops the faces seen almost
        head-on (cosine above it): with many faint shells those add next to no colour but
        most of the fill cost of a software rasteriser.
        """
        if len(centres) == 0:
            return np.zeros((0, 3), np.float32), np.zeros((0, 4), np.float32)
        c = np.asarray(centres, dtype=np.float32)
        r = np.asarray(radii, dtype=np.float32)
        eye32 = np.asarray(eye, dtype=np.float32)
        t = self.faces_per_sphere
        to_eye = eye32 - (c[:, None, :] + r[:, None, None] * self.face_centres[None])  # (N, T, 3)
        along = np.einsum("ntk,tk->nt", to_eye, self.face_normals)
        dist2 = np.einsum("ntk,ntk->nt", to_eye, to_eye)
        front = along > 0
        if max_facing < 1.0:
            front &= along * along < (max_facing * max_facing) * dist2
        sel = np.flatnonzero(front)
        order = sel[np.argsort(-dist2.reshape(-1)[sel])]  # far first
        n_idx, t_idx = np.divmod(order, t)
        normals = self.template[t_idx]  # unit sphere: a vertex is its own normal
        verts = c[n_idx, None, :] + r[n_idx, None, None] * normals  # (F, 3, 3)
        look = to_eye.reshape(-1, 3)[order]
        look /= np.maximum(np.linalg.norm(look, axis=1, keepdims=True), 1e-12)
        facing = np.abs(np.einsum("fvk,fk->fv", normals, look)).reshape(-1)  # (F*3,)
        cols = np.repeat(np.asarray(rgba, dtype=np.float32)[n_idx], 3, axis=0)
        cols[:, 3] *= 0.55 + 0.9 * (1.0 - facing)
        cols[:, :3] *= (0.75 + 0.25 * facing)[:, None]
        return verts.reshape(-1, 3), cols


def ring_lines(centres: Array, radii: Array, segments: int = 32) -> Array:
    """(N * 3 * segments * 2, 3) line-segment vertices of three great circles per sphere
    (the joint's own shell: the three shell points lie on them)."""
    n = len(centres)
    if n == 0:
        return np.zeros((0, 3), np.float32)
    a = np.linspace(0.0, 2.0 * np.pi, segments + 1)
    cs, sn = np.cos(a), np.sin(a)
    z = np.zeros_like(a)
    circles = np.stack(
        [np.stack([cs, sn, z], -1), np.stack([cs, z, sn], -1), np.stack([z, cs, sn], -1)]
    )  # (3, segments + 1, 3)
    seg = np.stack([circles[:, :-1], circles[:, 1:]], axis=2).reshape(-1, 3)  # (3*seg*2, 3)
    out = centres[:, None, :] + np.asarray(radii)[:, None, None] * seg[None]
    return out.reshape(-1, 3).astype(np.float32)


def silhouette_circles(
    centres: Array, radii: Array, eye: Array, ortho_dir: Array | None = None, segments: int = 48
) -> Array:
    """(N * segments * 2, 3) line-segment vertices of each sphere's outline as seen from `eye`.

    The outline of a sphere (centre c, radius r) seen from a point at distance D is the circle
    where the tangent cone touches it: centred at c + r^2/D^2 (eye - c), radius r sqrt(1 - r^2/D^2),
    in the plane facing the eye. With `ortho_dir` (the view direction of an orthographic
    camera) it is the great circle facing that direction. An eye inside a sphere sees none.
    """
    c = np.asarray(centres, dtype=np.float64).reshape(-1, 3)
    r = np.asarray(radii, dtype=np.float64).reshape(-1)
    if len(c) == 0:
        return np.zeros((0, 3), np.float32)
    if ortho_dir is not None:
        axis = np.broadcast_to(-np.asarray(ortho_dir, dtype=np.float64), c.shape)
        axis = axis / np.linalg.norm(axis, axis=1, keepdims=True)
        centre, radius, keep = c, r, np.ones(len(c), dtype=bool)
    else:
        to_eye = np.asarray(eye, dtype=np.float64) - c
        dist = np.linalg.norm(to_eye, axis=1)
        keep = dist > r * 1.0001
        dist = np.where(keep, dist, 1.0)
        axis = to_eye / dist[:, None]
        q = np.where(keep, (r / dist) ** 2, 0.0)
        centre = c + to_eye * q[:, None]
        radius = r * np.sqrt(np.clip(1.0 - q, 0.0, 1.0))
    centre, radius, axis = centre[keep], radius[keep], axis[keep]
    if len(centre) == 0:
        return np.zeros((0, 3), np.float32)
    e1 = _unit(np.cross(axis, np.array([0.0, 0.0, 1.0])), np.array([1.0, 0.0, 0.0]))
    e1 = np.where(np.abs(axis[:, 2:3]) > 0.999, np.array([1.0, 0.0, 0.0]), e1)
    e2 = np.cross(axis, e1)
    a = np.linspace(0.0, 2.0 * np.pi, segments + 1)
    ring = np.cos(a)[None, :, None] * e1[:, None] + np.sin(a)[None, :, None] * e2[:, None]
    pts = centre[:, None] + radius[:, None, None] * ring  # (N, segments + 1, 3)
    seg = np.stack([pts[:, :-1], pts[:, 1:]], axis=2)  # (N, segments, 2, 3)
    return seg.reshape(-1, 3).astype(np.float32)
