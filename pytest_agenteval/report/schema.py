"""The schema of ``results.json`` (SPEC 7): ``agenteval schema results`` prints it.

``CaseRecord`` describes what :func:`~.record.case_record` writes (the item
with ``turns[]``, a case's fields also flat); ``metrics`` has one key per
registered metric family, with that family's model.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, create_model

from ..model.gates import GateResult
from ..model.results import (
    AgentError,
    Completeness,
    IntentResult,
    ItemStatus,
    JudgeResult,
    Message,
    PairRef,
    RuleLogicResult,
    RuleRow,
    SimulatorRecord,
    TaskResult,
    Termination,
    TurnResult,
)

__all__ = ["CaseRecord", "RunInfo", "results_file_model", "results_schema"]


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DatasetFile(_Doc):
    path: str
    sha256: str | None


class Dataset(_Doc):
    """Every case file that had a selected item, and one hash over all of them."""

    files: list[DatasetFile]
    sha256: str | None
    #: from the dataset's manifest (``cases/dataset.yaml``), when there is one
    name: str | None = None
    version: str | None = None
    parent: str | None = None
    manifest: str | None = None


class JudgeInfo(_Doc):
    configured: bool
    model: str | None
    rubric_sha256: str | None
    reason: str | None
    reason_code: str | None = None
    base_url: str | None = None
    temperature: float | None = None
    output_mode: str | None = None
    max_contract_retries: int | None = None
    concurrency: int | None = None
    #: the rubric file ("(built-in default)" without one)
    rubric: str | None = None
    #: the cache file used, ``None`` with ``--agenteval-no-cache``
    cache: str | None = None


class RulesInfo(_Doc):
    taxonomy: str | None
    taxonomy_sha256: str | None
    ledger_sha256: str | None


class RunOptions(_Doc):
    numprocesses: int | str | None
    #: ``-n`` as given, when the run was fitted to the machine (``--agenteval-workers fit``)
    numprocesses_asked: str | None = None
    workers: Literal["fit", "asked"] = "fit"
    dist: str
    agenteval_dist: str
    markexpr: str
    keyword: str
    concurrency: int
    repeat: int
    exit: str


class ShardInfo(_Doc):
    """``run.shard``: the share of the collection a ``--agenteval-shard i/n`` run selected."""

    index: int
    count: int
    #: this shard's case and scenario items, and their expected turns
    items: int
    weight: int | None
    #: the same over every shard, and a hash of the partitioned items with their weights
    #: (``None`` when no worker lived to tell them)
    total_items: int | None = None
    total_weight: int | None = None
    collection_sha256: str | None = None


class MergedShard(_Doc):
    """One record that ``agenteval merge`` combined."""

    path: str
    index: int | None
    count: int | None
    items: int
    received: int
    complete: bool
    started: str | None = None
    duration_s: float | None = None


class MergedInfo(_Doc):
    """``run.merged``: the shard records a merged record was made from."""

    shards: int | None
    given: list[MergedShard]
    #: the shard indexes (1-based) that no given record holds, and those given twice
    missing: list[int]
    repeated: list[int]
    #: what differs between the records (merged anyway with ``--force``)
    differences: list[str]
    forced: bool


class RunInfo(_Doc):
    """``run``: what ran, on what data, with which versions and options."""

    started: str
    finished: str
    run_dir: str | None
    argv: list[str]
    versions: dict[str, str | None]
    rootdir: str
    config_file: str | None
    dataset: Dataset
    #: adapter, concurrency, timeout_s, retries and the kind's own public fields
    target: dict[str, Any]
    judge: JudgeInfo
    rules: RulesInfo
    options: RunOptions
    language: str
    duration_s: float
    #: with ``--agenteval-shard`` only
    shard: ShardInfo | None = None
    #: in a record made by ``agenteval merge`` only
    merged: MergedInfo | None = None


class FlatRuleRow(RuleRow):
    """A scenario's rule row at the item level: with the turn (0-based) it belongs to."""

    turn: int


class RequestRecord(_Doc):
    input: str
    history: list[Message]
    knowledge: dict[str, Any] | None
    extra: dict[str, Any]


class ResponseRecord(_Doc):
    output: str | None
    intent_code: int | str | None
    intent_name: str | None
    conversation_id: str | None


class CaseRecord(_Doc):
    """One entry of ``cases[]`` (and one line of ``results.jsonl``)."""

    id: str
    kind: Literal["case", "scenario"]
    status: ItemStatus
    title: str
    priority: Literal["P0", "P1", "P2"]
    test_family: str | None
    challenge: str
    source: str
    review_status: Literal["candidate", "reviewed"]
    tags: list[str]
    pair: PairRef | None
    behaviors: list[str]
    judge_enabled: bool
    outcome: str | None
    behavior: str | None
    error: AgentError | None
    latency_ms: float
    turn_latency_ms: list[float]
    judge: JudgeResult
    task: TaskResult
    #: how the conversation ended (completed, user_stop, agent_stop, max_turns, sut_error,
    #: infra_error)
    termination: Termination
    rules: list[FlatRuleRow | RuleRow]
    intent: IntentResult | None
    failure_reasons: list[str]
    turns: list[TurnResult]
    nodeid: str
    file: str
    line: int | None
    # a case only
    rule_logic: RuleLogicResult | None = None
    request: RequestRecord | None = None
    response: ResponseRecord | None = None
    # a scenario only
    history: list[Message] | None = None
    turns_planned: int | None = None
    # a simulated scenario only
    simulator: SimulatorRecord | None = None
    # with --agenteval-repeat only
    trial: int | None = None
    trials: int | None = None


class ReviewDimension(_Doc):
    dimension: str
    score: int
    reason: str


class ReviewEntry(_Doc):
    """One turn in the human review queue: judged review or failed, or flagged fact risk."""

    case: str
    nodeid: str
    turn: int
    status: str
    item_status: str
    why: str
    dimensions: list[ReviewDimension]
    fact_risk: bool
    fact_risk_reason: str
    input: str
    reply: str | None


def results_file_model() -> type[BaseModel]:
    """The model of the whole ``results.json``, its ``metrics`` from the registered families."""
    from ..metrics._family import load_families

    fields: dict[str, Any] = {key: (fam.model, ...) for key, fam in load_families().items()}
    metrics = create_model("Metrics", __config__=ConfigDict(extra="forbid"), **fields)
    return create_model("ResultsFile", __config__=ConfigDict(extra="forbid"),
                        run=(RunInfo, ...), cases=(list[CaseRecord], ...),
                        metrics=(metrics, ...), review_queue=(list[ReviewEntry], ...),
                        gate=(GateResult, ...),
                        completeness=(Completeness, ...))


def results_schema() -> dict[str, Any]:
    """The JSON Schema of ``results.json``."""
    schema: dict[str, Any] = results_file_model().model_json_schema()
    schema["title"] = "pytest-agenteval results.json"
    return schema
