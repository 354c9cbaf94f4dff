"""Units and up axis: what a file declares, what Shellscope chose, and the sentence saying so.

Every clip Shellscope builds is in centimetres, because precision (0.01) and shell distance
(3) are centimetre budgets. Formats differ in what they tell: FBX and USD declare a unit and
axes, glTF is metres and +Y up by specification, BVH and ACL SJSON declare nothing. A wrong
unit silently turns a 0.01 cm budget into 0.01 inch or 0.01 m, so the choice is a fact shown
to the user every time (`Units.statement`), never a guess kept quiet.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# one unit of each name, in centimetres; "cmu" is the CMU mocap unit (ASF `length 0.45`:
# a value times 1/0.45 is inches), in which a person is about 20-35 units tall
UNIT_CM: dict[str, float] = {
    "mm": 0.1,
    "cm": 1.0,
    "dm": 10.0,
    "m": 100.0,
    "inch": 2.54,
    "ft": 30.48,
    "cmu": 2.54 / 0.45,
}
UNIT_WORDS = {
    "mm": "millimetres",
    "cm": "centimetres",
    "dm": "decimetres",
    "m": "metres",
    "inch": "inches",
    "ft": "feet",
    "cmu": "CMU units (1/0.45 inch)",
}
# The skeleton height (largest bind-pose extent) a human rig has in each unit: typical human
# heights, and what the shared BVH files measure (CMU 24-26, MakeHuman dm 16.6, salsa m
# 1.19, cm rigs 132-173). Ranges do not overlap; a height in none of them is reported, not
# guessed.
HUMAN_HEIGHT: dict[str, tuple[float, float]] = {
    "m": (0.7, 3.0),
    "dm": (7.0, 20.5),
    "cmu": (20.5, 45.0),
    "inch": (45.0, 100.0),
    "cm": (100.0, 300.0),
    "mm": (700.0, 3000.0),
}
USER_UNITS = ("auto", *UNIT_CM)


@dataclass(frozen=True)
class Units:
    """Facts about a clip's units and axes.

    `unit` is what one value of the file was taken to be (a name of UNIT_CM, or e.g.
    "0.0254 m" for a declared unit with no name); `to_cm` the factor applied to reach the
    clip's centimetres. `chosen_by` is "file" (declared), "format" (fixed by the format's
    specification), "auto" (skeleton-height heuristic), "user" (--units) or "assumed".
    `declared` is the file's own statement (None when it makes none); `up_axis` "+Y", "+Z",
    ... as declared (None: not declared), `axes` the full declared frame when there is one.
    """

    unit: str
    to_cm: float
    chosen_by: str
    declared: str | None = None
    reason: str = ""
    up_axis: str | None = None
    axes: str = ""

    @property
    def unit_words(self) -> str:
        return UNIT_WORDS.get(self.unit, self.unit)

    def statement(self) -> str:
        """One line for the CLI summary and the window: units, how chosen, up axis."""
        how = {
            "file": "as the file declares",
            "format": "as the format specifies",
            "auto": "guessed",
            "user": "as given by --units",
            "assumed": "assumed",
        }.get(self.chosen_by, self.chosen_by)
        text = f"units: {self.unit_words} {how}"
        if self.reason:
            text += f" ({self.reason})"
        if self.chosen_by == "user" and self.declared:
            text += f"; the file declares {self.declared}"
        text += "; shown in cm" + (f" (x{self.to_cm:.6g})" if self.to_cm != 1.0 else "")
        if self.up_axis:
            text += f"; up axis {self.up_axis}"
            if self.axes:
                text += f" ({self.axes})"
        else:
            text += "; up axis not declared"
        return text

    def short(self) -> str:
        """A few words for a title or status bar: 'm (file) -> cm, +Y up'."""
        up = f", {self.up_axis} up" if self.up_axis else ""
        shown = "" if self.to_cm == 1.0 else " \u2192 cm"
        return f"{self.unit} ({self.chosen_by}){shown}{up}"


def unit_name_for_metres(meters: float) -> str:
    """The UNIT_CM name of a unit `meters` long, or a '<x> m' text when none matches."""
    for name, cm in UNIT_CM.items():
        if math.isclose(cm / 100.0, meters, rel_tol=1e-6):
            return name
    return f"{meters:.6g} m"


def user_units(
    requested: str | None,
    declared: Units,
) -> Units:
    """`declared` unless the user asked for a unit by name (anything but None / "auto")."""
    if requested in (None, "auto"):
        return declared
    if requested not in UNIT_CM:
        raise ValueError(f"units must be one of {', '.join(USER_UNITS)}; got {requested!r}")
    return Units(
        unit=requested,
        to_cm=UNIT_CM[requested],
        chosen_by="user",
        declared=declared.declared,
        up_axis=declared.up_axis,
        axes=declared.axes,
    )


def units_from_height(height: float) -> tuple[str, str] | None:
    """(unit, reason) for a human-sized skeleton `height` units tall, or None if no unit fits."""
    for name, (lo, hi) in HUMAN_HEIGHT.items():
        if lo <= height < hi:
            return name, (
                f"skeleton {height:.3g} units tall; a human rig is {lo:g}-{hi:g} units in "
                f"{UNIT_WORDS[name]}"
            )
    return None
