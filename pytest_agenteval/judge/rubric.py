"""The judge's rubric (``rules/judge-rubric.yaml``) and the contract of its reply.

The rubric names the seven dimensions of SPEC 4 — each scored 1–5 or null
when it does not apply — with their wording, which of them are critical, and
the judge's instructions. The reply contract is one flat JSON object::

    {"relevance": 5, "relevance_reason": "…", …, "fact_risk": false, "fact_risk_reason": "…"}

flat on purpose: enums rather than ranges, no defaults, no ``$ref``, so that
every structured-output implementation (OpenAI's strict mode, xgrammar, GBNF,
Moonshot's validator) accepts the same schema. :func:`parse_scores` validates
a reply against it and says exactly what was wrong, for the re-ask.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ..model.cases import DIMENSIONS, JudgeDimension, Strict

__all__ = ["DIMENSIONS", "ContractError", "Dimension", "Rubric", "RubricFile", "Scores",
           "default_rubric", "extract_json", "load_rubric", "parse_scores", "verdict"]

#: the wording of our prompts; part of the rubric hash, so a change of it invalidates the cache
PROMPT_VERSION = "2"
_DEFAULT_PATH = Path(__file__).with_name("default-rubric.yaml")


class Dimension(Strict):
    title: str = ""
    critical: bool = False
    description: str = Field(min_length=1)
    levels: dict[int, str] = Field(default_factory=dict)

    @field_validator("levels")
    @classmethod
    def _one_to_five(cls, v: dict[int, str]) -> dict[int, str]:
        bad = [k for k in v if k not in (1, 2, 3, 4, 5)]
        if bad:
            raise ValueError(f"levels are scores 1-5, not {bad[0]}")
        return v


class RubricFile(Strict):
    """``rules/judge-rubric.yaml``."""

    version: Literal[1] = 1
    instructions: str = Field(min_length=1)
    dimensions: dict[JudgeDimension, Dimension]
    #: a critical dimension below this fails the turn (SPEC 4: 3)
    fail_below: int = Field(default=3, ge=1, le=5)
    #: any applicable dimension below this, or fact_risk, sends the turn to review (SPEC 4: 4)
    review_below: int = Field(default=4, ge=1, le=5)

    @model_validator(mode="after")
    def _all_dimensions(self) -> RubricFile:
        missing = [d for d in DIMENSIONS if d not in self.dimensions]
        if missing:
            raise ValueError(f"dimensions: missing {', '.join(missing)}; the rubric describes "
                             f"all seven ({', '.join(DIMENSIONS)})")
        if self.fail_below > self.review_below:
            raise ValueError(f"fail_below ({self.fail_below}) is above review_below "
                             f"({self.review_below}): a score that fails must also be one "
                             "that is reviewed")
        return self


@dataclass(frozen=True)
class Rubric:
    """A loaded rubric, with the hash the run records and the judge cache keys on."""

    spec: RubricFile
    source: str | None  # the file it came from, as the run shows it (None: the default)
    sha256: str

    @property
    def critical(self) -> tuple[str, ...]:
        return tuple(d for d in DIMENSIONS if self.spec.dimensions[d].critical)  # type: ignore[index]

    def describe(self, dims: tuple[str, ...]) -> str:
        """The dimensions' wording for the judge's instructions."""
        out = []
        for name in dims:
            d = self.spec.dimensions[name]  # type: ignore[index]
            head = f"- {name}" + (f"（{d.title}）" if d.title else "")
            head += " [critical]" if d.critical else ""
            out.append(f"{head}: {d.description.strip()}")
            out += [f"    {k}: {v.strip()}" for k, v in sorted(d.levels.items(), reverse=True)]
        return "\n".join(out)


def _rubric(spec: RubricFile, source: str | None) -> Rubric:
    canonical = json.dumps([PROMPT_VERSION, spec.model_dump(mode="json")], sort_keys=True,
                           ensure_ascii=False)
    return Rubric(spec, source, hashlib.sha256(canonical.encode()).hexdigest())


def load_rubric(path: Path, rootdir: Path) -> Rubric:
    """``path`` if it exists, else the packaged default; raises a located ``SourceError``."""
    from ..model import validate_at
    from ..yamlio import load_yaml, locate

    if not path.is_file():
        return default_rubric()
    doc = load_yaml(path, locate(path, rootdir))
    spec = validate_at(RubricFile, doc.data, doc)
    return _rubric(spec, locate(path, rootdir))


def default_rubric() -> Rubric:
    import yaml

    data = yaml.safe_load(_DEFAULT_PATH.read_text(encoding="utf-8"))
    return _rubric(RubricFile.model_validate(data), None)


# -- the reply contract ----------------------------------------------------------------------


class ContractError(ValueError):
    """The judge's reply broke the contract; the message is what the re-ask tells it."""


@dataclass(frozen=True)
class Scores:
    """A valid judge reply: a score (or null) and a reason per asked dimension, fact risk."""

    scores: dict[str, int | None]
    reasons: dict[str, str]
    fact_risk: bool

    def to_json(self) -> dict[str, Any]:
        return {"scores": self.scores, "reasons": self.reasons, "fact_risk": self.fact_risk}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Scores:
        return cls(dict(data["scores"]), dict(data["reasons"]), bool(data["fact_risk"]))


def scores_schema(dims: tuple[str, ...]) -> dict[str, Any]:
    """The flat JSON Schema of a judge reply scoring ``dims``."""
    props: dict[str, Any] = {}
    for d in dims:
        props[d] = {"type": ["integer", "null"], "enum": [1, 2, 3, 4, 5, None]}
        props[f"{d}_reason"] = {"type": "string"}
    props["fact_risk"] = {"type": "boolean"}
    props["fact_risk_reason"] = {"type": "string"}
    return {"type": "object", "properties": props, "required": list(props),
            "additionalProperties": False}


def scores_example(dims: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, d in enumerate(dims):
        out[d] = (5, 4, None)[i % 3]
        out[f"{d}_reason"] = "…" if i % 3 != 2 else "not applicable: …"
    out["fact_risk"] = False
    out["fact_risk_reason"] = "every fact stated is in the knowledge"
    return out


_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.S | re.I)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)


def extract_json(text: str) -> Any:
    """The JSON object of a judge reply given as text: think tags and fences stripped, then
    the whole text, else the first ``{…}`` that decodes. Raises :class:`ContractError` when
    there is none."""
    text = _THINK.sub("", text).strip()
    if not text:
        raise ContractError("the reply was empty; reply with the JSON object only")
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start >= 0:
        try:
            return decoder.raw_decode(text, start)[0]
        except ValueError:
            start = text.find("{", start + 1)
    raise ContractError("the reply holds no JSON object; reply with the JSON object only")


def parse_scores(data: Any, dims: tuple[str, ...]) -> Scores:
    """Validate a decoded judge reply. Only the unambiguous is normalised (``"null"`` →
    null); everything else wrong raises :class:`ContractError` listing each problem."""
    if not isinstance(data, dict):
        raise ContractError(f"the reply is a JSON {_json_kind(data)}, not an object")
    problems = []
    scores: dict[str, int | None] = {}
    reasons: dict[str, str] = {}
    for d in dims:
        if d not in data:
            problems.append(f"{d}: missing (an integer 1-5, or null when it does not apply)")
        else:
            v = data[d]
            if v == "null":
                v = None
            if v is None or (type(v) is int and 1 <= v <= 5):
                scores[d] = v
            else:
                problems.append(f"{d}: {json.dumps(v, ensure_ascii=False)} is not one of 1, 2, "
                                "3, 4, 5 or null")
        reason = data.get(f"{d}_reason")
        if not isinstance(reason, str):
            problems.append(f"{d}_reason: missing or not a string")
        else:
            reasons[d] = reason
    risk = data.get("fact_risk")
    if not isinstance(risk, bool):
        problems.append("fact_risk: missing or not true/false")
    risk_reason = data.get("fact_risk_reason")
    if not isinstance(risk_reason, str):
        problems.append("fact_risk_reason: missing or not a string")
    else:
        reasons["fact_risk"] = risk_reason
    extra = sorted(set(data) - {*dims, *(f"{d}_reason" for d in dims), "fact_risk",
                                "fact_risk_reason"})
    if extra:
        problems.append(f"unknown keys {', '.join(extra)} (give exactly the keys of the schema)")
    if problems:
        raise ContractError("; ".join(problems))
    return Scores(scores, reasons, bool(risk))


def _json_kind(v: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(v), "number")


def verdict(scores: Scores,
            rubric: Rubric) -> tuple[Literal["passed", "review", "failed"], str, list[str]]:
    """SPEC 4: a critical dimension below ``fail_below`` fails; any applicable dimension
    below ``review_below``, or fact risk, is review; else passed. With the reason and the
    dimensions below ``review_below`` (what a reviewer looks at)."""
    spec = rubric.spec
    weak = [d for d, s in scores.scores.items() if s is not None and s < spec.review_below]
    low = [f"{d} {s} < {spec.fail_below}" for d, s in scores.scores.items()
           if s is not None and s < spec.fail_below and d in rubric.critical]
    if low:
        return "failed", "critical " + ", ".join(low), weak
    why = [f"{d} {scores.scores[d]} < {spec.review_below}" for d in weak]
    if scores.fact_risk:
        why.append("fact risk")
    if why:
        return "review", ", ".join(why), weak
    return "passed", "", weak
