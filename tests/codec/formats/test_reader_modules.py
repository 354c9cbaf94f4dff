"""codec.formats.READER_MODULES names every module reading a clip imports in our process.

The window imports them all on its UI thread before the warm-up thread imports numba (two
threads importing at once deadlocked it once), so a module a reader imports only when it
reads must be declared in its format's `FormatSpec.read_imports`; this test reads every
format module's function-level imports and fails on one that is not.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

from codec.formats import _MODULES, READER_MODULES

# what runs only in the reader's child process (codec.formats.reader_process), never here
CHILD_ONLY = {"codec.formats.usd_worker", "codec.formats.fbx_worker"}


def _deferred_imports(module_file: Path) -> set[str]:
    """The codec.formats modules a file imports inside its functions."""
    tree = ast.parse(module_file.read_text(encoding="utf-8"))
    names: set[str] = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "codec.formats."
            ):
                names.add(str(node.module))
            elif isinstance(node, ast.Import):
                names |= {a.name for a in node.names if a.name.startswith("codec.formats.")}
    return names


def test_every_deferred_reader_import_is_declared() -> None:
    files = []
    for m in _MODULES:
        path = Path(str(m.__file__))
        files += sorted(path.parent.glob("*.py")) if path.name == "__init__.py" else [path]
    deferred = set().union(*(_deferred_imports(f) for f in files)) - CHILD_ONLY
    assert {"codec.formats.reader_process", "codec.formats.usd_crate"} <= deferred
    assert deferred <= set(READER_MODULES), sorted(deferred - set(READER_MODULES))


def test_the_list_is_every_format_and_imports() -> None:
    assert {m.__name__ for m in _MODULES} <= set(READER_MODULES)
    assert len(set(READER_MODULES)) == len(READER_MODULES)
    assert not CHILD_ONLY & set(READER_MODULES)  # they import usd-core / ufbx
    for name in READER_MODULES:
        assert importlib.import_module(name).__name__ == name


def test_importing_them_imports_no_native_reader() -> None:
    """usd-core and ufbx are only ever imported by the reader's child process."""
    code = (
        "import importlib, sys\n"
        "from codec.formats import READER_MODULES\n"
        "for name in READER_MODULES: importlib.import_module(name)\n"
        "print(sorted(m for m in ('pxr', 'ufbx') if m in sys.modules))\n"
    )
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
