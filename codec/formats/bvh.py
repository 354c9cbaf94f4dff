"""BVH (Biovision Hierarchy) reader and lossy writer.

Conventions, chosen to match what DCC tools show for the real files we test on:

- Joint order is file order (depth first), End Sites included as leaf joints named
  ``<parent>_End`` so that shells reach the tips. Several ROOT blocks are allowed.
- Bind pose: translation = OFFSET, rotation = identity, scale = 1.
- Rotation channels are Euler angles in degrees applied in the order listed, intrinsic, for
  column vectors: ``Zrotation Xrotation Yrotation`` means ``R = Rz @ Rx @ Ry``.
- Position channels: on a root they replace the OFFSET (what every tool does; roots usually
  have OFFSET 0). On any other joint files in the wild follow one of two conventions:
  Blender's importer and three.js's BVHLoader read the channels as the joint's whole local
  translation, replacing the OFFSET (and Blender's exporter writes them so); MakeHuman and
  others write them added to the OFFSET (its T-pose stores zeros there, and replacing would
  collapse 144 joints onto their parents). `positions="auto"` decides per file from the
  data: each such joint whose OFFSET is not zero votes by its first-frame values, near its
  OFFSET ("replace") or near zero ("add"); the majority wins (a tie reads "add") and a
  warning on the clip says which was chosen and how the joints voted. "add" and "replace"
  force one. An axis without a channel keeps the OFFSET value.
- The MOTION block is parsed with one numpy conversion; the header's ``Frames:`` value is
  only compared with the rows found, never used to allocate. The rows are counted before
  they are split into numbers, so a file (or a small .xz of one) with more rows x joints
  than codec.model.limits allows for its size is refused before it costs any memory.
- Every number must be one the codec can hold (codec.model.limits): within float32's range, and a
  Frame Time whose rate is between 1e-3 and 1e6 Hz; the message names the line.
"""

from __future__ import annotations

import io
import math
import os
import re
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from codec.errors import ClipFormatError, ShellscopeError
from codec.formats.atomic import atomic_open
from codec.formats.compressed import inner_name
from codec.formats.input_paths import described
from codec.formats.spec import FormatSpec
from codec.model import quat
from codec.model.clip import Clip, Skeleton
from codec.model.limits import (
    MAX_BVH_BYTES,
    MAX_VALUE,
    file_bytes,
    over_budget,
    rate_problem,
    transform_budget,
    value_problem,
)
from codec.model.units import UNIT_CM, USER_UNITS, Units, units_from_height
from codec.printable import escaped

Array = np.ndarray

UNITS_TO_CM = UNIT_CM
POSITIONS = ("auto", "add", "replace")  # how non-root position channels are read
_CHANNELS = {
    "xposition": ("p", 0),
    "yposition": ("p", 1),
    "zposition": ("p", 2),
    "xrotation": ("r", 0),
    "yrotation": ("r", 1),
    "zrotation": ("r", 2),
}
_MAX_CHANNELS = 6
# what a parse error may quote of a file: BVH's own words (anything else is named by its kind,
# codec.formats.input_paths.described: a file that is no BVH may be anything, a secret too)
_WORDS = frozenset(
    ("HIERARCHY", "ROOT", "JOINT", "End", "Site", "OFFSET", "CHANNELS", "MOTION", "{", "}")
    + ("<end of hierarchy>", "Frames:", "Frame", "Time:")
    + tuple(f"{a}{b}" for a in "XYZ" for b in ("position", "rotation"))
)
_NOT_FINITE = frozenset(
    f"{sign}{word}"
    for sign in ("", "-", "+")
    for word in ("nan", "NaN", "NAN", "inf", "Inf", "INF", "infinity", "Infinity", "INFINITY")
)
_TOKEN = re.compile(r"[{}]|[^\s{}]+")
_NONBLANK_LINE = re.compile(r"^[ \t\r\f\v]*\S", re.MULTILINE)


@dataclass
class _Joint:
    name: str
    parent: int
    line: int
    offset: tuple[float, float, float] | None = None
    channels: list[tuple[str, int]] = field(default_factory=list)  # (kind, axis)
    end_site: bool = False


def read_bvh(
    path: str | os.PathLike[str],
    *,
    units: str | None = "auto",
    bvh_positions: str | None = "auto",
    data: bytes | None = None,
) -> Clip:
    """Read a BVH file into a clip in centimetres.

    BVH declares no unit, so `units` says what the file is in: a name of codec.model.units.UNIT_CM
    ("cm", "m", "inch", "dm", "cmu", ...) or "auto": the unit in which the skeleton's height
    (the largest extent of the bind pose) is a human's (codec.model.units.HUMAN_HEIGHT: m 1.5-2,
    dm 15-20, CMU units 20-35, inches 60-75, cm 150-200); a height that fits none is taken
    as cm with a warning. `clip.units` says what was chosen and why. `bvh_positions`: how
    position channels of non-root joints are read, "add" (to the OFFSET), "replace" (the
    OFFSET: the joint's local translation) or "auto" (decided from the data, with a warning
    saying which; see the module docstring). `data`: the file's bytes when already read.
    Raises ClipFormatError (file, line, what was expected) on bad input.
    """
    if units is None:
        units = "auto"
    if units not in USER_UNITS:
        raise ValueError(f"units must be one of {', '.join(USER_UNITS)}; got {units!r}")
    positions = bvh_positions or "auto"
    if positions not in POSITIONS:
        raise ValueError(f"bvh_positions must be one of {', '.join(POSITIONS)}; got {positions!r}")
    try:
        if data is None:
            data = Path(path).read_bytes()
    except OSError as e:
        raise ClipFormatError(path, f"cannot read the file: {e.strerror or e}") from None
    try:
        return _parse(path, data, units, positions, transform_budget(file_bytes(path, data)))
    except ShellscopeError as e:
        if isinstance(e, ClipFormatError):
            raise
        raise ClipFormatError(path, str(e)) from None
    except (ValueError, IndexError, KeyError, OverflowError, MemoryError) as e:
        raise ClipFormatError(path, f"unreadable BVH ({type(e).__name__}: {e})") from None


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")  # never fails; names from old exporters are often Latin-1


def _parse(path: object, data: bytes, units: str, positions: str, budget: int) -> Clip:
    text = _decode(data)
    m = re.search(r"^[ \t]*MOTION\b", text, re.MULTILINE)
    head = text if m is None else text[: m.start()]
    joints = _parse_hierarchy(path, head)  # first, so its errors win over a missing MOTION
    if m is None:
        raise ClipFormatError(
            path, "expected 'MOTION' after the hierarchy", line=text.count("\n") + 1
        )
    motion_line = head.count("\n") + 1
    _name_end_sites(joints)

    # --- MOTION header: "Frames: N" then "Frame Time: dt", each on its own line ---
    pos = text.find("\n", m.end())
    pos = len(text) if pos < 0 else pos + 1
    line = motion_line + 1

    def header_line(label: str, pattern: str) -> tuple[str, int]:
        nonlocal pos, line
        while pos < len(text):
            nl = text.find("\n", pos)
            nl = len(text) if nl < 0 else nl
            content = text[pos:nl]
            pos, here = nl + 1, line
            line += 1
            if content.strip():
                hm = re.match(pattern, content)
                if hm is None:
                    raise ClipFormatError(
                        path, f"expected '{label}', got {described(content.strip())}", line=here
                    )
                return hm.group(1), here
        raise ClipFormatError(path, f"expected '{label}' before the end of file", line=line)

    frames_tok, frames_line = header_line("Frames: <count>", r"\s*Frames\s*:\s*(\S+)\s*$")
    try:
        header_frames = int(frames_tok)
        if header_frames < 0:
            raise ValueError
    except ValueError:
        raise ClipFormatError(
            path, f"Frames must be a count, got {described(frames_tok)}", line=frames_line
        ) from None
    time_tok, time_line = header_line("Frame Time: <seconds>", r"\s*Frame\s+Time\s*:\s*(\S+)\s*$")
    try:
        frame_time = float(time_tok)
    except ValueError:
        frame_time = float("nan")
    if not (math.isfinite(frame_time) and frame_time > 0):
        raise ClipFormatError(
            path,
            f"Frame Time must be a positive number, got {described(time_tok)}",
            line=time_line,
        )
    with np.errstate(over="ignore"):
        problem = rate_problem(float(np.float64(1.0) / frame_time))
    if problem:
        raise ClipFormatError(path, f"Frame Time {time_tok}: sample rate {problem}", line=time_line)
    body = text[pos:]
    first_row_line = line

    num_channels = sum(len(j.channels) for j in joints)
    if num_channels == 0:
        raise ClipFormatError(path, "no joint has CHANNELS: there is nothing to animate")
    _check_row_count(path, body, len(joints), budget, first_row_line)
    values = _parse_rows(path, body, num_channels, first_row_line)
    rows = values.shape[0]
    warnings: list[str] = []
    if rows != header_frames:
        warnings.append(
            f"{Path(str(path)).name}: header says Frames: {header_frames} but there are "
            f"{rows} data rows; using the {rows} rows"
        )
    return _build_clip(path, joints, values, frame_time, units, positions, warnings)


class _Tokens:
    """The HIERARCHY block's words, each with its line; reading one names the line it failed
    on."""

    def __init__(self, path: object, head: str) -> None:
        self.path = path
        self.tokens: list[tuple[str, int]] = []
        for lineno, line in enumerate(head.split("\n"), start=1):
            self.tokens.extend((t, lineno) for t in _TOKEN.findall(line))
        self.last_line = head.count("\n") + 1
        self.pos = 0

    @property
    def done(self) -> bool:
        return self.pos >= len(self.tokens)

    def peek(self) -> tuple[str, int]:
        return self.tokens[self.pos] if not self.done else ("<end of hierarchy>", self.last_line)

    def fail(self, message: str, line: int) -> ClipFormatError:
        return ClipFormatError(self.path, message, line=line)

    def expect(self, want: str, after: str) -> None:
        tok, line = self.peek()
        if tok != want:
            raise self.fail(f"expected {want!r} after {after}, got {described(tok, _WORDS)}", line)
        self.pos += 1

    def number(self, what: str) -> float:
        tok, line = self.peek()
        try:
            v = float(tok)
        except ValueError:
            v = float("nan")
        if not math.isfinite(v):
            raise self.fail(f"expected a number for {what}, got {described(tok, _WORDS)}", line)
        if abs(v) > MAX_VALUE:
            raise self.fail(f"{what}: {value_problem(v)}", line)
        self.pos += 1
        return v

    def offset(self) -> tuple[float, float, float]:
        return (self.number("OFFSET x"), self.number("OFFSET y"), self.number("OFFSET z"))

    def name(self, keyword: str, line: int) -> str:
        """The joint name after ROOT / JOINT: the words up to '{' on the same line."""
        parts = []
        while (
            not self.done and self.tokens[self.pos][1] == line and self.tokens[self.pos][0] != "{"
        ):
            parts.append(self.tokens[self.pos][0])
            self.pos += 1
        if not parts:
            raise self.fail(f"expected a joint name after {keyword}", line)
        return " ".join(parts)

    def channels(self, joint: _Joint) -> None:
        """`CHANNELS n name...` of a joint (the keyword already read)."""
        ctok, cline = self.peek()
        try:
            count = int(ctok)
        except ValueError:
            raise self.fail(
                f"expected a channel count after CHANNELS, got {described(ctok, _WORDS)}", cline
            ) from None
        if not 0 <= count <= _MAX_CHANNELS:
            raise self.fail(f"CHANNELS count {count} is not 3 or 6 (at most 6)", cline)
        self.pos += 1
        seen = set()
        for _ in range(count):
            ch, chline = self.peek()
            spec = _CHANNELS.get(ch.lower())
            if spec is None:
                raise self.fail(
                    "expected a channel name (Xposition .. Zrotation), got "
                    f"{described(ch, _WORDS)}",
                    chline,
                )
            if spec in seen:
                raise self.fail(f"channel {ch} listed twice", chline)
            seen.add(spec)
            joint.channels.append(spec)
            self.pos += 1


def _parse_hierarchy(path: object, head: str) -> list[_Joint]:
    t = _Tokens(path, head)
    tok, line = t.peek()
    if tok != "HIERARCHY":
        raise t.fail(f"expected 'HIERARCHY', got {described(tok, _WORDS)}", line)
    t.pos += 1
    joints: list[_Joint] = []
    stack: list[int] = []  # open joints; iterative so deep nesting cannot overflow
    while not t.done or stack:
        tok, line = t.peek()
        if not stack and tok != "ROOT":
            raise t.fail(f"expected 'ROOT' or 'MOTION', got {described(tok, _WORDS)}", line)
        if tok == "ROOT" and stack:
            raise t.fail("expected JOINT inside a joint, got 'ROOT'", line)
        if tok in ("ROOT", "JOINT"):
            t.pos += 1
            name = t.name(tok, line)
            t.expect("{", f"{tok} name")
            joints.append(_Joint(name, stack[-1] if stack else -1, line))
            stack.append(len(joints) - 1)
        elif tok == "End":
            t.pos += 1
            t.expect("Site", "'End'")
            t.expect("{", "End Site")
            t.expect("OFFSET", "'End Site {'")
            offset = t.offset()
            t.expect("}", "the End Site OFFSET")
            joints.append(_Joint("", stack[-1], line, offset=offset, end_site=True))
        elif tok == "OFFSET":
            j = joints[stack[-1]]
            if j.offset is not None:
                raise t.fail(f"second OFFSET in joint {j.name!r}", line)
            t.pos += 1
            j.offset = t.offset()
        elif tok == "CHANNELS":
            j = joints[stack[-1]]
            if j.channels:
                raise t.fail(f"second CHANNELS in joint {j.name!r}", line)
            t.pos += 1
            t.channels(j)
        elif tok == "}":
            j = joints[stack.pop()]
            if j.offset is None:
                raise t.fail(f"joint {j.name!r} has no OFFSET", line)
            t.pos += 1
        elif t.done:
            raise t.fail(f"expected '}}' to close joint {joints[stack[-1]].name!r}", line)
        else:
            raise t.fail(
                f"expected OFFSET, CHANNELS, JOINT, End Site or '}}', got {described(tok, _WORDS)}",
                line,
            )
    if not joints:
        raise t.fail("HIERARCHY has no ROOT", t.last_line)
    return joints


def _name_end_sites(joints: list[_Joint]) -> None:
    """Name End Sites `<parent>_End`, made unique against every other joint name."""
    taken = {j.name for j in joints if not j.end_site}
    next_k: dict[str, int] = {}  # so that 2,000 End Sites of one joint stay linear
    for j in joints:
        if j.end_site:
            base = f"{joints[j.parent].name}_End"
            name, k = base, next_k.get(base, 1)
            while name in taken:
                k += 1
                name = f"{base}{k}"
            next_k[base] = k
            taken.add(name)
            j.name = name


def _check_row_count(path: object, body: str, joints: int, budget: int, line: int) -> None:
    """Refuse more rows x joints than `budget` before the rows are split into numbers.

    Counting newlines costs no memory; blank lines are only counted one by one when the
    quick count is already over the limit."""
    if over_budget(body.count("\n") + 1, joints, budget) is None:
        return
    rows = sum(1 for _ in _NONBLANK_LINE.finditer(body))
    problem = over_budget(rows, joints, budget)
    if problem:
        raise ClipFormatError(path, f"MOTION: {problem}", line=line)


def _parse_rows(path: object, body: str, width: int, first_line: int) -> Array:
    """All data rows as `(rows, width)` float64, with one conversion for the whole block (in
    C: no Python object per number, so a long clip reads in a few MB)."""
    num_lines = len(_NONBLANK_LINE.findall(body))
    if num_lines == 0:
        raise ClipFormatError(path, "MOTION has no data rows", line=first_line)
    values: Array | None = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # numpy warns, then stops, at a token it cannot read
            flat = np.fromstring(body, dtype=np.float64, sep=" ")
        if flat.size == num_lines * width:
            values = flat.reshape(num_lines, width)
    except (ValueError, DeprecationWarning):
        values = None
    if values is not None and np.all(np.abs(values) <= MAX_VALUE):
        return values
    # Slow path, only to say where the problem is.
    row = 0
    for k, line in enumerate(body.split("\n")):
        parts = line.split()
        if not parts:
            continue
        row += 1
        lineno = first_line + k
        if len(parts) != width:
            raise ClipFormatError(
                path, f"row {row} has {len(parts)} values, expected {width}", line=lineno
            )
        for p in parts:
            try:
                v = float(p)
            except ValueError:
                v = float("nan")
            if not math.isfinite(v):
                raise ClipFormatError(
                    path,
                    f"row {row}: expected a finite number, got {described(p, _NOT_FINITE)}",
                    line=lineno,
                )
            if abs(v) > MAX_VALUE:
                raise ClipFormatError(path, f"row {row}: {value_problem(v)}", line=lineno)
    raise ClipFormatError(path, "MOTION data could not be read", line=first_line)


def _euler_to_quat(angles_deg: Array, axes: Array) -> Array:
    """Quaternions `(S, J, 4)` of intrinsic Euler angles `(S, J, 3)` about axes `(J, 3)`.

    Slot k rotates about axis index axes[:, k]; the product is slot0 * slot1 * slot2, i.e.
    the rotation listed first is outermost (applied last to a column vector).
    """
    half = np.radians(angles_deg) * 0.5
    s, c = np.sin(half), np.cos(half)
    out = None
    for k in range(3):
        q = np.zeros((*half.shape[:2], 4))
        np.put_along_axis(
            q,
            np.broadcast_to(axes[None, :, k, None], (*half.shape[:2], 1)),
            s[..., k, None],
            axis=-1,
        )
        q[..., 3] = c[..., k]
        out = q if out is None else quat.mul(out, q)
    assert out is not None
    return out


def _build_clip(
    path: object,
    joints: list[_Joint],
    values: Array,
    frame_time: float,
    units: str,
    positions: str,
    warnings: list[str],
) -> Clip:
    num = len(joints)
    rows = values.shape[0]
    parents = np.array([j.parent for j in joints], dtype=np.int64)
    offsets = np.array([j.offset for j in joints], dtype=np.float64)

    trans = np.broadcast_to(offsets, (rows, num, 3)).copy()
    angles = np.zeros((rows, num, 3))
    axes = np.zeros((num, 3), dtype=np.int64)
    pj, pa, pc, rj, rk, rc = [], [], [], [], [], []
    col = 0
    for ji, j in enumerate(joints):
        k = 0
        for kind, axis in j.channels:
            if kind == "p":
                pj.append(ji)
                pa.append(axis)
                pc.append(col)
            else:
                rj.append(ji)
                rk.append(k)
                rc.append(col)
                axes[ji, k] = axis
                k += 1
            col += 1
    if pj:
        pj_a, pa_a = np.array(pj), np.array(pa)
        if _position_convention(joints, offsets, pj_a, pa_a, values[0, pc], positions, warnings):
            base = np.zeros(len(pj_a))
        else:
            base = np.where(parents[pj_a] >= 0, offsets[pj_a, pa_a], 0.0)
        trans[:, pj_a, pa_a] = base + values[:, pc]
    if rj:
        angles[:, rj, rk] = values[:, rc]
    rot = quat.normalize(_euler_to_quat(angles, axes))
    rot = quat.ensure_continuity(rot, axis=0)

    chosen = _choose_units(units, _bind_extent(offsets, parents), warnings)
    factor = chosen.to_cm
    skeleton = Skeleton.create(
        [j.name for j in joints], parents, bind_translations=offsets * factor
    )
    return Clip(
        skeleton=skeleton,
        sample_rate=1.0 / frame_time,
        rotations=rot,
        translations=trans * factor,
        scales=np.ones((rows, num, 3)),
        name=Path(inner_name(str(path))).stem,
        warnings=warnings,
        units=chosen,
        euler_orders=tuple(
            "".join("XYZ"[int(a)] for a in row) if len(set(row.tolist())) == 3 else "XYZ"
            for row in axes
        ),
    )


def _position_convention(
    joints: list[_Joint],
    offsets: Array,
    pj: Array,
    pa: Array,
    first: Array,
    positions: str,
    warnings: list[str],
) -> bool:
    """Whether non-root position channels replace the OFFSET (else they add to it).

    `pj`, `pa`: joint and axis of each position channel, `first` its value at frame 0. In
    "auto" each non-root joint with a channel and a non-zero OFFSET votes: first-frame values
    nearer its OFFSET than zero say "replace", nearer zero say "add"; the warning says how the
    joints voted, so a user who knows better can force the other reading."""
    if positions != "auto":
        return positions == "replace"
    votes = {"replace": 0, "add": 0}
    moved = sorted({int(j) for j in pj if joints[int(j)].parent >= 0})
    for j in moved:
        mine = pj == j
        off, v0 = offsets[j, pa[mine]], first[mine]
        if not np.any(off):
            continue  # both readings agree: no vote
        votes["replace" if np.linalg.norm(v0 - off) < np.linalg.norm(v0) else "add"] += 1
    if not moved:
        return False
    replace = votes["replace"] > votes["add"]
    how = (
        "the joint's local translation, replacing OFFSET (as Blender reads them)"
        if replace
        else "offsets added to OFFSET (as MakeHuman writes them)"
    )
    other = "add" if replace else "replace"
    voted = votes["replace"] + votes["add"]
    why = (
        f"first-frame values near OFFSET on {votes['replace']} and near zero on {votes['add']} "
        f"of {voted} joint(s) with a non-zero OFFSET"
        if voted
        else "every such joint has OFFSET 0, where both readings agree"
    )
    warnings.append(
        f"position channels of {len(moved)} non-root joint(s) read as {how}: {why} "
        f"(--bvh-positions {other} reads them the other way)"
    )
    return replace


def _choose_units(units: str, height: float, warnings: list[str]) -> Units:
    """The user's unit, or the human-height guess (cm with a warning when nothing fits)."""
    if units != "auto":
        return Units(units, UNIT_CM[units], "user", declared=None)
    guess = units_from_height(height)
    if guess is None:
        warnings.append(
            f"units: the skeleton is {height:.3g} units tall, which fits no human scale; "
            "taken as cm (choose with --units)"
        )
        return Units("cm", 1.0, "assumed", reason=f"skeleton {height:.3g} units tall")
    unit, reason = guess
    return Units(unit, UNIT_CM[unit], "auto", reason=reason + "; --units to override")


def _bind_extent(offsets: Array, parents: Array) -> float:
    """Largest axis-aligned extent of the joint positions in the bind pose (the 'height')."""
    pos = np.zeros_like(offsets)
    for j, p in enumerate(parents):
        pos[j] = offsets[j] + (pos[p] if p >= 0 else 0.0)
    return float(np.max(np.ptp(pos, axis=0)))


# ----------------------------------------------------------------------------- writer


def _quat_to_euler_zyx(q: Array) -> Array:
    """Degrees `(..., 3)` as (z, y, x) with R = Rz @ Ry @ Rx; gimbal lock puts all in z."""
    m = quat.to_matrix(quat.normalize(q))
    cy = np.hypot(m[..., 0, 0], m[..., 1, 0])
    lock = cy < 1e-9
    y = np.arctan2(-m[..., 2, 0], cy)
    z = np.where(
        lock, np.arctan2(-m[..., 0, 1], m[..., 1, 1]), np.arctan2(m[..., 1, 0], m[..., 0, 0])
    )
    x = np.where(lock, 0.0, np.arctan2(m[..., 2, 1], m[..., 2, 2]))
    return np.degrees(np.stack((z, y, x), axis=-1))


def _offsets(clip: Clip, tol: float) -> Array:
    """Each joint's OFFSET `(J, 3)`: the bind translation, unless a non-root joint's
    translation is constant at another value (then that value: no position channel needed)
    or it moves and its first-frame translation is nearer zero than its bind translation
    (then the first-frame translation, so that `read_bvh` reads the channels as replacing
    it). A root's channels replace its OFFSET in every reader: it keeps the bind value."""
    sk = clip.skeleton
    bind, first = sk.bind_translations, clip.translations[0]
    constant = np.all(np.abs(clip.translations - first) <= tol, axis=(0, 2))
    at_bind = np.all(np.abs(clip.translations - bind) <= tol, axis=(0, 2))
    near_zero = np.linalg.norm(first - bind, axis=-1) >= 0.5 * np.linalg.norm(first, axis=-1)
    use_first = (sk.parents >= 0) & ((constant & ~at_bind) | (~constant & near_zero))
    return np.where(use_first[:, None], first, bind)


def _is_end_site(clip: Clip, j: int, has_children: Array, tol: float) -> bool:
    sk = clip.skeleton
    p = int(sk.parents[j])
    if p < 0 or has_children[j] or sk.names[j] != f"{sk.names[p]}_End":
        return False
    rot_ok = np.all(np.abs(np.abs(clip.rotations[:, j, 3]) - 1.0) <= 1e-12) and np.allclose(
        sk.bind_rotations[j], quat.identity(), atol=1e-12
    )
    trans_ok = np.all(np.abs(clip.translations[:, j] - sk.bind_translations[j]) <= tol)
    return bool(rot_ok and trans_ok)


def bvh_name(name: str) -> str:
    """A name every reader takes as one: one word, no braces, control characters escaped
    (codec.printable: a NUL or ESC in a name corrupts the file)."""
    clean = "_".join(re.sub(r"[{}]", "_", escaped(name)).split())
    return clean or "joint"


def _without_scale(clip: Clip, warnings: list[str]) -> Clip:
    """The clip without scales, every joint where it was where that can be: a uniform scale
    (per sample) multiplies the translations of every joint below it; a non-uniform one is
    dropped, and `warnings` says which of each."""
    sk = clip.skeleton
    scales = clip.scales
    if np.all(scales == 1.0) and np.all(sk.bind_scales == 1.0):
        return clip

    def uniform(s: Array) -> tuple[Array, Array]:
        """Each joint's uniform scale (..., J) and whether it is uniform everywhere (J,)."""
        mean = s.mean(axis=-1)
        same = np.all(np.abs(s - mean[..., None]) <= 1e-6 * np.abs(mean[..., None]), axis=-1)
        return mean, same.reshape(-1, sk.num_joints).all(axis=0)

    u, ok = uniform(scales)
    ub, ok_bind = uniform(sk.bind_scales[None])
    ok &= ok_bind
    u, ub = np.where(ok, u, 1.0), np.where(ok, ub, 1.0)
    above = np.ones_like(u)  # (S, J) product of the uniform scales of each joint's ancestors
    above_bind = np.ones_like(ub)
    for j, p in enumerate(sk.parents):  # hierarchy order: a parent is done before its child
        if p >= 0:
            above[:, j] = above[:, p] * u[:, p]
            above_bind[:, j] = above_bind[:, p] * ub[:, p]
    scaled = np.any(np.abs(scales - 1.0) > 1e-6, axis=(0, 2)) | np.any(
        np.abs(sk.bind_scales - 1.0) > 1e-6, axis=1
    )
    for which, what in (
        (scaled & ok, "folded the uniform scale of {} joint(s) into the translations below"),
        (scaled & ~ok, "dropped the non-uniform scale of {} joint(s)"),
    ):
        names = [sk.names[j] for j in np.flatnonzero(which)]
        if names:
            shown = ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")
            warnings.append(f"BVH has no scale: {what.format(len(names))}: {shown}")
    skeleton = replace(
        sk,
        bind_translations=sk.bind_translations * above_bind[0][:, None],
        bind_scales=np.ones_like(sk.bind_scales),
    )
    return clip.replace(
        skeleton=skeleton,
        translations=clip.translations * above[..., None],
        scales=np.ones_like(scales),
        curves=None,
    )


def write_bvh(clip: Clip, path: str | os.PathLike[str], *, precision_digits: int = 6) -> list[str]:
    """Export `clip` as BVH (written whole or not at all); returns what was lost, as text.
    The file is `bvh_text`'s."""
    text, warnings = bvh_text(clip, precision_digits=precision_digits)
    with atomic_open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return warnings


def bvh_text(clip: Clip, *, precision_digits: int = 6) -> tuple[str, list[str]]:
    """The BVH text of `clip` and what it lost, as text.

    A lossy export for looking at a clip in a DCC: every joint gets ``Zrotation Yrotation
    Xrotation`` channels (angles unwrapped over time so curves do not jump by 360). Position
    channels are written where the motion needs them, as the joint's whole local translation
    (the convention Blender's importer and three.js read, and `read_bvh` detects): on roots,
    and on joints whose translation moves. A joint whose translation is constant has none: its
    OFFSET holds it (the bind translation when it is that), which every reader reads alike.
    A moving joint's OFFSET is its bind translation, or its first-frame translation where that
    is nearer zero than the bind translation, so that its first-frame values are always
    nearer its OFFSET than zero and `read_bvh`'s "auto" reads the file as written.
    Leaf joints named ``<parent>_End`` that never move are written as End Sites, which is
    how `read_bvh` names them, so a round trip keeps the skeleton. BVH has no scale: a
    uniform scale (an FBX rig's 100x armature) is folded into the translations below it,
    which keeps every joint where it was; a non-uniform one is dropped, and a warning says
    which. Names are one word (whitespace becomes `_`: assimp reads no other). Values are
    printed with `precision_digits` decimals (degrees and clip units).
    """
    if precision_digits < 0 or precision_digits > 15:
        raise ValueError(f"precision_digits must be 0..15, got {precision_digits}")
    warnings: list[str] = []
    clip = _without_scale(clip, warnings)
    sk = clip.skeleton
    num = sk.num_joints
    parents = sk.parents
    tol = 0.5 * 10.0 ** (-precision_digits)
    has_children = np.zeros(num, dtype=bool)
    has_children[parents[parents >= 0]] = True
    end_site = [_is_end_site(clip, j, has_children, tol) for j in range(num)]
    offsets = _offsets(clip, tol)
    six = (parents < 0) | np.any(np.abs(clip.translations - clip.translations[:1]) > tol, (0, 2))

    children: list[list[int]] = [[] for _ in range(num)]
    for j in range(num):
        if parents[j] >= 0:
            children[int(parents[j])].append(j)
    order: list[int] = []  # depth-first, the order of the MOTION columns
    fmt = f"%.{precision_digits}f"
    lines = ["HIERARCHY"]

    names = [bvh_name(n) for n in sk.names]
    renamed = sum(a != b for a, b in zip(names, sk.names, strict=True))
    if renamed:
        warnings.append(f"renamed {renamed} joint(s) whose names BVH cannot hold")
    chans = "Zrotation Yrotation Xrotation"
    todo: list[tuple[int, int, bool]] = [(int(r), 0, False) for r in np.flatnonzero(parents < 0)]
    todo.reverse()
    while todo:  # depth first without recursion: (joint, depth, closing)
        j, depth, closing = todo.pop()
        ind = "\t" * depth
        if closing:
            lines.append(f"{ind}}}")
            continue
        off = " ".join(fmt % v for v in offsets[j])
        if end_site[j]:
            lines.extend([f"{ind}End Site", f"{ind}{{", f"{ind}\tOFFSET {off}", f"{ind}}}"])
            continue
        order.append(j)
        kw = "ROOT" if parents[j] < 0 else "JOINT"
        lines.extend([f"{ind}{kw} {names[j]}", f"{ind}{{", f"{ind}\tOFFSET {off}"])
        if six[j]:
            lines.append(f"{ind}\tCHANNELS 6 Xposition Yposition Zposition {chans}")
        else:
            lines.append(f"{ind}\tCHANNELS 3 {chans}")
        todo.append((j, depth, True))
        todo.extend((c, depth + 1, False) for c in reversed(children[j]))

    idx = np.array(order)
    euler = _quat_to_euler_zyx(clip.rotations[:, idx])  # (S, n, 3)
    euler = np.degrees(np.unwrap(np.radians(euler), axis=0))
    pos = clip.translations[:, idx]
    cols = []
    for k, j in enumerate(order):
        if six[j]:
            cols.append(pos[:, k])
        cols.append(euler[:, k])
    table = np.concatenate(cols, axis=1) + 0.0  # + 0.0 turns -0.0 into 0.0
    lines.extend(
        ["MOTION", f"Frames: {clip.num_samples}", f"Frame Time: {1.0 / clip.sample_rate:.10g}"]
    )
    out = io.StringIO()
    out.write("\n".join(lines) + "\n")
    np.savetxt(out, table, fmt=fmt, delimiter=" ")
    return out.getvalue(), warnings


FORMAT = FormatSpec(
    name="bvh",
    label="BVH",
    extensions=(".bvh",),
    read=read_bvh,
    read_options=("units", "bvh_positions"),
    write=write_bvh,
    write_options=("precision_digits",),
    max_bytes=MAX_BVH_BYTES,
)
