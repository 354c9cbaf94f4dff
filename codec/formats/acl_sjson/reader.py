"""Reading ACL SJSON: the `clip` form, `qvvf` transform track lists (both into a `Clip`) and
scalar track lists (into a `ScalarTrackList`); see the package docstring for the format."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from codec.errors import ClipFormatError, ClipValidationError
from codec.formats import sjson
from codec.formats.acl_sjson import layout
from codec.formats.acl_sjson.values import SjsonValues
from codec.formats.fields import REQUIRED, describe
from codec.formats.sjson import SArray, SObject
from codec.model import quat
from codec.model.additive import AdditiveBase
from codec.model.additive import apply as apply_additive
from codec.model.clip import DEFAULT_PRECISION, DEFAULT_SHELL_DISTANCE, Clip, Skeleton
from codec.model.limits import file_bytes, over_budget, transform_budget
from codec.model.scalar_tracks import INVALID_OUTPUT_INDEX, TRACK_WIDTHS, ScalarTrackList

Array = np.ndarray

_SECTION_RE = re.compile(r"^[ \t]*(clip|track_list)[ \t]*[=:]", re.M)


def read_acl_sjson(path: str | Path, *, data: bytes | None = None) -> Clip | ScalarTrackList:
    """Read an ACL SJSON file: a `Clip` for clips and qvvf track lists, else a `ScalarTrackList`.

    `data`: the file's bytes when already read (e.g. decompressed). Raises `ClipFormatError`
    (file, line, what was expected) for anything it cannot read.
    """
    text = sjson.read_text(path, data)
    try:
        doc = sjson.parse(text, path)
    except sjson.SJSONError:
        _refuse_two_forms(path, text)  # ACL's format reference: say that, not "duplicate key"
        raise
    return _Reader(path, doc, text, transform_budget(file_bytes(path, data))).read()


def _refuse_two_forms(path: str | Path, text: str) -> None:
    lines = {m.group(1): text.count("\n", 0, m.start()) + 1 for m in _SECTION_RE.finditer(text)}
    if len(lines) == 2:
        raise ClipFormatError(
            path,
            f"holds both a clip (line {lines['clip']}) and a track list "
            f"(line {lines['track_list']}); an ACL file holds one or the other",
            line=max(lines.values()),
        )


@dataclass
class _Bones:
    """The joints as read, in the file's order: names, parents (-1 for a root), bind pose
    (J, 4) / (J, 3) / (J, 3), precision (J,) and shell distance (J,)."""

    names: list[str]
    parents: Array
    bind_r: Array
    bind_t: Array
    bind_s: Array
    precision: Array
    shell: Array

    @classmethod
    def defaults(cls, n: int, precision: float) -> _Bones:
        """n roots at identity with the default precision and shell distance (names empty,
        filled as read)."""
        return cls(
            names=[],
            parents=np.full(n, -1, dtype=np.int64),
            bind_r=quat.identity((n,)),
            bind_t=np.zeros((n, 3)),
            bind_s=np.ones((n, 3)),
            precision=np.full(n, float(precision)),
            shell=np.full(n, DEFAULT_SHELL_DISTANCE),
        )

    def reordered(self, order: Array) -> _Bones:
        """The bones in `order`, parents renumbered."""
        remap = np.empty_like(order)
        remap[order] = np.arange(len(order))
        parents = self.parents[order]
        return _Bones(
            names=[self.names[k] for k in order],
            parents=np.where(parents < 0, -1, remap[np.maximum(parents, 0)]),
            bind_r=self.bind_r[order],
            bind_t=self.bind_t[order],
            bind_s=self.bind_s[order],
            precision=self.precision[order],
            shell=self.shell[order],
        )


class _Reader(SjsonValues):
    def __init__(self, path: str | Path, doc: SObject, text: str, budget: int) -> None:
        super().__init__(path, text)
        self.doc = doc
        self.budget = budget  # samples x bones this file may make (codec.model.limits)

    # ------------------------------------------------------------------ top level
    def read(self) -> Clip | ScalarTrackList:
        doc = self.doc
        version = self.get(doc, "version", (int,), "file header", REQUIRED)
        if version not in layout.SUPPORTED_VERSIONS:
            raise self.fail(
                f"unsupported version {version}: expected 1 to {layout.SUPPORTED_VERSIONS[-1]}",
                doc.lines["version"],
            )
        self.version = version
        if "clip" in doc and "track_list" in doc:
            _refuse_two_forms(self.path, self.text)
        if "clip" in doc:
            allowed = layout.CLIP_TOP
        elif "track_list" in doc:
            allowed = layout.LIST_TOP
        else:
            raise self.fail("expected a 'clip' or a 'track_list' section", doc.line)
        for key in doc:
            if key not in allowed:
                raise self.fail(
                    f"unexpected top-level key {key!r}: expected one of {', '.join(allowed)}",
                    doc.lines[key],
                )
        if "settings" in doc:
            self.settings = self.read_settings(doc)
        else:
            self.settings = None
        if "clip" in doc:
            return self.read_clip()
        return self.read_track_list()

    def header(self, key: str) -> tuple[SObject, int, float, str]:
        doc = self.doc
        head = self.obj(doc[key], f"'{key}'", doc.lines[key])
        what = f"'{key}'"
        num_samples = self.count(head, "num_samples", what, 1)
        rate = self.number(head, "sample_rate", what, REQUIRED, positive=True, rate=True)
        name = self.get(head, "name", (str,), what, None)
        if not name:
            name = layout.clip_name(self.path)
        self.binary_exact = bool(self.get(head, "is_binary_exact", (bool,), what, False))
        return head, num_samples, float(rate), name  # type: ignore[arg-type]

    def read_settings(self, doc: SObject) -> float | None:
        """Validate `settings` and return its error_threshold (the precision) if given."""
        st = self.obj(doc["settings"], "'settings'", doc.lines["settings"])
        what = "'settings'"
        for key in (
            "algorithm_name",
            "level",
            "rotation_format",
            "translation_format",
            "scale_format",
        ):
            self.get(st, key, (str,), what, None)
        for key in (
            "rotation_range_reduction",
            "translation_range_reduction",
            "scale_range_reduction",
        ):
            self.get(st, key, (bool,), what, None)
        if "segmenting" in st:
            seg = self.obj(st["segmenting"], "'segmenting'", st.lines["segmenting"])
            self.get(seg, "enabled", (bool,), "'segmenting'", None)
            for key in ("ideal_num_samples", "max_num_samples"):
                self.number(seg, key, "'segmenting'", None, positive=True)
        for key in (
            "constant_rotation_threshold_angle",
            "constant_translation_threshold",
            "constant_scale_threshold",
        ):
            self.number(st, key, what, None)
        return self.number(st, "error_threshold", what, None, positive=True)

    # ------------------------------------------------------------------ clip form
    def read_clip(self) -> Clip:
        head, num_samples, rate, name = self.header("clip")
        default_precision = self.clip_header(head)
        bones, index = self.read_bones(default_precision)
        s, n = num_samples, len(bones.names)
        data, seen = self.read_tracks(index, s)
        problem = over_budget(s, n, self.budget)
        if problem:  # every row present is bytes in the file: only the bind-pose fill can be
            raise self.fail(
                f"num_samples = {s} for {n} bones, {len(seen)} of them with a track: {problem}",
                head.lines["num_samples"],
            )
        if len(seen) < n:
            missing = [bones.names[j] for j in range(n) if j not in seen]
            self.warnings.append(
                f"{len(missing)} bone(s) have no track and hold their bind pose: "
                + ", ".join(missing[:5])
                + (" ..." if len(missing) > 5 else "")
            )
        rot = np.empty((s, n, 4))
        tr = np.empty((s, n, 3))
        sc = np.empty((s, n, 3))
        rot[:] = bones.bind_r
        tr[:] = bones.bind_t
        sc[:] = bones.bind_s
        target = {"rotations": rot, "translations": tr, "scales": sc}
        for j, key, values in data:
            target[key][:, j] = values
        base = self.read_base(bones, index) if self.additive is not None else None
        return self.build(bones, rate, rot, tr, sc, name, base)

    def read_base(self, bones: _Bones, index: dict[str, int]) -> AdditiveBase:
        """The additive's base clip (`base_tracks`, as `tracks`; bones without one hold
        their bind pose), in the file's bone order."""
        assert self.additive is not None
        fmt, name, b, rate, _line = self.additive
        n = len(bones.names)
        rot = np.empty((b, n, 4))
        tr = np.empty((b, n, 3))
        sc = np.empty((b, n, 3))
        rot[:] = bones.bind_r
        tr[:] = bones.bind_t
        sc[:] = bones.bind_s
        target = {"rotations": rot, "translations": tr, "scales": sc}
        data, _seen = self.read_tracks(index, b, "base_tracks")
        for j, key, values in data:
            target[key][:, j] = values
        norm = np.sqrt(np.sum(rot * rot, axis=-1))
        if np.any(np.abs(norm - 1.0) > 1e-3):
            s, j = np.argwhere(np.abs(norm - 1.0) > 1e-3)[0]
            raise self.fail(
                f"base_tracks: rotation of bone {bones.names[j]!r} at sample {s} is not a unit "
                f"quaternion (length {norm[s, j]:.6g})",
                self.doc.lines["base_tracks"],
            )
        rot /= norm[..., None]
        return AdditiveBase(fmt, rot, tr, sc, rate, name)

    def clip_header(self, head: SObject) -> float:
        """Check the clip header's optional keys; the clip's precision (settings, v1 header)."""
        what = "'clip'"
        v1_threshold = self.number(head, "error_threshold", what, None, positive=True)
        additive = self.get(head, "additive_format", (str,), what, "none")
        if additive.lower() not in layout.ADDITIVE_FORMATS:
            raise self.fail(
                f"'clip': unknown additive_format {additive!r}: expected one of "
                f"{', '.join(layout.ADDITIVE_FORMATS)}",
                head.lines["additive_format"],
            )
        base_name = self.get(head, "additive_base_name", (str,), what, None)
        base_n = self.number(head, "additive_base_num_samples", what, None)
        base_rate = self.number(
            head, "additive_base_sample_rate", what, None, positive=True, rate=True
        )
        self.check_keys(head, layout.CLIP_KEYS, "clip")
        self.additive: tuple[str, str, int, float, int] | None = None
        if additive.lower() != "none":
            if "base_tracks" not in self.doc:
                self.warnings.append(
                    f"additive clip ({additive}) without 'base_tracks': its tracks are read as "
                    "stored, and errors are measured on the additive alone"
                )
            else:
                n = int(base_n) if base_n is not None else 0
                if base_n is None or base_n != n or n < 1:
                    raise self.fail(
                        f"'clip': additive_base_num_samples = {base_n}: an additive clip with "
                        "'base_tracks' needs a whole number of base samples, at least 1",
                        head.lines.get("additive_base_num_samples", head.line),
                    )
                rate = float(base_rate) if base_rate is not None else 1.0
                line = head.lines["additive_format"]
                self.additive = (additive.lower(), base_name or "", n, rate, line)
        elif "base_tracks" in self.doc:
            self.warnings.append("'base_tracks' of a clip whose additive_format is none: not read")
        return self.settings or v1_threshold or DEFAULT_PRECISION

    def read_bones(self, default_precision: float) -> tuple[_Bones, dict[str, int]]:
        """The `bones` array: the joints, and each bone's index by name."""
        if "bones" not in self.doc:
            raise self.fail("expected a 'bones' array after 'clip'", self.doc.line)
        items = self.items(self.doc, "bones", "bone")
        if not items:
            raise self.fail(
                "'bones' is empty: a clip needs at least one bone", self.doc.lines["bones"]
            )
        bones = _Bones.defaults(len(items), default_precision)
        index: dict[str, int] = {}
        parent_names: list[tuple[str, int]] = []
        for j, (bone, line) in enumerate(items):
            what = f"bone {j}"
            bname = self.get(bone, "name", (str,), what, REQUIRED)
            what = f"bone {bname!r}"
            if bname in index:
                raise self.fail(f"duplicate bone name {bname!r}", bone.lines["name"])
            index[bname] = j
            bones.names.append(bname)
            parent = self.get(bone, "parent", (str,), what, REQUIRED)
            parent_names.append((parent, bone.lines["parent"]))
            bones.shell[j] = self.number(
                bone, "vertex_distance", what, DEFAULT_SHELL_DISTANCE, positive=True
            )
            bones.precision[j] = self.number(
                bone, "precision", what, bones.precision[j], positive=True
            )
            self.read_bind(bones, j, bone, what)
            norm = float(np.sqrt(np.sum(bones.bind_r[j] ** 2)))
            if abs(norm - 1.0) > 1e-3:
                raise self.fail(
                    f"{what}: bind_rotation is not a unit quaternion (length {norm:.6g})",
                    bone.lines.get("bind_rotation", line),
                )
            self.check_keys(bone, layout.BONE_KEYS, "bone")
        for j, (parent, line) in enumerate(parent_names):
            if parent == "":
                continue
            if parent not in index:
                raise self.fail(f"bone {bones.names[j]!r}: parent {parent!r} is not a bone", line)
            bones.parents[j] = index[parent]
        return bones, index

    def read_bind(self, bones: _Bones, j: int, obj: SObject, what: str) -> None:
        """A bone's (or a qvvf track's) bind pose keys, where present."""
        for key, arr, width in (
            ("bind_rotation", bones.bind_r, 4),
            ("bind_translation", bones.bind_t, 3),
            ("bind_scale", bones.bind_s, 3),
        ):
            if key in obj:
                arr[j] = self.floats(obj[key], (width,), f"{what} {key}", obj.lines[key])

    def read_tracks(
        self, index: dict[str, int], s: int, array: str = "tracks"
    ) -> tuple[list[tuple[int, str, Array]], dict[int, int]]:
        """The `tracks` array (or `base_tracks`): (bone, sub-track key, (S, width) values)
        of every sub-track stored, and the line of each bone's track."""
        if array not in self.doc:
            raise self.fail(f"expected a '{array}' array after 'bones'", self.doc.line)
        seen: dict[int, int] = {}
        data: list[tuple[int, str, Array]] = []
        for i, (track, line) in enumerate(self.items(self.doc, array, "track")):
            tname = self.get(track, "name", (str,), f"track {i}", REQUIRED)
            if tname not in index:
                raise self.fail(f"track {tname!r} names no bone", track.lines["name"])
            j = index[tname]
            if j in seen:
                raise self.fail(f"second track for bone {tname!r} (first on line {seen[j]})", line)
            seen[j] = line
            for key, width in (("rotations", 4), ("translations", 3), ("scales", 3)):
                if key in track:
                    values = self.floats(
                        track[key], (s, width), f"track {tname!r} {key}", track.lines[key]
                    )
                    data.append((j, key, values))
            self.check_keys(track, layout.TRACK_KEYS, "track")
        return data, seen

    def build(
        self,
        bones: _Bones,
        rate: float,
        rot: Array,
        tr: Array,
        sc: Array,
        name: str,
        base: AdditiveBase | None = None,
    ) -> Clip:
        """The clip, its bones put parents first when the file did not; an additive with
        its base holds the applied pose (codec.model.additive)."""
        order = _parents_first(bones.parents)
        if order is None:
            raise self.fail("the bone hierarchy has a cycle")
        if not np.array_equal(order, np.arange(len(bones.names))):
            self.warnings.append("bones were reordered so that parents come before children")
            bones = bones.reordered(order)
            rot, tr, sc = rot[:, order], tr[:, order], sc[:, order]
            if base is not None:
                base = AdditiveBase(
                    base.format,
                    base.rotations[:, order],
                    base.translations[:, order],
                    base.scales[:, order],
                    base.sample_rate,
                    base.name,
                )
        if base is not None:
            norm = np.sqrt(np.sum(rot * rot, axis=-1, keepdims=True))
            if np.all(norm > 0.0):
                at = base.at_samples(rot.shape[0], rate)
                rot, tr, sc = apply_additive(base.format, at, (rot / norm, tr, sc))
        try:
            skeleton = Skeleton(
                names=tuple(bones.names),
                parents=bones.parents,
                bind_rotations=bones.bind_r,
                bind_translations=bones.bind_t,
                bind_scales=bones.bind_s,
                precision=bones.precision,
                shell_distance=bones.shell,
            )
            return Clip(
                skeleton=skeleton,
                sample_rate=rate,
                rotations=rot,
                translations=tr,
                scales=sc,
                name=name,
                warnings=list(self.warnings),
                additive=base,
            )
        except ClipValidationError as exc:
            raise self.fail(str(exc)) from None

    # ------------------------------------------------------------------ track lists
    def read_track_list(self) -> Clip | ScalarTrackList:
        head, s, rate, name = self.header("track_list")
        self.hex_bits = 32  # ACL writes track lists as float32 bit patterns
        self.check_keys(head, layout.LIST_KEYS, "track_list")
        if "tracks" not in self.doc:
            raise self.fail("expected a 'tracks' array after 'track_list'", self.doc.line)
        tracks = self.items(self.doc, "tracks", "track")
        if not tracks:
            raise self.fail(
                "'tracks' is empty: a track list needs at least one track", self.doc.lines["tracks"]
            )
        types = []
        for i, (track, _line) in enumerate(tracks):
            ttype = self.get(track, "type", (str,), f"track {i}", REQUIRED)
            if ttype not in TRACK_WIDTHS and ttype != "qvvf":
                raise self.fail(
                    f"track {i}: unknown type {ttype!r}: expected qvvf, " + ", ".join(TRACK_WIDTHS),
                    track.lines["type"],
                )
            if types and ttype != types[0]:
                raise self.fail(
                    f"track {i} is {ttype} but track 0 is {types[0]}: "
                    "every track of a list has the same type",
                    track.lines["type"],
                )
            types.append(ttype)
        if types[0] == "qvvf":
            return self.read_qvvf(tracks, s, rate, name)
        return self.read_scalars(tracks, types[0], s, rate, name)

    def _common_track(self, track: SObject, i: int, default_precision: float):
        tname = self.get(track, "name", (str,), f"track {i}", f"track {i}")
        what = f"track {tname!r}"
        precision = self.number(
            track, "precision", what, default_precision, positive=True, hex_ok=True
        )
        self.number(track, "constant_threshold", what, None, hex_ok=True)
        output = self.get(track, "output_index", (int,), what, i)
        if not 0 <= output <= INVALID_OUTPUT_INDEX:
            raise self.fail(
                f"{what}: output_index {output} out of range", track.lines["output_index"]
            )
        return tname, what, precision, output

    def read_scalars(self, tracks, ttype: str, s: int, rate: float, name: str) -> ScalarTrackList:
        width = TRACK_WIDTHS[ttype]
        t = len(tracks)
        names, precision, outputs = [], np.empty(t), np.empty(t, dtype=np.int64)
        values = np.empty((s, t, width)) if over_budget(s, t, self.budget) is None else None
        for i, (track, line) in enumerate(tracks):
            tname, what, precision[i], outputs[i] = self._common_track(track, i, 0.0001)
            names.append(tname)
            if "data" not in track:
                raise self.fail(f"{what}: expected 'data'", line)
            arr = self.floats(track["data"], (s, width), f"{what} data", track.lines["data"])
            if values is None:  # only reachable if the data really has that many rows
                values = np.empty((s, t, width))
            values[:, i] = arr
            self.check_keys(track, layout.SCALAR_TRACK_KEYS, "track")
        valid = outputs[outputs != INVALID_OUTPUT_INDEX]
        if len(np.unique(valid)) != len(valid):
            raise self.fail("output_index values must be unique", self.doc.lines["tracks"])
        try:
            return ScalarTrackList(
                track_type=ttype,
                sample_rate=rate,
                values=values,
                names=tuple(names),
                precision=precision,
                output_index=outputs,
                name=name,
            )
        except ClipValidationError as exc:
            raise self.fail(str(exc)) from None

    def read_qvvf(self, tracks, s: int, rate: float, name: str) -> Clip:
        n = len(tracks)
        bones = _Bones.defaults(n, DEFAULT_PRECISION)
        samples: list[tuple[Array, ...]] = []  # stacked at the end: nothing sized by num_samples
        outputs = []
        for i, (track, line) in enumerate(tracks):
            tname, what, bones.precision[i], output = self._common_track(
                track, i, DEFAULT_PRECISION
            )
            bones.names.append(tname)
            outputs.append(output)
            parent = self.get(track, "parent_index", (int,), what, INVALID_OUTPUT_INDEX)
            if parent != INVALID_OUTPUT_INDEX:
                if not 0 <= parent < n or parent == i:
                    raise self.fail(
                        f"{what}: parent_index {parent} is not another track",
                        track.lines["parent_index"],
                    )
                bones.parents[i] = parent
            bones.shell[i] = self.number(
                track, "shell_distance", what, DEFAULT_SHELL_DISTANCE, positive=True, hex_ok=True
            )
            for key in (
                "constant_rotation_threshold_angle",
                "constant_translation_threshold",
                "constant_scale_threshold",
            ):
                self.number(track, key, what, None, hex_ok=True)
            self.read_bind(bones, i, track, what)
            if "data" not in track:
                raise self.fail(f"{what}: expected 'data'", line)
            samples.append(self.qvv_samples(track["data"], s, f"{what} data", track.lines["data"]))
            self.check_keys(track, layout.QVVF_TRACK_KEYS, "track")
        if outputs != list(range(n)):
            self.warnings.append("output_index remapping is ignored: joints keep track order")
        rot, tr, sc = (np.stack([smp[p] for smp in samples], axis=1) for p in range(3))
        return self.build(bones, rate, rot, tr, sc, name)

    def qvv_samples(self, value: object, s: int, what: str, line: int) -> tuple[Array, ...]:
        """qvvf samples `[ [x y z w] [x y z] [x y z] ]` -> (S, 4), (S, 3), (S, 3)."""
        if not isinstance(value, SArray) or len(value) != s:
            found = len(value) if isinstance(value, (SArray, np.ndarray)) else describe(value)
            raise self.fail(f"{what}: expected {s} samples (num_samples), found {found}", line)
        parts: list[list[Array]] = [[], [], []]
        for k, (sample, ln) in enumerate(zip(value, value.lines, strict=True)):
            if not isinstance(sample, SArray) or len(sample) != 3:
                raise self.fail(
                    f"{what}: sample {k} must be [ [rotation] [translation] [scale] ]", ln
                )
            for p, width in enumerate((4, 3, 3)):
                parts[p].append(
                    self.floats(sample[p], (width,), f"{what} sample {k}", sample.lines[p])
                )
        return tuple(np.stack(p) for p in parts)


def _parents_first(parents: Array) -> Array | None:
    """An order that puts every parent before its children and otherwise keeps the file's
    order, or None when the hierarchy has a cycle."""
    n = len(parents)
    if np.all(parents < np.arange(n)):
        return np.arange(n)
    placed = np.zeros(n, dtype=bool)
    order: list[int] = []
    for j in range(n):
        chain: list[int] = []
        k = j
        while k >= 0 and not placed[k]:
            if k in chain:
                return None
            chain.append(k)
            k = int(parents[k])
        for k in reversed(chain):
            placed[k] = True
            order.append(k)
    return np.array(order, dtype=np.int64)
