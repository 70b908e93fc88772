"""Loading ``agenteval.yaml``: environment interpolation, validation, overrides, preflight."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .model import MultiSourceError, validate_at
from .model.config import AgentEvalConfig, PreflightError, TargetOptions
from .yamlio import Location, SourceError, YamlDoc, load_yaml, locate

__all__ = ["ConfigError", "LoadedConfig", "load_config"]

CONFIG_NAME = "agenteval.yaml"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
#: Sections whose unset variables make the run fail before any agent call (preflight).
_EAGER_SECTIONS = ("target",)


class ConfigError(Exception):
    """``agenteval.yaml`` is unusable; the message says where and how to fix it."""


class LoadedConfig:
    """The validated configuration plus what the run record may say about it."""

    def __init__(self, model: AgentEvalConfig, target: TargetOptions, path: Path | None,
                 secrets: set[str], doc: YamlDoc | None = None,
                 unset: list[SourceError] | None = None) -> None:
        self.model = model
        #: the target, validated against its adapter kind's options
        self.target = target
        self.path = path
        #: values that came from the environment: never written to an artefact
        self.secrets = secrets
        self.doc = doc
        #: ``${VAR}`` under target: whose variable is unset, or holds a control character
        #: (reported by :meth:`preflight`)
        self.unset = unset or []

    def describe_target(self) -> dict[str, Any]:
        """The target as the run record shows it: no headers, no credentials."""
        return self.target.describe()

    def at(self, *path: str | int) -> Location:
        if self.doc is None:
            return Location(CONFIG_NAME)
        return self.doc.at(path)

    def preflight(self, rootdir: Path) -> list[SourceError]:
        """What would make every agent call fail, found before the first one.

        Unset environment variables under ``target:``, then the adapter kind's own
        check (an unimportable ``callable``, an unset ``api_key_env``), then the judge's
        and the simulator's (see :meth:`judge_preflight`, :meth:`simulator_preflight`).
        """
        if self.unset:
            return list(self.unset)
        try:
            self.target.preflight(rootdir)
        except PreflightError as exc:
            return [SourceError(self.at("target", exc.field), exc.message, f"target.{exc.field}")]
        return self.judge_preflight() + self.simulator_preflight()

    def judge_preflight(self, env: Mapping[str, str] | None = None) -> list[SourceError]:
        """What would make every judge call fail: an unset variable in ``judge.base_url``
        or ``judge.model``, an unset ``judge.api_key_env``."""
        judge = self.model.judge
        if judge is None or not judge.configured:
            return []
        environ = os.environ if env is None else env
        fields = {"model": judge.model, "base_url": judge.base_url}
        return self._unset_vars("judge", fields, environ) + self._unset_key(
            "judge", judge.api_key_env, environ, "export the judge's API key in it (any "
            "non-empty value for a local server), or remove judge: to run without the judge")

    def simulator_preflight(self, env: Mapping[str, str] | None = None) -> list[SourceError]:
        """What would make every call of the simulated user fail, whether or not the run
        has ``simulate:`` scenarios (as for the judge): an unset variable in
        ``simulator.model`` or ``simulator.base_url``, an unset key. A key that is the
        judge's (``simulator.api_key_env`` not given, or the same name) is the judge's
        check."""
        sim, judge = self.model.simulator, self.model.judge
        resolved = sim.resolved(judge)
        if resolved is None:
            return []
        environ = os.environ if env is None else env
        errors = self._unset_vars("simulator", {"model": sim.model, "base_url": sim.base_url},
                                  environ)
        if judge is not None and judge.configured and judge.api_key_env == resolved.api_key_env:
            return errors
        return errors + self._unset_key(
            "simulator", resolved.api_key_env, environ, "export the simulated user's API key "
            "in it (any non-empty value for a local server), or name another variable in "
            "simulator.api_key_env")

    def _unset_vars(self, section: str, fields: Mapping[str, str | None],
                    environ: Mapping[str, str]) -> list[SourceError]:
        """A located error for each of ``fields`` whose ``${VAR}`` is unset."""
        errors = []
        for field, value in fields.items():
            unset = [m.group(1) for m in _VAR.finditer(value or "") if m.group(1) not in environ]
            if unset:
                errors.append(SourceError(
                    self.at(section, field), f"environment variable {unset[0]} is not set; "
                    f"export it or write ${{{unset[0]}:-default}}", f"{section}.{field}"))
        return errors

    def _unset_key(self, section: str, key_env: str, environ: Mapping[str, str],
                   fix: str) -> list[SourceError]:
        """A located error when the variable ``section.api_key_env`` names is unset or empty."""
        if environ.get(key_env):
            return []
        return [SourceError(self.at(section, "api_key_env"), f"environment variable {key_env} "
                            f"is not set; {fix}", f"{section}.api_key_env")]


def interpolate(data: Any, path: tuple[str | int, ...], doc: YamlDoc,
                env: Mapping[str, str], secrets: set[str],
                unset: list[SourceError] | None = None) -> Any:
    """Replace ``${VAR}`` and ``${VAR:-default}`` in every string value.

    An unset ``${VAR}`` under ``target:`` is appended to ``unset`` (a located
    error for the preflight) and left as written; elsewhere it is left as written.
    A value with a control character under ``target:`` is appended there too.
    """
    if isinstance(data, dict):
        return {k: interpolate(v, (*path, k), doc, env, secrets, unset) for k, v in data.items()}
    if isinstance(data, list):
        return [interpolate(v, (*path, i), doc, env, secrets, unset) for i, v in enumerate(data)]
    if not isinstance(data, str) or "${" not in data:
        return data

    def sub(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        value = env.get(name)
        if value:
            secrets.add(value)
            if path and path[0] in _EAGER_SECTIONS and unset is not None:
                bad = _control_problem(name, value)
                if bad:
                    unset.append(SourceError(doc.at(path), bad, ".".join(map(str, path))))
            return value
        if default is not None:  # like the shell: the default replaces unset *or empty*
            return default
        if value is not None:
            return value
        if path and path[0] in _EAGER_SECTIONS and unset is not None:
            field = ".".join(str(p) for p in path)
            unset.append(SourceError(doc.at(path), f"environment variable {name} is not set; "
                                     f"export it or write ${{{name}:-default}}", field))
        return m.group(0)

    return _VAR.sub(sub, data)


def _control_problem(name: str, value: str) -> str | None:
    """Why ``value`` of variable ``name`` cannot go into a header or a URL (never the value)."""
    found = next((c for c in value if ord(c) < 0x20 or ord(c) == 0x7F), None)
    if found is None:
        return None
    where = "at its end" if value.rstrip("\r\n") != value else "inside it"
    return (f"environment variable {name} holds a control character ({found!r}, {where}); "
            "a header or a URL cannot carry it: strip it (a file with CRLF line ends? "
            "use $(tr -d '\\r' < file))")


def find_config(rootdir: Path, explicit: str | None) -> Path | None:
    if explicit:
        p = Path(explicit)
        if not p.is_absolute():
            p = Path.cwd() / p
        if not p.is_file():
            raise ConfigError(f"--agenteval-config {explicit}: no such file")
        return p
    candidate = rootdir / CONFIG_NAME
    return candidate if candidate.is_file() else None


def load_config(rootdir: Path, explicit: str | None = None, target_url: str | None = None,
                env: Mapping[str, str] | None = None) -> LoadedConfig:
    """Find, interpolate, validate and override the configuration."""
    path = find_config(rootdir, explicit)
    environ = os.environ if env is None else env
    secrets: set[str] = set()
    unset: list[SourceError] = []
    doc: YamlDoc | None = None
    try:
        if path is None:
            model = AgentEvalConfig()
        else:
            doc = load_yaml(path, locate(path, rootdir))
            model = _validate(doc, environ, secrets, unset)
        target = _target(model.target, doc, unset)
    except (SourceError, MultiSourceError) as exc:
        raise ConfigError(str(exc)) from None
    if target_url:
        target = _override_url(target, target_url, doc)
    # the simulator's own key, or the default one it reads without a judge
    for section in (target, model.judge, model.simulator.resolved(model.judge)):
        key_env = getattr(section, "api_key_env", None)
        if key_env and environ.get(key_env):
            secrets.add(environ[key_env])  # an API key read by name is a secret too
            bad = _control_problem(key_env, environ[key_env])
            if bad and section is target and doc is not None:
                unset.append(SourceError(doc.at(("target", "api_key_env")), bad,
                                         "target.api_key_env"))
    return LoadedConfig(model, target, path, secrets, doc, unset)


def _validate(doc: YamlDoc, env: Mapping[str, str], secrets: set[str],
              unset: list[SourceError]) -> AgentEvalConfig:
    data = doc.data if doc.data is not None else {}
    if not isinstance(data, dict):
        raise SourceError(doc.at(()), "the top level must be a mapping (target:, judge:, ...)")
    data = interpolate(data, (), doc, env, secrets, unset)
    return validate_at(AgentEvalConfig, data, doc)


def _target(raw: dict[str, Any], doc: YamlDoc | None,
            unset: list[SourceError] | None = None) -> TargetOptions:
    """Validate ``target:`` against the options of the adapter kind it names.

    When it is invalid because a ``${VAR}`` in it is unset (``url: ${AGENT_URL}``),
    that is no error yet: a run that calls no agent (``pytest rules/``) does not need
    the target, and one that does stops at the preflight, naming the variable.
    """
    try:
        return _validated_target(raw, doc)
    except MultiSourceError:
        if not unset:
            raise
        return TargetOptions.model_construct(adapter=str(raw.get("adapter")))


def _validated_target(raw: dict[str, Any], doc: YamlDoc | None) -> TargetOptions:
    from .adapters import ADAPTERS

    where = doc or YamlDoc(CONFIG_NAME, raw)
    name = raw.get("adapter")
    if not isinstance(name, str):
        raise SourceError(where.at(("target",)), "say which adapter: "
                          f"{' | '.join(ADAPTERS.names())}", "target.adapter")
    try:
        kind = ADAPTERS.get(name)
    except KeyError as exc:
        raise SourceError(where.at(("target", "adapter")), str(exc.args[0]),
                          "target.adapter") from None
    return validate_at(kind.options, raw, where, ("target",))


def _override_url(target: TargetOptions, url: str, doc: YamlDoc | None) -> TargetOptions:
    if not target.takes_url:
        where = Location(doc.file if doc else CONFIG_NAME)
        raise ConfigError(f"{where}: --agenteval-target needs an http or builtin target, "
                          f"not {target.adapter!r}")
    try:
        return target.with_url(url)
    except ValidationError as exc:
        msg = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"--agenteval-target {url}: {msg}") from None
