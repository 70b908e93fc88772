"""The judge of one process: rubric, client and cache, asked once per judged turn.

:meth:`Judge.turn` scores every asked dimension of one reply in one structured
call (L3). :meth:`Judge.score`, :meth:`Judge.classify`, :meth:`Judge.embed` and
:meth:`Judge.moderate` serve the judge-based rule types (``llm_score``,
``intent_classification``, ``semantic_similarity``, ``safety``). Every valid
result is cached under a key of model, endpoint, rubric hash, the exact
messages and the trial index; a failed ask is never cached and never a score.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..model import results as r
from ..model.results import TaskPart
from . import prompt
from .cache import JudgeCache, cache_key
from .client import Asked, Failure, JudgeClient
from .rubric import (
    DIMENSIONS,
    ContractError,
    Rubric,
    Scores,
    parse_scores,
    scores_example,
    scores_schema,
    verdict,
)

if TYPE_CHECKING:
    from ..model.config import JudgeConfig
    from ..rules._registry import TurnView
    from ..task import Utterance
    from ..taxonomy import Taxonomy

__all__ = ["Classified", "Judge", "JudgeMeter", "Judgement", "Scored", "TurnContext"]

T = TypeVar("T")

_SCORE_TASK = ("Score agent_reply — the agent's reply to user_input — on each of these "
               "dimensions: {dims}. Judge it in the context of history and knowledge.")
_SCORE_RULES = (
    "Each score is an integer from 1 (worst) to 5 (best), or null when the dimension does "
    "not apply to this turn (say why in its reason). fact_risk is true when the reply states "
    "any fact (a number, a price, a date, an address, a promise) that the knowledge and the "
    "history do not support. Each reason is one sentence quoting the words of the reply "
    "that decided it.")


@dataclass(frozen=True)
class Scored:
    score: int
    reason: str


@dataclass(frozen=True)
class Classified:
    label: str
    also: tuple[str, ...]
    reason: str


def _parse_scored(d: Any) -> Scored:
    if not isinstance(d, dict):
        raise ContractError("the reply is not a JSON object")
    score, reason = d.get("score"), d.get("reason")
    if type(score) is not int or not 0 <= score <= 10:
        raise ContractError(f"score: {json.dumps(score, ensure_ascii=False)} is not an integer "
                            "0-10")
    if not isinstance(reason, str):
        raise ContractError("reason: missing or not a string")
    return Scored(score, reason)


def _parse_classified(d: Any, names: list[str]) -> Classified:
    if not isinstance(d, dict):
        raise ContractError("the reply is not a JSON object")
    label, also, reason = d.get("label"), d.get("also_possible", []), d.get("reason")
    if label not in (*names, "UNKNOWN"):
        raise ContractError(f"label: {json.dumps(label, ensure_ascii=False)} is not one of "
                            f"{', '.join(names)} or UNKNOWN")
    if not isinstance(also, list) or any(a not in names for a in also):
        raise ContractError("also_possible: a list of labels from the list given")
    if not isinstance(reason, str):
        raise ContractError("reason: missing or not a string")
    return Classified(str(label), tuple(also), reason)


@dataclass(frozen=True)
class TurnContext:
    """What the judge knows of a turn besides its view: the expectation, the item's wishes."""

    behavior: str | None = None
    outcome: str | None = None
    dimensions: tuple[str, ...] = DIMENSIONS
    notes: str | None = None
    trial: int = 0


@dataclass(frozen=True)
class Judgement(Asked[T]):
    """An ask's outcome, and whether the cache served it."""

    cached: bool = False


class JudgeMeter:
    """The judge as one turn's rule types see it: their calls and cache hits are counted
    (the turn records them next to L3's own)."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.calls = 0
        self.cache_hits = 0

    @property
    def taxonomy(self) -> Taxonomy:
        return self.judge.taxonomy

    def _count(self, got: Judgement[T]) -> Judgement[T]:
        self.calls += got.calls
        self.cache_hits += int(got.cached)
        return got

    async def score(self, criteria: str, scope: str, view: TurnView) -> Judgement[Scored]:
        return self._count(await self.judge.score(criteria, scope, view))

    async def classify(self, labels: dict[str, str], view: TurnView) -> Judgement[Classified]:
        return self._count(await self.judge.classify(labels, view))

    async def embed(self, texts: Sequence[str]) -> Judgement[list[list[float]]]:
        return self._count(await self.judge.embed(texts))

    async def moderate(self, text: str) -> Judgement[list[str]]:
        return self._count(await self.judge.moderate(text))


class Judge:
    """Built on the engine's loop; one per process (workers each build their own)."""

    def __init__(self, cfg: JudgeConfig, rubric: Rubric, taxonomy: Taxonomy,
                 cache: JudgeCache | None, api_key: str) -> None:
        self.cfg = cfg
        self.rubric = rubric
        self.taxonomy = taxonomy
        self.cache = cache
        self.client = JudgeClient(cfg, api_key, cache)
        self._turn_asks: dict[tuple[str, ...], tuple[str, dict[str, Any], str, str]] = {}

    @classmethod
    def from_config(cls, cfg: JudgeConfig, rubric: Rubric, taxonomy: Taxonomy,
                    rootdir: Path, use_cache: bool = True) -> Judge:
        cache = None
        if use_cache and cfg.cache:
            path = Path(cfg.cache)
            cache = JudgeCache(path if path.is_absolute() else rootdir / path)
            if cache.error is not None:  # a cache that cannot be used is no cache: say so
                sys.stderr.write(f"agenteval: the judge cache {cache.path} cannot be used "
                                 f"({cache.error}); every turn is asked\n")
                cache = None
        return cls(cfg, rubric, taxonomy, cache, os.environ.get(cfg.api_key_env, ""))

    async def aclose(self) -> None:
        await self.client.aclose()
        if self.cache is not None:
            self.cache.close()

    # -- L3 --------------------------------------------------------------------------------

    async def turn(self, view: TurnView, ctx: TurnContext) -> r.JudgeResult:
        """Score one reply on ``ctx.dimensions`` in one structured call."""
        dims = ctx.dimensions
        instructions, schema, task, output = self._turn_ask(dims)
        data: dict[str, Any] = {
            "knowledge": view.knowledge, "history": view.history,
            "user_input": view.input, "agent_reply": view.reply}
        if ctx.behavior:
            data["expected_behavior"] = ctx.behavior
            strategy = self.taxonomy.strategies.get(ctx.behavior)
            if strategy:
                data["behavior_strategy"] = strategy
        if ctx.outcome:
            data["expected_outcome"] = ctx.outcome
        if ctx.notes:
            data["notes"] = ctx.notes
        msgs = prompt.messages(instructions, data, task, schema, {}, output)
        got = await self.ask("turn", msgs, schema, "judge_verdict",
                             lambda d: parse_scores(d, dims), Scores.to_json, Scores.from_json,
                             ctx.trial)
        return self.result(got)

    def _turn_ask(self, dims: tuple[str, ...]) -> tuple[str, dict[str, Any], str, str]:
        """What every turn scored on ``dims`` asks alike: its instructions, schema, task and
        output contract (made once per set of dimensions, not once per turn)."""
        got = self._turn_asks.get(dims)
        if got is None:
            schema = scores_schema(dims)
            got = self._turn_asks[dims] = (
                "\n\n".join([self.rubric.spec.instructions.strip(),
                              "Dimensions:\n" + self.rubric.describe(dims), _SCORE_RULES]),
                schema, _SCORE_TASK.format(dims=", ".join(dims)),
                prompt.contract(schema, scores_example(dims)))
        return got

    def result(self, got: Judgement[Scores]) -> r.JudgeResult:
        if isinstance(got.value, Failure):
            return r.JudgeResult(reason=f"not evaluated: {got.value.reason}",
                                 reason_code=got.value.code, calls=got.calls,
                                 latency_ms=got.latency_ms)
        scores = got.value
        status, why, weak = verdict(scores, self.rubric)
        return r.JudgeResult(status=status, verdict=status, scores=scores.scores,
                             reasons=scores.reasons, fact_risk=scores.fact_risk, flagged=weak,
                             reason=why, calls=got.calls, cached=got.cached,
                             latency_ms=None if got.cached else got.latency_ms)

    # -- asking, through the cache ---------------------------------------------------------

    async def ask(self, kind: str, msgs: list[dict[str, str]], schema: dict[str, Any],
                  name: str, parse: Callable[[Any], T], dump: Callable[[T], Any],
                  load: Callable[[Any], T], trial: int = 0) -> Judgement[T]:
        """A cached structured ask: the cache, else the client (only valid results stored)."""
        key = None
        if self.cache is not None:
            key = cache_key(kind, self.cfg.model, self.cfg.base_url, self.rubric.sha256, msgs,
                            trial, self.cfg.temperature, self.cfg.extra_body)
            hit = self.cache.get(key)
            if hit is not None:
                try:
                    return Judgement(load(hit), 0, 0.0, cached=True)
                except (KeyError, TypeError, ValueError, ContractError):
                    pass  # an entry of an older shape: ask again
        got = await self.client.ask(msgs, schema, name, parse)
        if key is not None and not isinstance(got.value, Failure):
            self.cache.put(key, dump(got.value))  # type: ignore[union-attr]
        return Judgement(got.value, got.calls, got.latency_ms)

    # -- task completion -------------------------------------------------------------------

    async def task_parts(self, parts: Sequence[tuple[str, str, str]],
                         dialog: Sequence[Utterance], trial: int = 0) -> Judgement[list[TaskPart]]:
        """Which of ``parts`` (kind, name, description) the whole dialog achieved, and at
        which turn: one structured call for all of them."""
        keys = [f"p{i + 1}" for i in range(len(parts))]
        turns = sorted({u.turn for u in dialog})
        listing = "\n".join(f"- {k} ({kind} {name}): {desc or name}"
                             for k, (kind, name, desc) in zip(keys, parts, strict=True))
        instructions = (
            "You check whether a customer-service conversation achieved each part of its "
            "task. A slot is information the conversation must obtain; a step is something "
            "the agent must do. For each part say whether it was achieved anywhere in the "
            "conversation (true/false), the turn number where it was achieved (null if not), "
            "and quote the words that show it.\n\nParts:\n" + listing)
        props: dict[str, Any] = {}
        for k in keys:
            props[k] = {"type": "boolean"}
            props[f"{k}_turn"] = {"type": ["integer", "null"], "enum": [*turns, None]}
            props[f"{k}_evidence"] = {"type": "string"}
        schema = {"type": "object", "properties": props, "required": list(props),
                  "additionalProperties": False}
        data = {"conversation": [{"turn": u.turn, "role": u.role, "content": u.text}
                                 for u in dialog]}
        example = {}
        for k in keys:
            example.update({k: True, f"{k}_turn": turns[-1] if turns else None,
                            f"{k}_evidence": "…"})
        msgs = prompt.messages(instructions, data, "Check each part of the task.", schema,
                               example)

        def parse(d: Any) -> list[TaskPart]:
            if not isinstance(d, dict):
                raise ContractError("the reply is not a JSON object")
            out, problems = [], []
            for k, (kind, name, _) in zip(keys, parts, strict=True):
                done, turn, ev = d.get(k), d.get(f"{k}_turn"), d.get(f"{k}_evidence", "")
                if not isinstance(done, bool):
                    problems.append(f"{k}: missing or not true/false")
                    continue
                if turn is not None and turn not in turns:
                    problems.append(f"{k}_turn: {turn} is not a turn of the conversation")
                    continue
                out.append(TaskPart(name=name, kind=kind,
                                    status="done" if done else "missing",
                                    turn=turn if done else None, evidence=str(ev or "")[:300],
                                    decided_by="judge", reason="decided by the judge"))
            if problems:
                raise ContractError("; ".join(problems))
            return out

        return await self.ask("task", msgs, schema, "task_parts", parse,
                              lambda v: [p.model_dump() for p in v],
                              lambda d: [TaskPart.model_validate(x) for x in d], trial)

    # -- the judge-based rule types --------------------------------------------------------

    @staticmethod
    def _dialog(view: TurnView, full: bool) -> dict[str, Any]:
        if full:
            convo = [*view.history, {"role": "user", "content": view.input},
                     {"role": "assistant", "content": view.reply}]
            return {"knowledge": view.knowledge, "conversation": convo}
        return {"knowledge": view.knowledge, "history": view.history,
                "user_input": view.input, "agent_reply": view.reply}

    async def score(self, criteria: str, scope: str, view: TurnView) -> Judgement[Scored]:
        """``llm_score``: one score 0–10 of the reply (or the whole dialog) on ``criteria``."""
        full = scope == "full_dialog"
        what = "the whole conversation" if full else "agent_reply (the agent's last reply)"
        instructions = (
            "You are a strict reviewer of a customer-service agent. Score " + what + " on "
            "the criteria below, from 0 (not met at all) to 10 (fully met), and give a "
            "one-sentence reason quoting the words that decided it.\n\nCriteria:\n"
            + criteria.strip())
        schema = {"type": "object", "properties": {
            "score": {"type": "integer", "enum": list(range(11))},
            "reason": {"type": "string"}}, "required": ["score", "reason"],
            "additionalProperties": False}
        msgs = prompt.messages(instructions, self._dialog(view, full),
                               f"Score {what} on the criteria.", schema,
                               {"score": 8, "reason": "…"})
        return await self.ask("score", msgs, schema, "llm_score", _parse_scored,
                              lambda v: [v.score, v.reason],
                              lambda d: Scored(int(d[0]), str(d[1])), view.trial)

    async def classify(self, labels: dict[str, str], view: TurnView) -> Judgement[Classified]:
        """``intent_classification``: which behaviour of ``labels`` the reply carries out."""
        names = list(labels)
        listing = "\n".join(f"- {k}: {v}" if v else f"- {k}" for k, v in labels.items())
        instructions = (
            "You classify the behaviour of a customer-service agent. Given the user's message "
            "and the agent's reply, pick the one label whose behaviour the reply carries out "
            "(UNKNOWN when none fits), list any other labels that also fit in also_possible, "
            "and give a one-sentence reason.\n\nLabels:\n" + listing)
        schema = {"type": "object", "properties": {
            "label": {"type": "string", "enum": [*names, "UNKNOWN"]},
            "also_possible": {"type": "array", "items": {"type": "string", "enum": names}},
            "reason": {"type": "string"}}, "required": ["label", "also_possible", "reason"],
            "additionalProperties": False}
        msgs = prompt.messages(instructions, self._dialog(view, False),
                               "Classify the behaviour of agent_reply.", schema,
                               {"label": names[0] if names else "UNKNOWN",
                                "also_possible": [], "reason": "…"})
        return await self.ask("classify", msgs, schema, "intent_classification",
                              lambda d: _parse_classified(d, names),
                              lambda v: [v.label, list(v.also), v.reason],
                              lambda d: Classified(str(d[0]), tuple(d[1]), str(d[2])),
                              view.trial)

    async def embed(self, texts: Sequence[str]) -> Judgement[list[list[float]]]:
        """Embeddings of ``texts`` from ``judge.embedding_model`` (cached)."""
        model = self.cfg.embedding_model
        if not model:
            return Judgement(Failure("http_error", "judge.embedding_model is not set"), 0, 0.0)
        key = cache_key("embed", model, self.cfg.base_url, list(texts))
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return Judgement(hit, 0, 0.0, cached=True)
        got = await self._post("embeddings", {"model": model, "input": list(texts)})
        if isinstance(got, Failure):
            return Judgement(got, 1, 0.0)
        try:
            rows = sorted(got["data"], key=lambda d: d["index"])
            vectors = [[float(x) for x in d["embedding"]] for d in rows]
        except (KeyError, TypeError, ValueError):
            return Judgement(Failure("http_error", "embeddings: the reply has no data[] of "
                                     "{index, embedding}"), 1, 0.0)
        if len(vectors) != len(texts):
            return Judgement(Failure("http_error", f"embeddings: {len(vectors)} vector(s) "
                                     f"for {len(texts)} text(s)"), 1, 0.0)
        if self.cache is not None:
            self.cache.put(key, vectors)
        return Judgement(vectors, 1, 0.0)

    async def moderate(self, text: str) -> Judgement[list[str]]:
        """The categories a moderation endpoint flags in ``text`` (cached), by the names the
        endpoint gives them (``harassment/threatening``)."""
        model = self.cfg.moderation_model
        key = cache_key("moderate", model, self.cfg.base_url, text)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return Judgement(hit, 0, 0.0, cached=True)
        got = await self._post("moderations", {"input": text, **({"model": model} if model
                                                                 else {})})
        if isinstance(got, Failure):
            return Judgement(got, 1, 0.0)
        results = got.get("results")
        if not isinstance(results, list) or not all(
                isinstance(res, dict) and isinstance(res.get("categories"), dict)
                for res in results):
            return Judgement(Failure("http_error", "moderation: the reply has no results[] "
                                     "of {categories}"), 1, 0.0)
        flagged = sorted({str(name) for res in results
                          for name, on in res["categories"].items() if on is True})
        if self.cache is not None:
            self.cache.put(key, flagged)
        return Judgement(flagged, 1, 0.0)

    async def _post(self, route: str, body: dict[str, Any]) -> dict[str, Any] | Failure:
        """One call to ``/embeddings`` or ``/moderations`` within ``judge.timeout_s``."""
        from .http import BadReply, StatusError, Unreachable

        name = "moderation" if route == "moderations" else route
        try:
            async with asyncio.timeout(self.cfg.timeout_s):
                return await self.client.http.post(f"/{route}", body)
        except TimeoutError:
            return Failure("timeout", f"{name}: no reply within {self.cfg.timeout_s:g} s")
        except (StatusError, Unreachable, BadReply) as exc:
            return Failure("http_error", f"{name}: {str(exc)[:300]}")
