"""The compiled core's cache follows the sources."""

from __future__ import annotations

from pathlib import Path

from codec import jit


def test_a_changed_source_drops_the_cached_kernels(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "kernels.py").write_text("from codec.jit import kernel\nfrom codec.callee import y\n")
    (pkg / "callee.py").write_text("y = 1\n")
    (pkg / "cli.py").write_text("z = 1\n")  # no kernels, imported by none
    assert jit.drop_stale_caches(pkg)  # the first time: no stamp yet
    cached = [
        pkg / "__pycache__" / "kernels.f-1.py311.nbi",
        pkg / "__pycache__" / "kernels.f-1.py311.1.nbc",
    ]
    for c in cached:
        c.write_bytes(b"machine code")
    assert not jit.drop_stale_caches(pkg)  # nothing changed: the cache stays
    (pkg / "cli.py").write_text("z = 2\n")
    assert not jit.drop_stale_caches(pkg)  # a module the kernels do not use
    assert all(c.exists() for c in cached)
    (pkg / "callee.py").write_text("y = 2\n")  # a callee in another module changed
    assert jit.drop_stale_caches(pkg)
    assert not any(c.exists() for c in cached)
    assert (pkg / "kernels.py").exists() and (pkg / "callee.py").exists()


def test_a_callee_imported_in_parentheses_is_followed_too(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "kernels.py").write_text(
        "from codec.jit import kernel\n"
        "from codec.sub import (\n    other as o,  # why\n    limits,\n)\n"
    )
    (pkg / "sub" / "limits.py").write_text("A = 1\nB = 2\n")
    (pkg / "other.py").write_text("z = 1\n")
    found = jit._kernel_sources(pkg)
    assert pkg / "sub" / "limits.py" in found and pkg / "other.py" not in found


def test_a_script_that_imports_numba_first_still_loads_every_kernel_from_the_cache() -> None:
    """numba imported before the codec read its settings without NUMBA_CPU_NAME=generic: the
    first kernel looked for this CPU's machine code, missed the cache and compiled (1.7 s
    of CPU in every such script)."""
    import subprocess
    import sys

    from codec import warm_up

    warm_up.warm_up(None, "acl-style")  # the cache holds every kernel of the default codec
    code = (
        "import numba\n"  # first, as a user's script may
        "from codec import warm_up\n"
        "print(warm_up.warm_up(None, 'acl-style').compiled)\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "0"
