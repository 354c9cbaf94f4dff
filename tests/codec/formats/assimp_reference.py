"""An independent FBX reader for the tests: Debian's libassimp5 through ctypes.

Shellscope reads FBX with ufbx (codec.formats.fbx); this module computes the same joints'
world positions with a different library and a different method, so a test comparing the
two catches a mistake in either: assimp evaluates nothing itself here, it hands over its node
tree (with its `$AssimpFbx$` pivot/pre-rotation helper nodes left in place) and per-node
keys, which are interpolated here (lerp, slerp) at the requested times and multiplied down
the tree. Joints are matched by their path of node names from the root, helpers skipped and
mesh nodes excluded, never by name alone (a bone and a mesh may share one).

Only the fields read here are declared; their layout is assimp 5.2's (scene.h, anim.h).
PyPI's pyassimp 5.2.5 is not used: its aiBone lacks the fields assimp 5.2 has, so it reads
garbage (and fails) on any skinned file.
"""

from __future__ import annotations

import ctypes as C
from dataclasses import dataclass

import numpy as np

HELPER = "$AssimpFbx$"


class _String(C.Structure):
    _fields_ = [("length", C.c_uint32), ("data", C.c_char * 1024)]

    def text(self) -> str:
        return self.data[: self.length].decode("utf-8", "replace")


class _Node(C.Structure):
    pass


_Node._fields_ = [
    ("name", _String),
    ("transform", C.c_float * 16),  # row-major 4x4
    ("parent", C.POINTER(_Node)),
    ("num_children", C.c_uint),
    ("children", C.POINTER(C.POINTER(_Node))),
    ("num_meshes", C.c_uint),
    ("meshes", C.POINTER(C.c_uint)),
    ("metadata", C.c_void_p),
]


class _VectorKey(C.Structure):
    _fields_ = [("time", C.c_double), ("value", C.c_float * 3)]


class _QuatKey(C.Structure):
    _fields_ = [("time", C.c_double), ("value", C.c_float * 4)]  # w, x, y, z


class _NodeAnim(C.Structure):
    _fields_ = [
        ("name", _String),
        ("num_position_keys", C.c_uint),
        ("position_keys", C.POINTER(_VectorKey)),
        ("num_rotation_keys", C.c_uint),
        ("rotation_keys", C.POINTER(_QuatKey)),
        ("num_scaling_keys", C.c_uint),
        ("scaling_keys", C.POINTER(_VectorKey)),
        ("pre_state", C.c_uint),
        ("post_state", C.c_uint),
    ]


class _Animation(C.Structure):
    _fields_ = [
        ("name", _String),
        ("duration", C.c_double),
        ("ticks_per_second", C.c_double),
        ("num_channels", C.c_uint),
        ("channels", C.POINTER(C.POINTER(_NodeAnim))),
    ]


class _Scene(C.Structure):
    _fields_ = [
        ("flags", C.c_uint),
        ("root", C.POINTER(_Node)),
        ("num_meshes", C.c_uint),
        ("meshes", C.c_void_p),
        ("num_materials", C.c_uint),
        ("materials", C.c_void_p),
        ("num_animations", C.c_uint),
        ("animations", C.POINTER(C.POINTER(_Animation))),
    ]


def _library() -> C.CDLL:
    lib = C.CDLL("libassimp.so.5")
    lib.aiImportFileFromMemory.restype = C.POINTER(_Scene)
    lib.aiImportFileFromMemory.argtypes = [C.c_char_p, C.c_uint, C.c_uint, C.c_char_p]
    lib.aiReleaseImport.argtypes = [C.POINTER(_Scene)]
    lib.aiGetErrorString.restype = C.c_char_p
    return lib


@dataclass
class _Channel:
    pos: tuple[np.ndarray, np.ndarray]
    rot: tuple[np.ndarray, np.ndarray]
    scl: tuple[np.ndarray, np.ndarray]


def _keys(ptr, count: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    t = np.array([ptr[i].time for i in range(count)])
    v = np.array([list(ptr[i].value) for i in range(count)], dtype=np.float64).reshape(-1, width)
    return t, v


def _lerp(keys: tuple[np.ndarray, np.ndarray], ticks: np.ndarray) -> np.ndarray:
    t, v = keys
    return np.stack([np.interp(ticks, t, v[:, c]) for c in range(v.shape[1])], axis=-1)


def _slerp(keys: tuple[np.ndarray, np.ndarray], ticks: np.ndarray) -> np.ndarray:
    """wxyz quaternions at `ticks`, clamped outside the keys, shorter arc."""
    t, v = keys
    v = v / np.linalg.norm(v, axis=-1, keepdims=True)
    if len(t) == 1:
        return np.broadcast_to(v[0], (len(ticks), 4)).copy()
    i = np.clip(np.searchsorted(t, ticks, side="right") - 1, 0, len(t) - 2)
    u = np.clip((ticks - t[i]) / np.maximum(t[i + 1] - t[i], 1e-300), 0.0, 1.0)
    a, b = v[i], v[i + 1]
    d = np.sum(a * b, axis=-1)
    b = np.where(d[:, None] < 0, -b, b)
    d = np.abs(d)
    th = np.arccos(np.clip(d, -1.0, 1.0))
    small = th < 1e-6
    sin = np.where(small, 1.0, np.sin(th))
    wa = np.where(small, 1 - u, np.sin((1 - u) * th) / sin)
    wb = np.where(small, u, np.sin(u * th) / sin)
    q = wa[:, None] * a + wb[:, None] * b
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def _matrices(pos: np.ndarray, rot_wxyz: np.ndarray, scl: np.ndarray) -> np.ndarray:
    w, x, y, z = (rot_wxyz[:, k] for k in range(4))
    m = np.zeros((len(pos), 4, 4))
    m[:, 0, 0] = 1 - 2 * (y * y + z * z)
    m[:, 0, 1] = 2 * (x * y - z * w)
    m[:, 0, 2] = 2 * (x * z + y * w)
    m[:, 1, 0] = 2 * (x * y + z * w)
    m[:, 1, 1] = 1 - 2 * (x * x + z * z)
    m[:, 1, 2] = 2 * (y * z - x * w)
    m[:, 2, 0] = 2 * (x * z - y * w)
    m[:, 2, 1] = 2 * (y * z + x * w)
    m[:, 2, 2] = 1 - 2 * (x * x + y * y)
    m[:, :3, :3] *= scl[:, None, :]
    m[:, :3, 3] = pos
    m[:, 3, 3] = 1.0
    return m


def animation_names(data: bytes, hint: bytes = b"fbx") -> list[str]:
    """The names of the animations assimp finds in a file's bytes (an FBX file's by default)."""
    return list(_read(data, None, np.zeros(1), hint)[1])


def key_times(data: bytes, animation: str) -> dict[str, np.ndarray]:
    """Each animated node's rotation key times, in seconds, as assimp reads them."""
    lib = _library()
    ptr = lib.aiImportFileFromMemory(data, len(data), 0, b"fbx")
    try:
        scene = ptr.contents
        for i in range(scene.num_animations):
            anim = scene.animations[i].contents
            if anim.name.text() != animation:
                continue
            tps = anim.ticks_per_second or 25.0
            out = {}
            for c in range(anim.num_channels):
                ch = anim.channels[c].contents
                times = _keys(ch.rotation_keys, ch.num_rotation_keys, 4)[0]
                out[ch.name.text()] = times / tps
            return out
        raise KeyError(animation)
    finally:
        lib.aiReleaseImport(ptr)


def world_positions(
    data: bytes, animation: str | None, seconds: np.ndarray, hint: bytes = b"fbx"
) -> dict[str, np.ndarray]:
    """World positions (S, 3), in the file's units, of every non-mesh, non-helper node at
    `seconds` (from the animation's start) of animation `animation` (None: the rest pose),
    keyed by the node's path of names ('Armature/Hips/Spine'). `hint`: the file's format
    as assimp names it (b"fbx", b"bvh", b"glb", b"gltf")."""
    return _read(data, animation, np.asarray(seconds, dtype=np.float64), hint)[0]


def _read(
    data: bytes, animation: str | None, seconds: np.ndarray, hint: bytes = b"fbx"
) -> tuple[dict[str, np.ndarray], list[str]]:
    lib = _library()
    ptr = lib.aiImportFileFromMemory(data, len(data), 0, hint)
    if not ptr:
        raise ValueError(f"assimp cannot read the file: {lib.aiGetErrorString().decode()}")
    try:
        scene = ptr.contents
        anims = [scene.animations[i].contents for i in range(scene.num_animations)]
        names = [a.name.text() for a in anims]
        channels: dict[str, _Channel] = {}
        ticks = seconds
        if animation is not None:
            anim = anims[names.index(animation)]
            ticks = seconds * (anim.ticks_per_second or 25.0)
            for c in range(anim.num_channels):
                ch = anim.channels[c].contents
                channels[ch.name.text()] = _Channel(
                    _keys(ch.position_keys, ch.num_position_keys, 3),
                    _keys(ch.rotation_keys, ch.num_rotation_keys, 4),
                    _keys(ch.scaling_keys, ch.num_scaling_keys, 3),
                )
        out: dict[str, np.ndarray] = {}

        def visit(node: _Node, parent_world: np.ndarray, path: tuple[str, ...]) -> None:
            name = node.name.text()
            ch = channels.get(name)
            if ch is None:
                local = np.array(node.transform, dtype=np.float64).reshape(4, 4)[None]
            else:
                local = _matrices(_lerp(ch.pos, ticks), _slerp(ch.rot, ticks), _lerp(ch.scl, ticks))
            world = parent_world @ local
            if HELPER not in name:
                path = (*path, name)
                if node.num_meshes == 0:
                    out.setdefault("/".join(path[1:]), world[:, :3, 3])
            for k in range(node.num_children):
                visit(node.children[k].contents, world, path)

        visit(scene.root.contents, np.eye(4)[None].repeat(len(ticks), 0), ())
        return out, names
    finally:
        lib.aiReleaseImport(ptr)


def joint_chains(clip) -> list[tuple[str, ...]]:
    """Each joint's names from its root joint down to itself."""
    sk = clip.skeleton
    out: list[tuple[str, ...]] = []
    for j, p in enumerate(sk.parents):
        out.append((*(out[p] if p >= 0 else ()), sk.names[j]))
    return out


def clip_joint_positions_cm(clip, data: bytes, animation: str | None) -> np.ndarray:
    """assimp's world positions (S, J, 3) of `clip`'s joints, in cm.

    An assimp node is a joint's when the names along its path that are joint names are
    exactly the joint's chain of joint names: structure, not a name lookup."""
    seconds = np.arange(clip.num_samples) / clip.sample_rate
    world = world_positions(data, animation, seconds)
    names = set(clip.skeleton.names)
    by_chain: dict[tuple[str, ...], list[str]] = {}
    for path in world:
        parts = path.split("/")
        chain = tuple(p for p in parts if p in names)
        if chain and chain[-1] == parts[-1]:
            by_chain.setdefault(chain, []).append(path)
    out = np.empty((clip.num_samples, clip.num_joints, 3))
    for j, chain in enumerate(joint_chains(clip)):
        found = by_chain.get(chain, [])
        assert len(found) == 1, f"joint {chain[-1]!r}: assimp nodes {found}"
        out[:, j] = world[found[0]]
    return out * clip.units.to_cm
