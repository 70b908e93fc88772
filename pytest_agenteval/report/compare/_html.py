"""The comparison as one self-contained HTML page (``--html``)."""

from __future__ import annotations

from .. import _page as P
from .._labels import Words, words
from ._gate import Verdict, _fmt
from ._metrics import Comparison, MetricDelta, _short
from ._records import Detail, item_label
from ._text import _KIND_WORD, delta_text

# -- HTML --------------------------------------------------------------------------------------

_CHANGE_TONE = {"fixed": "passed", "regressed": "failed", "status": "review",
                "detail": "not_evaluated"}
_VERDICT_TONE = {"PASS": "PASS", "FAIL": "BLOCK", "NOT_COMPARABLE": "EXPLORATORY"}


class _Html:
    """The sections of the comparison page, each a method returning HTML."""

    def __init__(self, c: Comparison, v: Verdict, w: Words) -> None:
        self.c, self.v, self.w = c, v, w

    def section(self, sid: str, title: str, body: str) -> str:
        return f'<section id="{sid}"><h2>{P.h(title)}</h2>{body}</section>'

    def header(self) -> str:
        w, c = self.w, self.c
        meta = "".join(
            f"<span><b>{tag}</b>: {P.h(i.path)} · {P.h(w('run.started'))} {P.h(i.started)}"
            f" · {P.h(w('cmp.items_n', n=i.items))} · {P.h(w('cmp.run_gate'))} "
            f"{P.h(i.gate or '—')}</span>" for tag, i in (("A", c.a), ("B", c.b)))
        return f'<h1>{P.h(w("compare.title"))}</h1><p class="meta">{meta}</p>'

    def gate(self) -> str:
        w, v = self.w, self.v
        tone = _VERDICT_TONE[v.result]
        lines = v.failures if v.result == "FAIL" else v.not_comparable
        items = "".join(f"<li>{P.h(x)}</li>" for x in lines) or \
            f'<li class="t3">{P.h(w("cmp.gate.pass_text"))}</li>'
        if v.result == "NOT_COMPARABLE" and v.failures:
            items += (f'<li>{P.h(w("cmp.gate.would_fail"))}<ul>'
                      + "".join(f"<li>{P.h(x)}</li>" for x in v.failures) + "</ul></li>")
        note = f'<div class="advice">{P.h(w("cmp.gate.not_applied"))}</div>' \
            if v.result == "NOT_COMPARABLE" else ""
        box = (f'<div class="verdict {P.tone(tone)}" id="compare-result" data-result="'
               f'{P.h(v.result)}"><div><span class="icon" aria-hidden="true">'
               f'{P.ICONS.get(tone, "•")}</span><span class="word">'
               f'{P.h(w("cmp.gate." + v.result))}</span></div><div class="t3 small">exit '
               f'{v.exit}</div>{note}</div>')
        return self.section("top", w("cmp.verdict"),
                            f'<div class="gate">{box}<div><ul>{items}</ul></div></div>')

    def checks(self) -> str:
        w, c = self.w, self.c
        head = P.badge("passed", w("cmp.comparable")) if c.comparable else \
            P.badge("failed", w("cmp.not_comparable"))
        rows = []
        for ch in c.checks:
            status, word = ("passed", w("cmp.same")) if ch.same else (
                ("failed", w("cmp.different")) if ch.blocking else
                ("review", w("cmp.not_blocking")))
            rows.append([P.h(w("cmp.check." + ch.check)), f"<code>{P.h(_short(ch.a))}</code>",
                         f"<code>{P.h(_short(ch.b))}</code>", P.badge(status, word)])
        same_items = not c.only_in_a and not c.only_in_b
        rows.append([P.h(w("cmp.check.items")), P.num(c.a.items), P.num(c.b.items),
                     P.badge("passed", w("cmp.same")) if same_items
                     else P.badge("review", w("cmp.not_blocking"))])
        table = P.table([w("cmp.what"), w("cmp.a"), w("cmp.b"), ""], rows)
        return self.section("comparability", w("cmp.heading"),
                            f"<p>{head}</p>{table}{self._dataset()}")

    def _dataset(self) -> str:
        w, d, c = self.w, self.c.dataset, self.c
        lists = [(w("cmp.files_changed"), d.files_changed),
                 (w("cmp.files_only_a"), d.files_only_in_a),
                 (w("cmp.files_only_b"), d.files_only_in_b),
                 (w("cmp.removed"), [item_label(r.id, r.trial) for r in c.only_in_a]),
                 (w("cmp.added"), [item_label(r.id, r.trial) for r in c.only_in_b])]
        body = "".join(f"<li>{P.h(label)}: " + ", ".join(f"<code>{P.h(x)}</code>" for x in xs)
                       + "</li>" for label, xs in lists if xs)
        if d.grown is not None:
            body += f"<li>{P.h(w('cmp.grown', a=d.grown[0], b=d.grown[1]))}</li>"
        return f'<ul class="small">{body}</ul>' if body else ""

    def changes(self) -> str:
        w, c = self.w, self.c
        summary = P.h(w("cmp.summary", fixed=c.count("fixed"), regressed=c.count("regressed"),
                        status=c.count("status"), detail=c.count("detail"),
                        only_a=len(c.only_in_a), only_b=len(c.only_in_b)))
        rows = [[P.badge(_CHANGE_TONE[x.change], w("cmp." + _KIND_WORD[x.change])),
                 f"<code>{P.h(item_label(x.id, x.trial))}</code>",
                 f"{P.badge(x.a, w.status(x.a))} → {P.badge(x.b, w.status(x.b))}",
                 "<br>".join(f"{P.h(w('cmp.field.' + d.field))}: {P.h(self._word(d, d.a))}"
                             f" → {P.h(self._word(d, d.b))}" for d in x.details),
                 P.h(x.title)] for x in c.changes]
        rows += [[P.badge("not_evaluated", w(tag)), f"<code>{P.h(item_label(r.id, r.trial))}"
                  f"</code>", P.badge(r.status, w.status(r.status)), "", P.h(r.title)]
                 for tag, refs in (("cmp.removed", c.only_in_a), ("cmp.added", c.only_in_b))
                 for r in refs]
        table = P.table(["", w("cmp.item"), f"{w('cmp.from')} → {w('cmp.to')}",
                         w("cmp.detail"), w("cmp.title")], rows) if rows else \
            f'<p class="na">{P.h(w("cmp.no_changes"))}</p>'
        return self.section("changes", w("cmp.changes"), f"<p>{summary}</p>{table}")

    def _word(self, d: Detail, value: str) -> str:
        """A detail's value in the page's language (levels, verdicts, "none")."""
        w = self.w
        if value in ("none", "not evaluated"):
            return w("none") if value == "none" else w("na")
        if d.field == "success_level":
            return w("level." + value)
        return w.status(value) if d.field == "judge" else value

    def _value(self, m: MetricDelta, value: float | None) -> str:
        return f'<span class="na">{P.h(self.w("na"))}</span>' if value is None \
            else P.h(_fmt(m, value))

    def metrics(self) -> str:
        w = self.w
        rows = []
        for m in self.c.metrics:
            delta, interval = delta_text(m)
            mark = "" if m.significant is None else P.badge(
                ("failed" if (m.worsening() or 0) > 0 else "passed") if m.significant
                else "not_evaluated",
                w("cmp.significant") if m.significant else w("cmp.not_significant"))
            rows.append([f"<code>{P.h(m.metric)}</code>", self._value(m, m.a),
                         self._value(m, m.b), P.h(delta),
                         f'<span class="ci">{P.h(interval.rstrip(" *"))}</span> {mark}'])
        table = P.table([w("cmp.metric"), w("cmp.a"), w("cmp.b"), "B − A", w("cmp.delta")],
                        rows, numeric=(1, 2, 3))
        return self.section("metrics", w("cmp.metrics"),
                            f'<p class="t2">{P.h(w("cmp.interval_note"))}</p>{table}')

    def red_lines(self) -> str:
        w = self.w
        rows = [[f"<code>{P.h(item_label(r.id, r.trial))}</code>"
                 + (f' <span class="t3">{P.h(w("cmp.only_in_b_item"))}</span>'
                    if r.only_in_b else ""), f"<code>{P.h(r.rule_id)}</code>",
                 P.h(r.reason), P.h(r.evidence)] for r in self.c.new_red_lines]
        body = P.table([w("cmp.item"), w("cmp.rule"), w("cmp.reason"), w("cmp.evidence")],
                       rows) if rows else f'<p class="na">{P.h(w("cmp.no_red_lines"))}</p>'
        return self.section("redlines", w("cmp.new_red_lines"), body)


def render_html(c: Comparison, v: Verdict, lang: str | None) -> str:
    """The comparison as one self-contained page (the reports' CSS and CSP, no script)."""
    from ... import __version__

    w = words(lang)
    page = _Html(c, v, w)
    body = ("<main>" + page.header() + page.gate() + page.checks() + page.changes()
            + page.metrics() + page.red_lines()
            + f'<footer>{P.h(w("generated", version=__version__))}</footer></main>')
    return P.page(w("compare.title"), w.lang, body, js="")
