"""The import contracts of pyproject.toml hold, and a broken one fails `make lint`.

`make lint` runs `lint-imports`; these tests run it the same way on the repository and on
a temporary copy of `codec/` and `app/` with one deliberate violation each, so a contract
that stopped catching anything (a renamed module, a typo in a name) fails here.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-logo", "--no-cache"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    for package in ("codec", "app"):
        shutil.copytree(
            ROOT / package, tree / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    (tree / "tools").mkdir()
    shutil.copy(ROOT / "tools" / "import_allowlist.py", tree / "tools" / "import_allowlist.py")
    return tree


def _append(path: Path, line: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")


def test_the_repository_keeps_every_contract() -> None:
    done = _lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert f"Contracts: {len(contracts['contracts'])} kept, 0 broken." in done.stdout


def test_the_copy_is_clean_before_it_is_broken(tmp_path: Path) -> None:
    done = _lint_imports(_copy(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("module", "line", "contract", "named"),
    [
        # Qt in the codec, through one module or another
        (
            "codec/model/quat.py",
            "from PySide6 import QtCore",
            "never import Qt",
            "codec.model.quat",
        ),
        ("codec/formats/bvh.py", "import pyqtgraph", "never import Qt", "codec.formats.bvh"),
        ("app/model/document.py", "from OpenGL import GL", "never import Qt", "app.model.document"),
        (
            "codec/model/clip.py",
            "import app.model.document",
            "never imports the app",
            "codec.model.clip",
        ),
        (
            "app/views/bitrates.py",
            "from codec.codecs.acl_style import optimizer",
            "no codec package",
            "bitrates",
        ),
        ("app/views/joints.py", "from codec.sidecar import save_sidecar", "file writing", "joints"),
        ("app/views/stats.py", "import codec.formats.atomic", "file writing", "app.views.stats"),
        ("app/views/timeline.py", "import app.controller", "layers", "app.views.timeline"),
        ("app/model/document.py", "import app.model.exports", "layers", "app.model.document"),
        # measurement takes any decoder; the model is below both
        (
            "codec/measure/stats.py",
            "import codec.codecs.acl_style.bit_rates",
            "Measurement never imports a codec",
            "codec.measure.stats",
        ),
        ("codec/model/clip.py", "import codec.measure.shells", "data model", "codec.model.clip"),
        ("codec/model/quat.py", "import codec.codecs.base", "data model", "codec.model.quat"),
    ],
)
def test_a_deliberate_violation_fails_lint(
    tmp_path: Path, module: str, line: str, contract: str, named: str
) -> None:
    tree = _copy(tmp_path)
    _append(tree / module, line)
    done = _lint_imports(tree)
    assert done.returncode != 0
    broken = done.stdout.split("Broken contracts", 1)[-1]
    assert contract in broken and named in broken, done.stdout


def test_a_codec_importing_another_codec_fails_lint(tmp_path: Path) -> None:
    """The curve codec borrowing acl-style's quantiser: `make lint` refuses it, and the same
    module importing only the shared model passes."""
    tree = _copy(tmp_path)
    layout = tree / "codec" / "codecs" / "curve" / "layout.py"
    original = layout.read_text(encoding="utf-8")
    layout.write_text(original + "\nfrom codec.codecs.acl_style import quantize\n")
    done = _lint_imports(tree)
    assert done.returncode != 0
    broken = done.stdout.split("Broken contracts", 1)[-1]
    assert "never imports another codec" in broken and "codec.codecs.curve" in broken, done.stdout
    layout.write_text(original + "\nfrom codec.model import quat\n")  # the model is shared
    assert _lint_imports(tree).returncode == 0


def test_the_app_importing_a_codec_package_fails_lint(tmp_path: Path) -> None:
    """A new view reading acl-style's bit rates, or the controller naming a codec: `make
    lint` refuses both; the same view reading the neutral words (codec.codecs.base,
    codec.result_tables) passes."""
    tree = _copy(tmp_path)
    view = tree / "app" / "views" / "planted_panel.py"
    view.write_text("from codec.codecs.acl_style.bit_rates import BIT_RATE_BITS\n")
    _append(tree / "app" / "controller.py", "from codec.codecs.curve import CurveCodec")
    done = _lint_imports(tree)
    assert done.returncode != 0
    broken = done.stdout.split("Broken contracts", 1)[-1]
    assert "The app never imports a codec package" in broken, done.stdout
    assert "app.views.planted_panel" in broken and "app.controller" in broken, done.stdout
    shutil.copy(ROOT / "app" / "controller.py", tree / "app" / "controller.py")
    view.write_text(  # the neutral words are what a view reads
        "from codec.codecs.base import SUB_TRACKS, TrackKind\n"
        "from codec.result_tables import cell_bytes\n"
    )
    assert _lint_imports(tree).returncode == 0


def test_each_folder_of_the_app_imports_only_what_it_is_allowed(tmp_path: Path) -> None:
    """The app's folders are allow-lists: a new view module reaching into a codec package,
    the scene reading files, the plumbing knowing the model, an import upward and a circle
    inside a folder each break `make lint`, all reported in one run."""
    tree = _copy(tmp_path)
    planted = tree / "app" / "views" / "planted.py"  # a module nobody listed anywhere
    planted.write_text("from codec.codecs.curve import codec\n", encoding="utf-8")
    _append(tree / "app" / "scene" / "skin_item.py", "import codec.formats")
    _append(tree / "app" / "qt" / "plot_cache.py", "import app.model.error_scale")
    _append(tree / "app" / "qt" / "when_shown.py", "import app.views.panel")
    _append(tree / "app" / "qt" / "handler_guard.py", "import app.qt.label_fence")
    done = _lint_imports(tree)
    assert done.returncode != 0
    broken = done.stdout.split("Broken contracts", 1)[-1]
    for contract, link in (
        ("no codec package", "app.views.planted -> codec.codecs.curve"),
        ("no codec beyond", "app.scene.skin_item -> codec.formats"),
        ("nothing of ours", "app.qt.plot_cache -> app.model.error_scale"),
        ("The app's layers", "app.qt.when_shown -> app.views.panel"),
        ("could be made acyclic", ".label_fence -> .handler_guard"),
    ):
        assert contract in broken and link in broken, (contract, link, done.stdout)
    planted.write_text("from codec.codecs import base\n", encoding="utf-8")  # the neutral words
    for module in ("scene/skin_item.py", "qt/plot_cache.py", "qt/when_shown.py"):
        shutil.copy(ROOT / "app" / module, tree / "app" / module)
    shutil.copy(ROOT / "app/qt/handler_guard.py", tree / "app/qt/handler_guard.py")
    assert _lint_imports(tree).returncode == 0
