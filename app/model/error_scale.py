"""The one error colour scale and the one way to write an error, shared by every view.

Colours are in units of *budget fraction*: a joint's error divided by its own precision. The
optimiser spends 80-99 % of every budget on purpose, so a scale that warms up from zero cries
wolf on every joint. This one stays neutral below half the budget, warms through amber to
orange as the error nears the budget, and turns red only over it. Qt-free, so the 3D view, the
heat map, the legends and the tests use the very same numbers.

Errors are centimetres (every reader hands over cm), written in engineering notation
(exponents in steps of three: 84.5e-6 cm, 9.99e-3 cm) so that values a thousand times apart
stay comparable at a glance.
"""

from __future__ import annotations

import math

import numpy as np

Array = np.ndarray

NEUTRAL_BELOW = 0.5  # budget fraction under which the colour says "fine"
OVER_BUDGET_TOLERANCE = 1e-9  # float noise at exactly the budget is not "over"
# budget fraction -> RGB (0..1); the scale is continuous up to 1, then a step to red
STOPS = np.array([0.0, 0.5, 0.75, 1.0])
COLORS = np.array(
    [
        [0.74, 0.75, 0.76],  # neutral light grey
        [0.80, 0.80, 0.78],  # still neutral at half the budget
        [0.98, 0.78, 0.30],  # amber
        [1.00, 0.52, 0.10],  # orange: at the budget
    ]
)
OVER = np.array([0.90, 0.10, 0.12])  # red: over the budget, and only then
LEGEND_MAX = 1.25  # the colour bar shows 0 .. 125 % so the red zone has room


def budget_fraction(error: Array, precision: Array | float) -> Array:
    """error / precision, elementwise (shapes broadcast); NaN and negative become 0."""
    p = np.asarray(precision, dtype=np.float64)
    f = np.asarray(error, dtype=np.float64) / np.where(p > 0, p, np.inf)
    return np.clip(np.nan_to_num(f, nan=0.0, posinf=np.inf), 0.0, None)


def is_over(fraction: Array) -> Array:
    return np.asarray(fraction) > 1.0 + OVER_BUDGET_TOLERANCE


def error_colors(fraction: Array, alpha: float = 1.0) -> Array:
    """(..., 4) float RGBA of budget fractions (...)."""
    f = np.asarray(fraction, dtype=np.float64)
    rgb = np.stack([np.interp(f, STOPS, COLORS[:, k]) for k in range(3)], axis=-1)
    rgb = np.where(is_over(f)[..., None], OVER, rgb)
    return np.concatenate([rgb, np.full((*f.shape, 1), alpha)], axis=-1)


def error_colors_u8(fraction: Array) -> Array:
    """(..., 4) uint8 RGBA, for images."""
    return np.round(error_colors(fraction) * 255).astype(np.uint8)


def legend_stops() -> list[tuple[float, tuple[float, float, float]]]:
    """(position 0..1 along a bar spanning 0..LEGEND_MAX, RGB) for drawing the scale; the
    step to red at the budget is two stops at the same place."""
    out = [
        (float(s / LEGEND_MAX), tuple(map(float, c))) for s, c in zip(STOPS, COLORS, strict=True)
    ]
    edge = 1.0 / LEGEND_MAX
    out.append((edge + 1e-6, tuple(map(float, OVER))))
    out.append((1.0, tuple(map(float, OVER))))
    return out


# --- writing numbers --------------------------------------------------------------------
MINUS = "\u2212"


def _exp3(value: float, digits: int) -> tuple[int, str]:
    """(exponent, mantissa text) of `value` in engineering notation, the mantissa rounded to
    `digits` significant digits and kept in [1, 1000) after that rounding."""
    v = float(value)
    exp3 = int(math.floor(math.log10(abs(v)) / 3.0)) * 3
    text = f"{v / 10.0**exp3:.{digits}g}"
    if abs(float(text)) >= 1000:  # 999.96e-6 rounds up to 1.00e-3
        exp3 += 3
        text = f"{v / 10.0**exp3:.{digits}g}"
    return exp3, text


def eng(value: float, digits: int = 3) -> str:
    """Engineering notation with `digits` significant digits: 84.5e-6, 9.99e-3, 42.1, 1.23e3;
    from 0.1 to 1 a plain decimal (0.25, 0.9995: "999.5e-3 cm" reads badly for a length just
    under a centimetre). Zero is "0"; a real minus sign."""
    v = float(value)
    if v == 0.0 or not math.isfinite(v):
        return "0" if v == 0.0 else str(v)
    exp3, text = _exp3(v, digits)
    if exp3 == -3 and abs(float(text)) >= 100:
        text, exp3 = f"{v:.{digits}g}", 0
    out = text if exp3 == 0 else f"{text}e{exp3}"
    return out.replace("-", MINUS)


def eng_ticks(values: list[float], spacing: float) -> list[str]:
    """Axis labels sharing one exponent, with as many decimals as the tick spacing needs:
    0, 0.2 ... 1 at a 1 cm budget (not 800e-3), 2e-3 ... 12e-3 at 0.01 cm."""
    finite = [abs(float(v)) for v in values if math.isfinite(v) and v != 0]
    if not finite:
        return ["0" for _ in values]
    top = max(finite)
    exp3 = _exp3(top, 3)[0]
    if exp3 == -3 and top >= 0.1 * (1 - 1e-9):
        exp3 = 0
    scale = 10.0**exp3
    step = abs(float(spacing)) / scale if spacing else 1.0
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    out = []
    for v in values:
        m = float(v) / scale
        if abs(m) < 0.5 * 10.0**-decimals:
            out.append("0")
            continue
        text = f"{m:.{decimals}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        out.append((text if exp3 == 0 else f"{text}e{exp3}").replace("-", MINUS))
    return out


def format_rate(hz: float) -> str:
    """A sample rate as the file means it: "60 Hz" for 59.9988 (float noise of a frame
    time), "29.97 Hz", "23.976 Hz" (three decimals at most)."""
    v = float(hz)
    if not math.isfinite(v):
        return f"{v} Hz"
    nearest = round(v)
    if nearest and abs(v - nearest) <= 0.005:
        return f"{nearest:d} Hz"
    text = f"{v:.3f}".rstrip("0").rstrip(".")
    return f"{text} Hz"


def format_cm(value: float, signed: bool = False, digits: int = 4) -> str:
    """An error or a length in centimetres: "9.987e-3 cm", "+84.53e-6 cm" with `signed`.
    At least `digits` significant digits, more where rounding would make the value read as
    a rounder number than it is: 9.9987e-3 is "9.9987e-3", never "10e-3", the budget it is
    under (budgets are round numbers: an error just under or over one keeps its digits)."""
    v = float(value)
    text = eng(v, digits)
    while digits < 9 and math.isfinite(v) and _reads_rounder(text, v, digits):
        digits += 1
        text = eng(v, digits)
    if signed and float(value) > 0:
        text = "+" + text
    return f"{text} cm"


def _reads_rounder(text: str, value: float, digits: int) -> bool:
    """Whether `text` (eng's) shows fewer than `digits` significant digits for a value it
    does not equal: rounding made it a round number ("10e-3" for 9.9987e-3)."""
    plain = text.replace(MINUS, "-")
    mantissa = plain.split("e")[0].lstrip("-").replace(".", "").strip("0")
    return len(mantissa) < digits and float(plain) != value


ROUND_STEPS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)


def round_up(value: float) -> float:
    """The smallest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k that is >= `value` (> 0).

    An axis whose end is rounded so stays put while the data moves a little (an edit, each
    tick of a slider drag), and so do its ticks: pyqtgraph draws an axis again, ticks, labels
    and grid, whenever its range changes. Steps are at most 1.33x apart."""
    v = float(value)
    if not math.isfinite(v) or v <= 0.0:
        return v
    exp = math.floor(math.log10(v))
    for step in ROUND_STEPS:
        top = step * 10.0**exp
        if top >= v * (1 - 1e-12):
            return top
    return 10.0 ** (exp + 1)


def format_seconds(seconds: float) -> str:
    """A duration of work: "1.24 s", "38.2 ms", "0.4 ms", "< 0.1 ms" (not "0.00 s" for a
    small clip's encode)."""
    v = float(seconds)
    if v >= 1.0:
        return f"{v:.2f} s"
    ms = 1e3 * v
    if ms < 0.05:
        return "< 0.1 ms"
    return f"{ms:.1f} ms" if ms < 100 else f"{ms:.0f} ms"


def format_budget(value: float) -> str:
    """A budget as the user typed it: "0.01 cm", "0.0025 cm", "1e-05 cm". Budgets are round
    numbers someone chose, so a plain decimal reads as the setting (not "10e-3 cm")."""
    return f"{float(value):.6g} cm"


def format_percent(fraction: float) -> str:
    """A budget fraction as a percentage: "41 %", "7.5 %", "120 %"."""
    pct = 100.0 * float(fraction)
    if not math.isfinite(pct):
        return "\u221e %"
    text = f"{pct:.0f}" if abs(pct) >= 10 else f"{pct:.1f}"
    if pct < 100.0 and float(text) >= 100.0:  # under budget never reads as "100 %"
        text = f"{math.floor(pct * 10) / 10:.1f}"
    return f"{text} %"


def describe(error: float, precision: float) -> str:
    """ "4.11e-3 cm · 41 % of its 0.01 cm budget": an error with its share of the budget."""
    f = float(budget_fraction(error, precision))
    return f"{format_cm(error)} \u00b7 {format_percent(f)} of its {format_budget(precision)} budget"
