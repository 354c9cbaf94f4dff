"""Small hand-made hostile clip files, one builder per attack, shared by the codec, CLI and
window tests.

Each builder writes its file(s) into a folder and returns the path to open. The files are
tiny (bytes to a few hundred KB) and each one asks a reader for something it must refuse
before it allocates or computes it: a buffer read from a device, a key hours away from the
others, a count with no data behind it, a number float32 cannot hold. `CASES` maps a case
name to (builder, the words the one-line message must contain).
"""

from __future__ import annotations

import base64
import json
import os
import struct
import zlib
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np

FLOAT = 5126


def _pad4(b: bytes, fill: bytes = b"\0") -> bytes:
    return b + fill * (-len(b) % 4)


def gltf_doc(
    num_joints: int = 2,
    times: list[float] | None = None,
    chain: bool = True,
    uri: str | None = None,
) -> tuple[dict, bytes]:
    """A minimal valid glTF (JSON dict, binary buffer): a skin of `num_joints` nodes (a chain
    or all roots), one animation rotating joint 0 with keys at `times`. With `uri` the buffer
    is external (the caller writes it); otherwise it is a base64 data URI."""
    times = [0.0, 1.0 / 30.0, 2.0 / 30.0] if times is None else times
    k = len(times)
    t = np.asarray(times, dtype="<f4")
    q = np.tile(np.array([0, 0, 0, 1], dtype="<f4"), (k, 1))
    blob = _pad4(t.tobytes()) + q.tobytes()
    nodes: list[dict] = [
        {"name": f"j{i}", "translation": [0.0, 0.1, 0.0]} for i in range(num_joints)
    ]
    if chain:
        for i in range(num_joints - 1):
            nodes[i]["children"] = [i + 1]
    doc = {
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0] if chain else list(range(num_joints))}],
        "nodes": nodes,
        "skins": [{"joints": list(range(num_joints))}],
        "buffers": [
            {
                "byteLength": len(blob),
                "uri": uri
                if uri is not None
                else "data:application/octet-stream;base64," + base64.b64encode(blob).decode(),
            }
        ],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 4 * k},
            {"buffer": 0, "byteOffset": len(_pad4(t.tobytes())), "byteLength": 16 * k},
        ],
        "accessors": [
            {
                "bufferView": 0,
                "componentType": FLOAT,
                "count": k,
                "type": "SCALAR",
                "min": [float(t.min())],
                "max": [float(t.max())],
            },
            {"bufferView": 1, "componentType": FLOAT, "count": k, "type": "VEC4"},
        ],
        "animations": [
            {
                "name": "anim",
                "samplers": [{"input": 0, "output": 1, "interpolation": "LINEAR"}],
                "channels": [{"sampler": 0, "target": {"node": 0, "path": "rotation"}}],
            }
        ],
    }
    return doc, blob


def _write_json(folder: Path, name: str, doc: dict) -> Path:
    path = folder / name
    path.write_text(json.dumps(doc))
    return path


# ------------------------------------------------------------------ memory: glTF


def gltf_uri_absolute(folder: Path) -> Path:
    """The buffer is `/dev/zero`: read without a bound, it never ends."""
    doc, _ = gltf_doc(uri="/dev/zero")
    return _write_json(folder, "dev_zero.gltf", doc)


def gltf_uri_fifo(folder: Path) -> Path:
    """The buffer is a relative uri naming a FIFO beside the file: a read would block forever."""
    doc, _ = gltf_doc(uri="pipe.bin")
    os.mkfifo(folder / "pipe.bin")
    return _write_json(folder, "fifo.gltf", doc)


def gltf_uri_symlink_device(folder: Path) -> Path:
    """A relative uri that is a symbolic link to /dev/zero."""
    doc, _ = gltf_doc(uri="zero.bin")
    os.symlink("/dev/zero", folder / "zero.bin")
    return _write_json(folder, "link.gltf", doc)


def gltf_uri_huge_file(folder: Path) -> Path:
    """A relative uri to a 64 MiB sparse file while byteLength says 60 bytes: read at most
    the declared length."""
    doc, blob = gltf_doc(uri="big.bin")
    with open(folder / "big.bin", "wb") as f:
        f.write(blob)
        f.truncate(64 << 20)
    return _write_json(folder, "big_buffer.gltf", doc)


def gltf_far_key(folder: Path) -> Path:
    """Keys every 1/30 s, and one more at t = 333,333 s: ten million samples on one grid."""
    doc, _ = gltf_doc(num_joints=1, times=[0.0, 1.0 / 30.0, 333_333.0])
    return _write_json(folder, "far_key.gltf", doc)


def gltf_unbacked_accessor(folder: Path) -> Path:
    """An accessor without a bufferView (all zeros by the spec) claiming 2^24 elements."""
    doc, _ = gltf_doc()
    doc["accessors"][0] = {"componentType": FLOAT, "count": 1 << 24, "type": "SCALAR"}
    doc["accessors"][1] = {"componentType": FLOAT, "count": 1 << 24, "type": "VEC4"}
    return _write_json(folder, "unbacked.gltf", doc)


def gltf_many_joints_resampled(folder: Path) -> Path:
    """2,000 joints (a few bytes each) and keys over 20 minutes, so resampling at 30 Hz would
    make 36,000 samples x 2,000 joints."""
    doc, _ = gltf_doc(num_joints=2000, chain=False, times=[0.0, 0.5, 1200.0])
    return _write_json(folder, "many_joints.gltf", doc)


def gltf_chain(folder: Path, num_joints: int) -> Path:
    """A valid glTF whose skin is a chain of `num_joints` nodes (for load time)."""
    doc, _ = gltf_doc(num_joints=num_joints)
    return _write_json(folder, f"chain_{num_joints}.gltf", doc)


def gltf_skinned_mesh(folder: Path, vertices: int, times: list[float]) -> Path:
    """One joint, a triangle mesh of `vertices` vertices bound to it, keys at `times`; the
    buffer (32 bytes a vertex) beside the .gltf."""
    doc, blob = gltf_doc(num_joints=1, times=times, uri="mesh.bin")
    rng = np.random.default_rng(0)
    pos = (rng.normal(size=(vertices, 3)) * 0.1).astype("<f4")
    weights = np.zeros((vertices, 4), dtype="<f4")
    weights[:, 0] = 1.0
    parts = [pos.tobytes(), np.zeros((vertices, 4), dtype="u1").tobytes(), weights.tobytes()]
    first_view, first_acc = len(doc["bufferViews"]), len(doc["accessors"])
    for p in parts:
        doc["bufferViews"].append({"buffer": 0, "byteOffset": len(blob), "byteLength": len(p)})
        blob += p
    doc["accessors"] += [
        {
            "bufferView": first_view,
            "componentType": FLOAT,
            "count": vertices,
            "type": "VEC3",
            "min": pos.min(0).tolist(),
            "max": pos.max(0).tolist(),
        },
        {"bufferView": first_view + 1, "componentType": 5121, "count": vertices, "type": "VEC4"},
        {"bufferView": first_view + 2, "componentType": FLOAT, "count": vertices, "type": "VEC4"},
    ]
    attributes = {"POSITION": first_acc, "JOINTS_0": first_acc + 1, "WEIGHTS_0": first_acc + 2}
    doc["meshes"] = [{"primitives": [{"attributes": attributes, "mode": 4}]}]
    doc["nodes"].append({"mesh": 0, "skin": 0})
    doc["scenes"][0]["nodes"].append(len(doc["nodes"]) - 1)
    doc["buffers"][0]["byteLength"] = len(blob)
    (folder / "mesh.bin").write_bytes(blob)
    return _write_json(folder, "mesh.gltf", doc)


# ------------------------------------------------------------------ memory: .ssc, SJSON


def ssc_many_samples(folder: Path) -> Path:
    """A 1.7 KB .ssc with a valid CRC: 1 joint, 256 segments of 65,535 samples, no data."""
    from codec.codecs.acl_style import layout as f

    ng, size = 256, 65535
    kinds = b"\x00"  # one joint, every sub-track default
    table_at = len(kinds)
    first = table_at + f.SEGMENT_ENTRY.size * ng
    table = b"".join(f.SEGMENT_ENTRY.pack(size, first) for _ in range(ng))
    body = kinds + table
    name = b"root"
    meta = struct.pack("<H", len(name)) + name + struct.pack("<i", -1)
    meta += np.array([0, 0, 0, 1, 0, 0, 0, 1, 1, 1], dtype="<f8").tobytes()
    meta += struct.pack("<dd", 0.01, 3.0)
    return _ssc(folder / "many_samples.ssc", 1, ng * size, ng, body, meta)


def _ssc(path: Path, nj: int, ns: int, ng: int, body: bytes, meta: bytes) -> Path:
    """An acl-style payload of these counts and animation data in a container, CRC valid."""
    from codec.codecs import container
    from codec.codecs.acl_style import layout as f

    payload = f.HEADER.pack(nj, ns, 30.0, ng) + body
    frame = container.write(0, payload)
    data = bytearray(frame.data + meta)
    flags = container.FLAG_METADATA if meta else 0
    struct.pack_into("<HII", data, 6, flags, 0, len(data))
    struct.pack_into("<I", data, 8, zlib.crc32(bytes(data[12:])))
    path.write_bytes(bytes(data))
    return path


def ssc_metadata_offset(data: bytes) -> int:
    """Where a .ssc file's metadata block starts (after the container's payload)."""
    from codec.codecs import container

    return container.read(data).compressed_size


def ssc_with_metadata_value(folder: Path, field: int, value: float, name: str) -> Path:
    """A real .ssc (a 3-joint chain) whose metadata f64 number `field` of joint 1 (0-9 bind
    pose, 10 precision, 11 shell distance) is replaced by `value`, CRC fixed."""
    import codec
    from tests.codec.helpers import chain_clip

    data = bytearray(codec.compress(chain_clip(), codec.CompressionSettings()).data)
    pos = ssc_metadata_offset(bytes(data))
    for j in range(2):  # skip joint 0 and land on joint 1's numbers
        (n,) = struct.unpack_from("<H", data, pos)
        pos += 2 + n + 4 + (80 + 16 if j == 0 else 0)
    struct.pack_into("<d", data, pos + 8 * field, value)
    struct.pack_into("<I", data, 8, zlib.crc32(bytes(data[12:])))
    path = folder / name
    path.write_bytes(bytes(data))
    return path


def ssc_bind_scale_huge(folder: Path) -> Path:
    return ssc_with_metadata_value(folder, 7, 1e308, "bind_scale.ssc")


def ssc_bind_scale_float32_max(folder: Path) -> Path:
    """3e38 fits float32, but a skeleton that big cannot be measured in float32 either."""
    return ssc_with_metadata_value(folder, 7, 3e38, "bind_scale_f32.ssc")


def ssc_shell_huge(folder: Path) -> Path:
    return ssc_with_metadata_value(folder, 11, 1e308, "shell.ssc")


def sjson_many_bones(folder: Path, bones: int = 10_000, rows: int = 3_000) -> Path:
    """10,000 bones and one 3,000-row track: the other bones would be filled, 30M transforms."""
    out = [
        "version = 5",
        f'clip = {{ name = "m" num_samples = {rows} sample_rate = 30 }}',
        "bones = [",
    ]
    out += [f'{{ name = "b{i}" parent = "" }}' for i in range(bones)]
    out += ["]", "tracks = [", '{ name = "b0" rotations = [']
    out += ["[ 0 0 0 1 ]"] * rows
    out += ["] }", "]"]
    path = folder / "many_bones.acl.sjson"
    path.write_text("\n".join(out) + "\n")
    return path


SJSON_TWO_BONES = """version = 5
clip = {{ name = "t" num_samples = 2 sample_rate = {rate} }}
bones = [
  {{ name = "r" parent = "" vertex_distance = {distance} bind_translation = [ 0 {y} 0 ] }}
  {{ name = "c" parent = "r" }}
]
tracks = [
  {{ name = "r" rotations = [ [ 0 0 0 1 ] [ 0 0 0 1 ] ] }}
  {{ name = "c" translations = [ [ 1 0 0 ] [ {x} 0 0 ] ] }}
]
"""


def sjson_text(folder: Path, name: str, **values: object) -> Path:
    fields = {"rate": 30, "distance": 3.0, "y": 1.0, "x": 2.0, **values}
    path = folder / name
    path.write_text(SJSON_TWO_BONES.format(**fields))
    return path


def sjson_vertex_distance_huge(folder: Path) -> Path:
    return sjson_text(folder, "distance.acl.sjson", distance="1e308")


def sjson_value_huge(folder: Path) -> Path:
    return sjson_text(folder, "value.acl.sjson", x="1e39")


def sjson_rate_huge(folder: Path) -> Path:
    return sjson_text(folder, "rate.acl.sjson", rate="1e308")


# ------------------------------------------------------------------ numbers: BVH

BVH = """HIERARCHY
ROOT hips
{{
\tOFFSET 0 0 0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT spine
\t{{
\t\tOFFSET 0 {offset} 0
\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\tEnd Site
\t\t{{
\t\t\tOFFSET 0 5 0
\t\t}}
\t}}
}}
MOTION
Frames: 2
Frame Time: {frame_time}
0 90 0 0 0 0 10 0 0
1 90 {value} 0 0 0 20 0 0
"""


def bvh_text(folder: Path, name: str, **values: object) -> Path:
    fields = {"offset": 10, "frame_time": 0.0333333, "value": 0, **values}
    path = folder / name
    path.write_text(BVH.format(**fields))
    return path


def bvh_value_beyond_float32(folder: Path) -> Path:
    return bvh_text(folder, "value_1e39.bvh", value="1e39")


def bvh_offset_beyond_float32(folder: Path) -> Path:
    return bvh_text(folder, "offset_1e39.bvh", offset="1e39")


def bvh_frame_time_huge(folder: Path) -> Path:
    return bvh_text(folder, "frame_time.bvh", frame_time="1e308")


def bvh_frame_time_tiny(folder: Path) -> Path:
    """A positive Frame Time so small the rate is not a finite number."""
    return bvh_text(folder, "frame_time_tiny.bvh", frame_time="1e-320")


def bvh_one_joint(folder: Path) -> Path:
    """A valid BVH of one joint and no End Site: a skeleton of zero size."""
    path = folder / "one_joint.bvh"
    path.write_text(
        "HIERARCHY\nROOT hips\n{\n\tOFFSET 0 0 0\n\tCHANNELS 3 Zrotation Xrotation Yrotation\n}\n"
        "MOTION\nFrames: 2\nFrame Time: 0.0333333\n0 0 0\n10 0 0\n"
    )
    return path


def bvh_many_rows_compressed(folder: Path) -> Path:
    """A 5 KB .bvh.xz that decompresses to ~50 MB of rows of zeros."""
    path = folder / "bomb.bvh.xz"
    path.write_bytes(_bvh_bomb_bytes())
    return path


@cache
def _bvh_bomb_bytes() -> bytes:
    """Made once per process: xz -9 over 50 MB takes seconds, and three tests build it."""
    import lzma

    head = BVH.format(offset=10, frame_time=0.01, value=0).split("MOTION")[0]
    rows = "0 0 0 0 0 0 0 0 0\n" * 2_800_000
    text = head + f"MOTION\nFrames: 2800000\nFrame Time: 0.01\n{rows}"
    return lzma.compress(text.encode(), preset=9)


def bvh_many_end_sites(folder: Path) -> Path:
    """One animated channel and 2,000 End Sites: 100,000 rows of "0" (about 280 KB) would be
    200 million transforms."""
    sites = "".join("\tEnd Site\n\t{\n\t\tOFFSET 0 1 0\n\t}\n" for _ in range(2000))
    text = (
        f"HIERARCHY\nROOT hips\n{{\n\tOFFSET 0 0 0\n\tCHANNELS 1 Zrotation\n{sites}}}\n"
        "MOTION\nFrames: 100000\nFrame Time: 0.01\n" + "0\n" * 100_000
    )
    path = folder / "end_sites.bvh"
    path.write_text(text)
    return path


# ------------------------------------------------------------------ FBX, USD

DATA = Path(__file__).resolve().parents[2] / "data"


def fbx_long_stack(folder: Path) -> Path:
    """CMU 07_01 (a real binary FBX) with its animation stack's LocalStop moved to 2,000 s:
    240,000 frames at 120 Hz of 40 nodes, each one evaluated in Python."""
    import lzma
    import re

    data = bytearray(lzma.decompress((DATA / "fbx" / "cmu_07_01_blender.fbx.xz").read_bytes()))
    stop = re.compile(rb"LocalStopS\x05\0\0\0KTimeS\x04\0\0\0TimeS\0\0\0\0L")
    for m in stop.finditer(bytes(data)):
        struct.pack_into("<q", data, m.end(), 46_186_158_000 * 2000)  # FBX ticks per second
    path = folder / "long_stack.fbx"
    path.write_bytes(bytes(data))
    return path


USDA = """#usda 1.0
(
    timeCodesPerSecond = 24
    {sublayers}
)

def SkelRoot "Root"
{{
    def Skeleton "Skel" (
        prepend apiSchemas = ["SkelBindingAPI"]
    )
    {{
        uniform token[] joints = ["a", "a/b"]
        uniform matrix4d[] restTransforms = [((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1)), ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 1, 0, 1))]
        rel skel:animationSource = </Root/Skel/Anim>

        def SkelAnimation "Anim"
        {{
            uniform token[] joints = ["a", "a/b"]
            quatf[] rotations.timeSamples = {{
                0: [(1, 0, 0, 0), (1, 0, 0, 0)],
                1: [(1, 0, 0, 0), (1, 0, 0, 0)],
                {last}: [(1, 0, 0, 0), (1, 0, 0, 0)],
            }}
        }}
    }}
}}
"""  # noqa: E501


def usda_text(folder: Path, name: str, last: float = 2, sublayers: str = "") -> Path:
    path = folder / name
    path.write_text(USDA.format(last=last, sublayers=sublayers))
    return path


def usd_long_animation(folder: Path) -> Path:
    """Time samples at 0, 1 and 1,000,000 at 24 time codes per second: one grid, a million
    samples."""
    return usda_text(folder, "long.usda", last=1_000_000)


def usd_fifo_sublayer(folder: Path) -> Path:
    """A sublayer that is a FIFO beside the file: usd-core would block reading it."""
    os.mkfifo(folder / "pipe.usda")
    return usda_text(folder, "fifo_layer.usda", sublayers="subLayers = [@pipe.usda@]")


# name -> (builder, words the one-line message must hold besides the file's path)
Builder = Callable[[Path], Path]
MEMORY_CASES: dict[str, tuple[Builder, tuple[str, ...]]] = {
    "gltf_uri_absolute": (gltf_uri_absolute, ("buffers[0].uri '/dev/zero'", "not a relative path")),
    "gltf_uri_fifo": (gltf_uri_fifo, ("buffers[0].uri 'pipe.bin'", "not a regular file")),
    "gltf_uri_symlink_device": (
        gltf_uri_symlink_device,
        ("'zero.bin'", "outside the glTF's folder"),
    ),
    "gltf_far_key": (gltf_far_key, ("333333 s", "9999991 samples x 1 joints", "limit of 262144")),
    "gltf_unbacked_accessor": (
        gltf_unbacked_accessor,
        ("accessors[0].count 16777216", "no bufferView", "limit"),
    ),
    "gltf_many_joints_resampled": (
        gltf_many_joints_resampled,
        ("0 s to 1200 s", "2000 joints", "limit of 262144"),
    ),
    "ssc_many_samples": (ssc_many_samples, ("16776960 samples x 1 joints", "limit of 262144")),
    "sjson_many_bones": (sjson_many_bones, (":2:", "10000 bones", "30000000", "limit")),
    "bvh_many_end_sites": (bvh_many_end_sites, (":8010:", "100000 samples x 2001", "limit")),
    "bvh_many_rows_compressed": (bvh_many_rows_compressed, ("more than 8 MiB", "xz file of")),
    "fbx_long_stack": (fbx_long_stack, ("0 s to 2000 s", "240001 samples", "limit of 381708")),
    "usd_long_animation": (usd_long_animation, ("0 to 1e+06", "1000001 samples", "limit")),
    "usd_fifo_sublayer": (usd_fifo_sublayer, ("'pipe.usda'", "not a regular file")),
}
NUMBER_CASES: dict[str, tuple[Builder, tuple[str, ...]]] = {
    "bvh_value_beyond_float32": (bvh_value_beyond_float32, (":20:", "row 2: 1e+39", "float32")),
    "bvh_offset_beyond_float32": (bvh_offset_beyond_float32, (":8:", "OFFSET y: 1e+39")),
    "bvh_frame_time_huge": (bvh_frame_time_huge, (":18:", "Frame Time 1e308", "1e-308 Hz")),
    "bvh_frame_time_tiny": (bvh_frame_time_tiny, (":18:", "Frame Time 1e-320")),
    "sjson_vertex_distance_huge": (
        sjson_vertex_distance_huge,
        (":4:", "'vertex_distance' 1e+308", "float32"),
    ),
    "sjson_value_huge": (sjson_value_huge, (":9:", "translations row 2: 1e+39", "float32")),
    "sjson_rate_huge": (sjson_rate_huge, (":2:", "'sample_rate' 1e+308 Hz")),
    "ssc_bind_scale_huge": (ssc_bind_scale_huge, ("joint 1 ('j1')", "bind scale 1e+308")),
    "ssc_bind_scale_float32_max": (
        ssc_bind_scale_float32_max,
        ("joint 1 ('j1')", "bind scale 3e+38"),
    ),
    "ssc_shell_huge": (ssc_shell_huge, ("joint 1 ('j1')", "shell distance 1e+308")),
}
CASES = {**MEMORY_CASES, **NUMBER_CASES}


# --- native readers (usd-core, ufbx): crashes, bombs, the sandbox, units -----------------

HOSTILE_DATA = Path(__file__).resolve().parents[2] / "data" / "hostile"


def _stored(name: str) -> Builder:
    """A builder copying tests/data/hostile/NAME (made by tools/make_hostile_files.py)."""

    def build(folder: Path) -> Path:
        path = folder / name
        path.write_bytes((HOSTILE_DATA / name).read_bytes())
        return path

    build.__name__ = name
    return build


def _fbx_record(at: int, name: str, props: list[bytes], children: list[tuple]) -> bytes:
    """One FBX 7.4 binary node record starting at file offset `at` (children as
    (name, props, children) tuples)."""
    head = 13 + len(name)
    body = b"".join(props)
    pos = at + head + len(body)
    kids = b""
    for child in children:
        rec = _fbx_record(pos, *child)
        kids += rec
        pos += len(rec)
    if children:
        kids += b"\0" * 13
    end = at + head + len(body) + len(kids)
    return struct.pack("<IIIB", end, len(props), len(body), len(name)) + name.encode() + body + kids


def fbx_binary(nodes: list[tuple]) -> bytes:
    """A binary FBX 7400 file of the given top-level (name, props, children) records."""
    out = b"Kaydara FBX Binary  \x00\x1a\x00" + struct.pack("<I", 7400)
    for node in nodes:
        out += _fbx_record(len(out), *node)
    return out + b"\0" * 13


def _fbx_array(code: str, values: np.ndarray) -> bytes:
    packed = zlib.compress(values.tobytes(), 9)
    return code.encode() + struct.pack("<III", len(values), 1, len(packed)) + packed


def _fbx_str(text: str) -> bytes:
    return b"S" + struct.pack("<I", len(text)) + text.encode()


def fbx_index_bomb(folder: Path) -> Path:
    """A ~80 KB binary FBX whose zlib-compressed PolygonVertexIndex inflates to 20 million
    entries (80 MB; ufbx needed 1.8 GB for it)."""
    path = folder / "index_bomb.fbx"
    path.write_bytes(_fbx_bomb_bytes("index"))
    return path


def fbx_key_bomb(folder: Path) -> Path:
    """An animation curve whose KeyTime and KeyValueFloat inflate to 30 million keys each."""
    path = folder / "key_bomb.fbx"
    path.write_bytes(_fbx_bomb_bytes("key"))
    return path


@cache
def _fbx_bomb_bytes(kind: str) -> bytes:
    """Made once per process: packing tens of millions of zeros with zlib -9 takes seconds,
    and three tests build each bomb."""
    if kind == "index":
        geometry = (
            "Geometry",
            [
                b"L" + struct.pack("<q", 10),
                _fbx_str("Geometry::m\x00\x01Geometry"),
                _fbx_str("Mesh"),
            ],
            [
                ("Vertices", [_fbx_array("d", np.zeros(9))], []),
                ("PolygonVertexIndex", [_fbx_array("i", np.zeros(20_000_000, np.int32))], []),
            ],
        )
        return fbx_binary([("Objects", [], [geometry])])
    keys = np.zeros(30_000_000, np.int64)
    curve = (
        "AnimationCurve",
        [b"L" + struct.pack("<q", 20), _fbx_str("AnimCurve::\x00\x01AnimCurve"), _fbx_str("")],
        [
            ("KeyTime", [_fbx_array("l", keys)], []),
            ("KeyValueFloat", [_fbx_array("f", keys.astype(np.float32))], []),
        ],
    )
    return fbx_binary([("Objects", [], [curve])])


def usd_outside_sublayer(folder: Path, reference: str, name: str = "clip.usda") -> Path:
    """A clip in folder/clip/ whose sublayer is `reference`; folder/outside.usda holds a
    readable skeleton, so reading it would succeed: only the sandbox refuses it."""
    (folder / "clip").mkdir(exist_ok=True)
    usda_text(folder, "outside.usda")
    return usda_text(folder / "clip", name, sublayers=f"subLayers = [@{reference}@]")


def usd_sublayer_absolute(folder: Path) -> Path:
    return usd_outside_sublayer(folder, str(folder / "outside.usda"))


def usd_sublayer_parent(folder: Path) -> Path:
    return usd_outside_sublayer(folder, "../outside.usda")


def usd_sublayer_parent_gz(folder: Path) -> Path:
    import gzip

    plain = usd_outside_sublayer(folder, "../outside.usda")
    path = plain.with_name("clip.usda.gz")
    path.write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    return path


def usd_sublayer_symlink_out(folder: Path) -> Path:
    path = usd_outside_sublayer(folder, "link.usda")
    (path.parent / "link.usda").symlink_to(folder / "outside.usda")
    return path


def usd_sublayer_cycle(folder: Path) -> Path:
    usda_text(folder, "b.usda", sublayers="subLayers = [@./a.usda@]")
    return usda_text(folder, "a.usda", sublayers="subLayers = [@b.usda@]")


def usd_cesium_crate_lie(folder: Path) -> Path:
    """CesiumMan.usdz with its crate's TOKENS section claiming 900 MB of tokens (a .usdz
    stores its crate uncompressed, so the bytes are patched in place)."""
    data = bytearray((HOSTILE_DATA.parent / "usd" / "CesiumMan.usdz").read_bytes())
    start = data.index(b"PXR-USDC")
    toc = struct.unpack_from("<Q", data, start + 16)[0]
    for i in range(struct.unpack_from("<Q", data, start + toc)[0]):
        name, at, _ = struct.unpack_from("<16sQQ", data, start + toc + 8 + i * 32)
        if name.startswith(b"TOKENS\0"):
            struct.pack_into("<Q", data, start + at + 8, 900_000_000)
    path = folder / "CesiumMan_lie.usdz"
    path.write_bytes(bytes(data))
    return path


NATIVE_CASES: dict[str, tuple[Builder, tuple[str, ...]]] = {
    "usd_nested_xforms": (
        _stored("usd_nested_xforms.usda.xz"),
        ("usd-core crashed while reading usd_nested_xforms.usda.xz: SIGSEGV",),
    ),
    "usd_crate_invalid_spec": (
        _stored("usd_crate_invalid_spec.usdc"),
        ("usd-core crashed while reading", "SIGABRT", "Dereferenced an invalid SdfPrimSpec"),
    ),
    "usd_crate_corrupt_value": (_stored("usd_crate_corrupt_value.usdc"), ("Corrupt asset",)),
    "usd_crate_section_lie": (
        _stored("usd_crate_section_lie.usdc"),
        ("(byte 1437)", "crate section SPECS claims bytes 1,197 to 1,099,511,628,973"),
    ),
    "usd_crate_tokens_lie": (
        _stored("usd_crate_tokens_lie.usdc"),
        ("(byte 600)", "TOKENS declares 28 tokens in 700,000,000 bytes", "limit"),
    ),
    "usd_cesium_crate_lie": (usd_cesium_crate_lie, ("TOKENS declares", "900,000,000 bytes")),
    "usd_syntax_error": (
        _stored("usd_syntax_error.usda"),
        (":7: column 1: expected ListValueClose at '}' in </a.x>",),
    ),
    "usd_not_utf8": (_stored("usd_not_utf8.usda"), ("not UTF-8",)),
    "usd_meters_per_unit_zero": (
        _stored("usd_meters_per_unit_zero.usda"),
        ("metersPerUnit 0: not a positive number",),
    ),
    "usd_meters_per_unit_negative": (
        _stored("usd_meters_per_unit_negative.usda"),
        ("metersPerUnit -1: not a positive number",),
    ),
    "usd_sublayer_absolute": (usd_sublayer_absolute, ("outside.usda'", "an absolute path")),
    "usd_sublayer_parent": (
        usd_sublayer_parent,
        ("'../outside.usda'", "outside the clip's folder"),
    ),
    "usd_sublayer_parent_gz": (
        usd_sublayer_parent_gz,
        ("'../outside.usda'", "outside the clip's folder"),
    ),
    "usd_sublayer_symlink_out": (
        usd_sublayer_symlink_out,
        ("'link.usda'", "a symbolic link to a file outside the clip's folder"),
    ),
    "usd_sublayer_cycle": (usd_sublayer_cycle, ("'./a.usda'", "a cycle")),
    "fbx_index_bomb": (
        fbx_index_bomb,
        ("PolygonVertexIndex: its arrays declare 80,000,", "limit of", "inflated"),
    ),
    "fbx_key_bomb": (fbx_key_bomb, ("KeyTime: its arrays declare 240,000,000 bytes", "limit")),
    "fbx_unit_scale_zero": (
        _stored("fbx_unit_scale_zero.fbx"),
        ("UnitScaleFactor 0: not a positive number",),
    ),
}
MEMORY_CASES.update(NATIVE_CASES)
CASES = {**MEMORY_CASES, **NUMBER_CASES}


def usd_value_clip_outside(folder: Path) -> Path:
    """The animation's value clips come from ../outside.usda: usd-core would read it."""
    path = usd_outside_sublayer(folder, "../outside.usda")
    clips = (
        'def SkelAnimation "Anim" (\n clips = { dictionary default = {\n'
        "  asset[] assetPaths = [@../outside.usda@]\n"
        '  string primPath = "/Root/Skel/Anim"\n  double2[] active = [(0, 0)] } }\n)\n'
    )
    text = path.read_text().replace("subLayers = [@../outside.usda@]", "")
    path.write_text(text.replace('def SkelAnimation "Anim"\n', clips))
    return path


NATIVE_CASES["usd_value_clip_outside"] = (
    usd_value_clip_outside,
    ("value clips use '../outside.usda'", "outside the clip's folder"),
)
MEMORY_CASES.update(NATIVE_CASES)
CASES = {**MEMORY_CASES, **NUMBER_CASES}


def usd_crate_invalid_spec_usdz(folder: Path) -> Path:
    """The aborting crate inside a .usdz package (stored, its data 64-byte aligned as
    usdz requires)."""
    import zipfile

    name = "clip.usdc"
    pad = (64 - (30 + len(name)) % 64) % 64
    pad = pad + 64 if 0 < pad < 4 else pad
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_STORED
    if pad:
        info.extra = b"\x86\x15" + struct.pack("<H", pad - 4) + b"\0" * (pad - 4)
    path = folder / "invalid_spec.usdz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(info, (HOSTILE_DATA / "usd_crate_invalid_spec.usdc").read_bytes())
    return path


NATIVE_CASES["usd_crate_invalid_spec_usdz"] = (
    usd_crate_invalid_spec_usdz,
    ("usd-core crashed while reading invalid_spec.usdz: SIGABRT", "invalid SdfPrimSpec"),
)
MEMORY_CASES.update(NATIVE_CASES)
CASES = {**MEMORY_CASES, **NUMBER_CASES}


def usd_sublayer_sibling_prefix(folder: Path) -> Path:
    """The sublayer is in folder/clip-other/, beside the clip's folder/clip/: its path starts
    with the clip folder's path as text, but it is not inside that folder."""
    (folder / "clip-other").mkdir()
    usda_text(folder / "clip-other", "outside.usda")
    return usd_outside_sublayer(folder, "../clip-other/outside.usda")


def usd_sublayer_bracket_folder(folder: Path) -> Path:
    """The clip's folder is named take[1]: its sublayer's own sublayer leaves that folder."""
    take = folder / "take[1]"
    (take / "clip").mkdir(parents=True)
    usda_text(take, "outside.usda")
    inner = "#usda 1.0\n(\n    subLayers = [@../outside.usda@]\n)\n"
    (take / "clip" / "inner.usda").write_text(inner)
    return usda_text(take / "clip", "clip.usda", sublayers="subLayers = [@inner.usda@]")


def usd_sublayer_package_link_out(folder: Path) -> Path:
    """A layer inside a package, link.usdz[inner.usda], where link.usdz links out."""
    from pxr import Sdf

    (folder / "away").mkdir()
    inner = usda_text(folder / "away", "inner.usda")
    package = Sdf.ZipFileWriter.CreateNew(str(folder / "away" / "pkg.usdz"))
    package.AddFile(str(inner), "inner.usda")
    package.Save()
    path = usd_outside_sublayer(folder, "link.usdz[inner.usda]")
    (path.parent / "link.usdz").symlink_to(folder / "away" / "pkg.usdz")
    return path


# paths that only a comparison of path components (not of text) keeps out of the USD sandbox:
# load_clip's refusal is theirs to check (exit codes, memory and the window are the other
# cases' and take the same path)
SANDBOX_CASES: dict[str, tuple[Builder, tuple[str, ...]]] = {
    "usd_sublayer_sibling_prefix": (
        usd_sublayer_sibling_prefix,
        ("'../clip-other/outside.usda'", "outside the clip's folder"),
    ),
    "usd_sublayer_bracket_folder": (
        usd_sublayer_bracket_folder,
        ("inner.usda pulls in '../outside.usda'", "outside the clip's folder"),
    ),
    "usd_sublayer_package_link_out": (
        usd_sublayer_package_link_out,
        ("'link.usdz[inner.usda]'", "a symbolic link to a file outside the clip's folder"),
    ),
}
