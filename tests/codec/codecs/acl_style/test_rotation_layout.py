"""Rotations near 180 degrees keep their precision: the dropped component stays large."""

import numpy as np
import pytest

import codec
from codec.codecs.acl_style import rotation_layout
from codec.codecs.acl_style.quantize import F32, quantised
from codec.codecs.acl_style.rotation_layout import MIN_DROPPED
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
    still = np.zeros((64, 1, 3))
    starts, sizes = np.arange(0, 64, 16), np.full(4, 16)
    out = quantised(q, still, still, np.array([0]), np.array([1, 0, 0]), starts, sizes, MIN_DROPPED)
    clip_layout, per_segment, values = out[0], out[1], out[2]
    assert clip_layout[0] == rotation_layout.PER_SEGMENT
    assert len(set(per_segment[:, 0].tolist())) > 1
    for g, first in enumerate(starts):
        d = per_segment[g, 0]
        seg = q[first : first + 16, 0]
        assert np.abs(seg[:, d]).min() >= 0.5  # the rebuilt component never comes near zero
        # stored: the kept components of the rotation signed so the dropped one is >= 0
        signed = np.where(seg[:, d : d + 1] < 0, -seg, seg)
        kept = rotation_layout.kept_components(np.array(d))
        np.testing.assert_array_equal(values[first : first + 16, 0], signed[:, kept].astype(F32))


def test_an_ordinary_rotation_drops_w_for_the_whole_clip():
    q = quat.from_axis_angle(np.array([0, 0, 1.0]), np.linspace(-1.0, 1.0, 40))[:, None]
    still = np.zeros((40, 1, 3))
    out = quantised(
        q,
        still,
        still,
        np.array([0]),
        np.array([1, 0, 0]),
        np.array([0, 20]),
        np.array([20, 20]),
        MIN_DROPPED,
    )
    assert out[0][0] == rotation_layout.W and np.all(out[1][:, 0] == rotation_layout.W)


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
