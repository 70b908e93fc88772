"""The ``agenteval`` command: ``lint`` case files, print the case-file ``schema``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from .casefile import load_case_file
from .model import MultiSourceError
from .yamlio import Location, SourceError, locate

__all__ = ["main"]


def _files(paths: list[str]) -> Iterator[Path]:
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            yield from sorted(q for q in p.rglob("*") if q.suffix in (".yaml", ".yml"))
        else:
            yield p


def _load_conftest(root: Path) -> None:
    """Import ``conftest.py`` of the current folder, so its custom rule types are known."""
    import importlib.util

    path = root / "conftest.py"
    if not path.is_file():
        return
    spec = importlib.util.spec_from_file_location("agenteval_lint_conftest", path)
    if spec is None or spec.loader is None:  # pragma: no cover
        return
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(root))
    spec.loader.exec_module(module)


def lint(paths: list[str]) -> int:
    """Validate case files exactly as collection does; print every error. Exit 1 on any."""
    seen: dict[str, Location] = {}
    errors: list[SourceError] = []
    items = 0
    root = Path.cwd()
    _load_conftest(root)
    from .ledger import LEDGER_NAME, load_ledger

    try:  # the ledger decides which assertion switches exist
        ledger = load_ledger(root / "rules" / LEDGER_NAME, root)
    except SourceError as exc:
        print(exc)
        return 1
    for path in _files(paths):
        try:
            entries = load_case_file(path, locate(path, root), ledger)
        except SourceError as exc:
            errors.append(exc)
            continue
        except MultiSourceError as exc:
            errors += exc.errors
            continue
        for plan, loc in entries:
            if plan.id in seen:
                errors.append(SourceError(loc, f"duplicate id {plan.id!r}: already used at "
                                          f"{seen[plan.id]}", "id"))
            else:
                seen[plan.id] = loc
                items += 1
    for err in errors:
        print(err)
    print(f"{items} items, {len(errors)} errors", file=sys.stderr)
    return 1 if errors else 0


def schema() -> int:
    """Print the JSON schema of a case and of a scenario."""
    from .model.cases import Case, Scenario

    doc = {"case": Case.model_json_schema(), "scenario": Scenario.model_json_schema()}
    print(json.dumps(doc, ensure_ascii=False, indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agenteval", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p_lint = sub.add_parser("lint", help="validate case files without running them")
    p_lint.add_argument("paths", nargs="+", help="case files or folders")
    sub.add_parser("schema", help="print the JSON schema of cases and scenarios")
    p_docs = sub.add_parser("docs", help="print generated reference docs (markdown)")
    p_docs.add_argument("what", choices=["rules"])
    p_docs.add_argument("--ledger", default="rules/business-rules.yaml")
    args = parser.parse_args(argv)
    if args.command == "lint":
        return lint(args.paths)
    if args.command == "docs":
        return docs(args.ledger)
    return schema()


def docs(ledger_path: str) -> int:
    """Print docs/rules.md: every built-in rule type and the ledger."""
    from .ledger import load_ledger
    from .report.ruledoc import render_rules_doc

    root = Path.cwd()
    sys.stdout.write(render_rules_doc(load_ledger(root / ledger_path, root)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
