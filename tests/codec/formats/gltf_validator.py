"""Khronos glTF-Validator (npm `gltf-validator`, installed by tools/setup.sh into
.venv/npm) over files, through node and tools/gltf_validate.js: the tests and
bench/interop.py check our glTF exports with the validator every glTF tool trusts."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
INSTALLED = ROOT / ".venv" / "npm"
SCRIPT = ROOT / "tools" / "gltf_validate.js"


def missing() -> str | None:
    """Why the validator cannot run here (None: it can)."""
    if shutil.which("node") is None:
        return "node is not installed (tools/setup.sh installs it: make setup)"
    if not (INSTALLED / "node_modules" / "gltf-validator" / "package.json").is_file():
        return f"gltf-validator is not installed in {INSTALLED} (make setup installs it)"
    return None


def validate(*files: Path) -> list[dict]:
    """One report per file: numErrors, numWarnings, numInfos, numHints, codes {CODE: count}
    and the first messages. RuntimeError when the validator cannot run."""
    problem = missing()
    if problem:
        raise RuntimeError(problem)
    run = subprocess.run(
        ["node", str(SCRIPT), str(INSTALLED), *(str(f) for f in files)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if run.returncode:
        raise RuntimeError(f"gltf-validator failed: {run.stderr.strip()[-500:]}")
    return [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
