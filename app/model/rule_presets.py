"""Rule presets: named lists of override rules a tech animator applies to any clip.

Fingers, face and IK ship as defaults (each a pattern of `|` alternatives, the matcher's
syntax: codec.name_pattern); the user's own are saved per user as JSON text (the window keeps
it in its QSettings) and may replace a default of the same name. Qt-free: the Joints panel
reads and writes the text.
"""

from __future__ import annotations

import json
from dataclasses import asdict

from codec.tuning import JointOverride

PRESETS_KEY = "rules/presets"  # the window's QSettings key of the user's presets (JSON text)

FINGERS = "*Thumb*|*Index*|*Mid*|*Ring*|*Pinky*|*Finger*|!*Toe*"
FACE = "*Jaw*|*Eye*|*Brow*|*Lid*|*Lip*|*Cheek*|*Nose*|*Mouth*|*Tongue*|*Teeth*|*Face*"
IK = "*IK*|*Target*|*Pole*"

# fingers and faces are small and seen close up: tighter than the 0.01 cm default; IK
# joints are read by runtime IK (a hand's target), so their position matters to the bit
DEFAULTS: dict[str, tuple[JointOverride, ...]] = {
    "Fingers (0.005 cm)": (JointOverride(FINGERS, precision=0.005),),
    "Face (0.002 cm)": (JointOverride(FACE, precision=0.002),),
    "IK joints (0.001 cm)": (JointOverride(IK, precision=0.001),),
}


def read_presets(text: str | None) -> dict[str, tuple[JointOverride, ...]]:
    """The user's presets from their saved JSON text ({name: [rule, ...]}); a damaged or
    foreign text gives none rather than failing the panel."""
    if not text:
        return {}
    try:
        data = json.loads(text)
        return {
            str(name): tuple(JointOverride(**rule) for rule in rules)
            for name, rules in data.items()
        }
    except (ValueError, TypeError, AttributeError):
        return {}


def write_presets(presets: dict[str, tuple[JointOverride, ...]]) -> str:
    """The JSON text of the user's presets."""
    return json.dumps(
        {name: [asdict(rule) for rule in rules] for name, rules in presets.items()}, indent=1
    )


def all_presets(user_text: str | None) -> dict[str, tuple[JointOverride, ...]]:
    """Defaults then the user's own (a user preset of a default's name replaces it)."""
    return {**DEFAULTS, **read_presets(user_text)}
