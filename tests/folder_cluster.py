"""One embedded Dask cluster for the tests of one folder: started by the first test that
asks for it, ended after the last test of that folder in a row. A session fixture kept it
until the whole run ended, idle: its processes took a sixth of a core (4.8 CPU-s per 30 s,
2 workers) from the tests after it. `make test` runs a folder's cluster tests in a row, in
one process (tests/conftest.py SAME_PROCESS), so it starts once there."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class FolderCluster:
    def __init__(self, folder: Path, workers: int) -> None:
        self.folder = folder
        self.workers = workers
        self._cluster: Any = None

    def get(self) -> Any:
        """The folder's codec.library.engine.DaskCluster, started now if needed."""
        if self._cluster is None:
            from codec.library.engine import DaskCluster

            self._cluster = DaskCluster(None, self.workers)
        return self._cluster

    def after(self, nextitem: Any) -> None:
        """Called at each of the folder's tests' teardown: ends the cluster when the next
        test is not the folder's (or there is none)."""
        if self._cluster is None:
            return
        if nextitem is not None and Path(nextitem.path).parent == self.folder:
            return
        cluster, self._cluster = self._cluster, None
        cluster.close()
