"""A reader child process that misbehaves on request, for codec.formats.reader_process's
tests: it crashes, aborts, allocates without end, sleeps, or floods stderr as a native
reader given a hostile file would. Run as `python -m tests.codec.formats.misbehaving_reader`."""

from __future__ import annotations

import json
import os
import signal
import sys
import time


def main() -> None:
    request = json.loads(sys.stdin.buffer.readline())
    sys.stdin.buffer.read()
    how = request["how"]
    sys.stderr.write("Warning: in _ReportErrors at line 1 of stage.cpp -- noise\n" * 2000)
    sys.stderr.flush()
    if how == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if how == "abort":
        sys.stderr.write("FATAL ERROR: Dereferenced an invalid SdfPrimSpec\n")
        sys.stderr.flush()
        os.abort()
    if how == "grow":
        hold = []
        while True:
            hold.append(bytearray(64 << 20))  # zero-filled: every page is touched
    if how == "sleep":
        time.sleep(3600)
    os._exit(0)


if __name__ == "__main__":
    main()
