"""--clean-defaults (codec.default_cleaning): near-default sub-tracks snapped, and said."""

from __future__ import annotations

import numpy as np

from codec.compression import compress
from codec.default_cleaning import clean, local_shifts
from codec.measure.error_metric import clip_errors
from codec.settings import CompressionSettings
from tests.codec.helpers import chain_clip


def _hairy(clip):
    """`clip` with joint 1's translation a hair (1e-4 cm) off its bind value, joint 2's
    rotation well off it."""
    sk = clip.skeleton
    tr = clip.translations.copy()
    tr[:, 1] = sk.bind_translations[1] + 1e-4 * np.sin(np.arange(clip.num_samples))[:, None]
    rot = clip.rotations.copy()
    rot[:, 2] = [0.0, 0.2, 0.0, np.sqrt(1 - 0.04)]
    return clip.replace(translations=tr, rotations=rot)


def test_only_sub_tracks_within_the_tolerance_are_snapped_and_the_report_says_so() -> None:
    clip = _hairy(chain_clip(num_samples=12, num_joints=4))
    shifts = local_shifts(clip)
    offset = np.linalg.norm(clip.translations[:, 1] - clip.skeleton.bind_translations[1], axis=-1)
    assert shifts[1, 1] == np.float64(offset.max()) or abs(shifts[1, 1] - offset.max()) < 1e-15
    cleaned, report = clean(clip, 2e-4)  # the hair is at most sqrt(3) 1e-4
    snapped = {(c["joint"], c["sub_track"]) for c in report["snapped"]}
    names = clip.skeleton.names
    assert (names[1], "translation") in snapped and (names[2], "rotation") not in snapped
    assert report["num_snapped"] == len(snapped)
    assert np.all(cleaned.translations[:, 1] == clip.skeleton.bind_translations[1])
    np.testing.assert_array_equal(cleaned.rotations[:, 2], clip.rotations[:, 2])
    assert report["max_error_vs_read"] == clip_errors(clip, cleaned).max() > 0
    untouched, nothing = clean(clip, 1e-6)
    assert untouched is clip or nothing["num_snapped"] == 0


def test_a_cleaned_run_measures_the_cleaned_clip_and_reports_it() -> None:
    clip = _hairy(chain_clip(num_samples=12, num_joints=4))
    fast = {"supersample": 0, "skin_error": False, "bind": "strip"}
    result = compress(clip, CompressionSettings(clean_defaults=2e-4, **fast))
    report = result.stats["default_cleaning"]
    assert report["num_snapped"] >= 1
    assert np.all(result.clip.translations[:, 1] == clip.skeleton.bind_translations[1])
    assert "default_cleaning" not in compress(clip, CompressionSettings(**fast)).stats
