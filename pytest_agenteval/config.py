"""Loading ``agenteval.yaml``: environment interpolation, validation, overrides."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .model import MultiSourceError, validate_at
from .model.config import AgentEvalConfig, BuiltinTarget, HttpTarget
from .yamlio import Location, SourceError, YamlDoc, load_yaml, locate

__all__ = ["ConfigError", "LoadedConfig", "load_config"]

CONFIG_NAME = "agenteval.yaml"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
#: Sections whose unset variables are errors now; others fail when first used.
_EAGER_SECTIONS = ("target",)


class ConfigError(Exception):
    """``agenteval.yaml`` is unusable; the message says where and how to fix it."""


class LoadedConfig:
    """The validated configuration plus what the run record may say about it."""

    def __init__(self, model: AgentEvalConfig, path: Path | None, secrets: set[str]) -> None:
        self.model = model
        self.path = path
        #: values that came from the environment: never written to an artefact
        self.secrets = secrets

    @property
    def target(self) -> Any:
        return self.model.target

    def describe_target(self) -> dict[str, Any]:
        """The target as the run record shows it: no headers, no credentials."""
        t = self.model.target
        out: dict[str, Any] = {"adapter": t.adapter, "concurrency": t.concurrency,
                               "timeout_s": t.timeout_s, "retries": t.retries}
        if isinstance(t, HttpTarget):
            out["url"] = _strip_credentials(t.url)
        elif t.adapter == "python":
            out["callable"] = t.callable
        elif t.adapter == "openai_chat":
            out["model"] = t.model
            out["base_url"] = _strip_credentials(t.base_url or "")
        return out


def _strip_credentials(url: str) -> str:
    url = re.sub(r"//[^/@]*@", "//", url)
    return url.split("?", 1)[0]


def interpolate(data: Any, path: tuple[str | int, ...], doc: YamlDoc,
                env: Mapping[str, str], secrets: set[str]) -> Any:
    """Replace ``${VAR}`` and ``${VAR:-default}`` in every string value."""
    if isinstance(data, dict):
        return {k: interpolate(v, (*path, k), doc, env, secrets) for k, v in data.items()}
    if isinstance(data, list):
        return [interpolate(v, (*path, i), doc, env, secrets) for i, v in enumerate(data)]
    if not isinstance(data, str) or "${" not in data:
        return data

    def sub(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        value = env.get(name)
        if value:
            secrets.add(value)
            return value
        if default is not None:  # like the shell: the default replaces unset *or empty*
            return default
        if value is not None:
            return value
        if path and path[0] in _EAGER_SECTIONS:
            field = ".".join(str(p) for p in path)
            raise SourceError(doc.at(path), f"environment variable {name} is not set; export it"
                              f" or write ${{{name}:-default}}", field)
        return m.group(0)

    return _VAR.sub(sub, data)


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
    secrets: set[str] = set()
    if path is None:
        model = AgentEvalConfig()
    else:
        model = _load(path, rootdir, os.environ if env is None else env, secrets)
    if target_url:
        model = _override_url(model, target_url, path, rootdir)
    environ = os.environ if env is None else env
    for section in (model.target, model.judge):
        key_env = getattr(section, "api_key_env", None)
        if key_env and environ.get(key_env):
            secrets.add(environ[key_env])  # an API key read by name is a secret too
    return LoadedConfig(model, path, secrets)


def _load(path: Path, rootdir: Path, env: Mapping[str, str], secrets: set[str]) -> AgentEvalConfig:
    name = locate(path, rootdir)
    try:
        doc = load_yaml(path, name)
        data = doc.data if doc.data is not None else {}
        if not isinstance(data, dict):
            raise SourceError(doc.at(()), "the top level must be a mapping (target:, judge:, ...)")
        data = interpolate(data, (), doc, env, secrets)
        return validate_at(AgentEvalConfig, data, doc)
    except SourceError as exc:
        raise ConfigError(str(exc)) from None
    except MultiSourceError as exc:
        raise ConfigError(str(exc)) from None


def _override_url(model: AgentEvalConfig, url: str, path: Path | None,
                  rootdir: Path) -> AgentEvalConfig:
    target = model.target
    if isinstance(target, BuiltinTarget):
        from .adapters.builtin import builtin_http_target

        new: Any = builtin_http_target(url, target)
    elif isinstance(target, HttpTarget):
        new = target.model_copy(update={"url": url})
    else:
        where = Location(locate(path, rootdir) if path else "agenteval.yaml")
        raise ConfigError(f"{where}: --agenteval-target needs an http or builtin target,"
                          f" not {target.adapter!r}")
    try:
        HttpTarget.model_validate(new.model_dump())
    except ValidationError as exc:
        msg = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise ConfigError(f"--agenteval-target {url}: {msg}") from None
    return model.model_copy(update={"target": new})
