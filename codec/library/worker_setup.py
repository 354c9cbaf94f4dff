"""Run by every worker process of the embedded cluster as it starts (a Dask worker preload).

Ctrl+C in a terminal reaches the whole process group. Only the command should answer it (by
cancelling what is left and closing the cluster); a worker that also took it would die with a
traceback of its own in the middle of the command's output.
"""

from __future__ import annotations

import signal
import threading
from typing import Any


def dask_setup(worker: Any) -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
