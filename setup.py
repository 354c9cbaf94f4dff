"""Build hook: a wheel carries the codec's compiled kernels, so the first compression after
`pip install` loads them instead of waiting for numba's compiler (tens of seconds).

pyproject.toml holds the project's metadata; this only extends `build_py`: once the
packages are copied into the build folder, `python -m codec warm-up` runs on that copy
(numba, numpy and llvmlite are build requirements), which writes the kernels' cache beside
its sources (codec/**/__pycache__/*.nbi, *.nbc and the sources' stamp, kernels.sha256);
the wheel packs the build folder whole. The cache is made for any CPU of the building
machine's architecture and operating system (codec.jit: NUMBA_CPU_NAME=generic); anywhere
else, or if building it fails, the kernels compile on first use as before. Editable
installs (`make`) skip it: tools/setup.sh warms the checkout itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


def warm_up_env(build_lib: str) -> dict[str, str]:
    """The warm-up child's environment: it imports what this build imports, the build folder
    first. pip's isolated build puts numpy and numba on this process's path (through its
    own sitecustomize on PYTHONPATH); a PYTHONPATH of the build folder alone lost them, and
    a fresh venv's `pip install .` built a wheel with no cache (its first compression then
    compiled for a minute)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = os.pathsep.join([os.path.abspath(build_lib), *filter(None, sys.path)])
    return env


class BuildPyWithKernels(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False) or os.environ.get("SHELLSCOPE_NO_JIT_CACHE"):
            return
        for old in Path(self.build_lib).rglob("__pycache__/*"):  # an earlier build's
            if old.suffix in (".nbi", ".nbc") or old.name == "kernels.sha256":
                old.unlink()
        env = warm_up_env(self.build_lib)
        done = subprocess.run(
            [sys.executable, "-m", "codec", "warm-up"],
            cwd=self.build_lib,
            env=env,
            capture_output=True,
            text=True,
        )
        if done.returncode == 0:
            print(f"shellscope: {done.stdout.strip()}")
        else:  # the wheel still works: its kernels compile on first use
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            print(f"shellscope: the kernels' cache was not built ({tail[0]})", file=sys.stderr)


if __name__ == "__main__":  # as pip's build backend runs it; a test imports warm_up_env
    setup(cmdclass={"build_py": BuildPyWithKernels})
