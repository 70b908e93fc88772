"""Plain-text renderings: an item's failure explanation and the terminal summary."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..model.results import ItemResult, RuleRow, TurnResult
from ..privacy import clip

if TYPE_CHECKING:
    from ..metrics import RunMetrics
    from ..model.gates import GateResult
    from ..model.results import Completeness

__all__ = ["explain", "gate_lines", "safe", "summary_lines"]

#: what a terminal would act on instead of showing: C0 (ESC, CR, BS, …), DEL, C1, and the
#: bidirectional overrides that reorder what is shown (a reply could clear the screen,
#: colour the rest of the output, or forge a line such as "=== 99 passed ===")
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escaped(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: str) -> str:
    """``text`` as one terminal line: newlines as ⏎, other control characters escaped."""
    return _CONTROL.sub(_escaped, text.replace("\r\n", "⏎").replace("\n", "⏎"))


def _clip(text: str | None, n: int = 160) -> str:
    if text is None:
        return ""
    return clip(safe(text), n)


def _rule_lines(rows: list[RuleRow], indent: str) -> list[str]:
    out = []
    for r in rows:
        if r.status not in ("failed", "error"):
            continue
        veto = " [veto]" if r.veto else ""
        mark = "✗" if r.status == "failed" else "!"
        out.append(f"{indent}{mark} {r.rule_id} ({r.type}){veto}: {r.reason}")
        if r.evidence:
            out.append(f"{indent}    evidence: {_clip(r.evidence)}")
    return out


def _traceback_lines(text: str, indent: str) -> list[str]:
    lines = text.rstrip("\n").splitlines()
    if len(lines) > 40:  # the head names the call chain, the tail the exception
        lines = [*lines[:10], f"… {len(lines) - 30} lines …", *lines[-20:]]
    return [f"{indent}  | {safe(line)}" for line in lines]


def _turn_lines(turn: TurnResult, indent: str) -> list[str]:
    lines = [f"{indent}user:  {_clip(turn.input)}"]
    err = turn.error
    if err is not None and err.kind != "rule":
        lines.append(f"{indent}agent error ({err.kind}): {_clip(err.detail, 300)}")
        if err.traceback:
            lines += _traceback_lines(err.traceback, indent)
        return lines
    lines.append(f"{indent}agent: {_clip(turn.reply)}")
    if err is not None:
        lines.append(f"{indent}rule error: a rule type raised; the turn has no verdict "
                     "(fix the rule, not the agent)")
    intent = turn.intent
    if intent.correct is False or intent.code_correct is False:
        lines.append(f"{indent}intent: predicted {intent.predicted} "
                     f"(code {intent.code_returned}), expected {intent.expected}"
                     + (f" / code {intent.code_expected}" if intent.code_expected
                        is not None else ""))
    logic = turn.rule_logic
    explicit_failed = any(r.status == "failed" and r.origin == "case" for r in turn.rules)
    if logic is not None and (not logic.passed or explicit_failed):
        verdict = "" if not logic.passed else " — enough, these rules pass"
        lines.append(f"{indent}rules: {logic.reason}{verdict}")
    lines += _rule_lines(turn.rules, indent)
    lines += _judge_lines(turn, indent)
    if err is not None and err.traceback:
        lines += _traceback_lines(err.traceback, indent)
    return lines


def _judge_lines(turn: TurnResult, indent: str) -> list[str]:
    """The judge's verdict when it is not a pass: the low dimensions with its reasons."""
    v = turn.judge
    if not v.judged or (v.status == "passed" and not v.fact_risk):
        return []
    lines = [f"{indent}judge: {v.status} — {v.reason}"]
    reasons, scores = v.reasons or {}, v.scores or {}
    for dim in v.flagged or ():
        lines.append(f"{indent}  {dim} {scores.get(dim)}: {_clip(reasons.get(dim, ''), 200)}")
    if v.fact_risk:
        lines.append(f"{indent}  fact risk: {_clip(reasons.get('fact_risk', ''), 200)}")
    return lines


def explain(item: ItemResult) -> str:
    """Why an item failed or errored: rule ids, evidence, intent; no traceback of ours."""
    shown_id = item.id if item.trial is None else f"{item.id}[t{item.trial + 1}]"
    head = f"{item.status.upper()} {item.kind} {shown_id}"
    if item.title:
        head += f" — {item.title}"
    lines = [head]
    if item.kind == "case":
        for turn in item.turns:
            lines += _turn_lines(turn, "  ")
        return "\n".join(safe(line) for line in lines)
    for turn in item.turns:
        if turn.status in ("failed", "error"):
            lines.append(f"  turn {turn.index + 1} {turn.status.upper()}:")
            lines += _turn_lines(turn, "    ")
    ran = len(item.turns)
    if ran < item.turns_planned:
        lines.append(f"  (stopped after turn {ran} of {item.turns_planned}: "
                     "the agent did not answer)")
    return "\n".join(safe(line) for line in lines)


def gate_lines(gate: GateResult) -> list[str]:
    """The release gate first: its result and why."""
    lines = [f"GATE: {gate.result}" + (f"  ({gate.source})" if gate.source else "")]
    lines += [f"  - {reason}" for reason in gate.reasons[:12]]
    return lines


def _skipped_lines(completeness: Completeness) -> list[str]:
    """The selected items pytest skipped: not evaluated, and not counted anywhere."""
    skipped = completeness.skipped
    if not skipped:
        return []
    lines = [f"SKIPPED: {len(skipped)} of {completeness.expected} selected items were skipped"
             " (not evaluated; the gate covers the others):"]
    lines += [f"  {n} — {clip(why, 120)}" for n, why in list(skipped.items())[:20]]
    if len(skipped) > 20:
        lines.append(f"  … and {len(skipped) - 20} more (completeness.skipped in results.json)")
    return lines


def _incomplete_lines(completeness: Completeness) -> list[str]:
    missing = completeness.missing
    why = " (run stopped early)" if completeness.stopped_early else ""
    lines = []
    if missing:
        lines.append(f"INCOMPLETE: {len(missing)} of {completeness.expected} selected items"
                     f" have no result{why}:")
        lines += [f"  {n}" + (f" — {clip(completeness.lost[n], 120)}"
                              if n in completeness.lost else "") for n in missing[:20]]
    if completeness.collection_errors:
        lines.append(f"INCOMPLETE: {len(completeness.collection_errors)} case file(s) could not"
                     f" be loaded{'' if missing else why}: "
                     + ", ".join(completeness.collection_errors))
    if completeness.missing_shards:
        lines.append("INCOMPLETE: no record of shard(s) "
                     + ", ".join(str(i) for i in completeness.missing_shards))
    lines += [f"INCOMPLETE: merged with --force: {c}" for c in completeness.merge_conflicts]
    if completeness.duplicates:
        lines.append(f"INCOMPLETE: reported twice: {', '.join(completeness.duplicates)}")
    return lines


def summary_lines(metrics: RunMetrics, completeness: Completeness, results_path: str | None,
                  gate: GateResult | None = None) -> list[str]:
    """The agenteval block of the terminal summary: the gate first, then every family's lines."""
    from ..metrics._family import load_families

    lines = []
    judge = metrics.values.get("judge")
    if judge is not None and not getattr(judge, "configured", True):
        # said first: without a judge, no turn has L3 scores and no item can be REVIEW
        lines.append("judge (L3): not evaluated — no judge configured (add judge: to "
                     "agenteval.yaml); no L3 scores, no REVIEW, judge gates not evaluated")
    lines += gate_lines(gate) if gate else []
    for family in sorted(load_families().values(), key=lambda f: f.order):
        lines += family.summary(metrics.values[family.key], metrics)
    lines += _skipped_lines(completeness)
    if not completeness.complete:
        lines += _incomplete_lines(completeness)
    if results_path:
        lines.append(f"run record: {results_path}")
    return [safe(line) for line in lines]
