"""The one error colour scale (budget fractions) and the one way to write an error."""

from __future__ import annotations

import numpy as np
import pytest

from app.model.error_scale import (
    LEGEND_MAX,
    MINUS,
    budget_fraction,
    describe,
    eng,
    eng_ticks,
    error_colors,
    format_budget,
    format_cm,
    format_percent,
    format_rate,
    format_seconds,
    legend_stops,
    round_up,
)


def _saturation(rgb: np.ndarray) -> np.ndarray:
    return rgb.max(axis=-1) - rgb.min(axis=-1)


def test_neutral_below_half_warm_towards_the_budget_red_only_over_it() -> None:
    f = np.linspace(0.0, 3.0, 3001)
    rgb = error_colors(f)[:, :3]
    calm = f <= 0.5
    assert np.all(_saturation(rgb[calm]) < 0.05)  # greys: nothing to look at
    warming = (f > 0.5) & (f <= 1.0)
    assert np.all(np.diff(_saturation(rgb[warming])) >= -1e-9)  # warmer and warmer
    assert np.all(rgb[warming, 0] >= rgb[warming, 2])  # warm hues: red over blue
    red = (rgb[:, 0] > 0.8) & (rgb[:, 1] < 0.3) & (rgb[:, 2] < 0.3)
    np.testing.assert_array_equal(red, f > 1.0)  # red exactly when over budget
    # what the optimiser produces (80-99 % of every budget) is never red
    assert not red[(f >= 0.8) & (f <= 0.99)].any()


def test_budget_fraction_and_legend() -> None:
    err = np.array([[0.005, 0.02], [0.0, np.nan]])
    np.testing.assert_allclose(budget_fraction(err, np.array([0.01, 0.01])), [[0.5, 2.0], [0, 0]])
    stops = legend_stops()
    assert stops[0][0] == 0.0 and stops[-1][0] == 1.0
    at_budget = [c for pos, c in stops if abs(pos - 1.0 / LEGEND_MAX) < 1e-3]
    assert len(at_budget) == 2 and at_budget[0] != at_budget[1]  # a step to red at 100 %


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.01, "10e\u22123"),
        (8.453e-05, "84.5e\u22126"),
        (0.00999, "9.99e\u22123"),
        (421.3, "421"),
        (1234.0, "1.23e3"),
        (-8.453e-05, "\u221284.5e\u22126"),
        (0.25, "0.25"),
        (0.9995, "1"),  # three digits: rounds up to one centimetre, not 1e3e-3
        (0.0999, "99.9e\u22123"),
        (0.09996, "0.1"),
        (0.0, "0"),
        (0.00099996, "1e\u22123"),
    ],
)
def test_engineering_notation(value: float, text: str) -> None:
    assert eng(value) == text


def test_errors_in_cm_and_percent_never_round_up_to_the_budget() -> None:
    assert format_cm(0.0099982) == "9.998e\u22123 cm"
    assert format_cm(-8.453e-05, signed=True) == "\u221284.53e\u22126 cm"
    assert format_cm(8.453e-05, signed=True).startswith("+")
    assert format_percent(0.41) == "41 %" and format_percent(0.075) == "7.5 %"
    assert format_percent(0.9996) == "99.9 %"  # under budget never reads as 100 %
    # however few digits are asked for, a value is never shown as the round budget it is
    # under or over (the Compare table's three digits printed 9.9987e-3 as "10e-3")
    assert format_cm(9.9987e-3, digits=3) == "9.999e\u22123 cm"
    assert format_cm(10.00004e-3, digits=3) == "10.00004e\u22123 cm"
    assert format_cm(10e-3, digits=3) == "10e\u22123 cm"  # the budget itself stays round
    assert format_seconds(0.0) == "< 0.1 ms" and format_seconds(0.0042) == "4.2 ms"
    assert format_seconds(2.5) == "2.50 s"  # a first open's encode is not "0.00 s"
    assert format_percent(1.0) == "100 %" and format_percent(1.2) == "120 %"


def test_lengths_just_under_a_centimetre_read_as_decimals_not_999e_3() -> None:
    assert format_cm(0.9995) == "0.9995 cm"
    assert format_cm(0.99996) == "0.99996 cm"  # not "1 cm", and the mantissa never 1000
    assert format_cm(0.25) == "0.25 cm" and format_cm(0.0025) == "2.5e\u22123 cm"
    for v in np.geomspace(1e-7, 1e4, 2000):  # the mantissa stays in [1, 1000) after rounding
        for digits in (3, 4):
            text = eng(v, digits).replace(MINUS, "-")
            mantissa = float(text.split("e")[0])
            assert 1 <= mantissa < 1000 or 0.1 <= mantissa < 1, (v, text)
            assert float(text) == pytest.approx(v, rel=10 ** (1 - digits))


@pytest.mark.parametrize(
    ("values", "spacing", "labels"),
    [
        ([0.0, 0.2, 0.4, 0.6, 0.8, 1.0], 0.2, ["0", "0.2", "0.4", "0.6", "0.8", "1"]),
        ([0.0, 0.002, 0.004, 0.01, 0.012], 0.002, ["0", "2e-3", "4e-3", "10e-3", "12e-3"]),
        ([0.0, 0.05, 0.1, 0.15], 0.05, ["0", "0.05", "0.1", "0.15"]),
        ([0.0, 0.5e-5, 1e-5], 0.5e-5, ["0", "5e-6", "10e-6"]),
        ([0.0, 5.0, 10.0, 15.0], 5.0, ["0", "5", "10", "15"]),
        ([2000.0, 4000.0], 2000.0, ["2e3", "4e3"]),
    ],
)
def test_axis_labels_share_one_exponent(values, spacing, labels) -> None:
    assert [t.replace(MINUS, "-") for t in eng_ticks(values, spacing)] == labels


@pytest.mark.parametrize(
    ("hz", "text"),
    [
        (59.9988, "60 Hz"),
        (30.0, "30 Hz"),
        (120.00000001, "120 Hz"),
        (29.97002997, "29.97 Hz"),
        (23.976023976, "23.976 Hz"),
        (12.5, "12.5 Hz"),
    ],
)
def test_sample_rates_read_as_the_file_means_them(hz: float, text: str) -> None:
    assert format_rate(hz) == text


@pytest.mark.parametrize(
    ("precision", "text"),
    [(0.01, "0.01 cm"), (0.0025, "0.0025 cm"), (1.0, "1 cm"), (1e-5, "1e-05 cm")],
)
def test_budgets_read_as_the_user_set_them(precision: float, text: str) -> None:
    assert format_budget(precision) == text
    said = describe(0.00441, precision)
    assert said.endswith(f"of its {text} budget") and "10e-3" not in said


def test_round_up_gives_the_next_round_axis_end() -> None:
    assert round_up(0.0112) == pytest.approx(0.012)
    assert round_up(0.012) == pytest.approx(0.012)  # already round: kept
    assert round_up(0.0121) == pytest.approx(0.015)
    assert round_up(8.1) == pytest.approx(10.0)
    assert round_up(1.0) == pytest.approx(1.0)
    assert round_up(3.3e-5) == pytest.approx(4e-5)
    xs = np.geomspace(1e-6, 1e3, 500)
    ends = np.array([round_up(x) for x in xs])
    assert np.all(ends >= xs * (1 - 1e-12)) and np.all(ends <= xs * 1.34)
