"""An import-linter contract that names what a package MAY import, not what it may not.

A forbidden list only catches the modules someone thought of; a new codec package, a new
file writer or a new GUI toolkit slips past it. An allow-list fails on anything new until
somebody decides it belongs there. `make lint` registers it (pyproject.toml,
`contract_types`) as `allow_list`:

    source_modules   packages whose every module is checked
    allowed_modules  what they may import directly: their own package, other packages of
                     ours (a package allows its modules), third-party packages by top name;
                     Python's standard library is always allowed
    ignore_imports   imports left out, as in import-linter's own contracts
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import grimp
from importlinter import Contract, ContractCheck, fields, output
from importlinter.application import contract_utils


@dataclass(frozen=True)
class Illegal:
    importer: str
    imported: str
    lines: tuple[int, ...]


def _within(module: str, packages: list[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _standard(module: str) -> bool:
    top = module.split(".", 1)[0]
    return top in sys.stdlib_module_names or top == "__future__"


class AllowListContract(Contract):
    """Every module of `source_modules` imports only `allowed_modules` (and the stdlib)."""

    type_name = "allow_list"

    source_modules = fields.ListField(subfield=fields.StringField())
    allowed_modules = fields.ListField(subfield=fields.StringField())
    ignore_imports = fields.SetField(subfield=fields.ImportExpressionField(), required=False)
    unmatched_ignore_imports_alerting = fields.EnumField(
        contract_utils.AlertLevel, default=contract_utils.AlertLevel.ERROR
    )

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        removal = contract_utils.remove_ignored_imports_and_report(
            graph=graph,
            ignore_imports=self.ignore_imports,  # type: ignore[arg-type]
            unmatched_alerting=self.unmatched_ignore_imports_alerting,  # type: ignore[arg-type]
        )
        sources: list[str] = list(self.source_modules)  # type: ignore[call-overload]
        allowed = sources + list(self.allowed_modules)  # type: ignore[call-overload]
        illegal: list[Illegal] = []
        for source in sources:
            if source not in graph.modules:
                raise ValueError(f"allow_list: {source} is not a module of the graph")
            for importer in sorted({source} | graph.find_descendants(source)):
                for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                    if _within(imported, allowed) or _standard(imported):
                        continue
                    details = graph.get_import_details(importer=importer, imported=imported)
                    lines = tuple(d["line_number"] for d in details)
                    illegal.append(Illegal(importer, imported, lines))
        return ContractCheck(
            kept=not illegal,
            warnings=list(removal.warnings),
            ignored_import_count=removal.ignored_import_count,
            metadata={"illegal": illegal},
        )

    def render_broken_contract(self, check: ContractCheck) -> None:
        output.print_error("Imports outside the allow-list:", bold=False)
        output.new_line()
        for link in check.metadata["illegal"]:
            where = ", ".join(map(str, link.lines))
            output.print_error(f"- {link.importer} -> {link.imported} (l.{where})", bold=False)
        output.new_line()
