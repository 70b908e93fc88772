"""pytest-html (``--html``): every item's evidence as an extra, the gate and the main tables in
the summary, and sortable columns for verdict, behaviour, priority, latency and failed rules.

pytest-html inserts what these hooks give it as raw HTML (extras through
``innerHTML``), so every value goes through :func:`~._page.h`; the results are
masked already. The extras are made where the item ran (a worker under xdist)
from its result and travel with its report; the summary and the columns are
made on the controller, the only place pytest-html runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import TYPE_CHECKING, Any

import pytest

from . import _page as P
from ._labels import words

if TYPE_CHECKING:
    from ..recorder import Recorder

__all__ = ["HtmlHooks", "item_extra", "wants_extras"]

_COLUMNS = (("agenteval_verdict", "verdict"), ("agenteval_behavior", "behaviour"),
            ("agenteval_priority", "priority"), ("agenteval_latency", "latency"),
            ("agenteval_rules", "failed rules"))
_SHOWN_ROWS = 60


def wants_extras(config: pytest.Config) -> bool:
    """Whether this run writes a pytest-html report (so items should carry extras)."""
    return bool(config.getoption("htmlpath", None))


def _rows_html(rows: list[Mapping[str, Any]]) -> str:
    """A turn's rule rows, failed ones first and marked; not-applicable ones counted only."""
    shown = [r for r in rows if r["status"] != "not_applicable"]
    shown.sort(key=lambda r: r["status"] != "failed")
    na = len(rows) - len(shown)
    body = "".join(
        f'<tr class="ae-{P.tone(r["status"])}"><td>{P.badge(r["status"], r["status"])}</td>'
        f'<td><code>{P.h(r["rule_id"])}</code>{" [veto]" if r.get("veto") else ""}</td>'
        f'<td>{P.h(r["type"])}</td><td>{P.h(r.get("reason"))}</td>'
        f'<td class="ae-ev">{P.h(r.get("evidence"))}</td></tr>'
        for r in shown[:_SHOWN_ROWS])
    more = len(shown) - _SHOWN_ROWS
    tail = (f'<p class="ae-t3">{na} rule(s) not applicable' if na else '<p class="ae-t3">') + (
        f"; {more} more row(s) in results.json" if more > 0 else "") + "</p>"
    return ("<table class=\"ae-rules\"><tr><th></th><th>rule</th><th>type</th><th>reason</th>"
            f"<th>evidence</th></tr>{body}</table>{tail}")


def _judge_html(j: Mapping[str, Any] | None) -> str:
    if not j:
        return ""
    scores = j.get("scores") or {}
    reasons = j.get("reasons") or {}
    if not scores:
        return (f'<p>judge: {P.badge(j.get("status") or "not_evaluated", j.get("status") or "")}'
                f' {P.h(j.get("reason"))}</p>')
    cells = "".join(f"<tr><td>{P.h(d)}</td><td>{P.h('n/a' if s is None else s)}</td>"
                    f"<td>{P.h(reasons.get(d, ''))}</td></tr>" for d, s in scores.items())
    risk = " · fact risk" if j.get("fact_risk") else ""
    return (f'<p>judge: {P.badge(j.get("status") or "", j.get("status") or "")}{risk} '
            f'{P.h(j.get("reason"))}</p><table class="ae-rules"><tr><th>dimension</th>'
            f"<th>score</th><th>reason</th></tr>{cells}</table>")


def _intent_html(it: Mapping[str, Any] | None) -> str:
    if not it or not it.get("evaluated"):
        return ""
    mark = "✗ " if it.get("correct") is False or it.get("code_correct") is False else ""
    return (f"<p>{mark}intent: expected {P.h(it.get('expected'))} · predicted "
            f"{P.h(it.get('predicted'))} · code {P.h(it.get('code_returned'))}"
            + (f" (expected {P.h(it.get('code_expected'))})"
               if it.get("code_expected") is not None else "") + "</p>")


def _task_html(task: Mapping[str, Any] | None) -> str:
    if not task or not task.get("parts"):
        return ""
    rate = task.get("completion_rate")
    rows = "".join(
        f'<tr class="ae-{P.tone(p["status"])}"><td>{P.badge(p["status"], p["status"])}</td>'
        f'<td>{P.h(p["name"])} ({P.h(p["kind"])})</td>'
        f'<td>{"" if p.get("turn") is None else p["turn"] + 1}</td>'
        f'<td class="ae-ev">{P.h(p.get("evidence"))}</td><td>{P.h(p.get("reason"))}</td></tr>'
        for p in task["parts"])
    return (f"<p>task: completion {P.h(P.pct(rate))} · "
            f"{P.badge(task.get('success_level') or '', task.get('success_level') or '')} "
            f'{P.h(task.get("reason"))}</p><table class="ae-rules"><tr><th></th><th>slot / step'
            f"</th><th>turn</th><th>evidence</th><th>reason</th></tr>{rows}</table>")


def item_extra(payload: Mapping[str, Any]) -> str:
    """The evidence of one item (its result as JSON): per turn the exchange, failure
    reasons, intent, rule rows and judge; then the task."""
    out = [f'<div class="ae-item">{P.badge(payload["status"], payload["status"].upper())} '
           f'<b>{P.h(payload["id"])}</b> {P.h(payload.get("title"))}']
    for t in payload["turns"]:
        out.append(f'<div class="ae-turn"><p><b>turn {t["index"] + 1}</b> · '
                   f'{t["latency_ms"]:.0f} ms</p><p class="ae-say">user: {P.h(t["input"])}</p>')
        if t.get("error"):
            out.append(f'<p class="ae-err">agent error ({P.h(t["error"]["kind"])}): '
                       f'{P.h(t["error"]["detail"])}</p>')
        if t.get("reply") is not None:
            out.append(f'<p class="ae-say">agent: {P.h(t["reply"])}</p>')
        if t.get("failure_reasons"):
            out.append('<ul class="ae-fx">' + "".join(
                f"<li>{P.h(x)}</li>" for x in t["failure_reasons"]) + "</ul>")
        out.append(_intent_html(t.get("intent")))
        if t.get("rules"):
            out.append(_rows_html(t["rules"]))
        out.append(_judge_html(t.get("judge")) + "</div>")
    out.append(_task_html(payload.get("task")) + "</div>")
    return "".join(out)


def _css() -> str:
    return resources.files("pytest_agenteval.report").joinpath(
        "assets", "pytest-html.css").read_text(encoding="utf-8")


class HtmlHooks:
    """pytest-html's hooks, on the controller (or the single process)."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        for i, (name, label) in enumerate(_COLUMNS):
            cells.insert(2 + i, f'<th class="sortable" data-column-type="{name}">{label}</th>')

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(self, report: pytest.TestReport,
                                      cells: list[str]) -> None:
        payload = getattr(report, "agenteval", None)
        values = _cells(payload) if isinstance(payload, dict) else [""] * len(_COLUMNS)
        for i, ((name, _), value) in enumerate(zip(_COLUMNS, values, strict=True)):
            cells.insert(2 + i, f'<td class="col-{name}">{value}</td>')

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(self, prefix: list[str], summary: list[str],
                                    postfix: list[str], session: pytest.Session) -> None:
        doc = self.recorder.document
        if doc is None:
            return
        from .html import summary_sections

        prefix.append(f"<style>{_css()}</style>" + summary_sections(
            doc, self.recorder.digest, self.recorder.lang, self.recorder.project.rule_titles()))


def _cells(payload: Mapping[str, Any]) -> list[str]:
    """The sortable cells of an item: the value pytest-html sorts on comes first (as text:
    its sort compares strings, so the latency is zero-padded in a hidden span)."""
    turns = payload["turns"]
    failed = list(dict.fromkeys(r["rule_id"] for t in turns for r in t["rules"]
                                if r["status"] == "failed"))
    latency = sum(t["latency_ms"] for t in turns)
    behaviors = payload.get("behaviors") or [t["expected"]["behavior"] for t in turns
                                             if t["expected"].get("behavior")]
    w = words("en")
    status = payload["status"]
    return [P.badge(status, w.status(status).upper()), P.h(", ".join(behaviors)),
            P.h(payload.get("priority")),
            f'<span hidden>{latency:012.1f}</span>{latency:.0f} ms', P.h(", ".join(failed))]
