"""The warm-up compiles every kernel a compression needs."""

from __future__ import annotations

from codec import warm_up


def test_warm_up_compiles_every_kernel_of_a_compression() -> None:
    from codec.codecs.acl_style import (
        constant_tracks,
        decoder,
        details,
        layout,
        optimizer,
        quantize,
        writing,
    )
    from codec.codecs.curve import placement, tangents
    from codec.measure import error_metric, shells
    from codec.model import pose_blend, pose_space

    warm_up.warm_up()
    assert warm_up.is_warm()
    for kernel in (
        shells._dominant,
        shells._local_precision,
        shells._identity_within,  # _identity_strays compiled into it
        constant_tracks._decide,
        constant_tracks._first_samples,  # _constants_of compiled into it
        constant_tracks._stored_constants,
        layout._sub_tracks_of,
        optimizer._solve,
        optimizer._track_table,
        error_metric._pose_errors,
        error_metric._object_matrices,
        error_metric._errors_against,
        error_metric._ends_within,
        pose_blend._blend,
        writing.body,
        quantize.quantised,
        quantize.in_stored_order,
        details._per_track,
        details._counts,
        decoder._decode_rows,
        decoder._unit_rows,
        pose_space._pose_matrices,
        placement.place_knots,  # the other codecs' too: the warm-up runs auto
        placement.fewest_knots,
        placement.curve_errors,
        tangents._rule_tangents,
        tangents._hermite_track,
    ):
        assert kernel.signatures, kernel.py_func.__name__


def _compiled() -> dict[str, frozenset[str]]:
    """Every kernel of the codec package and the type signatures it has compiled."""
    import sys

    from numba.core.registry import CPUDispatcher

    seen: dict[str, frozenset[str]] = {}
    for name, module in list(sys.modules.items()):
        if not (name == "codec" or name.startswith("codec.")):
            continue
        for attr, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.__module__ == name:
                seen[f"{name}.{attr}"] = frozenset(str(s) for s in value.signatures)
    return seen


def test_after_the_warm_up_real_clips_compile_nothing_more() -> None:
    """A compression after the warm-up never waits for the compiler: the tiny warm-up clip
    takes every kernel's every type specialisation that real clips of each format need."""
    from pathlib import Path

    import codec
    from codec.compression import compress
    from codec.settings import CompressionSettings

    data = Path(__file__).resolve().parents[1] / "data"
    clips = [
        codec.load_clip(data / "acl" / "cmu_09_02_with_zero_scale.acl.sjson"),
        codec.load_clip(data / "acl" / "cmu_121_10_single_sample.acl.sjson"),
        codec.load_clip(data / "bvh" / "cmu_02_02_walk_daz.bvh"),
        codec.load_clip(data / "gltf" / "Fox.glb", animation="Run"),
    ]
    warm_up.warm_up()
    before = _compiled()
    assert before, "no kernels found: the scan is broken"
    for clip in clips:
        for level in ("medium", "highest"):
            result = compress(clip, CompressionSettings(level=level))
            result.decoder.sample(0.5 * clip.duration, "nearest")
            result.decoder.decode_all()
    after = _compiled()
    grown = {k: sorted(after[k] - before.get(k, frozenset())) for k in after}
    assert not {k: v for k, v in grown.items() if v}


def test_the_warm_up_counts_what_numba_compiles_and_says_when_it_starts() -> None:
    """A cache hit is no compilation; the first compilation is announced once."""
    import numba

    said = []
    counter = warm_up.CompileCounter(lambda: said.append("compiling"))

    @numba.njit(cache=False)
    def twice(x):
        return 2 * x

    with counter.listening():
        twice(1)
        twice(2)  # compiled already
        twice(3.0)  # a second specialisation
    assert counter.count == 2 and said == ["compiling"]
    report = warm_up.warm_up()
    assert warm_up.warm_up() is report and report.seconds > 0 and report.compiled >= 0
    assert ("compiled" if report.compiled else "loaded from the cache") in str(report)
