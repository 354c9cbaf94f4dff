"""The warm-up compiles every kernel a compression needs."""

from __future__ import annotations

from codec import warm_up


def test_warm_up_compiles_every_kernel_of_a_compression() -> None:
    from codec import bitstream, constant_tracks, error_metric, optimizer, shells

    warm_up.warm_up()
    assert warm_up.is_warm()
    for kernel in (
        shells._dominant,
        constant_tracks._decide,
        optimizer._lower_bound,
        optimizer._repair_sweep,
        optimizer._slack_round,
        error_metric._pose_errors,
        bitstream._pack,
    ):
        assert kernel.signatures, kernel.py_func.__name__
