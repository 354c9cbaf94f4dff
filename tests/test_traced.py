"""The traced child (tests/traced.py) measures what a call allocates and reports what it
raised: the hostile-file tests' memory limits rest on it."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from tests.traced import traced_calls

THIS = "tests.test_traced"


def allocate(mib: int) -> float:
    """A child target: a numpy buffer of `mib` MiB (numpy reports it to tracemalloc)."""
    return float(np.ones(mib << 17).sum())


def fail(text: str) -> None:
    raise ValueError(text)


def busy_then_hang(seconds: float) -> float:
    """A child target: `seconds` of work in short steps, or a hang when negative."""
    end = time.monotonic() + (3600 if seconds < 0 else seconds)
    while time.monotonic() < end:
        time.sleep(0.05)
    return seconds


def leave_a_thread() -> None:
    threading.Thread(target=threading.Event().wait, args=(5,), daemon=True).start()


def test_each_call_has_its_own_peak_and_value() -> None:
    big, small = traced_calls(f"{THIS}:allocate", [[40], [1]])
    assert big.value == 40 << 17 and big.error_type is None
    assert 40 << 20 <= big.peak < 48 << 20
    assert small.peak < 4 << 20  # the first call's peak is not carried over


def test_an_exception_comes_back_with_its_type_and_message() -> None:
    (failed,) = traced_calls(f"{THIS}:fail", [["no such joint"]])
    assert (failed.error_type, failed.message) == ("ValueError", "no such joint")
    assert failed.value is None


def test_a_call_that_leaves_a_thread_is_not_measured() -> None:
    with pytest.raises(AssertionError, match="call 0 of .* left a thread running"):
        traced_calls(f"{THIS}:leave_a_thread", [[], []])


def test_the_hang_guard_is_per_call() -> None:
    """Calls that each end within the guard pass however long they take together (4 s
    here, over a 3 s guard); a call that hangs is stopped after the guard, naming it."""
    calls = traced_calls(f"{THIS}:busy_then_hang", [[1.0]] * 4, timeout=3)
    assert [t.value for t in calls] == [1.0] * 4
    start = time.monotonic()
    with pytest.raises(AssertionError, match="traced call 1 took over 3 s: stopped"):
        traced_calls(f"{THIS}:busy_then_hang", [[0.1], [-1]], timeout=3)
    assert time.monotonic() - start < 120  # not the hour it would hang
