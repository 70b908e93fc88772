"""The ``agenteval`` command: ``lint`` case files, print a ``schema``, generate ``docs``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .model import MultiSourceError
from .yamlio import SourceError

if TYPE_CHECKING:
    from .project import Project

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


def _project(root: Path, config: str | None) -> Project:
    from .config import load_config
    from .project import Project

    return Project(root, load_config(root, config))


def lint(paths: list[str], config: str | None = None) -> int:
    """Validate case files exactly as collection does; print every error. Exit 1 on any.

    The project (agenteval.yaml, the ledger and the taxonomy under its rules
    folder) is the one of the current folder, as for a pytest run there.
    """
    from .config import ConfigError

    root = Path.cwd()
    _load_conftest(root)
    try:
        project = _project(root, config)
        _ = project.ledger, project.taxonomy  # the rules the case files are checked against
        _ = project.gates  # red lines against the ledger, labels against the taxonomy
    except ConfigError as exc:
        print(exc)
        return 1
    except (SourceError, MultiSourceError) as exc:
        print(exc)
        return 1
    errors: list[SourceError] = []
    items = 0
    for path in _files(paths):
        try:
            entries = project.load_case_file(path)
        except SourceError as exc:
            errors.append(exc)
            continue
        except MultiSourceError as exc:
            errors += exc.errors
            continue
        clashes = project.ids.claim([(plan.id, loc) for plan, loc in entries])
        errors += clashes
        items += len(entries) - len(clashes)
    for err in errors:
        print(err)
    print(f"{items} items, {len(errors)} errors", file=sys.stderr)
    return 1 if errors else 0


def schema(what: str = "cases") -> int:
    """Print a JSON Schema: of a case and a scenario (``cases``), or of ``results.json``."""
    if what == "results":
        from .report.schema import results_schema

        doc = results_schema()
    else:
        from .model.cases import Case, Scenario

        doc = {"case": Case.model_json_schema(), "scenario": Scenario.model_json_schema()}
    print(json.dumps(doc, ensure_ascii=False, indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agenteval", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p_lint = sub.add_parser("lint", help="validate case files without running them")
    p_lint.add_argument("paths", nargs="+", help="case files or folders")
    p_lint.add_argument("--config", default=None, help="agenteval.yaml (default: ./agenteval.yaml)")
    p_schema = sub.add_parser("schema", help="print a JSON Schema: of case files (cases, "
                              "the default) or of the run record (results)")
    p_schema.add_argument("what", nargs="?", choices=["cases", "results"], default="cases")
    p_docs = sub.add_parser("docs", help="print generated reference docs (markdown)")
    p_docs.add_argument("what", choices=["rules"])
    p_docs.add_argument("--ledger", default="rules/business-rules.yaml")
    args = parser.parse_args(argv)
    if args.command == "lint":
        return lint(args.paths, args.config)
    if args.command == "docs":
        return docs(args.ledger)
    return schema(args.what)


def docs(ledger_path: str) -> int:
    """Print docs/rules.md: every built-in rule type and the ledger."""
    from .ledger import load_ledger
    from .report.ruledoc import render_rules_doc

    root = Path.cwd()
    sys.stdout.write(render_rules_doc(load_ledger(root / ledger_path, root)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
