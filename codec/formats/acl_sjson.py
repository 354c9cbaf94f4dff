"""ACL raw clips (`*.acl.sjson`): read versions 1 to 5, write version 5.

Reading covers the `clip` form (header, optional settings, bones, tracks), the `track_list`
form of `qvvf` transform tracks (read into a `Clip`), and scalar track lists (`float1f` ..
`vector4f`, read into a `ScalarTrackList`). Facts the code follows, from ACL's format
reference and reader:

- `is_binary_exact` clip files store every float as a quoted hex string of its IEEE-754
  float64 bit pattern (ACL writes `%X` of the 64-bit word); track lists store float32 bit
  patterns. Decimal numbers are also accepted in binary-exact files.
- Missing `rotations` / `translations` / `scales` hold the bone's bind value (the DESIGN's
  "bind_* are the defaults"). ACL's own reader fills identity instead; on every shared clip
  the two agree, because no bone that lacks a sub-track has a bind value for it.
- Precision comes from `settings.error_threshold` (v2+), or the v1 clip header's
  `error_threshold`, else 0.01; a bone's own `precision` key (not ACL's) wins when present.
- ACL's reader expects keys in the order its writer emits them, so the writer follows that
  order exactly; the reader here accepts any order.
- Every number must be one the codec can hold (codec.limits): values within float32's
  range, positive distances within it too, a sample rate of 1e-3 to 1e6 Hz; the message
  names the line. Bones without a track are filled from their bind pose, so
  `num_samples x bones` is checked against the file's transform budget before that fill
  is allocated (10,000 bones and one 3,000-row track would be 30 million transforms).

Writing uses binary-exact float64 hex by default, so write -> read gives back the same float64
arrays bit for bit; with `binary_exact=False` it writes shortest round-trip decimals (Python's
repr, up to 17 significant digits), which are exact too.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from codec import quat
from codec.atomic import write_text
from codec.clip import DEFAULT_PRECISION, DEFAULT_SHELL_DISTANCE, Clip, Skeleton
from codec.errors import ClipFormatError, ClipValidationError
from codec.formats import sjson
from codec.formats.sjson import SArray, SObject
from codec.limits import (
    distance_problem,
    file_bytes,
    first_out_of_range,
    over_budget,
    rate_problem,
    transform_budget,
    value_problem,
)
from codec.scalar_tracks import INVALID_OUTPUT_INDEX, TRACK_WIDTHS, ScalarTrackList

Array = np.ndarray

SUPPORTED_VERSIONS = (1, 2, 3, 4, 5)
ADDITIVE_FORMATS = ("none", "relative", "additive0", "additive1")
_CLIP_TOP = ("version", "clip", "settings", "bones", "base_tracks", "tracks")
_LIST_TOP = ("version", "track_list", "settings", "tracks")
_HEX_RE = re.compile(r"[0-9A-Fa-f]*")
_SECTION_RE = re.compile(r"^[ \t]*(clip|track_list)[ \t]*[=:]", re.M)
_BRACKET_RE = re.compile(r'//[^\n]*|/\*.*?\*/|"[^"\n]*"|\[', re.S)


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


class _Reader:
    def __init__(self, path: str | Path, doc: SObject, text: str, budget: int) -> None:
        self.path = path
        self.doc = doc
        self.text = text
        self.budget = budget  # samples x bones this file may make (codec.limits)
        self.warnings: list[str] = []
        self.binary_exact = False
        self.hex_bits = 64

    # ------------------------------------------------------------------ helpers
    def fail(self, message: str, line: int | None = None) -> ClipFormatError:
        return ClipFormatError(self.path, message, line=line)

    def get(self, obj: SObject, key: str, kinds: tuple[type, ...], what: str, default=None):
        """obj[key] checked against `kinds` (bool is never a number); `default` when absent."""
        if key not in obj:
            if default is _REQUIRED:
                raise self.fail(f"{what}: expected '{key}'", obj.line)
            return default
        v = obj[key]
        ok = isinstance(v, kinds) and not (isinstance(v, bool) and bool not in kinds)
        if not ok:
            names = " or ".join(
                _KIND_NAMES.get(k, k.__name__) for k in kinds if not (k is int and float in kinds)
            )
            raise self.fail(f"{what}: '{key}' must be {names}, found {_show(v)}", obj.lines[key])
        return v

    def number(
        self,
        obj: SObject,
        key: str,
        what: str,
        default=None,
        positive: bool = False,
        hex_ok: bool = False,
        rate: bool = False,
    ) -> float | None:
        kinds: tuple[type, ...] = (
            (int, float, str) if hex_ok and self.binary_exact else (int, float)
        )
        v = self.get(obj, key, kinds, what, default)
        if v is None or v is default:
            return v
        if isinstance(v, str):
            v = float(self.hex(np.array([v]), what, obj.lines[key])[0])
        v = float(v)
        if not math.isfinite(v) or (positive and v <= 0):
            need = "a positive number" if positive else "a finite number"
            raise self.fail(f"{what}: '{key}' must be {need}, found {v}", obj.lines[key])
        check = rate_problem if rate else distance_problem if positive else value_problem
        problem = check(v)
        if problem:
            raise self.fail(f"{what}: '{key}' {problem}", obj.lines[key])
        return v

    def count(self, obj: SObject, key: str, what: str, minimum: int) -> int:
        v = self.get(obj, key, (int, float), what, _REQUIRED)
        if not (isinstance(v, int) or (math.isfinite(v) and v == int(v))) or v < minimum:
            raise self.fail(
                f"{what}: '{key}' must be a whole number >= {minimum}, found {v}", obj.lines[key]
            )
        return int(v)

    def obj(self, value: object, what: str, line: int | None) -> SObject:
        if not isinstance(value, SObject):
            raise self.fail(
                f"expected {what} to be an object {{ ... }}, found {_show(value)}", line
            )
        return value

    def items(self, obj: SObject, key: str, what: str) -> list[tuple[SObject, int]]:
        """The objects of array obj[key] with their lines (an empty array is allowed)."""
        value = obj.get(key)
        line = obj.lines.get(key, obj.line)
        if isinstance(value, np.ndarray) and value.size == 0:
            return []
        if not isinstance(value, SArray):
            raise self.fail(f"'{key}' must be an array of objects, found {_show(value)}", line)
        return [
            (self.obj(v, f"{what} {i}", ln), ln)
            for i, (v, ln) in enumerate(zip(value, value.lines, strict=True))
        ]

    def hex(self, strings: Array, what: str, line: int | None) -> Array:
        """Decode ACL binary-exact hex bit patterns (float64 or float32) to float64."""
        digits = self.hex_bits // 4
        flat = np.asarray(strings, dtype=str).ravel()
        prefixed = np.strings.startswith(flat, "0x") | np.strings.startswith(flat, "0X")
        if np.any(prefixed):
            flat = np.array(
                [x[2:] if p else x for x, p in zip(flat.tolist(), prefixed, strict=True)]
            )
        lengths = np.strings.str_len(flat)
        joined = "".join(np.strings.zfill(flat, digits).tolist()) if flat.size else ""
        if flat.size and (
            lengths.min() == 0 or lengths.max() > digits or not _HEX_RE.fullmatch(joined)
        ):
            bad = next(
                x for x in flat.tolist() if not re.fullmatch(f"[0-9A-Fa-f]{{1,{digits}}}", x)
            )
            raise self.fail(
                f"{what}: expected a binary-exact hex float ({digits} hex digits at most), "
                f"found {bad!r}",
                line,
            )
        raw = bytes.fromhex(joined)
        dtype = ">f8" if self.hex_bits == 64 else ">f4"
        return np.frombuffer(raw, dtype=dtype).astype(np.float64).reshape(strings.shape)

    def floats(self, value: object, shape: tuple[int, ...], what: str, line: int | None) -> Array:
        """A float64 array of exactly `shape` from a parsed numeric/hex table."""
        arr = self._as_array(value, what, line, shape[1:])
        if arr.shape != shape:
            if arr.ndim == len(shape) and arr.ndim == 2 and arr.shape[1] == shape[1]:
                raise self.fail(
                    f"{what}: {arr.shape[0]} samples, expected {shape[0]} (num_samples)", line
                )
            raise self.fail(f"{what}: expected {_shape_text(shape)}, found {_show(value)}", line)
        if not np.all(np.isfinite(arr)):
            raise self.fail(f"{what}: values must be finite", line)
        bad = first_out_of_range(arr)
        if bad is not None:
            row = bad[0] if arr.ndim == 2 else None
            where = f" row {row + 1}" if row is not None else ""
            raise self.fail(
                f"{what}{where}: {value_problem(float(arr[bad]))}",
                self._row_line(value, line, row),
            )
        return arr

    def _row_line(self, value: object, line: int | None, row: int | None) -> int | None:
        """The line of row `row` of the table that starts on `line` (error messages only).

        Parsed rows of a list know their lines; a numeric table does not, so its opening
        brackets are counted in the text (comments and strings skipped)."""
        if row is None or line is None:
            return line
        if isinstance(value, SArray):
            return value.lines[row]
        start = 0
        for _ in range(line - 1):
            start = self.text.find("\n", start) + 1
        seen = -1  # the table's own bracket comes first
        for m in _BRACKET_RE.finditer(self.text, start):
            if m.group() == "[":
                seen += 1
                if seen == row + 1:
                    return line + self.text.count("\n", start, m.start())
        return line

    def _as_array(
        self, value: object, what: str, line: int | None, row: tuple[int, ...] | None = None
    ) -> Array:
        if isinstance(value, np.ndarray):
            if value.dtype.kind == "f":
                return value
            if value.dtype.kind == "U":
                return self._hex_table(value, what, line)
        if isinstance(value, SArray):
            rows = []
            for item, ln in zip(value, value.lines, strict=True):
                if isinstance(item, (SArray, np.ndarray)):
                    rows.append(self._as_array(item, what, ln))
                elif isinstance(item, (int, float)) and not isinstance(item, bool):
                    rows.append(np.array(float(item)))
                elif isinstance(item, str):
                    rows.append(self._hex_table(np.array(item), what, ln))
                else:
                    raise self.fail(f"{what}: expected numbers, found {_show(item)}", ln)
            want = rows[0].shape if row is None and rows else row
            bad = [i for i, r in enumerate(rows) if r.shape != want]
            if bad and (row is not None or len({r.shape for r in rows}) > 1):
                i = bad[0]
                raise self.fail(
                    f"{what}: entry {i} has {_shape_text(rows[i].shape)}, expected "
                    f"{_shape_text(want)}",
                    value.lines[i],
                )
            return np.stack(rows) if rows else np.zeros((0,))
        raise self.fail(f"{what}: expected an array of numbers, found {_show(value)}", line)

    def _hex_table(self, value: Array, what: str, line: int | None) -> Array:
        if not self.binary_exact:
            raise self.fail(
                f"{what}: expected numbers, found strings (is_binary_exact is not true)", line
            )
        return self.hex(value, what, line)

    def check_keys(self, obj: SObject, allowed: tuple[str, ...], what: str) -> None:
        for key in obj:
            if key not in allowed:
                self.warnings.append(f"line {obj.lines[key]}: ignored unknown {what} key {key!r}")

    # ------------------------------------------------------------------ top level
    def read(self) -> Clip | ScalarTrackList:
        doc = self.doc
        version = self.get(doc, "version", (int,), "file header", _REQUIRED)
        if version not in SUPPORTED_VERSIONS:
            raise self.fail(
                f"unsupported version {version}: expected 1 to {SUPPORTED_VERSIONS[-1]}",
                doc.lines["version"],
            )
        self.version = version
        if "clip" in doc and "track_list" in doc:
            _refuse_two_forms(self.path, self.text)
        if "clip" in doc:
            allowed = _CLIP_TOP
        elif "track_list" in doc:
            allowed = _LIST_TOP
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
        rate = self.number(head, "sample_rate", what, _REQUIRED, positive=True, rate=True)
        name = self.get(head, "name", (str,), what, None)
        if not name:
            name = _stem(self.path)
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
        what = "'clip'"
        v1_threshold = self.number(head, "error_threshold", what, None, positive=True)
        additive = self.get(head, "additive_format", (str,), what, "none")
        if additive.lower() not in ADDITIVE_FORMATS:
            raise self.fail(
                f"'clip': unknown additive_format {additive!r}: expected one of "
                f"{', '.join(ADDITIVE_FORMATS)}",
                head.lines["additive_format"],
            )
        self.get(head, "additive_base_name", (str,), what, None)
        self.number(head, "additive_base_num_samples", what, None)
        self.number(head, "additive_base_sample_rate", what, None, positive=True, rate=True)
        self.check_keys(
            head,
            (
                "name",
                "num_samples",
                "sample_rate",
                "error_threshold",
                "is_binary_exact",
                "additive_format",
                "additive_base_name",
                "additive_base_num_samples",
                "additive_base_sample_rate",
            ),
            "clip",
        )
        if additive.lower() != "none":
            self.warnings.append(
                f"additive clip ({additive}): its tracks are read as stored, relative to a base"
            )
        if "base_tracks" in self.doc:
            self.warnings.append("the additive base clip ('base_tracks') is not read")
        default_precision = self.settings or v1_threshold or DEFAULT_PRECISION

        if "bones" not in self.doc:
            raise self.fail("expected a 'bones' array after 'clip'", self.doc.line)
        bones = self.items(self.doc, "bones", "bone")
        if not bones:
            raise self.fail(
                "'bones' is empty: a clip needs at least one bone", self.doc.lines["bones"]
            )
        names: list[str] = []
        index: dict[str, int] = {}
        parent_names: list[tuple[str, int]] = []
        n = len(bones)
        bind_r = quat.identity((n,))
        bind_t = np.zeros((n, 3))
        bind_s = np.ones((n, 3))
        shell = np.full(n, DEFAULT_SHELL_DISTANCE)
        precision = np.full(n, float(default_precision))
        for j, (bone, line) in enumerate(bones):
            what = f"bone {j}"
            bname = self.get(bone, "name", (str,), what, _REQUIRED)
            what = f"bone {bname!r}"
            if bname in index:
                raise self.fail(f"duplicate bone name {bname!r}", bone.lines["name"])
            index[bname] = j
            names.append(bname)
            parent = self.get(bone, "parent", (str,), what, _REQUIRED)
            parent_names.append((parent, bone.lines["parent"]))
            shell[j] = self.number(
                bone, "vertex_distance", what, DEFAULT_SHELL_DISTANCE, positive=True
            )
            precision[j] = self.number(bone, "precision", what, precision[j], positive=True)
            for key, arr, width in (
                ("bind_rotation", bind_r, 4),
                ("bind_translation", bind_t, 3),
                ("bind_scale", bind_s, 3),
            ):
                if key in bone:
                    arr[j] = self.floats(bone[key], (width,), f"{what} {key}", bone.lines[key])
            norm = float(np.sqrt(np.sum(bind_r[j] ** 2)))
            if abs(norm - 1.0) > 1e-3:
                raise self.fail(
                    f"{what}: bind_rotation is not a unit quaternion (length {norm:.6g})",
                    bone.lines.get("bind_rotation", line),
                )
            self.check_keys(
                bone,
                (
                    "name",
                    "parent",
                    "vertex_distance",
                    "precision",
                    "bind_rotation",
                    "bind_translation",
                    "bind_scale",
                ),
                "bone",
            )
        parents = np.full(n, -1, dtype=np.int64)
        for j, (parent, line) in enumerate(parent_names):
            if parent == "":
                continue
            if parent not in index:
                raise self.fail(f"bone {names[j]!r}: parent {parent!r} is not a bone", line)
            parents[j] = index[parent]

        if "tracks" not in self.doc:
            raise self.fail("expected a 'tracks' array after 'bones'", self.doc.line)
        tracks = self.items(self.doc, "tracks", "track")
        s = num_samples
        seen: dict[int, int] = {}
        data: list[tuple[int, str, Array]] = []
        for i, (track, line) in enumerate(tracks):
            tname = self.get(track, "name", (str,), f"track {i}", _REQUIRED)
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
            self.check_keys(track, ("name", "rotations", "translations", "scales"), "track")
        problem = over_budget(s, n, self.budget)
        if problem:  # every row present is bytes in the file: only the bind-pose fill can be
            raise self.fail(
                f"num_samples = {s} for {n} bones, {len(seen)} of them with a track: {problem}",
                head.lines["num_samples"],
            )
        if len(seen) < n:
            missing = [names[j] for j in range(n) if j not in seen]
            self.warnings.append(
                f"{len(missing)} bone(s) have no track and hold their bind pose: "
                + ", ".join(missing[:5])
                + (" ..." if len(missing) > 5 else "")
            )
        rot = np.empty((s, n, 4))
        tr = np.empty((s, n, 3))
        sc = np.empty((s, n, 3))
        rot[:] = bind_r
        tr[:] = bind_t
        sc[:] = bind_s
        target = {"rotations": rot, "translations": tr, "scales": sc}
        for j, key, values in data:
            target[key][:, j] = values
        return self.build(
            names, parents, bind_r, bind_t, bind_s, precision, shell, rate, rot, tr, sc, name
        )

    def build(
        self, names, parents, bind_r, bind_t, bind_s, precision, shell, rate, rot, tr, sc, name
    ) -> Clip:
        order = _parents_first(parents)
        if order is None:
            raise self.fail("the bone hierarchy has a cycle")
        if not np.array_equal(order, np.arange(len(names))):
            self.warnings.append("bones were reordered so that parents come before children")
            remap = np.empty_like(order)
            remap[order] = np.arange(len(order))
            parents = np.where(parents[order] < 0, -1, remap[np.maximum(parents[order], 0)])
            names = [names[k] for k in order]
            bind_r, bind_t, bind_s = bind_r[order], bind_t[order], bind_s[order]
            precision, shell = precision[order], shell[order]
            rot, tr, sc = rot[:, order], tr[:, order], sc[:, order]
        try:
            skeleton = Skeleton(
                names=tuple(names),
                parents=parents,
                bind_rotations=bind_r,
                bind_translations=bind_t,
                bind_scales=bind_s,
                precision=precision,
                shell_distance=shell,
            )
            return Clip(
                skeleton=skeleton,
                sample_rate=rate,
                rotations=rot,
                translations=tr,
                scales=sc,
                name=name,
                warnings=list(self.warnings),
            )
        except ClipValidationError as exc:
            raise self.fail(str(exc)) from None

    # ------------------------------------------------------------------ track lists
    def read_track_list(self) -> Clip | ScalarTrackList:
        head, s, rate, name = self.header("track_list")
        self.hex_bits = 32  # ACL writes track lists as float32 bit patterns
        self.check_keys(
            head, ("name", "num_samples", "sample_rate", "is_binary_exact"), "track_list"
        )
        if "tracks" not in self.doc:
            raise self.fail("expected a 'tracks' array after 'track_list'", self.doc.line)
        tracks = self.items(self.doc, "tracks", "track")
        if not tracks:
            raise self.fail(
                "'tracks' is empty: a track list needs at least one track", self.doc.lines["tracks"]
            )
        types = []
        for i, (track, _line) in enumerate(tracks):
            ttype = self.get(track, "type", (str,), f"track {i}", _REQUIRED)
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
            self.check_keys(
                track,
                ("name", "type", "precision", "constant_threshold", "output_index", "data"),
                "track",
            )
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
        names: list[str] = []
        parents = np.full(n, -1, dtype=np.int64)
        precision, shell = np.empty(n), np.empty(n)
        bind_r, bind_t, bind_s = quat.identity((n,)), np.zeros((n, 3)), np.ones((n, 3))
        samples: list[tuple[Array, ...]] = []  # stacked at the end: nothing sized by num_samples
        outputs = []
        for i, (track, line) in enumerate(tracks):
            tname, what, precision[i], output = self._common_track(track, i, DEFAULT_PRECISION)
            names.append(tname)
            outputs.append(output)
            parent = self.get(track, "parent_index", (int,), what, INVALID_OUTPUT_INDEX)
            if parent != INVALID_OUTPUT_INDEX:
                if not 0 <= parent < n or parent == i:
                    raise self.fail(
                        f"{what}: parent_index {parent} is not another track",
                        track.lines["parent_index"],
                    )
                parents[i] = parent
            shell[i] = self.number(
                track, "shell_distance", what, DEFAULT_SHELL_DISTANCE, positive=True, hex_ok=True
            )
            for key in (
                "constant_rotation_threshold_angle",
                "constant_translation_threshold",
                "constant_scale_threshold",
            ):
                self.number(track, key, what, None, hex_ok=True)
            for key, arr, width in (
                ("bind_rotation", bind_r, 4),
                ("bind_translation", bind_t, 3),
                ("bind_scale", bind_s, 3),
            ):
                if key in track:
                    arr[i] = self.floats(track[key], (width,), f"{what} {key}", track.lines[key])
            if "data" not in track:
                raise self.fail(f"{what}: expected 'data'", line)
            samples.append(self.qvv_samples(track["data"], s, f"{what} data", track.lines["data"]))
            self.check_keys(
                track,
                (
                    "name",
                    "type",
                    "precision",
                    "constant_threshold",
                    "output_index",
                    "parent_index",
                    "shell_distance",
                    "constant_rotation_threshold_angle",
                    "constant_translation_threshold",
                    "constant_scale_threshold",
                    "bind_rotation",
                    "bind_translation",
                    "bind_scale",
                    "data",
                ),
                "track",
            )
        if outputs != list(range(n)):
            self.warnings.append("output_index remapping is ignored: joints keep track order")
        rot, tr, sc = (np.stack([smp[p] for smp in samples], axis=1) for p in range(3))
        return self.build(
            names, parents, bind_r, bind_t, bind_s, precision, shell, rate, rot, tr, sc, name
        )

    def qvv_samples(self, value: object, s: int, what: str, line: int) -> tuple[Array, ...]:
        """qvvf samples `[ [x y z w] [x y z] [x y z] ]` -> (S, 4), (S, 3), (S, 3)."""
        if not isinstance(value, SArray) or len(value) != s:
            found = len(value) if isinstance(value, (SArray, np.ndarray)) else _show(value)
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


# -------------------------------------------------------------------------- writer


def write_acl_sjson(clip: Clip, path: str | Path, *, binary_exact: bool = True) -> None:
    """Write `clip` as an ACL version 5 raw clip, atomically, in ACL's key order.

    Binary-exact files hold float64 bit patterns as hex strings, so reading gives back the
    same arrays bit for bit; decimal files use shortest round-trip decimals (also exact).
    ACL's clip form has one precision for the clip (`settings.error_threshold`): when joint
    precisions differ, the smallest is written and a comment says so.
    """
    sk = clip.skeleton
    if len(set(sk.names)) != len(sk.names):
        raise ValueError("ACL SJSON identifies bones by name: joint names must be unique")
    fmt = _hex_rows if binary_exact else _decimal_rows
    out: list[str] = ["version = 5", ""]
    out += [
        "clip =",
        "{",
        f"\tname = {sjson.quote(clip.name or _stem(path))}",
        f"\tnum_samples = {clip.num_samples}",
        f"\tsample_rate = {_number(clip.sample_rate)}",
        f"\tis_binary_exact = {'true' if binary_exact else 'false'}",
        '\tadditive_format = "none"',
        "}",
        "",
    ]
    precision = sk.precision
    if not np.all(precision == precision[0]):
        out.append("// Shellscope: joint precisions differ; error_threshold holds the smallest")
    out += [
        "settings =",
        "{",
        f"\terror_threshold = {sjson.format_float(precision.min())}",
        "}",
        "",
    ]
    out += ["bones =", "["]
    for j, bname in enumerate(sk.names):
        p = int(sk.parents[j])
        out += [
            "\t{",
            f"\t\tname = {sjson.quote(bname)}",
            f"\t\tparent = {sjson.quote('' if p < 0 else sk.names[p])}",
            f"\t\tvertex_distance = {sjson.format_float(sk.shell_distance[j])}",
        ]
        for key, values, identity in (
            ("bind_rotation", sk.bind_rotations[j], (0.0, 0.0, 0.0, 1.0)),
            ("bind_translation", sk.bind_translations[j], (0.0, 0.0, 0.0)),
            ("bind_scale", sk.bind_scales[j], (1.0, 1.0, 1.0)),
        ):
            if not _bitwise_equal(values, identity):
                out.append(f"\t\t{key} = {fmt(values[None])[0]}")
        out.append("\t}")
    out += ["]", "", "tracks =", "["]
    for j, bname in enumerate(sk.names):
        out += ["\t{", f"\t\tname = {sjson.quote(bname)}"]
        for key, values in (
            ("rotations", clip.rotations),
            ("translations", clip.translations),
            ("scales", clip.scales),
        ):
            out += [f"\t\t{key} =", "\t\t["]
            out += ["\t\t\t" + row for row in fmt(values[:, j])]
            out.append("\t\t]")
        out.append("\t}")
    out.append("]")
    write_text(path, "\n".join(out) + "\n")


def _hex_rows(values: Array) -> list[str]:
    """Rows of `(N, W)` values as `[ "hex", ... ]` with ACL's float64 bit-pattern strings."""
    n, w = values.shape
    strings = sjson.hex_doubles(values)
    fmt = "[ " + ", ".join(['"{}"'] * w) + " ]"
    return [fmt.format(*strings[k * w : (k + 1) * w]) for k in range(n)]


def _decimal_rows(values: Array) -> list[str]:
    """Rows of `(N, W)` values as shortest round-trip decimals."""
    return ["[ " + ", ".join(sjson.format_float(v) for v in row) + " ]" for row in values.tolist()]


def _number(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else sjson.format_float(v)


def _bitwise_equal(values: Array, ref: tuple[float, ...]) -> bool:
    a = np.asarray(values, dtype=np.float64)
    return bool(np.array_equal(a.view(np.uint64), np.array(ref, dtype=np.float64).view(np.uint64)))


# -------------------------------------------------------------------------- small helpers


class _Required:
    def __repr__(self) -> str:
        return "<required>"


_REQUIRED = _Required()
_KIND_NAMES = {int: "a whole number", float: "a number", str: "a string", bool: "true or false"}


def _show(value: object) -> str:
    if isinstance(value, SObject):
        return "an object"
    if isinstance(value, (SArray, list)):
        return f"an array of {len(value)}"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _shape_text(shape: tuple[int, ...]) -> str:
    if len(shape) == 0:
        return "a single number"
    if len(shape) == 1:
        return f"[ {shape[0]} numbers ]"
    return f"{shape[0]} rows of {shape[1]} numbers"


def _stem(path: object) -> str:
    from codec.formats.compressed import inner_name

    name = inner_name(str(path))
    for suffix in (".acl.sjson", ".sjson"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return Path(name).stem


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
