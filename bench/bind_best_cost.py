"""What `--bind best` and `auto` (the default) cost against `--bind strip` alone, clip by
clip, in one run (issue 39).

    .venv/bin/python bench/bind_best_cost.py [--repeat N] [--commit REV] [CLIP ...]

Per clip (the bench's clips, bench/codec_vs_acl.py's names, or the ones named): acl-style's
encode with `--bind strip`, `auto` and `best` taken in turns, their medians and ratio, how
many compressor runs each made (Compressor.run calls: best's modes and rounds), the modes best
ran and those its screen left out, and both sizes. With `--commit REV`, best as REV's
bind_modes.py does it (the rest of the codec this checkout's) takes its turn too: the ratio
before and after in the same run. Times are this run's, on a shared machine: compare them only
within one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.codec_vs_acl import PRECISION, SHELL_DISTANCE, default_clips
from codec.cli.report_text import table

REPO = Path(__file__).resolve().parents[1]
BIND_MODES = "codec/codecs/acl_style/bind_modes.py"


def bind_modes_at(commit: str, work: Path) -> ModuleType:
    """bind_modes.py as `commit` has it, loaded beside this checkout's codec."""
    text = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{commit}:{BIND_MODES}"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    path = work / "bind_modes_at_commit.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("bind_modes_at_commit", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Counted:
    """Counts Compressor.run calls while it is installed."""

    def __init__(self) -> None:
        from codec.codecs.acl_style import encoder

        self.runs = 0
        self._run = encoder.Compressor.run
        counter = self

        def run(compressor: Any, *args: Any, **kwargs: Any) -> Any:
            counter.runs += 1
            return counter._run(compressor, *args, **kwargs)

        encoder.Compressor.run = run  # type: ignore[method-assign]


def encode(module: ModuleType, clip: Any, bind: str, counted: Counted) -> tuple[float, Any, int]:
    from codec.settings import CompressionSettings

    settings = CompressionSettings(
        precision=PRECISION, shell_distance=SHELL_DISTANCE, skin_error=False, bind=bind
    )
    before = counted.runs
    start = time.perf_counter()
    encoded = module.BindModes(clip).run(settings)
    return time.perf_counter() - start, encoded, counted.runs - before


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clips", nargs="*", help="clip names (default: the bench's clips)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--commit", help="also best as this commit's bind_modes.py does it")
    args = parser.parse_args(argv)
    from codec.codecs.acl_style import bind_modes
    from codec.formats import load_clip

    counted = Counted()
    specs = [c for c in default_clips() if not args.clips or c.name in args.clips]
    rows = []
    with tempfile.TemporaryDirectory(prefix="shellscope-bind-") as tmp:
        sides = {m: (bind_modes, m) for m in ("strip", "auto", "best")}
        if args.commit:
            sides[f"best@{args.commit}"] = (bind_modes_at(args.commit, Path(tmp)), "best")
        for spec in specs:
            kwargs = {"animation": spec.animation} if spec.animation else {}
            clip = load_clip(spec.path, **kwargs)
            times: dict[str, list[float]] = {name: [] for name in sides}
            last: dict[str, tuple[Any, int]] = {}
            for turn in range(args.repeat + 1):  # the first turn warms up
                for name, (module, bind) in sides.items():
                    seconds, encoded, runs = encode(module, clip, bind, counted)
                    if turn:
                        times[name].append(seconds)
                    last[name] = (encoded, runs)
            ms = {name: 1000.0 * float(np.median(t)) for name, t in times.items()}
            best = last["best"][0].details["bind_modes"]
            row = [spec.name, f"{ms['strip']:.1f}", f"{ms['auto']:.1f}", f"{ms['best']:.1f}"]
            row += [f"{ms['auto'] / ms['strip']:.2f}x", f"{ms['best'] / ms['strip']:.2f}x"]
            if args.commit:
                name = f"best@{args.commit}"
                row += [f"{ms[name] / ms['strip']:.2f}x", str(last[name][1])]
            row += [str(last["best"][1]), ",".join(best["tried"])]
            row += [",".join(best.get("screened", {})) or "-"]
            row += [f"{len(last[m][0].payload):,}" for m in ("strip", "auto", "best")]
            rows.append(row)
            print(f"{spec.name} done", file=sys.stderr, flush=True)
    head = ["clip", "strip ms", "auto ms", "best ms", "auto/strip", "best/strip"]
    if args.commit:
        head += [f"@{args.commit}/strip", f"runs @{args.commit}"]
    head += ["runs", "ran", "screened", "strip B", "auto B", "best B"]
    print(table([head, *rows], right=range(1, len(head))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
