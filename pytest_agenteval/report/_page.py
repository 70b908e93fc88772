"""The parts every HTML report is made of: the page, escaping, badges, numbers, charts.

Everything from a run record goes through :func:`h` (text and attributes
alike) or into the page's JSON data block through :func:`json_block`, which
escapes ``<``, ``>`` and ``&`` so no ``</script>`` can close it. The page's
Content-Security-Policy allows no network at all and runs only the page's own
script, named by its hash: an ``onerror=`` that slipped through anyway would
not run.

Charts are inline SVG with their numbers written on them, so no colour is
ever the only carrier of a meaning.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any

__all__ = ["badge", "bars", "css", "h", "heatmap", "histogram", "json_block", "num", "page",
           "pct", "rate", "script", "stacked", "table"]

#: status → (CSS class, icon): the icon and the word carry the meaning, the colour repeats it
ICONS = {"passed": "✓", "failed": "✗", "review": "◐", "error": "⊘", "not_evaluated": "–",
         "not_applicable": "–", "success": "✓", "partial": "◐", "failure": "✗",
         "PASS": "✓", "PASS_WITH_RISK": "◐", "BLOCK": "✗", "EXPLORATORY": "◇",
         "NOT_CONFIGURED": "–", "done": "✓", "missing": "✗"}
_CLASS = {"passed": "ok", "success": "ok", "done": "ok", "PASS": "ok",
          "failed": "bad", "failure": "bad", "missing": "bad", "BLOCK": "bad",
          "review": "warn", "partial": "warn", "PASS_WITH_RISK": "warn",
          "error": "err", "EXPLORATORY": "info"}


def h(value: Any) -> str:
    """``value`` as HTML text, safe in an element and in a quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


def tone(status: str) -> str:
    """The CSS class of a status: ok, bad, warn, err, info or na."""
    return _CLASS.get(status, "na")


def badge(status: str, label: str) -> str:
    return (f'<span class="badge {tone(status)}"><span aria-hidden="true">'
            f'{ICONS.get(status, "•")}</span> {h(label)}</span>')


def num(value: float | int | None, digits: int = 2, na: str = "—") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return na
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}f}"


def pct(value: float | None, na: str = "—", digits: int = 1) -> str:
    return na if value is None else f"{value * 100:.{digits}f}%"


def rate(r: dict[str, Any] | None, na: str = "—") -> str:
    """A rate with its 95% interval, e.g. ``96.8% [94%–98%]``, as HTML."""
    if not r or r.get("value") is None:
        return f'<span class="na">{h(na)}</span>'
    text = pct(r["value"])
    if r.get("low") is not None and r.get("high") is not None:
        text += f' <span class="ci">[{r["low"] * 100:.0f}%–{r["high"] * 100:.0f}%]</span>'
    return text


def table(head: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "",
          numeric: Sequence[int] = ()) -> str:
    """A table; ``head`` is text (escaped here), each cell already HTML."""
    ths = "".join(f'<th{" class=num" if i in numeric else ""}>{h(c)}</th>'
                  for i, c in enumerate(head))
    body = "".join("<tr>" + "".join(f'<td{" class=num" if i in numeric else ""}>{c}</td>'
                                    for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{ths}</tr></thead><tbody>{body}</tbody></table>'


# -- charts ------------------------------------------------------------------------------------

_FILL = {"ok": "#1a7f37", "bad": "#cf222e", "warn": "#c2410c", "err": "#1f6feb", "info": "#6e5b9a",
         "na": "#a39d95"}


def stacked(segments: Sequence[tuple[int, str, str]], width: int = 560,
            height: int = 26) -> str:
    """One horizontal bar of ``(count, status, label)`` segments, each labelled in words."""
    total = sum(c for c, _, _ in segments)
    if total == 0:
        return ""
    x = 0.0
    parts = []
    legend = []
    for count, status, label in segments:
        if count == 0:
            continue
        w = width * count / total
        parts.append(f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="{height}" '
                     f'fill="{_FILL[tone(status)]}"><title>{h(label)}: {count}</title></rect>')
        if w > 34:
            parts.append(f'<text x="{x + w / 2:.1f}" y="{height / 2 + 4:.0f}" '
                         f'text-anchor="middle" class="on">{count}</text>')
        legend.append(f'{badge(status, label)} {count}')
        x += w
    said = ", ".join(f"{lab} {c}" for c, _, lab in segments)
    svg = (f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" '
           f'height="{height}" role="img" aria-label="{h(said)}">' + "".join(parts) + "</svg>")
    return f'<div class="stack">{svg}<div class="legend">{" ".join(legend)}</div></div>'


def bars(rows: Sequence[tuple[str, float | None, str]], width: int = 560,
         label_w: int = 170) -> str:
    """Horizontal bars of rates 0..1: ``(label, value, status)``; the value is written."""
    if not rows:
        return ""
    row_h = 22
    height = row_h * len(rows) + 4
    span = width - label_w - 60
    out = []
    for i, (label, value, status) in enumerate(rows):
        y = i * row_h + 2
        out.append(f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end">{h(label)}</text>')
        out.append(f'<rect x="{label_w}" y="{y + 3}" width="{span}" height="{row_h - 8}" '
                   'class="track"/>')
        if value is not None:
            out.append(f'<rect x="{label_w}" y="{y + 3}" width="{span * value:.1f}" '
                       f'height="{row_h - 8}" fill="{_FILL[tone(status)]}"/>')
        out.append(f'<text x="{label_w + span + 6}" y="{y + 15}">'
                   f'{h(pct(value) if value is not None else "—")}</text>')
    return (f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img">' + "".join(out) + "</svg>")


def histogram(values: Sequence[float], bins: int = 20, width: int = 560,
              height: int = 150) -> str:
    """A histogram of ``values`` (latencies), counts over each bar, edges below."""
    if not values:
        return ""
    lo, hi = min(values), max(values)
    if hi <= lo:
        hi = lo + 1.0
    step = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - lo) / step))] += 1
    top = max(counts)
    plot_h = height - 34
    bw = (width - 20) / bins
    out = []
    for i, c in enumerate(counts):
        bh = plot_h * c / top if top else 0
        x = 10 + i * bw
        out.append(f'<rect x="{x + 1:.1f}" y="{14 + plot_h - bh:.1f}" width="{bw - 2:.1f}" '
                   f'height="{bh:.1f}" fill="#5b6b7a"><title>{lo + i * step:.0f}–'
                   f'{lo + (i + 1) * step:.0f} ms: {c}</title></rect>')
        if c:
            out.append(f'<text x="{x + bw / 2:.1f}" y="{10 + plot_h - bh:.1f}" '
                       f'text-anchor="middle" class="small">{c}</text>')
    for i in range(0, bins + 1, max(1, bins // 5)):
        x = 10 + i * bw
        out.append(f'<text x="{x:.1f}" y="{height - 6}" text-anchor="middle" class="small">'
                   f'{lo + i * step:.0f}</text>')
    return (f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img">' + "".join(out) + "</svg>")


def heatmap(labels: Sequence[str], matrix: Sequence[Sequence[int]],
            cols: Sequence[str] | None = None, cell: int = 34) -> str:
    """A confusion matrix: rows expected, columns predicted; the diagonal green, the rest
    red, each cell's count written on it (0 left blank)."""
    cols = list(cols or labels)
    label_w = 8 + 7 * max((len(x) for x in labels), default=4)
    top_h = 8 + 7 * max((len(x) for x in cols), default=4)
    width = label_w + cell * len(cols) + 4 + 4 * max((len(x) for x in cols), default=4)
    height = top_h + cell * len(labels) + 4
    biggest = max((v for row in matrix for v in row), default=0) or 1
    out = []
    for j, c in enumerate(cols):
        x = label_w + j * cell + cell / 2
        out.append(f'<text transform="translate({x:.0f},{top_h - 6}) rotate(-60)" '
                   f'class="small">{h(c)}</text>')
    for i, r in enumerate(labels):
        y = top_h + i * cell
        out.append(f'<text x="{label_w - 6}" y="{y + cell / 2 + 4:.0f}" text-anchor="end" '
                   f'class="small">{h(r)}</text>')
        for j, v in enumerate(matrix[i]):
            x = label_w + j * cell
            diag = j < len(cols) and cols[j] == r
            alpha = 0.08 + 0.92 * (v / biggest) ** 0.5 if v else 0.0
            fill = ("26,127,55" if diag else "207,34,46")
            out.append(f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" '
                       f'fill="rgba({fill},{alpha:.2f})" class="cell"><title>{h(r)} → '
                       f'{h(cols[j])}: {v}</title></rect>')
            if v:
                dark = alpha > 0.55
                out.append(f'<text x="{x + cell / 2 - 1:.0f}" y="{y + cell / 2 + 4:.0f}" '
                           f'text-anchor="middle" class="small{" on" if dark else ""}">'
                           f'{v}</text>')
    return (f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img">' + "".join(out) + "</svg>")


# -- the page ----------------------------------------------------------------------------------


def _asset(name: str) -> str:
    return resources.files("pytest_agenteval.report").joinpath("assets", name).read_text(
        encoding="utf-8")


def css() -> str:
    return _asset("report.css")


def script() -> str:
    return _asset("report.js")


def json_block(element_id: str, data: Any) -> str:
    """``data`` (or JSON text) as a JSON data block the page's script reads: never
    executed, never closed early (``<``, ``>``, ``&`` and the line separators are escaped)."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False,
                                                         separators=(",", ":"))
    text = (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def page(title: str, lang: str, body: str, data: str = "", js: str | None = None) -> str:
    """One self-contained page: its CSS, ``body``, the data blocks and the script, with a
    Content-Security-Policy that forbids every fetch and every other script."""
    js = script() if js is None else js
    digest = base64.b64encode(hashlib.sha256(js.encode("utf-8")).digest()).decode("ascii")
    policy = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
              f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'")
    return (
        f'<!DOCTYPE html>\n<html lang="{"zh-CN" if lang == "zh" else "en"}"><head>'
        '<meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{h(policy)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{h(title)}</title><style>{css()}</style></head>"
        f"<body>{body}{data}<script>{js}</script></body></html>\n")
