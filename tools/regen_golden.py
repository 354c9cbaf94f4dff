"""Write the golden .ssc file of the current container format version again, on purpose.

    cd WORKTREE && /work/main/.venv/bin/python tools/regen_golden.py      (or `make golden`)

Run it after a deliberate change of the written bytes (a format bump, an encoder change),
then commit tests/data/golden/ with the change; tests/codec/test_golden.py pins the bytes.
Prints what changed so an accidental change is seen before it is committed.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.codec.golden import BIND_MODES, golden_bytes, golden_path


def main() -> int:
    for bind in BIND_MODES:
        path = golden_path(bind=bind)
        new = golden_bytes(bind)
        old = path.read_bytes() if path.exists() else None
        if old == new:
            print(f"{path}: unchanged ({len(new)} bytes)")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(new)
        tmp.replace(path)
        was = "new file" if old is None else f"was {len(old)} bytes"
        print(f"{path}: wrote {len(new)} bytes ({was}), sha256 {hashlib.sha256(new).hexdigest()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
