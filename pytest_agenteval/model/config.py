"""The project configuration, ``agenteval.yaml`` (SPEC 4b and 5).

``target:`` is validated in a second step, against the options model of the
adapter kind it names (see :mod:`pytest_agenteval.adapters._registry`), so a
``conftest.py`` can add an adapter kind with options of its own.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "TEMPLATE_NAMES",
    "AgentEvalConfig",
    "BuiltinTarget",
    "HttpTarget",
    "JudgeConfig",
    "OpenAIChatTarget",
    "PathsConfig",
    "PreflightError",
    "PrivacyConfig",
    "PythonTarget",
    "SimulatorConfig",
    "TargetOptions",
    "strip_credentials",
]

#: Names a request template may use (``extra.<key>`` too).
TEMPLATE_NAMES = frozenset(
    {"input", "history", "knowledge", "extra", "conversation_id", "case_id", "turn_index"}
)
_PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_][\w.\-]*)\}(?!\})")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def template_names(template: Any) -> set[str]:
    """Every ``{name}`` a template refers to (recursively)."""
    if isinstance(template, str):
        return set(_PLACEHOLDER.findall(template))
    if isinstance(template, dict):
        return set().union(*(template_names(v) for v in template.values())) if template else set()
    if isinstance(template, list):
        return set().union(*(template_names(v) for v in template)) if template else set()
    return set()


class ResponseMap(Strict):
    """Dotted paths to the normalised fields in the agent's JSON reply."""

    output: str = "output"
    intent_code: str | None = "intent_code"
    intent_name: str | None = "intent_name"
    conversation_id: str | None = "conversation_id"


DEFAULT_TEMPLATE: dict[str, Any] = {
    name: "{" + name + "}" for name in sorted(TEMPLATE_NAMES)
}


class PreflightError(ValueError):
    """A target that cannot work: ``field`` names the option of ``target:`` to fix."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def strip_credentials(url: str) -> str:
    """``url`` without user:password@ and without its query string."""
    url = re.sub(r"//[^/@]*@", "//", url)
    return url.split("?", 1)[0]


class TargetOptions(Strict):
    """Options every adapter takes (``target:`` in agenteval.yaml); subclass to add your own."""

    adapter: str
    timeout_s: float = Field(default=30.0, gt=0)
    concurrency: int = Field(default=32, ge=1, le=4096)
    retries: int = Field(default=0, ge=0, le=10)
    retry_backoff_s: float = Field(default=0.5, ge=0, le=60)

    #: the adapter's own client retries (the engine then adds no retry of its own)
    retries_in_client: ClassVar[bool] = False
    #: ``--agenteval-target URL`` can point this target elsewhere (see :meth:`with_url`)
    takes_url: ClassVar[bool] = False

    def describe(self) -> dict[str, Any]:
        """The target as the run record shows it: never headers, keys or credentials."""
        return {"adapter": self.adapter, "concurrency": self.concurrency,
                "timeout_s": self.timeout_s, "retries": self.retries}

    def with_url(self, url: str) -> TargetOptions:
        """This target pointed at ``url`` (``--agenteval-target``; needs :attr:`takes_url`)."""
        raise NotImplementedError

    def preflight(self, rootdir: Path) -> None:
        """Check, before any agent call, what would make every call fail.

        Raises:
            PreflightError: naming the option to fix.
        """


class HttpTarget(TargetOptions):
    """An agent behind an HTTP JSON API."""

    adapter: Literal["http"]
    url: str
    method: Literal["POST", "PUT"] = "POST"
    headers: dict[str, str] = Field(default_factory=dict)
    request_template: dict[str, Any] = Field(default_factory=lambda: dict(DEFAULT_TEMPLATE))
    history_item: dict[str, Any] | None = None
    roles: dict[str, str] = Field(default_factory=dict)
    response_map: ResponseMap = Field(default_factory=ResponseMap)

    @field_validator("url")
    @classmethod
    def _url(cls, v: str) -> str:
        if not re.match(r"^https?://", v):
            raise ValueError("the target url must start with http:// or https://")
        return v

    @field_validator("request_template")
    @classmethod
    def _known_names(cls, v: dict[str, Any]) -> dict[str, Any]:
        for name in template_names(v):
            root = name.split(".", 1)[0]
            if root not in TEMPLATE_NAMES:
                known = ", ".join(sorted(TEMPLATE_NAMES))
                raise ValueError(f"unknown template name {{{name}}}; known names: {known}")
        return v

    @field_validator("history_item")
    @classmethod
    def _history_names(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        for name in template_names(v or {}):
            if name not in ("role", "content"):
                raise ValueError(
                    f"history_item may use {{role}} and {{content}} only, not {{{name}}}")
        return v

    takes_url: ClassVar[bool] = True

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "url": strip_credentials(self.url)}

    def with_url(self, url: str) -> HttpTarget:
        return HttpTarget.model_validate({**self.model_dump(), "url": url})


class PythonTarget(TargetOptions):
    """A Python callable ``package.module:function`` (sync or async)."""

    adapter: Literal["python"]
    callable: str

    @field_validator("callable")
    @classmethod
    def _shape(cls, v: str) -> str:
        if not re.match(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$", v):
            raise ValueError("write the callable as package.module:function")
        return v

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "callable": self.callable}

    def preflight(self, rootdir: Path) -> None:
        from ..adapters.python import import_callable

        try:
            import_callable(self.callable, rootdir)
        except ValueError as exc:
            raise PreflightError("callable", str(exc)) from exc


class OpenAIChatTarget(TargetOptions):
    """A model behind an OpenAI-compatible chat endpoint plus a system prompt."""

    adapter: Literal["openai_chat"]
    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    system_prompt: str = ""
    temperature: float | None = Field(default=0.0, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1)

    retries_in_client: ClassVar[bool] = True

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "model": self.model,
                "base_url": strip_credentials(self.base_url or "")}

    def preflight(self, rootdir: Path) -> None:
        if not os.environ.get(self.api_key_env):
            raise PreflightError("api_key_env", f"environment variable {self.api_key_env} is "
                                 "not set; export it (any non-empty value for a local server)")


class BuiltinTarget(TargetOptions):
    """The reference agent shipped with the package, started on a loopback port."""

    adapter: Literal["builtin"]
    latency_ms: float = Field(default=0.0, ge=0, le=60_000)
    #: deliberate defects of the reference agent switched off, e.g. ``[a]``: "the next
    #: release", to try ``agenteval compare`` on (see demo/agent.py)
    fixed_defects: list[Literal["a", "b", "c", "d"]] = Field(default_factory=list)

    takes_url: ClassVar[bool] = True

    def with_url(self, url: str) -> HttpTarget:
        from ..adapters.builtin import builtin_http_target

        return builtin_http_target(url, self)


class JudgeConfig(Strict):
    """The LLM judge (L3 and the judge-based rule types), on an OpenAI-compatible endpoint."""

    #: required: a ``judge:`` block is never ignored (remove it to run without a judge)
    model: str = Field(min_length=1)
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = Field(default=16, ge=1)
    max_contract_retries: int = Field(default=2, ge=0, le=10)
    temperature: float = Field(default=0.0, ge=0, le=2)
    cache: str | None = ".agenteval/cache.sqlite"
    output_mode: Literal["auto", "json_schema", "json_object", "text"] = "auto"
    #: the wall-clock budget of one judge call (a provider's keep-alive cannot stretch it)
    timeout_s: float = Field(default=60.0, gt=0, le=3600)
    #: how long the retries of one call on 429, 5xx and connection errors may last in all
    retry_budget_s: float = Field(default=60.0, ge=0, le=3600)
    #: attempts of one call at most (the first included)
    max_attempts: int = Field(default=6, ge=1, le=50)
    max_tokens: int = Field(default=2048, ge=64)
    #: merged into every request body (a provider's own switches); by default the
    #: thinking switch of known providers is turned off
    extra_body: dict[str, Any] | None = None
    #: the rubric file, relative to rules_dir unless absolute
    rubric: str = "judge-rubric.yaml"  # project.RUBRIC_NAME
    #: for ``semantic_similarity``: an embeddings model on the same endpoint
    embedding_model: str | None = None
    #: for ``safety`` with ``moderation: true``: a moderation model on the same endpoint
    moderation_model: str | None = None

    @property
    def configured(self) -> bool:
        return bool(self.model)

    @property
    def ask_budget_s(self) -> float:
        """The longest one ask may take: the call and its re-asks, each with its retries."""
        return (self.max_contract_retries + 1) * (self.timeout_s + self.retry_budget_s)


class SimulatorConfig(Strict):
    """The LLM that plays the user of ``simulate:`` scenarios; every key defaults to the
    judge's (its endpoint, key and model), the temperature to 0."""

    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float = Field(default=0.0, ge=0, le=2)
    concurrency: int | None = Field(default=None, ge=1)
    timeout_s: float = Field(default=60.0, gt=0, le=3600)
    max_contract_retries: int = Field(default=2, ge=0, le=10)
    output_mode: Literal["auto", "json_schema", "json_object", "text"] | None = None

    def resolved(self, judge: JudgeConfig | None) -> JudgeConfig | None:
        """As the client's settings (the judge's where not given); ``None`` without a model."""
        model = self.model or (judge.model if judge else None)
        if not model:
            return None
        base = judge.model_dump() if judge else {}
        return JudgeConfig.model_validate({
            **base, "model": model, "base_url": self.base_url or base.get("base_url"),
            "api_key_env": self.api_key_env or base.get("api_key_env", "OPENAI_API_KEY"),
            "temperature": self.temperature, "cache": None,
            "concurrency": self.concurrency or base.get("concurrency", 16),
            "timeout_s": self.timeout_s, "max_contract_retries": self.max_contract_retries,
            "output_mode": self.output_mode or base.get("output_mode", "auto")})


class PathsConfig(Strict):
    rules_dir: str = "rules"
    reports_dir: str = "reports"


class PrivacyConfig(Strict):
    """Masking of phone numbers, ID numbers and e-mails in everything reported."""

    mask: bool = True
    allow: list[str] = Field(default_factory=list)


class AgentEvalConfig(Strict):
    #: validated against the options of the adapter kind it names (see LoadedConfig.target)
    target: dict[str, Any] = Field(default_factory=lambda: {"adapter": "builtin"})
    judge: JudgeConfig | None = None
    simulator: SimulatorConfig = Field(default_factory=SimulatorConfig)
    paths: PathsConfig = Field(default_factory=PathsConfig)
    language: Literal["zh", "en"] = "zh"
    privacy: PrivacyConfig = Field(default_factory=PrivacyConfig)

    @model_validator(mode="before")
    @classmethod
    def _no_null_sections(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if not (v is None and k != "judge")}
        return data
