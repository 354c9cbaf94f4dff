"""Every error the codec raises on purpose, so callers can catch exactly what is ours."""

from __future__ import annotations


class ShellscopeError(Exception):
    """Base of the errors that carry a message meant for the user."""


class ClipFormatError(ShellscopeError, ValueError):
    """A clip file that cannot be read: names the file, the place and what was expected.

    `line` is 1-based for text formats, `offset` a byte offset for binary ones; either may be
    None when the problem is not tied to one place (a missing section, say).
    """

    def __init__(
        self,
        path: object,
        message: str,
        *,
        line: int | None = None,
        offset: int | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.offset = offset
        self.message = message
        where = self.path
        if line is not None:
            where += f":{line}"
        elif offset is not None:
            where += f" (byte {offset})"
        super().__init__(f"{where}: {message}")


class ClipValidationError(ShellscopeError, ValueError):
    """A clip or skeleton built with inconsistent or non-finite data."""


class CompressedFormatError(ShellscopeError, ValueError):
    """A .ssc byte stream that is truncated, corrupt or of an unknown version."""


class SettingsError(ShellscopeError, ValueError):
    """Compression settings that make no sense (precision <= 0, unknown level, ...)."""


class Cancelled(ShellscopeError):
    """Raised inside `compress` when its `cancel()` callback asked to stop."""
