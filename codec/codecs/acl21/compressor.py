"""Running ACL 2.1's `acl_compressor` on a clip: one run in a private folder with a time
limit.

Where the tool is, is a setting of the process (codec.codecs.acl_compressor_path: the
command line, the window or SHELLSCOPE_ACL_COMPRESSOR); without it the `acl-2.1` codec
says it is unavailable and why. A run writes the clip as a binary-exact track list
(codec.codecs.acl21.sjson_input, each joint's precision and shell distance from the tuning)
into a temporary folder only this user can read, runs the tool there without a shell
(`-acl=IN -out=OUT.acl -stats=STATS.sjson -level=L`, and the keyframe stripping proportion
and threshold), stops it when cancelled or past its time limit (the whole process group),
and reads back its compressed bytes and its own stats. The folder is removed whatever happens.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codec.codecs.acl21.sjson_input import track_list_text
from codec.codecs.acl_compressor_path import problem
from codec.errors import Cancelled, ShellscopeError
from codec.model.clip import Clip

BASE_SECONDS = 60.0  # a run may take this long, plus TRANSFORMS_PER_SECOND below
TRANSFORMS_PER_SECOND = 5000.0  # acl_compressor: ~50,000 transforms/s here; 10x margin
POLL_SECONDS = 0.05
MAX_OUTPUT_BYTES = 1 << 30
LEVELS = {
    "automatic": "automatic",
    "lowest": "lowest",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "highest": "highest",
}


class CompressorError(ShellscopeError):
    """acl_compressor could not be run, failed, or gave something unreadable."""


@dataclass(frozen=True)
class Run:
    """One acl_compressor run: its compressed bytes (with metadata), its own stats (the
    first run of its `runs`), its command line and how long the process took."""

    data: bytes
    stats: dict[str, Any]
    command: list[str]
    seconds: float


def timeout_for(clip: Clip) -> float:
    """Seconds a run on `clip` may take."""
    return BASE_SECONDS + clip.num_samples * clip.num_joints / TRANSFORMS_PER_SECOND


def command(path: str, folder: Path, level: str, proportion: float, threshold: float) -> list[str]:
    """acl_compressor's argument list for one run in `folder`."""
    args = [
        str(path),
        f"-acl={folder / 'clip.acl.sjson'}",
        f"-out={folder / 'out.acl'}",
        f"-stats={folder / 'stats.sjson'}",
        f"-level={LEVELS.get(level, 'automatic')}",
    ]
    if proportion > 0:
        args.append(f"-strip_keyframe_proportion={proportion:.9g}")
    if threshold > 0:
        args.append(f"-strip_keyframe_threshold={threshold:.9g}")
    return args


def run(
    clip: Clip,
    path: str,
    level: str = "automatic",
    proportion: float = 0.0,
    threshold: float = 0.0,
    cancelled: Callable[[], bool] | None = None,
    timeout: float | None = None,
) -> Run:
    """Compress `clip` (its per-joint precisions and shell distances) with acl_compressor at
    `path`; CompressorError on anything wrong, Cancelled when `cancelled()` turns True."""
    bad = problem(path)
    if bad:
        raise CompressorError(bad)
    limit = timeout_for(clip) if timeout is None else timeout
    with tempfile.TemporaryDirectory(prefix="shellscope-acl-") as tmp:
        folder = Path(tmp)  # mkdtemp: readable by this user only
        (folder / "clip.acl.sjson").write_text(track_list_text(clip), encoding="utf-8")
        args = command(path, folder, level, proportion, threshold)
        start = time.perf_counter()
        output = _wait(args, folder, limit, cancelled)
        seconds = time.perf_counter() - start
        out = folder / "out.acl"
        if not out.is_file():
            raise CompressorError(f"acl_compressor wrote no output{_said(output)}")
        if out.stat().st_size > MAX_OUTPUT_BYTES:
            raise CompressorError("acl_compressor's output is larger than 1 GiB")
        data = out.read_bytes()
        stats = _stats(folder / "stats.sjson")
    return Run(data, stats, args, seconds)


def _wait(args: list[str], folder: Path, limit: float, cancelled: Callable[[], bool] | None) -> str:
    """Run `args` in `folder` to its end; its output (stdout and stderr). The process
    group is killed when cancelled or past `limit` seconds."""
    with open(folder / "output.txt", "w+b") as log:
        try:
            proc = subprocess.Popen(
                args, cwd=folder, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        except OSError as e:
            raise CompressorError(f"acl_compressor {args[0]} could not start: {e}") from None
        deadline = time.monotonic() + limit
        try:
            while proc.poll() is None:
                if cancelled is not None and cancelled():
                    raise Cancelled("compression cancelled")
                if time.monotonic() > deadline:
                    raise CompressorError(f"acl_compressor took more than {limit:.0f} s: stopped")
                time.sleep(POLL_SECONDS)
        finally:
            if proc.poll() is None:
                _kill(proc)
        log.seek(0)
        output = log.read(1 << 16).decode("utf-8", "replace")
    if proc.returncode != 0:
        how = (
            f"was killed by signal {-proc.returncode}"
            if proc.returncode < 0
            else f"exited with status {proc.returncode}"
        )
        raise CompressorError(f"acl_compressor {how}{_said(output)}")
    return output


def _kill(proc: subprocess.Popen) -> None:
    """Stop a run and everything it started (its own process group), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _said(output: str) -> str:
    """`: <its last line>` when the tool said something."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return f": {lines[-1][:300]}" if lines else ""


def _stats(path: Path) -> dict[str, Any]:
    """ACL's stats of the run (an empty dict when it wrote none or they do not parse)."""
    from codec.formats import sjson

    try:
        doc = sjson.parse(path.read_text(encoding="utf-8", errors="replace"), path)
        runs = doc.get("runs") or []
        return dict(runs[0]) if runs else {}
    except (OSError, ShellscopeError, IndexError, TypeError, ValueError):
        return {}
