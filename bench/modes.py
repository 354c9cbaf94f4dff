"""Run a window bench once per compression mode (app.compress_process: the codec on a thread
of the window's process, or in a child process), each in a fresh process of its own, so both
paths are measured in one run under the same load, each with its own start-up.

    bash tools/with_display.sh .venv/bin/python bench/modes.py thread,process \\
        bench/ui_blocks.py [its options]

Prints each run's output under a heading; the modes run in the order given (run them again in
the other order to see what the order does).
"""

from __future__ import annotations

import os
import subprocess
import sys


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    modes, bench, rest = sys.argv[1].split(","), sys.argv[2], sys.argv[3:]
    for mode in modes:
        print(f"\n######## compressing in: {mode}", flush=True)
        env = dict(os.environ, SHELLSCOPE_COMPRESS_IN=mode)
        code = subprocess.call([sys.executable, bench, *rest], env=env)
        if code:
            raise SystemExit(f"{bench} ({mode}) exited with {code}")


if __name__ == "__main__":
    main()
