"""``agenteval compare``: the command."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ._gate import Limits, check_limits, parse_max_drop, verdict
from ._html import render_html
from ._metrics import compare_runs
from ._records import CompareError, load_record
from ._text import render_text, to_json

# -- the command -------------------------------------------------------------------------------


def _write(path: str, text: str) -> None:
    target = Path(path)
    tmp = target.with_name(target.name + ".part")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)
    except OSError as exc:
        raise CompareError(f"{path}: cannot be written: {exc}") from exc


def run(a: str, b: str, *, html: str | None = None, json_out: str | None = None,
        lang: str | None = None, max_regressions: int = 0, max_drop: Sequence[str] = (),
        significant_only: bool = False, allow_incomparable: bool = False,
        out: TextIO | None = None) -> int:
    """``agenteval compare``: print the comparison, write ``--html``/``--json``; returns
    the exit status (0 pass, 1 gate failed, 2 usage error, 3 not comparable)."""
    out = out or sys.stdout
    try:
        path_a, doc_a = load_record(a)
        path_b, doc_b = load_record(b)
        limits = Limits(max_regressions, parse_max_drop(max_drop), significant_only,
                        allow_incomparable)
        comparison = compare_runs(doc_a, doc_b, path_a, path_b)
        check_limits(comparison, limits)
        result = verdict(comparison, limits)
        out.write(render_text(comparison, result, limits))
        if html:
            _write(html, render_html(comparison, result, lang or doc_a["run"].get("language")
                                     or "zh"))
        if json_out:
            _write(json_out, json.dumps(to_json(comparison, result), ensure_ascii=False,
                                        indent=2) + "\n")
    except CompareError as exc:
        print(f"agenteval compare: {exc}", file=sys.stderr)
        return 2
    return result.exit
