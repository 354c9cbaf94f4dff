"""Hand-made clips and compression results for the panel tests (no codec run needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import codec
from app.controller import Controller
from app.model.document import Document
from codec.codecs.base import TrackCosts, TrackKind
from codec.measure.measure import Measurements
from codec.measure.shells import DominantShells
from codec.model.clip import Clip, Skeleton
from codec.result import Result
from codec.settings import CompressionSettings

NAMES = ("root", "Spine", "LeftHand", "RightHand", "Head")
PARENTS = (-1, 0, 1, 1, 1)
RATE = 30.0
SAMPLES = 40
SEGMENTS = ((0, 16), (16, 12), (28, 12))


def make_clip(name: str = "walk") -> Clip:
    sk = Skeleton.create(list(NAMES), list(PARENTS))
    t = np.arange(SAMPLES)[:, None] / RATE
    j = len(NAMES)
    angles = 0.3 * np.sin(2 * np.pi * t + np.arange(j)[None, :])  # (S, J)
    rot = np.zeros((SAMPLES, j, 4))
    rot[..., 2] = np.sin(angles / 2)
    rot[..., 3] = np.cos(angles / 2)
    tr = np.zeros((SAMPLES, j, 3))
    tr[..., 1] = 10.0
    tr[:, 0, 0] = 50.0 * t[:, 0]
    sc = np.ones((SAMPLES, j, 3))
    return Clip(sk, RATE, rot, tr, sc, name=name)


def make_result(clip: Clip | None = None, scale: float = 1.0, bits_shift: int = 0) -> Result:
    """A plausible result: root animated, hands animated, head constant, scales default.

    `scale` multiplies the error, `bits_shift` adds to every animated bit rate, so tests can make
    a 'previous' and a 'current' result that differ in known ways.
    """
    clip = clip or make_clip()
    j = clip.num_joints
    kinds = np.full((j, 3), TrackKind.DEFAULT, dtype=np.int64)
    kinds[:, 0] = TrackKind.ANIMATED
    kinds[4, 0] = TrackKind.CONSTANT
    kinds[0, 1] = TrackKind.ANIMATED
    kinds[1:, 1] = TrackKind.CONSTANT
    g = len(SEGMENTS)
    rates = np.full((g, j, 3), -1, dtype=np.int64)
    base = np.array([[8, 5, 11, 12, 0], [9, 4, 12, 10, 0], [0, 3, 13, 9, 0]])  # (G, J)
    for k in range(3):
        anim = kinds[:, k] == TrackKind.ANIMATED
        rates[:, anim, k] = np.clip(base[:, anim] + k + bits_shift, 0, 24)
    rates[2, 0, 0] = 0  # constant within the last segment
    err = (
        scale
        * 0.002
        * (1 + np.arange(j))[None, :]
        * (1.2 + np.sin(np.arange(clip.num_samples)[:, None] / 3.0))
    )
    err[31, 2] = 0.03 * scale  # LeftHand's worst sample
    between_t = np.arange((clip.num_samples - 1) * 4 + 1) / (clip.sample_rate * 4)
    between = np.interp(between_t, np.arange(clip.num_samples) / clip.sample_rate, err[:, 2])
    between = np.repeat(between[:, None], j, axis=1) * 1.1
    shells = DominantShells(
        distance=np.array([30.0, 25.0, 3.0, 3.0, 9.0]),
        precision=np.array([0.05, 0.04, 0.01, 0.01, 0.02]),
        segment_distance=np.tile([30.0, 25.0, 3.0, 3.0, 9.0], (g, 1)),
        segment_precision=np.tile([0.05, 0.04, 0.01, 0.01, 0.02], (g, 1)),
    )
    compressed_size = int(1000 + 40 * bits_shift)
    raw = j * clip.num_samples * 40
    worst_joint, worst_sample = np.unravel_index(int(err.argmax()), err.shape)[::-1]
    stats = {
        "raw_size": raw,
        "compressed_size": compressed_size,
        "metadata_size": 100,
        "file_size": compressed_size + 100,
        "compression_ratio": raw / compressed_size,
        "max_error": float(err.max()),
        "worst_track": int(worst_joint),
        "worst_track_name": clip.skeleton.names[int(worst_joint)],
        "worst_time": float(worst_sample / clip.sample_rate),
        "error_p99": float(np.percentile(err, 99)),
        "max_error_between_samples": float(between.max()),
        "worst_time_between_samples": float(between_t[between.max(1).argmax()]),
        "compression_time": 0.0123,
        "duration": clip.duration,
        "num_samples": clip.num_samples,
        "num_bones": j,
        "sample_rate": clip.sample_rate,
        "looping": False,
        "has_scale": False,
        "level": "highest",
        "precision_met": bool(err.max() <= 0.01),
        "segmenting": {"num_segments": g},
        "num_segments": g,
        "segments": [{"start": s, "num_samples": n, "segment_size": 100 + s} for s, n in SEGMENTS],
        "sub_tracks": {
            name: {
                kind: int((kinds[:, k] == v).sum())
                for kind, v in (("default", 0), ("constant", 1), ("animated", 2))
            }
            for k, name in enumerate(("rotation", "translation", "scale"))
        },
        "bit_rate_histogram": {},
    }
    bits = np.where(rates >= 0, np.r_[0:24, 32][np.maximum(rates, 0)], -1)
    values, counts = np.unique(bits[bits >= 0], return_counts=True)
    stats["bit_rate_histogram"] = {str(int(v)): int(c) for v, c in zip(values, counts, strict=True)}
    stats["codec"] = "acl-style"
    segments = np.array(SEGMENTS, dtype=np.int64)
    costs = TrackCosts(kinds, segments, rates, bits, 100 + segments[:, 0], shells)
    return Result(
        clip=clip,
        settings=CompressionSettings(level="automatic"),
        codec_name="acl-style",
        data=b"SSC" + bytes(compressed_size),
        decoder=None,  # type: ignore[arg-type]  # panels never decode
        measurements=Measurements(clip, err, between_t, between, None, stats),
        costs=costs,
    )


def make_document(path: Path | None = None, with_result: bool = True) -> Document:
    doc = Document()
    clip = make_clip()
    doc.set_clip(clip, path)
    if with_result:
        doc.set_result(make_result(doc.compression_input()))
    return doc


class Recompressions:
    """A controller double: counts how often the document asked for a recompression."""

    def __init__(self, document: Document) -> None:
        self.count = 0
        document.settings_changed.connect(self._bump)

    def _bump(self) -> None:
        self.count += 1


def attach(document: Document, *views: object, debounce_ms: int = 20) -> Controller:
    """A real controller for the document with the views' intents routed to it, as the main
    window wires them; its compressions are cancelled at once (the panel tests bring their
    own results), so only the edits, saves and exports are the controller's. The first view
    owns it (it lives as long as the view)."""

    def cancelled(*_args: object, **_kwargs: object) -> None:
        raise codec.Cancelled("panel test")

    owner = views[0] if views else None
    controller = Controller(document, compress=cancelled, debounce_ms=debounce_ms, parent=owner)
    for view in views:
        controller.attach(view)
    return controller
