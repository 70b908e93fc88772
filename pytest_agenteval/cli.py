"""The ``agenteval`` command: ``lint`` case files, print a ``schema``, generate ``docs``,
``calibrate`` the judge against human scores, ``cache clear``, ``compare`` two runs,
``merge`` the records of a sharded run, ``dataset diff`` two versions of a dataset,
``expand`` clean cases into variants, ``promote`` a failed item to a regression case."""

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
    """The case files under ``paths``; a folder's own ``dataset.yaml`` is its manifest."""
    from .model.dataset import MANIFEST_NAME

    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            yield from sorted(q for q in p.rglob("*") if q.suffix in (".yaml", ".yml")
                              and not (q.name == MANIFEST_NAME and q.parent == p))
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


def lint(paths: list[str], config: str | None = None, strict: bool = False) -> int:
    """Validate case files as collection does and check what they mean; exit 1 on any error
    (with ``strict``, on any warning too).

    Errors go to stdout one a line, then the warnings (``warning: …``); the coverage matrix
    and the count of items, errors and warnings go to stderr. The project (agenteval.yaml,
    the ledger and the taxonomy under its rules folder) is the one of the current folder,
    as for a pytest run there.
    """
    from .config import ConfigError
    from .lint import find_manifest, lint_files

    root = Path.cwd()
    _load_conftest(root)
    try:
        project = _project(root, config)
        _ = project.ledger, project.taxonomy  # the rules the case files are checked against
        _ = project.gates  # red lines against the ledger, labels against the taxonomy
        manifest = find_manifest(project, [Path(p) for p in paths if Path(p).is_dir()])
    except (ConfigError, SourceError, MultiSourceError) as exc:
        print(exc)
        return 1
    report = lint_files(project, list(_files(paths)), manifest)
    for line in [*report.errors, *report.warnings]:
        print(line)
    print(report.matrix, *report.notes, sep="\n", file=sys.stderr)
    print(report.summary(), file=sys.stderr)
    return report.exit_status(strict)


def schema(what: str = "cases", write: str | None = None) -> int:
    """Print (or ``write`` to a file) a JSON Schema: of a case file (``cases``: its
    ``defaults``, ``cases`` and ``scenarios``, for editors), or of ``results.json``."""
    if what == "results":
        from .report.schema import results_schema

        doc = results_schema()
    else:
        from .model.file_schema import case_file_schema

        doc = case_file_schema()
    text = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    if write is None:
        sys.stdout.write(text)
        return 0
    path = Path(write)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"agenteval schema: wrote {path}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agenteval", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p_lint = sub.add_parser("lint", help="validate case files and check what they mean "
                            "(knowledge points, pairs, histories, personal data, reviews, "
                            "labels and rule ids, the declared mix) without running them")
    p_lint.add_argument("paths", nargs="+", help="case files or folders")
    p_lint.add_argument("--config", default=None, help="agenteval.yaml (default: ./agenteval.yaml)")
    p_lint.add_argument("--strict", action="store_true",
                        help="warnings fail too (exit 1), not only errors")
    p_schema = sub.add_parser("schema", help="print a JSON Schema: of a case file (cases, "
                              "the default: defaults, cases and scenarios) or of the run "
                              "record (results)")
    p_schema.add_argument("what", nargs="?", choices=["cases", "results"], default="cases")
    p_schema.add_argument("-o", "--write", default=None, metavar="PATH",
                          help="write the schema to PATH (e.g. docs/schema/cases.schema.json) "
                          "instead of printing it")
    p_docs = sub.add_parser("docs", help="print generated reference docs (markdown)")
    p_docs.add_argument("what", choices=["rules"])
    p_docs.add_argument("--ledger", default="rules/business-rules.yaml")
    p_cal = sub.add_parser("calibrate", help="judge human-scored anchor replies and print "
                           "the agreement per dimension (kappa, Spearman, confusion)")
    p_cal.add_argument("anchors", help="the anchors file (e.g. rules/judge-anchors.yaml)")
    p_cal.add_argument("--config", default=None, help="agenteval.yaml (default: ./agenteval.yaml)")
    p_cal.add_argument("--threshold", type=float, default=0.6,
                       help="quadratic-weighted kappa below which a dimension is unfit to gate "
                       "on (default 0.6)")
    p_cal.add_argument("--min-n", type=int, default=5,
                       help="scored anchors a dimension needs at least (default 5)")
    p_cal.add_argument("--no-cache", action="store_true", help="bypass the judge's cache")
    p_cal.add_argument("--json", default=None, metavar="FILE", help="also write the table as JSON")
    p_cache = sub.add_parser("cache", help="the judge's cache (judge.cache)")
    p_cache.add_argument("action", choices=["clear"])
    p_cache.add_argument("--config", default=None,
                         help="agenteval.yaml (default: ./agenteval.yaml)")
    _add_compare(sub)
    _add_merge(sub)
    _add_dataset(sub)
    args = parser.parse_args(argv)
    if args.command in _DATASET:
        return _DATASET[args.command](args)
    if args.command == "compare":
        return compare(args)
    if args.command == "merge":
        return merge(args)
    if args.command == "calibrate":
        return calibrate(args.anchors, args.config, args.threshold, args.min_n, args.no_cache,
                         args.json)
    if args.command == "cache":
        return cache_clear(args.config)
    if args.command == "lint":
        return lint(args.paths, args.config, args.strict)
    if args.command == "docs":
        return docs(args.ledger)
    return schema(args.what, args.write)


def _add_compare(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "compare", help="compare two runs: comparability, changed items, metric deltas with "
        "95%% intervals, new red-line failures; the exit status is a CI gate",
        description="Compare run A (the baseline) with run B. Exit 0: no new red-line failure, "
        "regressions within --max-regressions, no metric worse than its --max-drop; 1: that "
        "gate failed; 2: usage error; 3: the runs are not comparable.")
    p.add_argument("a", help="run A: a results.json, a run folder or reports/latest")
    p.add_argument("b", help="run B: a results.json, a run folder or reports/latest")
    p.add_argument("--html", default=None, metavar="OUT.html",
                   help="also write a self-contained HTML page")
    p.add_argument("--json", default=None, metavar="OUT.json",
                   help="also write the comparison as JSON")
    p.add_argument("--lang", choices=["zh", "en"], default=None,
                   help="language of the HTML page (default: run A's language, else zh)")
    p.add_argument("--max-regressions", type=int, default=0, metavar="N",
                   help="regressed items allowed (default 0)")
    p.add_argument("--max-drop", action="append", default=[], metavar="METRIC=X",
                   help="fail when METRIC is worse in B by more than X (a share for rates: "
                   "success_rate=0.02 is 2 points; ms for latency_p95_ms); repeatable")
    p.add_argument("--significant-only", action="store_true",
                   help="a rate's drop counts only when its 95%% interval excludes 0")
    p.add_argument("--allow-incomparable", action="store_true",
                   help="apply the gate (exit 0/1) even when the runs are not comparable")


def _add_merge(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "merge", help="merge the run records of the shards of one run (--agenteval-shard i/n) "
        "into one record: metrics, completeness and gate recomputed as for a single run",
        description="Merge the records of the N shards of one run into OUT_DIR (results.json, "
        "results.jsonl, report.html). A missing shard makes the run incomplete, which blocks "
        "the gate. Exit 0: the merged gate is not BLOCK; 1: it is BLOCK; 2: usage error "
        "(including records that are not the shards of one run, without --force).")
    p.add_argument("out_dir", metavar="OUT_DIR", help="the folder to write the merged record to")
    p.add_argument("inputs", metavar="RECORD", nargs="+",
                   help="a shard's results.json, its run folder or reports/latest")
    p.add_argument("--config", default=None, metavar="agenteval.yaml",
                   help="the project whose rules/gates.yaml decides the gate (default: the "
                   "records' rootdir, else ./agenteval.yaml)")
    p.add_argument("--rules-dir", default=None, metavar="DIR",
                   help="the rules folder (gates.yaml, taxonomy.yaml, business-rules.yaml) "
                   "to use instead of the project's")
    p.add_argument("--force", action="store_true",
                   help="merge records that differ (collection, dataset, ledger, rubric, "
                   "judge model, repeat count) or are no shard records")
    p.add_argument("--lang", choices=["zh", "en"], default=None,
                   help="language of report.html (default: the records' language)")


def _add_dataset(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "dataset", help="versions of a dataset: `dataset diff OLD NEW` proves NEW keeps OLD")
    p_diff = p.add_subparsers(dest="dataset_command", required=True).add_parser(
        "diff", help="prove that NEW keeps every item of OLD unchanged (or says why not)",
        description="Compare two versions of a dataset item by item (by id, after defaults: "
        "are merged). Exit 0: NEW keeps every item of OLD, or each change carries a "
        "change_reason and a new version; 1: an item changed without them, or was removed "
        "(without --allow-removal), or a case file is broken; 2: usage error.")
    p_diff.add_argument("old", metavar="OLD", help="the old version: a case folder (with its "
                        "dataset.yaml), a case file, or REV:PATH of this git repository")
    p_diff.add_argument("new", metavar="NEW", nargs="?", default=None,
                        help="the new version (default: OLD's path in the working tree)")
    p_diff.add_argument("--git", metavar="REV", default=None,
                        help="read OLD from this git revision (OLD is then a path)")
    p_diff.add_argument("--allow-removal", action="store_true",
                        help="a removed item is a warning, not an error")
    p_exp = sub.add_parser(
        "expand", help="write candidate variants (typo, asr, colloquial, noise, "
        "wrong_premise) of the clean cases of FILES, reproducibly",
        description="Variants of the clean items (pair role clean, or challenge none): each "
        "changes one challenge factor, is a candidate and links to its clean item by pair. "
        "The same inputs and options give the same bytes. Exit 0: written; 1: an input "
        "file has errors, or no variant could be made; 2: usage error.")
    p_exp.add_argument("paths", metavar="FILES", nargs="+", help="case files or folders")
    p_exp.add_argument("--out", required=True, metavar="FILE",
                       help="the case file to write (replaced)")
    p_exp.add_argument("--seed", type=int, default=0, help="picks among the possible "
                       "variants (default 0)")
    p_exp.add_argument("--challenges", default=None, metavar="KINDS",
                       help="comma-separated kinds (default: typo,asr,colloquial,noise,"
                       "wrong_premise)")
    p_exp.add_argument("--per", type=int, default=1, metavar="N",
                       help="variants per clean item and kind, at most (default 1)")
    p_pro = sub.add_parser(
        "promote", help="turn a failed item of a run into a regression case (with a "
        "contrast group stub), appended to FILE",
        description="Write the failed item CASE_ID of the run as <id>-REG-<n>, a candidate, "
        "with an equivalent phrasing and a near-miss stub, at the end of FILE (created if "
        "missing). Exit 0: written; 1: the item did not fail (without --any); 2: usage "
        "error.")
    p_pro.add_argument("record", metavar="RUN",
                       help="a results.json, a run folder or reports/latest")
    p_pro.add_argument("ids", metavar="CASE_ID", nargs="+", help="the item(s) to promote")
    p_pro.add_argument("--to", required=True, metavar="FILE", dest="to",
                       help="the case file to append to")
    p_pro.add_argument("--any", action="store_true", help="promote an item that passed too")


def dataset_diff(args: argparse.Namespace) -> int:
    """``agenteval dataset diff``: see :mod:`pytest_agenteval.dataset.diff`."""
    from .dataset.diff import run

    return run(args.old, args.new, git=args.git, allow_removal=args.allow_removal)


def expand(args: argparse.Namespace) -> int:
    """``agenteval expand``: see :mod:`pytest_agenteval.dataset.expand`."""
    from .dataset.expand import run

    return run(args.paths, args.out, seed=args.seed, challenges=args.challenges,
               per=args.per)


def promote(args: argparse.Namespace) -> int:
    """``agenteval promote``: see :mod:`pytest_agenteval.dataset.promote`."""
    from .dataset.promote import run

    return run(args.record, args.ids, args.to, any_status=args.any)


_DATASET = {"dataset": dataset_diff, "expand": expand, "promote": promote}


def merge(args: argparse.Namespace) -> int:
    """``agenteval merge``: see :mod:`pytest_agenteval.report.merge`."""
    from .report.merge import run

    return run(args.out_dir, args.inputs, config=args.config, rules_dir=args.rules_dir,
               force=args.force, lang=args.lang)


def compare(args: argparse.Namespace) -> int:
    """``agenteval compare``: see :mod:`pytest_agenteval.report.compare`."""
    from .report.compare import run

    return run(args.a, args.b, html=args.html, json_out=args.json, lang=args.lang,
               max_regressions=args.max_regressions, max_drop=args.max_drop,
               significant_only=args.significant_only,
               allow_incomparable=args.allow_incomparable)


def calibrate(anchors: str, config: str | None, threshold: float, min_n: int, no_cache: bool,
              json_out: str | None) -> int:
    """``agenteval calibrate``: see :mod:`pytest_agenteval.judge.calibrate`."""
    from .config import ConfigError
    from .judge.calibrate import calibrate as run

    root = Path.cwd()
    try:
        project = _project(root, config)
        if project.judge_config is None:
            print("agenteval calibrate: no judge configured: add judge: (model, base_url, "
                  "api_key_env) to agenteval.yaml", file=sys.stderr)
            return 2
        errors = project.config.judge_preflight()
        if errors:
            print("agenteval calibrate: the judge cannot be called:\n"
                  + "\n".join(str(e) for e in errors), file=sys.stderr)
            return 2
        return run(project, Path(anchors), threshold, min_n, not no_cache,
                   Path(json_out) if json_out else None)
    except (ConfigError, SourceError, MultiSourceError, OSError) as exc:
        print(f"agenteval calibrate: {exc}", file=sys.stderr)
        return 2


def cache_clear(config: str | None) -> int:
    """``agenteval cache clear``: empty the judge's cache file."""
    from .config import ConfigError
    from .judge.cache import clear_cache

    root = Path.cwd()
    try:
        project = _project(root, config)
    except ConfigError as exc:
        print(f"agenteval cache: {exc}", file=sys.stderr)
        return 2
    judge = project.config.model.judge
    name = judge.cache if judge is not None else ".agenteval/cache.sqlite"
    if not name:
        print("agenteval cache: judge.cache is off (null); nothing to clear")
        return 0
    path = Path(name) if Path(name).is_absolute() else root / name
    n = clear_cache(path)
    print(f"agenteval cache: cleared {n} judge result(s) from {path}")
    return 0


def docs(ledger_path: str) -> int:
    """Print docs/rules.md: every built-in rule type and the ledger."""
    from .ledger import load_ledger
    from .report.ruledoc import render_rules_doc

    root = Path.cwd()
    sys.stdout.write(render_rules_doc(load_ledger(root / ledger_path, root)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
