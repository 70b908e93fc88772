"""The JSON Schema of a case file (docs/schema/cases.schema.json) accepts what the loader
accepts, as an editor reads the file (YAML 1.2: an unquoted date is text)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from pytest_agenteval.model.file_schema import case_file_schema

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted((ROOT / "cases").rglob("*.yaml"))


class _Yaml12(yaml.SafeLoader):
    """As the YAML language server reads a file: no timestamps, so 2026-11-29 is text."""


_Yaml12.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def _errors(text: str) -> list[str]:
    validator = jsonschema.Draft7Validator(case_file_schema())
    data: Any = yaml.load(text, Loader=_Yaml12)  # a SafeLoader subclass: safe
    return sorted(f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
                  for e in validator.iter_errors(data))


def test_the_committed_schema_is_a_valid_json_schema() -> None:
    doc = json.loads((ROOT / "docs" / "schema" / "cases.schema.json").read_text("utf-8"))
    jsonschema.Draft7Validator.check_schema(doc)


@pytest.mark.parametrize("path", [p for p in SHIPPED if p.name != "dataset.yaml"],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_shipped_case_file_is_valid(path: Path) -> None:
    assert _errors(path.read_text(encoding="utf-8")) == []


def test_partial_defaults_unquoted_text_and_judge_switches_are_valid() -> None:
    assert _errors("""\
defaults:
  request: {history: [], knowledge: {a: 1}}   # no input: each case gives it
  expected: {assertions: {max_sentences: 3}}
  judge: false
cases:
  - {id: 7, title: 2026-11-29, request: {input: 13800000000}, version: 2}
scenarios:
  - id: S
    turns: [{input: 你好, judge: {dimensions: [relevance]}}]
""") == []


def test_typos_and_wrong_types_are_invalid() -> None:
    assert _errors("""\
case:
  - {id: A, request: {input: x}}
cases:
  - {id: B, request: {inputs: x}, priority: P7}
""") == [
        ": Additional properties are not allowed ('case' was unexpected)",
        "cases.0.priority: 'P7' is not one of ['P0', 'P1', 'P2']",
        "cases.0.request: 'input' is a required property",
        "cases.0.request: Additional properties are not allowed ('inputs' was unexpected)"]


def test_knowledge_point_value_given_as_a_number_is_its_text() -> None:
    from pydantic import ValidationError

    from pytest_agenteval.model.cases import KnowledgePoint

    assert KnowledgePoint.model_validate({"path": "a", "value": 0}).value == "0"
    assert KnowledgePoint.model_validate({"path": "a", "value": 8.98}).value == "8.98"
    with pytest.raises(ValidationError):
        KnowledgePoint.model_validate({"path": "a", "value": True})
