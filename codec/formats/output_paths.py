"""Where an output may go: one check for every file a run writes, made before any work.

`-o`, `--json`, `--csv`, `--report`, the window's `--export-*` and its screenshots all pass
`output_problem`: an output is never an input of the same run (the clip, its sidecar, an
overrides or compare file, through a link or a second name), never a sidecar of any clip
(a tuning file is the user's work: `library --json CLIP.shellscope.json` once replaced one),
never a folder, device, FIFO or socket (codec.formats.atomic.target_problem: a FIFO would
block the writer, a rename would turn /dev/null into a file), and its folder must exist and
be writable: no output creates folders. A name longer than the file system takes is said up
front too, instead of failing after the whole run. Two outputs of one run are never one file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from codec.formats import atomic

SIDECAR_SUFFIX = ".shellscope.json"  # what every sidecar's name ends with (codec.sidecar.SUFFIX)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _name_problem(path: Path) -> str | None:
    """Why the file system will not take this file name (too long), or None."""
    try:
        limit = os.pathconf(path.parent if str(path.parent) else ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    size = len(os.fsencode(path.name))
    if size > limit:
        return f"cannot write: the file name is {size} bytes long; its folder takes {limit}"
    return None


def output_problem(
    path: str | os.PathLike[str], inputs: Sequence[str | os.PathLike[str] | None] = ()
) -> str | None:
    """None when `path` may be written by a run reading `inputs`, else why not (one line,
    without the path: the caller names it)."""
    out = Path(path)
    problem = _name_problem(out)
    if problem:
        return problem
    real = os.path.realpath(out)
    for i in inputs:
        if i and (real == os.path.realpath(i) or _same_file(out, Path(i))):
            return f"is the input file {i}; refusing to overwrite it"
    if out.name.lower().endswith(SIDECAR_SUFFIX) or real.lower().endswith(SIDECAR_SUFFIX):
        return "is a tuning sidecar (*.shellscope.json); refusing to overwrite it"
    problem = atomic.target_problem(out)
    if problem:
        return problem
    folder = out.parent
    if not folder.is_dir():
        return f"cannot write: no such folder {str(folder)!r}"
    if not os.access(folder, os.W_OK | os.X_OK):
        return "cannot write: the folder is not writable"
    return None


def outputs_problem(
    outputs: Sequence[str | os.PathLike[str] | None],
    inputs: Sequence[str | os.PathLike[str] | None] = (),
    what: str = "an output",
) -> str | None:
    """The first output that may not be written, as "PATH: why", or None. '-' (stdout) and
    None (not asked for) are skipped; two outputs that are one file are refused."""
    seen: dict[str, str] = {}
    for o in outputs:
        if not o or o == "-":
            continue
        real = os.path.realpath(o)
        if real in seen:
            return f"{o}: given twice as {what} (also as {seen[real]})"
        seen[real] = os.fspath(o)
        problem = output_problem(o, inputs)
        if problem:
            return f"{o}: {problem}"
    return None
