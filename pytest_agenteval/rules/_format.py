"""Form rule types: ``max_sentences``, ``max_chars``, ``json_schema``."""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field, field_validator

from ..privacy import clip
from ._registry import Params, RuleOutcome, TurnView, rule
from ._text import sentences

__all__ = ["JsonSchema", "MaxChars", "MaxSentences"]


class MaxSentences(Params):
    n: int = Field(ge=1)


@rule("max_sentences", params=MaxSentences)
def max_sentences(p: MaxSentences, turn: TurnView) -> RuleOutcome:
    """The reply has at most ``n`` sentences (。！？!?；; and newlines end one)."""
    found = sentences(turn.reply)
    evidence = " | ".join(found)
    ok = len(found) <= p.n
    score = min(1.0, p.n / len(found)) if found else 1.0
    return RuleOutcome.decide(ok, f"{len(found)} sentences (max {p.n})", evidence, score)


class MaxChars(Params):
    n: int = Field(ge=1)


@rule("max_chars", params=MaxChars)
def max_chars(p: MaxChars, turn: TurnView) -> RuleOutcome:
    """The reply is at most ``n`` characters long (as written, surrounding space stripped)."""
    length = len(turn.reply.strip())
    score = min(1.0, p.n / length) if length else 1.0
    evidence = clip(turn.reply, 201)
    return RuleOutcome.decide(length <= p.n, f"{length} characters (max {p.n})", evidence, score)


class JsonSchema(Params):
    schema_: dict[str, Any] = Field(alias="schema")

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, v: dict[str, Any]) -> dict[str, Any]:
        import jsonschema

        try:
            jsonschema.validators.validator_for(v).check_schema(v)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"not a valid JSON schema: {exc.message}") from exc
        return v


@rule("json_schema", params=JsonSchema)
def json_schema(p: JsonSchema, turn: TurnView) -> RuleOutcome:
    """The reply parses as JSON and validates against ``schema``."""
    import jsonschema

    try:
        data = json.loads(turn.reply)
    except json.JSONDecodeError as exc:
        return RuleOutcome.failed(f"the reply is not JSON ({exc.msg})", clip(turn.reply, 200))
    validator = jsonschema.validators.validator_for(p.schema_)(p.schema_)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "/".join(str(x) for x in first.absolute_path) or "(root)"
        return RuleOutcome.failed(f"{len(errors)} schema violation(s); first at {where}: "
                                  f"{first.message}",
                                  clip(json.dumps(first.instance, ensure_ascii=False), 200))
    return RuleOutcome.passed("valid against the schema")
