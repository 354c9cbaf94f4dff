"""Destructive cleaning: sub-tracks that are nearly their default snapped exactly to it.

Seed 003: a sub-track that stays within a hair of its bind value is stored as default, but
the hair is still there in the raw clip, and along a long chain of such sub-tracks the hairs
add up to an error the optimiser then chases with bits it can never make pay. Snapping those
sub-tracks to exactly the bind value first removes the chase; it also changes the raw clip,
which is why it is opt-in and says what it changed: every snapped sub-track with how far it
moved its joint's shell points (local space), and the largest object-space error between the
clip as read and the cleaned one (what a viewer of the original would see), measured as
every error is.

A sub-track is snapped when holding its bind value moves the joint's own shell points (its
shell distance) by at most `tolerance` (clip units) at every sample, in the joint's local
space. Sub-tracks exactly at the bind value already are left alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from codec.codecs.base import SUB_TRACKS
from codec.measure.error_metric import clip_errors
from codec.model.clip import Clip
from codec.model.transforms import qvv_to_matrix

Array = np.ndarray


def local_shifts(clip: Clip) -> Array:
    """(J, 3): per joint and sub-track, the largest distance any of the joint's shell points
    moves in its local space when that sub-track alone holds its bind value (every sample)."""
    sk = clip.skeleton
    raw = (clip.rotations, clip.translations, clip.scales)
    bind = (sk.bind_rotations, sk.bind_translations, sk.bind_scales)
    m_raw = qvv_to_matrix(*raw)  # (S, J, 3, 4)
    d = sk.shell_distance[None, :, None]
    out = np.zeros((clip.num_joints, 3))
    for k in range(3):
        held = tuple(np.broadcast_to(bind[i], raw[i].shape) if i == k else raw[i] for i in range(3))
        diff = m_raw - qvv_to_matrix(*held)
        # the three shell points (d, 0, 0), (0, d, 0), (0, 0, d): column i times d, plus t
        moved = np.linalg.norm(diff[..., :3] * d[..., None] + diff[..., 3:], axis=-2)
        out[:, k] = moved.max(axis=(0, 2))
    return out


def clean(clip: Clip, tolerance: float) -> tuple[Clip, dict[str, Any]]:
    """The clip with every near-default sub-track (module docstring) snapped to its bind
    value, and the report of what changed (the stats' `default_cleaning`)."""
    sk = clip.skeleton
    bind = (sk.bind_rotations, sk.bind_translations, sk.bind_scales)
    raw = [clip.rotations, clip.translations, clip.scales]
    exact = np.stack(
        [np.all(raw[k] == bind[k][None], axis=(0, 2)) for k in range(3)], axis=1
    )  # (J, 3)
    exact[:, 0] |= np.all(clip.rotations == -sk.bind_rotations[None], axis=(0, 2))
    shifts = local_shifts(clip)
    snap = (shifts <= tolerance) & ~exact
    changed = []
    for j, k in np.argwhere(snap):
        changed.append(
            {"joint": sk.names[j], "sub_track": SUB_TRACKS[k], "local_shift": float(shifts[j, k])}
        )
    report: dict[str, Any] = {
        "tolerance": float(tolerance),
        "num_snapped": len(changed),
        "snapped": changed,
        "max_error_vs_read": 0.0,
    }
    if not changed:
        return clip, report
    for k in range(3):
        joints = np.flatnonzero(snap[:, k])
        if len(joints):
            raw[k] = raw[k].copy()
            raw[k][:, joints] = bind[k][joints]
    cleaned = clip.replace(rotations=raw[0], translations=raw[1], scales=raw[2])
    errors = clip_errors(clip, cleaned)
    worst = np.unravel_index(int(np.argmax(errors)), errors.shape)
    report["max_error_vs_read"] = float(errors[worst])
    report["worst_joint_vs_read"] = sk.names[int(worst[1])]
    return cleaned, report
