"""How a command ends: its exit code and the one line it prints on failure, never a traceback.

Exit codes: 0 ok; 1 a run failed on valid input (an internal error, out of memory, a
compression whose error is not a finite number, a benchmark target missed); 2 bad input or
usage (an unreadable or hostile file, bad settings, an output that cannot be written or
would overwrite an input).
"""

from __future__ import annotations

import math
from typing import Any

PROG = "python -m codec"
EXIT_OK, EXIT_FAIL, EXIT_ERROR = 0, 1, 2


class CliError(Exception):
    """A user-facing failure: its message is printed as is and the exit code is 2."""


class RunFailed(Exception):
    """A run that failed on valid input: its message is printed and the exit code is 1."""


def check_finite_error(path: str, stats: dict[str, Any]) -> None:
    """RunFailed (exit 1) when a compression's max error is not a finite number: such a run
    must never look like a success (nothing is written)."""
    value = stats.get("max_error")
    if not (isinstance(value, int | float) and math.isfinite(value)):
        raise RunFailed(
            f"{path}: the compression's max error is {value!r}, not a finite number: "
            "nothing written (please report it)"
        )


def one_line(error: BaseException) -> str:
    """An error's message on one line (a message holding newlines is joined with ' / ')."""
    return " / ".join(part.strip() for part in str(error).splitlines() if part.strip())
