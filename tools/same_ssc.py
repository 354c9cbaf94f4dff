"""Are the .ssc bytes of the reference clips the same at another commit as in this tree?

    .venv/bin/python tools/same_ssc.py [REF]        (REF: a commit, default main)

A refactoring must not change what the codec writes. For ACL's eight reference clips
(tests/data/acl, the .xz ones included) this compresses each clip at a few settings in two
trees, REF (extracted with `git archive` into a temporary folder) and this working tree,
each in its own process, through the command line (`python -m codec compress -o`) and
through the Python API, and compares the files byte for byte. Prints one line per clip and
setting; exit code 0 when every file is identical, 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLIPS = sorted(
    p
    for p in (ROOT / "tests" / "data" / "acl").iterdir()
    if p.name.startswith("cmu_") and p.name.endswith((".acl.sjson", ".acl.sjson.xz"))
)
# (label, settings keywords): ACL's defaults, the other levels, a stricter and a looser budget
SETTINGS = (
    ("default", {}),
    ("level-lowest", {"level": "lowest"}),
    ("level-highest", {"level": "highest"}),
    ("precision-0.001", {"precision": 0.001}),
    ("precision-0.1-shell-10", {"precision": 0.1, "shell_distance": 10.0}),
    ("no-loop", {"loop_optimization": False}),
)

# run inside a tree: only the public API, which both trees share
_API_SCRIPT = """
import sys
from pathlib import Path
import codec
out = Path(sys.argv[1])
for spec in sys.argv[2:]:
    path, label, kwargs = spec.split("|", 2)
    clip = codec.load_clip(path)
    result = codec.compress(clip, codec.CompressionSettings(**eval(kwargs)))
    (out / (Path(path).name + "." + label + ".ssc")).write_bytes(result.data)
print(codec.__file__)
"""


def _run_tree(tree: Path, out: Path) -> None:
    """Compress every clip at every setting with the codec of `tree`, into `out`."""
    out.mkdir(parents=True)
    specs = [f"{clip}|{label}|{kwargs!r}" for clip in CLIPS for label, kwargs in SETTINGS]
    done = subprocess.run(
        [sys.executable, "-c", _API_SCRIPT, str(out), *specs],
        cwd=tree,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"{tree}: the API run failed:\n{done.stderr}")
    used = Path(done.stdout.strip().splitlines()[-1]).resolve()
    if not used.is_relative_to(tree.resolve()):
        raise SystemExit(f"{tree}: the run imported {used}, not the tree's own codec")
    for clip in CLIPS:
        target = out / f"{clip.name}.cli.ssc"
        cmd = [sys.executable, "-m", "codec", "compress", str(clip), "-o", str(target)]
        done = subprocess.run(cmd, cwd=tree, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{tree}: {' '.join(cmd)} failed:\n{done.stderr}")


def _extract(ref: str, folder: Path) -> Path:
    """The tree of commit `ref`, written into `folder`."""
    archive = folder / "ref.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), ref], check=True)
    tree = folder / "tree"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    return tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ref", nargs="?", default="main", help="commit to compare with")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="shellscope-same-ssc-") as tmp:
        folder = Path(tmp)
        _run_tree(_extract(args.ref, folder), folder / "before")
        _run_tree(ROOT, folder / "after")
        before = sorted(p.name for p in (folder / "before").iterdir())
        after = sorted(p.name for p in (folder / "after").iterdir())
        if before != after:
            print(f"different file sets: {before} / {after}")
            return 1
        differ = 0
        for name in before:
            a = (folder / "before" / name).read_bytes()
            b = (folder / "after" / name).read_bytes()
            same = a == b
            differ += not same
            digest = hashlib.sha256(b).hexdigest()[:16]
            print(f"{'same' if same else 'DIFFERENT':9} {len(b):8,} B  {digest}  {name}")
        print(
            f"{len(before) - differ} of {len(before)} files byte-identical between "
            f"{args.ref} and this tree"
        )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
