"""No import cycle inside the codec: every module sits below the ones that import it.

The graph counts every import a module can execute: at module level and inside functions
(lazy imports run too, and a lazy import that closes a loop still ties two modules into one
room). Only imports under `if TYPE_CHECKING:` are left out: they never run. A package's
`__init__` is a node like any module; importing `codec.x.y` is an edge to `codec.x.y` alone.
"""

from __future__ import annotations

import ast
from pathlib import Path

CODEC = Path(__file__).resolve().parents[2] / "codec"


def _modules(package: Path) -> dict[str, Path]:
    """Dotted name -> file of every module of the package (folders as their __init__)."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(
    name: str, tree: ast.Module, modules: dict[str, Path], type_only: bool = False
) -> set[str]:
    """The package's modules that module `name` imports anywhere but under TYPE_CHECKING
    (also there when `type_only`)."""
    root = next(iter(modules)).split(".")[0]
    is_package = modules[name].name == "__init__.py"
    found: set[str] = set()

    def known(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test) and not type_only:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == root:
                    found.add(known(alias.name) or alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] == root:
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    found.add(sub if sub in modules else (known(source) or source))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(name)
    return found


def import_graph(package: Path, type_only: bool = False) -> dict[str, set[str]]:
    """module -> the package's modules it imports (see the module docstring); with
    `type_only` the imports under TYPE_CHECKING count too."""
    modules = _modules(package)
    return {
        name: _imported(name, ast.parse(path.read_text(encoding="utf-8")), modules, type_only)
        for name, path in modules.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other, directly or around a loop (Tarjan's
    strongly connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_codec_has_no_import_cycle_type_only_imports_included() -> None:
    """The result, the measure and the codec interface name each other's types: even those
    imports, which never run, must not close a loop (a circle is a circle to a reader)."""
    graph = import_graph(CODEC, type_only=True)
    assert "codec.codecs.base" in graph["codec.result"]  # it saw the type-only imports
    assert "codec.measure.shells" in graph["codec.codecs.base"]
    assert cycles(graph) == []


def test_type_only_imports_that_close_a_loop_are_a_cycle_when_counted(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path / "pkg",
        {
            "__init__.py": "",
            "a.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n"
            ),
            "b.py": "from pkg.a import A\n",
        },
    )
    assert cycles(import_graph(pkg, type_only=True)) == [["pkg.a", "pkg.b"]]


def test_the_codec_has_no_import_cycle() -> None:
    graph = import_graph(CODEC)
    assert (
        "codec.codecs.acl_style.encoder" in graph and "codec.formats.bvh" in graph
    )  # it saw the package
    assert (
        "codec.codecs.acl_style.optimizer" in graph["codec.codecs.acl_style.encoder"]
    )  # and the imports in it
    assert cycles(graph) == []


def test_a_lazy_import_that_closes_a_loop_is_a_cycle(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path / "pkg",
        {
            "__init__.py": "",
            "a.py": "from pkg.b import f\n",
            "b.py": "def f():\n    from pkg import a\n    return a\n",
            "c.py": "from pkg import a, b\n",
        },
    )
    assert cycles(import_graph(pkg)) == [["pkg.a", "pkg.b"]]


def test_a_loop_through_a_subpackage_is_a_cycle(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path / "pkg",
        {
            "__init__.py": "",
            "top.py": "import pkg.sub.low\n",
            "sub/__init__.py": "from .low import g\n",
            "sub/low.py": "from ..top import x\n",
        },
    )
    assert cycles(import_graph(pkg)) == [["pkg.sub.low", "pkg.top"]]


def test_type_checking_imports_are_not_edges(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path / "pkg",
        {
            "__init__.py": "",
            "a.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n"
            ),
            "b.py": "from pkg.a import A\n",
        },
    )
    assert import_graph(pkg)["pkg.a"] == set() and cycles(import_graph(pkg)) == []
