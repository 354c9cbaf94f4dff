"""Rotations near 180 degrees keep their precision: the dropped component stays large."""

import numpy as np
import pytest

import codec
from codec.codecs.acl_style import rotation_layout
from codec.compression import compress
from codec.model import quat
from codec.settings import CompressionSettings
from tests.codec.helpers import DATA


def test_w_is_kept_out_for_ordinary_rotations_and_a_large_component_otherwise():
    q = quat.from_axis_angle(np.array([[0, 0, 1.0]] * 3), np.array([0.3, 3.1, -3.1]))
    np.testing.assert_array_equal(rotation_layout.choose_constant(q), [3, 2, 2])


def test_a_rotation_turning_through_180_degrees_varies_by_segment():
    t = np.linspace(0, 1, 64)
    q = quat.from_axis_angle(np.array([0, 1.0, 0]), 2 * np.pi * t)[:, None]  # a full turn
    table = np.array([[0, 16], [16, 16], [32, 16], [48, 16]])
    mins = np.stack([np.abs(q[a : a + n]).min(axis=0) for a, n in table])
    clip_layout, per_segment = rotation_layout.choose(mins)
    assert clip_layout[0] == rotation_layout.PER_SEGMENT
    for g, (first, n) in enumerate(table):
        seg = np.abs(q[first : first + n, 0, per_segment[g, 0]])
        assert seg.min() >= 0.5  # the rebuilt component never comes near zero
    signed = rotation_layout.signed(q[:, 0], per_segment[np.arange(64) // 16, 0])
    assert np.all(np.take_along_axis(signed, per_segment[np.arange(64) // 16][:, :1], 1) >= 0)


def test_kept_components_skip_the_dropped_one():
    np.testing.assert_array_equal(
        rotation_layout.kept_components(np.array([-1, 0, 1, 2, 3])),
        [[0, 1, 2], [1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]],
    )


@pytest.mark.parametrize("animation", ["Walk", "Run", "Survey"])
def test_fox_legs_near_180_degrees_meet_strict_precision(animation):
    """b_RightLeg01_019 reaches |w| = 0.00023: drop-w could not hold it even with raw floats."""
    clip = codec.load_clip(DATA / "gltf" / "Fox.glb", animation=animation)
    if animation != "Survey":
        assert np.abs(clip.rotations[..., 3]).min() < 0.01
    r = compress(clip, CompressionSettings(precision=0.01))
    assert r.stats["precision_met"], r.stats["joints_over_precision"]
    assert r.stats["max_error"] <= 0.01
    codes = np.concatenate((r.decoder.encoded.const_dropped, r.decoder.encoded.clip_layout))
    assert np.any((codes >= 0) & (codes != rotation_layout.W))  # the layouts are in use
