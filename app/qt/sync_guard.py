"""A flag a view raises while it copies the model into its widgets.

Setting a widget's value emits the same signal a user's edit does; handlers check the flag
and ignore what the view did itself. Re-entrant: a sync that calls another keeps the flag up
until the outermost one ends.
"""

from __future__ import annotations

from types import TracebackType


class SyncGuard:
    """`with self.syncing:` around model -> widget updates; `if self.syncing: return` in
    widget -> model handlers."""

    def __init__(self) -> None:
        self._depth = 0

    def __bool__(self) -> bool:
        return self._depth > 0

    def __enter__(self) -> SyncGuard:
        self._depth += 1
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._depth -= 1
