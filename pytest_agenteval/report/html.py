"""``report.html``: one self-contained page a release is decided from (SPEC 7).

It reads like the decision it serves: the gate and written conclusions on
the first screen (can we release, what blocks, how good are the core
abilities, which defects, what to retest), then each layer's figures with
their intervals and charts, the human review queue, the case ledger (every
item, filterable, each one down to its request, reply, rule rows, judge
reasons and turns), and what the run could not measure.

Everything is rendered here from the run record's document (``run``,
``metrics``, ``gate``, ``completeness``, ``review_queue``) and a
:class:`~.digest.Digest` of its cases; nothing is fetched, nothing is trusted:
text goes through :func:`~._page.h`, the cases through the page's JSON data
block, and the ledger's script builds its DOM with ``textContent`` only.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from . import _page as P
from ._labels import Words, words
from .digest import Digest

__all__ = ["build_report", "report_from_record", "write_report"]

_OUTCOMES = ("ANSWERABLE", "HANDOFF_REQUIRED", "OUT_OF_SCOPE", "CONTROL")
_PRIORITIES = ("P0", "P1", "P2")


def _link(case_id: str) -> str:
    return f'<a href="#case={quote(case_id, safe="")}" class="case-link">{P.h(case_id)}</a>'


def _named(case_id: str) -> str:
    """An item named where it cannot be linked to (pytest-html's summary)."""
    return f"<code>{P.h(case_id)}</code>"


def _links(ids: list[str], w: Words, n: int = 3, link: bool = True) -> str:
    shown = ", ".join((_link if link else _named)(i) for i in ids[:n])
    rest = len(ids) - n
    return shown + (f' <span class="t3">({P.h(w("more", n=rest))})</span>' if rest > 0 else "")


def _get(d: Mapping[str, Any] | None, *path: str) -> Any:
    cur: Any = d
    for key in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(key)
    return cur


class _Report:
    """The sections of one report, each a method returning HTML."""

    def __init__(self, doc: Mapping[str, Any], digest: Digest, w: Words,
                 titles: Mapping[str, str], link: bool = True) -> None:
        self.doc, self.digest, self.w, self.titles = doc, digest, w, titles
        #: items are links into the case ledger (not in pytest-html's summary: no ledger)
        self.link = link
        self.m: Mapping[str, Any] = doc.get("metrics") or {}
        self.gate: Mapping[str, Any] = doc.get("gate") or {}
        self.run: Mapping[str, Any] = doc.get("run") or {}
        self.comp: Mapping[str, Any] = doc.get("completeness") or {}

    def _links(self, ids: list[str], n: int = 3) -> str:
        return _links(ids, self.w, n, self.link)

    def _item(self, case_id: str) -> str:
        return _link(case_id) if self.link else _named(case_id)

    # -- head ----------------------------------------------------------------------------------

    def nav(self) -> str:
        w = self.w
        keys = ("top", "method", "redlines", "intent", "judge", "task", "quality",
                "stability", "service", "flows", "review", "cases", "limits")
        links = "".join(f'<a href="#{k}">{P.h(w("nav." + k))}</a>' for k in keys)
        return f'<nav class="top"><span class="brand">{P.h(w("title"))}</span>{links}</nav>'

    def header(self) -> str:
        w, run = self.w, self.run
        ds = run.get("dataset") or {}
        sha = (ds.get("sha256") or "")[:12]
        judge = run.get("judge") or {}
        judge_text = judge.get("model") if judge.get("configured") else w("run.no_judge")
        target = run.get("target") or {}
        target_text = " ".join(str(v) for v in (target.get("adapter"), target.get("url"))
                               if v)
        parts = [(w("run.started"), run.get("started")),
                 (w("run.duration"), f"{run.get('duration_s') or 0:.1f} s"),
                 (w("run.target"), target_text),
                 (w("run.dataset"), w("run.dataset_files", n=len(ds.get("files") or ()),
                                      sha=sha or "—")),
                 (w("run.judge"), judge_text),
                 (w("run.ledger"), ((_get(run, "rules", "ledger_sha256") or "")[:12] or "—")),
                 (w("run.argv"), " ".join(["pytest", *(run.get("argv") or ())]))]
        meta = "".join(f"<span>{P.h(k)}: {P.h(v)}</span>" for k, v in parts if v)
        return f'<h1>{P.h(w("title"))}</h1><p class="meta">{meta}</p>'

    # -- the first screen: gate and conclusions --------------------------------------------------

    def gate_section(self) -> str:
        w, gate = self.w, self.gate
        result = str(gate.get("result") or "NOT_CONFIGURED")
        reasons = [str(r) for r in gate.get("reasons") or ()]
        would = next((m.group(1) for r in reasons
                      if (m := re.search(r"would be ([A-Z_]+)", r))), None)
        if result == "EXPLORATORY":
            advice = (w("advice.EXPLORATORY", would=w("gate." + would)) if would
                      else w("advice.EXPLORATORY_unknown"))
        else:
            advice = w("advice." + result)
        source = gate.get("source")
        shown, rest = reasons[:6], reasons[6:]
        items = ("".join(f"<li>{P.h(r)}</li>" for r in shown)
                 or f'<li class="t3">{P.h(w("gate.none"))}</li>')
        if rest:
            items += (f'<li><details><summary>{P.h(w("gate.more_reasons", n=len(rest)))}'
                      "</summary><ul>" + "".join(f"<li>{P.h(r)}</li>" for r in rest)
                      + "</ul></details></li>")
        verdict = (f'<div class="verdict {P.tone(result)}" id="gate-result" '
                   f'data-result="{P.h(result)}"><div><span class="icon" aria-hidden="true">'
                   f'{P.ICONS.get(result, "•")}</span><span class="word">'
                   f'{P.h(w("gate." + result))}</span></div>'
                   f'<div class="t3 small">{P.h(result)}'
                   + (f" · {P.h(w('gate.source', source=source))}" if source else "")
                   + f'</div><div class="advice"><b>{P.h(w("advice.heading"))}:</b> '
                   f'{P.h(advice)}</div></div>')
        return (f'<section id="top"><h2>{P.h(w("gate.heading"))}</h2><div class="gate">'
                f'{verdict}<div><ul>{items}</ul></div></div>{self.conclusions()}</section>')

    def conclusions(self) -> str:
        w = self.w
        cards = [self._validity(), self._blockers(), self._abilities(), self._defects(),
                 self._retest()]
        return (f'<div class="cards" id="conclusions" aria-label="{P.h(w("concl.heading"))}">'
                + "".join(cards) + "</div>")

    def _card(self, title: str, lines: list[str], cls: str = "") -> str:
        body = "".join(f"<li>{line}</li>" for line in lines)
        return f'<div class="card {cls}"><h3>{P.h(title)}</h3><ul>{body}</ul></div>'

    def _validity(self) -> str:
        w, comp, m = self.w, self.comp, self.m
        counts = m.get("counts") or {}
        lines = [P.h(w("concl.executed", received=comp.get("received", counts.get("total", 0)),
                       expected=comp.get("expected", counts.get("total", 0))))]
        bad = not comp.get("complete", True)
        if bad:
            lines.append('<span class="bad-t">' + P.h(w(
                "concl.incomplete", missing=len(comp.get("missing") or ()),
                lost=len(comp.get("lost") or {}), dups=len(comp.get("duplicates") or ()),
                unloadable=len(comp.get("collection_errors") or ()))) + "</span>")
        if comp.get("stopped_early"):
            lines.append('<span class="bad-t">' + P.h(w("concl.stopped")) + "</span>")
        skipped = list(comp.get("skipped") or {})
        if skipped:
            ids = ", ".join(n.rpartition("::")[2] for n in skipped[:10])
            lines.append(P.h(w("concl.skipped", n=len(skipped),
                               ids=ids + (" …" if len(skipped) > 10 else ""))))
        errors = counts.get("error", 0)
        lines.append(f'<span class="err-t">{P.h(w("concl.errors", n=errors))}</span>'
                     if errors else P.h(w("concl.no_errors")))
        judge = m.get("judge") or {}
        lines.append(w("concl.judge_availability", rate=P.rate(judge.get("availability")))
                     if judge.get("configured") else P.h(w("concl.judge_off")))
        rs = self.digest.review_status
        lines.append(P.h(w("concl.reviewed", reviewed=rs.get("reviewed", 0),
                           candidate=sum(rs.values()) - rs.get("reviewed", 0))))
        subset = self._subset()
        if subset:
            lines.append(P.h(w("concl.subset", how=subset)))
        return self._card(w("concl.validity"), lines, "bad" if bad or errors else "")

    def _subset(self) -> str | None:
        from ..metrics.gates import skipped_part

        opts = self.run.get("options") or {}
        parts = [f"-k {opts['keyword']}" if opts.get("keyword") else "",
                 f"-m {opts['markexpr']}" if opts.get("markexpr") else ""]
        skipped = skipped_part(len(self.comp.get("skipped") or {}))
        if not any(parts):  # the gate's own words say it (--lf, node ids, skips), if any
            said = [str(r) for r in self.gate.get("reasons") or () if "subset" in str(r).lower()]
            parts = said[:1] or [skipped]
        else:
            parts.append(skipped)
        named = [p for p in parts if p]
        return ", ".join(named) or None

    def _blockers(self) -> str:
        w = self.w
        failed = [c for c in self.gate.get("checks") or () if c.get("status") == "failed"]
        lines = []
        for c in failed:
            check = str(c.get("check"))
            ids = [str(i) for i in c.get("items") or ()]
            red = re.match(r"red_line\[(.+)\]$", check)
            if red and ids:
                title = self.titles.get(red.group(1), "")
                text = (f"<code>{P.h(red.group(1))}</code> {P.h(title)} — "
                        f"{P.h(w('concl.cases_n', n=len(ids)))}<br>{self._links(ids)}")
            else:
                text = P.h(c.get("reason") or check)
            lines.append(text)
        if not lines:
            lines = [P.h(w("concl.no_blockers"))]
        return self._card(w("concl.blockers"), lines, "bad" if failed else "ok")

    def _critical_labels(self) -> list[str]:
        gated = [m.group(1) for c in self.gate.get("checks") or ()
                 if (m := re.match(r"recall\[(.+)\]$", str(c.get("check"))))]
        if gated:
            return gated
        per = _get(self.m, "intent", "per_label") or {}
        scored = [(v.get("recall"), k) for k, v in per.items() if v.get("recall") is not None]
        return [k for _, k in sorted(scored)[:3]]

    def _abilities(self) -> str:
        w, m = self.w, self.m
        per = _get(m, "intent", "per_label") or {}
        lines = [w("concl.hard_rules", rate=P.rate(_get(m, "red_lines", "hard_rule_pass_rate")))]
        for label in self._critical_labels():
            r = (per.get(label) or {}).get("recall")
            lines.append(P.h(w("concl.recall", label=label, rate=P.pct(r, w("na")))))
        intent = m.get("intent") or {}
        if intent.get("evaluated"):
            lines.append(P.h(w("concl.accuracy", rate=P.pct(intent.get("accuracy")),
                               f1=P.num(intent.get("macro_f1")))))
        success = m.get("success") or {}
        lines.append(w("concl.success", rate=P.rate(success.get("success_rate")),
                       avg=P.h(P.pct(success.get("avg_completion"), w("na")))))
        judge = m.get("judge") or {}
        if judge.get("configured"):
            lines.append(w("concl.judge_mean", mean=P.h(P.num(judge.get("mean"))),
                           rate=P.rate(judge.get("review_rate"))))
        else:
            lines.append(P.h(w("concl.judge_off")))
        return self._card(w("concl.abilities"), lines)

    def _defect_title(self, key: tuple[str, ...]) -> str:
        w = self.w
        kind = key[0]
        if kind == "rule":
            return w("concl.defect_rule", rule=key[1], title=self.titles.get(key[1], ""))
        if kind == "intent":
            return w("concl.defect_intent", expected=key[1], predicted=key[2] or "UNKNOWN")
        if kind == "intent_code":
            return w("concl.defect_intent", expected=f"code {key[1]}",
                     predicted=f"code {key[2]}")
        if kind in ("judge", "review"):
            return w(f"concl.defect_{kind}", dimension=key[1])
        if kind == "task":
            return w("concl.defect_task", part=key[1])
        if kind == "error":
            return w("concl.defect_error", kind=key[1])
        return w("concl.defect_other")

    def _defects(self) -> str:
        w = self.w
        ranked = sorted(self.digest.defects.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        lines = [f"{P.h(self._defect_title(key))} — {P.h(w('concl.cases_n', n=len(ids)))}"
                 f"<br>{self._links(ids)}" for key, ids in ranked[:8]]
        if len(ranked) > 8:
            lines.append(P.h(w("more", n=len(ranked) - 8)))
        return self._card(w("concl.defects"), lines or [P.h(w("concl.no_defects"))],
                          "warn" if lines else "ok")

    def _retest(self) -> str:
        w, d = self.w, self.digest
        behaviors = [b for b, _ in d.retest_behaviors.most_common()]
        families = [f for f, _ in d.retest_families.most_common()]
        if not behaviors and not families:
            return self._card(w("concl.retest"), [P.h(w("concl.retest_none"))], "ok")
        keys = behaviors or families
        expr = " or ".join(keys[:8])
        lines = [P.h(w("concl.retest_families", families=", ".join(
            f"{k} ({d.retest_behaviors.get(k) or d.retest_families.get(k)})" for k in keys[:8])))]
        paths = " ".join(sorted({p.split("::", 1)[0].rsplit("/", 1)[0]
                                 for p in self._case_dirs()})) or "cases/"
        lines.append(f'{P.h(w("concl.retest_cmd"))}: <code class="cmd">pytest {P.h(paths)} '
                     f'-k &quot;{P.h(expr)}&quot;</code><code class="cmd">pytest '
                     f'{P.h(paths)} --lf</code>')
        return self._card(w("concl.retest"), lines, "warn")

    def _case_dirs(self) -> list[str]:
        files = [f.get("path", "") for f in _get(self.run, "dataset", "files") or ()]
        tops = {f.split("/", 1)[0] + "/" for f in files if "/" in f}
        return sorted(tops) or ["cases/"]

    # -- method and coverage --------------------------------------------------------------------

    def method(self) -> str:
        w, d = self.w, self.digest
        counts = self.m.get("counts") or {}
        head = f'<p class="t2">{P.h(w("method.text"))}</p><p>' + P.h(w(
            "method.items", total=counts.get("total", len(d.cases)),
            cases=counts.get("cases", 0), scenarios=counts.get("scenarios", 0))) + "</p>"
        pri = sorted({p for c in d.by_priority.values() for p in c},
                     key=lambda p: (_PRIORITIES.index(p) if p in _PRIORITIES else 9, p))
        chal = sorted({p for c in d.by_challenge.values() for p in c},
                      key=lambda c: (c != "none", c))
        return (f'<section id="method"><h2>{P.h(w("method.heading"))}</h2>{head}'
                f'<div class="grid2"><div class="scroll"><h3>{P.h(w("method.by_priority"))}</h3>'
                f'{self._matrix(d.by_priority, pri)}</div><div class="scroll"><h3>'
                f'{P.h(w("method.by_challenge"))}</h3>{self._matrix(d.by_challenge, chal)}'
                f'</div></div><p class="small t3">{P.h(w("method.sources"))}: '
                + P.h(", ".join(f"{k} {v}" for k, v in sorted(d.sources.items())))
                + " · " + P.h(", ".join(f"{k} {v}" for k, v in sorted(d.review_status.items())))
                + "</p></section>")

    def _matrix(self, rows: Mapping[str, Mapping[str, int]], cols: list[str]) -> str:
        w = self.w
        top = max((v for r in rows.values() for v in r.values()), default=1) or 1
        out = []
        for label in sorted(rows):
            r = rows[label]
            cells = []
            for c in cols:
                v = r.get(c, 0)
                alpha = 0.06 + 0.5 * v / top if v else 0
                style = f' style="background:rgba(91,107,122,{alpha:.2f})"' if v else ""
                cells.append(f"<td{style}>{v or ''}</td>")
            out.append(f"<tr><th>{P.h(label)}</th>{''.join(cells)}"
                       f"<td><b>{sum(r.values())}</b></td></tr>")
        total = "".join(f"<td><b>{sum(r.get(c, 0) for r in rows.values())}</b></td>"
                        for c in cols)
        head = "".join(f"<th>{P.h(c)}</th>" for c in cols)
        return (f'<table class="matrix"><thead><tr><th>{P.h(w("method.behavior"))}</th>{head}'
                f'<th>{P.h(w("method.total"))}</th></tr></thead><tbody>{"".join(out)}'
                f'<tr><th>{P.h(w("method.total"))}</th>{total}<td></td></tr></tbody></table>')

    # -- layers -------------------------------------------------------------------------------

    def redlines(self) -> str:
        w = self.w
        red = self.m.get("red_lines") or {}
        lines = "<p>" + w("redlines.hard", rate=P.rate(red.get("hard_rule_pass_rate")),
                          n=red.get("items_with_hard_rules", 0)) + "</p>"
        checks = {str(c.get("check")): c for c in self.gate.get("checks") or ()}
        rows = []
        for rid, v in (red.get("red_lines") or {}).items():
            failing = [str(i) for i in (checks.get(f"red_line[{rid}]") or {}).get("items") or ()]
            status = "failed" if v.get("items_failed") else (
                "passed" if v.get("items_evaluated") else "not_evaluated")
            rows.append([P.badge(status, w.status(status)), f"<code>{P.h(rid)}</code>",
                         P.h(self.titles.get(rid, "")), P.num(v.get("items_evaluated")),
                         P.num(v.get("items_failed")), P.rate(v.get("pass_rate"), w("na")),
                         self._links(failing, 5) if failing else ""])
        body = (P.table(["", w("redlines.rule"), w("redlines.title"), w("redlines.evaluated"),
                         w("redlines.failed"), w("redlines.pass_rate"), w("redlines.cases")],
                        rows, numeric=(3, 4)) if rows
                else f'<p class="na">{P.h(w("redlines.none"))}</p>')
        fails = (_get(self.m, "rules", "failures_by_rule") or {})
        per_rule = sorted(fails.items(), key=lambda kv: (-kv[1], kv[0]))[:25]
        by_rule = P.table([w("redlines.rule"), w("redlines.title"), w("redlines.failed")],
                          [[f"<code>{P.h(k)}</code>", P.h(self.titles.get(k, "")), P.num(v)]
                           for k, v in per_rule], numeric=(2,)) if per_rule else ""
        return (f'<section id="redlines"><h2>{P.h(w("redlines.heading"))}</h2>{lines}{body}'
                + (f'<h3>{P.h(w("redlines.rules_heading"))}</h3>{by_rule}' if by_rule else "")
                + "</section>")

    def intent(self) -> str:
        w = self.w
        it = self.m.get("intent") or {}
        head = f'<section id="intent"><h2>{P.h(w("intent.heading"))}</h2>'
        if not it.get("evaluated"):
            return head + f'<p class="na">{P.h(w("intent.none"))}</p></section>'
        summary = P.h(w("intent.summary", evaluated=it.get("evaluated"),
                        acc=P.pct(it.get("accuracy")), macro=P.num(it.get("macro_f1")),
                        micro=P.num(it.get("micro_f1")), unknown=it.get("unknown_predictions", 0)))
        na = w("na")
        rows = []
        for label, v in (it.get("per_label") or {}).items():
            rows.append([P.h(label), self._metric_cell(v.get("precision"), na),
                         self._metric_cell(v.get("recall"), na),
                         self._metric_cell(v.get("f1"), na), P.num(v.get("support"))])
        table = P.table([w("intent.label"), w("intent.precision"), w("intent.recall"),
                         w("intent.f1"), w("intent.support")], rows, numeric=(1, 2, 3, 4))
        conf = it.get("confusion") or {}
        labels = list(conf.get("labels") or ())
        matrix = conf.get("matrix") or []
        cols = list(conf.get("columns") or labels)
        heat = (f'<h3>{P.h(w("intent.confusion"))}</h3><div class="scroll">'
                f'{P.heatmap(labels, matrix, cols)}</div>' if labels and matrix else "")
        return (head + f"<p>{summary}</p><div class='grid2'><div>{table}</div><div>{heat}"
                "</div></div></section>")

    @staticmethod
    def _metric_cell(value: float | None, na: str) -> str:
        if value is None:
            return f'<span class="na">{P.h(na)}</span>'
        cls = "bad-t" if value < 0.8 else ("warn-t" if value < 0.95 else "")
        return f'<span class="{cls}">{P.pct(value)}</span>'

    def judge(self) -> str:
        w = self.w
        j = self.m.get("judge") or {}
        head = f'<section id="judge"><h2>{P.h(w("judge.heading"))}</h2>'
        if not j.get("configured"):
            why = j.get("reason") or "no judge configured"
            return head + f'<p class="na">{P.h(w("judge.off"))} ({P.h(why)})</p></section>'
        lat = j.get("latency_ms") or {}
        summary = w("judge.summary", avail=P.rate(j.get("availability")),
                    judged=j.get("judged_turns", 0), expected=j.get("expected_turns", 0),
                    mean=P.h(P.num(j.get("mean"))), calls=j.get("calls", 0),
                    hits=j.get("cache_hits", 0), p50=P.h(_ms(lat.get("p50"))),
                    p95=P.h(_ms(lat.get("p95"))))
        verdicts = j.get("verdicts") or {}
        bar = P.stacked([(verdicts.get(s, 0), s, w.status(s)) for s in
                         ("passed", "review", "failed")])
        rates = w("judge.review_rate", rate=P.rate(j.get("review_rate")),
                  risk=P.rate(j.get("fact_risk_rate")))
        rows = []
        for dim, v in (j.get("dimensions") or {}).items():
            dist = v.get("distribution") or {}
            cells = " ".join(f"{k}:{dist.get(k, 0)}" for k in ("1", "2", "3", "4", "5", "null")
                             if dist.get(k))
            rows.append([P.h(dim), P.h(P.num(v.get("mean"))), P.h(v.get("n", "")),
                         f'<span class="mono">{P.h(cells)}</span>'])
        dims = P.table([w("judge.dimension"), w("judge.mean"), "n", w("judge.distribution")],
                       rows, numeric=(1, 2))
        ne = j.get("not_evaluated") or {}
        ne_rows = [[f"<code>{P.h(k)}</code>", P.num(v)] for k, v in sorted(ne.items())]
        ne_table = (f'<h3>{P.h(w("judge.not_evaluated"))}</h3>'
                    + P.table(["reason_code", "n"], ne_rows, numeric=(1,))) if ne_rows else ""
        return (head + f"<p>{summary}</p><p>{rates}</p><h3>{P.h(w('judge.verdicts'))}</h3>"
                f"{bar}{dims}{ne_table}</section>")

    def task(self) -> str:
        w = self.w
        s = self.m.get("success") or {}
        levels = s.get("levels") or {}
        summary = w("task.summary", sr=P.rate(s.get("success_rate")),
                    pr=P.rate(s.get("pass_rate")),
                    avg=P.h(P.pct(s.get("avg_completion"), w("na"))),
                    evaluated=s.get("evaluated", 0), errors=s.get("errors", 0),
                    ne=s.get("not_evaluated", 0))
        bar = P.stacked([(levels.get(k, 0), k, w("level." + k)) for k in
                         ("success", "partial", "failure")])
        oc = self.m.get("outcome_classes") or {}
        rows = []
        for name in _OUTCOMES:
            v = oc.get(name)
            if not isinstance(v, Mapping):
                continue
            rows.append([P.h(name), P.num(v.get("items")), P.rate(v.get("success_rate"), w("na")),
                         P.rate(v.get("pass_rate"), w("na")),
                         P.h(P.pct(v.get("avg_completion"), "—"))])
        classes = P.table([w("task.class"), w("task.items"), w("task.success_rate"),
                           w("task.pass_rate"), "avg_completion"], rows, numeric=(1,))
        unclassified = oc.get("unclassified")
        sc = self.m.get("scope") or {}
        scope = w("task.scope_line", recall=P.rate(sc.get("in_scope_recall")),
                  precision=P.rate(sc.get("answer_precision")),
                  accuracy=P.rate(sc.get("scope_accuracy")))
        return (f'<section id="task"><h2>{P.h(w("task.heading"))}</h2><p>{summary}</p>'
                f'<h3>{P.h(w("task.levels"))}</h3>{bar}<h3>{P.h(w("task.outcome_classes"))}</h3>'
                f"{classes}"
                + (f'<p class="small t3">{P.h(w("task.unclassified", n=unclassified))}</p>'
                   if unclassified else "")
                + f'<h3>{P.h(w("task.scope"))}</h3><p>{scope}</p></section>')

    def quality(self) -> str:
        w, m = self.w, self.m
        k = m.get("knowledge") or {}
        know = w("quality.knowledge", cov=P.rate(k.get("required_coverage")),
                 n=k.get("rows_evaluated", 0), faith=P.h(P.num(k.get("faithfulness"))),
                 risk=P.rate(k.get("fact_risk_rate")))
        rb = m.get("robustness") or {}
        pairs = w("quality.pairs", rate=P.rate(rb.get("pair_consistency")),
                  n=rb.get("pairs", 0), groups=rb.get("groups", 0))
        inc = rb.get("inconsistent") or []
        inc_rows = [[P.h(x.get("group")), self._item(str(x.get("clean"))) + " "
                     + P.badge(str(x.get("clean_status")), w.status(str(x.get("clean_status"))))
                     + f' <span class="t3">{P.h(x.get("clean_label") or "")}</span>',
                     self._item(str(x.get("variant"))) + " "
                     + P.badge(str(x.get("variant_status")),
                               w.status(str(x.get("variant_status"))))
                     + f' <span class="t3">{P.h(x.get("variant_label") or "")}</span>']
                    for x in inc[:30]]
        inc_table = (f'<h3>{P.h(w("quality.inconsistent"))}</h3>' + P.table(
            ["group", w("quality.clean"), w("quality.variant")], inc_rows)) if inc_rows else ""
        chal = rb.get("by_challenge") or {}
        chal_bars = P.bars([(c, (v or {}).get("value"), "passed") for c, v in chal.items()])
        sf = m.get("safety") or {}
        safety = w("quality.safety", rate=P.rate(sf.get("pass_rate")),
                   types=P.h(", ".join(sf.get("types_covered") or ()) or w("none")))
        types = sf.get("by_type") or {}
        type_bars = P.bars([(t, (v or {}).get("value"), "passed") for t, v in types.items()])
        return (f'<section id="quality"><h2>{P.h(w("quality.heading"))}</h2><p>{know}</p>'
                f"<p>{pairs}</p>{inc_table}<div class='grid2'><div><h3>"
                f'{P.h(w("quality.by_challenge"))}</h3>{chal_bars}</div><div><h3>'
                f'{P.h(w("quality.by_type"))}</h3><p>{safety}</p>{type_bars}</div></div>'
                "</section>")

    def stability(self) -> str:
        w = self.w
        st = self.m.get("stability") or {}
        head = f'<section id="stability"><h2>{P.h(w("stability.heading"))}</h2>'
        if not st.get("repeated"):
            return head + (f'<p class="na">{P.h(w("stability.off", reason=st.get("reason") or ""))}'
                           "</p></section>")
        summary = w("stability.summary", cases=st.get("cases", 0),
                    trials=st.get("trials_planned") or "?", flaky=st.get("flaky", 0),
                    cons=P.rate(st.get("repeat_consistency")))
        ks = P.bars([(f"pass^{row.get('k')}", row.get("value"), "passed")
                     for row in st.get("pass_hat_k") or ()])
        flaky = st.get("flaky_cases") or []
        flaky_rows = [[self._item(str(f.get("id"))), P.h(w("stability.passed_of", c=f.get("passed"),
                                                      n=f.get("trials")))] for f in flaky[:50]]
        spread = st.get("judge_scores") or {}
        spread_rows = [[P.h(d), P.h(P.num(v.get("mean"))), P.h(P.num(v.get("std"))),
                        P.h(P.num(v.get("within_case_std"))), P.num(v.get("n"))]
                       for d, v in spread.items()]
        return (head + f"<p>{summary}</p>{ks}"
                + (f'<h3>{P.h(w("stability.flaky"))}</h3>'
                   + P.table(["id", ""], flaky_rows) if flaky_rows else "")
                + (P.table([w("judge.dimension"), "mean", "sd", "sd within case", "n"],
                           spread_rows, numeric=(1, 2, 3, 4)) if spread_rows else "")
                + "</section>")

    def service(self) -> str:
        w = self.w
        sv = self.m.get("service") or {}
        lat = sv.get("latency_ms") or {}
        summary = P.h(w("service.summary", calls=sv.get("agent_calls", 0),
                        ok=P.pct(sv.get("agent_success_rate")), errors=sv.get("agent_errors", 0),
                        mean=_ms(lat.get("mean")), p50=_ms(lat.get("p50")),
                        p90=_ms(lat.get("p90")), p95=_ms(lat.get("p95")),
                        max=_ms(lat.get("max"))))
        kinds = sv.get("errors_by_kind") or {}
        kind_table = (f'<h3>{P.h(w("service.errors_by_kind"))}</h3>' + P.table(
            [w("service.kind"), w("service.count")],
            [[f"<code>{P.h(k)}</code>", P.num(v)] for k, v in kinds.items()], numeric=(1,))
        ) if kinds else ""
        groups = sv.get("error_groups") or []
        group_rows = [[P.num(g.get("count")), f"<code>{P.h(g.get('kind'))}</code>",
                       P.h(g.get("detail")), self._links([str(i) for i in g.get("items") or ()])]
                      for g in groups[:20]]
        group_table = (f'<h3>{P.h(w("service.groups"))}</h3>' + P.table(
            ["n", w("service.kind"), "detail", ""], group_rows)) if group_rows else ""
        unfound = sv.get("unfound_paths") or []
        unfound_list = (f'<h3>{P.h(w("service.unfound"))}</h3><ul>' + "".join(
            f"<li><code>{P.h(u.get('field'))}: {P.h(u.get('path'))}</code> "
            f"{P.h(u.get('closest') or '')}</li>"
            for u in unfound if isinstance(u, Mapping)) + "</ul>") if unfound else ""
        hist = P.histogram(self.digest.latencies)
        return (f'<section id="service"><h2>{P.h(w("service.heading"))}</h2><p>{summary}</p>'
                f'<h3>{P.h(w("service.histogram"))}</h3>{hist}{kind_table}{group_table}'
                f"{unfound_list}</section>")

    def flows(self) -> str:
        w = self.w
        f = self.m.get("flows") or {}
        head = f'<section id="flows"><h2>{P.h(w("flows.heading"))}</h2>'
        if not f.get("scenarios"):
            return head + f'<p class="na">{P.h(w("flows.none"))}</p></section>'
        summary = P.h(w("flows.summary", n=f.get("scenarios"), simulated=f.get("simulated", 0),
                        infra=f.get("infra_errors", 0)))
        fam = P.bars([(k, (v or {}).get("value"), "passed")
                      for k, v in (f.get("by_family") or {}).items()])
        ends = f.get("termination") or {}
        ends_table = P.table([w("flows.termination"), "n"],
                             [[f"<code>{P.h(k)}</code>", P.num(v)] for k, v in ends.items()],
                             numeric=(1,))
        comp = f.get("completion") or {}
        comp_table = P.table([w("flows.completion"), "n"],
                             [[P.h(k), P.num(v)] for k, v in comp.items()], numeric=(1,))
        parts = P.bars([(k, (v or {}).get("value"), "passed")
                        for k, v in (f.get("parts") or {}).items()])
        faults = f.get("simulator_faults") or {}
        fault_table = (f'<h3>{P.h(w("flows.sim_faults"))}</h3>' + P.table(
            ["kind", "n"], [[f"<code>{P.h(k)}</code>", P.num(v)] for k, v in faults.items()],
            numeric=(1,))) if faults else ""
        return (head + f"<p>{summary}</p><div class='grid2'><div><h3>"
                f'{P.h(w("flows.by_family"))}</h3>{fam}</div><div>{ends_table}{comp_table}'
                f'</div></div><h3>{P.h(w("flows.parts"))}</h3>{parts}{fault_table}</section>')

    def review(self) -> str:
        w = self.w
        queue = self.doc.get("review_queue") or []
        head = f'<section id="review"><h2>{P.h(w("review.heading"))}</h2>'
        if not queue:
            return head + f'<p class="na">{P.h(w("review.none"))}</p></section>'
        rows = []
        for q in queue[:500]:
            dims = "; ".join(f"{d.get('dimension')} {d.get('score')}: {d.get('reason')}"
                             for d in q.get("dimensions") or ())
            if q.get("fact_risk"):
                dims += ("; " if dims else "") + f"fact_risk: {q.get('fact_risk_reason') or ''}"
            status = str(q.get("status"))
            rows.append([self._item(str(q.get("case"))), P.num((q.get("turn") or 0) + 1),
                         P.badge(status, w.status(status)), P.h(dims),
                         f'<span class="small">{P.h(q.get("reply"))}</span>'])
        more = (f'<p class="t3">{P.h(w("more", n=len(queue) - 500))}</p>'
                if len(queue) > 500 else "")
        return head + P.table([w("review.case"), w("review.turn"), "", w("review.dimensions"),
                               w("review.reply")], rows) + more + "</section>"

    def cases(self) -> str:
        w = self.w
        return (f'<section id="cases"><h2>{P.h(w("cases.heading"))}</h2>'
                f'<div id="ledger" class="ledger"><noscript>{P.h(w("cases.noscript"))}'
                "</noscript></div></section>")

    def limits(self) -> str:
        w, m = self.w, self.m
        lines = [w("limits.black_box")]
        for what, why in (_get(m, "service", "not_measured") or {}).items():
            lines.append(w("limits.not_measured", what=what, why=why))
        judge = m.get("judge") or {}
        if not judge.get("configured"):
            lines.append(w("limits.judge", why=judge.get("reason") or "no judge configured"))
        st = m.get("stability") or {}
        if not st.get("repeated"):
            lines.append(w("limits.stability", why=st.get("reason") or ""))
        rs = self.digest.review_status
        candidates = sum(rs.values()) - rs.get("reviewed", 0)
        if candidates:
            lines.append(w("limits.candidates", n=candidates))
        subset = self._subset()
        if subset:
            lines.append(w("limits.subset", how=subset))
        comp = self.comp
        if comp and not comp.get("complete", True):
            lines.append(w("limits.incomplete", received=comp.get("received"),
                           expected=comp.get("expected")))
        lines.append(w("limits.intervals"))
        body = "".join(f"<li>{P.h(x)}</li>" for x in lines)
        return (f'<section id="limits"><h2>{P.h(w("limits.heading"))}</h2><ul>{body}</ul>'
                "</section>")


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f} ms"


def build_report(doc: Mapping[str, Any], digest: Digest, lang: str | None = "zh",
                 titles: Mapping[str, str] | None = None) -> str:
    """The report page of a run record's document and the digest of its cases."""
    from .. import __version__

    w = words(lang)
    r = _Report(doc, digest, w, titles or {})
    body = (r.nav() + "<main>" + r.header() + r.gate_section() + r.method() + r.redlines()
            + r.intent() + r.judge() + r.task() + r.quality() + r.stability() + r.service()
            + r.flows() + r.review() + r.cases() + r.limits()
            + f'<footer>{P.h(w("generated", version=__version__))}</footer></main>')
    data = (P.json_block("agenteval-data", digest.json_text())
            + P.json_block("agenteval-words", w.for_script()))
    return P.page(w("title"), w.lang, body, data)


def summary_sections(doc: Mapping[str, Any], digest: Digest, lang: str | None,
                     titles: Mapping[str, str] | None = None) -> str:
    """The gate, conclusions and main tables, for another page (pytest-html's summary)."""
    r = _Report(doc, digest, words(lang), titles or {}, link=False)
    return ('<div class="agenteval">' + r.gate_section() + r.redlines() + r.intent()
            + r.task() + r.judge() + "</div>")


def write_report(path: Path, doc: Mapping[str, Any], digest: Digest, lang: str | None,
                 titles: Mapping[str, str] | None = None) -> float:
    """Write the page to ``path`` (through a temporary file: a reader never sees half a
    report); returns the seconds it took."""
    t0 = time.perf_counter()
    text = build_report(doc, digest, lang, titles)
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return time.perf_counter() - t0


def report_from_record(record: Mapping[str, Any]) -> Digest:
    """The digest of a whole ``results.json`` document's cases."""
    digest = Digest()
    for case in record.get("cases") or ():
        digest.add(case)
    return digest
