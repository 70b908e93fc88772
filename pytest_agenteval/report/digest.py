"""The cases as the HTML report carries them: compact, folded in one record at a time.

A run record's case averages about 10 KB of JSON (every rule row of every turn
with its full field names, knowledge repeated on every turn). The report must
hold 10,000 cases in at most 15 MB and render them lazily, so it embeds them
as a :class:`Digest`: every string that repeats (rule ids, reasons, evidence,
knowledge, labels) once in a string table, rows as short arrays, statuses as
one letter. The case ledger's script (``assets/report.js``) reads it back.

The digest also folds what the report shows that the metrics do not: turn
latencies (the histogram), the dataset's coverage (behaviour × priority and
× challenge), and each item that did not pass under the defect that put it
there (rule, intent confusion, judge dimension, task part, agent error kind),
with its behaviours and family for the retest scope.

Format (``"v": 1``): ``{"v", "s": [strings], "cases": [case]}``; a string field
is an index into ``s`` (0 is ``""``), a status one letter of :data:`STATUS`.
A case: ``i`` id, ``k`` kind (``c``/``s``), ``s`` status, ``t`` title, ``p``
priority, ``f`` family, ``c`` challenge, ``b`` behaviours, ``g`` tags, ``rv``
reviewed (1/0), ``lo`` file:line, ``tr`` trial, ``ms`` latency, ``L`` failed
layers (``1``–``4``, ``E``), ``fr`` failed rule ids, ``j`` judge, ``tk`` task,
``te`` termination, ``h`` initial history, ``T`` turns. A turn: ``in`` input,
``re`` reply, ``s``, ``ms``, ``er`` [kind, detail], ``kn``/``ex``/``xp``
knowledge, extra and expectation as JSON text, ``it`` intent, ``R`` rule rows
``[rule_id, type, status, reason, evidence, flags (1 veto, 2 ledger), trigger,
layer]``, ``j`` judge, ``fx`` failure reasons, ``lg`` the explicit rules' logic.
A judge: ``[status, scores, reason, fact_risk, reasons, flagged]``, scores and
reasons in the order of ``dims``.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any

from ..privacy import clip
from .record import json_line

__all__ = ["DIMS", "STATUS", "Digest"]

#: one letter per status, for rows, turns and items
STATUS = {"passed": "p", "failed": "f", "review": "r", "error": "e", "not_applicable": "n",
          "not_evaluated": "n", "done": "p", "missing": "f", "success": "p", "partial": "r",
          "failure": "f"}
DIMS = ("relevance", "factual_accuracy", "knowledge_coverage", "task_completion",
        "lead_value", "clarity_tone", "context_consistency")
#: the longest text of one field the report keeps (the record has it whole)
TEXT_MAX = 4000


def _dims(d: dict[str, Any] | None, extra: list[str]) -> list[Any] | None:
    if d is None:
        return None
    for k in d:
        if k not in DIMS and k not in extra:
            extra.append(k)
    return [d.get(k) for k in (*DIMS, *extra)]


class Digest:
    """Cases folded one by one (:meth:`add`), then :meth:`to_json` for the page."""

    def __init__(self) -> None:
        self.strings: list[str] = [""]
        self._index: dict[str, int] = {"": 0}
        self._json: dict[str, int] = {}
        #: packed rule rows by their fields: tuples of strings and numbers, which the garbage
        #: collector stops tracking (a case's own rules have ids of their own, so the memo
        #: grows by a row or two a case; as lists it was a fifth of what full collections
        #: walked at the end of a 10,000-case run)
        self._rows: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        #: each case as JSON text: strings cost the garbage collector nothing, a case's
        #: lists and dicts would, for the rest of the run
        self.cases: list[str] = []
        #: judge dimensions beyond the seven (a rubric of one's own), in order of appearance
        self.extra_dims: list[str] = []
        self.latencies: list[float] = []
        self.by_priority: dict[str, Counter[str]] = defaultdict(Counter)
        self.by_challenge: dict[str, Counter[str]] = defaultdict(Counter)
        self.sources: Counter[str] = Counter()
        self.review_status: Counter[str] = Counter()
        #: defect key → ids of the items it appears in (in the order they reported)
        self.defects: dict[tuple[str, ...], list[str]] = defaultdict(list)
        #: behaviours and families of the items that did not pass (the retest scope)
        self.retest_behaviors: Counter[str] = Counter()
        self.retest_families: Counter[str] = Counter()
        self.statuses: Counter[str] = Counter()

    def ref(self, text: str | None) -> int:
        if not text:
            return 0
        i = self._index.get(text)
        if i is None:
            i = self._index[text] = len(self.strings)
            self.strings.append(text)
        return i

    def _json_ref(self, value: Any) -> int | None:
        """The ref of ``value`` as JSON text; the same knowledge comes on every turn of a
        file, so it is looked up by its ``repr`` (half the cost of encoding it again)."""
        if value is None:
            return None
        if not value:
            return 0
        key = repr(value)
        ref = self._json.get(key)
        if ref is None:
            ref = self._json[key] = self.ref(json.dumps(value, ensure_ascii=False))
        return ref

    def _judge(self, j: dict[str, Any] | None) -> list[Any] | None:
        if not j:
            return None
        reasons = j.get("reasons")
        return [STATUS.get(j.get("status") or "not_evaluated", "n"),
                _dims(j.get("scores"), self.extra_dims), self.ref(j.get("reason")),
                1 if j.get("fact_risk") else 0,
                [self.ref(x) for x in _dims(reasons, self.extra_dims) or ()] or None,
                [self.ref(f) for f in j.get("flagged") or ()] or None]

    def _rule(self, row: dict[str, Any]) -> tuple[Any, ...]:
        """A rule row as ``(rule_id, type, status, reason, evidence, flags, trigger, layer)``
        (an array in the report's JSON); most rows repeat whole from case to case, so each
        is packed once."""
        key = tuple(row.values())  # its fields, in the record's order (one C call)
        packed = self._rows.get(key)
        if packed is None:
            flags = (1 if row.get("veto") else 0) | (2 if row.get("origin") == "ledger" else 0)
            packed = self._rows[key] = (
                self.ref(row["rule_id"]), self.ref(row["type"]), STATUS.get(row["status"], "n"),
                self.ref(row.get("reason")), self.ref(clip(row.get("evidence") or "", 600)),
                flags, self.ref(row.get("trigger")), self.ref(row.get("layer") or "L1"))
        return packed

    def _intent(self, it: dict[str, Any] | None) -> list[Any] | None:
        if not it:
            return None
        correct = it.get("correct")
        code_ok = it.get("code_correct")
        return [self.ref(it.get("expected")), self.ref(it.get("predicted")),
                None if correct is None else int(correct),
                it.get("code_expected"), it.get("code_returned"),
                self.ref(it.get("name_returned")), self.ref(it.get("reason")),
                None if code_ok is None else int(code_ok)]

    def _turn(self, t: dict[str, Any]) -> dict[str, Any]:
        err = t.get("error")
        logic = t.get("rule_logic")
        out: dict[str, Any] = {
            "in": clip(t.get("input") or "", TEXT_MAX),
            "re": None if t.get("reply") is None else clip(t["reply"], TEXT_MAX),
            "s": STATUS.get(t["status"], "n"),
            "ms": round(float(t.get("latency_ms") or 0.0), 1),
            "kn": self._json_ref(t.get("knowledge")),
            "ex": self._json_ref(t.get("extra") or None),
            "xp": self._json_ref(t.get("expected")),
            "it": self._intent(t.get("intent")),
            "R": [self._rule(row) for row in t.get("rules") or ()],
            "j": self._judge(t.get("judge")),
            "fx": [self.ref(x) for x in t.get("failure_reasons") or ()],
        }
        if err:
            out["er"] = [self.ref(err.get("kind")), clip(err.get("detail") or "", TEXT_MAX)]
        if logic and logic.get("reason"):
            out["lg"] = [self.ref(logic["reason"]), 1 if logic.get("passed") else 0]
        if t.get("conversation_id"):
            out["cv"] = self.ref(str(t["conversation_id"]))
        return out

    def _task(self, task: dict[str, Any] | None) -> list[Any] | None:
        if not task:
            return None
        parts = [[self.ref(p["name"]), p["kind"], STATUS.get(p["status"], "n"), p.get("turn"),
                  self.ref(p.get("evidence")), self.ref(p.get("decided_by")),
                  self.ref(p.get("reason"))] for p in task.get("parts") or ()]
        level = task.get("success_level")
        return [task.get("completion_rate"), STATUS[level] if level else None,
                self.ref(task.get("reason")), parts, self.ref(task.get("reason_code"))]

    def add(self, case: dict[str, Any]) -> None:
        """Fold one ``cases[]`` record (SPEC 7, masked as the run record is)."""
        turns = [self._turn(t) for t in case.get("turns") or ()]
        behaviors = [b for b in case.get("behaviors") or () if b] or (
            [case["behavior"]] if case.get("behavior") else [])
        failed_rules = list(dict.fromkeys(
            self.strings[row[0]] for t in turns for row in t["R"] if row[2] == "f"))
        layers = self._layers(case, turns)
        out: dict[str, Any] = {
            "i": case["id"], "k": "s" if case["kind"] == "scenario" else "c",
            "s": STATUS[case["status"]], "t": clip(case.get("title") or "", 300),
            "p": self.ref(case.get("priority")), "f": self.ref(case.get("test_family")),
            "c": self.ref(case.get("challenge")), "b": [self.ref(b) for b in behaviors],
            "g": [self.ref(g) for g in case.get("tags") or ()],
            "rv": 1 if case.get("review_status") == "reviewed" else 0,
            "lo": self.ref(f"{case.get('file') or ''}:{case.get('line') or ''}"),
            "ms": round(float(case.get("latency_ms") or 0.0), 1),
            "L": layers, "fr": [self.ref(r) for r in failed_rules],
            "j": self._judge(case.get("judge")), "tk": self._task(case.get("task")),
            "te": self.ref(case.get("termination")),
            "h": [[m.get("role", "user")[0], clip(m.get("content") or "", TEXT_MAX)]
                  for m in case.get("history") or (case.get("request") or {}).get("history")
                  or ()],
            "T": turns,
        }
        if case.get("trial") is not None:
            out["tr"] = case["trial"]
        self.cases.append(json_line(out).decode())
        self._fold(case, turns, behaviors, failed_rules)

    def _layers(self, case: dict[str, Any], turns: list[dict[str, Any]]) -> str:
        got: set[str] = set()
        if case["status"] == "error":
            got.add("E")
        for t in turns:
            for row in t["R"]:
                if row[2] == "f":
                    got.add(self.strings[row[7]][-1:] or "1")
            if t.get("lg") and not t["lg"][1]:
                got.add("1")
            it = t["it"]
            if it and (it[2] == 0 or it[7] == 0):
                got.add("2")
            if t["j"] and t["j"][0] in ("f", "r"):
                got.add("3")
        task = case.get("task") or {}
        if task.get("reason_code") == "task" and task.get("success_level") != "success":
            got.add("4")
        return "".join(sorted(got))

    def _fold(self, case: dict[str, Any], turns: list[dict[str, Any]], behaviors: list[str],
              failed_rules: list[str]) -> None:
        status = case["status"]
        self.statuses[status] += 1
        priority = case.get("priority") or "-"
        challenge = case.get("challenge") or "none"
        for b in behaviors or ["-"]:
            self.by_priority[b][priority] += 1
            self.by_challenge[b][challenge] += 1
        self.sources[case.get("source") or "-"] += 1
        self.review_status[case.get("review_status") or "-"] += 1
        self.latencies += [t["ms"] for t in turns if "er" not in t or t["re"] is not None]
        if status == "passed":
            return
        cid = case["id"] if case.get("trial") is None else f"{case['id']}[t{case['trial']}]"
        for b in behaviors:
            self.retest_behaviors[b] += 1
        self.retest_families[case.get("test_family") or "-"] += 1
        for key in self._defect_keys(case, turns, failed_rules):
            self.defects[key].append(cid)

    def _defect_keys(self, case: dict[str, Any], turns: list[dict[str, Any]],
                     failed_rules: list[str]) -> list[tuple[str, ...]]:
        keys: list[tuple[str, ...]] = []
        err = case.get("error")
        if case["status"] == "error" and err:
            return [("error", str(err.get("kind")))]
        keys += [("rule", r) for r in failed_rules]
        for t in turns:
            it = t["it"]
            if it and it[2] == 0:
                keys.append(("intent", self.strings[it[0]], self.strings[it[1]]))
            elif it and it[7] == 0:
                keys.append(("intent_code", str(it[3]), str(it[4])))
            j = t["j"]
            if j and j[0] in ("f", "r") and j[5]:
                keys += [("judge" if j[0] == "f" else "review", self.strings[d]) for d in j[5]]
            elif j and j[0] in ("f", "r") and j[3]:
                keys.append(("judge" if j[0] == "f" else "review", "fact_risk"))
        task = case.get("task") or {}
        if task.get("reason_code") == "task" and task.get("success_level") != "success":
            keys += [("task", p["name"]) for p in task.get("parts") or ()
                     if p["status"] == "missing"]
        keys = list(dict.fromkeys(keys))
        return keys or [("other",)]

    def json_text(self) -> str:
        """The digest as one JSON document (see the module's docstring)."""
        head = json.dumps({"v": 1, "s": self.strings, "dims": [*DIMS, *self.extra_dims]},
                          ensure_ascii=False, separators=(",", ":"))
        return head[:-1] + ',"cases":[' + ",".join(self.cases) + "]}"
