"""Qt calls our paint and event handlers from C++; an exception escaping one of them is not a
bug report but a dead process (PySide6 6.11 can crash while it unwinds one out of a
synchronous repaint). `@survives` catches it there, logs the traceback and lets the window go
on drawing: the next frame or event gets its own chance.

The log is `logging.getLogger("shellscope")`; the same failure is written once with its
traceback, then counted, so a paint failing at 60 Hz does not bury the log.
"""

from __future__ import annotations

import functools
import logging
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

LOG = logging.getLogger("shellscope")

F = TypeVar("F", bound=Callable[..., Any])

_seen: dict[tuple[str, str, int], int] = {}  # (exception type, file, line) -> times seen


def report(where: str, error: BaseException) -> None:
    """Log `error` caught in `where` (a handler's qualified name): its first occurrence with
    the traceback, the 10th, 100th, ... as a count."""
    frames = traceback.extract_tb(error.__traceback__)
    last = frames[-1] if frames else None
    key = (type(error).__name__, last.filename if last else "", last.lineno or 0 if last else 0)
    n = _seen.get(key, 0) + 1
    _seen[key] = n
    if n == 1:
        LOG.error("%s failed; the window carries on", where, exc_info=error)
    elif n in (10, 100, 1000, 10000):
        LOG.error("%s failed again (%d times): %s: %s", where, n, type(error).__name__, error)
    # the frames hold the handler's locals (an open QPainter): let them go now
    traceback.clear_frames(error.__traceback__)


def survives(handler: F) -> F:
    """Decorate a Qt override (paintGL, paintEvent, mouse and key events, ...): any Exception
    it raises is logged and swallowed; it returns None then."""
    return _guard(handler, None)


def survives_event(handler: F) -> F:
    """`survives` for `event()`, which must answer a bool: False (not handled) on failure."""
    return _guard(handler, False)


def _guard(handler: F, fallback: Any) -> F:
    @functools.wraps(handler)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        except Exception as exc:  # a handler must never take the process down
            report(handler.__qualname__, exc)
            return fallback

    return wrapper  # type: ignore[return-value]
